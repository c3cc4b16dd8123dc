/*
** dalli.h: what algorithm dalli (dalli.c) lends the dalli configuration
** format: the name Dalli hashes for a server string.
*/
#ifndef CHASH_DALLI_H
#define CHASH_DALLI_H

#include <stddef.h>

#include "ring.h"

#define DALLI_NAME_MAX (RING_MAX_NAME + 40)  /* host, port, a point index */

/*
** The name Dalli hashes for server string z (n bytes, without a weight):
** host:port, port 11211 when none is given, an IPv6 host without its
** brackets, the port as Ruby's Integer() reads it; a unix socket's path.
** Into zOut (DALLI_NAME_MAX bytes). Its length, or 0 if Dalli would not
** take the string so.
*/
size_t dalli_server_name(const char *z, size_t n, char *zOut);

#endif

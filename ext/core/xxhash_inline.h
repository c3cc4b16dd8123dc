/*
** xxhash_inline.h: xxHash from Debian's libxxhash-dev, inlined
** (XXH_INLINE_ALL), so chash.so has no runtime dependency on libxxhash.
** One header for the files that call it (hash.c, hash_stream.c), so the
** one-file build defines the macro once.
*/
#ifndef CHASH_XXHASH_INLINE_H
#define CHASH_XXHASH_INLINE_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#endif

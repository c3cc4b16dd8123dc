/*
** keyhash.h: the small key hashes of twemproxy and libmemcached, written
** from their definitions (research/compat-spec.md, part 10). Each maps
** bytes to a uint32_t exactly as those routers do on x86-64, including
** the sign extension of bytes >= 0x80 where they read a signed char.
*/
#ifndef CHASH_KEYHASH_H
#define CHASH_KEYHASH_H

#include <stddef.h>
#include <stdint.h>

uint32_t keyhash_fnv1a_64(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1_64(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1a_32(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1_32(const unsigned char *p, size_t n);
uint32_t keyhash_one_at_a_time(const unsigned char *p, size_t n);
uint32_t keyhash_murmur(const unsigned char *p, size_t n);
uint32_t keyhash_jenkins(const unsigned char *p, size_t n);
uint32_t keyhash_hsieh(const unsigned char *p, size_t n);

#endif

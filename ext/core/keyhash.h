/*
** keyhash.h: the small key hashes of twemproxy, libmemcached and HAProxy,
** and Redis Cluster's CRC-16, written from their definitions. Each
** maps bytes to a uint32_t exactly as those routers do on x86-64,
** including the sign extension of bytes >= 0x80 where they read a signed
** char.
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

/* HAProxy's key hashes (2.6, hash.c there); bytes are unsigned. */
uint32_t keyhash_sdbm(const unsigned char *p, size_t n);
uint32_t keyhash_djb2(const unsigned char *p, size_t n);
uint32_t keyhash_wt6(const unsigned char *p, size_t n);

/* Redis Cluster's CRC-16: CRC-16/XMODEM (polynomial 0x1021, most
** significant bit first, initial value 0, no final XOR), 16 bits. Not
** twemproxy's "crc16", which keeps the shifted-out bits above bit 15. */
uint32_t keyhash_crc16(const unsigned char *p, size_t n);

#endif

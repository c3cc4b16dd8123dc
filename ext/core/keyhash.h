/*
** keyhash.h: the small key hashes of twemproxy, libmemcached and HAProxy,
** Redis Cluster's CRC-16, and the key hashes of Kafka's, kafkajs' and
** Guava's partitioners and pymemcache's, written from their definitions. Each
** maps bytes to a uint32_t exactly as those routers do on x86-64,
** including the sign extension of bytes >= 0x80 where they read a signed
** char.
*/
#ifndef CHASH_KEYHASH_H
#define CHASH_KEYHASH_H

#include <stddef.h>
#include <stdint.h>

#include "utf8.h"

/*
** Each hash as three steps, for keys fed in pieces (hash_stream.c):
** start(s, n) for a key of n bytes in all; add(s, p, k) for the next k
** bytes, k a multiple of `block`; end(s, p, k) for the last k bytes (less
** than a block, or, with hold_last, 1 to block bytes: the last whole
** block is end's) gives the hash.
*/
typedef struct keyhash_state {
  uint32_t v[4];
  uint64_t w[3];           /* the 64-bit hashes' state */
  utf8_reader utf8;        /* the hashes of UTF-16 code units: the key's
                           ** UTF-8 read so far */
} keyhash_state;

typedef struct keyhash_def {
  unsigned block;          /* 1, 4 or 12 */
  int hold_last;
  void (*start)(keyhash_state *s, uint64_t n);
  void (*add)(keyhash_state *s, const unsigned char *p, size_t n);
  uint32_t (*end)(keyhash_state *s, const unsigned char *p, size_t n);
  /* For the 64-bit hashes, end64 in place of end (NULL otherwise). */
  uint64_t (*end64)(keyhash_state *s, const unsigned char *p, size_t n);
} keyhash_def;

extern const keyhash_def keyhash_fnv1a_64_def, keyhash_fnv1_64_def,
  keyhash_fnv1a_32_def, keyhash_fnv1_32_def, keyhash_one_at_a_time_def,
  keyhash_murmur_def, keyhash_jenkins_def, keyhash_hsieh_def,
  keyhash_sdbm_def, keyhash_djb2_def, keyhash_wt6_def, keyhash_crc16_def,
  keyhash_murmur2_kafka_def, keyhash_murmur2_kafkajs_legacy_def,
  keyhash_murmur3_128_def, keyhash_murmur3_cassandra_def,
  keyhash_murmur3_32_def, keyhash_identity_def, keyhash_java_hashcode_def,
  keyhash_fnv1a_64_utf16_def, keyhash_fnv1_64_utf16_def,
  keyhash_fnv1a_32_utf16_def, keyhash_fnv1_32_utf16_def;

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

/* Client libraries' key hashes. Kafka's murmur2 (the Java client's
** Utils.murmur2, librdkafka's rd_murmur2, kafkajs 2.x's), as an unsigned
** 32-bit value; kafkajs' legacy murmur2 (the partitioner of kafkajs 1.x),
** likewise; the low 64 bits (h1) of MurmurHash3 x64 128 with seed 0, as
** Guava's padToLong. */
uint32_t keyhash_murmur2_kafka(const unsigned char *p, size_t n);
uint32_t keyhash_murmur2_kafkajs_legacy(const unsigned char *p, size_t n);
uint64_t keyhash_murmur3_128_low(const unsigned char *p, size_t n);

/* MurmurHash3 x86_32 with seed 0 (Appleby's reference, pymemcache's
** murmur3_32); and its two steps on a bare state h (0 at the start):
** _blocks runs the whole 4-byte blocks of p[0..n) (n a multiple of 4),
** _end the last n < 4 bytes and the finish, for a key of nTotal bytes. */
uint32_t keyhash_murmur3_32(const unsigned char *p, size_t n);
uint32_t keyhash_murmur3_32_blocks(uint32_t h, const unsigned char *p,
                                   size_t n);
uint32_t keyhash_murmur3_32_end(uint32_t h, const unsigned char *p,
                                size_t n, uint64_t nTotal);

/* Cassandra's Murmur3Partitioner token, as the two's complement bits of
** the signed 64-bit token: h1 of MurmurHash3 x64 128 with seed 0, tail
** bytes sign-extended (Java bytes); -2^63 becomes 2^63-1, since no key
** may have the minimum token, and an empty key has the minimum, -2^63.
** docs/algorithms.md gives the rule and the versions it was read from. */
uint64_t keyhash_murmur3_cassandra(const unsigned char *p, size_t n);

/* Java's hashes of a string, over its UTF-16 code units (the key's
** UTF-8 read as utf8.h reads it), each unit an unsigned 16-bit value:
** String.hashCode() (h = 31*h + unit), and spymemcached's FNV hashes
** (DefaultHashAlgorithm: the FNV steps with a unit for a byte; the 64-bit
** ones keep their low 32 bits). */
uint32_t keyhash_java_hashcode(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1a_64_utf16(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1_64_utf16(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1a_32_utf16(const unsigned char *p, size_t n);
uint32_t keyhash_fnv1_32_utf16(const unsigned char *p, size_t n);

/* An integer key's own value: bytes that are SQLite's decimal form of a
** 64-bit integer give it, as uint64_t, with *pOk = 1; others 0, *pOk = 0. */
uint64_t keyhash_identity(const unsigned char *p, size_t n, int *pOk);

#endif

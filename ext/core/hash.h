/*
** hash.h: the hash functions chash places keys and points with.
**
** Pure C, no SQLite calls. A hash is named by a hash_id; every hash maps
** (seed, bytes) to a position on the ring, returned as a uint64_t. The
** 64-bit hashes (xxh3, xxh64) use the whole range and take a seed. The
** others are the key hashes of twemproxy and libmemcached, bit for bit,
** and the hashes of rings people write themselves (md5be): 32-bit values
** (15-bit for crc32), no seed; crc16 is Redis Cluster's 16-bit CRC. The
** client libraries' hashes (murmur3_128, murmur3_32, murmur2_kafka,
** murmur2_kafkajs_legacy) take no seed either, and identity places only
** integer keys: an INTEGER key's decimal text is read back as the
** integer, any other key has no position (hash_identity_ok).
** hash_space_bits says how wide a hash's positions are, so shares can
** be computed over the right space.
*/
#ifndef CHASH_HASH_H
#define CHASH_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef enum hash_id {
  HASH_XXH3 = 0,           /* XXH3_64bits_withSeed (the default) */
  HASH_XXH64,              /* XXH64 */
  HASH_MD5,                /* MD5 word 0, little-endian (twemproxy "md5") */
  HASH_FNV1A_64,           /* twemproxy's: FNV-1a 64, low 32 bits */
  HASH_FNV1_64,            /* FNV-1 64, low 32 bits */
  HASH_FNV1A_32,
  HASH_FNV1_32,
  HASH_ONE_AT_A_TIME,      /* Jenkins one-at-a-time (libmemcached default) */
  HASH_CRC32,              /* libmemcached's: (crc32 >> 16) & 0x7fff */
  HASH_CRC32A,             /* standard CRC-32 (zlib) */
  HASH_MURMUR,             /* MurmurHash2-32, seed 0xdeadbeef*len */
  HASH_JENKINS,            /* lookup3 hashlittle, initval 13 */
  HASH_HSIEH,              /* SuperFastHash, initial hash 0 */
  HASH_SDBM,               /* HAProxy's sdbm (unsigned bytes) */
  HASH_DJB2,               /* HAProxy's djb2 */
  HASH_WT6,                /* HAProxy's wt6 */
  HASH_MD5BE,              /* MD5 bytes 0..3, big-endian (Java rings that
                           ** shift digest[0..3] into a long) */
  HASH_CRC16,              /* CRC-16/XMODEM, 16-bit (Redis Cluster's) */
  HASH_MURMUR3_128,        /* MurmurHash3 x64 128, low 64 bits (Guava's
                           ** murmur3_128 padToLong) */
  HASH_MURMUR2_KAFKA,      /* Kafka's murmur2, 32-bit */
  HASH_MURMUR2_KAFKAJS_LEGACY, /* kafkajs 1.x's murmur2, 32-bit */
  HASH_IDENTITY,           /* an integer key is its own 64-bit position
                           ** (hash_identity_ok says which keys are) */
  HASH_MURMUR3_CASSANDRA,  /* Cassandra's Murmur3Partitioner token, 64-bit,
                           ** no seed (keyhash.h) */
  HASH_MURMUR3_32,         /* MurmurHash3 x86_32, seed 0 (pymemcache's) */
  HASH_JAVA_HASHCODE,      /* Java's String.hashCode() of the key's UTF-16
                           ** code units, 32-bit (utf8.h reads the key) */
  HASH_MD5_128,            /* MD5 as a 128-bit big-endian integer: its top
                           ** 64 bits, and the 64 below them for rings of
                           ** 128-bit points (hash_md5_128; uhashring) */
  HASH_COUNT,              /* the hashes a `hash` option names */
  /* Hashes no option names, which an algorithm's key rule puts in place
  ** of the one named: the FNV hashes of spymemcached, which take a Java
  ** string's UTF-16 code units (unsigned, 16 bits each) for bytes. */
  HASH_FNV1A_64_UTF16 = HASH_COUNT,
  HASH_FNV1_64_UTF16,
  HASH_FNV1A_32_UTF16,
  HASH_FNV1_32_UTF16,
  HASH_ALL                 /* every hash, named or not */
} hash_id;

/* The hash named zName (case-insensitive), or -1 if there is none. */
int hash_from_name(const char *zName);

/* The canonical name of a hash, e.g. "xxh3" (for one no option names,
** what messages call it: "fnv1a_64 of UTF-16 code units"). */
const char *hash_name(hash_id id);

/* "xxh3, xxh64, md5, ...": every hash's name, for error messages, into
** zOut (nOut bytes). Returns zOut. */
const char *hash_names(char *zOut, size_t nOut);

/* The hashes of at most 32 bits but `except` (HASH_COUNT: none), in the
** table's order, " (the default)" after `def` (HASH_COUNT: none), for the
** messages of algorithms with 32-bit points. Into zOut; returns zOut. */
const char *hash_names_narrow(hash_id except, hash_id def, char *zOut,
                              size_t nOut);

/* Bits in a hash's positions: 64, 32, 16 (crc16) or 15 (crc32). */
unsigned hash_space_bits(hash_id id);

/* Does the hash take a seed? (Only xxh3 and xxh64 do.) */
int hash_has_seed(hash_id id);

/* Can hash id place these bytes? Every hash can, but identity, which
** places only the decimal text of a 64-bit integer. */
int hash_identity_ok(hash_id id, const void *pData, size_t nData);

/* The position of nData bytes at pData under hash id and seed (0 for
** bytes identity cannot place). */
uint64_t hash_bytes(hash_id id, uint64_t seed, const void *pData, size_t nData);

/*
** A hash fed its bytes in pieces, with no allocation (the state lives on
** the caller's stack): hash_stream_start for nTotal bytes in all, then
** hash_stream_add with pieces that sum to nTotal bytes, then
** hash_stream_end, which gives what hash_bytes gives for the pieces
** joined. nTotal is needed up front: murmur, jenkins and hsieh start from
** the length.
*/
typedef struct hash_stream {
  hash_id id;
  uint64_t total;                /* bytes announced, */
  uint64_t done;                 /* and added so far */
  unsigned n_carry;              /* bytes of an unfinished block: */
  unsigned char carry[16];
  _Alignas(64) unsigned char state[640];   /* the hash's own state */
} hash_stream;

void hash_stream_start(hash_stream *s, hash_id id, uint64_t seed,
                       uint64_t nTotal);
void hash_stream_add(hash_stream *s, const void *p, size_t n);
uint64_t hash_stream_end(hash_stream *s);

/* hash_stream_end, and for md5_128 the 64 bits below the position into
** *pLow (0 for every other hash). */
uint64_t hash_stream_end_low(hash_stream *s, uint64_t *pLow);

/*
** The bytes of a key that are hashed under a hash tag (the hash_tag
** option; tag is two bytes, such as "{}"): when the key holds tag[0] and,
** after it, tag[1] with at least one byte between the first tag[0] and
** the first tag[1] after it, only the bytes between; otherwise the whole
** key. Returns where they start and sets *pN to their length. This is
** twemproxy's hash_tag and Redis Cluster's {...} rule.
*/
const void *hash_tag_part(const char tag[2], const void *pKey, size_t nKey,
                          size_t *pN);

/*
** Point hashes: digests that algorithms make points from, and that are not
** key hashes (not in the hash_id table, so no `hash` option names them
** and no list of hashes shows them). An algorithm that needs another
** (a point-only hash) adds its function here, beside these, through a
** library the build already links.
*/

/* The 16-byte MD5 digest of nData bytes at pData (ketama's points). */
void hash_md5(const void *pData, size_t nData, unsigned char digest[16]);

/* The 20-byte SHA-1 digest of nData bytes at pData (nettle's; Dalli's
** points are the first 8 hex digits of the SHA-1 of "server:i"). */
void hash_sha1(const void *pData, size_t nData, unsigned char digest[20]);

/* md5_128: the MD5 of nData bytes at pData as a 128-bit big-endian
** integer, its top 64 bits returned and its low 64 bits into *pLow
** (uhashring's points and keys). */
uint64_t hash_md5_128(const void *pData, size_t nData, uint64_t *pLow);
uint64_t hash_md5_digest_128(const unsigned char d[16], uint64_t *pLow);

/* The MD5 digest of nData bytes at pData as four 32-bit words, each read
** little-endian: the 4 points of a ketama, hashring or Dubbo digest (word
** 0 is the md5 key hash). */
void hash_md5_words(const void *pData, size_t nData, uint64_t aWord[4]);

#endif

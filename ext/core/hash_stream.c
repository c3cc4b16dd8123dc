/*
** hash_stream.c: the hashes of hash.h fed a key in pieces (hash_stream_*):
** xxHash's and nettle's own streams, zlib's running CRC-32, and the small
** hashes' start/add/end steps (keyhash.c) with whole blocks handed on as
** they fill. Apart from hash.c so that its one-call hashes stay inlined
** as they were.
*/
#include <assert.h>
#include <string.h>

#include "xxhash_inline.h"
#include <nettle/md5.h>
#include <zlib.h>

#include "hash.h"
#include "keyhash.h"

/* The small hashes' steps, by id (NULL: the hash has its own stream). */
static const keyhash_def *const stream_keyhash[HASH_ALL] = {
  [HASH_FNV1A_64] = &keyhash_fnv1a_64_def,
  [HASH_FNV1_64] = &keyhash_fnv1_64_def,
  [HASH_FNV1A_32] = &keyhash_fnv1a_32_def,
  [HASH_FNV1_32] = &keyhash_fnv1_32_def,
  [HASH_ONE_AT_A_TIME] = &keyhash_one_at_a_time_def,
  [HASH_MURMUR] = &keyhash_murmur_def,
  [HASH_JENKINS] = &keyhash_jenkins_def,
  [HASH_HSIEH] = &keyhash_hsieh_def,
  [HASH_SDBM] = &keyhash_sdbm_def,
  [HASH_DJB2] = &keyhash_djb2_def,
  [HASH_WT6] = &keyhash_wt6_def,
  [HASH_CRC16] = &keyhash_crc16_def,
  [HASH_MURMUR3_128] = &keyhash_murmur3_128_def,
  [HASH_MURMUR3_CASSANDRA] = &keyhash_murmur3_cassandra_def,
  [HASH_MURMUR3_32] = &keyhash_murmur3_32_def,
  [HASH_MURMUR2_KAFKA] = &keyhash_murmur2_kafka_def,
  [HASH_MURMUR2_KAFKAJS_LEGACY] = &keyhash_murmur2_kafkajs_legacy_def,
  [HASH_IDENTITY] = &keyhash_identity_def,
  [HASH_JAVA_HASHCODE] = &keyhash_java_hashcode_def,
  [HASH_FNV1A_64_UTF16] = &keyhash_fnv1a_64_utf16_def,
  [HASH_FNV1_64_UTF16] = &keyhash_fnv1_64_utf16_def,
  [HASH_FNV1A_32_UTF16] = &keyhash_fnv1a_32_utf16_def,
  [HASH_FNV1_32_UTF16] = &keyhash_fnv1_32_utf16_def,
};

typedef union stream_state {
  XXH3_state_t xxh3;
  XXH64_state_t xxh64;
  struct md5_ctx md5;
  uLong crc;
  keyhash_state small;
} stream_state;

static_assert(sizeof(stream_state)<=sizeof(((hash_stream *)0)->state),
              "hash_stream.state holds every hash's state");

void hash_stream_start(hash_stream *s, hash_id id, uint64_t seed,
                       uint64_t nTotal){
  stream_state *u = (stream_state *)s->state;
  s->id = id;
  s->total = nTotal;
  s->done = 0;
  s->n_carry = 0;
  switch( id ){
    case HASH_XXH3:
      /* A state on the stack: reset_withSeed skips making the secret when
      ** the old bytes hold the same seed, so clear it first. */
      XXH3_INITSTATE(&u->xxh3);
      XXH3_64bits_reset_withSeed(&u->xxh3, seed);
      break;
    case HASH_XXH64: XXH64_reset(&u->xxh64, seed); break;
    case HASH_MD5:
    case HASH_MD5BE:
    case HASH_MD5_128: md5_init(&u->md5); break;
    case HASH_CRC32:
    case HASH_CRC32A: u->crc = crc32(0L, Z_NULL, 0); break;
    default: stream_keyhash[id]->start(&u->small, nTotal); break;
  }
}

/* A small hash's pieces: whole blocks go to add, except (hold_last) the
** block that ends the key; the rest waits in carry. */
static void stream_add_blocks(hash_stream *s, const keyhash_def *d,
                              const unsigned char *p, size_t n){
  stream_state *u = (stream_state *)s->state;
  uint64_t nLeft = s->total - s->done;      /* after these n bytes */
  while( n>0 ){
    if( s->n_carry==0 ){
      size_t nBody = n - n%d->block;
      if( d->hold_last && nBody==n && nLeft==0 ) nBody -= d->block;
      if( nBody>0 ){
        d->add(&u->small, p, nBody);
        p += nBody;
        n -= nBody;
        continue;
      }
    }
    size_t k = d->block - s->n_carry;
    if( k>n ) k = n;
    memcpy(s->carry + s->n_carry, p, k);
    s->n_carry += (unsigned)k;
    p += k;
    n -= k;
    if( s->n_carry==d->block && !(d->hold_last && n==0 && nLeft==0) ){
      d->add(&u->small, s->carry, d->block);
      s->n_carry = 0;
    }
  }
}

void hash_stream_add(hash_stream *s, const void *pData, size_t n){
  stream_state *u = (stream_state *)s->state;
  const unsigned char *p = pData;
  s->done += n;
  switch( s->id ){
    case HASH_XXH3:  XXH3_64bits_update(&u->xxh3, p, n); break;
    case HASH_XXH64: XXH64_update(&u->xxh64, p, n); break;
    case HASH_MD5:
    case HASH_MD5BE:
    case HASH_MD5_128: md5_update(&u->md5, n, p); break;
    case HASH_CRC32:
    case HASH_CRC32A:
      while( n>0 ){
        uInt k = n>0x40000000 ? 0x40000000 : (uInt)n;
        u->crc = crc32(u->crc, p, k);
        p += k;
        n -= k;
      }
      break;
    default: stream_add_blocks(s, stream_keyhash[s->id], p, n); break;
  }
}

uint64_t hash_stream_end(hash_stream *s){
  uint64_t low;
  return hash_stream_end_low(s, &low);
}

uint64_t hash_stream_end_low(hash_stream *s, uint64_t *pLow){
  stream_state *u = (stream_state *)s->state;
  unsigned char d[16];
  *pLow = 0;
  switch( s->id ){
    case HASH_XXH3:   return XXH3_64bits_digest(&u->xxh3);
    case HASH_XXH64:  return XXH64_digest(&u->xxh64);
    case HASH_MD5:
      md5_digest(&u->md5, MD5_DIGEST_SIZE, d);
      return (uint32_t)d[0] | (uint32_t)d[1]<<8 | (uint32_t)d[2]<<16
           | (uint32_t)d[3]<<24;
    case HASH_MD5BE:
      md5_digest(&u->md5, MD5_DIGEST_SIZE, d);
      return (uint32_t)d[0]<<24 | (uint32_t)d[1]<<16 | (uint32_t)d[2]<<8
           | (uint32_t)d[3];
    case HASH_MD5_128:
      md5_digest(&u->md5, MD5_DIGEST_SIZE, d);
      return hash_md5_digest_128(d, pLow);
    case HASH_CRC32:  return ((uint32_t)u->crc >> 16) & 0x7fff;
    case HASH_CRC32A: return (uint32_t)u->crc;
    default: {
      const keyhash_def *def = stream_keyhash[s->id];
      return def->end64 ? def->end64(&u->small, s->carry, s->n_carry)
                        : def->end(&u->small, s->carry, s->n_carry);
    }
  }
}

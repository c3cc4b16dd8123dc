/*
** hash.c: the hash functions chash places keys and points with (see
** hash.h): names, widths, and the dispatch to each function.
**
** xxHash comes from Debian's libxxhash-dev and is inlined here
** (XXH_INLINE_ALL), so chash.so has no runtime dependency on libxxhash.
** MD5 is nettle's and CRC-32 is zlib's (chash.so links both); the small
** twemproxy/libmemcached hashes and Redis's CRC-16 are in keyhash.c. The
** hash_tag rule (which bytes of a key are hashed) is here too, and the
** streams that hash a key given in pieces.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <nettle/md5.h>
#include <zlib.h>

#include "hash.h"
#include "keyhash.h"

static const char *const hash_names_by_id[HASH_COUNT] = {
  [HASH_XXH3] = "xxh3",
  [HASH_XXH64] = "xxh64",
  [HASH_MD5] = "md5",
  [HASH_FNV1A_64] = "fnv1a_64",
  [HASH_FNV1_64] = "fnv1_64",
  [HASH_FNV1A_32] = "fnv1a_32",
  [HASH_FNV1_32] = "fnv1_32",
  [HASH_ONE_AT_A_TIME] = "one_at_a_time",
  [HASH_CRC32] = "crc32",
  [HASH_CRC32A] = "crc32a",
  [HASH_MURMUR] = "murmur",
  [HASH_JENKINS] = "jenkins",
  [HASH_HSIEH] = "hsieh",
  [HASH_SDBM] = "sdbm",
  [HASH_DJB2] = "djb2",
  [HASH_WT6] = "wt6",
  [HASH_MD5BE] = "md5be",
  [HASH_CRC16] = "crc16",
};

int hash_from_name(const char *zName){
  for(int i=0; i<HASH_COUNT; i++){
    if( strcasecmp(zName, hash_names_by_id[i])==0 ) return i;
  }
  return -1;
}

const char *hash_name(hash_id id){
  return hash_names_by_id[id];
}

const char *hash_names(char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; i<HASH_COUNT && n<nOut; i++){
    int k = snprintf(zOut+n, nOut-n, "%s%s", i ? ", " : "",
                     hash_names_by_id[i]);
    if( k<0 ) break;
    n += (size_t)k;
  }
  return zOut;
}

const char *hash_names_narrow(hash_id except, hash_id def, char *zOut,
                              size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int h=0; h<HASH_COUNT && n<nOut; h++){
    if( hash_space_bits((hash_id)h)>32 || h==(int)except ) continue;
    int k = snprintf(zOut+n, nOut-n, "%s%s%s", n ? ", " : "",
                     hash_names_by_id[h], h==(int)def ? " (the default)" : "");
    if( k<0 ) break;
    n += (size_t)k;
  }
  return zOut;
}

unsigned hash_space_bits(hash_id id){
  switch( id ){
    case HASH_XXH3:
    case HASH_XXH64: return 64;
    case HASH_CRC32: return 15;
    case HASH_CRC16: return 16;
    default:         return 32;
  }
}

int hash_has_seed(hash_id id){
  return hash_space_bits(id)==64;
}

void hash_md5(const void *pData, size_t nData, unsigned char digest[16]){
  struct md5_ctx ctx;
  md5_init(&ctx);
  md5_update(&ctx, nData, pData);
  md5_digest(&ctx, MD5_DIGEST_SIZE, digest);
}

const void *hash_tag_part(const char tag[2], const void *pKey, size_t nKey,
                          size_t *pN){
  const unsigned char *p = pKey;
  const unsigned char *open = memchr(p, (unsigned char)tag[0], nKey);
  if( open ){
    size_t nAfter = nKey - (size_t)(open + 1 - p);
    const unsigned char *close = memchr(open + 1, (unsigned char)tag[1],
                                        nAfter);
    if( close && close > open + 1 ){
      *pN = (size_t)(close - (open + 1));
      return open + 1;
    }
  }
  *pN = nKey;
  return pKey;
}

/* zlib's crc32 takes the length as uInt: feed long inputs in pieces. */
static uint32_t crc32_ieee(const unsigned char *p, size_t n){
  uLong c = crc32(0L, Z_NULL, 0);
  while( n>0 ){
    uInt k = n>0x40000000 ? 0x40000000 : (uInt)n;
    c = crc32(c, p, k);
    p += k;
    n -= k;
  }
  return (uint32_t)c;
}

void hash_md5_words(const void *pData, size_t nData, uint64_t aWord[4]){
  unsigned char d[16];
  hash_md5(pData, nData, d);
  for(int w=0; w<4; w++){
    const unsigned char *b = d + 4*w;
    aWord[w] = (uint32_t)b[0] | (uint32_t)b[1]<<8 | (uint32_t)b[2]<<16
             | (uint32_t)b[3]<<24;
  }
}

uint64_t hash_bytes(hash_id id, uint64_t seed, const void *pData, size_t nData){
  const unsigned char *p = pData;
  unsigned char d[16];
  switch( id ){
    case HASH_XXH64:         return XXH64(pData, nData, seed);
    case HASH_MD5:
      hash_md5(pData, nData, d);
      return (uint32_t)d[0] | (uint32_t)d[1]<<8 | (uint32_t)d[2]<<16
           | (uint32_t)d[3]<<24;             /* hash_md5_words' word 0 */
    case HASH_FNV1A_64:      return keyhash_fnv1a_64(p, nData);
    case HASH_FNV1_64:       return keyhash_fnv1_64(p, nData);
    case HASH_FNV1A_32:      return keyhash_fnv1a_32(p, nData);
    case HASH_FNV1_32:       return keyhash_fnv1_32(p, nData);
    case HASH_ONE_AT_A_TIME: return keyhash_one_at_a_time(p, nData);
    case HASH_CRC32:         return (crc32_ieee(p, nData) >> 16) & 0x7fff;
    case HASH_CRC32A:        return crc32_ieee(p, nData);
    case HASH_MURMUR:        return keyhash_murmur(p, nData);
    case HASH_JENKINS:       return keyhash_jenkins(p, nData);
    case HASH_HSIEH:         return keyhash_hsieh(p, nData);
    case HASH_SDBM:          return keyhash_sdbm(p, nData);
    case HASH_DJB2:          return keyhash_djb2(p, nData);
    case HASH_WT6:           return keyhash_wt6(p, nData);
    case HASH_MD5BE:
      hash_md5(pData, nData, d);
      return (uint32_t)d[0]<<24 | (uint32_t)d[1]<<16 | (uint32_t)d[2]<<8
           | (uint32_t)d[3];
    case HASH_CRC16:         return keyhash_crc16(p, nData);
    case HASH_XXH3:
    default:                 return XXH3_64bits_withSeed(pData, nData, seed);
  }
}

/* ------------------------------------------------------------ streams */

/* The small hashes' steps, by id (NULL: the hash has its own stream). */
static const keyhash_def *const stream_keyhash[HASH_COUNT] = {
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
    case HASH_XXH3:  XXH3_64bits_reset_withSeed(&u->xxh3, seed); break;
    case HASH_XXH64: XXH64_reset(&u->xxh64, seed); break;
    case HASH_MD5:
    case HASH_MD5BE: md5_init(&u->md5); break;
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
    case HASH_MD5BE: md5_update(&u->md5, n, p); break;
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
  stream_state *u = (stream_state *)s->state;
  unsigned char d[16];
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
    case HASH_CRC32:  return ((uint32_t)u->crc >> 16) & 0x7fff;
    case HASH_CRC32A: return (uint32_t)u->crc;
    default:
      return stream_keyhash[s->id]->end(&u->small, s->carry, s->n_carry);
  }
}

/*
** hash.c: the hash functions chash places keys and points with (see
** hash.h): names, widths, and the dispatch to each function.
**
** xxHash comes from Debian's libxxhash-dev and is inlined
** (xxhash_inline.h), so chash.so has no runtime dependency on libxxhash.
** MD5 and SHA-1 are nettle's and CRC-32 is zlib's (chash.so links both);
** the small twemproxy/libmemcached hashes and Redis's CRC-16 are in
** keyhash.c. The hash_tag rule (which bytes of a key are hashed) is here
** too; the streams that hash a key given in pieces are in hash_stream.c.
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "xxhash_inline.h"
#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/version.h>
#include <zlib.h>

#include "hash.h"
#include "keyhash.h"

static const char *const hash_names_by_id[HASH_ALL] = {
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
  [HASH_MURMUR3_128] = "murmur3_128",
  [HASH_MURMUR2_KAFKA] = "murmur2_kafka",
  [HASH_MURMUR2_KAFKAJS_LEGACY] = "murmur2_kafkajs_legacy",
  [HASH_IDENTITY] = "identity",
  [HASH_MURMUR3_CASSANDRA] = "murmur3_cassandra",
  [HASH_MURMUR3_32] = "murmur3_32",
  [HASH_JAVA_HASHCODE] = "java_hashcode",
  [HASH_FNV1A_64_UTF16] = "fnv1a_64 of UTF-16 code units",
  [HASH_FNV1_64_UTF16] = "fnv1_64 of UTF-16 code units",
  [HASH_FNV1A_32_UTF16] = "fnv1a_32 of UTF-16 code units",
  [HASH_FNV1_32_UTF16] = "fnv1_32 of UTF-16 code units",
  [HASH_MD5_128] = "md5_128",
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
    case HASH_XXH64:
    case HASH_MURMUR3_128:
    case HASH_IDENTITY:
    case HASH_MURMUR3_CASSANDRA:
    case HASH_MD5_128: return 64;
    case HASH_CRC32: return 15;
    case HASH_CRC16: return 16;
    default:         return 32;
  }
}

int hash_has_seed(hash_id id){
  return id==HASH_XXH3 || id==HASH_XXH64;
}

int hash_identity_ok(hash_id id, const void *pData, size_t nData){
  int ok = 1;
  if( id==HASH_IDENTITY ) keyhash_identity(pData, nData, &ok);
  return ok;
}

/* nettle's MD5 block function: public from nettle 3.8 on, with an
** underscore before. */
#if NETTLE_VERSION_MAJOR>3 || (NETTLE_VERSION_MAJOR==3 && NETTLE_VERSION_MINOR>=8)
# define md5_compress_block nettle_md5_compress
#else
# define md5_compress_block _nettle_md5_compress
#endif

/*
** The MD5 of nData bytes at pData as its four state words (the digest is
** them in little-endian order). A key or a point name of up to 55 bytes is
** one block once padded (the bytes, 0x80, zeros, the length in bits): it
** goes to nettle's block function directly, without md5_update's
** buffering and md5_digest's padding and byte writing, which cost more
** than the block itself on such short input. Longer input takes nettle's
** md5_update and md5_digest.
*/
static void md5_state(const void *pData, size_t nData, uint32_t aState[4]){
  if( nData<=MD5_BLOCK_SIZE-9 ){
    uint8_t aBlock[MD5_BLOCK_SIZE] = { 0 };
    uint64_t nBits = (uint64_t)nData*8;
    memcpy(aBlock, pData, nData);
    aBlock[nData] = 0x80;
    /* The length, little-endian (one store where the machine is). */
    aBlock[56] = (uint8_t)nBits;
    aBlock[57] = (uint8_t)(nBits >> 8);
    aBlock[58] = (uint8_t)(nBits >> 16);
    aBlock[59] = (uint8_t)(nBits >> 24);
    aBlock[60] = (uint8_t)(nBits >> 32);
    aBlock[61] = (uint8_t)(nBits >> 40);
    aBlock[62] = (uint8_t)(nBits >> 48);
    aBlock[63] = (uint8_t)(nBits >> 56);
    aState[0] = 0x67452301;
    aState[1] = 0xefcdab89;
    aState[2] = 0x98badcfe;
    aState[3] = 0x10325476;
    md5_compress_block(aState, aBlock);
    return;
  }
  struct md5_ctx ctx;
  uint8_t d[MD5_DIGEST_SIZE];
  md5_init(&ctx);
  md5_update(&ctx, nData, pData);
  md5_digest(&ctx, MD5_DIGEST_SIZE, d);
  for(int w=0; w<4; w++){
    const uint8_t *b = d + 4*w;
    aState[w] = (uint32_t)b[0] | (uint32_t)b[1]<<8 | (uint32_t)b[2]<<16
              | (uint32_t)b[3]<<24;
  }
}

void hash_md5(const void *pData, size_t nData, unsigned char digest[16]){
  uint32_t aState[4];
  md5_state(pData, nData, aState);
  for(int i=0; i<16; i++) digest[i] = (unsigned char)(aState[i/4] >> 8*(i%4));
}

void hash_sha1(const void *pData, size_t nData, unsigned char digest[20]){
  struct sha1_ctx ctx;
  sha1_init(&ctx);
  sha1_update(&ctx, nData, pData);
  sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
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
  uint32_t aState[4];
  md5_state(pData, nData, aState);
  for(int w=0; w<4; w++) aWord[w] = aState[w];
}

/* Bytes 0..7 of d, big-endian. */
static uint64_t be64(const unsigned char *d){
  uint64_t v = 0;
  for(int i=0; i<8; i++) v = v<<8 | d[i];
  return v;
}

uint64_t hash_md5_digest_128(const unsigned char d[16], uint64_t *pLow){
  *pLow = be64(d + 8);
  return be64(d);
}

/* Digest words a and b (each the little-endian read of 4 digest bytes)
** as the big-endian integer of their 8 bytes. */
static uint64_t be64_words(uint32_t a, uint32_t b){
  return (uint64_t)__builtin_bswap32(a) << 32 | __builtin_bswap32(b);
}

uint64_t hash_md5_128(const void *pData, size_t nData, uint64_t *pLow){
  uint32_t aState[4];
  md5_state(pData, nData, aState);
  *pLow = be64_words(aState[2], aState[3]);
  return be64_words(aState[0], aState[1]);
}

uint64_t hash_bytes(hash_id id, uint64_t seed, const void *pData, size_t nData){
  const unsigned char *p = pData;
  uint32_t aState[4];
  switch( id ){
    case HASH_XXH64:         return XXH64(pData, nData, seed);
    case HASH_MD5:                           /* hash_md5_words' word 0 */
      md5_state(pData, nData, aState);
      return aState[0];
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
    case HASH_MD5BE:                         /* its first 4 bytes, big-endian */
      md5_state(pData, nData, aState);
      return (aState[0] & 0xff)<<24 | (aState[0] & 0xff00)<<8
           | (aState[0] >> 8 & 0xff00) | aState[0] >> 24;
    case HASH_CRC16:         return keyhash_crc16(p, nData);
    case HASH_MURMUR3_128:   return keyhash_murmur3_128_low(p, nData);
    case HASH_MURMUR2_KAFKA: return keyhash_murmur2_kafka(p, nData);
    case HASH_MURMUR2_KAFKAJS_LEGACY:
      return keyhash_murmur2_kafkajs_legacy(p, nData);
    case HASH_IDENTITY: {
      int ok;
      return keyhash_identity(p, nData, &ok);
    }
    case HASH_MURMUR3_CASSANDRA: return keyhash_murmur3_cassandra(p, nData);
    case HASH_MURMUR3_32:    return keyhash_murmur3_32(p, nData);
    case HASH_JAVA_HASHCODE: return keyhash_java_hashcode(p, nData);
    case HASH_FNV1A_64_UTF16: return keyhash_fnv1a_64_utf16(p, nData);
    case HASH_FNV1_64_UTF16: return keyhash_fnv1_64_utf16(p, nData);
    case HASH_FNV1A_32_UTF16: return keyhash_fnv1a_32_utf16(p, nData);
    case HASH_FNV1_32_UTF16: return keyhash_fnv1_32_utf16(p, nData);
    case HASH_MD5_128: {
      uint64_t low;
      return hash_md5_128(pData, nData, &low);
    }
    case HASH_XXH3:
    default:                 return XXH3_64bits_withSeed(pData, nData, seed);
  }
}

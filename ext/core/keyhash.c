/*
** keyhash.c: twemproxy's, libmemcached's and HAProxy's key hashes,
** those of Kafka's, kafkajs' and Guava's partitioners, Cassandra's token,
** pymemcache's MurmurHash3 x86_32 and Java's string hashes (see
** keyhash.h).
**
** The 32-bit hashes compute mod 2^32, the 64-bit ones (FNV-64, MurmurHash3
** x64-128 and its Cassandra token, identity) mod 2^64. sx(b) is what those C programs get when a
** byte is read as a (signed) char and widened: b below 0x80, else
** 0xFFFFFF00|b. Only the functions that do so in the originals use it.
**
** Each hash is written once, as start / add / end (keyhash.h): the
** one-call form runs the three on one buffer, and keyhash_NAME_def hands
** them to hash_stream.c, which feeds a key in pieces.
*/
#include <string.h>

#include "keyhash.h"

static uint32_t sx(unsigned char b){
  return b<0x80 ? b : 0xFFFFFF00u | b;
}

static uint32_t le32(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1]<<8 | (uint32_t)p[2]<<16
       | (uint32_t)p[3]<<24;
}

static uint32_t le16(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1]<<8;
}

/* The 64-bit FNV variants keep only the low 32 bits, which a 32-bit
** computation with the low halves of the offset and prime gives exactly. */
#define FNV64_OFFSET_LOW 0x84222325u
#define FNV64_PRIME_LOW  0x1b3u
#define FNV32_OFFSET     2166136261u
#define FNV32_PRIME      16777619u

/* ------------------------------------------ hashes of one byte at a time
** Their state is v[0] (wt6: v[0..3]); end only reads it. */

static void fnv64_start(keyhash_state *s, uint64_t n){
  (void)n;
  s->v[0] = FNV64_OFFSET_LOW;
}

static void fnv32_start(keyhash_state *s, uint64_t n){
  (void)n;
  s->v[0] = FNV32_OFFSET;
}

static void zero_start(keyhash_state *s, uint64_t n){
  (void)n;
  s->v[0] = 0;
}

static uint32_t v0_end(keyhash_state *s, const unsigned char *p, size_t n){
  (void)p; (void)n;
  return s->v[0];
}

static inline void fnv1a_64_add(keyhash_state *s, const unsigned char *p,
                                size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++){ h ^= sx(p[i]); h *= FNV64_PRIME_LOW; }
  s->v[0] = h;
}

static inline void fnv1_64_add(keyhash_state *s, const unsigned char *p,
                               size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++){ h *= FNV64_PRIME_LOW; h ^= sx(p[i]); }
  s->v[0] = h;
}

static inline void fnv1a_32_add(keyhash_state *s, const unsigned char *p,
                                size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++){ h ^= sx(p[i]); h *= FNV32_PRIME; }
  s->v[0] = h;
}

static inline void fnv1_32_add(keyhash_state *s, const unsigned char *p,
                               size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++){ h *= FNV32_PRIME; h ^= sx(p[i]); }
  s->v[0] = h;
}

static inline void one_at_a_time_add(keyhash_state *s, const unsigned char *p,
                                     size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++){
    h += sx(p[i]);
    h += h<<10;
    h ^= h>>6;
  }
  s->v[0] = h;
}

static inline uint32_t one_at_a_time_end(keyhash_state *s,
                                         const unsigned char *p, size_t n){
  (void)p; (void)n;
  uint32_t h = s->v[0];
  h += h<<3;
  h ^= h>>11;
  h += h<<15;
  return h;
}

/* --------------------------------------------- hashes of 4 or 12 bytes
** add takes whole blocks; end takes the rest (jenkins: 1..12 bytes, so a
** last whole block goes to end). Their start needs the key's length. */

/* MurmurHash2, 32-bit, seeded with 0xdeadbeef * length as twemproxy does.
** The length is a 32-bit quantity there. */
#define MURMUR_M 0x5bd1e995u

static void murmur_start(keyhash_state *s, uint64_t n){
  uint32_t len = (uint32_t)n;
  s->v[0] = (0xdeadbeefu * len) ^ len;
}

static inline void murmur_add(keyhash_state *s, const unsigned char *p,
                              size_t n){
  uint32_t h = s->v[0];
  for(; n>=4; p+=4, n-=4){
    uint32_t k = le32(p);
    k *= MURMUR_M;
    k ^= k>>24;
    k *= MURMUR_M;
    h *= MURMUR_M;
    h ^= k;
  }
  s->v[0] = h;
}

static inline uint32_t murmur_end(keyhash_state *s, const unsigned char *p,
                                  size_t n){
  uint32_t h = s->v[0];
  switch( n ){
    case 3: h ^= (uint32_t)p[2]<<16; /* fall through */
    case 2: h ^= (uint32_t)p[1]<<8;  /* fall through */
    case 1: h ^= p[0]; h *= MURMUR_M;
  }
  h ^= h>>13;
  h *= MURMUR_M;
  h ^= h>>15;
  return h;
}

/* Kafka's Utils.murmur2: the same MurmurHash2 from seed 0x9747b28c, xored
** with the length. */
static void murmur2_kafka_start(keyhash_state *s, uint64_t n){
  s->v[0] = 0x9747b28cu ^ (uint32_t)n;
}

/*
** kafkajs' legacy murmur2 (kafkajs 1.x's default partitioner, kept in
** 2.x as LegacyPartitioner). It is MurmurHash2 written with JavaScript
** numbers, so it differs from Kafka's in two ways that are reproduced
** here: each `*= m` is a double-precision product (rounded to 53 bits
** before the next bitwise operator takes it mod 2^32), and the block loop
** runs while i < length/4 without rounding down, so a length that is not
** a multiple of 4 gets one more block: the tail bytes padded with zeros
** (bytes past the end read as undefined, and undefined & 0xff is 0),
** before the tail is mixed in again as usual. State: the double h in w[0].
*/
#define LEGACY_M 1540483477.0          /* 0x5bd1e995 */

/* JavaScript's ToInt32 of a double that holds an integer below 2^63 in
** magnitude (every value these products make): the value mod 2^32, as a
** signed 32-bit number. */
static int32_t js_int32(double d){
  return (int32_t)(uint32_t)(uint64_t)(int64_t)d;
}

static double legacy_get(const keyhash_state *s){
  double h;
  memcpy(&h, &s->w[0], sizeof(h));
  return h;
}

static void legacy_set(keyhash_state *s, double h){
  memcpy(&s->w[0], &h, sizeof(h));
}

static void legacy_start(keyhash_state *s, uint64_t n){
  legacy_set(s, (double)(int32_t)(0x9747b28cu ^ (uint32_t)n));
}

/* One block of 4 bytes (zero-padded for the extra last one). */
static double legacy_block(double h, const unsigned char b[4]){
  double k = (double)((int32_t)b[0] + ((int32_t)b[1]<<8)
                      + ((int32_t)b[2]<<16))
           + (double)(int32_t)((uint32_t)b[3]<<24);
  k *= LEGACY_M;
  k = (double)(js_int32(k) ^ (int32_t)((uint32_t)js_int32(k) >> 24));
  k *= LEGACY_M;
  h *= LEGACY_M;
  return (double)(js_int32(h) ^ js_int32(k));
}

static inline void legacy_add(keyhash_state *s, const unsigned char *p,
                              size_t n){
  double h = legacy_get(s);
  for(; n>=4; p+=4, n-=4) h = legacy_block(h, p);
  legacy_set(s, h);
}

static uint32_t legacy_end(keyhash_state *s, const unsigned char *p,
                           size_t n){
  double h = legacy_get(s);
  if( n>0 ){
    unsigned char b[4] = {0, 0, 0, 0};
    memcpy(b, p, n);
    h = legacy_block(h, b);
  }
  switch( n ){
    case 3: h = (double)(js_int32(h) ^ (int32_t)p[2]<<16); /* fall through */
    case 2: h = (double)(js_int32(h) ^ (int32_t)p[1]<<8);  /* fall through */
    case 1: h = (double)(js_int32(h) ^ (int32_t)p[0]); h *= LEGACY_M;
  }
  h = (double)(js_int32(h) ^ (int32_t)((uint32_t)js_int32(h) >> 13));
  h *= LEGACY_M;
  return (uint32_t)(js_int32(h) ^ (int32_t)((uint32_t)js_int32(h) >> 15));
}

/* Bob Jenkins' lookup3 hashlittle() with initval 13: state a, b, c in
** v[0..2], v[3] set for a key of no bytes (whose hash is c unmixed). */
#define ROT(x, k) (((x)<<(k)) | ((x)>>(32-(k))))
#define MIX(a, b, c) do{ \
  a -= c; a ^= ROT(c, 4);  c += b; \
  b -= a; b ^= ROT(a, 6);  a += c; \
  c -= b; c ^= ROT(b, 8);  b += a; \
  a -= c; a ^= ROT(c, 16); c += b; \
  b -= a; b ^= ROT(a, 19); a += c; \
  c -= b; c ^= ROT(b, 4);  b += a; \
}while(0)
#define FINAL(a, b, c) do{ \
  c ^= b; c -= ROT(b, 14); \
  a ^= c; a -= ROT(c, 11); \
  b ^= a; b -= ROT(a, 25); \
  c ^= b; c -= ROT(b, 16); \
  a ^= c; a -= ROT(c, 4);  \
  b ^= a; b -= ROT(a, 14); \
  c ^= b; c -= ROT(b, 24); \
}while(0)

static void jenkins_start(keyhash_state *s, uint64_t n){
  s->v[0] = s->v[1] = s->v[2] = 0xdeadbeefu + (uint32_t)n + 13u;
  s->v[3] = n==0;
}

static inline void jenkins_add(keyhash_state *s, const unsigned char *p,
                               size_t n){
  uint32_t a = s->v[0], b = s->v[1], c = s->v[2];
  for(; n>=12; p+=12, n-=12){
    a += le32(p);
    b += le32(p+4);
    c += le32(p+8);
    MIX(a, b, c);
  }
  s->v[0] = a; s->v[1] = b; s->v[2] = c;
}

/* The last 1..12 bytes, zero-padded into three little-endian words. */
static inline uint32_t jenkins_end(keyhash_state *s, const unsigned char *p,
                                   size_t n){
  uint32_t a = s->v[0], b = s->v[1], c = s->v[2];
  if( s->v[3] ) return c;
  unsigned char tail[12] = {0};
  for(size_t i=0; i<n; i++) tail[i] = p[i];
  a += le32(tail);
  b += le32(tail+4);
  c += le32(tail+8);
  FINAL(a, b, c);
  return c;
}

/* Paul Hsieh's SuperFastHash as twemproxy has it: the hash starts at 0
** (not at the length), and the third byte of a 3-byte tail is signed.
** v[1] is set for a key of no bytes (its hash is 0). */
static void hsieh_start(keyhash_state *s, uint64_t n){
  s->v[0] = 0;
  s->v[1] = n==0;
}

static inline void hsieh_add(keyhash_state *s, const unsigned char *p,
                             size_t n){
  uint32_t h = s->v[0], tmp;
  for(; n>=4; p+=4, n-=4){
    h += le16(p);
    tmp = (le16(p+2) << 11) ^ h;
    h = (h<<16) ^ tmp;
    h += h>>11;
  }
  s->v[0] = h;
}

static inline uint32_t hsieh_end(keyhash_state *s, const unsigned char *p,
                                 size_t n){
  uint32_t h = s->v[0];
  if( s->v[1] ) return 0;
  switch( n ){
    case 3:
      h += le16(p);
      h ^= h<<16;
      h ^= sx(p[2])<<18;
      h += h>>11;
      break;
    case 2:
      h += le16(p);
      h ^= h<<11;
      h += h>>17;
      break;
    case 1:
      h += p[0];
      h ^= h<<10;
      h += h>>1;
      break;
  }
  h ^= h<<3;
  h += h>>5;
  h ^= h<<4;
  h += h>>17;
  h ^= h<<25;
  h += h>>6;
  return h;
}

/*
** HAProxy's three string hashes (checked against HAProxy 2.6's sdbm, djb2
** and wt6 converters). They read bytes as unsigned.
**   sdbm: from 0, each byte c: h = c + h*65599 (65599 = 2^16 + 2^6 - 1).
**   djb2: from 5381, each byte c: h = h*33 + c.
**   wt6:  two words h0, h1 and two rotation counts; each byte is folded
**         into both words (h0 by xor, h1 by addition, both complemented),
**         then the words swap places rotated left by the counts, and the
**         next counts come from 16 bits of the new words. The hash is
**         h0 xor h1.
*/
static inline void sdbm_add(keyhash_state *s, const unsigned char *p,
                            size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++) h = p[i] + (h<<6) + (h<<16) - h;
  s->v[0] = h;
}

static void djb2_start(keyhash_state *s, uint64_t n){
  (void)n;
  s->v[0] = 5381;
}

static inline void djb2_add(keyhash_state *s, const unsigned char *p,
                            size_t n){
  uint32_t h = s->v[0];
  for(size_t i=0; i<n; i++) h = h*33 + p[i];
  s->v[0] = h;
}

/* Rotate left by k in 0..31 (k = 0 leaves x as it is). */
static uint32_t wt6_rotl(uint32_t x, unsigned k){
  return k ? (x<<k) | (x>>(32-k)) : x;
}

/* State: h0, h1, k0, k1 in v[0..3]. */
static void wt6_start(keyhash_state *s, uint64_t n){
  (void)n;
  s->v[0] = 0xa53c965au;
  s->v[1] = 0x5ca6953au;
  s->v[2] = 6;
  s->v[3] = 18;
}

static inline void wt6_add(keyhash_state *s, const unsigned char *p,
                           size_t n){
  uint32_t h0 = s->v[0], h1 = s->v[1];
  unsigned k0 = s->v[2], k1 = s->v[3];
  for(size_t i=0; i<n; i++){
    uint32_t a = ~(h0 ^ p[i]);
    uint32_t b = ~(h1 + p[i]);
    h0 = wt6_rotl(b, k0);
    h1 = wt6_rotl(a, k1);
    uint32_t t = ((h0>>16) ^ h1) & 0xffff;
    k0 = t & 0x1f;
    k1 = t >> 11;
  }
  s->v[0] = h0; s->v[1] = h1; s->v[2] = k0; s->v[3] = k1;
}

static uint32_t wt6_end(keyhash_state *s, const unsigned char *p, size_t n){
  (void)p; (void)n;
  return s->v[0] ^ s->v[1];
}

/* CRC-16/XMODEM four bits at a time: crc16_nibble[i] is the CRC register
** after shifting i<<12 four times through the polynomial 0x1021. */
static const uint16_t crc16_nibble[16] = {
  0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
  0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef
};

static inline void crc16_add(keyhash_state *s, const unsigned char *p,
                             size_t n){
  uint32_t crc = s->v[0];
  for(size_t i=0; i<n; i++){
    crc = (crc << 4) ^ crc16_nibble[((crc >> 12) ^ (p[i] >> 4)) & 0xf];
    crc = (crc << 4) ^ crc16_nibble[((crc >> 12) ^ (p[i] & 0xf)) & 0xf];
    crc &= 0xffff;
  }
  s->v[0] = crc;
}

/*
** MurmurHash3 x86_32 with seed 0 (Austin Appleby's MurmurHash3_x86_32):
** the hash of pymemcache's rendezvous scores. State: h in v[0], the
** length in w[0]; blocks of 4 bytes. keyhash_murmur3_32_blocks and
** keyhash_murmur3_32_end are the same steps on a bare h, for callers that
** keep h after a prefix and continue it with each key.
*/
#define M3_32_C1 0xcc9e2d51u
#define M3_32_C2 0x1b873593u

static uint32_t rotl32(uint32_t x, unsigned r){
  return (x<<r) | (x>>(32-r));
}

static uint32_t murmur3_32_mix(uint32_t k){
  k *= M3_32_C1;
  k = rotl32(k, 15);
  return k * M3_32_C2;
}

uint32_t keyhash_murmur3_32_blocks(uint32_t h, const unsigned char *p,
                                   size_t n){
  for(; n>=4; p+=4, n-=4){
    h ^= murmur3_32_mix(le32(p));
    h = rotl32(h, 13);
    h = h*5 + 0xe6546b64u;
  }
  return h;
}

uint32_t keyhash_murmur3_32_end(uint32_t h, const unsigned char *p,
                                size_t n, uint64_t nTotal){
  uint32_t k = 0;
  switch( n ){
    case 3: k ^= (uint32_t)p[2]<<16; /* fall through */
    case 2: k ^= (uint32_t)p[1]<<8;  /* fall through */
    case 1: k ^= p[0]; h ^= murmur3_32_mix(k);
  }
  h ^= (uint32_t)nTotal;
  h ^= h>>16;
  h *= 0x85ebca6bu;
  h ^= h>>13;
  h *= 0xc2b2ae35u;
  h ^= h>>16;
  return h;
}

static void murmur3_32_start(keyhash_state *s, uint64_t n){
  s->v[0] = 0;
  s->w[0] = n;
}

static inline void murmur3_32_add(keyhash_state *s, const unsigned char *p,
                                  size_t n){
  s->v[0] = keyhash_murmur3_32_blocks(s->v[0], p, n);
}

static uint32_t murmur3_32_end(keyhash_state *s, const unsigned char *p,
                               size_t n){
  return keyhash_murmur3_32_end(s->v[0], p, n, s->w[0]);
}

/* ------------------------------------------------------ 64-bit hashes
** Their end64 gives the whole 64-bit value. */

static uint64_t le64(const unsigned char *p){
  return (uint64_t)le32(p) | (uint64_t)le32(p+4)<<32;
}

static uint64_t rotl64(uint64_t x, unsigned r){
  return (x<<r) | (x>>(64-r));
}

static uint64_t fmix64(uint64_t k){
  k ^= k>>33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k>>33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k>>33;
  return k;
}

/*
** MurmurHash3 x64 128-bit with seed 0 (Austin Appleby's
** MurmurHash3_x64_128), its first 64-bit half h1: the first 8 bytes of
** the digest read little-endian, which is Guava's
** murmur3_128().hashBytes(b).padToLong() (asLong()). State: h1, h2 and
** the length in w[0..2]; blocks of 16 bytes.
*/
#define M3_C1 0x87c37b91114253d5ULL
#define M3_C2 0x4cf5ad432745937fULL

static void murmur3_128_start(keyhash_state *s, uint64_t n){
  s->w[0] = 0;
  s->w[1] = 0;
  s->w[2] = n;
}

static inline void murmur3_128_add(keyhash_state *s, const unsigned char *p,
                                   size_t n){
  uint64_t h1 = s->w[0], h2 = s->w[1];
  for(; n>=16; p+=16, n-=16){
    uint64_t k1 = le64(p), k2 = le64(p+8);
    k1 *= M3_C1; k1 = rotl64(k1, 31); k1 *= M3_C2; h1 ^= k1;
    h1 = rotl64(h1, 27); h1 += h2; h1 = h1*5 + 0x52dce729;
    k2 *= M3_C2; k2 = rotl64(k2, 33); k2 *= M3_C1; h2 ^= k2;
    h2 = rotl64(h2, 31); h2 += h1; h2 = h2*5 + 0x38495ab5;
  }
  s->w[0] = h1;
  s->w[1] = h2;
}

/* A tail byte as MurmurHash3 widens it: unsigned in Appleby's reference
** code (and Guava's); sign-extended, as a Java byte, in Cassandra's. */
static uint64_t murmur3_tail_byte(unsigned char b, int bSigned){
  return bSigned && b>=0x80 ? 0xFFFFFFFFFFFFFF00ULL | b : b;
}

static uint64_t murmur3_end(keyhash_state *s, const unsigned char *t,
                            size_t nTail, int bSignedTail){
  uint64_t h1 = s->w[0], h2 = s->w[1], k1 = 0, k2 = 0;
  for(size_t j=nTail; j>8; j--){
    k2 ^= murmur3_tail_byte(t[j-1], bSignedTail) << (8*(j-9));
  }
  if( nTail>8 ){
    k2 *= M3_C2; k2 = rotl64(k2, 33); k2 *= M3_C1; h2 ^= k2;
  }
  for(size_t j=nTail<8 ? nTail : 8; j>0; j--){
    k1 ^= murmur3_tail_byte(t[j-1], bSignedTail) << (8*(j-1));
  }
  if( nTail>0 ){
    k1 *= M3_C1; k1 = rotl64(k1, 31); k1 *= M3_C2; h1 ^= k1;
  }
  h1 ^= s->w[2];
  h2 ^= s->w[2];
  h1 += h2;
  h2 += h1;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  return h1 + h2;
}

static uint64_t murmur3_128_end(keyhash_state *s, const unsigned char *t,
                                size_t nTail){
  return murmur3_end(s, t, nTail, 0);
}

/*
** Cassandra's Murmur3Partitioner token: murmur3 with sign-extended tail
** bytes; the minimum token, -2^63, for an empty key (w[2] is the length)
** and for no other: a hash of -2^63 becomes 2^63-1.
*/
#define TOKEN_MIN 0x8000000000000000ULL
#define TOKEN_MAX 0x7fffffffffffffffULL

static uint64_t murmur3_cassandra_end(keyhash_state *s, const unsigned char *t,
                                      size_t nTail){
  if( s->w[2]==0 ) return TOKEN_MIN;
  uint64_t h1 = murmur3_end(s, t, nTail, 1);
  return h1==TOKEN_MIN ? TOKEN_MAX : h1;
}

/*
** The identity of integer keys: bytes that are the decimal form of a
** signed 64-bit integer as SQLite writes one (an optional '-', no leading
** zeros, no '+', no spaces; what an INTEGER key becomes) give that
** integer; any other bytes give 0 (keyhash_identity says which). State:
** the value in w[0], the length in w[1]; v[0] bytes seen, v[1] a '-'
** first, v[2] still valid, v[3] the first digit is 0.
*/
static void identity_start(keyhash_state *s, uint64_t n){
  s->w[0] = 0;
  s->w[1] = n;
  s->v[0] = 0;
  s->v[1] = 0;
  s->v[2] = n>0;
  s->v[3] = 0;
}

static inline void identity_add(keyhash_state *s, const unsigned char *p,
                                size_t n){
  for(size_t i=0; i<n && s->v[2]; i++){
    unsigned char c = p[i];
    uint32_t at = s->v[0]++;
    if( at==0 && c=='-' ){
      s->v[1] = 1;
      continue;
    }
    if( c<'0' || c>'9' ){
      s->v[2] = 0;
      continue;
    }
    if( at==s->v[1] && c=='0' ) s->v[3] = 1;
    uint64_t limit = s->v[1] ? (uint64_t)1<<63 : ((uint64_t)1<<63) - 1;
    uint64_t d = (uint64_t)(c - '0');
    if( s->w[0] > (limit-d)/10 ){
      s->v[2] = 0;
      continue;
    }
    s->w[0] = s->w[0]*10 + d;
  }
}

/* 1 if the bytes identity_add saw are an integer's decimal form. */
static int identity_valid(const keyhash_state *s){
  uint64_t nDigit = s->w[1] - s->v[1];
  return s->v[2] && nDigit>0 && nDigit<=19
      && !(s->v[3] && (nDigit>1 || s->v[1]));
}

static uint64_t identity_end(keyhash_state *s, const unsigned char *p,
                             size_t n){
  (void)p; (void)n;
  if( !identity_valid(s) ) return 0;
  return s->v[1] ? (uint64_t)0 - s->w[0] : s->w[0];
}

/* ------------------------------------ hashes of a Java string's units
** Their state is v[0] and the UTF-8 reader; add reads the key's bytes
** into code units a chunk at a time, end finishes a sequence cut short. */
#define JAVA_CHUNK 64     /* bytes read into units at a time */

/* The UTF-16 code units of p[0..n) (n <= JAVA_CHUNK) into aUnit, going on
** from the reader's sequence; their count. */
static size_t java_units(utf8_reader *r, const unsigned char *p, size_t n,
                         uint16_t aUnit[2*JAVA_CHUNK]){
  size_t m = 0;
  for(size_t i=0; i<n; i++){
    uint32_t aCode[2];
    unsigned nCode = utf8_reader_byte(r, p[i], aCode);
    for(unsigned j=0; j<nCode; j++) m += utf16_units(aCode[j], aUnit + m);
  }
  return m;
}

/* NAME_start, NAME_add and NAME_end of a hash of units: h starts at INIT
** and STEP takes the unit u. */
#define JAVA_UNITS_HASH(NAME, INIT, STEP)                                   \
  static void NAME##_start(keyhash_state *s, uint64_t n){                  \
    (void)n;                                                               \
    memset(&s->utf8, 0, sizeof(s->utf8));                                  \
    s->v[0] = (INIT);                                                      \
  }                                                                        \
  static uint32_t NAME##_units(uint32_t h, const uint16_t *a, size_t m){   \
    for(size_t i=0; i<m; i++){ uint32_t u = a[i]; STEP; }                  \
    return h;                                                              \
  }                                                                        \
  static inline void NAME##_add(keyhash_state *s, const unsigned char *p,  \
                                size_t n){                                 \
    uint16_t aUnit[2*JAVA_CHUNK];                                          \
    while( n>0 ){                                                          \
      size_t k = n<JAVA_CHUNK ? n : JAVA_CHUNK;                            \
      s->v[0] = NAME##_units(s->v[0], aUnit,                               \
                             java_units(&s->utf8, p, k, aUnit));           \
      p += k;                                                              \
      n -= k;                                                              \
    }                                                                      \
  }                                                                        \
  static uint32_t NAME##_end(keyhash_state *s, const unsigned char *p,     \
                             size_t n){                                    \
    (void)p; (void)n;                                                      \
    uint32_t c;                                                            \
    uint16_t aUnit[1] = {0};                                               \
    size_t m = utf8_reader_end(&s->utf8, &c) ? 1 : 0;                      \
    if( m ) aUnit[0] = (uint16_t)c;                                        \
    return NAME##_units(s->v[0], aUnit, m);                                \
  }

JAVA_UNITS_HASH(java_hashcode, 0, h = 31*h + u)
JAVA_UNITS_HASH(fnv1a_64_utf16, FNV64_OFFSET_LOW, h ^= u; h *= FNV64_PRIME_LOW)
JAVA_UNITS_HASH(fnv1_64_utf16, FNV64_OFFSET_LOW, h *= FNV64_PRIME_LOW; h ^= u)
JAVA_UNITS_HASH(fnv1a_32_utf16, FNV32_OFFSET, h ^= u; h *= FNV32_PRIME)
JAVA_UNITS_HASH(fnv1_32_utf16, FNV32_OFFSET, h *= FNV32_PRIME; h ^= u)

/* ------------------------------------------------ both forms of each */

/* keyhash_NAME(p, n), and keyhash_NAME_def for streams. BLOCK: the bytes
** add takes at a time; HOLD: 1 if the last whole block goes to end. */
#define KEYHASH(NAME, BLOCK, HOLD, START, ADD, END)                        \
  static void NAME##_add_blocks(keyhash_state *s, const unsigned char *p,  \
                                size_t n){ ADD(s, p, n); }                 \
  const keyhash_def keyhash_##NAME##_def = {                               \
    BLOCK, HOLD, START, NAME##_add_blocks, END, NULL                       \
  };                                                                       \
  uint32_t keyhash_##NAME(const unsigned char *p, size_t n){               \
    keyhash_state s;                                                       \
    size_t nBody = n - n%(BLOCK);                                          \
    if( (HOLD) && nBody==n && n>0 ) nBody -= (BLOCK);                      \
    START(&s, n);                                                          \
    ADD(&s, p, nBody);                                                     \
    return END(&s, p + nBody, n - nBody);                                  \
  }

KEYHASH(fnv1a_64, 1, 0, fnv64_start, fnv1a_64_add, v0_end)
KEYHASH(fnv1_64, 1, 0, fnv64_start, fnv1_64_add, v0_end)
KEYHASH(fnv1a_32, 1, 0, fnv32_start, fnv1a_32_add, v0_end)
KEYHASH(fnv1_32, 1, 0, fnv32_start, fnv1_32_add, v0_end)
KEYHASH(one_at_a_time, 1, 0, zero_start, one_at_a_time_add,
        one_at_a_time_end)
KEYHASH(murmur, 4, 0, murmur_start, murmur_add, murmur_end)
KEYHASH(jenkins, 12, 1, jenkins_start, jenkins_add, jenkins_end)
KEYHASH(hsieh, 4, 0, hsieh_start, hsieh_add, hsieh_end)
KEYHASH(sdbm, 1, 0, zero_start, sdbm_add, v0_end)
KEYHASH(djb2, 1, 0, djb2_start, djb2_add, v0_end)
KEYHASH(wt6, 1, 0, wt6_start, wt6_add, wt6_end)
KEYHASH(crc16, 1, 0, zero_start, crc16_add, v0_end)
KEYHASH(murmur2_kafka, 4, 0, murmur2_kafka_start, murmur_add, murmur_end)
KEYHASH(murmur2_kafkajs_legacy, 4, 0, legacy_start, legacy_add, legacy_end)
KEYHASH(murmur3_32, 4, 0, murmur3_32_start, murmur3_32_add, murmur3_32_end)
KEYHASH(java_hashcode, 1, 0, java_hashcode_start, java_hashcode_add,
        java_hashcode_end)
KEYHASH(fnv1a_64_utf16, 1, 0, fnv1a_64_utf16_start, fnv1a_64_utf16_add,
        fnv1a_64_utf16_end)
KEYHASH(fnv1_64_utf16, 1, 0, fnv1_64_utf16_start, fnv1_64_utf16_add,
        fnv1_64_utf16_end)
KEYHASH(fnv1a_32_utf16, 1, 0, fnv1a_32_utf16_start, fnv1a_32_utf16_add,
        fnv1a_32_utf16_end)
KEYHASH(fnv1_32_utf16, 1, 0, fnv1_32_utf16_start, fnv1_32_utf16_add,
        fnv1_32_utf16_end)

/* The stream definitions of the 64-bit hashes, whose end is end64. */
#define KEYHASH64(NAME, BLOCK, START, ADD, END64)                          \
  static void NAME##_add_blocks(keyhash_state *s, const unsigned char *p,  \
                                size_t n){ ADD(s, p, n); }                 \
  const keyhash_def keyhash_##NAME##_def = {                               \
    BLOCK, 0, START, NAME##_add_blocks, NULL, END64                        \
  };                                                                       \

KEYHASH64(murmur3_128, 16, murmur3_128_start, murmur3_128_add,
          murmur3_128_end)
KEYHASH64(murmur3_cassandra, 16, murmur3_128_start, murmur3_128_add,
          murmur3_cassandra_end)
KEYHASH64(identity, 1, identity_start, identity_add, identity_end)

uint64_t keyhash_murmur3_128_low(const unsigned char *p, size_t n){
  keyhash_state s;
  size_t nBody = n - n%16;
  murmur3_128_start(&s, n);
  murmur3_128_add(&s, p, nBody);
  return murmur3_128_end(&s, p + nBody, n - nBody);
}

uint64_t keyhash_murmur3_cassandra(const unsigned char *p, size_t n){
  keyhash_state s;
  size_t nBody = n - n%16;
  murmur3_128_start(&s, n);
  murmur3_128_add(&s, p, nBody);
  return murmur3_cassandra_end(&s, p + nBody, n - nBody);
}

uint64_t keyhash_identity(const unsigned char *p, size_t n, int *pOk){
  keyhash_state s;
  identity_start(&s, n);
  identity_add(&s, p, n);
  *pOk = identity_valid(&s);
  return identity_end(&s, NULL, 0);
}

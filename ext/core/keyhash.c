/*
** keyhash.c: twemproxy's, libmemcached's and HAProxy's key hashes (see
** keyhash.h).
**
** All arithmetic is mod 2^32. sx(b) is what those C programs get when a
** byte is read as a (signed) char and widened: b below 0x80, else
** 0xFFFFFF00|b. Only the functions that do so in the originals use it.
**
** Each hash is written once, as start / add / end (keyhash.h): the
** one-call form runs the three on one buffer, and keyhash_NAME_def hands
** them to hash_stream.c, which feeds a key in pieces.
*/
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

/* ------------------------------------------------ both forms of each */

/* keyhash_NAME(p, n), and keyhash_NAME_def for streams. BLOCK: the bytes
** add takes at a time; HOLD: 1 if the last whole block goes to end. */
#define KEYHASH(NAME, BLOCK, HOLD, START, ADD, END)                        \
  static void NAME##_add_blocks(keyhash_state *s, const unsigned char *p,  \
                                size_t n){ ADD(s, p, n); }                 \
  const keyhash_def keyhash_##NAME##_def = {                               \
    BLOCK, HOLD, START, NAME##_add_blocks, END                             \
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

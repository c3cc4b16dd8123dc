/*
** keyhash.c: twemproxy's, libmemcached's and HAProxy's key hashes (see
** keyhash.h).
**
** All arithmetic is mod 2^32. sx(b) is what those C programs get when a
** byte is read as a (signed) char and widened: b below 0x80, else
** 0xFFFFFF00|b. Only the functions that do so in the originals use it.
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

uint32_t keyhash_fnv1a_64(const unsigned char *p, size_t n){
  uint32_t h = FNV64_OFFSET_LOW;
  for(size_t i=0; i<n; i++){ h ^= sx(p[i]); h *= FNV64_PRIME_LOW; }
  return h;
}

uint32_t keyhash_fnv1_64(const unsigned char *p, size_t n){
  uint32_t h = FNV64_OFFSET_LOW;
  for(size_t i=0; i<n; i++){ h *= FNV64_PRIME_LOW; h ^= sx(p[i]); }
  return h;
}

uint32_t keyhash_fnv1a_32(const unsigned char *p, size_t n){
  uint32_t h = FNV32_OFFSET;
  for(size_t i=0; i<n; i++){ h ^= sx(p[i]); h *= FNV32_PRIME; }
  return h;
}

uint32_t keyhash_fnv1_32(const unsigned char *p, size_t n){
  uint32_t h = FNV32_OFFSET;
  for(size_t i=0; i<n; i++){ h *= FNV32_PRIME; h ^= sx(p[i]); }
  return h;
}

uint32_t keyhash_one_at_a_time(const unsigned char *p, size_t n){
  uint32_t h = 0;
  for(size_t i=0; i<n; i++){
    h += sx(p[i]);
    h += h<<10;
    h ^= h>>6;
  }
  h += h<<3;
  h ^= h>>11;
  h += h<<15;
  return h;
}

/* MurmurHash2, 32-bit, seeded with 0xdeadbeef * length as twemproxy does.
** The length is a 32-bit quantity there. */
uint32_t keyhash_murmur(const unsigned char *p, size_t n){
  const uint32_t m = 0x5bd1e995;
  uint32_t len = (uint32_t)n;
  uint32_t h = (0xdeadbeefu * len) ^ len;
  while( n>=4 ){
    uint32_t k = le32(p);
    k *= m;
    k ^= k>>24;
    k *= m;
    h *= m;
    h ^= k;
    p += 4;
    n -= 4;
  }
  switch( n ){
    case 3: h ^= (uint32_t)p[2]<<16; /* fall through */
    case 2: h ^= (uint32_t)p[1]<<8;  /* fall through */
    case 1: h ^= p[0]; h *= m;
  }
  h ^= h>>13;
  h *= m;
  h ^= h>>15;
  return h;
}

/* Bob Jenkins' lookup3 hashlittle() with initval 13. */
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

uint32_t keyhash_jenkins(const unsigned char *p, size_t n){
  uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + (uint32_t)n + 13u;
  if( n==0 ) return c;
  while( n>12 ){
    a += le32(p);
    b += le32(p+4);
    c += le32(p+8);
    MIX(a, b, c);
    p += 12;
    n -= 12;
  }
  /* The last 1..12 bytes, zero-padded into three little-endian words. */
  unsigned char tail[12] = {0};
  for(size_t i=0; i<n; i++) tail[i] = p[i];
  a += le32(tail);
  b += le32(tail+4);
  c += le32(tail+8);
  FINAL(a, b, c);
  return c;
}

/* Paul Hsieh's SuperFastHash as twemproxy has it: the hash starts at 0
** (not at the length), and the third byte of a 3-byte tail is signed. */
uint32_t keyhash_hsieh(const unsigned char *p, size_t n){
  uint32_t h = 0, tmp;
  if( n==0 ) return 0;
  size_t rem = n & 3;
  for(n >>= 2; n>0; n--){
    h += le16(p);
    tmp = (le16(p+2) << 11) ^ h;
    h = (h<<16) ^ tmp;
    p += 4;
    h += h>>11;
  }
  switch( rem ){
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
uint32_t keyhash_sdbm(const unsigned char *p, size_t n){
  uint32_t h = 0;
  for(size_t i=0; i<n; i++) h = p[i] + (h<<6) + (h<<16) - h;
  return h;
}

uint32_t keyhash_djb2(const unsigned char *p, size_t n){
  uint32_t h = 5381;
  for(size_t i=0; i<n; i++) h = h*33 + p[i];
  return h;
}

/* Rotate left by k in 0..31 (k = 0 leaves x as it is). */
static uint32_t wt6_rotl(uint32_t x, unsigned k){
  return k ? (x<<k) | (x>>(32-k)) : x;
}

uint32_t keyhash_wt6(const unsigned char *p, size_t n){
  uint32_t h0 = 0xa53c965au, h1 = 0x5ca6953au;
  unsigned k0 = 6, k1 = 18;
  for(size_t i=0; i<n; i++){
    uint32_t a = ~(h0 ^ p[i]);
    uint32_t b = ~(h1 + p[i]);
    h0 = wt6_rotl(b, k0);
    h1 = wt6_rotl(a, k1);
    uint32_t t = ((h0>>16) ^ h1) & 0xffff;
    k0 = t & 0x1f;
    k1 = t >> 11;
  }
  return h0 ^ h1;
}

/* CRC-16/XMODEM four bits at a time: crc16_nibble[i] is the CRC register
** after shifting i<<12 four times through the polynomial 0x1021. */
static const uint16_t crc16_nibble[16] = {
  0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
  0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef
};

uint32_t keyhash_crc16(const unsigned char *p, size_t n){
  uint32_t crc = 0;
  for(size_t i=0; i<n; i++){
    crc = (crc << 4) ^ crc16_nibble[((crc >> 12) ^ (p[i] >> 4)) & 0xf];
    crc = (crc << 4) ^ crc16_nibble[((crc >> 12) ^ (p[i] & 0xf)) & 0xf];
    crc &= 0xffff;
  }
  return crc;
}

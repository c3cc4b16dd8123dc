/*
** keyhash.c: twemproxy's, libmemcached's and HAProxy's key hashes, and
** the key hashes of client libraries (Kafka's and kafkajs' murmur2,
** Guava's murmur3_128) (see keyhash.h).
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

/* MurmurHash2, 32-bit, from the initial value h. The length is a 32-bit
** quantity in the programs reproduced. */
static uint32_t murmur2_from(uint32_t h, const unsigned char *p, size_t n){
  const uint32_t m = 0x5bd1e995;
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

/* twemproxy's murmur: seeded with 0xdeadbeef * length. */
uint32_t keyhash_murmur(const unsigned char *p, size_t n){
  uint32_t len = (uint32_t)n;
  return murmur2_from((0xdeadbeefu * len) ^ len, p, n);
}

/* Kafka's Utils.murmur2: seed 0x9747b28c, xored with the length. */
uint32_t keyhash_murmur2_kafka(const unsigned char *p, size_t n){
  return murmur2_from(0x9747b28cu ^ (uint32_t)n, p, n);
}

/*
** JavaScript's ToInt32 of a double that holds an integer below 2^63 in
** magnitude (every value kafkajs' legacy murmur2 makes: products of two
** numbers below 2^31): the value mod 2^32, as a signed 32-bit number.
*/
static int32_t js_int32(double d){
  return (int32_t)(uint32_t)(uint64_t)(int64_t)d;
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
** before the tail is mixed in again as usual.
*/
uint32_t keyhash_murmur2_kafkajs_legacy(const unsigned char *p, size_t n){
  const double m = 0x5bd1e995;
  double h = (double)(int32_t)(0x9747b28cu ^ (uint32_t)n);
  for(size_t i=0; i<n; i+=4){
    unsigned char b[4] = {0, 0, 0, 0};
    for(size_t j=0; j<4 && i+j<n; j++) b[j] = p[i+j];
    double k = (double)((int32_t)b[0] + ((int32_t)b[1]<<8)
                        + ((int32_t)b[2]<<16))
             + (double)(int32_t)((uint32_t)b[3]<<24);
    k *= m;
    k = (double)(js_int32(k) ^ (int32_t)((uint32_t)js_int32(k) >> 24));
    k *= m;
    h *= m;
    h = (double)(js_int32(h) ^ js_int32(k));
  }
  const unsigned char *t = p + (n & ~(size_t)3);
  switch( n % 4 ){
    case 3: h = (double)(js_int32(h) ^ (int32_t)t[2]<<16); /* fall through */
    case 2: h = (double)(js_int32(h) ^ (int32_t)t[1]<<8);  /* fall through */
    case 1: h = (double)(js_int32(h) ^ (int32_t)t[0]); h *= m;
  }
  h = (double)(js_int32(h) ^ (int32_t)((uint32_t)js_int32(h) >> 13));
  h *= m;
  return (uint32_t)(js_int32(h) ^ (int32_t)((uint32_t)js_int32(h) >> 15));
}

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
** murmur3_128().hashBytes(b).padToLong() (asLong()).
*/
uint64_t keyhash_murmur3_128_low(const unsigned char *p, size_t n){
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
  uint64_t h1 = 0, h2 = 0, k1, k2;
  size_t i;
  for(i=0; i+16<=n; i+=16){
    k1 = le64(p+i);
    k2 = le64(p+i+8);
    k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    h1 = rotl64(h1, 27); h1 += h2; h1 = h1*5 + 0x52dce729;
    k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    h2 = rotl64(h2, 31); h2 += h1; h2 = h2*5 + 0x38495ab5;
  }
  const unsigned char *t = p + i;
  size_t nTail = n - i;
  k1 = 0;
  k2 = 0;
  for(size_t j=nTail; j>8; j--) k2 ^= (uint64_t)t[j-1] << (8*(j-9));
  if( nTail>8 ){
    k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
  }
  for(size_t j=nTail<8 ? nTail : 8; j>0; j--) k1 ^= (uint64_t)t[j-1] << (8*(j-1));
  if( nTail>0 ){
    k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
  }
  h1 ^= (uint64_t)n;
  h2 ^= (uint64_t)n;
  h1 += h2;
  h2 += h1;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  return h1 + h2;
}

/*
** The identity of integer keys: the bytes of a key that are the decimal
** form of a signed 64-bit integer as SQLite writes one (an optional '-',
** no leading zeros, no '+', no spaces; what an INTEGER key becomes) give
** that integer. Any other bytes give 0 and *pOk = 0.
*/
uint64_t keyhash_identity(const unsigned char *p, size_t n, int *pOk){
  int neg = n>0 && p[0]=='-';
  size_t i = (size_t)neg;
  uint64_t v = 0;
  const uint64_t limit = neg ? (uint64_t)1<<63 : ((uint64_t)1<<63) - 1;
  *pOk = 0;
  if( i>=n || n-i>19 || (p[i]=='0' && (n-i>1 || neg)) ) return 0;
  for(; i<n; i++){
    if( p[i]<'0' || p[i]>'9' ) return 0;
    uint64_t d = (uint64_t)(p[i]-'0');
    if( v > (limit-d)/10 ) return 0;
    v = v*10 + d;
  }
  *pOk = 1;
  return neg ? (uint64_t)0 - v : v;
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

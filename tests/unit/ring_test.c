/*
** tests/unit/ring_test.c: unit tests of the pure ring core (ext/core/ring.c,
** ext/core/hash.c, ext/core/keys.c, ext/core/options.c), without SQLite.
**
** Expected values are worked by hand or come from Python's xxhash package
** (the hash vectors and the three-node ring below), not from chash itself.
** Prints "N passed, N failed" and exits 1 if anything failed.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "algo.h"
#include "hash.h"
#include "options.h"
#include "ring.h"
#include "ring_index.h"
#include "ring_spec.h"

#include "unit.h"

/* Build a ring from names with weight 1; NULL on error (zErr says why). */
static ring *build(const ring_config *cfg, const char **azName, int n,
                   char *zErr, size_t nErr){
  ring_input aIn[16];
  memset(aIn, 0, sizeof(aIn));             /* no column values */
  for(int i=0; i<n; i++){
    aIn[i].name = azName[i];
    aIn[i].name_len = (uint32_t)strlen(azName[i]);
    aIn[i].weight = 1.0;
  }
  ring *r = NULL;
  zErr[0] = 0;
  ring_build(cfg, aIn, (uint32_t)n, &r, zErr, nErr);
  return r;
}

static int has(const char *z, const char *zSub){
  return z!=NULL && strstr(z, zSub)!=NULL;
}

static void test_hash(void){
  /* Vectors from Python's xxhash (xxh3_64_intdigest, xxh64_intdigest). */
  CHECK( hash_bytes(HASH_XXH3, 0, "", 0)==0x2d06800538d394c2ULL );
  CHECK( hash_bytes(HASH_XXH64, 0, "", 0)==0xef46db3751d8e999ULL );
  CHECK( hash_bytes(HASH_XXH3, UINT64_MAX, "", 0)==0x4c093276ae47a555ULL );
  CHECK( hash_bytes(HASH_XXH64, UINT64_MAX, "", 0)==0x298f4c84b24f5380ULL );
  CHECK( hash_bytes(HASH_XXH3, 0, "a#1", 3)==0x148be4e168a1bf8cULL );
  CHECK( hash_bytes(HASH_XXH64, 0, "a#1", 3)==0xa750dcc3294629b3ULL );
  CHECK( hash_bytes(HASH_XXH3, UINT64_MAX, "node-1#160", 10)==0x505a3652bc2c6591ULL );
  CHECK( hash_bytes(HASH_XXH64, UINT64_MAX, "node-1#160", 10)==0x99dc605dd368ffa6ULL );

  CHECK( hash_from_name("xxh3")==HASH_XXH3 );
  CHECK( hash_from_name("XXH64")==HASH_XXH64 );
  CHECK( hash_from_name("md5")==HASH_MD5 );
  CHECK( hash_from_name("sha1")==-1 );
  CHECK( hash_from_name("")==-1 );
  CHECK( strcmp(hash_name(HASH_XXH64), "xxh64")==0 );
  /* Every hash, in hash_id order (tests/sql/surface.test pins the list
  ** itself, generated from the table by make gen). */
  char zNames[400], zWantNames[400] = "";
  for(int h=0; h<HASH_COUNT; h++){
    if( h ) strcat(zWantNames, ", ");
    strcat(zWantNames, hash_name(h));
  }
  CHECK( strcmp(hash_names(zNames, sizeof(zNames)), zWantNames)==0 );
  CHECK( strncmp(zNames, "xxh3, xxh64, md5, fnv1a_64, ", 28)==0 );
  /* md5be: MD5("") = d41d8cd9..., MD5("hello") = 5d41402a...; crc32a is
  ** zlib's CRC-32 (Python: zlib.crc32(b"0http://10.0.0.1:8080")). */
  CHECK( hash_bytes(HASH_MD5BE, 0, "", 0)==0xd41d8cd9u );
  CHECK( hash_bytes(HASH_MD5BE, 0, "hello", 5)==0x5d41402au );
  CHECK( hash_bytes(HASH_MD5, 0, "hello", 5)==0x2a40415du );
  CHECK( hash_bytes(HASH_CRC32A, 0, "0http://10.0.0.1:8080", 21)==2090179191u );
  CHECK( hash_space_bits(HASH_MD5BE)==32 && !hash_has_seed(HASH_MD5BE) );
  /* Java's "hello".hashCode() is 99162322; "\u00e9\u20ac\U0001f600" has
  ** the units e9 20ac d83d de00: ((233*31 + 8364)*31 + 55357)*31 + 56832;
  ** "\u00e9" is one unit, so spymemcached's FNV-1a 32 of it is one step
  ** (2166136261 ^ 0xe9) * 16777619, not twemproxy's two bytes. */
  CHECK( hash_bytes(HASH_JAVA_HASHCODE, 0, "hello", 5)==99162322u );
  CHECK( hash_bytes(HASH_JAVA_HASHCODE, 0, "\xc3\xa9\xe2\x82\xac"
                    "\xf0\x9f\x98\x80", 9)==16752006u );
  CHECK( hash_bytes(HASH_JAVA_HASHCODE, 0, "", 0)==0 );
  CHECK( hash_bytes(HASH_FNV1A_32_UTF16, 0, "\xc3\xa9", 2)
         ==(uint32_t)((2166136261u ^ 0xe9u) * 16777619u) );
  CHECK( hash_bytes(HASH_FNV1A_32_UTF16, 0, "ab", 2)
         ==hash_bytes(HASH_FNV1A_32, 0, "ab", 2) );
  CHECK( hash_from_name("java_hashcode")==HASH_JAVA_HASHCODE );
  CHECK( hash_from_name(hash_name(HASH_FNV1A_32_UTF16))==-1 );
  /* SHA-1, a point hash only (sha1 is no hash option, above): FIPS 180's
  ** "abc" = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d, and Python's
  ** hashlib.sha1(b"localhost:11211:0").hexdigest()[:8]. */
  unsigned char sha[20];
  hash_sha1("abc", 3, sha);
  CHECK( sha[0]==0xa9 && sha[1]==0x99 && sha[2]==0x3e && sha[3]==0x36
      && sha[18]==0xd8 && sha[19]==0x9d );
  hash_sha1("localhost:11211:0", 17, sha);
  CHECK( ((uint32_t)sha[0]<<24 | (uint32_t)sha[1]<<16 | (uint32_t)sha[2]<<8
          | sha[3])==0x5cc05708u );

  /* CRC-16/XMODEM's published check value; Redis's slots of "foo" and
  ** "bar" (its cluster tutorial) are these mod 16384. */
  CHECK( hash_bytes(HASH_CRC16, 0, "123456789", 9)==0x31C3 );
  CHECK( hash_bytes(HASH_CRC16, 0, "foo", 3)%16384==12182 );
  CHECK( hash_bytes(HASH_CRC16, 0, "bar", 3)%16384==5061 );
  CHECK( hash_bytes(HASH_CRC16, 0, "", 0)==0 );
  CHECK( hash_space_bits(HASH_CRC16)==16 );

  /* Cassandra's token, as the DataStax Python driver 3.25 computes it
  ** (cassandra.metadata.Murmur3Token.hash_fn): "a", and 0xE9, a tail byte
  ** that Cassandra sign-extends; an empty key has the minimum token. */
  CHECK( hash_bytes(HASH_MURMUR3_CASSANDRA, 0, "a", 1)
         ==(uint64_t)-8839064797231613815 );
  CHECK( hash_bytes(HASH_MURMUR3_CASSANDRA, 0, "\xe9", 1)==7703788153147420217u );
  CHECK( hash_bytes(HASH_MURMUR3_CASSANDRA, 0, "", 0)==(uint64_t)1<<63 );
  CHECK( hash_space_bits(HASH_MURMUR3_CASSANDRA)==64
         && !hash_has_seed(HASH_MURMUR3_CASSANDRA) );

  /* MurmurHash3 x86_32 as pymemcache 3.5.2 computes it
  ** (pymemcache.client.murmur3.murmur3_32 of the same characters): every
  ** tail length, a whole block, bytes >= 0x80 ('\xe9\xff\x80'). */
  static const struct { const char *z; uint32_t h; } aM3[] = {
    { "", 0 }, { "a", 0x3c2569b2u }, { "ab", 0x9bbfd75fu },
    { "abc", 0xb3dd93fau }, { "abcd", 0x43ed676au },
    { "hello", 0x248bfa47u },
    { "The quick brown fox jumps over the lazy dog", 0x2e4ff723u },
    { "\xe9\xff\x80", 0x37e8ae68u },
  };
  for(size_t i=0; i<sizeof(aM3)/sizeof(aM3[0]); i++){
    CHECK( hash_bytes(HASH_MURMUR3_32, 9, aM3[i].z, strlen(aM3[i].z))==aM3[i].h );
  }
  CHECK( hash_space_bits(HASH_MURMUR3_32)==32 && !hash_has_seed(HASH_MURMUR3_32) );
  /* md5_128: RFC 1321's MD5 of "abc", 900150983cd24fb0d6963f7d28e17f72,
  ** as a 128-bit big-endian integer in two halves; the same through a key
  ** rule with a step (the stream: prefix "a" before the key "bc"). */
  uint64_t low = 0;
  CHECK( hash_md5_128("abc", 3, &low)==0x900150983cd24fb0u
         && low==0xd6963f7d28e17f72u );
  CHECK( hash_bytes(HASH_MD5_128, 0, "abc", 3)==0x900150983cd24fb0u );
  CHECK( hash_space_bits(HASH_MD5_128)==64 && !hash_has_seed(HASH_MD5_128) );
  ring_keys kMd5;
  ring_keys_init(&kMd5, HASH_MD5_128, 0);
  low = 0;
  CHECK( ring_keys_place_low(&kMd5, "abc", 3, &low)==0x900150983cd24fb0u
         && low==0xd6963f7d28e17f72u );
  CHECK( ring_keys_add_step(&kMd5, RING_KEY_PREFIX, 1, "a", 1)==0 );
  low = 0;
  CHECK( ring_keys_place_low(&kMd5, "bc", 2, &low)==0x900150983cd24fb0u
         && low==0xd6963f7d28e17f72u );
  ring_keys kXxh;
  ring_keys_init(&kXxh, HASH_XXH3, 0);
  low = 1;
  CHECK( ring_keys_place_low(&kXxh, "abc", 3, &low)==hash_bytes(HASH_XXH3, 0, "abc", 3)
         && low==0 );

  /* hash_tag_part: the bytes between the first open and the next close. */
  static const struct { const char *key, *part; } aTag[] = {
    { "{user1}.a", "user1" }, { "a{b}{c}", "b" }, { "{{a}}", "{a" },
    { "x{}{y}", "x{}{y}" }, { "{}", "{}" }, { "tail{t}", "t" },
    { "{open", "{open" }, { "}{", "}{" }, { "", "" },
  };
  for(size_t i=0; i<sizeof(aTag)/sizeof(aTag[0]); i++){
    size_t n;
    const char *p = hash_tag_part("{}", aTag[i].key, strlen(aTag[i].key), &n);
    CHECK( n==strlen(aTag[i].part) && memcmp(p, aTag[i].part, n)==0 );
  }
  size_t nSame;
  const char *pSame = hash_tag_part("::", "a:b:c:d", 7, &nSame);
  CHECK( nSame==1 && pSame[0]=='b' );
  const char aBin[] = { 'k', '{', 0, (char)0xff, '}', 0 };
  const char *pBin = hash_tag_part("{}", aBin, sizeof(aBin), &nSame);
  CHECK( nSame==2 && pBin==aBin+2 );
}

/* Label templates of the ring option label, and their points. */
/* Every hash fed in pieces gives what it gives for the bytes in one
** buffer, for every length up to 100 (past jenkins' 12-byte blocks a few
** times) and cuts at every place, in one, two and many pieces. */
/* MD5 of every length around the one-block path's end (55 bytes; longer
** input takes nettle's md5_update) against nettle's md5_update fed a byte
** at a time, and Python's hashlib.md5(b"a" * 55 / 56).hexdigest(). */
static void test_md5_lengths(void){
  unsigned char aIn[130], d[16], want[16];
  for(int i=0; i<130; i++) aIn[i] = (unsigned char)(i*7 + 1);
  for(int n=0; n<=130; n++){
    struct md5_ctx ctx;
    md5_init(&ctx);
    for(int i=0; i<n; i++) md5_update(&ctx, 1, aIn+i);
    md5_digest(&ctx, 16, want);
    hash_md5(aIn, n, d);
    CHECK( memcmp(d, want, 16)==0 );
    uint64_t aWord[4];
    hash_md5_words(aIn, n, aWord);
    CHECK( aWord[0]==hash_bytes(HASH_MD5, 0, aIn, n)
           && aWord[0]==((uint32_t)want[0] | (uint32_t)want[1]<<8
                         | (uint32_t)want[2]<<16 | (uint32_t)want[3]<<24) );
  }
  char zA[57];
  memset(zA, 'a', 56);
  static const unsigned char md5a55[16] = {
    0xef,0x17,0x72,0xb6,0xdf,0xf9,0xa1,0x22,0x35,0x85,0x52,0x95,0x4a,0xd0,0xdf,0x65 };
  static const unsigned char md5a56[16] = {
    0x3b,0x0c,0x8a,0xc7,0x03,0xf8,0x28,0xb0,0x4c,0x6c,0x19,0x70,0x06,0xd1,0x72,0x18 };
  hash_md5(zA, 55, d);
  CHECK( memcmp(d, md5a55, 16)==0 );
  hash_md5(zA, 56, d);
  CHECK( memcmp(d, md5a56, 16)==0 );
}

static void test_hash_streams(void){
  unsigned char a[100];
  uint64_t x = 88172645463325252ull;
  for(size_t i=0; i<sizeof(a); i++){
    x ^= x<<13; x ^= x>>7; x ^= x<<17;
    a[i] = (unsigned char)x;
  }
  int nBad = 0, nRun = 0;
  for(int h=0; h<HASH_ALL; h++){
    for(size_t n=0; n<=sizeof(a); n++){
      uint64_t want = hash_bytes((hash_id)h, 7, a, n);
      for(size_t cut=0; cut<=n; cut++){
        hash_stream s;
        hash_stream_start(&s, (hash_id)h, 7, n);
        hash_stream_add(&s, a, cut);
        hash_stream_add(&s, a+cut, n-cut);
        nBad += hash_stream_end(&s)!=want;
        nRun++;
      }
      for(size_t step=1; step<=13; step++){
        hash_stream s;
        hash_stream_start(&s, (hash_id)h, 7, n);
        for(size_t i=0; i<n; i+=step){
          hash_stream_add(&s, a+i, i+step<=n ? step : n-i);
        }
        nBad += hash_stream_end(&s)!=want;
        nRun++;
      }
    }
  }
  CHECK( nRun>0 && nBad==0 );
}

/* The key rule with steps places a key where its hash puts the bytes the
** steps should make, written out by hand here (the MD5s are Python's
** hashlib.md5(...).hexdigest()), for every hash; no step allocates. */
static void test_key_steps(void){
  static char aLong[301], aNs[264];
  /* Characters as Ruby counts them: 200 "é", 40 bytes 0xff (one each),
  ** a cut "€" (two), 10 "€": 252, so shortened to 213 characters = 413
  ** bytes; 250 "é" (500 bytes) stay whole; "x\xc3" before "\xa9" and 249
  ** "é" is an "é" across two pieces: 251 characters, 213 = 425 bytes. */
  static char aWide[473], aWideOut[451], aWhole[501], aCut[502],
              aCutOut[463];
  size_t nWide = 0;
  for(int i=0; i<200; i++){ memcpy(aWide+nWide, "\xc3\xa9", 2); nWide += 2; }
  memset(aWide+nWide, 0xff, 40); nWide += 40;
  memcpy(aWide+nWide, "\xe2\x82", 2); nWide += 2;
  for(int i=0; i<10; i++){ memcpy(aWide+nWide, "\xe2\x82\xac", 3); nWide += 3; }
  memcpy(aWideOut, aWide, 413);
  memcpy(aWideOut+413, ":md5:5217df0d4250589a6973dae46ee7d3cb", 37);
  for(int i=0; i<250; i++) memcpy(aWhole+2*i, "\xc3\xa9", 2);
  memcpy(aCut, "x\xc3\xa9", 3);
  for(int i=0; i<249; i++) memcpy(aCut+3+2*i, "\xc3\xa9", 2);
  memcpy(aCutOut, aCut, 425);
  memcpy(aCutOut+425, ":md5:fca8a3b296707e2df8762c14c4d7fdd8", 37);
  memset(aLong, 'a', 300);
  memcpy(aNs, "ns:", 3);
  memset(aNs+3, 'b', 260);
  char zShortA[251], zShortNs[251];
  snprintf(zShortA, sizeof(zShortA), "%.213s:md5:%s", aLong,
           "4e5475d125a33c6190718e75adc1b704");
  snprintf(zShortNs, sizeof(zShortNs), "%.213s:md5:%s", aNs,
           "c25805d774a7cff73ba5e5884ea3f780");
  static unsigned char aCtl[1000], aCtlOut[1000];
  for(int i=0; i<1000; i++){
    aCtl[i] = (unsigned char)(i*7);
    aCtlOut[i] = aCtl[i]<=' ' ? '_' : aCtl[i];
  }
  /* a, e acute, euro sign, U+1F600 (a surrogate pair); then bad bytes: a
  ** lone continuation byte, an overlong NUL, a cut 2-byte sequence before
  ** "a", and a cut one at the end. */
  static const char zUtf8[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                              "\x80\xc0\x80\xc3" "a\xe2\x82";
  static const unsigned char aUtf16[] = {
    0x61,0, 0xe9,0, 0xac,0x20, 0x3d,0xd8, 0x00,0xde,
    0xfd,0xff, 0xfd,0xff, 0xfd,0xff, 0xfd,0xff, 0x61,0, 0xfd,0xff,
  };
  /* The same characters' low bytes (pymemcache's ord(c) & 0xff): U+1F600
  ** is 0x00, each U+FFFD 0xfd. Then 300 "€" (U+20AC, 900 bytes), past a
  ** chunk: 300 bytes 0xac. */
  static const unsigned char aLowByte[] = {
    0x61, 0xe9, 0xac, 0x00, 0xfd, 0xfd, 0xfd, 0xfd, 0x61, 0xfd,
  };
  static char aEuro[900], aEuroOut[300];
  for(int i=0; i<300; i++) memcpy(aEuro+3*i, "\xe2\x82\xac", 3);
  memset(aEuroOut, 0xac, sizeof(aEuroOut));
  const struct {
    ring_key_op op[2];
    uint32_t n[2];
    const char *text[2];
    const void *pKey; size_t nKey;    /* the key */
    const void *pWant; size_t nWant;  /* the bytes hashed */
  } aCase[] = {
    { {RING_KEY_PREFIX}, {3}, {"ns:"}, "key", 3, "ns:key", 6 },
    { {RING_KEY_SHORTEN}, {213}, {""}, aLong, 300, zShortA, 250 },
    { {RING_KEY_SHORTEN}, {213}, {""}, aLong, 250, aLong, 250 },
    { {RING_KEY_PREFIX, RING_KEY_SHORTEN}, {3, 213}, {"ns:", ""},
      aNs+3, 260, zShortNs, 250 },
    { {RING_KEY_PREFIX, RING_KEY_SHORTEN}, {3, 213}, {"ns:", ""},
      aNs+3, 247, aNs, 250 },
    { {RING_KEY_SHORTEN}, {213}, {""}, aWide, nWide, aWideOut, 450 },
    { {RING_KEY_SHORTEN}, {213}, {""}, aWhole, 500, aWhole, 500 },
    { {RING_KEY_PREFIX, RING_KEY_SHORTEN}, {2, 213}, {"x\xc3", ""},
      aCut+2, 499, aCutOut, 462 },
    { {RING_KEY_REWRITE}, {' '}, {"_"}, aCtl, 1000, aCtlOut, 1000 },
    { {RING_KEY_UTF16}, {0}, {""}, zUtf8, sizeof(zUtf8)-1, aUtf16,
      sizeof(aUtf16) },
    { {RING_KEY_UTF16}, {0}, {""}, "", 0, "", 0 },
    { {RING_KEY_LOW_BYTE}, {0}, {""}, zUtf8, sizeof(zUtf8)-1, aLowByte,
      sizeof(aLowByte) },
    { {RING_KEY_LOW_BYTE}, {0}, {""}, aEuro, sizeof(aEuro), aEuroOut,
      sizeof(aEuroOut) },
    { {RING_KEY_PREFIX, RING_KEY_LOW_BYTE}, {5, 0}, {"caf\xc3\xa9", ""},
      "-x", 2, "caf\xe9-x", 6 },
    { {RING_KEY_TRUNCATE}, {250}, {""}, aLong, 300, aLong, 250 },
    { {RING_KEY_TRUNCATE}, {250}, {""}, aLong, 250, aLong, 250 },
    { {RING_KEY_TRUNCATE}, {250}, {""}, aLong, 7, aLong, 7 },
    { {RING_KEY_PREFIX, RING_KEY_TRUNCATE}, {3, 250}, {"ns:", ""},
      aNs+3, 260, aNs, 250 },
    { {RING_KEY_TRUNCATE, RING_KEY_REWRITE}, {250, ' '}, {"", "_"},
      aCtl, 1000, aCtlOut, 250 },
  };
  int nLiveBefore = nLive;
  ring_set_allocator(test_malloc, test_free);
  nUntilFail = 0;                      /* any allocation fails */
  for(size_t c=0; c<sizeof(aCase)/sizeof(aCase[0]); c++){
    for(int h=0; h<HASH_COUNT; h++){
      ring_keys k;
      ring_keys_init(&k, (hash_id)h, 99);
      for(int j=0; j<2 && aCase[c].op[j]; j++){
        CHECK( ring_keys_add_step(&k, aCase[c].op[j], aCase[c].n[j],
                                  aCase[c].text[j],
                                  strlen(aCase[c].text[j]))==0 );
      }
      uint64_t want = hash_bytes((hash_id)h, hash_has_seed((hash_id)h) ? 99 : 0,
                                 aCase[c].pWant, aCase[c].nWant);
      if( ring_keys_place(&k, aCase[c].pKey, aCase[c].nKey)!=want ){
        CHECK( !"key steps" );
        printf("  case %zu, hash %s\n", c, hash_name((hash_id)h));
      }
    }
  }
  nUntilFail = -1;
  ring_set_allocator(malloc, free);
  CHECK( nLive==nLiveBefore );

  /* The big-endian units of "a\xc3\xa9" are 00 61 00 e9. */
  ring_keys k;
  ring_keys_init(&k, HASH_XXH3, 0);
  CHECK( ring_keys_add_step(&k, RING_KEY_UTF16, 1, NULL, 0)==0 );
  CHECK( ring_keys_place(&k, "a\xc3\xa9", 3)
         ==hash_bytes(HASH_XXH3, 0, "\x00\x61\x00\xe9", 4) );
  /* The hash tag comes first, then the steps. */
  memcpy(k.tag, "{}", 3);
  CHECK( ring_keys_place(&k, "x{a}y", 5)==hash_bytes(HASH_XXH3, 0, "\x00\x61", 2) );
  /* A rule holds RING_KEY_MAX_STEPS steps of RING_KEY_MAX_TEXT bytes. */
  ring_keys_init(&k, HASH_XXH3, 0);
  char zBig[RING_KEY_MAX_TEXT + 1];
  memset(zBig, 'p', sizeof(zBig));
  CHECK( ring_keys_add_step(&k, RING_KEY_PREFIX, sizeof(zBig), zBig, sizeof(zBig))==1 );
  for(int i=0; i<RING_KEY_MAX_STEPS; i++){
    CHECK( ring_keys_add_step(&k, RING_KEY_PREFIX, 1, "p", 1)==0 );
  }
  CHECK( ring_keys_add_step(&k, RING_KEY_PREFIX, 1, "p", 1)==1 );
  CHECK( ring_keys_place(&k, "k", 1)==hash_bytes(HASH_XXH3, 0, "ppppk", 5) );
}

static uint64_t finish_plus_one(const ring_keys *k, uint64_t h){
  return h + 1 + k->finish_arg;
}

/* ring_keys_same and ring_keys_differ see every part of the rule. */
static void test_keys_compare(void){
  ring_keys a, b;
  char z[300];
  ring_keys_init(&a, HASH_XXH3, 0);
  a.finish_by = "ring";
  b = a;
  CHECK( ring_keys_same(&a, &b) && ring_keys_differ(&a, &b, z, sizeof(z))[0]==0 );
  ring_keys_init(&b, HASH_MD5, 5);          /* md5 takes no seed */
  b.finish_by = "ketama";
  CHECK( b.seed==0 && !ring_keys_same(&a, &b) );
  CHECK( strcmp(ring_keys_differ(&b, &a, z, sizeof(z)),
                "the rings hash keys differently (md5, xxh3 seed 0)")==0 );
  b = a;
  b.seed = 3;
  CHECK( !ring_keys_same(&a, &b) && has(ring_keys_differ(&a, &b, z, sizeof(z)), "(xxh3 seed 0, xxh3 seed 3)") );
  b = a;
  memcpy(b.tag, "{}", 3);
  CHECK( !ring_keys_same(&a, &b) && has(ring_keys_differ(&a, &b, z, sizeof(z)), "(no hash_tag, hash_tag '{}')") );
  b = a;
  ring_keys_add_step(&b, RING_KEY_PREFIX, 3, "ns:", 3);
  ring_keys_add_step(&b, RING_KEY_SHORTEN, 250, NULL, 0);
  CHECK( !ring_keys_same(&a, &b) && has(ring_keys_differ(&a, &b, z, sizeof(z)), "(no key steps, prefix 'ns:', shorten 250)") );
  ring_keys c = a;
  ring_keys_add_step(&c, RING_KEY_PREFIX, 3, "ns;", 3);
  ring_keys_add_step(&c, RING_KEY_SHORTEN, 250, NULL, 0);
  CHECK( !ring_keys_same(&b, &c) && has(ring_keys_differ(&b, &c, z, sizeof(z)), "(prefix 'ns:', shorten 250, prefix 'ns;', shorten 250)") );
  c = b;
  CHECK( ring_keys_same(&b, &c) );
  b = a;
  b.finish = finish_plus_one;
  b.finish_by = "haproxy";
  b.finish_option = "avalanche";
  CHECK( !ring_keys_same(&a, &b) && strcmp(ring_keys_differ(&b, &a, z, sizeof(z)), "algorithm haproxy and algorithm ring hash keys differently")==0 );
  CHECK( ring_keys_place(&b, "k", 1)==hash_bytes(HASH_XXH3, 0, "k", 1) + 1 );
  c = b;
  c.finish_arg = 1;
  CHECK( !ring_keys_same(&b, &c) && has(ring_keys_differ(&b, &c, z, sizeof(z)), "(avalanche 0, avalanche 1)") );
}

static void test_labels(void){
  char zErr[300];
  CHECK( ring_label_check("%s#%d", zErr, sizeof(zErr))==0 );
  CHECK( ring_label_check("%d%s", zErr, sizeof(zErr))==0 );
  CHECK( ring_label_check("100%% %s (%d)", zErr, sizeof(zErr))==0 );
  CHECK( ring_label_check("%d", zErr, sizeof(zErr))==1 && has(zErr, "has no %s") );
  CHECK( ring_label_check("x%s", zErr, sizeof(zErr))==1 && has(zErr, "has no %d") );
  CHECK( ring_label_check("%s%s%d", zErr, sizeof(zErr))==1
         && has(zErr, "has %s more than once") );
  CHECK( ring_label_check("%d-%s-%d", zErr, sizeof(zErr))==1
         && has(zErr, "has %d more than once") );
  CHECK( ring_label_check("%s%d%", zErr, sizeof(zErr))==1 && has(zErr, "lone %") );
  CHECK( ring_label_check("%s%u", zErr, sizeof(zErr))==1 && has(zErr, "has %u;") );
  CHECK( ring_label_check("%s%d%\xc3\xa9", zErr, sizeof(zErr))==1
         && has(zErr, "has %\xc3\xa9;") );
  char zLong[RING_MAX_LABEL + 2];
  memset(zLong, 'x', sizeof(zLong));
  memcpy(zLong, "%s%d", 4);
  zLong[RING_MAX_LABEL + 1] = 0;
  CHECK( ring_label_check(zLong, zErr, sizeof(zErr))==1 && has(zErr, "101 bytes is longer than a label may be (100 bytes)") );
  zLong[RING_MAX_LABEL] = 0;
  CHECK( ring_label_check(zLong, zErr, sizeof(zErr))==0 );

  /* label "%s:%d", first 0, md5be: the worked example of tests/gen/ownring.test
  ** (MD5("A:0") = 57e1e221..., MD5("B:1") = 0ec9e687...); groupcache's
  ** "%d%s", first 0, crc32a. */
  ring_config cfg;
  ring_config_default(&cfg);
  char zOpt[OPTION_MAX_TEXT];
  CHECK( strcmp(unit_option_text(&cfg, "label", zOpt, sizeof(zOpt)), "%s#%d")==0 );
  CHECK( strcmp(unit_option_text(&cfg, "first", zOpt, sizeof(zOpt)), "1")==0 );
  CHECK( strcmp(unit_option_text(&cfg, "ties", zOpt, sizeof(zOpt)), "name")==0 );
  cfg.hash = HASH_MD5BE;
  unit_set_option(&cfg, "label", "%s:%d");
  unit_set_option(&cfg, "first", "0");
  cfg.vnodes = 2;
  ring_input in[] = { {.name = "B", .name_len = 1, .weight = 1.0, .id = 1},
                      {.name = "A", .name_len = 1, .weight = 1.0, .id = 2} };
  ring *r = NULL;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_OK );
  if( r ){
    CHECK( r->n_points==4 );
    CHECK( r->positions[0]==0x0ec9e687u && strcmp(r->nodes[r->owners[0]].name, "B")==0 );
    CHECK( r->positions[3]==0x57e1e221u && strcmp(r->nodes[r->owners[3]].name, "A")==0 );
  }
  ring_release(r);
  ring_input gc[] = { {.name = "http://10.0.0.1:8080", .name_len = 20,
                       .weight = 1.0, .id = 1} };
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name("groupcache"));
  CHECK( options_check(&cfg, OPTION_ALGORITHM, zErr, sizeof(zErr))==0 );
  CHECK( cfg.vnodes==50 && cfg.hash==HASH_CRC32A );
  r = NULL;
  CHECK( ring_build(&cfg, gc, 1, &r, zErr, sizeof(zErr))==RING_OK );
  int found = 0;
  for(uint32_t i=0; r && i<r->n_points; i++) found += r->positions[i]==2090179191u;
  CHECK( r && r->n_points==50 && found==1 );
  ring_release(r);
}

static void test_points(void){
  ring_config cfg;
  ring_config_default(&cfg);
  CHECK( cfg.algo==ring_algorithm_from_name("ring") && cfg.hash==HASH_XXH3 );
  CHECK( cfg.vnodes==160 && cfg.seed==0 );

  CHECK( ring_point_budget(&cfg, 1.0)==160 );
  CHECK( ring_point_budget(&cfg, 0.5)==80 );
  CHECK( ring_point_budget(&cfg, 2.5)==400 );
  CHECK( ring_point_budget(&cfg, 1e-9)==1 );           /* at least 1 */

  /* Half away from zero, not to even. */
  cfg.vnodes = 3;
  CHECK( ring_point_budget(&cfg, 0.5)==2 );            /* 1.5 -> 2 */
  CHECK( ring_point_budget(&cfg, 1.5)==5 );            /* 4.5 -> 5 */
  cfg.vnodes = 1;
  CHECK( ring_point_budget(&cfg, 2.5)==3 );
  CHECK( ring_point_budget(&cfg, 0.5)==1 );            /* 0.5 -> 1 */
  CHECK( ring_point_budget(&cfg, 0.49)==1 );           /* 0 -> at least 1 */
  CHECK( ring_point_budget(&cfg, 2.49)==2 );
  cfg.vnodes = 5;
  CHECK( ring_point_budget(&cfg, 0.3)==2 );            /* 5*0.3 is 1.5 in doubles */

  /* Weights that are not positive finite numbers up to RING_MAX_WEIGHT. */
  CHECK( ring_point_budget(&cfg, 0.0)==-1 );
  CHECK( ring_point_budget(&cfg, -0.0)==-1 );
  CHECK( ring_point_budget(&cfg, -1.0)==-1 );
  CHECK( ring_point_budget(&cfg, NAN)==-1 );
  CHECK( ring_point_budget(&cfg, INFINITY)==-1 );
  CHECK( ring_point_budget(&cfg, nextafter(RING_MAX_WEIGHT, INFINITY))==-1 );

  /* The points limit: RING_MAX_POINTS is fine, one more is over. */
  cfg.vnodes = 1;
  CHECK( ring_point_budget(&cfg, RING_MAX_POINTS)==RING_MAX_POINTS );
  CHECK( ring_point_budget(&cfg, RING_MAX_POINTS+1.0)==RING_MAX_POINTS+1 );
  CHECK( ring_point_budget(&cfg, RING_MAX_WEIGHT)==(int64_t)RING_MAX_WEIGHT );
  cfg.vnodes = RING_MAX_VNODES;     /* the largest count: 1e14, exact */
  CHECK( ring_point_budget(&cfg, RING_MAX_WEIGHT)==(int64_t)1e14 );

  /* modn has no points, but still checks the weight. */
  options_set_algorithm(&cfg, ring_algorithm_from_name("modn"));
  CHECK( ring_point_budget(&cfg, 1.0)==0 );
  CHECK( ring_point_budget(&cfg, -1.0)==-1 );
}

static void test_names(void){
  char big[RING_MAX_NAME+1];
  memset(big, 'x', sizeof(big));

  CHECK( ring_check_name("a", 1)==NULL );
  CHECK( ring_check_name("caf\xc3\xa9", 5)==NULL );               /* é */
  CHECK( ring_check_name("\xe6\x97\xa5", 3)==NULL );              /* 日 */
  CHECK( ring_check_name("\xf0\x9f\x98\x80", 4)==NULL );          /* U+1F600 */
  CHECK( ring_check_name("\xf4\x8f\xbf\xbf", 4)==NULL );          /* U+10FFFF */
  CHECK( ring_check_name(big, RING_MAX_NAME)==NULL );             /* 1024 bytes */

  CHECK( has(ring_check_name("", 0), "empty") );
  CHECK( has(ring_check_name(big, RING_MAX_NAME+1), "longer than 1024") );
  CHECK( has(ring_check_name("a\0b", 3), "NUL") );
  CHECK( has(ring_check_name("\0", 1), "NUL") );
  CHECK( has(ring_check_name("\xff", 1), "UTF-8") );
  CHECK( has(ring_check_name("\x80", 1), "UTF-8") );              /* lone continuation */
  CHECK( has(ring_check_name("\xc3", 1), "UTF-8") );              /* truncated */
  CHECK( has(ring_check_name("\xe6\x97", 2), "UTF-8") );          /* truncated */
  CHECK( has(ring_check_name("\xc3(", 2), "UTF-8") );             /* bad continuation */
  CHECK( has(ring_check_name("\xc0\x80", 2), "UTF-8") );          /* overlong NUL */
  CHECK( has(ring_check_name("\xe0\x80\xaf", 3), "UTF-8") );      /* overlong '/' */
  CHECK( has(ring_check_name("\xf0\x80\x80\xaf", 4), "UTF-8") );  /* overlong '/' */
  CHECK( has(ring_check_name("\xed\xa0\x80", 3), "UTF-8") );      /* U+D800 */
  CHECK( has(ring_check_name("\xed\xbf\xbf", 3), "UTF-8") );      /* U+DFFF */
  CHECK( has(ring_check_name("\xf4\x90\x80\x80", 4), "UTF-8") );  /* > U+10FFFF */
  CHECK( has(ring_check_name("\xf8\x88\x80\x80\x80", 5), "UTF-8") ); /* 5 bytes */
}

/*
** Nodes a, b, c with vnodes 1 under xxh3 seed 0 (positions from Python):
**   a#1 = 0x148be4e168a1bf8c, c#1 = 0xf0d45fb9fe8e37eb, b#1 = 0xf4d306ca48e145b0
** so the ring is a, c, b; a owns the wrap-around.
*/
static void test_lookup_built(void){
  ring_config cfg;
  ring_config_default(&cfg);
  cfg.vnodes = 1;
  char zErr[200];
  const char *azName[] = {"c", "a", "b"};
  ring *r = build(&cfg, azName, 3, zErr, sizeof(zErr));
  CHECK( r!=NULL );
  if( r==NULL ) return;

  CHECK( r->n_nodes==3 && r->n_points==3 );
  CHECK( strcmp(r->nodes[0].name, "a")==0 && strcmp(r->nodes[2].name, "c")==0 );
  const uint64_t pa = 0x148be4e168a1bf8cULL;
  const uint64_t pc = 0xf0d45fb9fe8e37ebULL;
  const uint64_t pb = 0xf4d306ca48e145b0ULL;
  CHECK( r->positions[0]==pa && r->positions[1]==pc && r->positions[2]==pb );
  CHECK( r->owners[0]==0 && r->owners[1]==2 && r->owners[2]==1 );

  CHECK( ring_lookup(r, pa)==0 );       /* exactly at a point */
  CHECK( ring_lookup(r, pa-1)==0 );     /* one below */
  CHECK( ring_lookup(r, pa+1)==2 );     /* one above: the next point, c */
  CHECK( ring_lookup(r, pc)==2 );
  CHECK( ring_lookup(r, pc+1)==1 );
  CHECK( ring_lookup(r, pb)==1 );
  CHECK( ring_lookup(r, pb+1)==0 );     /* past the last point: wraps to a */
  CHECK( ring_lookup(r, 0)==0 );
  CHECK( ring_lookup(r, UINT64_MAX)==0 );

  /* Shares, worked out with integers in Python:
  **   a: 2^64 - pb + pa = 2285821001788848604, b: pb - pc, c: pc - pa. */
  CHECK( fabs(r->nodes[0].share - 2285821001788848604.0/18446744073709551616.0) < 1e-16 );
  CHECK( fabs(r->nodes[1].share - 287851114606562757.0/18446744073709551616.0) < 1e-16 );
  CHECK( fabs(r->nodes[2].share - 15873071957314140255.0/18446744073709551616.0) < 1e-16 );
  CHECK( fabs(r->nodes[0].share + r->nodes[1].share + r->nodes[2].share - 1.0) < 1e-15 );

  CHECK( ring_find_node(r, "b", 1)==1 );
  CHECK( ring_find_node(r, "bb", 2)==-1 );
  CHECK( ring_find_node(r, "", 0)==-1 );
  CHECK( ring_find_node(r, "c", 1)==2 );
  ring_release(r);
}

/* Make r a hand-made ring of the n points at aPos owned by aOwn, with the
** lookup index built if bIndex (else ring_lookup searches), without the
** owner table its lookups made (a small ring's, ring_index.c). */
static void set_points(ring *r, uint64_t *aPos, uint32_t *aOwn, uint32_t n,
                       int bIndex){
  ring_dealloc(r->index);
  ring_dealloc(r->owner_table);
  r->index = NULL;
  r->owner_table = NULL;
  r->owner_due = 0;
  r->n_points = n;
  r->positions = aPos;
  r->owners = aOwn;
  if( bIndex ) CHECK( ring_index_build(r)==RING_OK );
}

/*
** ring_lookup on hand-made rings, by binary search and through the index:
** equal positions (the build orders them by name, then replica; the lookup
** must take the first), and points at 0 and UINT64_MAX.
*/
static void test_lookup_edges(int bIndex){
  ring r;
  memset(&r, 0, sizeof(r));
  ring_config_default(&r.config);

  uint64_t aPos1[] = {10, 20, 20, 30};
  uint32_t aOwn1[] = {0, 1, 2, 3};
  set_points(&r, aPos1, aOwn1, 4, bIndex);
  CHECK( ring_lookup(&r, 0)==0 );
  CHECK( ring_lookup(&r, 10)==0 );
  CHECK( ring_lookup(&r, 11)==1 );
  CHECK( ring_lookup(&r, 20)==1 );      /* the first of the tied points */
  CHECK( ring_lookup(&r, 21)==3 );
  CHECK( ring_lookup(&r, 30)==3 );
  CHECK( ring_lookup(&r, 31)==0 );
  CHECK( ring_lookup(&r, UINT64_MAX)==0 );

  uint64_t aPos2[] = {0, UINT64_MAX};
  uint32_t aOwn2[] = {5, 7};
  set_points(&r, aPos2, aOwn2, 2, bIndex);
  CHECK( ring_lookup(&r, 0)==5 );
  CHECK( ring_lookup(&r, 1)==7 );
  CHECK( ring_lookup(&r, UINT64_MAX-1)==7 );
  CHECK( ring_lookup(&r, UINT64_MAX)==7 );

  uint64_t aPos3[] = {42};
  uint32_t aOwn3[] = {0};
  set_points(&r, aPos3, aOwn3, 1, bIndex);
  CHECK( ring_lookup(&r, 0)==0 && ring_lookup(&r, 43)==0 && ring_lookup(&r, UINT64_MAX)==0 );

  uint64_t aPos4[] = {0, 0, 0, 0, 0, 7, UINT64_MAX, UINT64_MAX};
  uint32_t aOwn4[] = {1, 2, 3, 4, 5, 6, 7, 8};
  set_points(&r, aPos4, aOwn4, 8, bIndex);
  CHECK( ring_lookup(&r, 0)==1 );                   /* five tied at 0 */
  CHECK( ring_lookup(&r, 1)==6 && ring_lookup(&r, 7)==6 );
  CHECK( ring_lookup(&r, 8)==7 && ring_lookup(&r, UINT64_MAX)==7 );
  set_points(&r, NULL, NULL, 0, 0);

  /* modn: position mod n, no points needed. */
  uint32_t aSlot[3] = {0, 1, 2};
  options_set_algorithm(&r.config, ring_algorithm_from_name("modn"));
  r.n_nodes = 3;
  r.n_units = 3;
  r.unit_owners = aSlot;
  CHECK( ring_lookup(&r, 0)==0 && ring_lookup(&r, 5)==2 );
  CHECK( ring_lookup(&r, UINT64_MAX)==0 );   /* 2^64-1 = 3 * 6148914691236517205 */
}

static int same_ring(const ring *a, const ring *b){
  if( a->n_nodes!=b->n_nodes || a->n_points!=b->n_points ) return 0;
  for(uint32_t i=0; i<a->n_nodes; i++){
    if( strcmp(a->nodes[i].name, b->nodes[i].name)!=0 ) return 0;
    if( a->nodes[i].share!=b->nodes[i].share ) return 0;
  }
  return memcmp(a->positions, b->positions, a->n_points*sizeof(uint64_t))==0
      && memcmp(a->owners, b->owners, a->n_points*sizeof(uint32_t))==0;
}

static void test_build(void){
  ring_config cfg;
  ring_config_default(&cfg);
  char zErr[200];

  /* The input order does not matter. */
  const char *az1[] = {"n1", "n2", "n3", "n4", "n5"};
  const char *az2[] = {"n4", "n2", "n5", "n1", "n3"};
  ring *r1 = build(&cfg, az1, 5, zErr, sizeof(zErr));
  ring *r2 = build(&cfg, az2, 5, zErr, sizeof(zErr));
  CHECK( r1 && r2 && same_ring(r1, r2) );
  if( r1 ){
    CHECK( r1->n_points==5*160 );
    int sorted = 1;
    double sum = 0;
    for(uint32_t i=1; i<r1->n_points; i++) sorted &= r1->positions[i-1]<=r1->positions[i];
    for(uint32_t i=0; i<r1->n_nodes; i++) sum += r1->nodes[i].share;
    CHECK( sorted );
    CHECK( fabs(sum-1.0) < 1e-15 );
    CHECK( r1->version==-1 && r1->refs==1 );
  }
  ring_release(r1);
  ring_release(r2);

  /* A one-node ring owns everything, exactly. */
  const char *azOne[] = {"only"};
  ring *r = build(&cfg, azOne, 1, zErr, sizeof(zErr));
  CHECK( r && r->nodes[0].share==1.0 && r->nodes[0].points==160 );
  if( r ){
    ring_retain(r);
    CHECK( r->refs==2 );
    ring_release(r);
  }
  ring_release(r);

  /* modn: weights ignored, shares of 2^64 split as evenly as integers allow. */
  options_set_algorithm(&cfg, ring_algorithm_from_name("modn"));
  const char *az3[] = {"c", "b", "a"};
  r = build(&cfg, az3, 3, zErr, sizeof(zErr));
  CHECK( r && r->n_points==0 && r->nodes[0].points==0 );
  if( r ){
    for(int i=0; i<3; i++) CHECK( fabs(r->nodes[i].share - 1.0/3) < 1e-16 );
    CHECK( strcmp(r->nodes[0].name, "a")==0 );
  }
  ring_release(r);
  ring_config_default(&cfg);

  /* Errors. */
  const char *azDup[] = {"b", "a", "b"};
  CHECK( build(&cfg, azDup, 3, zErr, sizeof(zErr))==NULL );
  CHECK( has(zErr, "duplicate node: 'b'") );
  const char *azEmpty[] = {"a", ""};
  CHECK( build(&cfg, azEmpty, 2, zErr, sizeof(zErr))==NULL );
  CHECK( has(zErr, "empty") );

  ring_input aIn[2] = {{.name = "a", .name_len = 1, .weight = 1.0},
                       {.name = "b", .name_len = 1, .weight = 0.0}};
  r = NULL;
  CHECK( ring_build(&cfg, aIn, 2, &r, zErr, sizeof(zErr))==RING_INVALID && r==NULL );
  CHECK( has(zErr, "weight of node 'b'") );
  aIn[1].weight = NAN;
  CHECK( ring_build(&cfg, aIn, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "positive finite") );

  /* Too many points: one node over the limit, and two that are fine alone
  ** (10,000,000 points each) but not together. */
  cfg.vnodes = RING_MAX_VNODES;
  aIn[0].weight = 200;
  aIn[1].weight = 1;
  CHECK( ring_build(&cfg, aIn, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "too many points") );
  aIn[0].weight = 100;
  aIn[1].weight = 100;
  CHECK( ring_build(&cfg, aIn, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "too many points") );
  CHECK( ring_build(&cfg, aIn, RING_MAX_NODES+1, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "too many nodes") );

  /* An empty ring builds (a table with no nodes yet). */
  ring_config_default(&cfg);
  CHECK( ring_build(&cfg, aIn, 0, &r, zErr, sizeof(zErr))==RING_OK && r && r->n_nodes==0 );
  ring_release(r);
}

/* Every allocation failure is reported as RING_NOMEM and leaks nothing. */
static void test_nomem(void){
  ring_config cfg;
  ring_config_default(&cfg);
  char zErr[200];
  ring_input aIn[2] = {{.name = "a", .name_len = 1, .weight = 1.0},
                       {.name = "b", .name_len = 1, .weight = 2.0}};
  ring_set_allocator(test_malloc, test_free);
  int nFailures = 0;
  for(int n=0; ; n++){
    ring *r = NULL;
    nUntilFail = n;
    int rc = ring_build(&cfg, aIn, 2, &r, zErr, sizeof(zErr));
    nUntilFail = -1;
    if( rc==RING_OK ){
      ring_release(r);
      break;
    }
    nFailures += rc==RING_NOMEM && r==NULL;
    CHECK( rc==RING_NOMEM && r==NULL );
    CHECK( nLive==0 );
  }
  CHECK( nFailures>0 );
  CHECK( nLive==0 );
  ring_set_allocator(malloc, free);
}

/* SQLite's allocator aligns to 8 bytes only: build rings with one that
** gives exactly that (under UBSan, a 16-byte access to it is reported). */
static void *malloc_align8(size_t n){
  char *p = malloc(n + 16);
  if( p==NULL ) return NULL;
  int off = ((uintptr_t)p & 15)==0 ? 8 : 16;   /* so p+off is 8 mod 16 */
  p[off-1] = (char)off;
  return p + off;
}

static void free_align8(void *p){
  if( p ) free((char *)p - ((char *)p)[-1]);
}

static void test_align8(void){
  ring_config cfg;
  ring_config_default(&cfg);
  char zErr[200];
  const char *azName[] = {"a", "b", "c"};
  ring_set_allocator(malloc_align8, free_align8);
  ring *r = build(&cfg, azName, 3, zErr, sizeof(zErr));
  CHECK( r!=NULL );
  if( r ){
    double sum = r->nodes[0].share + r->nodes[1].share + r->nodes[2].share;
    CHECK( fabs(sum-1.0) < 1e-15 );
  }
  ring_release(r);
  ring_set_allocator(malloc, free);
}

static void test_options(void){
  ring_config cfg;
  options_given g;
  memset(&g, 0, sizeof(g));
  char zErr[200];
  ring_config_default(&cfg);

  CHECK( options_set(&cfg, &g, "vnodes", "3", zErr, sizeof(zErr))==0 && cfg.vnodes==3 );
  CHECK( options_set(&cfg, &g, "HASH", "XXH64", zErr, sizeof(zErr))==0 && cfg.hash==HASH_XXH64 );
  CHECK( options_set(&cfg, &g, "seed", "18446744073709551615", zErr, sizeof(zErr))==0 );
  CHECK( cfg.seed==UINT64_MAX );
  CHECK( options_set(&cfg, &g, "algorithm", "Ring", zErr, sizeof(zErr))==0 );
  CHECK( g.set==(OPTION_ALGORITHM|OPTION_HASH|OPTION_VNODES|OPTION_SEED) );
  CHECK( options_check(&cfg, g.set, zErr, sizeof(zErr))==0 );

  CHECK( options_set(&cfg, &g, "vnodes", "4", zErr, sizeof(zErr))==1 );
  CHECK( has(zErr, "vnodes is given more than once") );
  CHECK( options_set(&cfg, &g, "color", "red", zErr, sizeof(zErr))==1 );
  CHECK( has(zErr, "unknown option 'color'; accepted: algorithm, hash, vnodes, seed") );

  /* Bad values name the option and say what is accepted. */
  static const char *azBadVnodes[] = {"0", "100001", "-1", "1.5", "abc", "", " 3", "3x",
                                      "99999999999999999999999"};
  for(size_t i=0; i<sizeof(azBadVnodes)/sizeof(azBadVnodes[0]); i++){
    memset(&g, 0, sizeof(g));
    CHECK( options_set(&cfg, &g, "vnodes", azBadVnodes[i], zErr, sizeof(zErr))==1 );
    CHECK( has(zErr, "vnodes:") && has(zErr, "from 1 to 100000") );
  }
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "vnodes", "100000", zErr, sizeof(zErr))==0 && cfg.vnodes==100000 );
  static const char *azBadSeed[] = {"-1", "18446744073709551616", "99999999999999999999",
                                    "1e3", "0x10", ""};
  for(size_t i=0; i<sizeof(azBadSeed)/sizeof(azBadSeed[0]); i++){
    memset(&g, 0, sizeof(g));
    CHECK( options_set(&cfg, &g, "seed", azBadSeed[i], zErr, sizeof(zErr))==1 );
    CHECK( has(zErr, "seed:") && has(zErr, "18446744073709551615") );
  }
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "seed", "0", zErr, sizeof(zErr))==0 && cfg.seed==0 );
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "algorithm", "ketamax", zErr, sizeof(zErr))==1 );
  CHECK( has(zErr, "algorithm: unknown value 'ketamax'; accepted: ring, ketama, "
                   "jump, rendezvous, maglev, modn") );
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "hash", "sha1", zErr, sizeof(zErr))==1 );
  CHECK( has(zErr, "hash: unknown value 'sha1'; accepted: xxh3, xxh64, md5, ") );

  /* vnodes does not apply to modn; modn alone is fine. */
  ring_config_default(&cfg);
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "algorithm", "modn", zErr, sizeof(zErr))==0 );
  CHECK( options_check(&cfg, g.set, zErr, sizeof(zErr))==0 );
  CHECK( options_set(&cfg, &g, "vnodes", "10", zErr, sizeof(zErr))==0 );
  CHECK( options_check(&cfg, g.set, zErr, sizeof(zErr))==1 && has(zErr, "vnodes does not apply") );

  /* What a ring table stores: every option of format 1, with the seed as
  ** text (it does not fit SQLite's integers). */
  char buf[OPTION_MAX_TEXT];
  const char *zKey;
  int bStore, bInteger, nStored = 0;
  ring_config_default(&cfg);
  cfg.seed = UINT64_MAX;
  for(int i=0; options_stored(&cfg, i, &zKey, buf, sizeof(buf), &bStore,
                              &bInteger); i++){
    if( strcmp(zKey, "seed")==0 ){
      CHECK( strcmp(buf, "18446744073709551615")==0 && bStore && !bInteger );
    }
    if( strcmp(zKey, "vnodes")==0 ) CHECK( strcmp(buf, "160")==0 && bInteger );
    nStored += bStore;
  }
  CHECK( nStored==5 );

  /* An algorithm's own option may come before algorithm=, is checked by
  ** its algorithm's declaration, and is refused where it does not apply. */
  ring_config_default(&cfg);
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "table", "4", zErr, sizeof(zErr))==1 );
  CHECK( strcmp(zErr, "table: '4' is not a prime from 2 to 16777213 (maglev tables have a prime size, e.g. 65537)")==0 );
  CHECK( options_set(&cfg, &g, "TABLE", "7", zErr, sizeof(zErr))==0 );
  CHECK( options_set(&cfg, &g, "table", "11", zErr, sizeof(zErr))==1 && has(zErr, "option table is given more than once") );
  CHECK( options_set(&cfg, &g, "algorithm", "maglev", zErr, sizeof(zErr))==0 );
  CHECK( options_finish(&cfg, &g, zErr, sizeof(zErr))==0 );
  CHECK( strcmp(unit_option_text(&cfg, "table", buf, sizeof(buf)), "7")==0 );
  CHECK( cfg.hash==HASH_XXH64 );
  ring_config_default(&cfg);
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "avalanche", "0", zErr, sizeof(zErr))==0 );
  CHECK( options_finish(&cfg, &g, zErr, sizeof(zErr))==1 );
  CHECK( strcmp(zErr, "avalanche does not apply to algorithm ring (it is HAProxy's mixing of key hashes; algorithms that take it: haproxy)")==0 );
  /* ... but a stored one is read and not used (chash once stored table
  ** for every ring), and rings of other algorithms store table's default. */
  CHECK( options_load(&cfg, &g, zErr, sizeof(zErr))==0 );
  CHECK( strcmp(unit_option_text(&cfg, "table", buf, sizeof(buf)), "65537")==0 );
  CHECK( strcmp(unit_option_text(&cfg, "avalanche", buf, sizeof(buf)), "")==0 );
  CHECK( options_set(&cfg, &g, "label", "%s", zErr, sizeof(zErr))==1 && has(zErr, "label:") );
  CHECK( options_set(&cfg, &g, "ties", "Last", zErr, sizeof(zErr))==0 );
  CHECK( options_set(&cfg, &g, "first", "2", zErr, sizeof(zErr))==1 );
  CHECK( strcmp(zErr, "first: '2' is not 0 or 1 (the index of a node's first point)")==0 );
  CHECK( options_finish(&cfg, &g, zErr, sizeof(zErr))==1 && has(zErr, "avalanche does not apply") );
  options_set_algorithm(&cfg, ring_algorithm_from_name("ring"));
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "ties", "bogus", zErr, sizeof(zErr))==1 );
  CHECK( strcmp(zErr, "ties: unknown value 'bogus'; accepted: name, first, last")==0 );
  CHECK( has(options_names(buf, sizeof(buf)), "algorithm, hash, vnodes, seed, hash_tag, label, first, ties, table, avalanche, min_ring, max_ring") );
  CHECK( strcmp(options_takers("vnodes", buf, sizeof(buf)), "ring, ketama, hashring, dubbo, groupcache, uhashring, uhashring_ketama")==0 );
  CHECK( strcmp(options_takers("min_ring", buf, sizeof(buf)), "envoy_ring")==0 );

  /* A seed given as 0 is the default, which hashes without a seed have
  ** too; any other seed is refused for them. */
  ring_config_default(&cfg);
  memset(&g, 0, sizeof(g));
  CHECK( options_set(&cfg, &g, "hash", "md5", zErr, sizeof(zErr))==0 );
  CHECK( options_set(&cfg, &g, "seed", "0", zErr, sizeof(zErr))==0 );
  CHECK( options_finish(&cfg, &g, zErr, sizeof(zErr))==0 );
  CHECK( options_set(&cfg, &g, "vnodes", "9", zErr, sizeof(zErr))==0 );
  cfg.seed = 1;
  CHECK( options_finish(&cfg, &g, zErr, sizeof(zErr))==1 && has(zErr, "seed does not apply to hash md5") );
}

static void test_split(void){
  char *zKey, *zValue;
  char a1[] = "  vnodes = 3 ";
  CHECK( options_split(a1, &zKey, &zValue)==0 && strcmp(zKey, "vnodes")==0
         && strcmp(zValue, "3")==0 );
  char a2[] = "hash='xxh64'";
  CHECK( options_split(a2, &zKey, &zValue)==0 && strcmp(zValue, "xxh64")==0 );
  char a3[] = "k='it''s'";
  CHECK( options_split(a3, &zKey, &zValue)==0 && strcmp(zValue, "it's")==0 );
  char a4[] = "k=\"x\"";
  CHECK( options_split(a4, &zKey, &zValue)==0 && strcmp(zValue, "x")==0 );
  char a5[] = "k=`x`";
  CHECK( options_split(a5, &zKey, &zValue)==0 && strcmp(zValue, "x")==0 );
  char b1[] = "vnodes";
  CHECK( options_split(b1, &zKey, &zValue)==1 );
  char b2[] = "=3";
  CHECK( options_split(b2, &zKey, &zValue)==1 );
  char b3[] = "k=";
  CHECK( options_split(b3, &zKey, &zValue)==1 );
  char b4[] = "k=''";
  CHECK( options_split(b4, &zKey, &zValue)==1 );
}

static void test_algorithms(void){
  CHECK( ring_algorithm_from_name("ring")==ring_algos[0] );
  CHECK( strcmp(ring_algorithm_from_name("MODN")->name, "modn")==0 );
  CHECK( strcmp(ring_algorithm_name(ring_algorithm_from_name("jump")), "jump")==0 );
  CHECK( ring_algorithm_from_name("hrw")==NULL );
  /* The list in messages is the registry's, in its order. */
  char zList[400], zWant[400] = "";
  for(int i=0; ring_algos[i]; i++){
    if( i ) strcat(zWant, ", ");
    strcat(zWant, ring_algos[i]->name);
  }
  CHECK( strcmp(ring_algorithm_list(zList, sizeof(zList)), zWant)==0 );
  CHECK( strncmp(zList, "ring, ketama, jump, rendezvous, maglev, modn", 44)==0 );
}

/* Ring specs: each form, parsed by hand-read expectations: the name as
** written before any version, then the schema (NULL: none) and the table
** unquoted, and whether the schema counts only if there is one by its
** name. */
static int spec_is(const char *z, ring_spec_kind kind, ring_spec_when when,
                   int64_t version, const char *zName, const char *zSchema,
                   const char *zTable, int bIfExists){
  ring_spec p;
  char zErr[200], zPart[200];
  if( ring_spec_parse(z, strlen(z), &p, zErr, sizeof(zErr)) ) return 0;
  if( p.kind!=kind || p.when!=when || p.version!=version
   || p.name_len!=strlen(zName) || memcmp(p.name, zName, p.name_len)!=0 ){
    return 0;
  }
  if( kind==RING_SPEC_INLINE ) return 1;
  if( (zSchema==NULL)!=(p.schema==NULL) || p.schema_if_exists!=bIfExists ){
    return 0;
  }
  if( zSchema && (ring_spec_unquote(p.schema, p.schema_len, zPart)
                    !=strlen(zSchema) || strcmp(zPart, zSchema)!=0) ){
    return 0;
  }
  return ring_spec_unquote(p.table, p.table_len, zPart)==strlen(zTable)
      && strcmp(zPart, zTable)==0;
}

static void test_spec(void){
  const ring_spec_when CUR = RING_SPEC_CURRENT, VER = RING_SPEC_VERSION;
  const ring_spec_kind NAMED = RING_SPEC_NAMED;
  CHECK( spec_is("shards", NAMED, CUR, 0, "shards", NULL, "shards", 0) );
  CHECK( spec_is("shards@3", NAMED, VER, 3, "shards", NULL, "shards", 0) );
  CHECK( spec_is("shards@-1", NAMED, RING_SPEC_RELATIVE, -1, "shards", NULL,
                 "shards", 0) );
  CHECK( spec_is("shards@-0", NAMED, RING_SPEC_RELATIVE, 0, "shards", NULL,
                 "shards", 0) );
  CHECK( spec_is("aux.shards@2", NAMED, VER, 2, "aux.shards", "aux", "shards",
                 1) );
  CHECK( spec_is("a.b.c", NAMED, CUR, 0, "a.b.c", "a", "b.c", 1) );
  /* The last '@' starts the version: a name may hold one. */
  CHECK( spec_is("me@host@12", NAMED, VER, 12, "me@host", NULL, "me@host", 0) );
  CHECK( spec_is("999999999999999999", NAMED, CUR, 0, "999999999999999999",
                 NULL, "999999999999999999", 0) );
  CHECK( spec_is("r@999999999999999999", NAMED, VER, 999999999999999999LL,
                 "r", NULL, "r", 0) );
  CHECK( spec_is("  [\"a\"]", RING_SPEC_INLINE, CUR, 0, "  [\"a\"]", NULL,
                 NULL, 0) );
  CHECK( spec_is("{\"nodes\":[]}", RING_SPEC_INLINE, CUR, 0,
                 "{\"nodes\":[]}", NULL, NULL, 0) );
  /* Quoted parts, as SQL quotes identifiers: any name can be written. */
  CHECK( spec_is("\"a@b\"", NAMED, CUR, 0, "\"a@b\"", NULL, "a@b", 0) );
  CHECK( spec_is("\"a@b\"@2", NAMED, VER, 2, "\"a@b\"", NULL, "a@b", 0) );
  CHECK( spec_is("\"[x]\"", NAMED, CUR, 0, "\"[x]\"", NULL, "[x]", 0) );
  CHECK( spec_is("\"{x}\"@-1", NAMED, RING_SPEC_RELATIVE, -1, "\"{x}\"", NULL,
                 "{x}", 0) );
  CHECK( spec_is("main.\"odd name\"", NAMED, CUR, 0, "main.\"odd name\"",
                 "main", "odd name", 0) );
  CHECK( spec_is("main.\"a.b@c\"@7", NAMED, VER, 7, "main.\"a.b@c\"", "main",
                 "a.b@c", 0) );
  CHECK( spec_is("\"my db\".r@1", NAMED, VER, 1, "\"my db\".r", "my db", "r",
                 0) );
  CHECK( spec_is("\"a.b\"", NAMED, CUR, 0, "\"a.b\"", NULL, "a.b", 0) );
  CHECK( spec_is("\"say \"\"hi\"\"\"", NAMED, CUR, 0, "\"say \"\"hi\"\"\"",
                 NULL, "say \"hi\"", 0) );
  CHECK( spec_is("\"\"\"\"", NAMED, CUR, 0, "\"\"\"\"", NULL, "\"", 0) );
  CHECK( spec_is("\"\"", NAMED, CUR, 0, "\"\"", NULL, "", 0) );
  CHECK( spec_is("\"s\".\"t\"", NAMED, CUR, 0, "\"s\".\"t\"", "s", "t", 0) );
  /* A quote that does not start a part is a character of the name. */
  CHECK( spec_is("a\"b", NAMED, CUR, 0, "a\"b", NULL, "a\"b", 0) );
  CHECK( spec_is("a.b\"", NAMED, CUR, 0, "a.b\"", "a", "b\"", 1) );
  ring_spec p;
  char zErr[200];
  static const char *const azBad[] = { "r@", "r@x", "r@1x", "r@--1", "r@+1",
                                       "r@1234567890123456789", "" };
  for(size_t i=0; i<sizeof(azBad)/sizeof(azBad[0]); i++){
    CHECK( ring_spec_parse(azBad[i], strlen(azBad[i]), &p, zErr, sizeof(zErr))==1 );
  }
  CHECK( ring_spec_parse("r@x", 3, &p, zErr, sizeof(zErr))==1
         && has(zErr, "bad version in ring spec 'r@x'")
         && has(zErr, "\"a@b\"@2") );
  static const char *const azBadQuote[] = { "\"a", "\"a\"\"", "\"a\"b",
                                            "main.\"a", "\"a\"@",
                                            "\"a\"@x", "main.\"a\"b" };
  for(size_t i=0; i<sizeof(azBadQuote)/sizeof(azBadQuote[0]); i++){
    CHECK( ring_spec_parse(azBadQuote[i], strlen(azBadQuote[i]), &p, zErr,
                           sizeof(zErr))==1 );
  }
  CHECK( ring_spec_parse("\"ab", 3, &p, zErr, sizeof(zErr))==1
         && has(zErr, "bad ring spec '\"ab': a quoted name needs its closing "
                      "quote") );
  CHECK( ring_spec_parse("\"a\"b", 4, &p, zErr, sizeof(zErr))==1
         && has(zErr, "and then comes '.', '@' or the end") );
  /* A long spec is echoed cut: its first 60 bytes, then "...". */
  char zLong[1000];
  memset(zLong, 'x', sizeof(zLong));
  zLong[998] = '@';
  CHECK( ring_spec_parse(zLong, sizeof(zLong), &p, zErr, sizeof(zErr))==1
         && has(zErr, "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxx'...: write") );
  CHECK( ring_spec_parse("a\0b", 3, &p, zErr, sizeof(zErr))==1
         && has(zErr, "no such ring") );
  ring_spec_version(-2, &p);
  CHECK( p.kind==RING_SPEC_DEFAULT && p.when==RING_SPEC_RELATIVE && p.version==-2 );
  ring_spec_version(5, &p);
  CHECK( p.kind==RING_SPEC_DEFAULT && p.when==RING_SPEC_VERSION && p.version==5 );
  ring_spec_default(&p);
  CHECK( p.kind==RING_SPEC_DEFAULT && p.when==RING_SPEC_CURRENT );
}

/* Columns (algo.h): an algorithm of one point per node that declares a
** required column and one with a default, and takes only digits in the
** first. */
static const char *digits_only(const ring_config *cfg, unsigned i,
                               const char *z, size_t n, char *zErr,
                               size_t nErr){
  (void)cfg;
  if( i!=0 ) return NULL;
  for(size_t k=0; k<n; k++){
    if( z[k]<'0' || z[k]>'9' ){
      snprintf(zErr, nErr, "'%.*s' is not a number", (int)n, z);
      return zErr;
    }
  }
  return NULL;
}

static int one_point_build(ring *r, const ring *prev, char *zErr,
                           size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  ring_point *a = ring_alloc(sizeof(ring_point) * (r->n_nodes+1));
  if( a==NULL ) return RING_NOMEM;
  for(uint32_t i=0; i<r->n_nodes; i++){
    a[i].pos = strtoull(r->nodes[i].columns[0], NULL, 10);
    a[i].node = i;
  }
  ring_points_rule rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 0 };
  int rc = ring_points_place(r, a, r->n_nodes, &rule);
  ring_dealloc(a);
  return rc;
}

static const ring_column test_columns_list[] = {
  { .name = "pos", .required = 1, .about = "the node's position" },
  { .name = "zone", .default_text = "z1", .about = "its zone" },
  { .name = NULL }
};

static const ring_algo test_columns_algo = {
  .name = "test_columns",
  .default_hash = HASH_CRC32,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .columns = test_columns_list,
  .check_column = digits_only,
  .build = one_point_build,
};

static void test_columns(void){
  ring_config cfg;
  char zErr[300], zList[40];
  ring_config_default(&cfg);
  CHECK( ring_columns(&cfg)==0 );
  CHECK( strcmp(ring_column_list(&cfg, zList, sizeof(zList)), "none")==0 );
  cfg.algo = &test_columns_algo;
  CHECK( ring_columns(&cfg)==2 );
  CHECK( ring_column_find(&cfg, "ZONE")==1 && ring_column_find(&cfg, "x")==-1 );
  CHECK( strcmp(ring_column_list(&cfg, zList, sizeof(zList)), "pos, zone")==0 );
  ring_input in[2];
  memset(in, 0, sizeof(in));
  in[0].name = "b"; in[0].name_len = 1; in[0].weight = 1.0;
  in[0].columns[0] = "100xyz"; in[0].column_len[0] = 3;   /* "100" */
  in[1].name = "a"; in[1].name_len = 1; in[1].weight = 1.0;
  in[1].columns[0] = "7"; in[1].column_len[0] = 1;
  in[1].columns[1] = "east"; in[1].column_len[1] = 4;
  ring *r = NULL;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_OK );
  if( r ){
    /* Sorted by name: a, then b, each value its own NUL-terminated copy,
    ** b's zone the default. */
    CHECK( strcmp(r->nodes[0].columns[0], "7")==0 );
    CHECK( strcmp(r->nodes[0].columns[1], "east")==0 );
    CHECK( strcmp(r->nodes[1].columns[0], "100")==0 );
    CHECK( r->nodes[1].column_len[0]==3 );
    CHECK( strcmp(r->nodes[1].columns[1], "z1")==0 );
    CHECK( r->nodes[0].columns[2]==NULL );
    CHECK( ring_lookup(r, 8)==1 && ring_lookup(r, 101)==0 );
  }
  ring_release(r);
  in[0].columns[0] = NULL;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "node 'b': pos is required (algorithm test_columns): "
                   "the node's position") );
  in[0].columns[0] = "1x"; in[0].column_len[0] = 2;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "node 'b': pos: '1x' is not a number") );
  in[0].columns[0] = "1\0"; in[0].column_len[0] = 2;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "node 'b': pos contains a NUL byte") );
  in[0].columns[0] = "1"; in[0].column_len[0] = 1;
  in[0].columns[1] = "\xff"; in[0].column_len[1] = 1;
  CHECK( ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr))==RING_INVALID );
  CHECK( has(zErr, "node 'b': zone is not valid UTF-8") );
  /* Every allocation failure is RING_NOMEM and leaks nothing. */
  in[0].columns[1] = NULL;
  ring_set_allocator(test_malloc, test_free);
  for(int k=0; ; k++){
    r = NULL;
    nUntilFail = k;
    int rc = ring_build(&cfg, in, 2, &r, zErr, sizeof(zErr));
    nUntilFail = -1;
    ring_release(r);
    if( rc==RING_OK ) break;
    CHECK( rc==RING_NOMEM && nLive==0 );
  }
  CHECK( nLive==0 );
  ring_set_allocator(malloc, free);
}

int main(void){
  test_spec();
  test_hash();
  test_md5_lengths();
  test_hash_streams();
  test_key_steps();
  test_keys_compare();
  test_labels();
  test_points();
  test_names();
  test_lookup_built();
  test_lookup_edges(0);
  test_lookup_edges(1);
  test_build();
  test_nomem();
  test_align8();
  test_options();
  test_split();
  test_algorithms();
  test_columns();
  return unit_summary();
}

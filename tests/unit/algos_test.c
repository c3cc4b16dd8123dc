/*
** tests/unit/algos_test.c: unit tests of the algorithm files (ext/algos/ketama.c,
** jump.c, rendezvous.c, maglev.c, haproxy.c, dubbo.c, envoy_ring.c) below
** SQL, where raw positions can be fed in: the published jump vectors on
** jump_bucket itself, ketama's point values, Envoy's maglev tables slot by
** slot, a Dubbo ring's points worked by hand, Envoy's ring-hash lookups of
** its own unit tests, and every builder under out-of-memory (no leak,
** RING_NOMEM). Expected values come from the published jump vectors,
** twemproxy's and libmemcached's points, Envoy's tests and hand
** computation, not from chash.
** Prints "N passed, N failed" and exits 1 if anything failed.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "geometry.h"
#include "keyhash.h"
#include "unit.h"

/* jump.c's function, which the published vectors check directly. */
uint32_t jump_bucket(uint64_t k, uint32_t n);

/* guava.c's function, checked at bucket counts no ring holds. */
uint32_t guava_bucket(uint64_t input, uint32_t buckets);

/* A ring of config cfg over names[0..n) with weights (NULL: all 1). */
static ring *build_config(const ring_config *cfg, const char *const *names,
                          const double *weights, uint32_t n){
  ring_input in[16];
  memset(in, 0, sizeof(in));               /* no column values */
  for(uint32_t i=0; i<n; i++){
    in[i].name = names[i];
    in[i].name_len = (uint32_t)strlen(names[i]);
    in[i].weight = weights ? weights[i] : 1.0;
    in[i].id = i+1;
  }
  ring *r = NULL;
  char zErr[200];
  if( ring_build(cfg, in, n, &r, zErr, sizeof(zErr))!=RING_OK ) return NULL;
  return r;
}

/* A ring of algorithm a over names[0..n) with weights (NULL: all 1). */
static ring *build(const char *a, hash_id h, uint32_t table,
                   const char *const *names, const double *weights, uint32_t n){
  ring_config cfg;
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name(a));
  cfg.hash = h;
  if( table ){
    char zTable[24];
    snprintf(zTable, sizeof(zTable), "%u", table);
    unit_set_option(&cfg, "table", zTable);
  }
  return build_config(&cfg, names, weights, n);
}

static void test_jump(void){
  static const uint32_t key1[20] = {0,0,0,0,0,0,6,6,6,6,6,6,6,6,6,6,6,17,17,17};
  static const uint32_t keyBeef[20] = {0,1,2,3,3,5,5,5,5,5,5,5,5,5,5,5,16,16,16,16};
  static const uint32_t keyFood[20] = {0,1,2,2,2,2,2,2,2,2,2,2,2,2,2,15,15,15,15,15};
  for(uint32_t n=1; n<=20; n++){
    CHECK( jump_bucket(0, n)==0 );
    CHECK( jump_bucket(1, n)==key1[n-1] );
    CHECK( jump_bucket(0xdeadbeef, n)==keyBeef[n-1] );
    CHECK( jump_bucket(0x0ddc0ffeebadf00dULL, n)==keyFood[n-1] );
  }
  CHECK( jump_bucket(42, 57)==43 );
  CHECK( jump_bucket(0xDEAD10CC, 666)==361 );
  CHECK( jump_bucket(256, 1024)==520 );
  static const uint32_t guava[20] = {0,55,62,8,45,59,86,97,82,59,73,37,17,56,86,21,90,37,38,83};
  for(uint64_t k=0; k<20; k++) CHECK( jump_bucket(k, 100)==guava[k] );
  CHECK( jump_bucket(10863919174838991ULL, 11)==6 );
  CHECK( jump_bucket(2016238256797177309ULL, 11)==3 );
  CHECK( jump_bucket(1673758223894951030ULL, 11)==5 );
  CHECK( jump_bucket(2, 100001)==80343 );
  CHECK( jump_bucket(2201, 100001)==22152 );
  CHECK( jump_bucket(2202, 100001)==15018 );
  /* Where Guava's int overflow differs, jump keeps going. */
  static const uint32_t over[5] = {0,1,2,3,3};
  for(uint32_t n=1; n<=5; n++) CHECK( jump_bucket(0xecdfbf4e666313abULL, n)==over[n-1] );
  CHECK( jump_bucket(0xecdfbf4e666313abULL, 1000)==534 );

  /* Buckets follow the input order, not the name order. */
  static const char *const names[] = {"zeta", "alpha", "mu"};
  ring *r = build("jump", HASH_XXH3, 0, names, NULL, 3);
  CHECK( r!=NULL && strcmp(r->nodes[ring_lookup(r, 1)].name, "zeta")==0 );
  for(uint64_t k=0; r && k<1000; k++){
    uint32_t b = jump_bucket(k, 3);
    if( strcmp(r->nodes[ring_lookup(r, k)].name, names[b])!=0 ){
      CHECK( !"jump ring follows input order" );
      break;
    }
  }
  ring_release(r);
}

/*
** Guava 31.1's Hashing.consistentHash(input, n) at bucket counts up to
** 2^31 - 1, as the real Guava gave them (tests/compat/GuavaHash.java).
** The last five inputs are longs whose generator hits the int overflow
** of its + 1 or the saturating cast (tests/gen/partitioners_model.py's
** guava_extreme_longs): the first gives 0 at every count, where a C cast
** or an unwrapped + 1 gives other buckets.
*/
static void test_guava(void){
  static const struct { int64_t input; uint32_t b[4]; } v[] = {
    { 0,                       {0, 0, 0, 0} },
    { 1,                       {262355607, 262355607, 21134, 0} },
    { -1,                      {699554662, 699554662, 18311, 1} },
    { 42,                      {1603940301, 124795770, 5747, 1} },
    { INT64_MAX,               {213047985, 213047985, 8550, 0} },
    { INT64_MIN,               {1119800965, 674890281, 53854, 1} },
    { -1378172617505958997LL,  {0, 0, 0, 0} },
    { 2095222002470710073LL,   {3, 3, 3, 0} },
    { 2767976475196113139LL,   {3, 3, 3, 0} },
    { -1641479433386509179LL,  {71, 71, 71, 0} },
    { 1066053235453934725LL,   {40, 40, 40, 0} },
    { -2786506405220822237LL,  {55, 55, 55, 1} },
  };
  static const uint32_t counts[4] = {2147483647u, 1000000000u, 65536u, 2u};
  for(size_t i=0; i<sizeof(v)/sizeof(v[0]); i++){
    for(int c=0; c<4; c++){
      CHECK( guava_bucket((uint64_t)v[i].input, counts[c])==v[i].b[c] );
    }
  }
  for(uint32_t n=1; n<=20; n++) CHECK( guava_bucket(12345, n)<n );
}

/* The index of the first point >= v (the point a key hashing to v takes). */
static uint64_t point_at_or_after(const ring *r, uint64_t v){
  for(uint32_t i=0; i<r->n_points; i++) if( r->positions[i]>=v ) return r->positions[i];
  return r->positions[0];
}

static int has_point(const ring *r, uint64_t v, const char *zOwner){
  for(uint32_t i=0; i<r->n_points; i++){
    if( r->positions[i]==v ) return strcmp(r->nodes[r->owners[i]].name, zOwner)==0;
  }
  return 0;
}

static void test_ketama(void){
  /* md5("127.0.0.1-0") = 7fa4ffbd6ecb7eacbb1b8030b2f4e0ff: four points. */
  static const char *const tw[] = {"127.0.0.1", "127.0.0.1:21212", "127.0.0.1:21213"};
  static const double twW[] = {1, 2, 3};
  ring *r = build("ketama", HASH_MD5, 0, tw, twW, 3);
  CHECK( r!=NULL && r->n_points==480 );
  if( r ){
    CHECK( has_point(r, 0xbdffa47f, "127.0.0.1") );
    CHECK( has_point(r, 0xac7ecb6e, "127.0.0.1") );
    CHECK( has_point(r, 0x30801bbb, "127.0.0.1") );
    CHECK( has_point(r, 0xffe0f4b2, "127.0.0.1") );
    for(uint32_t i=1; i<r->n_points; i++){
      if( r->positions[i-1]>r->positions[i] ){ CHECK( !"points sorted" ); break; }
    }
  }
  ring_release(r);

  /* libmemcached's fixture: key SVa_]_V41) has MD5 word 0 443691461 and
  ** takes point 445379617 of 10.0.1.7; VDEAAAAA wraps past 0xfffbdf7f. */
  static const char *const lm[] = {"10.0.1.1", "10.0.1.2", "10.0.1.3", "10.0.1.4",
                                   "10.0.1.5", "10.0.1.6", "10.0.1.7", "10.0.1.8"};
  static const double lmW[] = {600, 300, 200, 350, 1000, 800, 950, 100};
  static const uint32_t lmPoints[] = {176, 88, 56, 104, 296, 236, 280, 28};
  r = build("ketama", HASH_MD5, 0, lm, lmW, 8);
  CHECK( r!=NULL );
  if( r ){
    for(int i=0; i<8; i++) CHECK( r->nodes[i].points==lmPoints[i] );
    uint64_t h = hash_bytes(HASH_MD5, 0, "SVa_]_V41)", 10);
    CHECK( h==443691461 );
    CHECK( point_at_or_after(r, h)==445379617 );
    CHECK( strcmp(r->nodes[ring_lookup(r, h)].name, "10.0.1.7")==0 );
    CHECK( r->positions[r->n_points-1]==0xfffbdf7f );
    CHECK( ring_lookup(r, 0xfffcd1b5)==r->owners[0] );
  }
  ring_release(r);
}

static void test_maglev(void){
  static const char *const addr[] = {"127.0.0.1:90", "127.0.0.1:91", "127.0.0.1:92",
                                     "127.0.0.1:93", "127.0.0.1:94", "127.0.0.1:95"};
  static const char *const host[] = {"90", "91", "92", "93", "94", "95"};
  static const uint32_t t1[7] = {2, 4, 0, 1, 5, 0, 3};
  static const uint32_t t2[7] = {2, 5, 0, 3, 4, 1, 0};
  static const uint32_t t3[17] = {1,0,0,1,0,1,1,0,1,1,1,1,1,0,1,0,1};
  static const double w3[] = {1, 2};
  ring *r = build("maglev", HASH_XXH64, 7, addr, NULL, 6);
  for(int s=0; r && s<7; s++) CHECK( r->unit_owners[s]==t1[s] );
  ring_release(r);
  r = build("maglev", HASH_XXH64, 7, host, NULL, 6);
  for(int s=0; r && s<7; s++) CHECK( r->unit_owners[s]==t2[s] );
  ring_release(r);
  r = build("maglev", HASH_XXH64, 17, addr, w3, 2);
  for(int s=0; r && s<17; s++) CHECK( r->unit_owners[s]==t3[s] );
  CHECK( r && ring_lookup(r, 17+3)==1 && ring_lookup(r, 17*5+1)==0 );
  ring_release(r);
  static const uint32_t first[10] = {5, 4, 4, 0, 5, 5, 3, 1, 5, 5};
  r = build("maglev", HASH_XXH64, 0, addr, NULL, 6);
  char zTable[OPTION_MAX_TEXT];
  CHECK( r!=NULL && strcmp(unit_option_text(&r->config, "table", zTable, sizeof(zTable)), "65537")==0 );
  for(int s=0; r && s<10; s++) CHECK( r->unit_owners[s]==first[s] );
  for(int i=0; r && i<6; i++) CHECK( r->nodes[i].points==(i<5 ? 10923u : 10922u) );
  ring_release(r);
}

/*
** haproxy: HAProxy's key hashes on unsigned bytes, and the lookup at
** positions crafted from the rule (on points, at ties half-way between two
** servers' points, around the wrap-around). Expected values come from
** tests/gen/haproxy_gen.py's model, which agrees with a real HAProxy 2.6
** on these positions (tests/compat/haproxy_compat.py).
*/
static void test_haproxy(void){
  static const unsigned char foo[] = "foo", high[] = {0x6b, 0xe9, 0x79};
  CHECK( keyhash_sdbm(foo, 3)==0x32a94926u );
  CHECK( keyhash_djb2(foo, 3)==0x0b887389u );
  CHECK( keyhash_wt6(foo, 3)==0xc7a91262u );
  CHECK( keyhash_sdbm(high, 3)==0x3599b4bbu );
  CHECK( keyhash_djb2(high, 3)==0x0b889892u );
  CHECK( keyhash_wt6(high, 3)==0xe1cda55fu );
  CHECK( keyhash_sdbm(foo, 0)==0 && keyhash_djb2(foo, 0)==5381u );
  CHECK( keyhash_wt6(foo, 0)==0xf99a0360u );

  /* Servers s1, s2, s3 of weights 1, 2, 3: 16 points per unit. */
  static const char *const names[] = {"s1", "s2", "s3"};
  static const double w[] = {1, 2, 3};
  static const struct { uint32_t pos; const char *owner; } at[] = {
    { 2381943u, "s3" },       /* on the lowest point */
    { 2234691741u, "s1" },    /* on a middle point */
    { 4113562117u, "s2" },    /* on the highest point */
    { 0u, "s3" },             /* position 0: nearest is the lowest point */
    { 4294967295u, "s3" },
    { 4113562118u, "s2" },    /* one past the highest point: still nearest */
    { 2381942u, "s3" },       /* one before the lowest point */
    { 4205455678u, "s2" },    /* half-way across the wrap: the point before */
    { 4205455679u, "s3" },
    { 454777333u, "s2" },     /* half-way between two points: the one before */
    { 454777334u, "s1" },
    { 706290293u, "s1" },
    { 706290294u, "s3" },
  };
  ring *r = build("haproxy", HASH_SDBM, 0, names, w, 3);
  CHECK( r!=NULL && r->n_points==96 );
  for(uint32_t i=0; r && i<3; i++) CHECK( r->nodes[i].points==16u*(i+1) );
  for(size_t i=0; r && i<sizeof(at)/sizeof(at[0]); i++){
    CHECK( strcmp(r->nodes[ring_lookup(r, at[i].pos)].name, at[i].owner)==0 );
  }
  /* A key's position: sdbm, then full_hash (avalanche is the default). */
  CHECK( r && ring_keys_place(&r->keys, "hello", 5)==2061535398u );
  ring_release(r);

  /* Two servers of weight 1: the highest point (b's 16th) owns an arc that
  ** wraps past 2^32-1, so it is unit 0; its arc ends at 90474917. */
  static const char *const ab[] = {"a", "b"};
  r = build("haproxy", HASH_WT6, 0, ab, NULL, 2);
  CHECK( r!=NULL && r->tokens!=NULL );
  CHECK( r && r->tokens && r->tokens[0]==4061310468u );
  CHECK( r && r->positions[0]==90474917u );
  CHECK( r && r->tokens && r->tokens[1]==414606662u );
  CHECK( r && r->positions[1]==454777333u );
  if( r ){
    r->keys.finish_arg = 0;                 /* avalanche off */
    CHECK( ring_keys_place(&r->keys, "hello", 5)==3538347703u );
  }
  ring_release(r);
}

static const char *owner(const ring *r, uint64_t pos){
  return r->nodes[ring_lookup(r, pos)].name;
}

static void test_dubbo(void){
  /* MD5("192.168.0.1:208800") = d9ea6eaa e14a196f f990b1e9 fd583962: its
  ** words read little-endian are four points of 192.168.0.1:20880. */
  static const char *const prov[] = {"192.168.0.1:20880", "192.168.0.2:20880",
                                     "192.168.0.3:20880"};
  ring *r = build("dubbo", HASH_MD5, 0, prov, NULL, 3);
  CHECK( r!=NULL && r->n_points==480 );
  if( r ){
    CHECK( has_point(r, 0xaa6eead9, "192.168.0.1:20880") );
    CHECK( has_point(r, 0x6f194ae1, "192.168.0.1:20880") );
    CHECK( has_point(r, 0xe9b190f9, "192.168.0.1:20880") );
    CHECK( has_point(r, 0x623958fd, "192.168.0.1:20880") );
    /* "hello": MD5 5d41402a... is at 0x2a40415d = 708854109; the next
    ** point is 718901642. */
    CHECK( point_at_or_after(r, 708854109)==718901642 );
    CHECK( strcmp(owner(r, 708854109), "192.168.0.1:20880")==0 );
    /* Past the last point, the first one's owner. */
    CHECK( ring_lookup(r, 0xffffffff)==r->owners[0] );
  }
  ring_release(r);

  /* "10.0.0.1:2088" "10" is "10.0.0.1:20881" "0": MD5 words of that text
  ** are points of both; the one listed (joined) last owns them. */
  unsigned char d[16];
  hash_md5("10.0.0.1:208810", 15, d);
  uint64_t tie = (uint32_t)d[0] | (uint32_t)d[1]<<8 | (uint32_t)d[2]<<16
               | (uint32_t)d[3]<<24;
  static const char *const ab[] = {"10.0.0.1:2088", "10.0.0.1:20881"};
  static const char *const ba[] = {"10.0.0.1:20881", "10.0.0.1:2088"};
  r = build("dubbo", HASH_MD5, 0, ab, NULL, 2);
  CHECK( r && strcmp(owner(r, tie), "10.0.0.1:20881")==0 );
  ring_release(r);
  r = build("dubbo", HASH_MD5, 0, ba, NULL, 2);
  CHECK( r && strcmp(owner(r, tie), "10.0.0.1:2088")==0 );
  ring_release(r);
}

static void test_envoy_ring(void){
  static const char *const addr[] = {"127.0.0.1:90", "127.0.0.1:91", "127.0.0.1:92",
                                     "127.0.0.1:93", "127.0.0.1:94", "127.0.0.1:95"};
  ring_config cfg;
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name("envoy_ring"));
  cfg.hash = HASH_XXH64;
  /* Envoy's Basic test: minimum_ring_size 12, its lookups. */
  unit_set_option(&cfg, "min_ring", "12");
  ring *r = build_config(&cfg, addr, NULL, 6);
  CHECK( r!=NULL && r->n_points==12 );
  if( r ){
    CHECK( r->positions[0]==833437586790550860ULL );
    CHECK( r->positions[11]==16117243373044804889ULL );
    CHECK( strcmp(owner(r, 0), "127.0.0.1:94")==0 );
    CHECK( strcmp(owner(r, UINT64_MAX), "127.0.0.1:94")==0 );
    CHECK( strcmp(owner(r, 3551244743356806947ULL), "127.0.0.1:95")==0 );
    CHECK( strcmp(owner(r, 3551244743356806948ULL), "127.0.0.1:93")==0 );
  }
  ring_release(r);

  /* HostWeightedTinyRing: weights 1, 2, 3 on a ring of exactly 6. */
  static const double w123[] = {1, 2, 3};
  static const uint64_t pos[6] = {928266305478181108ULL, 4443673547860492590ULL,
    5583722120771150861ULL, 6311230543546372928ULL, 13444792449719432967ULL,
    16117243373044804889ULL};
  static const int host[6] = {2, 2, 1, 1, 2, 0};
  unit_set_option(&cfg, "min_ring", "6");
  unit_set_option(&cfg, "max_ring", "6");
  r = build_config(&cfg, addr, w123, 3);
  CHECK( r!=NULL && r->n_points==6 );
  for(int i=0; r && i<6; i++) CHECK( strcmp(owner(r, pos[i]), addr[host[i]])==0 );
  ring_release(r);

  /* HostWeightedLargeRing: minimum 6144; probes i * ((2^64-1)/6000). */
  unit_set_option(&cfg, "min_ring", "6144");
  unit_set_option(&cfg, "max_ring", "8388608");
  r = build_config(&cfg, addr, w123, 3);
  CHECK( r!=NULL && r->n_points==6144 );
  int hits[3] = {0, 0, 0};
  for(uint64_t i=0; r && i<6000; i++){
    const char *z = owner(r, i * (UINT64_MAX / 6000));
    for(int h=0; h<3; h++) if( strcmp(z, addr[h])==0 ) hits[h]++;
  }
  CHECK( hits[0]==987 && hits[1]==1932 && hits[2]==3081 );
  ring_release(r);

  /* LargeFractionalScale: a ring of exactly 1023, 512 + 511 points. */
  unit_set_option(&cfg, "min_ring", "1023");
  unit_set_option(&cfg, "max_ring", "1023");
  r = build_config(&cfg, addr, NULL, 2);
  CHECK( r && r->nodes[0].points==512 && r->nodes[1].points==511 );
  int h90 = 0;
  for(uint64_t i=0; r && i<1023; i++){
    if( strcmp(owner(r, i * (UINT64_MAX / 1023)), addr[0])==0 ) h90++;
  }
  CHECK( h90==526 );
  ring_release(r);
}

/* Every builder: failing each allocation in turn gives no ring and no
** leak; the first run that succeeds places keys as an unhindered build. */
static void test_oom(void){
  static const char *const names[] = {"a", "bb", "c"};
  static const double w[] = {1, 2, 3};
  ring_set_allocator(test_malloc, test_free);
  /* Every algorithm of the registry, with weights where it takes them. */
  for(int a=0; ring_algos[a]; a++){
    const ring_algo *algo = ring_algos[a];
    ring_config cfg;
    ring_config_default(&cfg);
    options_set_algorithm(&cfg, algo);
    /* Nodes of names alone cannot fill columns: test_cassandra's own. */
    if( ring_columns(&cfg) ) continue;
    hash_id h = algo->default_hash;
    const double *pw = w;
    for(int i=0; i<3; i++){
      if( ring_check_weight(&cfg, w[i]) ) pw = NULL;
    }
    ring *ref = build(algo->name, h, 0, names, pw, 3);
    CHECK( ref!=NULL );
    for(int nth=0; ref; nth++){
      nUntilFail = nth;
      ring *r = build(algo->name, h, 0, names, pw, 3);
      nUntilFail = -1;
      if( r==NULL ) continue;
      for(uint64_t k=0; k<5000; k++){
        char zKey[24];
        int nKey = snprintf(zKey, sizeof(zKey), "%llu",
                            (unsigned long long)(k * 0x9e3779b97f4a7c15ULL));
        if( ring_locate_key(r, zKey, (size_t)nKey)
            !=ring_locate_key(ref, zKey, (size_t)nKey) ){
          CHECK( !"same placement after OOM retries" );
          break;
        }
      }
      ring_release(r);
      break;
    }
    ring_release(ref);
    CHECK( nLive==0 );
  }
  ring_set_allocator(malloc, free);
}

/* nginx: points of "host NUL port" chains, CRC-32 values computed apart
** (Python's zlib.crc32 of the labels). */
static void test_nginx(void){
  static const char *const names[] = {"10.0.0.1:8080", "unix:/run/a.sock",
                                      "[::1]", "x:", "[::1]:8080"};
  ring *r = build("nginx", HASH_CRC32A, 0, names, NULL, 5);
  CHECK( r!=NULL && r->n_points==5*160 );
  if( r ){
    CHECK( has_point(r, 0xf1ea5a8f, "10.0.0.1:8080") );   /* 10.0.0.1 \0 8080 */
    CHECK( has_point(r, 0x4bd08e68, "10.0.0.1:8080") );   /* ... then point 0 */
    CHECK( has_point(r, 0xf38eed1d, "unix:/run/a.sock") );
    CHECK( has_point(r, 0xb368a5ff, "[::1]") );           /* all host */
    CHECK( has_point(r, 0x4d923f1c, "[::1]") );
    CHECK( has_point(r, 0x56b32e0f, "x:") );              /* empty port */
    CHECK( has_point(r, 0x68fd9523, "[::1]:8080") );
    CHECK( has_point(r, 0xc3d99972, "[::1]:8080") );
  }
  ring_release(r);

  /* "UNIX:[::1]" hashes as "[::1]": the same points as node "[::1]", so
  ** the one that joined first keeps all 160 and the other has none. */
  static const char *const twin[] = {"UNIX:[::1]", "[::1]"};
  r = build("nginx", HASH_CRC32A, 0, twin, NULL, 2);
  CHECK( r!=NULL && r->n_points==160 );
  if( r ){
    CHECK( has_point(r, 0xb368a5ff, "UNIX:[::1]") );
    CHECK( r->nodes[0].points==160 && r->nodes[1].points==0 );
  }
  ring_release(r);

  /* Two servers with one equal point (1953566202): the first listed keeps
  ** it, in either order. */
  static const char *const ab[] = {"127.0.0.14:8004", "127.0.0.77:8008"};
  static const char *const ba[] = {"127.0.0.77:8008", "127.0.0.14:8004"};
  r = build("nginx", HASH_CRC32A, 0, ab, NULL, 2);
  CHECK( r!=NULL && r->n_points==319 && has_point(r, 1953566202, ab[0]) );
  ring_release(r);
  r = build("nginx", HASH_CRC32A, 0, ba, NULL, 2);
  CHECK( r!=NULL && r->n_points==319 && has_point(r, 1953566202, ba[0]) );
  ring_release(r);
}

/* hashring: floor(w/W * 40 * n) digests in double precision. */
static void test_hashring(void){
  static const char *const seven[] = {"a", "b", "c", "d", "e", "f", "g"};
  ring *r = build("hashring", HASH_MD5, 0, seven, NULL, 7);
  CHECK( r!=NULL && r->n_points==7*156 );     /* 1/7*40*7 = 39.999... */
  ring_release(r);
  /* 1/201*40*2 = 0.398: "a" gets no digest; 200/201*40*2 = 79.6. */
  static const char *const two[] = {"a", "b"};
  static const double w[] = {1, 200};
  r = build("hashring", HASH_MD5, 0, two, w, 2);
  CHECK( r!=NULL && r->nodes[0].points==0 && r->nodes[1].points==4*79 );
  ring_release(r);
}

/* cassandra: tokens, dc and rack per node; placements and the server's
** replica order worked by hand. */
static ring *cassandra_ring(const char *zReplication, char *zErr, size_t nErr){
  static const char *const rows[][4] = {
    /* node, tokens, dc, rack */
    { "n1", "-100, 50", "dc1", "r1" },
    { "n2", "0 100", "dc1", "r1" },
    { "n3", "-50", "dc1", "r2" },
    { "n4", "25,75", "dc2", "r1" },
  };
  ring_config cfg;
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name("cassandra"));
  unit_set_option(&cfg, "replication", zReplication);
  CHECK( options_check(&cfg, OPTION_ALGORITHM, zErr, nErr)==0 );
  ring_input in[4];
  memset(in, 0, sizeof(in));
  for(int i=0; i<4; i++){
    in[i].name = rows[i][0];
    in[i].name_len = 2;
    in[i].weight = 1.0;
    for(int c=0; c<3; c++){
      in[i].columns[c] = rows[i][c+1];
      in[i].column_len[c] = (uint32_t)strlen(rows[i][c+1]);
    }
  }
  ring *r = NULL;
  ring_build(&cfg, in, 4, &r, zErr, nErr);
  return r;
}

/* The replicas of the key at token t, as node names joined by spaces. */
static const char *cassandra_list(const ring *r, int64_t t, char *z, size_t n){
  replica_walk w;
  z[0] = 0;
  if( replica_walk_start(&w, r, (uint64_t)t, 0)==RING_OK ){
    int64_t k;
    size_t used = 0;
    while( (k = replica_walk_next(&w))>=0 ){
      used += (size_t)snprintf(z+used, n-used, "%s%s", used ? " " : "",
                               r->nodes[k].name);
    }
  }
  replica_walk_free(&w);
  return z;
}

static void test_cassandra(void){
  char zErr[300], z[100];
  ring *r = cassandra_ring("simple:3", zErr, sizeof(zErr));
  CHECK( r!=NULL );
  if( r ){
    /* Tokens -100 n1, -50 n3, 0 n2, 25 n4, 50 n1, 75 n4, 100 n2: a key at
    ** or below a token is its owner's; past 100 it wraps to -100. */
    CHECK( strcmp(owner(r, (uint64_t)(int64_t)-100), "n1")==0 );
    CHECK( strcmp(owner(r, (uint64_t)(int64_t)-99), "n3")==0 );
    CHECK( strcmp(owner(r, 0), "n2")==0 );
    CHECK( strcmp(owner(r, 26), "n1")==0 );
    CHECK( strcmp(owner(r, 101), "n1")==0 );
    CHECK( strcmp(owner(r, (uint64_t)INT64_MIN), "n1")==0 );
    CHECK( strcmp(owner(r, (uint64_t)INT64_MAX), "n1")==0 );
    CHECK( r->n_points==7 && r->nodes[0].points==2 && r->nodes[2].points==1 );
    /* SimpleStrategy: distinct owners on from the key's token. */
    CHECK( strcmp(cassandra_list(r, 1, z, sizeof(z)), "n4 n1 n2")==0 );
    CHECK( strcmp(cassandra_list(r, 90, z, sizeof(z)), "n2 n1 n3")==0 );
  }
  ring_release(r);
  r = cassandra_ring("dc1:2,dc2:1", zErr, sizeof(zErr));
  if( r ){
    /* From 1: n4 (dc2 done), n1 (dc1 r1), n4 again, n2 (r1 used, dc1 has 2
    ** racks for RF 2: no repeat), n1, n3 (r2): n4 n1 n3. */
    CHECK( strcmp(cassandra_list(r, 1, z, sizeof(z)), "n4 n1 n3")==0 );
    /* From -99: n3 (r2), n2 (r1), then dc2's n4. */
    CHECK( strcmp(cassandra_list(r, -99, z, sizeof(z)), "n3 n2 n4")==0 );
  }
  ring_release(r);
  r = cassandra_ring("dc1:3", zErr, sizeof(zErr));
  if( r ){
    /* dc1 has 2 racks for RF 3: one repeat. From 1: n1 (r1), n2 (r1 used,
    ** the repeat), n3 (r2). */
    CHECK( strcmp(cassandra_list(r, 1, z, sizeof(z)), "n1 n2 n3")==0 );
  }
  ring_release(r);
  /* Failing each allocation in turn: no ring, no leak. */
  ring_set_allocator(test_malloc, test_free);
  for(int nth=0; ; nth++){
    nUntilFail = nth;
    r = cassandra_ring("dc1:2,dc2:1", zErr, sizeof(zErr));
    nUntilFail = -1;
    if( r ){
      ring_release(r);
      break;
    }
  }
  CHECK( nLive==0 );
  ring_set_allocator(malloc, free);
}

int main(void){
  test_jump();
  test_guava();
  test_ketama();
  test_nginx();
  test_hashring();
  test_maglev();
  test_haproxy();
  test_dubbo();
  test_envoy_ring();
  test_cassandra();
  test_oom();
  return unit_summary();
}

/*
** spymemcached.c: algorithm spymemcached, the ring of Java's spymemcached
** client (KetamaNodeLocator: KetamaConnectionFactory, or a
** ConnectionFactoryBuilder with locator CONSISTENT), bit for bit as
** spymemcached 2.12 places keys (checked against Debian's
** libspymemcached-java 2.12.3 on OpenJDK 17).
**
** Nodes are the strings spymemcached hashes for its servers, in the order
** of its server list (the nodes' join order). With KetamaNodeKeyFormatter's
** default format, SPYMEMCACHED, that is the server's socket address as
** String.valueOf gives it, less a leading '/': "10.0.0.1:11211",
** "cache1/10.0.0.1:11211" (a host name resolved), "cache1/<unresolved>:
** 11211"; with format LIBMEMCACHED, the host name, then ":port" unless
** the port is 11211. This algorithm hashes the node name as given, so
** either format is a choice of names.
**
** Points, made server by server in list order:
**   - weighted=0 (no weights map) and hash md5: for i = 0 .. 39, the MD5
**     of "name-i" gives 4 points, digest bytes 4h..4h+3 read
**     little-endian for h = 0 .. 3;
**   - weighted=0 and any other hash: for i = 0 .. 159, the key hash of
**     "name-i" is a point (crc32: 15 bits, so points often collide);
**   - weighted=1 (a weights map, one whole weight per server): a server
**     of weight w among n servers of total weight W gets
**     4 * floor(w/W * 160 / 4 * n + 1e-10) points in single precision (the
**     ketama rule, ring_ketama_count), always from MD5 digests as above,
**     whatever the key hash.
** Points go into a TreeMap, so of equal points the server put last (the
** later in the list) keeps it. A key's position is its hash, as an
** unsigned 32-bit value: md5 (KETAMA_HASH) is MD5 word 0 of its UTF-8;
** crc32 (CRC_HASH) is (CRC-32 of its UTF-8 >> 16) & 0x7fff;
** java_hashcode (NATIVE_HASH) is String.hashCode(); the FNV hashes run
** over the key's UTF-16 code units, each unit one step. A key goes to the
** first point at or after its position, wrapping to the first point; the
** empty key is hashed as any other.
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

#define SPY_REPETITIONS 160       /* DefaultKetamaNodeLocatorConfiguration's
                                  ** points per server */

/* Its own option: weighted (a weights map was given). */
typedef struct spy_config {
  int weighted;
} spy_config;

static const ring_option spy_options[] = {
  { .name = "weighted", .type = RING_OPTION_BOOL,
    .offset = offsetof(spy_config, weighted), .default_text = "0",
    .about = "whether the locator was given a weights map",
    .help = "1: the locator was built with a weights map (points from "
            "MD5, counted by the ketama rule); 0: 160 points per server" },
  { .name = NULL }
};

/* The key hashes KetamaNodeLocator takes (DefaultHashAlgorithm's), and
** the hash this algorithm's key rule runs for each. */
static const struct {
  hash_id named, runs;
} spy_hashes[] = {
  { HASH_MD5, HASH_MD5 },                      /* KETAMA_HASH */
  { HASH_JAVA_HASHCODE, HASH_JAVA_HASHCODE },  /* NATIVE_HASH */
  { HASH_CRC32, HASH_CRC32 },                  /* CRC_HASH */
  { HASH_FNV1_64, HASH_FNV1_64_UTF16 },        /* FNV1_64_HASH */
  { HASH_FNV1A_64, HASH_FNV1A_64_UTF16 },      /* FNV1A_64_HASH */
  { HASH_FNV1_32, HASH_FNV1_32_UTF16 },        /* FNV1_32_HASH */
  { HASH_FNV1A_32, HASH_FNV1A_32_UTF16 },      /* FNV1A_32_HASH */
};
#define SPY_N_HASHES (sizeof(spy_hashes)/sizeof(spy_hashes[0]))

/* The hash run for keys and points under the named one. */
static hash_id spy_hash_run(hash_id named){
  for(size_t i=0; i<SPY_N_HASHES; i++){
    if( spy_hashes[i].named==named ) return spy_hashes[i].runs;
  }
  return named;                 /* not reached: check_options refuses it */
}

/* ---------------------------------------------------------- the ring */

/* Points of server k: its digests of "name-i" when they come from MD5,
** else the key hash of "name-i" for i = 0 .. 159. */
static void spy_points_of(const ring *r, uint32_t k, uint32_t nPoints,
                          int bMd5, ring_point *a){
  const ring_node *node = &r->nodes[k];
  if( bMd5 ){
    for(uint32_t i=0; i<nPoints/4; i++){
      uint64_t aPos[4];
      ring_digest_md5_dash(node, i, aPos);
      for(uint32_t w=0; w<4; w++){
        a[4*i+w].pos = aPos[w];
        a[4*i+w].node = k;
      }
    }
    return;
  }
  char zLabel[RING_MAX_NAME + 16];
  memcpy(zLabel, node->name, node->name_len);
  zLabel[node->name_len] = '-';
  for(uint32_t i=0; i<nPoints; i++){
    size_t n = node->name_len + 1
             + (size_t)ring_format_u32(i, zLabel + node->name_len + 1);
    a[i].pos = hash_bytes(r->keys.hash, 0, zLabel, n);
    a[i].node = k;
  }
}

static int spy_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  const spy_config *c = RING_OWN_CONFIG(&r->config, spy_config);
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  double W = 0.0;
  uint64_t total = 0;
  for(uint32_t k=0; k<n; k++) W += r->nodes[k].weight;
  for(uint32_t k=0; k<n; k++){
    total += c->weighted ? ring_ketama_count(r->nodes[k].weight, W, n,
                                             SPY_REPETITIONS)
                         : SPY_REPETITIONS;
  }
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  if( a==NULL ) return RING_NOMEM;
  int bMd5 = c->weighted || r->config.hash==HASH_MD5;
  uint32_t m = 0;
  for(uint32_t k=0; k<n; k++){
    uint32_t nPoints = c->weighted
      ? ring_ketama_count(r->nodes[k].weight, W, n, SPY_REPETITIONS)
      : SPY_REPETITIONS;
    spy_points_of(r, k, nPoints, bMd5, a + m);
    m += nPoints;
  }
  static const ring_points_rule rule = {RING_LOOKUP_SUCCESSOR,
                                        RING_TIES_LAST, 0};
  int rc = ring_points_place(r, a, m, &rule);
  ring_dealloc(a);
  return rc;
}

/* ---------------------------------------------------------- keys */

/* spymemcached's FNV hashes take UTF-16 code units where twemproxy's take
** bytes: the key rule runs their form of units. */
static void spy_key_rule(const ring_config *cfg, ring_keys *k){
  k->hash = spy_hash_run(cfg->hash);
}

/* ---------------------------------------------------------- checks */

static int64_t spy_point_budget(const ring_config *cfg, double w){
  const spy_config *c = RING_OWN_CONFIG(cfg, spy_config);
  /* n*160*w/W with W >= w + (n-1): at most 160*w. */
  return c->weighted ? (int64_t)w * SPY_REPETITIONS : SPY_REPETITIONS;
}

static const char *spy_check_weight(const ring_config *cfg, double w){
  const spy_config *c = RING_OWN_CONFIG(cfg, spy_config);
  if( !c->weighted && w!=1.0 ){
    return "algorithm spymemcached gives every server 160 points unless "
           "the locator has a weights map: set weighted=1 for weights";
  }
  /* The points limit keeps the total far below a Java int's range. */
  if( w!=floor(w) ){
    return "algorithm spymemcached takes whole weights, as its weights map "
           "of Integers holds them: 1, 2, 3, ...";
  }
  return NULL;
}

static int spy_check_options(ring_config *cfg, unsigned set, char *zErr,
                             size_t nErr){
  (void)set;
  const spy_config *c = RING_OWN_CONFIG(cfg, spy_config);
  int bKnown = 0;
  for(size_t i=0; i<SPY_N_HASHES; i++){
    if( spy_hashes[i].named==cfg->hash ) bKnown = 1;
  }
  if( !bKnown ){
    snprintf(zErr, nErr, "hash: algorithm spymemcached takes the hashes of "
             "spymemcached's DefaultHashAlgorithm: md5 (KETAMA_HASH, the "
             "default), java_hashcode (NATIVE_HASH), crc32 (CRC_HASH), "
             "fnv1_64, fnv1a_64, fnv1_32, fnv1a_32; not %s",
             hash_name(cfg->hash));
    return 1;
  }
  if( c->weighted && cfg->hash==HASH_CRC32 ){
    snprintf(zErr, nErr, "hash: algorithm spymemcached with weighted=1 "
             "does not take crc32: spymemcached then makes 32-bit MD5 "
             "points for 15-bit keys, so every key lands on the few points "
             "below 32768; chash does not reproduce that ring");
    return 1;
  }
  return 0;
}

const ring_algo algo_spymemcached = {
  .name = "spymemcached",
  .default_hash = HASH_MD5,
  .own_options = spy_options,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = spy_check_options,
  .check_weight = spy_check_weight,
  .point_budget = spy_point_budget,
  .build = spy_build,
  .key_rule = spy_key_rule,
  .doc = {
    .summary = "Java spymemcached's `KetamaNodeLocator`",
    .reproduces = "a spymemcached client (`KetamaConnectionFactory`, "
                  "locator `CONSISTENT`)",
    .cost = "O(1) expected (as ketama)",
    .weights = "only with `weighted=1`: integers ≥ 1 (the ketama rule, "
               "MD5 points)",
    .remove = "any node",
    .movement = "only onto the new node (with `weighted=1`, also between "
                "others where point counts change)",
    .options = "`hash` (`md5` default, `java_hashcode`, `crc32`, `fnv1_64`, "
               "`fnv1a_64`, `fnv1_32`, `fnv1a_32`), `weighted` (0 or 1, "
               "default 0)",
  },
};

/*
** ring_points_test.c: the fast paths of the ring core give exactly the
** placements of the plain model.
**
**   - a full build equals a naive reference (labels written out from the
**     label template, qsort by position, tie rank, replica) point for
**     point;
**   - an incremental build (ring_build_from the previous ring) equals a full
**     build after every step of random add / remove / reweight sequences,
**     including bases of another config or of unrelated nodes, and under
**     hashes whose small space makes equal positions common; with the
**     join-order tie rules, nodes leave and join again (so a kept node's
**     place in the join order changes);
**   - every algorithm of the registry: an incremental build equals a full
**     one (points, owners, tokens, replica numbers, counts, shares, slots)
**     over random add / remove / reweight / rejoin sequences in join order;
**   - ring_points_make under every lookup rule, tie rule (name, first,
**     last, the build's own order), with ties kept or settled, replica
**     numbers kept or not, points that depend on the join rank, and counts
**     that depend on every node's weight, in a space of 97 positions (so
**     most points tie): incremental equals full, full equals
**     ring_points_place of every point made, and the incremental builds
**     make fewer points than the full ones (a third where ties stay);
**   - big rings (an owner table, ring_index.c) of several algorithms and
**     spaces: the table is made after as many lookups as it is due, of
**     16-bit entries (a bucket's one point, escapes near their estimate,
**     and far from it where points are crowded) or of 32 (more than
**     32,768 nodes); ring_lookup equals a plain binary search before,
**     while and after it is made, at random positions and at, just before
**     and just after every point, and without memory for it;
**   - small rings (an owner table of 8 to 16 entries a point, up to
**     32,768 points): one node, two points, spaces of 15, 16, 32 and 64
**     bits, every lookup rule with points, 128-bit points at the buckets'
**     starts, crowded points; the table made after as many lookups as it
**     is due, of its size, one entry that is no owner for each bucket
**     with points; ring_lookup and the per-row ring_lookup_low equal a
**     binary search before and after it is made; one point more, no
**     table;
**   - ring_lookup (the bucket index) equals a plain binary search, at random
**     positions and at, just before and just after every point (hand-made
**     rings with ties are in ring_test.c).
**
** Exit status 0 if every check passes; failures are printed.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_index.h"
#include "unit_options.h"

static int nPass = 0, nFail = 0;

#define CHECK(cond, ...) do{ if( !(cond) ){ \
  nFail++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); }else nPass++; }while(0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* splitmix64: reproducible random numbers. */
static uint64_t rnd(void){
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

typedef struct ref_point { uint64_t pos; uint32_t node, replica; } ref_point;

/* The tie rule of the ring being checked, for ref_compare. */
static const ring *ref_ring;

/* Who wins a tie: name order is node index order; join orders by join. */
static uint32_t ref_rank(uint32_t n){
  uint32_t join = ref_ring->nodes[n].join;
  char zTies[OPTION_MAX_TEXT];
  unit_option_text(&ref_ring->config, "ties", zTies, sizeof(zTies));
  if( strcmp(zTies, "first")==0 ) return join;
  if( strcmp(zTies, "last")==0 ) return UINT32_MAX - join;
  return n;
}

static int ref_compare(const void *pa, const void *pb){
  const ref_point *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  if( a->node!=b->node ) return ref_rank(a->node)<ref_rank(b->node) ? -1 : 1;
  return (a->replica>b->replica) - (a->replica<b->replica);
}

/* The label of point i of a node named zName: %s, %d and %% of the
** template replaced one character at a time. */
static int ref_label(const char *zTemplate, const char *zName, uint32_t i,
                     char *zOut){
  int n = 0;
  for(const char *t=zTemplate; *t; t++){
    if( t[0]=='%' && t[1]=='s' ){ n += sprintf(zOut+n, "%s", zName); t++; }
    else if( t[0]=='%' && t[1]=='d' ){ n += sprintf(zOut+n, "%u", i); t++; }
    else if( t[0]=='%' && t[1]=='%' ){ zOut[n++] = '%'; t++; }
    else zOut[n++] = *t;
  }
  return n;
}

/* The model, written plainly, against r's nodes. */
static void check_reference(const ring *r){
  ref_point *a = malloc(sizeof(ref_point) * (r->n_points ? r->n_points : 1));
  uint32_t k = 0;
  char zLabel[OPTION_MAX_TEXT], zFirst[OPTION_MAX_TEXT];
  unit_option_text(&r->config, "label", zLabel, sizeof(zLabel));
  uint32_t first = (uint32_t)atoi(unit_option_text(&r->config, "first", zFirst,
                                                   sizeof(zFirst)));
  for(uint32_t n=0; n<r->n_nodes; n++){
    for(uint32_t i=first; i<first+r->nodes[n].points; i++){
      char label[1300];
      int len = ref_label(zLabel, r->nodes[n].name, i, label);
      a[k].pos = hash_bytes(r->config.hash, r->config.seed, label, len);
      a[k].node = n;
      a[k++].replica = i;
    }
  }
  CHECK(k==r->n_points, "point count %u, expected %u", r->n_points, k);
  ref_ring = r;
  qsort(a, k, sizeof(ref_point), ref_compare);
  for(uint32_t i=0; i<k && i<r->n_points; i++){
    if( a[i].pos!=r->positions[i] || a[i].node!=r->owners[i] ){
      CHECK(0, "point %u differs from the reference", i);
      break;
    }
  }
  free(a);
}

/* A plain lower-bound search, wrapping to point 0. */
static uint32_t naive_lookup(const ring *r, uint64_t pos){
  uint32_t lo = 0, hi = r->n_points;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( r->positions[mid]<pos ) lo = mid+1; else hi = mid;
  }
  return r->owners[lo==r->n_points ? 0 : lo];
}

/* The owner of the key (pos, low) on a ring of 128-bit points (r->lows):
** the first point strictly above it. That is naive_lookup's, but where
** points' top words equal pos (their arcs end at pos - 1, just before
** it, in the order of their low words): the first of those above low. On
** any other ring, naive_lookup's. */
static uint32_t naive_lookup_low(const ring *r, uint64_t pos, uint64_t low){
  if( r->lows==NULL ) return naive_lookup(r, pos);
  uint32_t n = r->n_points, lo = 0, hi = n;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( r->positions[mid]<pos ) lo = mid+1; else hi = mid;
  }
  uint32_t k = lo==n ? 0 : lo;
  for(uint32_t step=0; step<n; step++){
    uint32_t j = k ? k-1 : n-1;
    if( r->positions[j]!=pos-1 || r->lows[j]<=low ) break;
    k = j;
  }
  return r->owners[k];
}

/* ring_lookup and ring_lookup_low (the per-row one, with the owner
** table's common case inline) of pos, against the naive lookups. */
static int lookup_right(const ring *r, uint64_t pos){
  uint64_t low = rnd();
  return ring_lookup(r, pos)==naive_lookup(r, pos)
      && ring_lookup_low(r, pos, low)==naive_lookup_low(r, pos, low);
}

static void check_lookups(const ring *r){
  if( r->n_nodes==0 ) return;
  uint64_t edge[] = { 0, 1, UINT64_MAX, UINT64_MAX-1, (uint64_t)1 << 63 };
  for(size_t i=0; i<sizeof(edge)/sizeof(edge[0]); i++){
    CHECK(lookup_right(r, edge[i]), "lookup of %llu",
          (unsigned long long)edge[i]);
  }
  unsigned bits = ring_space_bits(&r->config);
  uint64_t mask = bits==64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  for(int i=0; i<4000; i++){
    uint64_t p = i%2 ? rnd() : rnd() & mask;     /* in the space, and not */
    if( !lookup_right(r, p) ){
      CHECK(0, "lookup of random %llu", (unsigned long long)p);
      return;
    }
  }
  for(uint32_t i=0; i<r->n_points; i++){
    for(int d=-1; d<=1; d++){
      uint64_t p = r->positions[i] + (uint64_t)(int64_t)d;
      if( !lookup_right(r, p) ){
        CHECK(0, "lookup at point %u%+d", i, d);
        return;
      }
    }
  }
}

/* a and b are the same ring: nodes, points, shares, arrays. */
static void check_same(const ring *a, const ring *b, const char *zWhat){
  int same = a->n_nodes==b->n_nodes && a->n_points==b->n_points;
  for(uint32_t n=0; same && n<a->n_nodes; n++){
    same = strcmp(a->nodes[n].name, b->nodes[n].name)==0
        && a->nodes[n].points==b->nodes[n].points
        && a->nodes[n].weight==b->nodes[n].weight
        && a->nodes[n].share==b->nodes[n].share;
  }
  if( same && a->n_points ){
    same = memcmp(a->positions, b->positions, 8*(size_t)a->n_points)==0
        && memcmp(a->owners, b->owners, 4*(size_t)a->n_points)==0;
  }
  CHECK(same, "%s: incremental and full builds differ", zWhat);
}

#define POOL 40

/* The nodes of a pool (names, in or out, join ranks, weights) that are in,
** in join order, into aInput: returns how many. */
static uint32_t pool_inputs(int nPool, char azName[][48], const int *aIn,
                            const uint64_t *aJoined, uint64_t nJoin,
                            const double *aW, ring_input *aInput){
  memset(aInput, 0, sizeof(ring_input) * (size_t)nPool);  /* no columns */
  uint32_t n = 0;
  for(uint64_t j=1; j<=nJoin; j++){
    for(int i=0; i<nPool; i++){
      if( !aIn[i] || aJoined[i]!=j ) continue;
      aInput[n].name = azName[i];
      aInput[n].name_len = (uint32_t)strlen(azName[i]);
      aInput[n].id = (int64_t)j;
      aInput[n++].weight = aW[i];
    }
  }
  return n;
}

static const double aWeight[] = { 1.0, 0.5, 2.0, 0.001, 1.5, 0.25 };

/* A random walk over node sets: after each step, compare builds. Under
** name order the input is shuffled (its order must not matter); under a
** join-order tie rule it is the join order, and a node that leaves and
** comes back joins last. */
static void random_walk(ring_config cfg, int nStep){
  char azName[POOL][48];
  double aW[POOL];
  int aIn[POOL];
  uint64_t aJoined[POOL], nJoin = 0;
  for(int i=0; i<POOL; i++){
    /* Names that share prefixes, so name order is exercised. */
    snprintf(azName[i], sizeof(azName[i]), i%3 ? "n%d" : "n%d-x", i);
    aIn[i] = 0;
    aJoined[i] = 0;
  }
  ring *prev = NULL;
  for(int step=0; step<nStep; step++){
    int k = (int)(rnd() % POOL);
    int nChange = 1 + (int)(rnd() % 3);
    for(int c=0; c<nChange; c++, k = (int)(rnd() % POOL)){
      if( !aIn[k] ) aJoined[k] = ++nJoin;
      switch( rnd() % 4 ){
        case 0: aIn[k] = 1; aW[k] = 1.0; break;                   /* add */
        case 1: aIn[k] = 0; break;                                /* remove */
        case 2:                                           /* leave, rejoin */
          if( !aIn[k] ) aW[k] = 1.0;
          aJoined[k] = ++nJoin;
          aIn[k] = 1;
          break;
        default: aW[k] = aWeight[rnd() % 6]; aIn[k] = 1; break;   /* weight */
      }
    }
    ring_input aInput[POOL];
    uint32_t n = pool_inputs(POOL, azName, aIn, aJoined, nJoin, aW, aInput);
    /* Shuffle: under name order, input order must not matter. */
    char zTies[OPTION_MAX_TEXT];
    unit_option_text(&cfg, "ties", zTies, sizeof(zTies));
    for(uint32_t i=n; i>1 && strcmp(zTies, "name")==0; i--){
      uint32_t j = (uint32_t)(rnd() % i);
      ring_input t = aInput[i-1]; aInput[i-1] = aInput[j]; aInput[j] = t;
    }
    char zErr[200];
    ring *full = NULL, *inc = NULL;
    int rc1 = ring_build(&cfg, aInput, n, &full, zErr, sizeof(zErr));
    int rc2 = ring_build_from(prev, &cfg, aInput, n, &inc, zErr, sizeof(zErr));
    CHECK(rc1==RING_OK && rc2==RING_OK, "build failed: %s", zErr);
    if( full && inc ){
      check_same(full, inc, "random walk");
      if( step%16==0 ){
        check_reference(full);
        check_lookups(inc);
      }
    }
    ring_release(full);
    ring_release(prev);
    prev = inc;
  }
  ring_release(prev);
}

/* A base of another config, or of unrelated nodes, still gives the same. */
static void check_other_bases(void){
  ring_config c1, c2;
  ring_config_default(&c1);
  ring_config_default(&c2);
  c2.seed = 7;
  ring_input a[] = {
    {.name = "a", .name_len = 1, .weight = 1.0, .id = 1},
    {.name = "b", .name_len = 1, .weight = 2.0, .id = 2},
    {.name = "c", .name_len = 1, .weight = 1.0, .id = 3} };
  ring_input b[] = {
    {.name = "x", .name_len = 1, .weight = 1.0, .id = 4},
    {.name = "b", .name_len = 1, .weight = 2.0, .id = 2},
    {.name = "a", .name_len = 1, .weight = 1.0, .id = 1} };
  char zErr[200];
  ring *base = NULL, *full = NULL, *inc = NULL, *other = NULL;
  ring_build(&c2, a, 3, &base, zErr, sizeof(zErr));
  ring_build(&c1, a, 3, &full, zErr, sizeof(zErr));
  ring_build_from(base, &c1, a, 3, &inc, zErr, sizeof(zErr));
  check_same(full, inc, "base of another seed");
  ring_release(inc);
  ring_build(&c1, b, 3, &other, zErr, sizeof(zErr));
  ring_build_from(other, &c1, a, 3, &inc, zErr, sizeof(zErr));
  check_same(full, inc, "base of other nodes");
  ring_release(inc);
  ring_build_from(full, &c1, NULL, 0, &inc, zErr, sizeof(zErr));
  CHECK(inc && inc->n_points==0, "empty ring from a base");
  ring_release(inc);
  ring_release(base);
  ring_release(full);
  ring_release(other);
}

/* a and b are the same ring in everything a build sets (but each node's
** `made` unless bMade). */
static int same_ring(const ring *a, const ring *b, int bMade){
  if( a->n_nodes!=b->n_nodes || a->n_points!=b->n_points
   || a->n_units!=b->n_units || (a->tokens==NULL)!=(b->tokens==NULL)
   || (a->replicas==NULL)!=(b->replicas==NULL) ){
    return 0;
  }
  for(uint32_t n=0; n<a->n_nodes; n++){
    const ring_node *x = &a->nodes[n], *y = &b->nodes[n];
    if( strcmp(x->name, y->name)!=0 || x->points!=y->points
     || (bMade && x->made!=y->made) || x->weight!=y->weight || x->share!=y->share
     || x->join!=y->join ){
      return 0;
    }
  }
  size_t np = a->n_points, nu = a->n_units;
  return (np==0 || (memcmp(a->positions, b->positions, 8*np)==0
                    && memcmp(a->owners, b->owners, 4*np)==0))
      && (a->tokens==NULL || memcmp(a->tokens, b->tokens, 8*np)==0)
      && (a->replicas==NULL || memcmp(a->replicas, b->replicas, 4*np)==0)
      && (nu==0 || memcmp(a->unit_owners, b->unit_owners, 4*nu)==0);
}

#define WALK_POOL 24

/* What the test algorithm's make made in the full and incremental builds
** of walk_builds, and the algorithm that builds the same ring with
** ring_points_place, or NULL. */
static uint64_t nTestMade, nMadeFull, nMadeInc;
static const ring_algo *pPlaceAlgo;

/* A random walk of node sets in join order (a node that leaves and comes
** back joins last), building each step in full and from the step before:
** returns how many steps built. Node names are servers every algorithm
** takes ("10.0.0.7:11211"). */
static int walk_builds(ring_config cfg, int nStep, const char *zWhat){
  static const double aW[] = { 1.0, 2.0, 3.0, 0.5, 1.5 };
  char azName[WALK_POOL][48];
  double aWeight[WALK_POOL];
  int aIn[WALK_POOL];
  uint64_t aJoined[WALK_POOL], nJoin = 0;
  for(int i=0; i<WALK_POOL; i++){
    snprintf(azName[i], sizeof(azName[i]), "10.0.%d.%d:%d", i%2, i,
             i%3 ? 11211 : 80);
    aIn[i] = 0;
  }
  ring *prev = NULL;
  int nBuilt = 0;
  for(int step=0; step<nStep; step++){
    int nChange = 1 + (int)(rnd() % 3);
    for(int c=0; c<nChange; c++){
      int k = (int)(rnd() % WALK_POOL);
      unsigned op = (unsigned)(rnd() % 4);
      if( op==1 ){
        aIn[k] = 0;                                         /* remove */
        continue;
      }
      if( !aIn[k] || op==2 ) aJoined[k] = ++nJoin;          /* join, rejoin */
      if( !aIn[k] || op==3 ){                               /* weight */
        double w = aW[rnd() % 5];
        aWeight[k] = ring_check_weight(&cfg, w) ? 1.0 : w;
      }
      aIn[k] = 1;
    }
    ring_input aInput[WALK_POOL];
    uint32_t n = pool_inputs(WALK_POOL, azName, aIn, aJoined, nJoin, aWeight,
                             aInput);
    char zErr[300];
    ring *full = NULL, *inc = NULL;
    uint64_t n0 = nTestMade;
    int rc1 = ring_build(&cfg, aInput, n, &full, zErr, sizeof(zErr));
    uint64_t n1 = nTestMade;
    int rc2 = ring_build_from(prev, &cfg, aInput, n, &inc, zErr, sizeof(zErr));
    nMadeFull += n1 - n0;
    nMadeInc += nTestMade - n1;
    CHECK(rc1==rc2, "%s step %d: full %d, incremental %d", zWhat, step, rc1,
          rc2);
    if( full && inc ){
      nBuilt++;
      if( !same_ring(full, inc, 1) ){
        CHECK(0, "%s step %d: incremental and full builds differ", zWhat,
              step);
      }
    }
    if( full && pPlaceAlgo ){
      ring_config cfgPlace = cfg;
      ring *placed = NULL;
      cfgPlace.algo = pPlaceAlgo;
      ring_build(&cfgPlace, aInput, n, &placed, zErr, sizeof(zErr));
      CHECK(placed && same_ring(full, placed, 0),
            "%s step %d: ring_points_make and ring_points_place differ",
            zWhat, step);
      ring_release(placed);
    }
    ring_release(full);
    if( inc ){
      ring_release(prev);
      prev = inc;
    }
  }
  ring_release(prev);
  return nBuilt;
}

/* A config of algorithm zAlgo as CREATE ... USING chash(algorithm=zAlgo
** [, vnodes=zVnodes]) makes it. */
static ring_config algorithm_config(const char *zAlgo, const char *zVnodes){
  ring_config cfg;
  options_given g;
  char zErr[300];
  ring_config_default(&cfg);
  memset(&g, 0, sizeof(g));
  if( options_set(&cfg, &g, "algorithm", zAlgo, zErr, sizeof(zErr))
   || (zVnodes && options_set(&cfg, &g, "vnodes", zVnodes, zErr, sizeof(zErr)))
   || options_finish(&cfg, &g, zErr, sizeof(zErr)) ){
    printf("algorithm_config(%s): %s\n", zAlgo, zErr);
    exit(2);
  }
  return cfg;
}

/* Every algorithm, with its defaults and with a small vnodes where it
** takes one (counts round differently as nodes come and go). */
static void walk_registry(void){
  for(int i=0; ring_algos[i]; i++){
    const char *zAlgo = ring_algos[i]->name;
    /* Nodes whose columns are required (cassandra's tokens) cannot be
    ** made of names: algos_test.c tests those. */
    const ring_column *col = ring_algos[i]->columns;
    if( col && col[0].required ) continue;
    int nBuilt = walk_builds(algorithm_config(zAlgo, NULL), 60, zAlgo);
    CHECK(nBuilt>=30, "%s: only %d of 60 steps built", zAlgo, nBuilt);
    if( ring_algos[i]->options & OPTION_VNODES ){
      walk_builds(algorithm_config(zAlgo, "12"), 60, zAlgo);
    }
  }
}

/* ------------------------------- ring_points_make on a test algorithm */

/* The maker under test. */
static ring_points_maker test_mk;

/* Point i of node n: one of 97 positions spread over crc16's space, from
** its name (and join rank, under BY_JOIN) and i. */
static uint64_t test_point(const ring *r, uint32_t n, uint32_t i){
  const ring_node *node = &r->nodes[n];
  uint64_t h = 0xcbf29ce484222325ULL;
  for(uint32_t k=0; k<node->name_len; k++){
    h = (h ^ (unsigned char)node->name[k]) * 0x100000001b3ULL;
  }
  if( test_mk.flags & RING_POINTS_BY_JOIN ) h ^= (uint64_t)node->join << 40;
  h = (h ^ i) * 0x9e3779b97f4a7c15ULL;
  return ((h >> 33) % 97) * 673;
}

static void test_make(const ring *r, uint32_t n, uint32_t from,
                      ring_point *a){
  for(uint32_t i=from; i<r->nodes[n].points; i++){
    a[i-from].pos = test_point(r, n, i);
    nTestMade++;
  }
}

/* The build's own order of nodes: reverse name order. */
static int test_tie_before(const ring *r, uint32_t a, uint32_t b){
  (void)r;
  return a>b;
}

/* Counts from every node's weight: 1 + floor(3 * w * n / W). */
static void test_counts(ring *r){
  double W = 0.0;
  for(uint32_t k=0; k<r->n_nodes; k++) W += r->nodes[k].weight;
  for(uint32_t k=0; k<r->n_nodes; k++){
    r->nodes[k].points = 1 + (uint32_t)(3.0 * r->nodes[k].weight
                                        * r->n_nodes / W);
  }
}

static int test_make_build(ring *r, const ring *prev, char *zErr,
                           size_t nErr){
  (void)zErr; (void)nErr;
  test_counts(r);
  return ring_points_make(r, prev, &test_mk);
}

/* The same ring from every point made, through ring_points_place (its
** points made node by node, in replica order). */
static int test_place_build(ring *r, const ring *prev, char *zErr,
                            size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  test_counts(r);
  uint32_t total = 0;
  for(uint32_t k=0; k<r->n_nodes; k++) total += r->nodes[k].points;
  ring_point *a = malloc(sizeof(ring_point) * (total ? total : 1));
  uint32_t m = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    for(uint32_t i=0; i<r->nodes[k].points; i++, m++){
      a[m].pos = test_point(r, k, i);
      a[m].node = k;
    }
  }
  int rc = ring_points_place(r, a, m, &test_mk.rule);
  free(a);
  return rc;
}

static int64_t test_budget(const ring_config *cfg, double w){
  (void)cfg;
  return 1 + (int64_t)(3.0 * w * 24);
}

static const ring_algo test_made_algo = {
  .name = "test_make", .default_hash = HASH_CRC16,
  .units = RING_UNITS_POINTS, .unit_name = "points",
  .point_budget = test_budget, .build = test_make_build,
};
static const ring_algo test_place_algo = {
  .name = "test_place", .default_hash = HASH_CRC16,
  .units = RING_UNITS_POINTS, .unit_name = "points",
  .point_budget = test_budget, .build = test_place_build,
};

/* Walk node sets under the maker test_mk: incremental equals full, full
** equals ring_points_place's (where place can make it: ties settled, a
** replicas array), and the incremental builds make fewer points. */
static void walk_maker(ring_lookup_rule lookup, ring_ties ties, int bOwnOrder,
                       unsigned flags){
  char zWhat[80];
  snprintf(zWhat, sizeof(zWhat), "make lookup %d ties %d%s flags %u",
           (int)lookup, (int)ties, bOwnOrder ? " (own order)" : "", flags);
  test_mk.rule.lookup = lookup;
  test_mk.rule.ties = ties;
  test_mk.tie_before = bOwnOrder ? test_tie_before : NULL;
  test_mk.flags = flags;
  ring_config cfg;
  ring_config_default(&cfg);
  cfg.algo = &test_made_algo;
  cfg.hash = HASH_CRC16;
  nMadeFull = nMadeInc = 0;
  pPlaceAlgo = (flags & RING_POINTS_KEEP_TIES) || bOwnOrder ? NULL
                                                            : &test_place_algo;
  walk_builds(cfg, 150, zWhat);
  pPlaceAlgo = NULL;
  /* Where ties are settled most nodes lose a point in so small a space,
  ** and are made again; where they stay, only the changed nodes are. */
  uint64_t nLimit = (flags & RING_POINTS_KEEP_TIES) ? nMadeFull/3 : nMadeFull;
  CHECK(nMadeInc < nLimit, "%s: incremental builds made %llu points, "
        "full ones %llu", zWhat, (unsigned long long)nMadeInc,
        (unsigned long long)nMadeFull);
}

/* Every rule and flag combination ring_points_make takes. */
static void check_make_rules(void){
  static const ring_lookup_rule aLookup[] = {
    RING_LOOKUP_SUCCESSOR, RING_LOOKUP_ABOVE, RING_LOOKUP_PREDECESSOR,
    RING_LOOKUP_NEAREST_BEFORE, RING_LOOKUP_NEAREST_AFTER };
  static const ring_ties aTies[] = { RING_TIES_NAME, RING_TIES_FIRST,
                                     RING_TIES_LAST };
  test_mk.make = test_make;
  test_mk.rule.table = 0;
  for(int t=0; t<3; t++){
    for(int l=0; l<5; l++){
      walk_maker(aLookup[l], aTies[t], 0, 0);
      walk_maker(aLookup[l], aTies[t], 0, RING_POINTS_BY_JOIN);
    }
    walk_maker(RING_LOOKUP_SUCCESSOR, aTies[t], 0, RING_POINTS_KEEP_TIES);
    walk_maker(RING_LOOKUP_SUCCESSOR, aTies[t], 0,
               RING_POINTS_KEEP_TIES | RING_POINTS_NO_REPLICAS);
  }
  walk_maker(RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 1, 0);
  walk_maker(RING_LOOKUP_NEAREST_AFTER, RING_TIES_NAME, 1, 0);
  walk_maker(RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 1, RING_POINTS_KEEP_TIES);
  walk_maker(RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 1,
             RING_POINTS_KEEP_TIES | RING_POINTS_NO_REPLICAS);
}

/* ------------------------------------------------------- big rings */

/* Points crowded into the top quarter of the 64-bit space: the owner
** table's estimate of where a bucket's first point is (an even spread) is
** then far above it but in the last buckets, and those escapes go to the
** index. */
static void crowded_make(const ring *r, uint32_t n, uint32_t from,
                         ring_point *a){
  const ring_node *node = &r->nodes[n];
  for(uint32_t i=from; i<node->points; i++){
    char label[80];
    int len = snprintf(label, sizeof(label), "%s/%u", node->name, i);
    a[i-from].pos = (hash_bytes(HASH_XXH3, 0, label, (size_t)len) >> 2)
                  | (uint64_t)3 << 62;
  }
}

static int64_t crowded_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 160;
}

static int crowded_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t k=0; k<r->n_nodes; k++) r->nodes[k].points = 160;
  ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 0 },
    .make = crowded_make,
    .flags = RING_POINTS_KEEP_TIES | RING_POINTS_NO_REPLICAS,
  };
  return ring_points_make(r, prev, &mk);
}

static const ring_algo crowded_algo = {
  .name = "test_crowded", .default_hash = HASH_XXH3,
  .units = RING_UNITS_POINTS, .unit_name = "points",
  .point_budget = crowded_budget, .build = crowded_build,
};

/* 128-bit points (ring_points_place_low, the rule above, as uhashring's)
** whose top words have their low 56 bits clear: each is where a bucket of
** a small ring's owner table starts, and its arc ends just before it, in
** the bucket before. A key at a point's top word, below its low word, is
** the point's, though its bucket holds no point. */
static int64_t edges_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 16;
}

static int edges_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t m = 16 * r->n_nodes;
  ring_point *a = malloc(sizeof(ring_point) * m);
  uint64_t *aLow = malloc(sizeof(uint64_t) * m);
  int rc = RING_NOMEM;
  if( a && aLow ){
    for(uint32_t k=0; k<m; k++){
      char label[80];
      int len = snprintf(label, sizeof(label), "%s/%u", r->nodes[k/16].name,
                         k%16);
      a[k].pos = hash_bytes(HASH_XXH3, 0, label, (size_t)len)
               & ~(((uint64_t)1 << 56) - 1);
      a[k].node = k/16;
      aLow[k] = hash_bytes(HASH_XXH3, 1, label, (size_t)len);
    }
    static const ring_points_rule rule = { RING_LOOKUP_ABOVE, RING_TIES_LAST,
                                           0 };
    rc = ring_points_place_low(r, a, aLow, m, &rule);
  }
  free(aLow);
  free(a);
  return rc;
}

static const ring_algo edges_algo = {
  .name = "test_edges", .default_hash = HASH_XXH3,
  .units = RING_UNITS_POINTS, .unit_name = "points",
  .point_budget = edges_budget, .build = edges_build,
};

/* n nodes 10.0.0.0:11211, 10.0.0.1:11211, ... of weight 1, in one block
** with their names (free it). */
static ring_input *server_inputs(int n){
  ring_input *a = malloc((sizeof(ring_input) + 48) * (size_t)n);
  char (*azName)[48] = (char (*)[48])&a[n];
  for(int i=0; i<n; i++){
    snprintf(azName[i], 48, "10.%d.%d.%d:11211", i/62500, i/250%250, i%250);
    memset(&a[i], 0, sizeof(a[i]));
    a[i].name = azName[i];
    a[i].name_len = (uint32_t)strlen(azName[i]);
    a[i].weight = 1.0;
    a[i].id = i+1;
  }
  return a;
}

/* A ring of the first nNode nodes of aIn: of algorithm zAlgo (test_crowded
** and test_edges are this file's), with its hash and vnodes set where
** zHash and zVnodes are not NULL; zWhat (80 bytes) gets its name for
** messages, after zKind. NULL if it does not build. */
static ring *table_ring(const char *zKind, const char *zAlgo,
                        const char *zHash, const char *zVnodes,
                        const ring_input *aIn, int nNode, char *zWhat){
  ring_config cfg;
  if( strcmp(zAlgo, "test_crowded")==0 || strcmp(zAlgo, "test_edges")==0 ){
    ring_config_default(&cfg);
    cfg.algo = zAlgo[5]=='c' ? &crowded_algo : &edges_algo;
  }else{
    cfg = algorithm_config(zAlgo, zVnodes);
  }
  if( zHash ) unit_set_option(&cfg, "hash", zHash);
  snprintf(zWhat, 80, "%s %s %s, %d nodes", zKind, zAlgo, zHash ? zHash : "",
           nNode);
  ring *r = NULL;
  char zErr[300];
  CHECK(ring_build(&cfg, aIn, (uint32_t)nNode, &r, zErr, sizeof(zErr))
        ==RING_OK, "%s: %s", zWhat, zErr);
  return r;
}

/* The lookups of r before its owner table is due, each right, and no
** table before the last of them. */
static void check_until_due(ring *r, const char *zWhat){
  uint32_t nDue = r->owner_due;
  for(uint32_t i=1; i<nDue; i++){
    uint64_t p = rnd();
    if( ring_lookup(r, p)!=naive_lookup(r, p) ){
      CHECK(0, "%s: lookup %u of random %llu before the table", zWhat, i,
            (unsigned long long)p);
      break;
    }
  }
  CHECK(r->owner_table==NULL && r->owner_due==1,
        "%s: the table came before it was due", zWhat);
}

/* How many of r's 16-bit owner table entries are of a bucket's one
** point, escapes near their estimate, and OWNER_FAR. */
static void count_escapes(const ring *r, uint64_t *pOne, uint64_t *pNear,
                          uint64_t *pFar){
  const uint16_t *t = r->owner_table;
  *pOne = *pNear = *pFar = 0;
  for(uint64_t b=0; b<=r->owner_last; b++){
    if( t[b]==OWNER_FAR ) ++*pFar;
    else if( (t[b] & OWNER_ONE)==OWNER_ONE ) ++*pOne;
    else if( t[b] & OWNER_ESCAPE ) ++*pNear;
  }
}

/* An allocator with no memory, for the owner table's failure. */
static void *no_malloc(size_t n){
  (void)n;
  return NULL;
}

/* Without memory for the table when it is due, r goes on without it,
** right, and tries again as many lookups later. */
static void check_table_without_memory(ring *r, const char *zWhat){
  uint32_t nDue = r->owner_due;
  ring_set_allocator(no_malloc, free);
  for(uint32_t i=0; i<nDue; i++) (void)ring_lookup(r, rnd());
  ring_set_allocator(malloc, free);
  CHECK(r->owner_table==NULL && r->owner_due==r->n_points/RING_OWNER_TABLE_DUE,
        "%s: without memory, table %p, due in %u", zWhat, r->owner_table,
        r->owner_due);
  int nWrong = 0;
  for(int i=0; i<1000; i++){
    uint64_t p = rnd();
    nWrong += ring_lookup(r, p)!=naive_lookup(r, p);
  }
  CHECK(nWrong==0, "%s: without memory, %d of 1000 lookups wrong", zWhat,
        nWrong);
}

/*
** Rings big enough for an owner table: none when built; made by the
** lookups once n_points / RING_OWNER_TABLE_DUE of them went without it;
** ring_lookup equals a binary search before, across and after that, with
** 16-bit entries (escapes near their estimate and far from it) and 32-bit
** ones (more than 32,768 nodes).
*/
static void check_big_rings(void){
  static const struct { const char *zAlgo, *zHash; int nNode, wide; } aBig[] = {
    { "ring", NULL, 1700, 0 }, { "ring", "crc32", 1700, 0 },
    { "ring", "md5", 1700, 0 }, { "ketama", NULL, 1700, 0 },
    { "dalli", NULL, 1700, 0 }, { "test_crowded", NULL, 1700, 0 },
    { "ring", NULL, 33000, 1 },
  };
  ring_input *aIn = server_inputs(33000);
  for(size_t t=0; t<sizeof(aBig)/sizeof(aBig[0]); t++){
    char zWhat[80];
    ring *r = table_ring("big", aBig[t].zAlgo, aBig[t].zHash,
                         aBig[t].wide ? "8" : NULL, aIn, aBig[t].nNode, zWhat);
    if( r==NULL ) continue;
    CHECK(r->n_points>=RING_OWNER_TABLE_POINTS && r->owner_table==NULL
          && r->owner_due==r->n_points/RING_OWNER_TABLE_DUE,
          "%s: %u points, table %p due in %u lookups", zWhat, r->n_points,
          r->owner_table, r->owner_due);
    if( t==0 ) check_table_without_memory(r, zWhat);
    uint32_t nDue = r->owner_due;
    check_until_due(r, zWhat);
    check_lookups(r);
    CHECK(r->owner_table!=NULL && r->owner_due==0
          && r->owner_bytes==(aBig[t].wide ? 4u : 2u),
          "%s: after %u lookups, table %p (%u-byte entries)", zWhat, nDue,
          r->owner_table, r->owner_bytes);
    if( r->owner_table && r->owner_bytes==2 ){
      uint64_t nOne, nNear, nFar;
      count_escapes(r, &nOne, &nNear, &nFar);
      int bCrowded = r->config.algo==&crowded_algo;
      int bSmall = r->owner_shift==0;      /* crc32's 15 bits: no room */
      CHECK((bSmall ? nOne==0 : nOne>0) && nNear>0
            && (bCrowded ? nFar>0 : nFar==0),
            "%s: %llu one-point entries, %llu escapes near their estimate, "
            "%llu far", zWhat, (unsigned long long)nOne,
            (unsigned long long)nNear, (unsigned long long)nFar);
    }
    check_lookups(r);
    ring_release(r);
  }
  free(aIn);
}

/* ------------------------------------------------------ small rings */

/* Keys at, below and above every point of a ring of 128-bit points. */
static void check_lookups_low(const ring *r, const char *zWhat){
  for(uint32_t k=0; k<r->n_points; k++){
    uint64_t t = r->tokens[k], l = r->lows[k];
    uint64_t aKey[][2] = { {t, l-1}, {t, l}, {t, l+1}, {t-1, l}, {t+1, 0} };
    for(size_t i=0; i<sizeof(aKey)/sizeof(aKey[0]); i++){
      if( ring_lookup_low(r, aKey[i][0], aKey[i][1])
          !=naive_lookup_low(r, aKey[i][0], aKey[i][1]) ){
        CHECK(0, "%s: key %d at point %u", zWhat, (int)i, k);
        return;
      }
    }
  }
}

/* Keys at the first and the last position of every bucket of r's owner
** table: where its entries change. */
static void check_bucket_edges(const ring *r, const char *zWhat){
  for(uint64_t b=0; b<=r->owner_last; b++){
    uint64_t first = b << r->owner_shift;
    uint64_t last = ((b+1) << r->owner_shift) - 1;
    if( !lookup_right(r, first) || !lookup_right(r, last) ){
      CHECK(0, "%s: a key at an edge of bucket %llu", zWhat,
            (unsigned long long)b);
      return;
    }
  }
}

/* How many of r's 8-bit owner table entries are escapes. */
static uint64_t count_byte_escapes(const ring *r){
  const uint8_t *t = r->owner_table;
  uint64_t nEscape = 0;
  for(uint64_t b=0; b<=r->owner_last; b++){
    nEscape += (t[b] & OWNER_BYTE_ESCAPE)!=0;
  }
  return nEscape;
}

/*
** Rings of at most RING_OWNER_TABLE_SMALL points get an owner table too:
** 8 to 16 entries a point (fewer in a space too small for them), of 8
** bits on rings of up to OWNER_BYTE_NODES nodes, else of 16, made after RING_OWNER_TABLE_SMALL_DUE x n_points lookups without
** it; rings between that and RING_OWNER_TABLE_POINTS get none. Lookups
** (ring_lookup and the per-row ring_lookup_low) equal a binary search
** before, while and after it is made: one node, two points, the hashes of
** 15, 16 and 32 bits, every lookup rule that has points (successor,
** predecessor, nearest, above with 128-bit points), crowded points, in
** both widths, and OWNER_BYTE_NODES nodes and one more.
*/
static void check_small_rings(void){
  static const struct {
    const char *zAlgo, *zHash, *zVnodes;
    int nNode;
    unsigned nBytes;          /* the entries' width */
    int bOne;                 /* 16 bits: has one-point entries (-1: may) */
    int bFar;                 /* 16 bits: has escapes far from their
                              ** estimate */
  } aSmall[] = {
    { "ring", NULL, NULL, 100, 1, 0, 0 },
    { "ring", NULL, NULL, 1, 1, 0, 0 },
    { "ring", NULL, "1", 2, 1, 0, 0 },               /* two points */
    /* 15 and 16 bits: an entry for every position, no room for more */
    { "ring", "crc32", NULL, 100, 1, 0, 0 },
    { "ring", "crc16", NULL, 100, 1, 0, 0 },
    { "ring", "md5", NULL, 100, 1, 0, 0 },           /* 32 bits */
    { "ketama", NULL, NULL, 100, 1, 0, 0 },
    { "dalli", NULL, NULL, 100, 1, 0, 0 },           /* predecessor */
    { "haproxy", NULL, NULL, 100, 1, 0, 0 },         /* nearest */
    { "uhashring", NULL, NULL, 100, 1, 0, 0 },       /* above, 128 bits */
    { "test_edges", NULL, NULL, 10, 1, 0, 0 },
    { "test_crowded", NULL, NULL, 100, 1, 0, 0 },
    { "ring", NULL, "32768", 1, 1, 0, 0 },           /* the largest */
    { "ring", NULL, NULL, 128, 1, 0, 0 },            /* OWNER_BYTE_NODES */
    { "ring", NULL, NULL, 129, 2, 1, 0 },
    { "ring", NULL, NULL, 200, 2, 1, 0 },
    { "ring", NULL, "1", 200, 2, -1, 0 },
    { "ring", "crc32", NULL, 200, 2, 0, 0 },
    { "ring", "crc16", NULL, 200, 2, 0, 0 },
    { "ring", "md5", NULL, 200, 2, 1, 0 },
    { "ketama", NULL, NULL, 200, 2, 1, 0 },
    { "dalli", NULL, NULL, 200, 2, 1, 0 },
    { "haproxy", NULL, NULL, 200, 2, 1, 0 },
    { "uhashring", NULL, NULL, 200, 2, 1, 0 },
    { "test_edges", NULL, NULL, 200, 2, 0, 0 },       /* 256 positions */
    { "test_crowded", NULL, NULL, 200, 2, 1, 1 },
  };
  ring_input *aIn = server_inputs(200);
  for(size_t t=0; t<sizeof(aSmall)/sizeof(aSmall[0]); t++){
    char zWhat[80];
    ring *r = table_ring("small", aSmall[t].zAlgo, aSmall[t].zHash,
                         aSmall[t].zVnodes, aIn, aSmall[t].nNode, zWhat);
    if( r==NULL ) continue;
    uint32_t n = r->n_points;
    CHECK(n>0 && n<=RING_OWNER_TABLE_SMALL && r->owner_table==NULL
          && r->owner_due==RING_OWNER_TABLE_SMALL_DUE * n,
          "%s: %u points, table %p due in %u lookups", zWhat, n,
          r->owner_table, r->owner_due);
    uint32_t nDue = r->owner_due;
    check_until_due(r, zWhat);
    (void)ring_lookup(r, rnd());
    CHECK(r->owner_table!=NULL && r->owner_due==0
          && r->owner_bytes==aSmall[t].nBytes,
          "%s: after %u lookups, table %p (%u-byte entries)", zWhat, nDue,
          r->owner_table, r->owner_bytes);
    if( r->owner_table==NULL || r->owner_bytes!=aSmall[t].nBytes ){
      ring_release(r);
      continue;
    }
    unsigned space = ring_space_bits(&r->config);
    uint64_t nEntry = (uint64_t)1 << r->owner_bits;
    CHECK(r->owner_bits==space ? nEntry<16*(uint64_t)n
          : r->owner_bits<space && nEntry>=8*(uint64_t)n
            && nEntry<16*(uint64_t)n,
          "%s: %llu entries for %u points", zWhat,
          (unsigned long long)nEntry, n);
    /* One entry that is no owner for each bucket that holds a point. */
    uint64_t nHeld = 0;
    for(uint32_t k=0; k<n; k++){
      uint64_t b = r->positions[k] >> r->owner_shift;
      uint64_t bPrev = k ? r->positions[k-1] >> r->owner_shift : 0;
      if( b>r->owner_last ) b = r->owner_last;
      if( bPrev>r->owner_last ) bPrev = r->owner_last;
      nHeld += k==0 || b!=bPrev;
    }
    uint64_t nOne = 0, nNear = 0, nFar = 0;
    if( r->owner_bytes==1 ) nNear = count_byte_escapes(r);
    else count_escapes(r, &nOne, &nNear, &nFar);
    CHECK(nOne+nNear+nFar==nHeld, "%s: %llu entries not owners, %llu buckets "
          "with points", zWhat, (unsigned long long)(nOne+nNear+nFar),
          (unsigned long long)nHeld);
    CHECK(r->owner_bytes==1 || ((aSmall[t].bOne<0 || (nOne>0)==aSmall[t].bOne)
                                && (nFar>0)==aSmall[t].bFar),
          "%s: %llu one-point entries, %llu escapes near their estimate, "
          "%llu far", zWhat, (unsigned long long)nOne,
          (unsigned long long)nNear, (unsigned long long)nFar);
    int nFailBefore = nFail;
    check_lookups(r);
    check_bucket_edges(r, zWhat);
    CHECK(nFail==nFailBefore, "%s: lookups with the table", zWhat);
    if( r->lows ) check_lookups_low(r, zWhat);
    ring_release(r);
  }
  /* One point more: between the small rings and the big ones, no table. */
  char zWhat[80];
  ring *r = table_ring("between", "ring", NULL, "32769", aIn, 1, zWhat);
  if( r ){
    for(uint32_t i=0; i<4*r->n_points; i++) (void)ring_lookup(r, rnd());
    CHECK(r->n_points==RING_OWNER_TABLE_SMALL+1 && r->owner_table==NULL
          && r->owner_due==0, "%u points: table %p, due in %u", r->n_points,
          r->owner_table, r->owner_due);
    check_lookups(r);
    ring_release(r);
  }
  free(aIn);
}

int main(void){
  ring_config cfg;
  ring_config_default(&cfg);
  random_walk(cfg, 300);
  cfg.vnodes = 3;                  /* few points: sparse index buckets */
  random_walk(cfg, 300);
  cfg.vnodes = 1;
  cfg.hash = HASH_XXH64;
  cfg.seed = 12345;
  random_walk(cfg, 300);
  /* crc32's 15-bit space: thousands of points in 32,768 positions, so
  ** equal positions are common and their order (node name, then replica)
  ** is checked through the radix sort and the merge. */
  ring_config_default(&cfg);
  cfg.hash = HASH_CRC32;
  random_walk(cfg, 200);
  cfg.hash = HASH_MD5;             /* a 32-bit space */
  cfg.vnodes = 40;
  random_walk(cfg, 100);
  /* Rings of your own design: other labels and first points, and ties by
  ** join order, in crc32's small space so that ties are common. */
  ring_config_default(&cfg);
  cfg.hash = HASH_CRC32;
  unit_set_option(&cfg, "ties", "last");
  unit_set_option(&cfg, "label", "%d%s");
  unit_set_option(&cfg, "first", "0");
  random_walk(cfg, 300);
  unit_set_option(&cfg, "ties", "first");
  unit_set_option(&cfg, "label", "100%% %s:%d");
  random_walk(cfg, 300);
  unit_set_option(&cfg, "ties", "name");
  cfg.hash = HASH_MD5BE;
  unit_set_option(&cfg, "label", "%s-%d");
  random_walk(cfg, 100);
  check_other_bases();
  walk_registry();
  check_make_rules();
  check_big_rings();
  check_small_rings();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

/*
** tests/unit/lookup_rules_test.c: the lookup and tie rules of the points
** library (ring_points_place, ext/core/ring_points.c), on small rings
** worked by hand, without SQLite.
**
** A test algorithm builds its ring from a list of points given here (in
** the order made) with the rule under test, through ring_build, so the
** whole pipeline runs: ties, numbering, arc ends, units, the lookup
** index and the exact shares. The space is crc16's, positions 0 .. 65535.
** For each rule: keys below the first point, exactly on a point, just
** after one, between two, above the last and at the top; each point's
** token, arc end and replica number; the nodes' point counts and shares;
** ties under each tie rule; and every allocation failing in turn.
**
** Prints "N passed, N failed" and exits 1 if anything failed.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "geometry.h"
#include "unit.h"

/* The points the test algorithm makes (node index, position), in the
** order made, and the rule it places them with. */
typedef struct made_point {
  uint32_t node;
  uint64_t pos;
} made_point;

static const made_point *aMade;
static const uint64_t *aMadeLow;   /* 128-bit points: their low words */
static uint32_t nMade;
static ring_points_rule rule;

static int test_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  ring_point *a = ring_alloc(sizeof(ring_point) * nMade);
  if( a==NULL ) return RING_NOMEM;
  for(uint32_t i=0; i<nMade; i++){
    a[i].pos = aMade[i].pos;
    a[i].node = aMade[i].node;
  }
  int rc = aMadeLow ? ring_points_place_low(r, a, aMadeLow, nMade, &rule)
                    : ring_points_place(r, a, nMade, &rule);
  ring_dealloc(a);
  return rc;
}

static int64_t test_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 8;
}

static const ring_algo test_points = {
  .name = "test_points",
  .default_hash = HASH_CRC16,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .point_budget = test_budget,
  .build = test_build,
};

static const ring_algo test_table = {
  .name = "test_table",
  .default_hash = HASH_CRC16,
  .units = RING_UNITS_SLOTS,
  .unit_name = "slots",
  .point_budget = test_budget,
  .build = test_build,
};

/* Nodes a, b, c, joined in that order. */
static ring *build_abc(const ring_algo *alg, const made_point *a, uint32_t n,
                       ring_lookup_rule lookup, ring_ties ties,
                       uint32_t table){
  static const char *const azName[] = {"a", "b", "c"};
  ring_config cfg;
  ring_config_default(&cfg);
  cfg.algo = alg;
  cfg.hash = HASH_CRC16;
  ring_input in[3];
  memset(in, 0, sizeof(in));               /* no column values */
  for(uint32_t i=0; i<3; i++){
    in[i].name = azName[i];
    in[i].name_len = 1;
    in[i].weight = 1.0;
    in[i].id = i+1;
  }
  aMade = a;
  nMade = n;
  rule.lookup = lookup;
  rule.ties = ties;
  rule.table = table;
  ring *r = NULL;
  char zErr[200];
  int rc = ring_build(&cfg, in, 3, &r, zErr, sizeof(zErr));
  if( rc==RING_INVALID ) printf("cannot build: %s\n", zErr);
  return rc==RING_OK ? r : NULL;
}

/* The same for keys of 128 bits: aKey[i] is the top word, aLow[i] the
** low word (ring_lookup_low); and the walk of ch_replicas starts at the
** same unit as the owner's. */
static int owners_low_are(const ring *r, const uint64_t *aKey,
                          const uint64_t *aLow, size_t nKey,
                          const char *zWant){
  char z[64];
  int ok = 1;
  for(size_t i=0; i<nKey; i++){
    uint32_t k = ring_unit_of_low(r, aKey[i], aLow[i]);
    z[i] = r->nodes[ring_lookup_low(r, aKey[i], aLow[i])].name[0];
    ok &= r->owners[k]==ring_lookup_low(r, aKey[i], aLow[i]);
  }
  z[nKey] = 0;
  if( strcmp(z, zWant)!=0 ) printf("owners %s, want %s\n", z, zWant);
  return ok && strcmp(z, zWant)==0;
}

/* The owners of keys, one letter each, as a string ("aab..."). */
static int owners_are(const ring *r, const uint64_t *aKey, size_t nKey,
                      const char *zWant){
  char z[64];
  for(size_t i=0; i<nKey; i++) z[i] = r->nodes[ring_lookup(r, aKey[i])].name[0];
  z[nKey] = 0;
  if( strcmp(z, zWant)!=0 ) printf("owners %s, want %s\n", z, zWant);
  return strcmp(z, zWant)==0;
}

/* Units in order: the owner, token, arc end and replica number of each,
** as "a:1000-1999#0 ..." (token-end#replica). */
static int units_are(const ring *r, const char *zWant){
  char z[400];
  size_t n = 0;
  point_replicas pr;
  if( point_replicas_init(&pr, r)!=RING_OK ) return 0;
  for(uint32_t k=0; k<r->n_points; k++){
    uint32_t rep = 0;
    if( point_replica(&pr, k, &rep)!=RING_OK ) rep = 999;
    n += (size_t)snprintf(z+n, sizeof(z)-n, "%s%s:%llu-%llu#%u", k ? " " : "",
                          r->nodes[r->owners[k]].name,
                          (unsigned long long)ring_point_token(r, k),
                          (unsigned long long)r->positions[k], rep);
  }
  point_replicas_free(&pr);
  if( strcmp(z, zWant)!=0 ) printf("units %s\n want %s\n", z, zWant);
  return strcmp(z, zWant)==0;
}

/* Each node's points and its share in 65536ths. */
static int counts_are(const ring *r, uint32_t pa, uint32_t pb, uint32_t pc,
                      double sa, double sb, double sc){
  const uint32_t aP[3] = {pa, pb, pc};
  const double aS[3] = {sa, sb, sc};
  int ok = 1;
  for(int i=0; i<3; i++){
    if( r->nodes[i].points!=aP[i] || r->nodes[i].share!=aS[i]/65536.0 ){
      printf("node %s: %u points, share %.1f/65536\n", r->nodes[i].name,
             r->nodes[i].points, r->nodes[i].share*65536.0);
      ok = 0;
    }
  }
  return ok;
}

/*
** The ring most cases use: a makes 1000 and 3000, b makes 2000 and 3000
** (a tie with a), c makes 65000. Under the name and first-join tie rules
** a keeps 3000 (b's is dropped): points 1000 a, 2000 b, 3000 a, 65000 c.
*/
static const made_point aRing[] = {
  {0, 1000}, {0, 3000}, {1, 2000}, {1, 3000}, {2, 65000},
};
#define N_RING (sizeof(aRing)/sizeof(aRing[0]))

/* The keys asked about: below the first point, on it, after it, on and
** around the others, above the last, the top. */
static const uint64_t aKey[] = {
  0, 999, 1000, 1001, 1999, 2000, 2999, 3000, 3001, 64999, 65000, 65001,
  65535,
};
#define N_KEY (sizeof(aKey)/sizeof(aKey[0]))

static void test_successor(void){
  ring *r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_SUCCESSOR,
                      RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /*        keys: 0 999 1000 1001 1999 2000 2999 3000 3001 64999 65000 65001 65535 */
  CHECK( owners_are(r, aKey, N_KEY, "aaabbbaaccca" "a") );
  CHECK( r->tokens==NULL );          /* the positions are the points */
  CHECK( units_are(r, "a:1000-1000#0 b:2000-2000#0 a:3000-3000#1 "
                      "c:65000-65000#0") );
  /* a: (65000, 1000] and (2000, 3000]; b: (1000, 2000]; c: (3000, 65000] */
  CHECK( counts_are(r, 2, 1, 1, 536+1000+1000, 1000, 62000) );
  ring_release(r);

  /* Ties to the node that joined last: b keeps 3000, numbered 1 (its
  ** second point made), and a has one point. */
  r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_SUCCESSOR,
                RING_TIES_LAST, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_are(r, aKey, N_KEY, "aaabbbbbccca" "a") );
  CHECK( units_are(r, "a:1000-1000#0 b:2000-2000#0 b:3000-3000#1 "
                      "c:65000-65000#0") );
  CHECK( counts_are(r, 1, 2, 1, 536+1000, 2000, 62000) );
  ring_release(r);

  /* First to join: a, as under name order. */
  r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_SUCCESSOR,
                RING_TIES_FIRST, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( units_are(r, "a:1000-1000#0 b:2000-2000#0 a:3000-3000#1 "
                      "c:65000-65000#0") );
  ring_release(r);
}

/*
** A node's own equal points: the first made stays, and the numbers skip
** the dropped one. c makes 500, 500, 700, and a makes 500 too. Ties to
** the last joined: c keeps its first 500 (number 0) and 700 (number 1).
** Ties by name: a keeps 500, and c only 700 (number 0).
*/
static void test_own_ties(void){
  static const made_point aOwn[] = {
    {2, 500}, {2, 500}, {2, 700}, {1, 600}, {0, 500},
  };
  ring *r = build_abc(&test_points, aOwn, 5, RING_LOOKUP_SUCCESSOR,
                      RING_TIES_LAST, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /* Joined last: c keeps 500 (its first made), then 600 b, 700 c. */
  CHECK( units_are(r, "c:500-500#0 b:600-600#0 c:700-700#1") );
  CHECK( r->nodes[0].points==0 && r->nodes[1].points==1
      && r->nodes[2].points==2 );
  ring_release(r);

  r = build_abc(&test_points, aOwn, 5, RING_LOOKUP_SUCCESSOR, RING_TIES_NAME,
                0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( units_are(r, "a:500-500#0 b:600-600#0 c:700-700#0") );
  ring_release(r);
}

static void test_above(void){
  ring *r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_ABOVE,
                      RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /* The first point strictly above: a key on a point goes to the next.
  **        keys: 0 999 1000 1001 1999 2000 2999 3000 3001 64999 65000 65001 65535 */
  CHECK( owners_are(r, aKey, N_KEY, "aabbbaaccca" "aa") );
  /* Point p owns [previous point, p-1]: its arc ends at p-1. */
  CHECK( units_are(r, "a:1000-999#0 b:2000-1999#0 a:3000-2999#1 "
                      "c:65000-64999#0") );
  /* a: [65000, 999] and [2000, 2999]; b: [1000, 1999]; c: [3000, 64999] */
  CHECK( counts_are(r, 2, 1, 1, 536+1000+1000, 1000, 62000) );
  ring_release(r);

  /* A point at 0 owns [the last point, top]: its end wraps to top, so it
  ** is the last unit. a at 0, b at 100. */
  static const made_point aZero[] = { {0, 0}, {1, 100} };
  static const uint64_t aZeroKey[] = {0, 99, 100, 65535};
  r = build_abc(&test_points, aZero, 2, RING_LOOKUP_ABOVE, RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_are(r, aZeroKey, 4, "bbaa") );
  CHECK( units_are(r, "b:100-99#0 a:0-65535#0") );
  CHECK( counts_are(r, 1, 1, 0, 65436, 100, 0) );
  ring_release(r);
}

/*
** 128-bit points (ring_points_place_low, uhashring's default ring), top
** words in crc16's space and low words beside them, under the strictly
** above rule. a makes (1000, 500) and (20000, 0), b (1000, 900) and
** (3000, 7), c (3000, 7): b and c tie in both words, and c, joined last,
** keeps it. a's and b's points at 1000 differ only in their low words:
** both stay, in the order of their low words. A key goes to the first
** point strictly above it in 128 bits: at top word 1000 its low word
** decides (values worked by hand); ring_lookup (no low word) places a key
** as if its low word were all ones.
*/
static void test_above_low(void){
  static const made_point aWide[] = {
    {0, 1000}, {1, 1000}, {2, 3000}, {1, 3000}, {0, 20000},
  };
  static const uint64_t aWideLow[] = { 500, 900, 7, 7, 0 };
  static const uint64_t aTop[] = {
    999, 1000, 1000, 1000, 1000, 1000, 1000, 3000, 3000, 19999, 20000,
    65535,
  };
  static const uint64_t aLow[] = {
    UINT64_MAX, 0, 499, 500, 899, 900, UINT64_MAX, 6, 7, UINT64_MAX, 0,
    UINT64_MAX,
  };
  aMadeLow = aWideLow;
  ring *r = build_abc(&test_points, aWide, 5, RING_LOOKUP_ABOVE,
                      RING_TIES_LAST, 0);
  aMadeLow = NULL;
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_low_are(r, aTop, aLow, 12, "aaabbcccaaaa") );
  CHECK( r->nodes[ring_lookup(r, 1000)].name[0]=='c' );
  CHECK( units_are(r, "a:1000-999#0 b:1000-999#0 c:3000-2999#0 "
                      "a:20000-19999#1") );
  CHECK( r->lows && r->lows[0]==500 && r->lows[1]==900 && r->lows[2]==7
      && r->lows[3]==0 );
  /* Over the top words b's arc is empty: a: [0, 999] and [3000, 65535];
  ** c: [1000, 2999]. */
  CHECK( counts_are(r, 2, 1, 1, 1000+62536, 0, 2000) );
  ring_release(r);

  /* A run of equal top words at 0, which under the strictly-above rule
  ** wraps to the last units: a (0, 10), b (0, 20), c (100, 0). Keys at 0
  ** walk back across the wrap; a key above every point wraps to a. */
  static const made_point aZero[] = { {0, 0}, {1, 0}, {2, 100} };
  static const uint64_t aZeroLow[] = { 10, 20, 0 };
  static const uint64_t aZeroTop[] = { 0, 0, 0, 65535 };
  static const uint64_t aZeroKeyLow[] = { 5, 10, 20, UINT64_MAX };
  aMadeLow = aZeroLow;
  r = build_abc(&test_points, aZero, 3, RING_LOOKUP_ABOVE, RING_TIES_LAST, 0);
  aMadeLow = NULL;
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_low_are(r, aZeroTop, aZeroKeyLow, 4, "abca") );
  CHECK( units_are(r, "c:100-99#0 a:0-65535#0 b:0-65535#0") );
  ring_release(r);
}

static void test_predecessor(void){
  ring *r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_PREDECESSOR,
                      RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /* The last point at or below; below the first: the last point (c).
  **        keys: 0 999 1000 1001 1999 2000 2999 3000 3001 64999 65000 65001 65535 */
  CHECK( owners_are(r, aKey, N_KEY, "ccaaabbaaacc" "c") );
  /* Point p owns [p, next point - 1]; c's end (999) wraps past top, so
  ** c is unit 0. */
  CHECK( units_are(r, "c:65000-999#0 a:1000-1999#0 b:2000-2999#0 "
                      "a:3000-64999#1") );
  /* a: [1000, 1999] and [3000, 64999]; b: [2000, 2999]; c: [65000, 999] */
  CHECK( counts_are(r, 2, 1, 1, 1000+62000, 1000, 536+1000) );
  /* Arcs (ch_arcs): unit 0's runs from after the last end round to 999. */
  uint64_t s = 0, e = 0;
  CHECK( point_arc(r, 65535, 0, &s, &e) && s==65000 && e==999 );
  CHECK( point_arc(r, 65535, 3, &s, &e) && s==3000 && e==64999 );
  ring_release(r);

  /* A point at 0: the highest point owns up to top, nothing wraps. */
  static const made_point aZero[] = { {0, 0}, {1, 100} };
  static const uint64_t aZeroKey[] = {0, 99, 100, 65535};
  r = build_abc(&test_points, aZero, 2, RING_LOOKUP_PREDECESSOR,
                RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_are(r, aZeroKey, 4, "aabb") );
  CHECK( units_are(r, "a:0-99#0 b:100-65535#0") );
  ring_release(r);

  /* Ties to the last joined under predecessor: b keeps 3000 and owns
  ** [2000, 64999]. */
  r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_PREDECESSOR,
                RING_TIES_LAST, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_are(r, aKey, N_KEY, "ccaaabbbbbcc" "c") );
  CHECK( counts_are(r, 1, 2, 1, 1000, 63000, 1536) );
  ring_release(r);
}

static void test_nearest(void){
  ring *r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_NEAREST_BEFORE,
                      RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /* Ends half-way to the next point, rounded down: 1000 -> 1500, 2000 ->
  ** 2500, 3000 -> 34000 (gap 62000), 65000 -> 65768 - 65536 = 232 (gap
  ** 1536, across the top), so c is unit 0. */
  CHECK( units_are(r, "c:65000-232#0 a:1000-1500#0 b:2000-2500#0 "
                      "a:3000-34000#1") );
  static const uint64_t aNear[] = {
    0,      /* 536 from c, 1000 from a: c */
    232,    /* 768 from each: the one before, c */
    233,    /* a */
    1000, 1500, 1501, 2500, 2501,
    34000,  /* 31000 from 3000 and from 65000: the one before, a */
    34001, 65535,
  };
  CHECK( owners_are(r, aNear, 11, "ccaaabbaacc") );
  CHECK( counts_are(r, 2, 1, 1, 1268+31500, 1000, 31535+233) );
  ring_release(r);

  r = build_abc(&test_points, aRing, N_RING, RING_LOOKUP_NEAREST_AFTER,
                RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  /* Half-way keys go to the point after: ends one lower. */
  CHECK( units_are(r, "c:65000-231#0 a:1000-1499#0 b:2000-2499#0 "
                      "a:3000-33999#1") );
  CHECK( owners_are(r, aNear, 11, "caaabbaaccc") );
  ring_release(r);

  /* One point owns everything. */
  static const made_point aOne[] = { {1, 40000} };
  static const uint64_t aOneKey[] = {0, 40000, 65535};
  r = build_abc(&test_points, aOne, 1, RING_LOOKUP_NEAREST_BEFORE,
                RING_TIES_NAME, 0);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( owners_are(r, aOneKey, 3, "bbb") );
  CHECK( counts_are(r, 0, 1, 0, 0, 65536, 0) );
  ring_release(r);
}

static void test_table_rule(void){
  /* 64 entries, entry i at i * floor(65535/64) = i * 1023: entry 0 (0) ->
  ** a (1000), entry 1 (1023) -> b (2000), entry 2 (2046) -> a (3000),
  ** entries 3 .. 63 (3069 .. 64449) -> c (65000). A key goes to entry
  ** key mod 64. */
  ring *r = build_abc(&test_table, aRing, N_RING, RING_LOOKUP_TABLE,
                      RING_TIES_NAME, 64);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( r->n_units==64 && r->n_points==0 );
  CHECK( r->unit_owners[0]==0 && r->unit_owners[1]==1
      && r->unit_owners[2]==0 && r->unit_owners[3]==2
      && r->unit_owners[63]==2 );
  static const uint64_t aTableKey[] = {0, 1, 2, 3, 64, 65, 66, 127, 65535};
  CHECK( owners_are(r, aTableKey, 9, "abacabacc") );
  CHECK( counts_are(r, 2, 1, 61, 2048, 1024, 61*1024) );
  ring_release(r);

  /* The step is floor(top / entries), 1023, not 2^16 / 64: with points
  ** at 1023 (a) and 1024 (b), entry 1 is a's; every other entry is a's
  ** too (0, and from 2046 on the wrap). */
  static const made_point aStep[] = { {0, 1023}, {1, 1024} };
  r = build_abc(&test_table, aStep, 2, RING_LOOKUP_TABLE, RING_TIES_NAME, 64);
  CHECK( r!=NULL );
  if( r==NULL ) return;
  CHECK( r->nodes[0].points==64 && r->nodes[1].points==0 );
  ring_release(r);

  /* No point at all: no table either, and the build says so. */
  CHECK( build_abc(&test_table, aStep, 0, RING_LOOKUP_TABLE, RING_TIES_NAME,
                   64)==NULL );
}

/* How many allocations fail in turn before aRing builds under lookup
** (with aMadeLow's low words when set), each failure leaking nothing. */
static int oom_faults(const ring_algo *alg, ring_lookup_rule lookup){
  int bOk = 0, nFault = 0;
  for(int n=0; n<100 && !bOk; n++){
    int nBefore = nLive;
    nUntilFail = n;
    ring *r = build_abc(alg, aRing, N_RING, lookup, RING_TIES_LAST, 16);
    nUntilFail = -1;
    if( r ){
      bOk = 1;
      ring_release(r);
    }else{
      nFault++;
    }
    CHECK( nLive==nBefore );
  }
  return bOk ? nFault : -1;
}

/* Every allocation of each rule's build failing in turn: RING_NOMEM, and
** nothing left allocated. */
static void test_oom(void){
  static const ring_lookup_rule aRule[] = {
    RING_LOOKUP_SUCCESSOR, RING_LOOKUP_ABOVE, RING_LOOKUP_PREDECESSOR,
    RING_LOOKUP_NEAREST_BEFORE, RING_LOOKUP_NEAREST_AFTER, RING_LOOKUP_TABLE,
  };
  for(size_t i=0; i<sizeof(aRule)/sizeof(aRule[0]); i++){
    const ring_algo *alg = aRule[i]==RING_LOOKUP_TABLE ? &test_table
                                                       : &test_points;
    CHECK( oom_faults(alg, aRule[i])>3 );
  }
  /* 128-bit points: their low words' array fails too, one more. */
  static const uint64_t aRingLow[N_RING] = { 1, 2, 3, 4, 5 };
  int nPlain = oom_faults(&test_points, RING_LOOKUP_ABOVE);
  aMadeLow = aRingLow;
  int nWide = oom_faults(&test_points, RING_LOOKUP_ABOVE);
  aMadeLow = NULL;
  CHECK( nPlain>3 && nWide==nPlain+1 );
}

int main(void){
  ring_set_allocator(test_malloc, test_free);
  test_successor();
  test_own_ties();
  test_above();
  test_above_low();
  test_predecessor();
  test_nearest();
  test_table_rule();
  test_oom();
  return unit_summary();
}

/*
** tests/unit/geometry_test.c: unit tests of the geometry the table-valued
** functions list (ext/core/geometry.c), without SQLite.
**
**   - ranges: rows and shares worked by hand in 15-, 32- and 64-bit spaces;
**   - arcs, diffs and replica walks on small hand-made rings, with the
**     expected values worked by hand (in the comments);
**   - the same on built rings of the 15-bit crc32 space against brute force:
**     every one of the 32,768 positions is looked up in each ring, and arcs
**     and diff runs must cover exactly the positions they claim, with the
**     owners the lookups give, in the fewest runs;
**   - point replica numbers against the rules of ring ("N#i") and ketama
**     (MD5 "N-i", word w, through nettle directly), and for every points
**     algorithm against its own node_positions;
**   - every allocation failing in turn: RING_NOMEM and no leak.
**
** Prints "N passed, N failed" and exits 1 if anything failed.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "geometry.h"
#include "unit.h"

#define SPACE15 32768          /* positions of the crc32 key hash */
#define TOP15   32767

/* ------------------------------------------------------------ helpers */

/* A ring of algorithm zAlgo under crc32 over names (weight 1, join order
** as given); vnodes and table when not 0. NULL if it cannot be built. */
static ring *build(const char *zAlgo, hash_id h, int vnodes, uint32_t table,
                   const char *const *azName, uint32_t n){
  ring_config cfg;
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name(zAlgo));
  cfg.hash = h;
  if( vnodes ) cfg.vnodes = vnodes;
  if( table ){
    char zTable[24];
    snprintf(zTable, sizeof(zTable), "%u", table);
    unit_set_option(&cfg, "table", zTable);
  }
  ring_input in[16];
  memset(in, 0, sizeof(in));               /* no column values */
  for(uint32_t i=0; i<n; i++){
    in[i].name = azName[i];
    in[i].name_len = (uint32_t)strlen(azName[i]);
    in[i].weight = 1.0;
    in[i].id = i+1;
  }
  ring *r = NULL;
  char zErr[200];
  if( ring_build(&cfg, in, n, &r, zErr, sizeof(zErr))!=RING_OK ){
    printf("cannot build %s: %s\n", zAlgo, zErr);
    return NULL;
  }
  return r;
}

/* A hand-made points ring in the crc32 space: nodes named azName (sorted),
** points at aPos owned by aOwn. The arrays stay the caller's. */
typedef struct hand_ring {
  ring r;
  ring_node aNode[8];
} hand_ring;

static ring *hand_points(hand_ring *h, const char *const *azName,
                         uint32_t nNode, uint64_t *aPos, uint32_t *aOwn,
                         uint32_t nPoint){
  memset(h, 0, sizeof(*h));
  ring_config_default(&h->r.config);
  options_set_algorithm(&h->r.config, ring_algorithm_from_name("ring"));
  h->r.config.hash = HASH_CRC32;
  h->r.n_nodes = nNode;
  h->r.nodes = h->aNode;
  for(uint32_t i=0; i<nNode; i++){
    h->aNode[i].name = azName[i];
    h->aNode[i].name_len = (uint32_t)strlen(azName[i]);
    h->aNode[i].weight = 1.0;
  }
  for(uint32_t k=0; k<nPoint; k++) h->aNode[aOwn[k]].points++;
  h->r.n_points = nPoint;
  h->r.positions = aPos;
  h->r.owners = aOwn;
  h->r.version = -1;
  return &h->r;
}

/* The owner of every position of a 15-bit ring, by lookup. */
static void owners_of(const ring *r, uint32_t *aOwner){
  for(uint32_t p=0; p<SPACE15; p++) aOwner[p] = ring_lookup(r, p);
}

/* ------------------------------------------------------------- ranges */

static void test_ranges(void){
  pos_range a[2];
  /* 15 bits: only a range through top -> 0 is cut. */
  CHECK( range_rows(TOP15, 100, 200, a)==1 && a[0].start==100 && a[0].end==200 );
  CHECK( range_rows(TOP15, 30001, 100, a)==2
         && a[0].start==30001 && a[0].end==TOP15
         && a[1].start==0 && a[1].end==100 );
  CHECK( range_rows(TOP15, 0, TOP15, a)==1 && a[0].start==0 && a[0].end==TOP15 );
  CHECK( range_rows(TOP15, TOP15, 0, a)==2 && a[0].start==TOP15
         && a[0].end==TOP15 && a[1].start==0 && a[1].end==0 );
  CHECK( range_rows(TOP15, 101, 100, a)==2 && a[0].start==101
         && a[1].end==100 );                        /* the whole space */
  /* 32 bits: the same at 2^32-1. */
  CHECK( range_rows(0xffffffffULL, 0xfffffffbULL, 4, a)==2
         && a[0].end==0xffffffffLL && a[1].start==0 && a[1].end==4 );
  /* 64 bits: signed values drop after 2^63-1, not after 2^64-1. */
  CHECK( range_rows(UINT64_MAX, (uint64_t)INT64_MAX-9, (uint64_t)INT64_MAX+6, a)==2
         && a[0].start==INT64_MAX-9 && a[0].end==INT64_MAX
         && a[1].start==INT64_MIN && a[1].end==INT64_MIN+5 );
  CHECK( range_rows(UINT64_MAX, UINT64_MAX-1, 3, a)==1
         && a[0].start==-2 && a[0].end==3 );        /* -2..3: no drop */
  CHECK( range_rows(UINT64_MAX, 5, 4, a)==2 && a[0].start==5
         && a[0].end==INT64_MAX && a[1].start==INT64_MIN && a[1].end==4 );

  /* Shares: counts of positions over 2^b. */
  pos_range g = {30001, TOP15};
  CHECK( range_share(TOP15, &g)==2767.0/SPACE15 );
  g.start = 0;
  CHECK( range_share(TOP15, &g)==1.0 );
  g.start = INT64_MIN;
  g.end = INT64_MAX;
  CHECK( range_share(UINT64_MAX, &g)==1.0 );       /* 2^64 positions */
  g.start = g.end = 7;
  CHECK( range_share(UINT64_MAX, &g)==0x1p-64 );
  /* 32768 = 3*10922 + 2: classes 0 and 1 mod 3 have 10923, class 2 10922 */
  CHECK( class_share(TOP15, 0, 3)==10923.0/SPACE15 );
  CHECK( class_share(TOP15, 1, 3)==10923.0/SPACE15 );
  CHECK( class_share(TOP15, 2, 3)==10922.0/SPACE15 );
  CHECK( class_share(TOP15, 5, 65537)==1.0/SPACE15 );
  CHECK( class_share(UINT64_MAX, 0, 1)==1.0 );
}

/* --------------------------------------------------------------- arcs */

static void test_hand_arcs(void){
  static const char *const azName[] = {"a", "b", "c", "d"};
  hand_ring h;
  uint64_t aPos[] = {10, 20, 20, 30000};
  uint32_t aOwn[] = {0, 1, 2, 3};
  ring *r = hand_points(&h, azName, 4, aPos, aOwn, 4);
  uint64_t s, e;
  CHECK( ring_space_top(r)==TOP15 );
  /* point 0 owns (30000, 10]: across the wrap */
  CHECK( point_arc(r, TOP15, 0, &s, &e)==1 && s==30001 && e==10 );
  CHECK( point_arc(r, TOP15, 1, &s, &e)==1 && s==11 && e==20 );
  CHECK( point_arc(r, TOP15, 2, &s, &e)==0 );              /* tied with point 1 */
  CHECK( point_arc(r, TOP15, 3, &s, &e)==1 && s==21 && e==30000 );

  uint64_t aOne[] = {42};
  uint32_t aOwnOne[] = {0};
  r = hand_points(&h, azName, 1, aOne, aOwnOne, 1);
  CHECK( point_arc(r, TOP15, 0, &s, &e)==1 && s==43 && e==42 );   /* everything */
  aOne[0] = TOP15;
  CHECK( point_arc(r, TOP15, 0, &s, &e)==1 && s==0 && e==TOP15 );
}

/*
** The arcs of a built ring against its lookups: every position in exactly
** one arc row, owned by the arc's point's node, and each node's arc
** shares summing to the share the ring core counts.
*/
static void check_arcs_brute(const ring *r){
  static uint32_t aOwner[SPACE15];
  static uint8_t aCover[SPACE15];
  double aShare[16] = {0};
  owners_of(r, aOwner);
  memset(aCover, 0, sizeof(aCover));
  uint64_t top = ring_space_top(r);
  int bOwnerOk = 1, bOrderOk = 1;
  for(uint32_t k=0; k<r->n_points; k++){
    uint64_t s, e;
    pos_range a[2];
    if( !point_arc(r, top, k, &s, &e) ) continue;
    int n = range_rows(top, s, e, a);
    for(int i=0; i<n; i++){
      if( a[i].start>a[i].end ) bOrderOk = 0;
      aShare[r->owners[k]] += range_share(top, &a[i]);
      for(int64_t p=a[i].start; p<=a[i].end; p++){
        aCover[p]++;
        if( aOwner[p]!=r->owners[k] ) bOwnerOk = 0;
      }
    }
  }
  int bCoverOk = 1;
  for(uint32_t p=0; p<SPACE15; p++) bCoverOk &= aCover[p]==1;
  CHECK( bOwnerOk );
  CHECK( bOrderOk );
  CHECK( bCoverOk );
  for(uint32_t n=0; n<r->n_nodes; n++) CHECK( aShare[n]==r->nodes[n].share );
}

static void test_brute_arcs(void){
  static const char *const azName[] = {"a", "b", "c", "d", "e"};
  /* 1600 points in 32768 positions: some tie (checked below). */
  ring *r = build("ring", HASH_CRC32, 320, 0, azName, 5);
  uint32_t nTie = 0;
  for(uint32_t k=1; k<r->n_points; k++) nTie += r->positions[k]==r->positions[k-1];
  CHECK( nTie>0 );
  check_arcs_brute(r);
  ring_release(r);
  r = build("ring", HASH_CRC32, 1, 0, azName, 1);          /* one point */
  check_arcs_brute(r);
  ring_release(r);
}

/* ----------------------------------------------------- point replicas */

/*
** A ring-algorithm ring's replica numbers against its rule: point k of
** node N with replica i sits at hash("N#i"); each node's replicas are
** 1..points once each; a node's points at one position go in replica
** order. Returns how many points tie with an earlier one of their node.
*/
static uint32_t check_ring_replicas(const ring *r){
  point_replicas pr;
  CHECK( point_replicas_init(&pr, r)==RING_OK );
  uint32_t *aRep = malloc(sizeof(uint32_t) * r->n_points);
  uint32_t *aSeen = calloc(r->n_nodes, sizeof(uint32_t) * (RING_MAX_VNODES+1));
  int bRcOk = 1, bPosOk = 1, bTieOk = 1, bRangeOk = 1;
  uint32_t nOwnTie = 0;
  for(uint32_t k=0; k<r->n_points; k++){
    uint32_t i = 0, n = r->owners[k];
    bRcOk &= point_replica(&pr, k, &i)==RING_OK;
    aRep[k] = i;
    if( i<1 || i>r->nodes[n].points ){ bRangeOk = 0; continue; }
    aSeen[n*(RING_MAX_VNODES+1) + i]++;
    char label[32];
    int len = snprintf(label, sizeof(label), "%s#%u", r->nodes[n].name, i);
    uint64_t want = hash_bytes(r->config.hash, r->config.seed, label, (size_t)len);
    if( want!=r->positions[k] ) bPosOk = 0;
    for(uint32_t j=k; j>0 && r->positions[j-1]==r->positions[k]; j--){
      if( r->owners[j-1]!=n ) continue;
      nOwnTie++;
      if( aRep[j-1]>=i ) bTieOk = 0;
    }
  }
  int bOnceOk = 1;
  for(uint32_t n=0; n<r->n_nodes; n++){
    for(uint32_t i=1; i<=r->nodes[n].points; i++){
      bOnceOk &= aSeen[n*(RING_MAX_VNODES+1) + i]==1;
    }
  }
  CHECK( bRcOk );
  CHECK( bRangeOk );
  CHECK( bPosOk );
  CHECK( bOnceOk );
  CHECK( bTieOk );
  free(aRep);
  free(aSeen);
  point_replicas_free(&pr);
  return nOwnTie;
}

static void test_point_replicas(void){
  static const char *const azName[] = {"a", "b", "c", "d", "e"};
  ring *r = build("ring", HASH_CRC32, 320, 0, azName, 5);
  check_ring_replicas(r);
  ring_release(r);
  /* 8000 points of two nodes in 32768 positions: some tie with their own
  ** node's (112 of them). */
  r = build("ring", HASH_CRC32, 4000, 0, azName, 2);
  CHECK( check_ring_replicas(r)>0 );
  ring_release(r);
  r = build("ring", HASH_XXH3, 160, 0, azName, 5);
  check_ring_replicas(r);
  ring_release(r);

  /* ketama: replica 4i+w is word w (little-endian) of MD5("N-i"). */
  r = build("ketama", HASH_MD5, 0, 0, azName, 4);
  point_replicas pr;
  CHECK( point_replicas_init(&pr, r)==RING_OK );
  int bRcOk = 1, bPosOk = 1;
  for(uint32_t k=0; k<r->n_points; k++){
    uint32_t rep = 0;
    bRcOk &= point_replica(&pr, k, &rep)==RING_OK;
    char label[32];
    int len = snprintf(label, sizeof(label), "%s-%u",
                       r->nodes[r->owners[k]].name, rep/4);
    struct md5_ctx ctx;
    uint8_t d[16];
    md5_init(&ctx);
    md5_update(&ctx, (size_t)len, (const uint8_t *)label);
    md5_digest(&ctx, 16, d);
    const uint8_t *b = d + 4*(rep%4);
    uint64_t want = (uint32_t)b[0] | (uint32_t)b[1]<<8 | (uint32_t)b[2]<<16
                  | (uint32_t)b[3]<<24;
    if( want!=r->positions[k] ) bPosOk = 0;
  }
  CHECK( bRcOk && r->n_points==4*160 && bPosOk );
  point_replicas_free(&pr);
  ring_release(r);
}

/*
** Every registered points algorithm, under its default hash: the replica
** number of point k names the entry of its node's node_positions list
** whose token is point k's (ring_point_token), each entry once (for rings
** of ring_points_place, which keep the numbers: each node's 0 .. points-1
** once; the generated tests check them against models). A
** numbering off by one, or ties of a node taken in the wrong order, would
** point at another token or at one entry twice.
*/
static void test_point_replicas_every_algo(void){
  static const char *const azName[] = {"a", "b", "c", "d", "e"};
  int nAlgo = 0;
  for(int i=0; ring_algos[i]; i++){
    const ring_algo *alg = ring_algos[i];
    if( alg->units!=RING_UNITS_POINTS ) continue;
    /* Nodes whose columns are required (cassandra's tokens) cannot be
    ** made of names: algos_test.c tests those. */
    if( alg->columns && alg->columns[0].required ) continue;
    nAlgo++;
    ring *r = build(alg->name, alg->default_hash, 0, 0, azName, 5);
    if( r==NULL ){
      CHECK( r!=NULL );
      continue;
    }
    point_replicas pr;
    CHECK( point_replicas_init(&pr, r)==RING_OK );
    uint64_t *aPos = malloc(sizeof(uint64_t) * r->n_points);
    uint8_t *aUsed = calloc(r->n_points, 1);
    uint32_t *aFirst = calloc(r->n_nodes + 1, sizeof(uint32_t));
    for(uint32_t n=1; n<=r->n_nodes; n++){
      aFirst[n] = aFirst[n-1] + r->nodes[n-1].points;
    }
    int bOk = 1;
    for(uint32_t k=0; k<r->n_points && bOk && r->replicas; k++){
      /* ring_points_place's numbers: each node's 0 .. points-1, once. */
      uint32_t n = r->owners[k], rep = 0;
      if( point_replica(&pr, k, &rep)!=RING_OK || rep>=r->nodes[n].points
       || aUsed[aFirst[n]+rep]++ ){
        bOk = 0;
      }
    }
    for(uint32_t k=0; k<r->n_points && bOk && !r->replicas; k++){
      uint32_t n = r->owners[k], rep = 0;
      uint32_t first = alg->node_positions(r, n, aPos);
      if( point_replica(&pr, k, &rep)!=RING_OK || rep<first
          || rep-first>=r->nodes[n].points ){
        bOk = 0;
        break;
      }
      uint32_t j = rep - first;
      if( aPos[j]!=ring_point_token(r, k) || aUsed[aFirst[n]+j]++ ) bOk = 0;
    }
    if( !bOk ) printf("replica numbers of %s:\n", alg->name);
    CHECK( bOk );
    free(aPos);
    free(aUsed);
    free(aFirst);
    point_replicas_free(&pr);
    ring_release(r);
  }
  CHECK( nAlgo>=2 );
}

/* -------------------------------------------------------------- diffs */

/* The runs of hand rings old and new; *pn gets their count. */
static diff_run *hand_diff(const ring *a, const ring *b, uint32_t *pn){
  int64_t *aMap = diff_node_map(a, b);
  diff_run *aRun = NULL;
  CHECK( aMap!=NULL );
  CHECK( diff_point_runs(a, b, aMap, &aRun, pn)==RING_OK );
  ring_dealloc(aMap);
  return aRun;
}

static int run_is(const diff_run *x, uint64_t s, uint64_t e, uint32_t src,
                  uint32_t dst){
  return x->s==s && x->e==e && x->src==src && x->dst==dst;
}

static void test_hand_diff(void){
  static const char *const azAB[] = {"A", "B"};
  static const char *const azABC[] = {"A", "B", "C"};
  static const char *const azBonly[] = {"B"};
  hand_ring ho, hn;
  uint32_t n;
  diff_run *aRun;

  /* C joins at 150: (100, 150] goes from B to C; nothing else moves. */
  uint64_t p1o[] = {100, 200};       uint32_t o1o[] = {0, 1};
  uint64_t p1n[] = {100, 150, 200};  uint32_t o1n[] = {0, 2, 1};
  aRun = hand_diff(hand_points(&ho, azAB, 2, p1o, o1o, 2),
                   hand_points(&hn, azABC, 3, p1n, o1n, 3), &n);
  CHECK( n==1 && run_is(&aRun[0], 101, 150, 1, 2) );
  ring_dealloc(aRun);

  /* A's one point goes to B: (30000, 100], across the wrap, A -> B. */
  uint64_t p2[] = {100, 30000};
  uint32_t o2o[] = {0, 1}, o2n[] = {1, 1};
  aRun = hand_diff(hand_points(&ho, azAB, 2, p2, o2o, 2),
                   hand_points(&hn, azAB, 2, p2, o2n, 2), &n);
  CHECK( n==1 && run_is(&aRun[0], 30001, 100, 0, 1) );
  ring_dealloc(aRun);

  /* (200, 30000] and (30000, 100] both go A -> B: one run, 201 to 100. */
  uint64_t p3[] = {100, 200, 30000};
  uint32_t o3o[] = {0, 1, 0}, o3n[] = {1, 1, 1};
  aRun = hand_diff(hand_points(&ho, azAB, 2, p3, o3o, 3),
                   hand_points(&hn, azAB, 2, p3, o3n, 3), &n);
  CHECK( n==1 && run_is(&aRun[0], 201, 100, 0, 1) );
  ring_dealloc(aRun);

  /* (200, 300] C -> A, and the wrap (300, 100] A -> B, which comes last. */
  uint64_t p4[] = {100, 200, 300};
  uint32_t o4o[] = {0, 1, 2}, o4n[] = {1, 1, 0};
  aRun = hand_diff(hand_points(&ho, azABC, 3, p4, o4o, 3),
                   hand_points(&hn, azABC, 3, p4, o4n, 3), &n);
  CHECK( n==2 && run_is(&aRun[0], 201, 300, 2, 0)
         && run_is(&aRun[1], 301, 100, 0, 1) );
  ring_dealloc(aRun);

  /* The same ring: nothing moves. */
  aRun = hand_diff(hand_points(&ho, azABC, 3, p4, o4o, 3),
                   hand_points(&hn, azABC, 3, p4, o4o, 3), &n);
  CHECK( n==0 && aRun==NULL );

  /* Everything moves from A (gone) to B (new): one run, the whole space,
  ** (100, 100] as two rows [101, 32767] and [0, 100]. */
  uint64_t p5[] = {100};
  uint32_t o5[] = {0};
  aRun = hand_diff(hand_points(&ho, azAB, 1, p5, o5, 1),
                   hand_points(&hn, azBonly, 1, p5, o5, 1), &n);
  CHECK( n==1 && run_is(&aRun[0], 101, 100, 0, 0) );
  pos_range g[2];
  CHECK( n==1 && range_rows(TOP15, aRun[0].s, aRun[0].e, g)==2
         && range_share(TOP15, &g[0]) + range_share(TOP15, &g[1])==1.0 );
  ring_dealloc(aRun);
}

/*
** The runs between two built rings against lookups of every position:
** each moved position is in exactly one run, with the run's src and dst;
** no unmoved one is; runs are as long as they can be (the position before
** and after a run is not a moved one of the same pair); runs come in
** position order with only the last one wrapping.
*/
static void check_diff_brute(const ring *a, const ring *b){
  static uint32_t aSrc[SPACE15], aDst[SPACE15];
  static uint8_t aCover[SPACE15];
  owners_of(a, aSrc);
  owners_of(b, aDst);
  int64_t *aMap = diff_node_map(a, b);
  diff_run *aRun = NULL;
  uint32_t nRun = 0;
  CHECK( diff_point_runs(a, b, aMap, &aRun, &nRun)==RING_OK );
  memset(aCover, 0, sizeof(aCover));
  uint32_t nMovedRuns = 0;
  int bOwnersOk = 1, bLongestOk = 1, bOrderOk = 1;
  for(uint32_t i=0; i<nRun; i++){
    const diff_run *x = &aRun[i];
    if( i>0 && !(x->s>aRun[i-1].e) ) bOrderOk = 0;
    if( x->s>x->e && i+1<nRun ) bOrderOk = 0;
    for(uint64_t p=x->s; ; p=(p+1)&TOP15){
      aCover[p]++;
      if( aSrc[p]!=x->src || aDst[p]!=x->dst ) bOwnersOk = 0;
      if( p==x->e ) break;
    }
    uint64_t before = (x->s-1)&TOP15, after = (x->e+1)&TOP15;
    if( before!=x->e ){
      if( aMap[aSrc[before]]!=aDst[before] && aSrc[before]==x->src
          && aDst[before]==x->dst ) bLongestOk = 0;
      if( aMap[aSrc[after]]!=aDst[after] && aSrc[after]==x->src
          && aDst[after]==x->dst ) bLongestOk = 0;
    }
  }
  int bCoverOk = 1;
  for(uint32_t p=0; p<SPACE15; p++){
    int bMoves = aMap[aSrc[p]]!=(int64_t)aDst[p];
    bCoverOk &= aCover[p]==bMoves;
    /* a run starts wherever a moved position's pair differs from the one
    ** before it */
    uint32_t q = (p-1)&TOP15;
    if( bMoves && (aMap[aSrc[q]]==(int64_t)aDst[q] || aSrc[q]!=aSrc[p]
                   || aDst[q]!=aDst[p]) ) nMovedRuns++;
  }
  CHECK( bOwnersOk );
  CHECK( bCoverOk );
  CHECK( bLongestOk );
  CHECK( bOrderOk );
  CHECK( nRun==nMovedRuns || (nRun==1 && nMovedRuns==0) );
  ring_dealloc(aRun);
  ring_dealloc(aMap);
}

static void test_brute_diff(void){
  static const char *const azOld[] = {"a", "b", "c", "d"};
  static const char *const azNew[] = {"a", "b", "c", "e"};
  static const char *const azMore[] = {"a", "b", "c", "d", "e", "f"};
  ring *a = build("ring", HASH_CRC32, 40, 0, azOld, 4);
  ring *b = build("ring", HASH_CRC32, 40, 0, azNew, 4);
  ring *c = build("ring", HASH_CRC32, 320, 0, azMore, 6);
  check_diff_brute(a, b);          /* d leaves, e joins */
  check_diff_brute(b, a);
  check_diff_brute(a, c);          /* other point counts, many ties */
  check_diff_brute(c, b);
  ring_release(a);
  ring_release(b);
  ring_release(c);
}

/* ------------------------------------------------------------ residues */

/* The moved classes of slots rings a and b against lookups of every
** position: the share of each class walked sums, per (src, dst), to the
** positions that move between them. */
static void check_residues_brute(const ring *a, const ring *b){
  static uint32_t aSrc[SPACE15], aDst[SPACE15];
  owners_of(a, aSrc);
  owners_of(b, aDst);
  int64_t *aMap = diff_node_map(a, b);
  residue_diff d;
  residue_diff_start(&d, a, b, aMap);
  double aShare[8][8] = {{0}};
  double aWant[8][8] = {{0}};
  int bOwnersOk = 1;
  for(; residue_diff_seek(&d); d.c++){
    if( d.c>=SPACE15 ){                     /* a class holding no position */
      bOwnersOk = 0;
      break;
    }
    if( aSrc[d.c]!=d.src || aDst[d.c]!=d.dst ) bOwnersOk = 0;
    aShare[d.src][d.dst] += class_share(TOP15, d.c, d.period);
  }
  for(uint32_t p=0; p<SPACE15; p++){
    if( aMap[aSrc[p]]!=(int64_t)aDst[p] ) aWant[aSrc[p]][aDst[p]] += 1.0/SPACE15;
  }
  CHECK( bOwnersOk );
  int bSharesOk = 1;
  for(int i=0; i<8; i++){
    for(int j=0; j<8; j++) bSharesOk &= aShare[i][j]==aWant[i][j];
  }
  CHECK( bSharesOk );
  ring_dealloc(aMap);
}

static void test_residues(void){
  static const char *const az3[] = {"a", "b", "c"};
  static const char *const az4[] = {"a", "b", "c", "d"};
  ring *m3 = build("modn", HASH_CRC32, 0, 0, az3, 3);
  ring *m4 = build("modn", HASH_CRC32, 0, 0, az4, 4);

  /* modn 3 -> 4: period 12; class c moves unless c mod 3 = c mod 4, i.e.
  ** unless c < 3: classes 3..11, from c mod 3 to c mod 4. */
  int64_t *aMap = diff_node_map(m3, m4);
  residue_diff d;
  residue_diff_start(&d, m3, m4, aMap);
  CHECK( d.period==12 && d.nClass==12 );
  uint64_t want = 3;
  int bClassOk = 1;
  double share = 0;
  for(; residue_diff_seek(&d); d.c++, want++){
    if( d.c!=want || d.src!=d.c%3 || d.dst!=d.c%4 ) bClassOk = 0;
    share += class_share(TOP15, d.c, d.period);
  }
  CHECK( bClassOk && want==12 );
  /* 32768 = 12*2730 + 8: classes 0, 1, 2 stay, 3*2731 positions; the
  ** other 24575 move. */
  CHECK( share==24575.0/SPACE15 );
  ring_dealloc(aMap);

  check_residues_brute(m3, m4);
  check_residues_brute(m4, m3);
  /* a leaves, d joins: b is node 1 of one ring and node 0 of the other */
  static const char *const azBCD[] = {"b", "c", "d"};
  ring *mBCD = build("modn", HASH_CRC32, 0, 0, azBCD, 3);
  aMap = diff_node_map(m3, mBCD);
  CHECK( aMap[0]==-1 && aMap[1]==0 && aMap[2]==1 );
  ring_dealloc(aMap);
  check_residues_brute(m3, mBCD);
  ring_release(mBCD);
  ring *g7 = build("maglev", HASH_CRC32, 0, 7, az3, 3);
  ring *g13 = build("maglev", HASH_CRC32, 0, 13, az4, 4);
  check_residues_brute(g7, g13);             /* period 91 */
  check_residues_brute(g13, m3);             /* period 39 */
  /* A table larger than the space: period 3 * 65537 > 32768, so only the
  ** classes 0..32767 hold positions, one each. */
  ring *gBig = build("maglev", HASH_CRC32, 0, 65537, az4, 4);
  aMap = diff_node_map(m3, gBig);
  residue_diff_start(&d, m3, gBig, aMap);
  CHECK( d.period==3*65537ULL && d.nClass==SPACE15 );
  ring_dealloc(aMap);
  check_residues_brute(m3, gBig);

  /* Periods 4097 and 4099 (coprime): 16793603 classes, more than
  ** DIFF_MAX_RESIDUES; 6 and 4: 12. Only the unit counts matter here. */
  ring x = *m3, y = *m4;
  x.n_units = 4097;
  y.n_units = 4099;
  residue_diff_start(&d, &x, &y, NULL);
  CHECK( d.period==16793603ULL && d.period>DIFF_MAX_RESIDUES );
  x.n_units = 6;
  y.n_units = 4;
  residue_diff_start(&d, &x, &y, NULL);
  CHECK( d.period==12 );

  CHECK( ring_diff_kind(m3)==DIFF_BY_RESIDUES );
  CHECK( ring_diff_kind(gBig)==DIFF_BY_RESIDUES );
  ring *j = build("jump", HASH_CRC32, 0, 0, az3, 3);
  ring *rv = build("rendezvous", HASH_CRC32, 0, 0, az3, 3);
  ring *p = build("ring", HASH_CRC32, 0, 0, az3, 3);
  CHECK( ring_diff_kind(j)==DIFF_NOT_EXACT );
  CHECK( ring_diff_kind(rv)==DIFF_NOT_EXACT );
  CHECK( ring_diff_kind(p)==DIFF_BY_POINTS );
  ring_release(j);
  ring_release(rv);
  ring_release(p);
  ring_release(m3);
  ring_release(m4);
  ring_release(g7);
  ring_release(g13);
  ring_release(gBig);
}

/* ------------------------------------------------------- replica walks */

/* The walk of pos on r into aOut (at most 16); returns the count. */
static uint32_t walk(const ring *r, uint64_t pos, int64_t *aOut){
  replica_walk w;
  uint32_t n = 0;
  CHECK( replica_walk_start(&w, r, pos, 0)==RING_OK );
  for(int64_t node; n<16 && (node = replica_walk_next(&w))>=0; ) aOut[n++] = node;
  replica_walk_free(&w);
  return n;
}

static void test_hand_walks(void){
  static const char *const azABC[] = {"A", "B", "C"};
  hand_ring h;
  uint64_t aPos[] = {100, 200, 300, 400};
  uint32_t aOwn[] = {0, 0, 1, 2};
  ring *r = hand_points(&h, azABC, 3, aPos, aOwn, 4);
  int64_t a[16];
  /* 150 is in point 1's arc (A): then B at 300, C at 400. */
  CHECK( walk(r, 150, a)==3 && a[0]==0 && a[1]==1 && a[2]==2 );
  /* 350: C at 400, then around: A at 100 (and 200), B at 300. */
  CHECK( walk(r, 350, a)==3 && a[0]==2 && a[1]==0 && a[2]==1 );
  /* 401: past the last point, so point 0 (A). */
  CHECK( walk(r, 401, a)==3 && a[0]==0 && a[1]==1 && a[2]==2 );
  CHECK( walk(r, 300, a)==3 && a[0]==1 && a[1]==2 && a[2]==0 );
  /* A node without points is never listed: the walk ends early. */
  static const char *const azABCD[] = {"A", "B", "C", "D"};
  r = hand_points(&h, azABCD, 4, aPos, aOwn, 4);
  CHECK( walk(r, 150, a)==3 );
}

/*
** Built rings of every kind, at every 7th position of the crc32 space:
** the walk starts with the key's owner and lists distinct nodes, all of
** them when every node owns a unit; modn lists the nodes after the owner
** in name order, jump the nodes after the owner's bucket in join order,
** rendezvous the nodes by falling score (ties to the lower index).
*/
static void test_brute_walks(void){
  static const char *const azJoin[] = {"e", "b", "d", "a", "c"};
  const char *azAlgo[] = {"ring", "maglev", "modn", "jump", "rendezvous"};
  for(int iAlgo=0; iAlgo<5; iAlgo++){
    const char *zAlgo = azAlgo[iAlgo];
    ring *r = build(zAlgo, HASH_CRC32, 20, 13, azJoin, 5);
    int bFirstOk = 1, bDistinctOk = 1, bAllOk = 1, bOrderOk = 1;
    for(uint64_t p=0; p<SPACE15; p+=7){
      int64_t a[16];
      uint32_t n = walk(r, p, a);
      uint32_t owner = ring_lookup(r, p);
      if( n==0 || a[0]!=owner ) bFirstOk = 0;
      if( n!=5 ) bAllOk = 0;
      for(uint32_t i=0; i<n; i++){
        for(uint32_t j=0; j<i; j++) if( a[i]==a[j] ) bDistinctOk = 0;
      }
      for(uint32_t i=1; i<n; i++){
        if( strcmp(zAlgo, "modn")==0 && a[i]!=(owner+i)%5 ) bOrderOk = 0;
        if( strcmp(zAlgo, "jump")==0
            && r->nodes[a[i]].join!=(r->nodes[owner].join+i)%5 ) bOrderOk = 0;
        if( strcmp(zAlgo, "rendezvous")==0 ){
          double s0 = r->config.algo->score(r, (uint32_t)a[i-1], p);
          double s1 = r->config.algo->score(r, (uint32_t)a[i], p);
          if( s0<s1 || (s0==s1 && a[i-1]>a[i]) ) bOrderOk = 0;
        }
      }
    }
    if( !(bFirstOk && bDistinctOk && bAllOk && bOrderOk) ){
      printf("replica walk of %s:\n", zAlgo);
    }
    CHECK( bFirstOk );
    CHECK( bDistinctOk );
    CHECK( bAllOk );
    CHECK( bOrderOk );
    ring_release(r);
  }
}

/* ------------------------------------------------------ out of memory */

/* Each allocation of the geometry failing in turn: RING_NOMEM, nothing
** left allocated, and success once none fails. */
static void test_oom(void){
  static const char *const azOld[] = {"a", "b", "c", "d"};
  static const char *const azNew[] = {"a", "b", "c", "e"};
  ring *a = build("ring", HASH_CRC32, 160, 0, azOld, 4);
  ring *b = build("ring", HASH_CRC32, 160, 0, azNew, 4);
  ring *rv = build("rendezvous", HASH_CRC32, 0, 0, azOld, 4);
  int64_t *aMap = diff_node_map(a, b);
  int nBase = nLive;
  int bOk = 1, nFailed = 0;
  for(int i=0; i<40; i++){
    diff_run *aRun = NULL;
    uint32_t nRun = 0;
    nUntilFail = i;
    int rc = diff_point_runs(a, b, aMap, &aRun, &nRun);
    nUntilFail = -1;
    if( rc==RING_NOMEM ){
      nFailed++;
      if( aRun!=NULL || nLive!=nBase ) bOk = 0;
    }else{
      ring_dealloc(aRun);
      break;
    }
  }
  CHECK( bOk && nFailed>=3 );             /* 64, 128, 256 runs, and more */
  for(int i=0; i<4; i++){
    point_replicas pr;
    uint32_t rep;
    nUntilFail = i;
    int rc = point_replicas_init(&pr, a);
    if( rc==RING_OK ){
      rc = point_replica(&pr, 0, &rep);
      point_replicas_free(&pr);
    }
    nUntilFail = -1;
    CHECK( (i<3 ? rc==RING_NOMEM : rc==RING_OK) && nLive==nBase );
    replica_walk w;
    nUntilFail = 0;
    CHECK( replica_walk_start(&w, i%2 ? a : rv, 5, 0)==RING_NOMEM );
    nUntilFail = -1;
    replica_walk_free(&w);
    CHECK( nLive==nBase );
  }
  nUntilFail = 0;
  CHECK( diff_node_map(a, b)==NULL );
  nUntilFail = -1;
  ring_dealloc(aMap);
  ring_release(a);
  ring_release(b);
  ring_release(rv);
  CHECK( nLive==0 );
}

int main(void){
  ring_set_allocator(test_malloc, test_free);
  test_ranges();
  test_hand_arcs();
  test_brute_arcs();
  test_point_replicas();
  test_point_replicas_every_algo();
  test_hand_diff();
  test_brute_diff();
  test_residues();
  test_hand_walks();
  test_brute_walks();
  test_oom();
  return unit_summary();
}

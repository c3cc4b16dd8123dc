/*
** geometry.c: a ring's hash space cut into ranges, arcs, diff runs and
** residue classes, and the replica walks (see geometry.h for the model).
** Pure C, no SQLite calls; the table-valued functions list what these
** compute.
*/
#include <stdlib.h>
#include <string.h>

#include "geometry.h"

/* ------------------------------------------ ranges (the rest: inline) */

uint64_t ring_space_top(const ring *r){
  unsigned b = ring_space_bits(&r->config);
  return b==64 ? UINT64_MAX : ((uint64_t)1<<b) - 1;
}

/* -------------------------------------------------- point replicas */

/* One of a node's points: its position and replica number. */
struct replica_entry {
  uint64_t pos;
  uint32_t replica;
};

int point_replicas_init(point_replicas *p, const ring *r){
  size_t n = sizeof(replica_entry *) * (r->n_nodes + 1);
  p->r = r;
  p->aNode = ring_alloc(n);
  if( p->aNode==NULL ) return RING_NOMEM;
  memset(p->aNode, 0, n);
  return RING_OK;
}

void point_replicas_free(point_replicas *p){
  if( p->aNode ){
    for(uint32_t n=0; n<p->r->n_nodes; n++) ring_dealloc(p->aNode[n]);
    ring_dealloc(p->aNode);
  }
  p->aNode = NULL;
}

/* Position, then replica: the order of one node's points on the ring. */
static int replica_entry_compare(const void *pa, const void *pb){
  const replica_entry *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  return (a->replica>b->replica) - (a->replica<b->replica);
}

/* Node n's points, made and sorted. */
static replica_entry *node_replicas(const ring *r, uint32_t n){
  uint32_t nPoint = r->nodes[n].points;
  replica_entry *a = ring_alloc(sizeof(replica_entry) * (nPoint ? nPoint : 1));
  uint64_t *aPos = ring_alloc(sizeof(uint64_t) * (nPoint ? nPoint : 1));
  if( a==NULL || aPos==NULL ){
    ring_dealloc(a);
    ring_dealloc(aPos);
    return NULL;
  }
  uint32_t first = r->config.algo->node_positions(r, n, aPos);
  for(uint32_t j=0; j<nPoint; j++){
    a[j].pos = aPos[j];
    a[j].replica = first + j;
  }
  ring_dealloc(aPos);
  qsort(a, nPoint, sizeof(replica_entry), replica_entry_compare);
  return a;
}

/*
** Point k's node's points sorted, found by token (node_positions makes
** the tokens). Equal tokens of one node are in replica order on the ring
** (every points build keeps a node's ties in the order it made them), so
** the d-th of them on the ring is the d-th in the sorted list.
*/
int point_replica(point_replicas *p, uint32_t k, uint32_t *pReplica){
  const ring *r = p->r;
  if( r->replicas ){
    *pReplica = r->replicas[k];
    return RING_OK;
  }
  uint32_t n = r->owners[k];
  if( p->aNode[n]==NULL ){
    p->aNode[n] = node_replicas(r, n);
    if( p->aNode[n]==NULL ) return RING_NOMEM;
  }
  const replica_entry *a = p->aNode[n];
  uint64_t pos = ring_point_token(r, k);
  uint32_t lo = 0, hi = r->nodes[n].points;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( a[mid].pos<pos ) lo = mid+1; else hi = mid;
  }
  for(uint32_t j=k; j>0 && ring_point_token(r, j-1)==pos; j--){
    if( r->owners[j-1]==n ) lo++;
  }
  *pReplica = a[lo].replica;
  return RING_OK;
}

/* ----------------------------------------------------------- diffs */

diff_kind ring_diff_kind(const ring *r){
  if( r->config.algo->no_diff ) return DIFF_NOT_EXACT;
  return ring_has_points(r) ? DIFF_BY_POINTS : DIFF_BY_RESIDUES;
}

/* Does a position owned by src (of a) and by dst (of b) change owner?
** RING_UNOWNED on both sides does not. */
static int diff_moves(const int64_t *aMap, uint32_t src, uint32_t dst){
  if( src==RING_UNOWNED || dst==RING_UNOWNED ) return src!=dst;
  return aMap[src]!=(int64_t)dst;
}

int64_t *diff_node_map(const ring *a, const ring *b){
  int64_t *aMap = ring_alloc(sizeof(int64_t) * (a->n_nodes + 1));
  if( aMap==NULL ) return NULL;
  for(uint32_t i=0; i<a->n_nodes; i++){
    aMap[i] = ring_find_node(b, a->nodes[i].name, a->nodes[i].name_len);
  }
  return aMap;
}

/* The runs found so far, in an array that doubles as it fills. */
typedef struct diff_run_list {
  diff_run *a;
  uint32_t n, nAlloc;
} diff_run_list;

static int diff_run_append(diff_run_list *p, const diff_run *run){
  if( p->n==p->nAlloc ){
    /* at most one run per boundary, so n < 2^25 and this cannot wrap */
    uint32_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
    diff_run *aNew = ring_alloc(sizeof(diff_run) * nNew);
    if( aNew==NULL ) return RING_NOMEM;
    if( p->n ) memcpy(aNew, p->a, sizeof(diff_run) * p->n);
    ring_dealloc(p->a);
    p->a = aNew;
    p->nAlloc = nNew;
  }
  p->a[p->n++] = *run;
  return RING_OK;
}

/*
** The merge. Between two consecutive boundaries (positions of either
** ring) the owner in each ring is constant: the piece (previous boundary,
** u] belongs to the first point at or after u in each. Pieces that move
** are joined into runs while src and dst stay the same.
*/
static int diff_merge(const ring *a, const ring *b, const int64_t *aMap,
                      diff_run_list *pList){
  const uint64_t top = ring_space_top(a);
  uint32_t i = 0, j = 0;
  /* The first piece wraps around, from after the last position of both. */
  uint64_t lastA = a->positions[a->n_points-1];
  uint64_t lastB = b->positions[b->n_points-1];
  uint64_t prevEnd = lastA>lastB ? lastA : lastB;
  int bRun = 0;                         /* is run being extended? */
  diff_run run = {0, 0, 0, 0};
  /* A run that starts with the first piece is held back: the last run may
  ** continue it across the wrap, and then they are one run. */
  int bFirst = 0, bFirstOpen = 0;
  diff_run first = {0, 0, 0, 0};
  while( i<a->n_points || j<b->n_points ){
    /* The next boundary u: the owners of (prevEnd, u] are the first points
    ** at or after u, a[i] and b[j] (point 0 once a ring is passed). */
    uint64_t u;
    if( i==a->n_points ) u = b->positions[j];
    else if( j==b->n_points ) u = a->positions[i];
    else u = a->positions[i]<b->positions[j] ? a->positions[i] : b->positions[j];
    uint32_t src = a->owners[i<a->n_points ? i : 0];
    uint32_t dst = b->owners[j<b->n_points ? j : 0];
    int bMoves = diff_moves(aMap, src, dst);
    if( bRun && (!bMoves || src!=run.src || dst!=run.dst) ){
      run.e = prevEnd;
      if( bFirstOpen ){
        first = run;
        bFirst = 1;
        bFirstOpen = 0;
      }else if( diff_run_append(pList, &run)!=RING_OK ){
        return RING_NOMEM;
      }
      bRun = 0;
    }
    if( bMoves && !bRun ){
      bRun = 1;
      bFirstOpen = i==0 && j==0;
      run.s = (prevEnd + 1) & top;
      run.src = src;
      run.dst = dst;
    }
    prevEnd = u;
    while( i<a->n_points && a->positions[i]==u ) i++;
    while( j<b->n_points && b->positions[j]==u ) j++;
  }
  if( bRun && bFirst && run.src==first.src && run.dst==first.dst ){
    run.e = first.e;                    /* the last run joins the first */
    return diff_run_append(pList, &run);
  }
  if( bRun ){
    run.e = prevEnd;
    if( diff_run_append(pList, &run)!=RING_OK ) return RING_NOMEM;
  }
  return bFirst ? diff_run_append(pList, &first) : RING_OK;
}

int diff_point_runs(const ring *a, const ring *b, const int64_t *aMap,
                    diff_run **paRun, uint32_t *pnRun){
  diff_run_list list = {NULL, 0, 0};
  int rc = diff_merge(a, b, aMap, &list);
  if( rc!=RING_OK ){
    ring_dealloc(list.a);
    list.a = NULL;
    list.n = 0;
  }
  *paRun = list.a;
  *pnRun = list.n;
  return rc;
}

uint64_t ring_residue_period(const ring *r){
  return r->n_units;
}

static uint64_t geometry_gcd(uint64_t x, uint64_t y){
  while( y ){ uint64_t t = x % y; x = y; y = t; }
  return x;
}

void residue_diff_start(residue_diff *d, const ring *a, const ring *b,
                        const int64_t *aMap){
  uint64_t p = ring_residue_period(a), q = ring_residue_period(b);
  uint64_t top = ring_space_top(a);
  d->a = a;
  d->b = b;
  d->aMap = aMap;
  d->period = p / geometry_gcd(p, q) * q;       /* p, q < 2^25: no overflow */
  d->nClass = d->period-1<=top ? d->period : top+1; /* a small space ends first */
  d->c = 0;
}

int residue_diff_seek(residue_diff *d){
  for(; d->c<d->nClass; d->c++){
    d->src = ring_lookup(d->a, d->c);
    d->dst = ring_lookup(d->b, d->c);
    if( diff_moves(d->aMap, d->src, d->dst) ) return 1;
  }
  return 0;
}

/* --------------------------------------------------- replica walks */

/* A node and its score for the key. */
struct scored_node {
  double score;
  uint32_t node;
};

/* Falling score, then name order (the lower index), as the algorithms'
** lookups break ties. */
static int scored_node_compare(const void *pa, const void *pb){
  const scored_node *a = pa, *b = pb;
  if( a->score!=b->score ) return a->score>b->score ? -1 : 1;
  return (a->node>b->node) - (a->node<b->node);
}

/* Score every node of w's ring for the key at pos, or of nKey bytes at
** pKey (pKey not NULL: the algorithm's key_score), and rank them. */
static int replica_walk_score(replica_walk *w, uint64_t pos,
                              const void *pKey, size_t nKey){
  const ring *r = w->r;
  w->aScored = ring_alloc(sizeof(scored_node) * r->n_nodes);
  if( w->aScored==NULL ) return RING_NOMEM;
  for(uint32_t n=0; n<r->n_nodes; n++){
    w->aScored[n].score = pKey ? r->config.algo->key_score(r, n, pKey, nKey)
                               : r->config.algo->score(r, n, pos);
    w->aScored[n].node = n;
  }
  qsort(w->aScored, r->n_nodes, sizeof(scored_node), scored_node_compare);
  return RING_OK;
}

int replica_walk_start_key(replica_walk *w, const ring *r, const void *pKey,
                           size_t nKey){
  memset(w, 0, sizeof(*w));
  w->r = r;
  return replica_walk_score(w, 0, pKey ? pKey : "", nKey);
}

int replica_walk_start(replica_walk *w, const ring *r, uint64_t pos,
                       uint64_t low){
  memset(w, 0, sizeof(*w));
  w->r = r;
  if( r->config.algo->replicas ){
    w->aList = ring_alloc(sizeof(uint32_t) * r->n_nodes);
    if( w->aList==NULL ) return RING_NOMEM;
    return r->config.algo->replicas(r, pos, w->aList, &w->nList);
  }
  if( r->config.algo->units==RING_UNITS_NONE ){
    return replica_walk_score(w, pos, NULL, 0);
  }
  size_t nSeen = sizeof(uint64_t) * (r->n_nodes/64 + 1);
  w->aSeen = ring_alloc(nSeen);
  if( w->aSeen==NULL ) return RING_NOMEM;
  memset(w->aSeen, 0, nSeen);
  w->k0 = ring_unit_of_low(r, pos, low);
  /* A key no node owns has no replicas either. */
  if( ring_unit_owner(r, w->k0)==RING_UNOWNED ) w->nListed = r->n_nodes;
  return RING_OK;
}

int64_t replica_walk_next(replica_walk *w){
  const ring *r = w->r;
  if( w->nListed>=r->n_nodes ) return -1;       /* every node is listed */
  if( w->aList ){
    return w->nListed<w->nList ? (int64_t)w->aList[w->nListed++] : -1;
  }
  if( w->aScored ) return w->aScored[w->nListed++].node;
  uint32_t nUnit = ring_units(r);
  for(; w->nStep<nUnit; w->nStep++){
    uint32_t k = w->k0 + w->nStep;
    uint32_t owner = ring_unit_owner(r, k>=nUnit ? k-nUnit : k);
    if( owner==RING_UNOWNED ) continue;
    if( w->aSeen[owner/64] & ((uint64_t)1<<(owner%64)) ) continue;
    w->aSeen[owner/64] |= (uint64_t)1<<(owner%64);
    w->nListed++;
    return owner;
  }
  return -1;
}

void replica_walk_free(replica_walk *w){
  ring_dealloc(w->aSeen);
  ring_dealloc(w->aScored);
  ring_dealloc(w->aList);
  w->aSeen = NULL;
  w->aScored = NULL;
  w->aList = NULL;
}

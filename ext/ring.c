/*
** ring.c: the ring core (see ring.h for the model). Pure C, no SQLite.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ring.h"

static void *(*ring_malloc)(size_t) = malloc;
static void (*ring_free)(void *) = free;

void ring_set_allocator(void *(*xMalloc)(size_t), void (*xFree)(void *)){
  ring_malloc = xMalloc;
  ring_free = xFree;
}

static const char *const algorithm_names[RING_ALGO_COUNT] = {
  [RING_ALGO_RING] = "ring",
  [RING_ALGO_MODN] = "modn",
};

void ring_config_default(ring_config *cfg){
  cfg->algorithm = RING_ALGO_RING;
  cfg->hash = HASH_XXH3;
  cfg->vnodes = 160;
  cfg->seed = 0;
}

const char *ring_algorithm_name(ring_algorithm a){
  return algorithm_names[a];
}

int ring_algorithm_from_name(const char *zName){
  for(int i=0; i<RING_ALGO_COUNT; i++){
    if( strcasecmp(zName, algorithm_names[i])==0 ) return i;
  }
  return -1;
}

const char *ring_algorithm_names(void){
  return "ring, modn";
}

int64_t ring_node_points(const ring_config *cfg, double w){
  if( !(w>0.0) || !isfinite(w) || w>RING_MAX_WEIGHT ) return -1;
  if( cfg->algorithm!=RING_ALGO_RING ) return 0;
  double p = round((double)cfg->vnodes * w);   /* half away from zero */
  if( p<1.0 ) return 1;
  if( p>(double)RING_MAX_POINTS ) return RING_MAX_POINTS+1;
  return (int64_t)p;
}

const char *ring_check_name(const char *z, size_t n){
  const unsigned char *p = (const unsigned char *)z;
  if( n==0 ) return "node name is empty";
  if( n>RING_MAX_NAME ) return "node name is longer than 1024 bytes";
  for(size_t i=0; i<n; ){
    unsigned c = p[i];
    size_t len;
    unsigned min;
    if( c==0 ) return "node name contains a NUL byte";
    if( c<0x80 ){ i++; continue; }
    if( (c & 0xE0)==0xC0 ){ len = 2; min = 0x80; c &= 0x1F; }
    else if( (c & 0xF0)==0xE0 ){ len = 3; min = 0x800; c &= 0x0F; }
    else if( (c & 0xF8)==0xF0 ){ len = 4; min = 0x10000; c &= 0x07; }
    else return "node name is not valid UTF-8";
    if( i+len>n ) return "node name is not valid UTF-8";
    for(size_t k=1; k<len; k++){
      if( (p[i+k] & 0xC0)!=0x80 ) return "node name is not valid UTF-8";
      c = (c<<6) | (p[i+k] & 0x3F);
    }
    if( c<min || c>0x10FFFF || (c>=0xD800 && c<=0xDFFF) ){
      return "node name is not valid UTF-8";
    }
    i += len;
  }
  return NULL;
}

/* Bytewise order of names, shorter first on a common prefix: SQLite's
** BINARY collation. */
static int name_compare(const char *a, size_t na, const char *b, size_t nb){
  int c = memcmp(a, b, na<nb ? na : nb);
  if( c ) return c;
  return na<nb ? -1 : na>nb;
}

static int input_compare(const void *pa, const void *pb){
  const ring_input *a = *(const ring_input *const *)pa;
  const ring_input *b = *(const ring_input *const *)pb;
  return name_compare(a->name, a->name_len, b->name, b->name_len);
}

/* A point while the ring is built: its position and its tie-break keys. */
typedef struct build_point {
  uint64_t pos;
  uint32_t node;           /* index in the name-sorted node array */
  uint32_t replica;        /* i of "N#i" */
} build_point;

static int point_compare(const void *pa, const void *pb){
  const build_point *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  if( a->node!=b->node ) return a->node<b->node ? -1 : 1;
  return (a->replica>b->replica) - (a->replica<b->replica);
}

void ring_retain(ring *r){
  r->refs++;
}

void ring_release(ring *r){
  if( r==NULL || --r->refs>0 ) return;
  ring_free(r->positions);
  ring_free(r->owners);
  ring_free(r);
}

/*
** Hash every point of every node, sort them, and fill r->positions and
** r->owners. Ties are broken by node index (= name order), then replica.
*/
static int build_points(ring *r){
  if( r->n_points==0 ) return RING_OK;
  build_point *aPoint = ring_malloc(sizeof(build_point) * r->n_points);
  r->positions = ring_malloc(sizeof(uint64_t) * r->n_points);
  r->owners = ring_malloc(sizeof(uint32_t) * r->n_points);
  if( aPoint==NULL || r->positions==NULL || r->owners==NULL ){
    ring_free(aPoint);
    return RING_NOMEM;
  }
  char label[RING_MAX_NAME + 32];
  uint32_t k = 0;
  for(uint32_t n=0; n<r->n_nodes; n++){
    const ring_node *node = &r->nodes[n];
    memcpy(label, node->name, node->name_len);
    for(uint32_t i=1; i<=node->points; i++){
      int len = node->name_len;
      len += snprintf(label+len, sizeof(label)-len, "#%u", i);
      aPoint[k].pos = hash_bytes(r->config.hash, r->config.seed, label, len);
      aPoint[k].node = n;
      aPoint[k].replica = i;
      k++;
    }
  }
  qsort(aPoint, r->n_points, sizeof(build_point), point_compare);
  for(uint32_t i=0; i<r->n_points; i++){
    r->positions[i] = aPoint[i].pos;
    r->owners[i] = aPoint[i].node;
  }
  ring_free(aPoint);
  return RING_OK;
}

/*
** Each node's exact share of the 2^64 positions. Point k owns the keys in
** (pos[k-1], pos[k]]; point 0 also owns those after the last point.
*/
static int compute_shares(ring *r){
  const long double space = 18446744073709551616.0L;   /* 2^64 */
  if( r->n_nodes==0 ) return RING_OK;
  if( r->config.algorithm==RING_ALGO_MODN ){
    unsigned __int128 total = (unsigned __int128)1 << 64;
    unsigned __int128 q = total / r->n_nodes, rem = total % r->n_nodes;
    for(uint32_t n=0; n<r->n_nodes; n++){
      r->nodes[n].share = (double)((long double)(q + (n<rem)) / space);
    }
    return RING_OK;
  }
  /* sqlite3_malloc only aligns to 8 bytes, so an array of 16-byte
  ** integers must not assume more. */
  typedef unsigned __int128 owned_t __attribute__((aligned(8)));
  owned_t *aOwned = ring_malloc(sizeof(*aOwned) * r->n_nodes);
  if( aOwned==NULL ) return RING_NOMEM;
  memset(aOwned, 0, sizeof(*aOwned) * r->n_nodes);
  const uint64_t *pos = r->positions;
  uint32_t last = r->n_points-1;
  aOwned[r->owners[0]] = ((unsigned __int128)1 << 64) + pos[0] - pos[last];
  for(uint32_t k=1; k<r->n_points; k++){
    aOwned[r->owners[k]] += pos[k] - pos[k-1];
  }
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].share = (double)((long double)aOwned[n] / space);
  }
  ring_free(aOwned);
  return RING_OK;
}

int ring_build(const ring_config *cfg, const ring_input *aInput, uint32_t n,
               ring **ppRing, char *zErr, size_t nErr){
  *ppRing = NULL;
  if( n>RING_MAX_NODES ){
    snprintf(zErr, nErr, "too many nodes: at most %d", RING_MAX_NODES);
    return RING_INVALID;
  }

  /* Sort the input by name, and check names, duplicates and weights. */
  const ring_input **aSorted = ring_malloc(sizeof(*aSorted) * (n ? n : 1));
  if( aSorted==NULL ) return RING_NOMEM;
  for(uint32_t i=0; i<n; i++) aSorted[i] = &aInput[i];
  qsort(aSorted, n, sizeof(*aSorted), input_compare);
  int64_t nPoints = 0;
  size_t nNameBytes = 0;
  for(uint32_t i=0; i<n; i++){
    const ring_input *p = aSorted[i];
    const char *zBad = ring_check_name(p->name, p->name_len);
    if( zBad ){
      snprintf(zErr, nErr, "%s", zBad);
      ring_free(aSorted);
      return RING_INVALID;
    }
    if( i>0 && input_compare(&aSorted[i-1], &aSorted[i])==0 ){
      snprintf(zErr, nErr, "duplicate node: %.*s", (int)p->name_len, p->name);
      ring_free(aSorted);
      return RING_INVALID;
    }
    int64_t pts = ring_node_points(cfg, p->weight);
    if( pts<0 ){
      snprintf(zErr, nErr, "weight of node %.*s must be a positive finite "
               "number at most %g", (int)p->name_len, p->name, RING_MAX_WEIGHT);
      ring_free(aSorted);
      return RING_INVALID;
    }
    nPoints += pts;
    if( nPoints>RING_MAX_POINTS ){
      snprintf(zErr, nErr, "too many points: a ring holds at most %d "
               "(vnodes x total weight)", RING_MAX_POINTS);
      ring_free(aSorted);
      return RING_INVALID;
    }
    nNameBytes += p->name_len + 1;
  }

  /* One allocation for the ring, its nodes and their names. */
  size_t nAlloc = sizeof(ring) + sizeof(ring_node)*n + nNameBytes;
  ring *r = ring_malloc(nAlloc);
  if( r==NULL ){
    ring_free(aSorted);
    return RING_NOMEM;
  }
  memset(r, 0, sizeof(ring));
  r->config = *cfg;
  r->n_nodes = n;
  r->nodes = (ring_node *)&r[1];
  r->n_points = (uint32_t)nPoints;
  r->version = -1;
  r->refs = 1;
  char *zNames = (char *)&r->nodes[n];
  for(uint32_t i=0; i<n; i++){
    const ring_input *p = aSorted[i];
    ring_node *node = &r->nodes[i];
    memcpy(zNames, p->name, p->name_len);
    zNames[p->name_len] = 0;
    node->name = zNames;
    node->name_len = p->name_len;
    node->weight = p->weight;
    node->points = (uint32_t)ring_node_points(cfg, p->weight);
    node->share = 0.0;
    zNames += p->name_len + 1;
  }
  ring_free(aSorted);

  int rc = build_points(r);
  if( rc==RING_OK ) rc = compute_shares(r);
  if( rc!=RING_OK ){
    ring_release(r);
    return rc;
  }
  *ppRing = r;
  return RING_OK;
}

uint32_t ring_lookup(const ring *r, uint64_t pos){
  if( r->config.algorithm==RING_ALGO_MODN ){
    return (uint32_t)(pos % r->n_nodes);
  }
  /* Lower bound: the first point with position >= pos, else wrap to 0. */
  uint32_t lo = 0, hi = r->n_points;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( r->positions[mid]<pos ) lo = mid+1; else hi = mid;
  }
  return r->owners[lo==r->n_points ? 0 : lo];
}

int64_t ring_find_node(const ring *r, const char *z, size_t n){
  uint32_t lo = 0, hi = r->n_nodes;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    const ring_node *node = &r->nodes[mid];
    int c = name_compare(node->name, node->name_len, z, n);
    if( c==0 ) return mid;
    if( c<0 ) lo = mid+1; else hi = mid;
  }
  return -1;
}

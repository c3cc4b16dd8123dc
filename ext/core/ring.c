/*
** ring.c: the ring core (see ring.h for the model). Pure C, no SQLite.
** The algorithm ring and modn live here (the ring's points are built in
** ring_points.c, and looked up through ring_index.c's index); the others
** are built in their own files (algos.h) and dispatched to from
** ring_build, ring_lookup and compute_shares.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ring_impl.h"

static void *(*ring_malloc)(size_t) = malloc;
static void (*ring_free)(void *) = free;

void ring_set_allocator(void *(*xMalloc)(size_t), void (*xFree)(void *)){
  ring_malloc = xMalloc;
  ring_free = xFree;
}

void *ring_alloc(size_t n){
  return ring_malloc(n);
}

void ring_dealloc(void *p){
  ring_free(p);
}

static const char *const algorithm_names[RING_ALGO_COUNT] = {
  [RING_ALGO_RING] = "ring",
  [RING_ALGO_MODN] = "modn",
  [RING_ALGO_KETAMA] = "ketama",
  [RING_ALGO_JUMP] = "jump",
  [RING_ALGO_RENDEZVOUS] = "rendezvous",
  [RING_ALGO_MAGLEV] = "maglev",
};

void ring_config_default(ring_config *cfg){
  cfg->algorithm = RING_ALGO_RING;
  cfg->hash = HASH_XXH3;
  cfg->vnodes = 160;
  cfg->seed = 0;
  cfg->table = RING_DEFAULT_TABLE;
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
  return "ring, ketama, jump, rendezvous, maglev, modn";
}

int64_t ring_node_points(const ring_config *cfg, double w){
  if( !(w>0.0) || !isfinite(w) || w>RING_MAX_WEIGHT ) return -1;
  if( cfg->algorithm==RING_ALGO_KETAMA ) return cfg->vnodes;
  if( cfg->algorithm!=RING_ALGO_RING ) return 0;
  double p = round((double)cfg->vnodes * w);   /* half away from zero */
  if( p<1.0 ) return 1;
  return (int64_t)p;          /* at most 1e14: vnodes x RING_MAX_WEIGHT */
}

const char *ring_check_weight(const ring_config *cfg, double w){
  if( cfg->algorithm==RING_ALGO_JUMP && w!=1.0 ){
    return "algorithm jump has no weights: every node's weight must be 1";
  }
  return NULL;
}

const char *ring_check_count(const ring_config *cfg, uint64_t n, char *zErr,
                             size_t nErr){
  if( cfg->algorithm==RING_ALGO_MAGLEV && n>cfg->table ){
    snprintf(zErr, nErr, "a maglev table of %u slots holds at most %u nodes "
             "(%llu given); create the ring with a larger table option",
             cfg->table, cfg->table, (unsigned long long)n);
    return zErr;
  }
  return NULL;
}

int ring_has_points(const ring *r){
  return r->config.algorithm==RING_ALGO_RING
      || r->config.algorithm==RING_ALGO_KETAMA;
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

void ring_retain(ring *r){
  r->refs++;
}

void ring_release(ring *r){
  if( r==NULL || --r->refs>0 ) return;
  ring_free(r->positions);
  ring_free(r->owners);
  ring_free(r->buckets);
  ring_free(r->node_hashes);
  ring_free(r->table);
  ring_free(r->index);
  ring_free(r);
}

uint32_t ring_node_positions(const ring *r, uint32_t n, uint64_t *aPos){
  const ring_node *node = &r->nodes[n];
  if( r->config.algorithm==RING_ALGO_KETAMA ){
    for(uint32_t i=0; i<node->points/4; i++) ketama_digest(node, i, aPos + 4*i);
    return 0;
  }
  ring_points_hash(r, n, aPos, 1);
  return 1;
}

/*
** A count of positions, up to 2^64, in two 64-bit halves: an array of
** unsigned __int128 needs 16-byte alignment, and SQLite's allocator (which
** the extension installs) promises only 8.
*/
typedef struct owned_count {
  uint64_t lo, hi;
} owned_count;

static void owned_add(owned_count *c, uint64_t d){
  c->lo += d;
  c->hi += c->lo<d;        /* the carry */
}

/*
** Each node's share of the positions [0, 2^b) of the ring's hash.
**   ring, ketama: exact. Point k owns the keys in (pos[k-1], pos[k]]; point
**     0 also owns those after the last point.
**   modn, maglev: exact. Position p goes to p mod n (modn) or to the owner
**     of slot p mod table (maglev); slot s gets floor(2^b/m) positions, one
**     more if s < 2^b mod m.
**   jump: 1/n, the expectation (jump's buckets are uniform; exact counts
**     over 2^64 keys cannot be computed).
**   rendezvous: weight/total weight, the probability that the node wins
**     when the scores are independent and uniform.
*/
static int compute_shares(ring *r){
  const unsigned bits = hash_space_bits(r->config.hash);
  const unsigned __int128 total = (unsigned __int128)1 << bits;
  const long double space = (long double)total;
  if( r->n_nodes==0 ) return RING_OK;
  switch( r->config.algorithm ){
    case RING_ALGO_JUMP:
      for(uint32_t n=0; n<r->n_nodes; n++) r->nodes[n].share = 1.0/r->n_nodes;
      return RING_OK;
    case RING_ALGO_RENDEZVOUS: {
      double sum = 0.0;
      for(uint32_t n=0; n<r->n_nodes; n++) sum += r->nodes[n].weight;
      for(uint32_t n=0; n<r->n_nodes; n++){
        r->nodes[n].share = r->nodes[n].weight / sum;
      }
      return RING_OK;
    }
    default:
      break;
  }
  owned_count *aOwned = ring_malloc(sizeof(*aOwned) * r->n_nodes);
  if( aOwned==NULL ) return RING_NOMEM;
  memset(aOwned, 0, sizeof(*aOwned) * r->n_nodes);
  if( r->config.algorithm==RING_ALGO_MODN
   || r->config.algorithm==RING_ALGO_MAGLEV ){
    uint32_t m = r->config.algorithm==RING_ALGO_MODN ? r->n_nodes
                                                      : r->config.table;
    unsigned __int128 q = total / m, rem = total % m;
    for(uint32_t s=0; s<m; s++){
      owned_count *c = &aOwned[r->config.algorithm==RING_ALGO_MODN ? s
                                                                   : r->table[s]];
      unsigned __int128 v = q + (s<rem);     /* 2^64 itself when m is 1 */
      owned_add(c, (uint64_t)v);
      c->hi += (uint64_t)(v >> 64);
    }
  }else{
    const uint64_t *pos = r->positions;
    uint32_t last = r->n_points-1;
    uint64_t top = (uint64_t)(total - 1);    /* the largest position */
    /* Point 0: 2^b - pos[last] + pos[0], added in parts that fit. */
    owned_add(&aOwned[r->owners[0]], pos[0]);
    owned_add(&aOwned[r->owners[0]], top - pos[last]);
    owned_add(&aOwned[r->owners[0]], 1);
    for(uint32_t k=1; k<r->n_points; k++){
      owned_add(&aOwned[r->owners[k]], pos[k] - pos[k-1]);
    }
  }
  for(uint32_t n=0; n<r->n_nodes; n++){
    long double owned = (long double)aOwned[n].hi * 18446744073709551616.0L
                      + aOwned[n].lo;
    r->nodes[n].share = (double)(owned / space);
  }
  ring_free(aOwned);
  return RING_OK;
}

int ring_build(const ring_config *cfg, const ring_input *aInput, uint32_t n,
               ring **ppRing, char *zErr, size_t nErr){
  return ring_build_from(NULL, cfg, aInput, n, ppRing, zErr, nErr);
}

int ring_build_from(const ring *prev, const ring_config *cfg,
                    const ring_input *aInput, uint32_t n, ring **ppRing,
                    char *zErr, size_t nErr){
  *ppRing = NULL;
  if( n>RING_MAX_NODES ){
    snprintf(zErr, nErr, "too many nodes: at most %d", RING_MAX_NODES);
    return RING_INVALID;
  }
  if( ring_check_count(cfg, n, zErr, nErr) ) return RING_INVALID;

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
    const char *zWeight = pts<0 ? NULL : ring_check_weight(cfg, p->weight);
    if( pts<0 || zWeight ){
      if( zWeight ){
        snprintf(zErr, nErr, "node %.*s: %s", (int)p->name_len, p->name,
                 zWeight);
      }else{
        snprintf(zErr, nErr, "weight of node %.*s must be a positive finite "
                 "number at most %g", (int)p->name_len, p->name,
                 RING_MAX_WEIGHT);
      }
      ring_free(aSorted);
      return RING_INVALID;
    }
    if( pts>RING_MAX_POINTS-nPoints ){
      snprintf(zErr, nErr, "too many points: a ring holds at most %d "
               "(vnodes x total weight)", RING_MAX_POINTS);
      ring_free(aSorted);
      return RING_INVALID;
    }
    nPoints += pts;
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
  /* The algorithms other than ring count their own points. */
  r->n_points = cfg->algorithm==RING_ALGO_RING ? (uint32_t)nPoints : 0;
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
    node->points = cfg->algorithm==RING_ALGO_RING
                 ? (uint32_t)ring_node_points(cfg, p->weight) : 0;
    node->share = 0.0;
    zNames += p->name_len + 1;
  }

  int rc = RING_OK;
  switch( cfg->algorithm ){
    case RING_ALGO_RING:       rc = ring_points_build(r, prev); break;
    case RING_ALGO_KETAMA:     rc = ketama_build(r); break;
    case RING_ALGO_RENDEZVOUS: rc = rendezvous_build(r); break;
    case RING_ALGO_MAGLEV:     rc = maglev_build(r); break;
    case RING_ALGO_JUMP:
      /* Buckets keep the order the nodes were given in. */
      r->buckets = ring_malloc(sizeof(uint32_t) * (n ? n : 1));
      if( r->buckets==NULL ){ rc = RING_NOMEM; break; }
      for(uint32_t i=0; i<n; i++) r->buckets[aSorted[i]-aInput] = i;
      break;
    default:
      break;
  }
  ring_free(aSorted);
  /* ketama counts in groups of 4 with twemproxy's float steps: with a
  ** small vnodes, every node's count can round down to 0. */
  if( rc==RING_OK && ring_has_points(r) && n>0 && r->n_points==0 ){
    snprintf(zErr, nErr, "algorithm ketama gives none of the %u nodes a "
             "point: vnodes %d rounds each node's count down to 0; use a "
             "larger vnodes (twemproxy and libmemcached use 160)", n,
             cfg->vnodes);
    rc = RING_INVALID;
  }
  if( rc==RING_OK && ring_has_points(r) ) rc = ring_index_build(r);
  if( rc==RING_OK ) rc = compute_shares(r);
  if( rc!=RING_OK ){
    ring_release(r);
    return rc;
  }
  *ppRing = r;
  return RING_OK;
}

uint32_t ring_units(const ring *r){
  if( r->n_nodes==0 ) return 0;
  switch( r->config.algorithm ){
    case RING_ALGO_MODN:
    case RING_ALGO_JUMP:       return r->n_nodes;
    case RING_ALGO_RENDEZVOUS: return 0;
    case RING_ALGO_MAGLEV:     return r->config.table;
    default:                   return r->n_points;    /* ring, ketama */
  }
}

uint32_t ring_unit_of(const ring *r, uint64_t pos){
  switch( r->config.algorithm ){
    case RING_ALGO_MODN:   return (uint32_t)(pos % r->n_nodes);
    case RING_ALGO_JUMP:   return jump_bucket(pos, r->n_nodes);
    case RING_ALGO_MAGLEV: return (uint32_t)(pos % r->config.table);
    default:               break;      /* ring, ketama: the points */
  }
  return ring_index_find(r, pos);
}

uint32_t ring_unit_owner(const ring *r, uint32_t k){
  switch( r->config.algorithm ){
    case RING_ALGO_MODN:   return k;
    case RING_ALGO_JUMP:   return r->buckets[k];
    case RING_ALGO_MAGLEV: return r->table[k];
    default:               return r->owners[k];
  }
}

uint32_t ring_lookup(const ring *r, uint64_t pos){
  switch( r->config.algorithm ){
    case RING_ALGO_RING:
    case RING_ALGO_KETAMA:     return r->owners[ring_index_find(r, pos)];
    case RING_ALGO_RENDEZVOUS: return rendezvous_lookup(r, pos);
    default:                   return ring_unit_owner(r, ring_unit_of(r, pos));
  }
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

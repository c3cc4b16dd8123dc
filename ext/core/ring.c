/*
** ring.c: the ring core (see ring.h for the model). Pure C, no SQLite.
** What every algorithm shares: the allocator, node checks and sorting,
** the limits, exact shares from points or slots, and the dispatch to the
** algorithm's descriptor (algo.h) for everything else.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __linux__
#include <sys/mman.h>            /* madvise: huge pages for big arrays */
#endif

#include "algo.h"
#include "options.h"
#include "ring_index.h"

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

/* Arrays from this size on ask for huge pages (2 MB on x86-64 and arm64):
** below it the pages a lookup touches fit the TLB anyway. */
#define RING_HUGE_ARRAY (4u << 20)

void *ring_alloc_lookup(size_t n){
  void *p = ring_malloc(n);
#if defined(MADV_HUGEPAGE)
  /* Before the array is first written, so that its pages are made huge
  ** as they fault in: only the whole huge pages inside it (an allocation
  ** that large is a fresh mapping of its own under glibc); a kernel
  ** without transparent huge pages ignores the advice. */
  if( p && n>=RING_HUGE_ARRAY ){
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
    if( hi>lo ) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  }
#endif
  return p;
}

void ring_config_default(ring_config *cfg){
  cfg->hash = HASH_XXH3;
  cfg->vnodes = 160;
  cfg->seed = 0;
  memset(cfg->hash_tag, 0, sizeof(cfg->hash_tag));
  cfg->no_columns = 0;
  options_set_algorithm(cfg, ring_algos[0]);
}

const ring_algo *ring_algorithm_from_name(const char *zName){
  for(int i=0; ring_algos[i]; i++){
    if( strcasecmp(zName, ring_algos[i]->name)==0 ) return ring_algos[i];
  }
  return NULL;
}

const char *ring_algorithm_name(const ring_algo *a){
  return a->name;
}

const char *ring_algorithm_list(char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; ring_algos[i] && n<nOut; i++){
    int k = snprintf(zOut+n, nOut-n, "%s%s", i ? ", " : "", ring_algos[i]->name);
    if( k<0 ) break;
    n += (size_t)k;
  }
  return zOut;
}

void ring_keys_of(const ring_config *cfg, ring_keys *k){
  ring_keys_init(k, cfg->hash, cfg->seed);
  if( cfg->hash_tag[0] ) memcpy(k->tag, cfg->hash_tag, 2);
  k->finish_by = cfg->algo->name;
  if( cfg->algo->key_rule ) cfg->algo->key_rule(cfg, k);
}

int64_t ring_point_budget(const ring_config *cfg, double w){
  if( !(w>0.0) || !isfinite(w) || w>RING_MAX_WEIGHT ) return -1;
  return cfg->algo->point_budget ? cfg->algo->point_budget(cfg, w) : 0;
}

const char *ring_check_weight(const ring_config *cfg, double w){
  if( cfg->algo->no_weights ) return w!=1.0 ? cfg->algo->no_weights : NULL;
  return cfg->algo->check_weight ? cfg->algo->check_weight(cfg, w) : NULL;
}

const char *ring_check_count(const ring_config *cfg, uint64_t n, char *zErr,
                             size_t nErr){
  if( cfg->algo->check_count==NULL ) return NULL;
  return cfg->algo->check_count(cfg, n, zErr, nErr);
}

int ring_has_points(const ring *r){
  return r->config.algo->units==RING_UNITS_POINTS;
}

int ring_lists_units(const ring *r){
  return r->config.algo->no_units==NULL && r->config.algo->units!=RING_UNITS_NONE;
}

unsigned ring_space_bits(const ring_config *cfg){
  return cfg->algo->key_bits ? cfg->algo->key_bits : hash_space_bits(cfg->hash);
}

unsigned ring_commit_needs(const ring_config *cfg){
  const ring_algo *a = cfg->algo;
  if( a->check_commit==NULL || a->commit_needs==NULL ) return 0;
  return a->commit_needs(cfg);
}

int ring_check_commit(const ring_config *cfg, const ring_commit *c,
                      char *zErr, size_t nErr){
  if( cfg->algo->check_commit==NULL ) return RING_OK;
  return cfg->algo->check_commit(cfg, c, zErr, nErr);
}

int ring_describe_gaps(const ring *r, char *zMsg, size_t nMsg){
  if( r->config.algo->describe_gaps==NULL ) return 0;
  return r->config.algo->describe_gaps(r, zMsg, nMsg);
}

unsigned ring_counts_round_needs(const ring_config *cfg){
  return cfg->vnodes<8 ? RING_COMMIT_NODES : 0;
}

int ring_check_counts_round(const ring_config *cfg, const ring_commit *c,
                            char *zErr, size_t nErr){
  if( cfg->vnodes>=8 ) return RING_OK;
  ring *r = NULL;
  int rc = ring_build(cfg, c->nodes, c->n_nodes, &r, zErr, nErr);
  ring_release(r);
  return rc;
}

int ring_units_alloc(ring *r, uint32_t n){
  r->unit_owners = ring_malloc(sizeof(uint32_t) * (n ? n : 1));
  if( r->unit_owners==NULL ) return RING_NOMEM;
  r->n_units = n;
  return RING_OK;
}

/* What is wrong with z (n bytes) as UTF-8 text: 0 nothing, 1 a NUL
** byte, 2 not valid UTF-8. */
static int utf8_fault(const char *z, size_t n){
  const unsigned char *p = (const unsigned char *)z;
  for(size_t i=0; i<n; ){
    unsigned c = p[i];
    size_t len;
    unsigned min;
    if( c==0 ) return 1;
    if( c<0x80 ){ i++; continue; }
    if( (c & 0xE0)==0xC0 ){ len = 2; min = 0x80; c &= 0x1F; }
    else if( (c & 0xF0)==0xE0 ){ len = 3; min = 0x800; c &= 0x0F; }
    else if( (c & 0xF8)==0xF0 ){ len = 4; min = 0x10000; c &= 0x07; }
    else return 2;
    if( i+len>n ) return 2;
    for(size_t k=1; k<len; k++){
      if( (p[i+k] & 0xC0)!=0x80 ) return 2;
      c = (c<<6) | (p[i+k] & 0x3F);
    }
    if( c<min || c>0x10FFFF || (c>=0xD800 && c<=0xDFFF) ) return 2;
    i += len;
  }
  return 0;
}

const char *ring_check_name(const char *z, size_t n){
  if( n==0 ) return "node name is empty";
  if( n>RING_MAX_NAME ) return "node name is longer than 1024 bytes";
  switch( utf8_fault(z, n) ){
    case 1:  return "node name contains a NUL byte";
    case 2:  return "node name is not valid UTF-8";
    default: return NULL;
  }
}

unsigned ring_columns(const ring_config *cfg){
  unsigned n = 0;
  const ring_column *c = cfg->no_columns ? NULL : cfg->algo->columns;
  while( c && c[n].name ) n++;
  return n;
}

const char *ring_column_name(const ring_config *cfg, unsigned i){
  return cfg->algo->columns[i].name;
}

int ring_column_find(const ring_config *cfg, const char *zName){
  unsigned n = ring_columns(cfg);
  for(unsigned i=0; i<n; i++){
    if( strcasecmp(zName, cfg->algo->columns[i].name)==0 ) return (int)i;
  }
  return -1;
}

const char *ring_column_list(const ring_config *cfg, char *zOut, size_t nOut){
  unsigned n = ring_columns(cfg);
  size_t k = 0;
  snprintf(zOut, nOut, "none");
  for(unsigned i=0; i<n && k<nOut; i++){
    int w = snprintf(zOut+k, nOut-k, "%s%s", i ? ", " : "",
                     cfg->algo->columns[i].name);
    if( w<0 ) break;
    k += (size_t)w;
  }
  return zOut;
}

const char *ring_column_default(const ring_config *cfg, unsigned i){
  return cfg->algo->columns[i].default_text;
}

int ring_check_column(const ring_config *cfg, unsigned i, const char *z,
                      size_t n, const char *zNode, size_t nNode, char *zErr,
                      size_t nErr){
  const ring_column *col = &cfg->algo->columns[i];
  char zName[160];
  const char *zBad = NULL;
  char zWhy[400];
  if( z==NULL ){
    if( !col->required ) return 0;
    zBad = "is required";
  }else if( n>RING_MAX_COLUMN_TEXT ){
    zBad = "is longer than 65536 bytes";
  }else if( utf8_fault(z, n) ){
    zBad = utf8_fault(z, n)==1 ? "contains a NUL byte" : "is not valid UTF-8";
  }else if( cfg->algo->check_column ){
    zBad = cfg->algo->check_column(cfg, i, z, n, zWhy, sizeof(zWhy));
  }
  if( zBad==NULL ) return 0;
  ring_quote_name(zName, sizeof(zName), zNode, nNode);
  if( z==NULL ){
    snprintf(zErr, nErr, "node %s: %s %s (algorithm %s): %s", zName,
             col->name, zBad, cfg->algo->name, col->about);
  }else if( zBad==zWhy ){
    snprintf(zErr, nErr, "node %s: %s: %s", zName, col->name, zBad);
  }else{
    snprintf(zErr, nErr, "node %s: %s %s", zName, col->name, zBad);
  }
  return 1;
}

/* Bytewise order of names, shorter first on a common prefix: SQLite's
** BINARY collation. */
static int name_compare(const char *a, size_t na, const char *b, size_t nb){
  int c = memcmp(a, b, na<nb ? na : nb);
  if( c ) return c;
  return na<nb ? -1 : na>nb;
}

void ring_quote_name(char *zOut, size_t nOut, const char *z, size_t n){
  size_t i = 0, j = 0;
  zOut[j++] = '\'';
  /* Room is kept for the closing quote, "..." and the NUL. */
  while( i<n && j + (z[i]=='\'' ? 2 : 1) + 5 <= nOut ){
    if( z[i]=='\'' ) zOut[j++] = '\'';
    zOut[j++] = z[i++];
  }
  /* A cut inside a UTF-8 character backs off to its first byte. */
  while( i<n && i>0 && ((unsigned char)z[i] & 0xC0)==0x80 ){
    i--;
    j--;
  }
  zOut[j++] = '\'';
  if( i<n ){
    memcpy(&zOut[j], "...", 3);
    j += 3;
  }
  zOut[j] = 0;
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
  ring_free(r->tokens);
  ring_free(r->lows);
  ring_free(r->replicas);
  ring_free(r->index);
  ring_free(r->owner_table);
  ring_free(r->unit_owners);
  ring_free(r->state);
  ring_free(r);
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
** Each node's share of the positions [0, 2^b) of the ring's hash, exact,
** unless the algorithm computes its own (algo.h).
**   points: point k owns the keys in (pos[k-1], pos[k]]; point 0 also owns
**     those after the last point.
**   slots: position p goes to the owner of slot p mod m (m slots); slot s
**     gets floor(2^b/m) positions, one more if s < 2^b mod m.
*/
static int compute_shares(ring *r){
  const unsigned bits = ring_space_bits(&r->config);
  const unsigned __int128 total = (unsigned __int128)1 << bits;
  const long double space = (long double)total;
  if( r->n_nodes==0 ) return RING_OK;
  if( r->config.algo->shares ) return r->config.algo->shares(r);
  owned_count *aOwned = ring_malloc(sizeof(*aOwned) * r->n_nodes);
  if( aOwned==NULL ) return RING_NOMEM;
  memset(aOwned, 0, sizeof(*aOwned) * r->n_nodes);
  if( r->config.algo->units==RING_UNITS_SLOTS ){
    uint32_t m = r->n_units;
    unsigned __int128 q = total / m, rem = total % m;
    for(uint32_t s=0; s<m; s++){
      if( r->unit_owners[s]==RING_UNOWNED ) continue;
      owned_count *c = &aOwned[r->unit_owners[s]];
      unsigned __int128 v = q + (s<rem);     /* 2^64 itself when m is 1 */
      owned_add(c, (uint64_t)v);
      c->hi += (uint64_t)(v >> 64);
    }
  }else{
    const uint64_t *pos = r->positions;
    uint32_t last = r->n_points-1;
    uint64_t top = (uint64_t)(total - 1);    /* the largest position */
    /* Point 0: 2^b - pos[last] + pos[0], added in parts that fit. */
    if( r->owners[0]!=RING_UNOWNED ){
      owned_add(&aOwned[r->owners[0]], pos[0]);
      owned_add(&aOwned[r->owners[0]], top - pos[last]);
      owned_add(&aOwned[r->owners[0]], 1);
    }
    for(uint32_t k=1; k<r->n_points; k++){
      if( r->owners[k]==RING_UNOWNED ) continue;
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
  const unsigned nColumns = ring_columns(cfg);
  for(uint32_t i=0; i<n; i++){
    const ring_input *p = aSorted[i];
    const char *zBad = ring_check_name(p->name, p->name_len);
    if( zBad ){
      snprintf(zErr, nErr, "%s", zBad);
      ring_free(aSorted);
      return RING_INVALID;
    }
    char zName[160];
    if( i>0 && input_compare(&aSorted[i-1], &aSorted[i])==0 ){
      ring_quote_name(zName, sizeof(zName), p->name, p->name_len);
      snprintf(zErr, nErr, "duplicate node: %s", zName);
      ring_free(aSorted);
      return RING_INVALID;
    }
    int64_t pts = ring_point_budget(cfg, p->weight);
    const char *zWeight = pts<0 ? NULL : ring_check_weight(cfg, p->weight);
    if( pts<0 || zWeight ){
      ring_quote_name(zName, sizeof(zName), p->name, p->name_len);
      if( zWeight ){
        snprintf(zErr, nErr, "node %s: %s", zName, zWeight);
      }else{
        snprintf(zErr, nErr, "weight of node %s must be a positive finite "
                 "number at most %g", zName, RING_MAX_WEIGHT);
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
    for(unsigned c=0; c<nColumns; c++){
      if( ring_check_column(cfg, c, p->columns[c], p->column_len[c],
                            p->name, p->name_len, zErr, nErr) ){
        ring_free(aSorted);
        return RING_INVALID;
      }
      const char *zDefault = ring_column_default(cfg, c);
      if( p->columns[c] ) nNameBytes += p->column_len[c] + 1;
      else if( zDefault ) nNameBytes += strlen(zDefault) + 1;
    }
  }

  /* One allocation for the ring, its nodes, their names for lookups, their
  ** join order and their names and column values. */
  size_t nAlloc = sizeof(ring) + sizeof(ring_node)*n + sizeof(ring_name)*n
                + sizeof(uint32_t)*n + nNameBytes;
  ring *r = ring_malloc(nAlloc);
  if( r==NULL ){
    ring_free(aSorted);
    return RING_NOMEM;
  }
  memset(r, 0, sizeof(ring));
  r->config = *cfg;
  ring_keys_of(cfg, &r->keys);
  r->n_nodes = n;
  r->nodes = (ring_node *)&r[1];
  r->names = (ring_name *)&r->nodes[n];
  r->by_join = (uint32_t *)&r->names[n];
  r->version = -1;
  r->refs = 1;
  char *zNames = (char *)&r->by_join[n];
  for(uint32_t i=0; i<n; i++){
    const ring_input *p = aSorted[i];
    ring_node *node = &r->nodes[i];
    memcpy(zNames, p->name, p->name_len);
    zNames[p->name_len] = 0;
    node->name = zNames;
    node->name_len = p->name_len;
    r->names[i].name = zNames;
    r->names[i].name_len = p->name_len;
    node->weight = p->weight;
    node->join = (uint32_t)(p - aInput);
    r->by_join[node->join] = i;
    node->points = 0;
    node->made = 0;
    node->intact = 0;
    node->share = 0.0;
    zNames += p->name_len + 1;
    for(unsigned c=0; c<RING_MAX_COLUMNS; c++){
      const char *z = c<nColumns ? p->columns[c] : NULL;
      size_t nz = c<nColumns ? p->column_len[c] : 0;
      if( z==NULL && c<nColumns && ring_column_default(cfg, c) ){
        z = ring_column_default(cfg, c);
        nz = strlen(z);
      }
      node->columns[c] = NULL;
      node->column_len[c] = 0;
      if( z==NULL ) continue;
      memcpy(zNames, z, nz);
      zNames[nz] = 0;
      node->columns[c] = zNames;
      node->column_len[c] = (uint32_t)nz;
      zNames += nz + 1;
    }
  }

  ring_free(aSorted);
  int rc = cfg->algo->build(r, prev, zErr, nErr);
  /* A ring of points or slots without one could place nothing: the
  ** algorithm says why (ketama's rounding), this is the last guard. */
  if( rc==RING_OK && n>0 && cfg->algo->units!=RING_UNITS_NONE
   && ring_units(r)==0 ){
    snprintf(zErr, nErr, "algorithm %s gives none of the %u nodes a point",
             cfg->algo->name, n);
    rc = RING_INVALID;
  }
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
  switch( r->config.algo->units ){
    case RING_UNITS_POINTS: return r->n_points;
    case RING_UNITS_NONE:   return 0;
    default:                return r->n_units;
  }
}

uint32_t ring_unit_of(const ring *r, uint64_t pos){
  const ring_algo *a = r->config.algo;
  if( a->unit_of ) return a->unit_of(r, pos);
  if( a->units==RING_UNITS_POINTS ) return ring_index_find(r, pos);
  return (uint32_t)(pos % r->n_units);
}

/*
** Points of 128 bits sorted by (top, low), under the strictly-above rule:
** the 64-bit lookup gives k, the first point whose top word is above pos.
** The points just before k whose top word is pos are above the key too
** when their low word is above low: the first of them (the lowest) is the
** key's point. Such runs take a crafted partial collision of MD5: at most
** a few points. A point's top word is pos when its arc ends one position
** before pos (the rule's positions, wrapping in the ring's space), which
** the lookup has just read nearby: the low words are read only then.
*/
uint32_t ring_unit_of_low(const ring *r, uint64_t pos, uint64_t low){
  uint32_t k = ring_unit_of(r, pos);
  if( r->lows==NULL ) return k;
  unsigned bits = ring_space_bits(&r->config);
  uint64_t end = pos ? pos-1 : bits==64 ? UINT64_MAX : ((uint64_t)1<<bits)-1;
  uint32_t n = r->n_points;
  for(uint32_t step=0; step<n; step++){
    uint32_t j = k ? k-1 : n-1;
    if( r->positions[j]!=end || r->lows[j]<=low ) break;
    k = j;
  }
  return k;
}

uint32_t ring_unit_owner(const ring *r, uint32_t k){
  return ring_has_points(r) ? r->owners[k] : r->unit_owners[k];
}

uint32_t ring_lookup(const ring *r, uint64_t pos){
  const ring_algo *a = r->config.algo;
  if( a->lookup ) return a->lookup(r, pos);
  if( a->units==RING_UNITS_POINTS && a->unit_of==NULL ){
    return ring_index_owner(r, pos);
  }
  return ring_unit_owner(r, ring_unit_of(r, pos));
}

uint32_t ring_locate_key(const ring *r, const void *p, size_t n){
  const ring_algo *a = r->config.algo;
  if( a->key_lookup ) return a->key_lookup(r, p, n);
  uint64_t low;
  uint64_t pos = ring_keys_place_low(&r->keys, p, n, &low);
  return ring_lookup_low(r, pos, low);
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

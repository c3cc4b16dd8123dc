/*
** maglev.c: the Maglev lookup table (Eisenbud et al., NSDI 2016), filled
** exactly as Envoy's maglev load balancer does (checked against the
** tables of Envoy's own unit tests), so a chash maglev ring whose node names are Envoy's host keys
** reproduces Envoy's table.
**
** Table size M = the table option (a prime; 65537 by default). Nodes are
** taken in name order (Envoy sorts hosts by key). Node N has
**     offset = XXH64(N, seed 0) mod M
**     skip   = XXH64(N, seed 1) mod (M-1) + 1
** and its preference list is (offset + skip*j) mod M, j = 0, 1, ... With
** w = weight/total weight and wmax the largest w: in rounds 1, 2, ...
** each node whose target does not exceed round*w claims its next free
** preferred slot and adds wmax to its target, until all M slots are
** taken. A key at position p belongs to the owner of slot p mod M. The
** permutation always uses XXH64 as Envoy does; the ring's hash option
** only hashes keys (default xxh64, Envoy's request hash).
*/
#include <stddef.h>
#include <stdio.h>

#include "algo.h"
#include "options.h"

#ifndef MAGLEV_MAX_TABLE       /* the fuzz targets build with a smaller one */
#define MAGLEV_MAX_TABLE 16777213      /* the largest prime below 2^24 */
#endif

/* Its own option: the table size. */
typedef struct maglev_config {
  uint32_t table;
} maglev_config;

/* Trial division: table sizes are below 2^24. */
static int maglev_check_table(const ring_option *o, const char *zValue,
                              uint64_t v, char *zErr, size_t nErr){
  for(uint64_t d=2; d*d<=v; d++){
    if( v%d==0 ){
      ring_option_bad_value(o, zValue, zErr, nErr);
      return 1;
    }
  }
  return 0;
}

static const ring_option maglev_options[] = {
  { .name = "table", .type = RING_OPTION_UINT,
    .offset = offsetof(maglev_config, table), .default_text = "65537",
    .about = "the lookup table size", .noun = "a prime",
    .help = "maglev tables have a prime size, e.g. 65537",
    .lo = 2, .hi = MAGLEV_MAX_TABLE, .check = maglev_check_table },
  { .name = NULL }
};

static uint32_t maglev_table(const ring_config *cfg){
  return RING_OWN_CONFIG(cfg, maglev_config)->table;
}

typedef struct maglev_entry {
  uint64_t offset, skip, next;
  double weight;           /* normalized: weight / total */
  double target;
} maglev_entry;

/* Node's preference list: slot (offset + skip*j) mod m at step j. */
static void maglev_permutation(const ring_node *node, uint64_t m,
                               uint64_t *pOffset, uint64_t *pSkip){
  *pOffset = hash_bytes(HASH_XXH64, 0, node->name, node->name_len) % m;
  *pSkip = hash_bytes(HASH_XXH64, 1, node->name, node->name_len) % (m-1) + 1;
}

static int maglev_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  uint64_t m = maglev_table(&r->config);
  if( n==0 ) return RING_OK;
  if( ring_units_alloc(r, (uint32_t)m)!=RING_OK ) return RING_NOMEM;
  uint32_t *table = r->unit_owners;
  maglev_entry *aEntry = ring_alloc(sizeof(maglev_entry) * n);
  if( aEntry==NULL ) return RING_NOMEM;
  double total = 0.0, wmax = 0.0;
  for(uint32_t k=0; k<n; k++) total += r->nodes[k].weight;
  for(uint32_t k=0; k<n; k++){
    const ring_node *node = &r->nodes[k];
    maglev_entry *e = &aEntry[k];
    maglev_permutation(node, m, &e->offset, &e->skip);
    e->next = 0;
    e->weight = node->weight / total;
    e->target = 0.0;
    if( e->weight>wmax ) wmax = e->weight;
  }
  for(uint64_t s=0; s<m; s++) table[s] = UINT32_MAX;
  uint64_t filled = 0;
  for(uint64_t round=1; filled<m; round++){
    for(uint32_t k=0; k<n && filled<m; k++){
      maglev_entry *e = &aEntry[k];
      if( (double)round * e->weight < e->target ) continue;
      e->target += wmax;     /* repeated addition, as Envoy: not round*wmax */
      uint64_t c = (e->offset + e->skip * e->next) % m;
      while( table[c]!=UINT32_MAX ){
        e->next++;
        c = (e->offset + e->skip * e->next) % m;
      }
      table[c] = k;
      r->nodes[k].points++;
      e->next++;
      filled++;
    }
  }
  ring_dealloc(aEntry);
  return RING_OK;
}

/* x*y mod m without overflow. */
static uint64_t mulmod(uint64_t x, uint64_t y, uint64_t m){
  return (uint64_t)((unsigned __int128)x * y % m);
}

/* j = (s - offset) / skip mod m; m is prime, so skip has the inverse
** skip^(m-2) (Fermat). */
static uint64_t maglev_slot_replica(const ring *r, uint32_t s){
  uint64_t m = maglev_table(&r->config), offset, skip;
  maglev_permutation(&r->nodes[r->unit_owners[s]], m, &offset, &skip);
  uint64_t inv = 1, base = skip;
  for(uint64_t e=m-2; e; e>>=1){
    if( e & 1 ) inv = mulmod(inv, base, m);
    base = mulmod(base, base, m);
  }
  return mulmod((s + m - offset) % m, inv, m);
}

/* The table must have at least as many slots as nodes. */
static const char *maglev_check_count(const ring_config *cfg, uint64_t n,
                                      char *zErr, size_t nErr){
  if( n<=maglev_table(cfg) ) return NULL;
  snprintf(zErr, nErr, "a maglev table of %u slots holds at most %u nodes "
           "(%llu given); create the ring with a larger table option",
           maglev_table(cfg), maglev_table(cfg), (unsigned long long)n);
  return zErr;
}

const ring_algo algo_maglev = {
  .name = "maglev",
  .default_hash = HASH_XXH64,
  .own_options = maglev_options,
  .units = RING_UNITS_SLOTS,
  .unit_name = "slots",
  .build = maglev_build,
  .slot_replica = maglev_slot_replica,
  .check_count = maglev_check_count,
  .doc = {
    .summary = "Maglev's lookup table",
    .cost = "O(1): one table slot",
    .weights = "yes (Envoy's weighted fill)",
    .remove = "any node",
    .movement = "small, not minimal (a few % beyond 1/n)",
    .options = "`hash` (default `xxh64`), `seed`, `table`",
  },
};

/*
** modn.c: algorithm modn, hash mod n: the baseline that consistent
** hashing improves on (changing n moves almost every key).
**
** The nodes in name order (bytewise) are slots 0..n-1; a key at position
** pos belongs to slot pos mod n. Weights are ignored.
*/
#include "algo.h"

static int modn_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  if( r->n_nodes==0 ) return RING_OK;
  int rc = ring_units_alloc(r, r->n_nodes);
  if( rc!=RING_OK ) return rc;
  for(uint32_t s=0; s<r->n_nodes; s++) r->unit_owners[s] = s;
  return RING_OK;
}

const ring_algo algo_modn = {
  .name = "modn",
  .default_hash = HASH_XXH3,
  .integer_keys = 1,
  .units = RING_UNITS_SLOTS,
  .unit_name = "slots",
  .no_units = "a key's owner is its position mod n, so it changes at every "
              "position",
  .build = modn_build,
  .doc = {
    .summary = "hash mod n, the baseline",
    .cost = "O(1)",
    .weights = "no",
    .remove = "any node",
    .movement = "almost every key moves: the baseline",
    .options = "`hash`, `seed`",
    .replicas = "nodes after the owner (name order)",
  },
};

/*
** jump.c: Lamping & Veach's jump consistent hash ("A Fast, Minimal Memory,
** Consistent Hash Algorithm", 2014), written from its definition.
**
** The key's 64-bit position is the jump key; the nodes are buckets
** 0..n-1 in the order they joined. Growing n moves only 1/n of the keys,
** all onto the new bucket; so only the last bucket can leave without
** moving other keys, which is why a commit that removes any other node is
** refused. No weights. Lookup costs O(log n) steps and no memory.
**
** The join-order machinery (buckets in join order, even shares, the
** commit check) is shared with the other algorithms that number nodes so
** (guava, kafka), and lives here with the first of them.
*/
#include <stdio.h>

#include "algo.h"

uint32_t jump_bucket(uint64_t k, uint32_t n){
  int64_t b = -1, j = 0;
  while( j<(int64_t)n ){
    b = j;
    k = k * 2862933555777941757ULL + 1;
    /* The order of the double operations is part of the definition. */
    j = (int64_t)((double)(b+1) * (2147483648.0 / (double)((k >> 33) + 1)));
  }
  return (uint32_t)b;
}

/* Buckets keep the order the nodes joined in. */
int ring_units_join_order(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  int rc = ring_units_alloc(r, r->n_nodes);
  if( rc!=RING_OK ) return rc;
  for(uint32_t j=0; j<r->n_nodes; j++) r->unit_owners[j] = r->by_join[j];
  return RING_OK;
}

static uint32_t jump_unit_of(const ring *r, uint64_t pos){
  return jump_bucket(pos, r->n_nodes);
}

/* 1/n each, the expectation: jump's buckets are uniform, and exact counts
** over 2^64 keys cannot be computed. */
int ring_shares_even(ring *r){
  for(uint32_t n=0; n<r->n_nodes; n++) r->nodes[n].share = 1.0/r->n_nodes;
  return RING_OK;
}

/*
** Only the last nodes can leave. Checked when the transaction commits,
** not at each removal, so that one transaction (or one DELETE, which
** removes in id order) can remove several of the last nodes, or all: every
** node of the committed version that is gone must have joined after every
** one that stays, that is after the last that stays.
*/
int ring_check_commit_last_only(const ring_config *cfg, const ring_commit *c,
                                char *zErr, size_t nErr){
  const ring_input *pFirstGone = c->n_gone ? &c->gone[0] : NULL;
  const ring_input *pLastKept = c->last_kept;
  if( pFirstGone && pLastKept && pFirstGone->id<pLastKept->id ){
    char zGone[160], zKept[160];
    ring_quote_name(zGone, sizeof(zGone), pFirstGone->name,
                    pFirstGone->name_len);
    ring_quote_name(zKept, sizeof(zKept), pLastKept->name, pLastKept->name_len);
    snprintf(zErr, nErr, "cannot remove node %s: algorithm %s numbers "
             "nodes as %s in the order they joined, so only the last "
             "one (%s) can be removed; removing another would move keys "
             "between all the nodes after it (remove those too, in the same "
             "transaction, or none)", zGone, cfg->algo->name,
             cfg->algo->unit_name, zKept);
    return RING_INVALID;
  }
  return RING_OK;
}

const ring_algo algo_jump = {
  .name = "jump",
  .default_hash = HASH_XXH3,
  .units = RING_UNITS_BUCKETS,
  .unit_name = "buckets",
  .no_units = "a key's bucket comes from pseudo-random jumps seeded by its "
              "position, not from ranges of positions",
  .no_diff = "a key's bucket comes from pseudo-random jumps seeded by its "
             "position, not from ranges of positions",
  .integer_keys = 1,
  .build = ring_units_join_order,
  .unit_of = jump_unit_of,
  .shares = ring_shares_even,
  .no_weights = "algorithm jump has no weights: every node's weight must be 1",
  .check_commit = ring_check_commit_last_only,
  .doc = {
    .summary = "jump consistent hash",
    .cost = "O(log n), no memory",
    .weights = "no (all 1)",
    .remove = "only the last nodes",
    .movement = "exactly 1/n of keys, all onto the new node",
    .options = "`hash`, `seed`",
  },
};

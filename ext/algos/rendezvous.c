/*
** rendezvous.c: rendezvous (highest random weight) hashing, weighted by
** the logarithmic method (Schindelhauer & Schomaker 2005).
**
** How node and key combine (this is chash's own definition; it is not
** meant to match any router):
**   h    = the node name hashed with the ring's hash and seed (kept per
**          node in r->state)
**   c    = Hash128to64(h, pos), CityHash's 128-to-64 mix of the node hash
**          (high half) and the key's position (low half):
**            a = (pos ^ h) * K;  a ^= a >> 47;
**            b = (h ^ a) * K;    b ^= b >> 47;  c = b * K
**          with K = 0x9ddfea08eb382d69, all mod 2^64
**   u    = ((c >> 12) + 0.5) / 2^52, a double strictly inside (0, 1)
**   score = -weight / ln(u)      (C's log, in double)
** The node with the highest score owns the key; on an exact tie, the one
** whose name sorts first. Node i wins with probability weight_i / total,
** and removing a node moves only its own keys. Lookup is O(n): every
** node is scored.
*/
#include <math.h>

#include "algo.h"

#define HASH128_MUL 0x9ddfea08eb382d69ULL

static uint64_t hash128to64(uint64_t high, uint64_t low){
  uint64_t a = (low ^ high) * HASH128_MUL;
  a ^= a >> 47;
  uint64_t b = (high ^ a) * HASH128_MUL;
  b ^= b >> 47;
  return b * HASH128_MUL;
}

static int rendezvous_build(ring *r, const ring *prev, char *zErr,
                            size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  if( r->n_nodes==0 ) return RING_OK;
  uint64_t *aHash = ring_alloc(sizeof(uint64_t) * r->n_nodes);
  if( aHash==NULL ) return RING_NOMEM;
  for(uint32_t k=0; k<r->n_nodes; k++){
    const ring_node *node = &r->nodes[k];
    aHash[k] = hash_bytes(r->config.hash, r->config.seed, node->name,
                          node->name_len);
  }
  r->state = aHash;
  return RING_OK;
}

static double rendezvous_score(const ring *r, uint32_t n, uint64_t pos){
  const uint64_t *aHash = r->state;
  uint64_t c = hash128to64(aHash[n], pos);
  double u = ((double)(c >> 12) + 0.5) / 4503599627370496.0;   /* 2^52 */
  return -r->nodes[n].weight / log(u);
}

static uint32_t rendezvous_lookup(const ring *r, uint64_t pos){
  uint32_t best = 0;
  double bestScore = -1.0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    double score = rendezvous_score(r, k, pos);
    if( score>bestScore ){
      bestScore = score;
      best = k;
    }
  }
  return best;
}

/* weight / total weight: the probability that the node wins when the
** scores are independent and uniform. */
static int rendezvous_shares(ring *r){
  double sum = 0.0;
  for(uint32_t n=0; n<r->n_nodes; n++) sum += r->nodes[n].weight;
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].share = r->nodes[n].weight / sum;
  }
  return RING_OK;
}

const ring_algo algo_rendezvous = {
  .name = "rendezvous",
  .default_hash = HASH_XXH3,
  .units = RING_UNITS_NONE,
  .no_units = "a key's owner is the node that scores highest for it, not a "
              "range of positions",
  .no_diff = "a key's owner is the node that scores highest for it, not a "
             "range of positions",
  .build = rendezvous_build,
  .lookup = rendezvous_lookup,
  .shares = rendezvous_shares,
  .score = rendezvous_score,
  .doc = {
    .summary = "highest random weight",
    .cost = "**O(n)**: every node is scored",
    .weights = "yes (exact in expectation)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`hash`, `seed`",
  },
};

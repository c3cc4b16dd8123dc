/*
** hashring.c: algorithm hashring, the ring of the npm package `hashring`
** (3.2.0), which the npm `memcached` client (2.2.2) picks servers with, bit
** for bit.
**
** Nodes are the server strings given to `new HashRing(...)`, in that order
** (the nodes' join order); the memcached client hashes a server on port
** 11211 by its host alone, so such a server is inserted under its host.
** For n servers of total weight W (summed in server order), a server of
** weight w gets floor(w / W * c * n) digests, computed in double precision
** left to right as JavaScript does, where c = vnodes / 4 is hashring's
** `vnode count` (40 by default). So 7 equal servers get 39 digests each
** (1/7*40*7 is 39.99999999999999), and a server of small weight can get
** none. Digest i (from 0) of server S is the MD5 of the text "S-i"; its
** four words, each read little-endian, are four points. Points are sorted
** stably, so of equal points the one made first (the earlier server) is
** found first. A key's position is MD5 word 0 of its bytes (hash md5); it
** belongs to the first point at or after it, wrapping to the lowest.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

/* Set each node's points: 4 * floor(w / W * c * n), W summed in join order
** (aOrder), each step in double precision as JavaScript evaluates it. */
static uint64_t hashring_counts(ring *r, const ring_node **aOrder){
  double W = 0.0;
  for(uint32_t o=0; o<r->n_nodes; o++) W += aOrder[o]->weight;
  double c = (double)(r->config.vnodes / 4);
  double n = (double)r->n_nodes;
  uint64_t total = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    double share = r->nodes[k].weight / W;
    double t = share * c;
    t = t * n;
    r->nodes[k].points = 4 * (uint32_t)floor(t);
    total += r->nodes[k].points;
  }
  return total;
}

/* Point 4i+w of a node is word w of its digest i: ketama's, MD5("S-i"). */
static void hashring_make(const ring *r, uint32_t n, uint32_t from,
                          ring_point *a){
  ring_digest_make(r, n, from, ring_digest_md5_dash, a);
}

static int hashring_build(ring *r, const ring *prev, char *zErr,
                          size_t nErr){
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  const ring_node **aOrder = ring_alloc(sizeof(*aOrder) * n);
  if( aOrder==NULL ) return RING_NOMEM;
  for(uint32_t j=0; j<n; j++) aOrder[j] = &r->nodes[r->by_join[j]];
  uint64_t total = hashring_counts(r, aOrder);
  ring_dealloc(aOrder);
  if( total==0 ){
    snprintf(zErr, nErr, "algorithm hashring gives none of the %u nodes a "
             "point: vnodes %d rounds each node's count down to 0; use a "
             "larger vnodes (hashring's default is 160, a vnode count of 40)",
             n, r->config.vnodes);
    return RING_INVALID;
  }

  /* Equal points all stay in join order, as hashring's stable sort of
  ** points made in server order leaves them. */
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_FIRST, 0 },
    .make = hashring_make,
    .flags = RING_POINTS_KEEP_TIES,
  };
  return ring_points_make(r, prev, &mk);
}

/* Counts sum to at most vnodes per node (the floors of shares of
** vnodes * n), so vnodes per node bounds the ring's size. */
static int64_t hashring_point_budget(const ring_config *cfg, double w){
  (void)w;
  return cfg->vnodes;
}

static int hashring_check_options(ring_config *cfg, unsigned set,
                                  char *zErr, size_t nErr){
  if( (set & OPTION_HASH) && cfg->hash!=HASH_MD5 ){
    snprintf(zErr, nErr, "hash: algorithm hashring hashes keys and points "
             "with MD5, as hashring and the memcached client do by default "
             "(md5, the default), not %s", hash_name(cfg->hash));
    return 1;
  }
  if( cfg->vnodes%4!=0 ){
    snprintf(zErr, nErr, "vnodes: algorithm hashring needs a multiple of 4 "
             "(4 x hashring's vnode count: each MD5 digest gives 4 points); "
             "its default is 160");
    return 1;
  }
  return 0;
}

const ring_algo algo_hashring = {
  .name = "hashring",
  .default_hash = HASH_MD5,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = hashring_check_options,
  .point_budget = hashring_point_budget,
  .build = hashring_build,
  .check_commit = ring_check_counts_round,
  .commit_needs = ring_counts_round_needs,
  .doc = {
    .summary = "the npm `hashring` and `memcached` packages",
    .reproduces = "an npm hashring/memcached client",
    .cost = "O(log points)",
    .weights = "yes (npm hashring's formula)",
    .remove = "any node",
    .movement = "mostly onto the new node; other nodes' point counts change "
                "slightly",
    .options = "`vnodes` (multiple of 4, default 160)",
  },
};

/*
** uhashring.c: Python uhashring's default ring, HashRing(nodes), bit for
** bit (uhashring 2.1; tests/compat checks it).
**
** Node n of weight w (a whole number, not normalised) gets vnodes * w
** points (vnodes 160 by default): point i, from 0, is the MD5 of the text
** "n-i" read as one 128-bit big-endian integer. Nodes are placed in the
** order they joined and a later node's point replaces an equal earlier
** one (a Python dict), so a shared point belongs to the node that joined
** last. A key's position is the MD5 of its text as a 128-bit big-endian
** integer (hash md5_128), and the key belongs to the first point strictly
** above it (Python's bisect_right), wrapping to the lowest point.
**
** The points are 128 bits: the core keeps their top 64 bits as positions
** and their low 64 beside them (ring_points_place_low), and a key's low
** 64 bits decide where its top 64 equal a point's, so the placement is
** exact even for a key crafted to share a point's top 64 bits. Arcs,
** shares and ch_diff are over the top 64 bits.
*/
#include <stdio.h>

#include "algo.h"
#include "options.h"

#define UHASHRING_VNODES 160           /* uhashring's default vnodes */

/* Points of a node of weight w (whole, at most RING_MAX_WEIGHT: the
** points limit, checked before the build, bounds the product). */
static uint64_t uhashring_count(const ring_config *cfg, double w){
  return (uint64_t)cfg->vnodes * (uint64_t)w;
}

static int uhashring_build(ring *r, const ring *prev, char *zErr,
                           size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint64_t total = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    total += uhashring_count(&r->config, r->nodes[k].weight);
  }
  if( total==0 ) return RING_OK;
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  uint64_t *aLow = ring_alloc(sizeof(uint64_t) * total);
  int rc = RING_NOMEM;
  if( a && aLow ){
    uint32_t m = 0;
    for(uint32_t k=0; k<r->n_nodes; k++){
      uint64_t count = uhashring_count(&r->config, r->nodes[k].weight);
      for(uint32_t i=0; i<count; i++, m++){
        char label[RING_MAX_NAME + 16];
        size_t len = ring_label_dash(&r->nodes[k], i, label);
        a[m].pos = hash_md5_128(label, len, &aLow[m]);
        a[m].node = k;
      }
    }
    static const ring_points_rule rule = {RING_LOOKUP_ABOVE, RING_TIES_LAST,
                                          0};
    rc = ring_points_place_low(r, a, aLow, m, &rule);
  }
  ring_dealloc(aLow);
  ring_dealloc(a);
  return rc;
}

static int64_t uhashring_point_budget(const ring_config *cfg, double w){
  return (int64_t)uhashring_count(cfg, w);
}

static const char *uhashring_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=(double)(uint64_t)w ){
    return "algorithm uhashring takes whole weights, as uhashring does: "
           "1, 2, 3, ...";
  }
  return NULL;
}

static int uhashring_check_options(ring_config *cfg, unsigned set,
                                   char *zErr, size_t nErr){
  if( !(set & OPTION_VNODES) ) cfg->vnodes = UHASHRING_VNODES;
  if( cfg->hash!=HASH_MD5_128 ){
    snprintf(zErr, nErr, "algorithm uhashring takes only hash md5_128 "
             "(uhashring's default ring hashes with the whole 128-bit MD5), "
             "not %s", hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_uhashring = {
  .name = "uhashring",
  .default_hash = HASH_MD5_128,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = uhashring_check_options,
  .check_weight = uhashring_check_weight,
  .point_budget = uhashring_point_budget,
  .build = uhashring_build,
  .doc = {
    .summary = "Python uhashring's default ring",
    .reproduces = "a Python `uhashring.HashRing(nodes)`",
    .cost = "O(log points)",
    .weights = "integers (vnodes·w points, not normalised)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`vnodes` (points per unit of weight, default 160)",
    .points = "points, `token` the top 64 bits of each 128-bit point",
    .arcs = "arcs over the top 64 bits of the points",
  },
};

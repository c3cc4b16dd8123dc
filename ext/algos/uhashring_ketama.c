/*
** uhashring_ketama.c: Python uhashring's ketama ring, HashRing(nodes,
** hash_fn='ketama'), bit for bit (uhashring 2.1; tests/compat checks it).
**
** For N nodes of total weight W (whole numbers), node n of weight w gets
**     labels = floor(vnodes * N * w / W)
** labels "n-0" .. "n-(labels-1)" (vnodes 40 by default: uhashring's vnodes
** counts labels, not points), each giving four points: the four words of
** the label's MD5, each read little-endian. Nodes are placed in the order
** they joined and a later node's point replaces an equal earlier one (a
** Python dict), so a shared point belongs to the node that joined last.
** A key's hash is word 0 of its MD5 (hash md5, the only one uhashring's
** ketama ring has), and the key belongs to the first point strictly above
** it (Python's bisect_right), wrapping to the lowest point.
**
** The core places the points under its strictly-above rule with ties to
** the last joiner, so ch_points, arcs, shares and diffs need nothing more
** here. A point that loses a tie is not on the ring, and its node's point
** count leaves it out (uhashring keeps both copies in its sorted list, but
** only the last joiner's in the dict that names the owner).
*/
#include <stdio.h>

#include "algo.h"
#include "options.h"

#define UHASHRING_KETAMA_LABELS 40     /* uhashring's default vnodes */

/* Labels of a node of weight w among n nodes of total weight W; weights
** are whole numbers up to RING_MAX_WEIGHT, so the product needs 128 bits. */
static uint32_t uhashring_labels(double w, double W, uint32_t n, int vnodes){
  unsigned __int128 a = (unsigned __int128)vnodes * n * (uint64_t)w;
  return (uint32_t)(a / (uint64_t)W);
}

static int uhashring_ketama_build(ring *r, const ring *prev, char *zErr,
                                  size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  double W = 0.0;
  uint64_t total = 0;
  for(uint32_t k=0; k<n; k++) W += r->nodes[k].weight;
  for(uint32_t k=0; k<n; k++){
    total += 4 * (uint64_t)uhashring_labels(r->nodes[k].weight, W, n,
                                            r->config.vnodes);
  }
  /* The heaviest node has w >= W/n, so labels >= vnodes >= 1: total > 0. */
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  if( a==NULL ) return RING_NOMEM;
  uint32_t m = 0;
  for(uint32_t k=0; k<n; k++){
    r->nodes[k].points = 4 * uhashring_labels(r->nodes[k].weight, W, n,
                                              r->config.vnodes);
    ring_digest_make(r, k, 0, ring_digest_md5_dash, a + m);
    for(uint32_t j=0; j<r->nodes[k].points; j++) a[m++].node = k;
  }
  static const ring_points_rule rule = {RING_LOOKUP_ABOVE, RING_TIES_LAST, 0};
  int rc = ring_points_place(r, a, m, &rule);
  ring_dealloc(a);
  return rc;
}

/* The labels sum to at most vnodes * N: 4 * vnodes points per node. */
static int64_t uhashring_ketama_point_budget(const ring_config *cfg,
                                             double w){
  (void)w;
  return 4 * (int64_t)cfg->vnodes;
}

static const char *uhashring_ketama_check_weight(const ring_config *cfg,
                                                 double w){
  (void)cfg;
  if( w!=(double)(uint64_t)w ){
    return "algorithm uhashring_ketama takes whole weights, as uhashring "
           "does: 1, 2, 3, ...";
  }
  return NULL;
}

static int uhashring_ketama_check_options(ring_config *cfg, unsigned set,
                                          char *zErr, size_t nErr){
  if( !(set & OPTION_VNODES) ) cfg->vnodes = UHASHRING_KETAMA_LABELS;
  if( cfg->hash!=HASH_MD5 ){
    snprintf(zErr, nErr, "algorithm uhashring_ketama takes only hash md5 "
             "(uhashring's ketama ring hashes with MD5), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_uhashring_ketama = {
  .name = "uhashring_ketama",
  .default_hash = HASH_MD5,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = uhashring_ketama_check_options,
  .check_weight = uhashring_ketama_check_weight,
  .point_budget = uhashring_ketama_point_budget,
  .build = uhashring_ketama_build,
  .doc = {
    .summary = "Python uhashring's ketama ring",
    .reproduces = "a Python `uhashring.HashRing(nodes, hash_fn='ketama')`",
    .cost = "O(log points)",
    .weights = "integers (uhashring's floor rule)",
    .remove = "any node",
    .movement = "mostly onto the new node; other nodes' label counts change "
                "slightly",
    .options = "`vnodes` (labels of 4 points each, default 40)",
  },
};

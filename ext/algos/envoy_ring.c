/*
** envoy_ring.c: the ring of Envoy's ring hash load balancer (RING_HASH,
** hash_function XX_HASH, the default), which Istio's consistentHash with
** ringHash configures; bit for bit, as current Envoy builds it.
**
** A node is a host's hash key (its address as Envoy prints it,
** "10.0.0.1:8080", or its hostname, or its hash_key metadata); the nodes'
** join order is Envoy's host order. Weights are Envoy's integer
** load_balancing_weight. In double precision:
**
**   w(h)   = weight(h) * 1.0 / (sum of the weights), w_min the smallest;
**   scale  = min(ceil(w_min * min_ring) / w_min, max_ring);
**   then two running sums, current = target = 0: for each host in join
**   order, target += scale * w(h), and while current < target the host
**   gets a point at XXH64(name "_" i, seed 0) for i = 0, 1, ..., and
**   current += 1.
**
** The sums run across hosts, so the fraction a host does not use passes
** to the next one: a host's count can depend on the hosts before it, and
** a small max_ring leaves some hosts without any point. A key's position
** is the XXH64 of its bytes, seed 0 (what Envoy's hash policies compute
** for a header, cookie or query value); it belongs to the first point at
** or after it, wrapping to the first point.
**
** Envoy sorts the points with an unstable sort, so the order of equal
** points is unspecified there; labels are all distinct, so a tie needs two
** labels with the same XXH64. Here the points are made in join order and
** sorted stably: the node that joined first wins.
**
** The double arithmetic is part of the rule: it must round after every
** operation, which the build's -ffp-contract=off guarantees (no fused
** multiply-add).
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

/* Envoy keeps the sum of a host set's weights within 32 bits. */
#define ENVOY_MAX_WEIGHT_SUM 4294967295.0

/* min_ring and max_ring at most 8M, as Envoy; a ring has at most max_ring
** + 1 points, so below RING_MAX_POINTS. */
#define ENVOY_MAX_RING (RING_MAX_POINTS > 8388608 ? 8388608 \
                                                  : RING_MAX_POINTS - 1)

/* Its own options: Envoy's minimum_ring_size and maximum_ring_size. */
typedef struct envoy_config {
  uint32_t min_ring;
  uint32_t max_ring;
} envoy_config;

static const ring_option envoy_options[] = {
  { .name = "min_ring", .type = RING_OPTION_UINT,
    .offset = offsetof(envoy_config, min_ring), .default_text = "1024",
    .about = "the smallest ring size", .help = "Envoy's minimum_ring_size",
    .lo = 1, .hi = ENVOY_MAX_RING },
  { .name = "max_ring", .type = RING_OPTION_UINT,
    .offset = offsetof(envoy_config, max_ring),        /* default: hi */
    .about = "the largest ring size", .help = "Envoy's maximum_ring_size",
    .lo = 1, .hi = ENVOY_MAX_RING },
  { .name = NULL }
};

/* A node's labels: "name_" in label (RING_MAX_NAME + 16 bytes), then
** envoy_point appends i and hashes. */
static void envoy_label_start(const ring_node *node, char *label){
  memcpy(label, node->name, node->name_len);
  label[node->name_len] = '_';
}

/* Point i of the node whose label envoy_label_start began: XXH64("name_i",
** seed 0). */
static uint64_t envoy_point(char *label, uint32_t name_len, uint32_t i){
  size_t len = name_len + 1 + ring_format_u32(i, label + name_len + 1);
  return hash_bytes(HASH_XXH64, 0, label, len);
}

/* Node n's points from replica from on. */
static void envoy_make(const ring *r, uint32_t n, uint32_t from,
                       ring_point *a){
  const ring_node *node = &r->nodes[n];
  char label[RING_MAX_NAME + 16];
  envoy_label_start(node, label);
  for(uint32_t i=from; i<node->points; i++){
    a[i-from].pos = envoy_point(label, node->name_len, i);
  }
}

/* Set each node's points count by Envoy's running sums (sum: the sum of
** the weights), in join order. */
static void envoy_counts(ring *r, double sum){
  uint32_t n = r->n_nodes;
  double w_min = 1.0;
  for(uint32_t j=0; j<n; j++){
    double w = r->nodes[r->by_join[j]].weight * 1.0 / sum;
    if( w<w_min ) w_min = w;
  }
  const envoy_config *c = RING_OWN_CONFIG(&r->config, envoy_config);
  double scale = ceil(w_min * (double)c->min_ring) / w_min;
  if( (double)c->max_ring<scale ) scale = (double)c->max_ring;
  double current = 0.0, target = 0.0;
  for(uint32_t j=0; j<n; j++){
    ring_node *node = &r->nodes[r->by_join[j]];
    target += scale * (node->weight * 1.0 / sum);
    uint32_t count = 0;
    while( current<target ){
      count++;
      current += 1.0;
    }
    node->points = count;
  }
}

static int envoy_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  double sum = 0.0;          /* exact: integers below 2^53 */
  for(uint32_t k=0; k<n; k++) sum += r->nodes[k].weight;

  envoy_counts(r, sum);
  /* Equal points stay, the first joined first: the stable sort of points
  ** made in join order. */
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_FIRST, 0 },
    .make = envoy_make,
    .flags = RING_POINTS_KEEP_TIES,
  };
  return ring_points_make(r, prev, &mk);
}

/* The ring has at most max_ring points (plus one, from the rounding of the
** running sums) whatever the nodes, and max_ring is below RING_MAX_POINTS:
** count one per node for the write-time limits, as for an algorithm without
** points. */
static int64_t envoy_point_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 1;
}

static const char *envoy_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=floor(w) ){
    return "algorithm envoy_ring takes whole-number weights, as Envoy's "
           "load_balancing_weight (1, 2, 3, ...)";
  }
  return NULL;
}

static int envoy_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_XXH64 ){
    snprintf(zErr, nErr, "hash: algorithm envoy_ring hashes points and keys "
             "with xxh64, as Envoy's ring hash does, not %s",
             hash_name(cfg->hash));
    return 1;
  }
  if( cfg->seed!=0 ){
    snprintf(zErr, nErr, "seed: algorithm envoy_ring hashes with seed 0, as "
             "Envoy does");
    return 1;
  }
  const envoy_config *c = RING_OWN_CONFIG(cfg, envoy_config);
  if( c->min_ring>c->max_ring ){
    snprintf(zErr, nErr, "min_ring (%u) is larger than max_ring (%u)",
             c->min_ring, c->max_ring);
    return 1;
  }
  return 0;
}

/* The commit check reads the sum of the weights. */
static unsigned envoy_commit_needs(const ring_config *cfg){
  (void)cfg;
  return RING_COMMIT_TOTALS;
}

/* Envoy refuses a host set whose weights sum past 32 bits. Checked when a
** ring table's transaction commits (the ring builds either way: the sum is
** exact in double precision). */
static int envoy_check_commit(const ring_config *cfg, const ring_commit *c,
                              char *zErr, size_t nErr){
  (void)cfg;
  double sum = c->weight_sum;
  if( sum>ENVOY_MAX_WEIGHT_SUM ){
    snprintf(zErr, nErr, "algorithm envoy_ring: the weights sum to %.0f; "
             "Envoy's limit is 4294967295", sum);
    return RING_INVALID;
  }
  return RING_OK;
}

const ring_algo algo_envoy_ring = {
  .name = "envoy_ring",
  .default_hash = HASH_XXH64,
  .own_options = envoy_options,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = envoy_check_options,
  .check_weight = envoy_check_weight,
  .point_budget = envoy_point_budget,
  .build = envoy_build,
  .check_commit = envoy_check_commit,
  .commit_needs = envoy_commit_needs,
  .doc = {
    .summary = "Envoy's ring hash load balancer",
    .reproduces = "an Envoy (Istio) ring hash cluster",
    .cost = "O(log points)",
    .weights = "whole numbers (Envoy's formula)",
    .remove = "any node",
    .movement = "mostly onto the new node; the others' point counts change "
                "with the lightest host's share",
    .options = "`min_ring` (default 1024), `max_ring` (default 8388608)",
  },
};

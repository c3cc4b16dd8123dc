/*
** dubbo.c: the ring of Apache Dubbo's ConsistentHashLoadBalance
** (loadbalance="consistenthash"), bit for bit: the stateless selector of
** Dubbo 2.6, 2.7.0 - 2.7.14 and 3.0 - 3.3.
**
** A node is a provider address as Dubbo's provider URL gives it
** ("10.0.0.1:20880"). For i = 0 .. vnodes/4 - 1 (vnodes is Dubbo's
** hash.nodes, default 160, and the division rounds down as Java's int
** division does: hash.nodes=50 gives 12 digests, 48 points a provider;
** under 4 Dubbo makes no point and its selector fails on every call, so
** those values are refused), the MD5 of the text "address" followed by i in
** decimal, with no separator, gives four points: digest bytes 4h .. 4h+3,
** h = 0..3, read little-endian as unsigned 32-bit numbers. Point 4i+h is
** the node's replica 4i+h. A key's position is MD5 bytes 0..3 of its bytes,
** little-endian (the md5 hash); it belongs to the first point at or after
** it, wrapping to the first point.
**
** Dubbo puts the points into a Java TreeMap with put(), which holds one
** entry per position: a point equal to one of an earlier provider in its
** list replaces it, so the provider listed last wins. Without a separator
** two addresses can make the same text ("10.0.0.1:2088" + "10" is
** "10.0.0.1:20881" + "0"), and then 40 points tie. Here the nodes' join
** order is Dubbo's list order; the ring holds what the TreeMap holds, one
** point per position, the winner's, and a node's `points` counts the
** points it kept (ch_points numbers them from 0 in the order they are
** made, skipping any it lost).
**
** Weights must be 1: Dubbo's consistent hash ignores them.
*/
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

/* The 4 points of node's digest i: MD5("address" "i") words 0..3. */
static void dubbo_digest(const ring_node *node, uint32_t i, uint64_t aPos[4]){
  char label[RING_MAX_NAME + 16];
  memcpy(label, node->name, node->name_len);
  size_t len = node->name_len + ring_format_u32(i, label + node->name_len);
  hash_md5_words(label, len, aPos);
}

/* The digests Dubbo makes a provider: hash.nodes/4, rounded down. */
static uint32_t dubbo_digests(const ring_config *cfg){
  return (uint32_t)cfg->vnodes / 4;
}

/* Node n's points 4i+h from replica from on. */
static void dubbo_make(const ring *r, uint32_t n, uint32_t from,
                       ring_point *a){
  ring_digest_make(r, n, from, dubbo_digest, a);
}

/* Every provider's points, 4i+h in order; the provider that joined last
** keeps a point two of them make (the TreeMap's last put). */
static int dubbo_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  uint32_t per_node = 4 * dubbo_digests(&r->config);
  if( r->n_nodes==0 || per_node==0 ) return RING_OK;   /* no point: refused */
  for(uint32_t k=0; k<r->n_nodes; k++) r->nodes[k].points = per_node;
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_LAST, 0 },
    .make = dubbo_make,
  };
  return ring_points_make(r, prev, &mk);
}

static int64_t dubbo_point_budget(const ring_config *cfg, double w){
  (void)w;
  return 4 * (int64_t)dubbo_digests(cfg);
}

static int dubbo_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_MD5 ){
    snprintf(zErr, nErr, "hash: algorithm dubbo hashes points and keys with "
             "md5, as Dubbo does (MD5 bytes 0..3, little-endian), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  if( cfg->vnodes<4 ){
    snprintf(zErr, nErr, "vnodes: algorithm dubbo needs at least 4, as "
             "Dubbo's hash.nodes does: Dubbo makes hash.nodes/4 MD5 digests "
             "of 4 points each, so hash.nodes=%d gives no point and Dubbo's "
             "selector fails on every call", cfg->vnodes);
    return 1;
  }
  return 0;
}

const ring_algo algo_dubbo = {
  .name = "dubbo",
  .default_hash = HASH_MD5,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = dubbo_check_options,
  .no_weights = "algorithm dubbo has no weights (Dubbo's consistent hash "
                "ignores them): every node's weight must be 1",
  .point_budget = dubbo_point_budget,
  .build = dubbo_build,
  .doc = {
    .summary = "Apache Dubbo's consistent hash load balancer",
    .reproduces = "a Dubbo consumer",
    .cost = "O(log points)",
    .weights = "no (all 1, as Dubbo)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`vnodes` (Dubbo's `hash.nodes`, 4 or more, default 160: "
               "hash.nodes/4 digests of 4 points, so 50 gives 48)",
  },
};

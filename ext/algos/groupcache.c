/*
** groupcache.c: the ring of Go's groupcache consistenthash package (and so
** of groupcache's HTTPPool), bit for bit; checked against Debian's
** golang-github-golang-groupcache-dev (upstream revision of January 2020)
** in tests/compat/ownring.py.
**
** Every node gets `replicas` points (the vnodes option, 50 by default as
** in HTTPPool): point i = 0 .. replicas-1 of node N sits at the CRC-32
** (IEEE: the hash crc32a, Go's crc32.ChecksumIEEE) of the decimal i
** followed directly by N, with no separator: "0http://10.0.0.1:8080". A
** key belongs to the first point at or after the CRC-32 of its bytes
** (sort.Search on the sorted points), wrapping to the first point.
**
** Two equal points both stay in groupcache's sorted list, but its map from
** point to node keeps the node added last, so that node owns the
** position: ties go to the node that joined last. Without a separator
** labels themselves can be equal ("11" + "10.0.0.1:11211" is
** "1" + "110.0.0.1:11211"). There are no weights. It is the ring
** algorithm with label "%d%s", first 0, ties last and weights held at 1;
** the hash option stands for the function given to consistenthash.New,
** and must be a 32-bit one.
*/
#include <stdio.h>

#include "algo.h"
#include "options.h"

#define GROUPCACHE_REPLICAS 50     /* HTTPPool's defaultReplicas */

static int groupcache_check_options(ring_config *cfg, unsigned set,
                                    char *zErr, size_t nErr){
  if( !(set & OPTION_VNODES) ) cfg->vnodes = GROUPCACHE_REPLICAS;
  if( hash_space_bits(cfg->hash)==64 ){
    char zList[400];
    snprintf(zErr, nErr, "algorithm groupcache has 32-bit points, so its "
             "hash must be a 32-bit hash, not %s: crc32a (the default, Go's "
             "crc32.ChecksumIEEE) or one of %s", hash_name(cfg->hash),
             hash_names_narrow(HASH_COUNT, HASH_COUNT, zList, sizeof(zList)));
    return 1;
  }
  return 0;
}

static int64_t groupcache_point_budget(const ring_config *cfg, double w){
  (void)w;
  return cfg->vnodes;
}

/* Node n's points 0 .. replicas-1, at crc32a(decimal(i) + name). */
static void groupcache_make(const ring *r, uint32_t n, uint32_t from,
                            ring_point *a){
  ring_label_points(r, n, "%d%s", 0, from, a);
}

static uint32_t groupcache_node_positions(const ring *r, uint32_t n,
                                          uint64_t *aPos){
  ring_label_hash(r, n, "%d%s", 0, 0, aPos, 1);
  return 0;
}

static int groupcache_build(ring *r, const ring *prev, char *zErr,
                            size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].points = (uint32_t)r->config.vnodes;
  }
  /* Equal points all stay, the last joined first (Go's map overwrite). */
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_LAST, 0 },
    .make = groupcache_make,
    .flags = RING_POINTS_KEEP_TIES | RING_POINTS_NO_REPLICAS,
  };
  return ring_points_make(r, prev, &mk);
}

const ring_algo algo_groupcache = {
  .name = "groupcache",
  .default_hash = HASH_CRC32A,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = groupcache_check_options,
  .no_weights = "algorithm groupcache has no weights: every node's weight "
                "must be 1",
  .point_budget = groupcache_point_budget,
  .build = groupcache_build,
  .node_positions = groupcache_node_positions,
  .doc = {
    .summary = "Go's groupcache ring",
    .reproduces = "Go's groupcache",
    .cost = "O(log points)",
    .weights = "no (all 1)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`vnodes` (replicas, default 50), `hash` (32-bit, default "
               "`crc32a`)",
  },
};

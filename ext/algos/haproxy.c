/*
** haproxy.c: HAProxy's consistent hashing (`hash-type consistent`), bit for
** bit as HAProxy 2.6 places keys (checked against 2.6.12, Debian 12).
**
** Servers are numbered: a server without an `id` gets 1, 2, 3, ... in the
** order of its backend's `server` lines, and only that number places it.
** Here node n's number is its rank in join order plus 1.
**
** Points: server s of weight w (HAProxy's weight, a whole number 1..256)
** has 16*w points (16 is HAProxy's weight scale), i = 0 .. 16*w-1, at
** full_hash(s*4096 + i) (4096 = 256*16, the most points one server has).
** full_hash is Bob Jenkins' 32-bit integer mix followed by a
** multiplication by 3221225473, all mod 2^32. Each step is invertible, so
** no two points share a position: there are no ties between points.
**
** Keys: the ring's hash of the key's bytes (sdbm by default, djb2, wt6 or
** crc32a, HAProxy's crc32), 32 bits; with avalanche (the default), then
** full_hash of that.
**
** Lookup: the first point at or after the key (wrapping to the lowest)
** and the point before that one (wrapping to the highest); the key goes to
** the nearer of the two, distances taken mod 2^32, and to the one before
** when both are as near. So point k owns the positions from just past
** half-way to the point before it up to half-way to the point after it,
** rounded down: (end[k-1], end[k]] with end[k] = p[k] + floor(gap/2), gap
** being the distance to the next point (mod 2^32).
**
** That is the points library's nearest rule, half-way to the point before
** (RING_LOOKUP_NEAREST_BEFORE, algo.h).
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "algo.h"
#include "options.h"

#define HAPROXY_WEIGHT_SCALE 16     /* points per unit of weight */
#define HAPROXY_MAX_WEIGHT   256
#define HAPROXY_ID_STRIDE    (HAPROXY_MAX_WEIGHT * HAPROXY_WEIGHT_SCALE)

/* Its own option: avalanche. */
typedef struct haproxy_config {
  int avalanche;
} haproxy_config;

static const ring_option haproxy_options[] = {
  { .name = "avalanche", .type = RING_OPTION_BOOL,
    .offset = offsetof(haproxy_config, avalanche), .default_text = "1",
    .about = "HAProxy's mixing of key hashes",
    .help = "1: each key's hash goes through HAProxy's full_hash, as "
            "hash-type consistent does by default" },
  { .name = NULL }
};

/* HAProxy's full_hash: Bob Jenkins' integer mix, then a multiplication by
** a large prime near 3/4 of 2^32 that spreads values over the whole tree. */
static uint32_t haproxy_full_hash(uint32_t a){
  a = (a + 0x7ed55d16u) + (a << 12);
  a = (a ^ 0xc761c23cu) ^ (a >> 19);
  a = (a + 0x165667b1u) + (a << 5);
  a = (a + 0xd3a2646cu) ^ (a << 9);
  a = (a + 0xfd7046c5u) + (a << 3);
  a = (a ^ 0xb55a4f09u) ^ (a >> 16);
  return a * 3221225473u;
}

/* Point i of node n: full_hash(id*4096 + i), the id being 1-based. */
static uint32_t haproxy_point(const ring_node *node, uint32_t i){
  return haproxy_full_hash((node->join + 1u) * HAPROXY_ID_STRIDE + i);
}

/* Points a server of weight w has (w is a whole number, checked). */
static uint32_t haproxy_count(double w){
  return HAPROXY_WEIGHT_SCALE * (uint32_t)w;
}

/* Node n's points from i = from on. */
static void haproxy_make(const ring *r, uint32_t n, uint32_t from,
                         ring_point *a){
  for(uint32_t i=from; i<r->nodes[n].points; i++){
    a[i-from].pos = haproxy_point(&r->nodes[n], i);
  }
}

static int haproxy_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t k=0; k<r->n_nodes; k++){
    r->nodes[k].points = haproxy_count(r->nodes[k].weight);
  }
  /* A server's points come from its id, its rank in join order. */
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_NEAREST_BEFORE, RING_TIES_NAME, 0 },
    .make = haproxy_make,
    .flags = RING_POINTS_BY_JOIN,
  };
  return ring_points_make(r, prev, &mk);
}

/* A key's hash, through full_hash when avalanche is on. */
static uint64_t haproxy_key_finish(const ring_keys *k, uint64_t h){
  return k->finish_arg ? haproxy_full_hash((uint32_t)h) : (uint32_t)h;
}

static void haproxy_key_rule(const ring_config *cfg, ring_keys *k){
  k->finish = haproxy_key_finish;
  k->finish_arg = (uint64_t)RING_OWN_CONFIG(cfg, haproxy_config)->avalanche;
  k->finish_option = "avalanche";
}

static const char *haproxy_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w<1.0 || w>HAPROXY_MAX_WEIGHT || w!=floor(w) ){
    return "algorithm haproxy takes HAProxy's server weights: whole numbers "
           "from 1 to 256";
  }
  return NULL;
}

static int64_t haproxy_point_budget(const ring_config *cfg, double w){
  (void)cfg;
  if( w>HAPROXY_MAX_WEIGHT ) w = HAPROXY_MAX_WEIGHT;
  return HAPROXY_WEIGHT_SCALE * (int64_t)ceil(w);
}

static int haproxy_check_options(ring_config *cfg, unsigned set, char *zErr,
                                 size_t nErr){
  (void)set;
  switch( cfg->hash ){
    case HASH_SDBM: case HASH_DJB2: case HASH_WT6: case HASH_CRC32A:
      return 0;
    default:
      snprintf(zErr, nErr, "algorithm haproxy hashes keys with HAProxy's "
               "hash functions: hash must be sdbm (the default), djb2, wt6 "
               "or crc32a (HAProxy's crc32), not %s", hash_name(cfg->hash));
      return 1;
  }
}

const ring_algo algo_haproxy = {
  .name = "haproxy",
  .default_hash = HASH_SDBM,
  .own_options = haproxy_options,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = haproxy_check_options,
  .check_weight = haproxy_check_weight,
  .point_budget = haproxy_point_budget,
  .build = haproxy_build,
  .key_rule = haproxy_key_rule,
  .doc = {
    .summary = "HAProxy's `hash-type consistent`",
    .reproduces = "an HAProxy backend",
    .cost = "O(1) expected (as ketama)",
    .weights = "HAProxy's: whole numbers 1..256 (16 points each)",
    .remove = "any node, but the nodes that joined after it are renumbered "
              "and move",
    .movement = "only onto the new node",
    .options = "`hash` (`sdbm` default, `djb2`, `wt6`, `crc32a`), "
               "`avalanche` (default 1)",
    .points = "points, in the order of their arcs",
    .arcs = "arcs (half-way to half-way)",
    .replicas = "points clockwise from the key's",
  },
};

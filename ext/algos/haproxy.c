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
** The ring keeps those ends as its positions: then "the first position at
** or after the key" is HAProxy's rule, and lookups, arcs, shares, diffs
** and replica lists need nothing more. The points themselves, in the same
** order, are the algorithm's state, for ch_points (point_token). The last
** point's end can pass 2^32 and wrap: that end is then the lowest, and
** the last point comes first in unit order.
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

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

static int haproxy_point_compare(const void *pa, const void *pb){
  const ring_point *a = pa, *b = pb;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

static int haproxy_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t total = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    r->nodes[k].points = HAPROXY_WEIGHT_SCALE * (uint32_t)r->nodes[k].weight;
    total += r->nodes[k].points;
  }
  if( total==0 ) return RING_OK;
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  uint32_t *aToken = ring_alloc(sizeof(uint32_t) * total);
  if( a==NULL || aToken==NULL ){
    ring_dealloc(a);
    ring_dealloc(aToken);
    return RING_NOMEM;
  }
  uint32_t m = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    for(uint32_t i=0; i<r->nodes[k].points; i++){
      a[m].pos = haproxy_point(&r->nodes[k], i);
      a[m].node = k;
      m++;
    }
  }
  qsort(a, total, sizeof(ring_point), haproxy_point_compare);

  /* Each point's end: half-way (rounded down) to the next point. The
  ** points go to aToken in unit order: the last one first if its end
  ** wraps past 2^32. */
  uint32_t last = total - 1;
  uint64_t lastEnd = a[last].pos + (((uint32_t)a[0].pos - (uint32_t)a[last].pos) / 2);
  int bWrap = lastEnd > 0xffffffffu;
  for(uint32_t k=0; k<total; k++){
    aToken[(k + (uint32_t)bWrap) % total] = (uint32_t)a[k].pos;
  }
  for(uint32_t k=0; k<last; k++){
    a[k].pos += (a[k+1].pos - a[k].pos) / 2;
  }
  a[last].pos = lastEnd & 0xffffffffu;
  r->state = aToken;
  int rc = ring_points_set(r, a, total);
  ring_dealloc(a);
  return rc;
}

static uint64_t haproxy_point_token(const ring *r, uint32_t k){
  return ((const uint32_t *)r->state)[k];
}

static uint32_t haproxy_node_positions(const ring *r, uint32_t n,
                                       uint64_t *aPos){
  const ring_node *node = &r->nodes[n];
  for(uint32_t i=0; i<node->points; i++) aPos[i] = haproxy_point(node, i);
  return 0;
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

static int64_t haproxy_max_points(const ring_config *cfg, double w){
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
  .max_points = haproxy_max_points,
  .build = haproxy_build,
  .key_rule = haproxy_key_rule,
  .node_positions = haproxy_node_positions,
  .point_token = haproxy_point_token,
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

/*
** ring_vnodes.c: algorithm ring, the classic virtual-node ring (Karger et
** al.), chash's default.
**
** Node N of weight w gets p = round(vnodes*w) points (half away from zero,
** at least 1); point i = 1..p sits at hash("N#i") under the ring's hash
** and seed. A key at position pos belongs to the first point at or after
** pos (unsigned), wrapping to the first point. Points at equal positions
** are ordered by node name (bytewise), then by i, so placement never
** depends on the order nodes were added in. Adding a node moves keys only
** onto it; removing one moves only its keys.
*/
#include <math.h>
#include <string.h>

#include "algo.h"
#include "options.h"

static int64_t vnodes_max_points(const ring_config *cfg, double w){
  double p = round((double)cfg->vnodes * w);   /* half away from zero */
  if( p<1.0 ) return 1;
  return (int64_t)p;          /* at most 1e14: vnodes x RING_MAX_WEIGHT */
}

/* Node n's points i = 1..points, hash("name#i"), into aPos[0],
** aPos[stride], ... */
static void vnodes_hash_node(const ring *r, uint32_t n, uint64_t *aPos,
                             size_t stride){
  const ring_node *node = &r->nodes[n];
  char label[RING_MAX_NAME + 16];
  memcpy(label, node->name, node->name_len);
  label[node->name_len] = '#';
  char *zNum = label + node->name_len + 1;
  for(uint32_t i=1; i<=node->points; i++){
    size_t len = node->name_len + 1 + ring_format_u32(i, zNum);
    aPos[(i-1)*stride] = hash_bytes(r->config.hash, r->config.seed, label, len);
  }
}

static uint32_t vnodes_node_positions(const ring *r, uint32_t n,
                                      uint64_t *aPos){
  vnodes_hash_node(r, n, aPos, 1);
  return 1;
}

static int vnodes_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].points = (uint32_t)vnodes_max_points(&r->config,
                                                     r->nodes[n].weight);
  }
  return ring_points_build(r, prev, vnodes_hash_node);
}

const ring_algo algo_ring = {
  .name = "ring",
  .default_hash = HASH_XXH3,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .max_points = vnodes_max_points,
  .build = vnodes_build,
  .node_positions = vnodes_node_positions,
};

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
**
** Three options describe the rings people write themselves ("hash these
** labels, first point at or after the key"): label, the template of the
** text hashed ("%s#%d": the name, '#', i); first, the index of a node's
** first point (1: i = 1..p; 0: i = 0..p-1); ties, which node wins a
** position two points share: name (as above), first (the node that joined
** first) or last (the node that joined last, as a Java TreeMap.put or a
** Go map assignment leaves it).
*/
#include <math.h>

#include "algo.h"
#include "options.h"

static int64_t vnodes_max_points(const ring_config *cfg, double w){
  double p = round((double)cfg->vnodes * w);   /* half away from zero */
  if( p<1.0 ) return 1;
  return (int64_t)p;          /* at most 1e14: vnodes x RING_MAX_WEIGHT */
}

/* Node n's points, at the hashes of their labels, into aPos[0],
** aPos[stride], ... */
static void vnodes_hash_node(const ring *r, uint32_t n, uint64_t *aPos,
                             size_t stride){
  ring_label_hash(r, n, r->config.label, (uint32_t)r->config.first, aPos,
                  stride);
}

static uint32_t vnodes_node_positions(const ring *r, uint32_t n,
                                      uint64_t *aPos){
  vnodes_hash_node(r, n, aPos, 1);
  return (uint32_t)r->config.first;
}

static int vnodes_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].points = (uint32_t)vnodes_max_points(&r->config,
                                                     r->nodes[n].weight);
  }
  return ring_points_build(r, prev, vnodes_hash_node, r->config.ties);
}

const ring_algo algo_ring = {
  .name = "ring",
  .default_hash = HASH_XXH3,
  .options = OPTION_VNODES|OPTION_LABEL|OPTION_FIRST|OPTION_TIES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .max_points = vnodes_max_points,
  .build = vnodes_build,
  .node_positions = vnodes_node_positions,
  .doc = {
    .summary = "the virtual-node ring",
    .cost = "O(log points)",
    .weights = "yes (points = round(vnodes*weight))",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`hash`, `seed`, `vnodes`, `label`, `first`, `ties`",
  },
};

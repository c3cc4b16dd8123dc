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
#include <stddef.h>

#include "algo.h"
#include "options.h"

/* Its own options. */
typedef struct vnodes_config {
  char label[RING_MAX_LABEL + 1];  /* a template: %s the node name, %d the
                                   ** point index, %% a literal % */
  int first;                       /* 0 or 1 */
  int ties;                        /* a ring_ties */
} vnodes_config;

static int vnodes_check_label(const ring_option *o, const char *zValue,
                              uint64_t v, char *zErr, size_t nErr){
  (void)o; (void)v;
  return ring_label_check(zValue, zErr, nErr);
}

static const char *const vnodes_ties[] = { "name", "first", "last", NULL };

static const ring_option vnodes_options[] = {
  { .name = "label", .type = RING_OPTION_TEXT,
    .offset = offsetof(vnodes_config, label), .default_text = "%s#%d",
    .about = "the text hashed for a point", .hi = RING_MAX_LABEL,
    .check = vnodes_check_label },
  { .name = "first", .type = RING_OPTION_BOOL,
    .offset = offsetof(vnodes_config, first), .default_text = "1",
    .about = "the index of a node's first point",
    .help = "the index of a node's first point" },
  { .name = "ties", .type = RING_OPTION_CHOICE,
    .offset = offsetof(vnodes_config, ties), .default_text = "name",
    .about = "the rule for two points at one position",
    .choices = vnodes_ties },
  { .name = NULL }
};

_Static_assert(sizeof(vnodes_config)<=RING_OWN_CONFIG_BYTES,
               "ring's options fit the config's own block");

/* A node of weight w gets round(vnodes*w) points: its budget is its count. */
static int64_t vnodes_count(const ring_config *cfg, double w){
  double p = round((double)cfg->vnodes * w);   /* half away from zero */
  if( p<1.0 ) return 1;
  return (int64_t)p;          /* at most 1e14: vnodes x RING_MAX_WEIGHT */
}

/* Node n's points from replica from on, at the hashes of their labels. */
static void vnodes_make(const ring *r, uint32_t n, uint32_t from,
                        ring_point *a){
  const vnodes_config *c = RING_OWN_CONFIG(&r->config, vnodes_config);
  ring_label_points(r, n, c->label, (uint32_t)c->first, from, a);
}

static uint32_t vnodes_node_positions(const ring *r, uint32_t n,
                                      uint64_t *aPos){
  const vnodes_config *c = RING_OWN_CONFIG(&r->config, vnodes_config);
  ring_label_hash(r, n, c->label, (uint32_t)c->first, 0, aPos, 1);
  return (uint32_t)c->first;
}

static int vnodes_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t n=0; n<r->n_nodes; n++){
    r->nodes[n].points = (uint32_t)vnodes_count(&r->config,
                                                     r->nodes[n].weight);
  }
  /* Every equal point stays, in tie order; ch_points numbers them by
  ** node_positions (4 bytes a point less than a replicas array). */
  ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR,
              (ring_ties)RING_OWN_CONFIG(&r->config, vnodes_config)->ties, 0 },
    .make = vnodes_make,
    .flags = RING_POINTS_KEEP_TIES | RING_POINTS_NO_REPLICAS,
  };
  return ring_points_make(r, prev, &mk);
}

const ring_algo algo_ring = {
  .name = "ring",
  .default_hash = HASH_XXH3,
  .options = OPTION_VNODES,
  .own_options = vnodes_options,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .point_budget = vnodes_count,
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

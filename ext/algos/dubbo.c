/*
** dubbo.c: the ring of Apache Dubbo's ConsistentHashLoadBalance
** (loadbalance="consistenthash"), bit for bit: the stateless selector of
** Dubbo 2.6, 2.7.0 - 2.7.14 and 3.0 - 3.3.
**
** A node is a provider address as Dubbo's provider URL gives it
** ("10.0.0.1:20880"). For i = 0 .. vnodes/4 - 1 (vnodes is Dubbo's
** hash.nodes, default 160), the MD5 of the text "address" followed by i in
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
#include <stdlib.h>
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

/* A point as Dubbo makes it: its node, and its rank in the order the
** TreeMap would keep it (the last to join first, then 4i+h). */
typedef struct dubbo_point {
  uint64_t pos;
  uint32_t node;
  uint32_t made;           /* rank: ties go to the lowest */
  uint32_t replica;        /* 4i+h: word h of digest i */
} dubbo_point;

static int dubbo_point_compare(const void *pa, const void *pb){
  const dubbo_point *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  return (a->made>b->made) - (a->made<b->made);
}

/*
** r->state: for each point of the ring, the replica (4i+h) it was made as,
** so that dubbo_node_positions can tell the points a node kept from those
** it made but lost.
*/
static int dubbo_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  uint32_t per_node = (uint32_t)r->config.vnodes;
  if( n==0 ) return RING_OK;
  size_t total = (size_t)n * per_node;

  /* byJoin[j]: the index in r->nodes of the node of join rank j. */
  uint32_t *byJoin = ring_alloc(sizeof(uint32_t) * n);
  dubbo_point *aMade = ring_alloc(sizeof(dubbo_point) * total);
  ring_point *aPoint = ring_alloc(sizeof(ring_point) * total);
  uint32_t *aReplica = ring_alloc(sizeof(uint32_t) * total);
  int rc = RING_NOMEM;
  if( byJoin && aMade && aPoint && aReplica ){
    for(uint32_t k=0; k<n; k++) byJoin[r->nodes[k].join] = k;
    uint32_t m = 0;
    for(uint32_t j=n; j-->0; ){          /* the last to join first */
      uint32_t k = byJoin[j];
      for(uint32_t i=0; i<per_node/4; i++){
        uint64_t aPos[4];
        dubbo_digest(&r->nodes[k], i, aPos);
        for(uint32_t h=0; h<4; h++, m++){
          aMade[m].pos = aPos[h];
          aMade[m].node = k;
          aMade[m].made = m;
          aMade[m].replica = 4*i + h;
        }
      }
    }
    /* Sort; of equal points keep the first (the TreeMap's last put). */
    qsort(aMade, total, sizeof(dubbo_point), dubbo_point_compare);
    uint32_t kept = 0;
    for(size_t q=0; q<total; q++){
      if( kept>0 && aPoint[kept-1].pos==aMade[q].pos ) continue;
      aPoint[kept].pos = aMade[q].pos;
      aPoint[kept].node = aMade[q].node;
      aReplica[kept] = aMade[q].replica;
      r->nodes[aMade[q].node].points++;
      kept++;
    }
    rc = ring_points_set(r, aPoint, kept);
    if( rc==RING_OK ){
      r->state = aReplica;               /* the ring frees it */
      aReplica = NULL;
    }
  }
  ring_dealloc(byJoin);
  ring_dealloc(aMade);
  ring_dealloc(aPoint);
  ring_dealloc(aReplica);
  return rc;
}

/* Node n's points in the order Dubbo makes them, without those it lost:
** each made point whose position the ring holds as this node's and this
** replica. */
static uint32_t dubbo_node_positions(const ring *r, uint32_t n,
                                     uint64_t *aPos){
  const ring_node *node = &r->nodes[n];
  const uint32_t *aReplica = r->state;
  uint32_t kept = 0;
  for(uint32_t i=0; i<(uint32_t)r->config.vnodes/4; i++){
    uint64_t aDigest[4];
    dubbo_digest(node, i, aDigest);
    for(uint32_t h=0; h<4; h++){
      uint32_t k = ring_point_at(r, aDigest[h]);
      if( r->positions[k]==aDigest[h] && r->owners[k]==n
       && aReplica[k]==4*i + h ){
        aPos[kept++] = aDigest[h];
      }
    }
  }
  return 0;
}

static int64_t dubbo_max_points(const ring_config *cfg, double w){
  (void)w;
  return cfg->vnodes;
}

static const char *dubbo_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=1.0 ){
    return "algorithm dubbo has no weights (Dubbo's consistent hash ignores "
           "them): every node's weight must be 1";
  }
  return NULL;
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
  if( cfg->vnodes%4!=0 ){
    char zAs[64] = "no point at all";
    if( cfg->vnodes>4 ) snprintf(zAs, sizeof(zAs), "as vnodes=%d", cfg->vnodes/4*4);
    snprintf(zErr, nErr, "vnodes: algorithm dubbo needs a multiple of 4, "
             "Dubbo's hash.nodes (each MD5 digest gives 4 points and Dubbo "
             "makes hash.nodes/4 digests: hash.nodes=%d places keys %s)",
             cfg->vnodes, zAs);
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
  .check_weight = dubbo_check_weight,
  .max_points = dubbo_max_points,
  .build = dubbo_build,
  .node_positions = dubbo_node_positions,
  .doc = {
    .summary = "Apache Dubbo's consistent hash load balancer",
    .reproduces = "a Dubbo consumer",
    .cost = "O(log points)",
    .weights = "no (all 1, as Dubbo)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`vnodes` (Dubbo's `hash.nodes`, multiple of 4, default 160)",
  },
};

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
** Dubbo puts the points into a Java TreeMap with put(), so a point equal to
** one of an earlier provider in its list replaces it: the provider listed
** last wins. Without a separator two addresses can make the same text
** ("10.0.0.1:2088" + "10" is "10.0.0.1:20881" + "0"), and then 40 points
** tie. Here the nodes' join order is Dubbo's list order, and the points
** are made last-joined first, so the stable sort puts the winner of a tie
** first; the loser's copy stays on the ring with an empty arc (it owns no
** key, and counts in its node's points as in every chash ring).
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
  unsigned char d[16];
  hash_md5(label, len, d);
  for(uint32_t h=0; h<4; h++){
    const unsigned char *b = d + 4*h;
    aPos[h] = (uint32_t)b[0] | (uint32_t)b[1]<<8 | (uint32_t)b[2]<<16
            | (uint32_t)b[3]<<24;
  }
}

static int dubbo_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  uint32_t per_node = (uint32_t)r->config.vnodes;
  if( n==0 ) return RING_OK;

  /* byJoin[j]: the index in r->nodes of the node of join rank j. */
  uint32_t *byJoin = ring_alloc(sizeof(uint32_t) * n);
  ring_point *aPoint = ring_alloc(sizeof(ring_point) * (size_t)n * per_node);
  int rc = RING_NOMEM;
  if( byJoin && aPoint ){
    for(uint32_t k=0; k<n; k++){
      byJoin[r->nodes[k].join] = k;
      r->nodes[k].points = per_node;
    }
    uint32_t m = 0;
    for(uint32_t j=n; j-->0; ){          /* the last to join first */
      uint32_t k = byJoin[j];
      for(uint32_t i=0; i<per_node/4; i++){
        uint64_t aPos[4];
        dubbo_digest(&r->nodes[k], i, aPos);
        for(uint32_t h=0; h<4; h++){
          aPoint[m].pos = aPos[h];
          aPoint[m].node = k;
          m++;
        }
      }
    }
    rc = ring_points_set(r, aPoint, m);
  }
  ring_dealloc(byJoin);
  ring_dealloc(aPoint);
  return rc;
}

static uint32_t dubbo_node_positions(const ring *r, uint32_t n,
                                     uint64_t *aPos){
  const ring_node *node = &r->nodes[n];
  for(uint32_t i=0; i<node->points/4; i++) dubbo_digest(node, i, aPos + 4*i);
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
};

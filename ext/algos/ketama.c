/*
** ketama.c: the ketama ring of twemproxy (nutcracker 0.5) and libmemcached
** (1.1, KETAMA_WEIGHTED), bit for bit (tests/compat checks both).
**
** For n nodes of total weight W, node N of weight w gets
**     pts = 4 * floor(w/W * vnodes / 4 * n + 1e-10)
** points, evaluated step by step in single precision exactly as those
** programs do (vnodes is 160 there: KETAMA_POINTS_PER_SERVER;
** ring_ketama_count). For
** i = 0 .. pts/4-1, the MD5 of the text "N-i" gives four points: digest
** words 0..3, each read little-endian. The key hash is the ring's hash
** option (md5 by default: MD5 word 0); a key belongs to the first point at
** or after it, wrapping to the first point.
**
** Equal points are ordered as twemproxy's stable sort leaves them: by the
** node's rank in twemproxy's server order (shorter names first, then
** bytewise), then in the order they were generated. libmemcached orders
** ties by the order servers were added instead; 32-bit MD5 points rarely
** tie, so the two agree unless two points collide exactly.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "options.h"

/* Of equal points, node a's first in twemproxy's server order: by name
** length, then bytewise (names are distinct). */
static int ketama_tie_before(const ring *r, uint32_t a, uint32_t b){
  const ring_node *x = &r->nodes[a], *y = &r->nodes[b];
  if( x->name_len!=y->name_len ) return x->name_len<y->name_len;
  return memcmp(x->name, y->name, x->name_len)<0;
}

/* Node n's points from replica from on: word w of digest i is 4i+w. */
static void ketama_make(const ring *r, uint32_t n, uint32_t from,
                        ring_point *a){
  ring_digest_make(r, n, from, ring_digest_md5_dash, a);
}

static int ketama_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  uint32_t n = r->n_nodes;
  double W = 0.0;
  uint64_t total = 0;
  for(uint32_t k=0; k<n; k++) W += r->nodes[k].weight;
  for(uint32_t k=0; k<n; k++){
    r->nodes[k].points = ring_ketama_count(r->nodes[k].weight, W, n,
                                       r->config.vnodes);
    total += r->nodes[k].points;
  }
  if( total==0 ){
    if( n==0 ) return RING_OK;
    /* The groups of 4 with twemproxy's float steps: with a small vnodes,
    ** every node's count can round down to 0. */
    snprintf(zErr, nErr, "algorithm ketama gives none of the %u nodes a "
             "point: vnodes %d rounds each node's count down to 0; use a "
             "larger vnodes (twemproxy and libmemcached use 160)", n,
             r->config.vnodes);
    return RING_INVALID;
  }

  /* Every equal point stays, in the order twemproxy's stable sort leaves
  ** them. A count that changes with the other nodes keeps its prefix. */
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 0 },
    .make = ketama_make,
    .tie_before = ketama_tie_before,
    .flags = RING_POINTS_KEEP_TIES,
  };
  return ring_points_make(r, prev, &mk);
}

/* The most a node can get is vnodes (all the weight, one node). */
static int64_t ketama_point_budget(const ring_config *cfg, double w){
  (void)w;
  return cfg->vnodes;
}

static int ketama_check_options(ring_config *cfg, unsigned set, char *zErr,
                                size_t nErr){
  (void)set;
  if( hash_space_bits(cfg->hash)==64 ){
    char zList[400];
    snprintf(zErr, nErr, "algorithm ketama has 32-bit points, so its hash "
             "must be a 32-bit key hash, not %s: %s", hash_name(cfg->hash),
             hash_names_narrow(HASH_CRC16, HASH_MD5, zList, sizeof(zList)));
    return 1;
  }
  if( cfg->hash==HASH_CRC16 ){
    snprintf(zErr, nErr, "algorithm ketama does not take hash crc16: "
             "chash's crc16 is Redis Cluster's 16-bit CRC, and twemproxy's "
             "hash: crc16 keeps bits above 16 that it drops");
    return 1;
  }
  if( cfg->vnodes%4!=0 ){
    snprintf(zErr, nErr, "vnodes: algorithm ketama needs a multiple of 4 "
             "(each MD5 digest gives 4 points); twemproxy and libmemcached "
             "use 160");
    return 1;
  }
  return 0;
}

const ring_algo algo_ketama = {
  .name = "ketama",
  .default_hash = HASH_MD5,
  .options = OPTION_VNODES,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = ketama_check_options,
  .point_budget = ketama_point_budget,
  .build = ketama_build,
  .check_commit = ring_check_counts_round,
  .commit_needs = ring_counts_round_needs,
  .doc = {
    .summary = "twemproxy's and libmemcached's ring",
    .reproduces = "a twemproxy pool (with its `hash_tag`), a libmemcached "
                  "client",
    .cost = "O(log points)",
    .weights = "yes (twemproxy/libmemcached formula)",
    .remove = "any node",
    .movement = "mostly onto the new node; other nodes' point counts change "
                "slightly",
    .options = "`hash` (32-bit only, default `md5`), `vnodes` (multiple of "
               "4, default 160)",
  },
};

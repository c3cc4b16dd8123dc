/*
** redis_cluster.c: algorithm redis_cluster, the master that owns a key in
** a Redis Cluster made by `redis-cli --cluster create` (checked against
** Redis 7.0.15's redis-server and redis-cli; docs/algorithms.md).
**
** Keys: a key's slot is the CRC-16/XMODEM of the key, or of its hash tag,
** mod 16384. The hash tag is Redis's {...} rule (hash_tag_part with "{}"):
** the bytes between the first '{' and the first '}' after it, when there
** is at least one.
**
** Masters: the nodes in join order are redis-cli's masters 0..n-1 (its
** arguments, in order, when all are on one host). redis-cli splits the
** 16384 slots into n consecutive ranges in single-precision float:
**     per = 16384 / (float)n,  cursor = 0 (a float),  first = 0
**     for master i:  last = lround(cursor + per - 1)   (float sums; lround
**                    rounds halves away from zero)
**                    the last master, or last > 16384: last = 16383
**                    last < first: last = first
**                    master i owns first..last; first = last + 1;
**                    cursor += per
** The float steps are kept exactly: double precision gives other ranges
** from 78 masters on, and the plain split 16384*i/n from 3 masters on
** (its second master ends at 10921, redis-cli's at 10922). From 7542 masters on some counts make the
** split run past slot 16383 (redis-cli would write past its table); such
** counts are refused.
**
** Units: each master is one point at the last slot of its range, in a
** space of 14 bits (the slots): a key at slot s belongs to the first point
** at or after s, which is the master whose range holds s. So ch_points
** lists one point per master (token = its last slot), ch_arcs its range of
** slots (start = first slot, end = last slot, share = slots / 16384), and
** ch_diff the ranges of slots that change owner between two versions.
** Weights: none (every weight must be 1); vnodes: no; hash: crc16 only.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

#define REDIS_SLOTS 16384

/* A key's slot, Redis's keyHashSlot rule: the CRC-16 of its {...} part
** (the ring's hash is crc16), mod the slot count. */
static uint64_t redis_key_slot(const ring_keys *k, uint64_t h){
  (void)k;
  return h & (REDIS_SLOTS - 1);
}

static void redis_key_rule(const ring_config *cfg, ring_keys *k){
  (void)cfg;
  ring_keys_init(k, HASH_CRC16, 0);
  memcpy(k->tag, "{}", 3);
  k->finish_by = "redis_cluster";
  k->finish = redis_key_slot;
}

/*
** The last slot of each of n masters into aLast[0..n-1], as redis-cli
** --cluster create splits them (see the top of the file). Returns 0, or 1
** if the split runs past the last slot for this n.
*/
static int redis_split(uint32_t n, uint32_t *aLast){
  float per = (float)REDIS_SLOTS / (float)n;
  float cursor = 0.0f;
  long first = 0;
  for(uint32_t i=0; i<n; i++){
    float end = cursor + per;
    long last = lround(end - 1.0f);
    if( last>REDIS_SLOTS || i==n-1 ) last = REDIS_SLOTS - 1;
    if( last<first ) last = first;
    if( last>=REDIS_SLOTS ) return 1;
    aLast[i] = (uint32_t)last;
    first = last + 1;
    cursor += per;
  }
  return 0;
}

static void redis_split_error(uint32_t n, char *zErr, size_t nErr){
  snprintf(zErr, nErr, "algorithm redis_cluster cannot split 16384 slots "
           "among %u masters as redis-cli --cluster create does (its "
           "rounding runs past slot 16383 for this count; up to 7541 "
           "masters always work)", n);
}

static int redis_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev;
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  uint32_t *aLast = ring_alloc(sizeof(uint32_t) * n);
  ring_point *aPoint = ring_alloc(sizeof(ring_point) * n);
  int rc = RING_NOMEM;
  if( aLast && aPoint ){
    if( redis_split(n, aLast) ){
      redis_split_error(n, zErr, nErr);
      rc = RING_INVALID;
    }else{
      for(uint32_t k=0; k<n; k++){
        aPoint[k].pos = aLast[r->nodes[k].join];
        aPoint[k].node = k;
        r->nodes[k].points = 1;
      }
      rc = ring_points_set(r, aPoint, n);
    }
  }
  ring_dealloc(aLast);
  ring_dealloc(aPoint);
  return rc;
}

/* A master's one point: the ring holds it; replica number 0. */
static uint32_t redis_node_positions(const ring *r, uint32_t n,
                                     uint64_t *aPos){
  for(uint32_t k=0; k<r->n_points; k++){
    if( r->owners[k]==n ) aPos[0] = r->positions[k];
  }
  return 0;
}

static int64_t redis_point_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 1;
}

static int redis_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  if( (set & OPTION_HASH) && cfg->hash!=HASH_CRC16 ){
    snprintf(zErr, nErr, "algorithm redis_cluster hashes keys with crc16 "
             "(Redis Cluster's CRC-16), so hash must be crc16, not %s",
             hash_name(cfg->hash));
    return 1;
  }
  if( (set & OPTION_HASH_TAG) && strcmp(cfg->hash_tag, "{}")!=0 ){
    snprintf(zErr, nErr, "algorithm redis_cluster always uses Redis's hash "
             "tags {...}, so hash_tag can only be '{}', not '%s'",
             cfg->hash_tag);
    return 1;
  }
  return 0;
}

/* The commit check reads the node count. */
static unsigned redis_commit_needs(const ring_config *cfg){
  (void)cfg;
  return RING_COMMIT_TOTALS;
}

/* Counts whose split runs past the last slot are refused at commit, so a
** transaction may pass through one on its way to another count. */
static int redis_check_commit(const ring_config *cfg, const ring_commit *c,
                              char *zErr, size_t nErr){
  (void)cfg;
  uint32_t nAfter = c->n_nodes;
  if( nAfter==0 ) return RING_OK;
  uint32_t *aLast = ring_alloc(sizeof(uint32_t) * nAfter);
  if( aLast==NULL ) return RING_NOMEM;
  int bad = redis_split(nAfter, aLast);
  ring_dealloc(aLast);
  if( bad ){
    redis_split_error(nAfter, zErr, nErr);
    return RING_INVALID;
  }
  return RING_OK;
}

const ring_algo algo_redis_cluster = {
  .name = "redis_cluster",
  .default_hash = HASH_CRC16,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = redis_check_options,
  .no_weights = "algorithm redis_cluster has no weights: every node's weight "
                "must be 1 (redis-cli --cluster create gives every master an "
                "equal range of slots)",
  .point_budget = redis_point_budget,
  .build = redis_build,
  .key_rule = redis_key_rule,
  .key_bits = 14,
  .node_positions = redis_node_positions,
  .check_commit = redis_check_commit,
  .commit_needs = redis_commit_needs,
  .doc = {
    .summary = "the masters of a Redis Cluster made by `redis-cli --cluster "
               "create`",
    .reproduces = "a Redis Cluster (`ch_keyslot`)",
    .cost = "O(1) (16384 slots in a few ranges)",
    .weights = "no (all 1)",
    .remove = "any node",
    .movement = "about half of the keys (the slot ranges shift, as a new "
                "`redis-cli --cluster create` would make them)",
    .options = "none (`hash` is `crc16`, `hash_tag` is `{}`)",
    .points = "one point per master, at the last slot of its range",
    .arcs = "each master's range of slots",
    .diff = "exact, ranges of slots",
    .replicas = "masters of the next ranges (not Redis replicas)",
  },
};

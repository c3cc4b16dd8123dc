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
** A live map (column slots): a cluster after reshard, rebalance, add-node
** or failovers has the slots its CLUSTER NODES lists, not the split. Each
** master's slots column holds them as CLUSTER NODES writes them: slots and
** ranges first-last separated by spaces (or commas), '' for a master
** serving none. When one node has slots every node must (NULL is refused
** then), a slot two masters list is refused naming both, and the ring is
** exactly that map: a slot no master lists is served by none (its keys get
** no node: RING_UNOWNED).
**
** Units: a point at the last slot of each run of slots with one owner, in
** a space of 14 bits (the slots): a key at slot s belongs to the first
** point at or after s, which ends the run that holds s. Fresh layout: one
** point per master (token = its last slot). So ch_points lists a master's
** runs (token = last slot), ch_arcs the runs (start = first slot, end =
** last slot, share = slots / 16384; node NULL for a run no master serves),
** and ch_diff the ranges of slots that change owner between two versions.
** Weights: none (every weight must be 1); vnodes: no; hash: crc16 only.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

#define REDIS_SLOTS 16384
#define REDIS_SLOTS_COLUMN 0            /* slots, its one column */

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

/*
** The slots text z (n bytes) into calls of fn(ctx, first, last), one per
** slot or range in the text's order. NULL, or what is wrong with it in
** zErr: a word that is not a slot or a range, a slot outside 0..16383, a
** range that runs backwards, a slot listed twice (the text's own).
*/
static const char *redis_slots_each(const char *z, size_t n,
                                    int (*fn)(void *, long, long), void *ctx,
                                    char *zErr, size_t nErr){
  unsigned char aSeen[REDIS_SLOTS/8];
  memset(aSeen, 0, sizeof(aSeen));
  size_t i = 0;
  while( i<n ){
    if( z[i]==' ' || z[i]==',' ){ i++; continue; }
    size_t s = i;
    while( i<n && z[i]!=' ' && z[i]!=',' ) i++;
    long a = 0, b = -1;
    size_t k = s;
    int nDigit = 0;
    while( k<i && z[k]>='0' && z[k]<='9' && nDigit<6 ){
      a = a*10 + (z[k++]-'0');
      nDigit++;
    }
    if( nDigit>0 && k==i ){
      b = a;
    }else if( nDigit>0 && z[k]=='-' && k+1<i ){
      b = 0;
      nDigit = 0;
      for(k++; k<i && z[k]>='0' && z[k]<='9' && nDigit<6; k++, nDigit++){
        b = b*10 + (z[k]-'0');
      }
      if( k<i ) b = -1;
    }
    const char *zWrong = b<0 ? "is not a slot or a range first-last"
                       : b>=REDIS_SLOTS || a>=REDIS_SLOTS
                         ? "is outside slots 0..16383"
                       : a>b ? "is a range that runs backwards" : NULL;
    for(long t=a; zWrong==NULL && t<=b; t++){
      if( aSeen[t/8] & (1<<(t%8)) ) zWrong = "lists a slot a second time";
      aSeen[t/8] |= (unsigned char)(1<<(t%8));
    }
    if( zWrong ){
      snprintf(zErr, nErr, "'%.*s' %s", (int)(i-s>30 ? 30 : i-s), z+s,
               zWrong);
      return zErr;
    }
    if( fn && fn(ctx, a, b) ) return NULL;
  }
  return NULL;
}

static const char *redis_check_column(const ring_config *cfg, unsigned i,
                                      const char *z, size_t n, char *zErr,
                                      size_t nErr){
  (void)cfg; (void)i;
  return redis_slots_each(z, n, NULL, NULL, zErr, nErr);
}

/* Where the map's slots are read from: a ring's nodes in join order (a
** build), or a commit's node list (already in join order). */
typedef struct redis_masters {
  const ring *r;                        /* a build: r->nodes by r->by_join */
  const ring_input *aIn;                /* else a commit's nodes */
  uint32_t n;
} redis_masters;

static const char *redis_master_name(const redis_masters *m, uint32_t k){
  return m->r ? m->r->nodes[m->r->by_join[k]].name : m->aIn[k].name;
}

static uint32_t redis_master_name_len(const redis_masters *m, uint32_t k){
  return m->r ? m->r->nodes[m->r->by_join[k]].name_len : m->aIn[k].name_len;
}

/* Master k's slots text (NULL: none given), its length in *pn. */
static const char *redis_master_slots(const redis_masters *m, uint32_t k,
                                      uint32_t *pn){
  if( m->r ){
    const ring_node *node = &m->r->nodes[m->r->by_join[k]];
    *pn = node->column_len[REDIS_SLOTS_COLUMN];
    return node->columns[REDIS_SLOTS_COLUMN];
  }
  *pn = m->aIn[k].column_len[REDIS_SLOTS_COLUMN];
  return m->aIn[k].columns[REDIS_SLOTS_COLUMN];
}

/* Is any master given slots? Then the ring is a live map. */
static int redis_is_map(const redis_masters *m){
  uint32_t n;
  for(uint32_t k=0; k<m->n; k++) if( redis_master_slots(m, k, &n) ) return 1;
  return 0;
}

/* What the fill of a map keeps while it reads one master's slots. */
typedef struct redis_fill {
  uint32_t *aOwner;                     /* slot -> master k, or RING_UNOWNED */
  uint32_t k;                           /* the master being read */
  long clash;                           /* a slot two masters list, or -1 */
} redis_fill;

static int redis_fill_range(void *ctx, long first, long last){
  redis_fill *f = ctx;
  for(long s=first; s<=last; s++){
    if( f->aOwner[s]!=RING_UNOWNED ){
      f->clash = s;
      return 1;
    }
    f->aOwner[s] = f->k;
  }
  return 0;
}

/*
** The map of masters m into aOwner (slot -> master k in m's order, or
** RING_UNOWNED). RING_OK, or RING_INVALID with a message in zErr: a master
** without slots among masters with them, a slot two masters list (the
** values themselves are checked as a node is written).
*/
static int redis_map_fill(const redis_masters *m, uint32_t *aOwner,
                          char *zErr, size_t nErr){
  for(uint32_t s=0; s<REDIS_SLOTS; s++) aOwner[s] = RING_UNOWNED;
  redis_fill f = { aOwner, 0, -1 };
  for(uint32_t k=0; k<m->n; k++){
    uint32_t nSlots;
    const char *zSlots = redis_master_slots(m, k, &nSlots);
    if( zSlots==NULL ){
      uint32_t j = 0, nOther;
      while( redis_master_slots(m, j, &nOther)==NULL ) j++;
      snprintf(zErr, nErr, "algorithm redis_cluster: node '%.*s' has no "
               "slots, but node '%.*s' has: in a map every master has its "
               "slots ('' for one that serves none)",
               (int)redis_master_name_len(m, k), redis_master_name(m, k),
               (int)redis_master_name_len(m, j), redis_master_name(m, j));
      return RING_INVALID;
    }
    f.k = k;
    char zMsg[200];
    if( redis_slots_each(zSlots, nSlots, redis_fill_range, &f, zMsg,
                         sizeof(zMsg)) ){
      snprintf(zErr, nErr, "algorithm redis_cluster: node '%.*s': slots: %s",
               (int)redis_master_name_len(m, k), redis_master_name(m, k),
               zMsg);
      return RING_INVALID;
    }
    if( f.clash>=0 ){
      uint32_t j = aOwner[f.clash];
      snprintf(zErr, nErr, "algorithm redis_cluster: slot %ld is served by "
               "node '%.*s' and by node '%.*s': a slot has one master",
               f.clash, (int)redis_master_name_len(m, j),
               redis_master_name(m, j), (int)redis_master_name_len(m, k),
               redis_master_name(m, k));
      return RING_INVALID;
    }
  }
  return RING_OK;
}

/* A live map: a point at the end of each run of slots with one owner. */
static int redis_build_map(ring *r, const redis_masters *m, char *zErr,
                           size_t nErr){
  uint32_t *aOwner = ring_alloc(sizeof(uint32_t) * REDIS_SLOTS);
  ring_point *aPoint = ring_alloc(sizeof(ring_point) * REDIS_SLOTS);
  int rc = RING_NOMEM;
  if( aOwner && aPoint ) rc = redis_map_fill(m, aOwner, zErr, nErr);
  if( rc==RING_OK ){
    uint32_t nPoint = 0;
    for(uint32_t s=0; s<REDIS_SLOTS; s++){
      if( s+1<REDIS_SLOTS && aOwner[s+1]==aOwner[s] ) continue;
      uint32_t node = aOwner[s]==RING_UNOWNED ? RING_UNOWNED
                                              : r->by_join[aOwner[s]];
      aPoint[nPoint].pos = s;
      aPoint[nPoint].node = node;
      if( node!=RING_UNOWNED ) r->nodes[node].points++;
      nPoint++;
    }
    rc = ring_points_set(r, aPoint, nPoint);
  }
  ring_dealloc(aOwner);
  ring_dealloc(aPoint);
  return rc;
}

static int redis_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev;
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  redis_masters m = { r, NULL, n };
  if( redis_is_map(&m) ) return redis_build_map(r, &m, zErr, nErr);
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

/* A master's points (one per run of its slots), in slot order; replica
** numbers from 0. */
static uint32_t redis_node_positions(const ring *r, uint32_t n,
                                     uint64_t *aPos){
  uint32_t j = 0;
  for(uint32_t k=0; k<r->n_points; k++){
    if( r->owners[k]==n ) aPos[j++] = r->positions[k];
  }
  return 0;
}

/* One point per master; a live map makes one per run of slots, at most
** 16384 in all whatever the count of nodes. */
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

/* The commit check reads every node: their slots make a map or not. */
static unsigned redis_commit_needs(const ring_config *cfg){
  (void)cfg;
  return RING_COMMIT_NODES;
}

/* Counts whose split runs past the last slot are refused at commit, so a
** transaction may pass through one on its way to another count; so are
** maps a build refuses (a master without slots among masters with them, a
** slot two list), so a transaction may pass through those too. */
static int redis_check_commit(const ring_config *cfg, const ring_commit *c,
                              char *zErr, size_t nErr){
  (void)cfg;
  uint32_t nAfter = c->n_nodes;
  if( nAfter==0 ) return RING_OK;
  redis_masters m = { NULL, c->nodes, nAfter };
  if( redis_is_map(&m) ){
    uint32_t *aOwner = ring_alloc(sizeof(uint32_t) * REDIS_SLOTS);
    if( aOwner==NULL ) return RING_NOMEM;
    int rc = redis_map_fill(&m, aOwner, zErr, nErr);
    ring_dealloc(aOwner);
    return rc;
  }
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

/*
** ch_check's line for a map with slots no master serves: their count and
** ranges, in slot order, as "5461-5470, 16383". The runs are the ring's
** unowned points (each ends a run; the run starts after the point before).
** Ranges that do not fit in zMsg are counted at the end instead.
*/
static int redis_describe_gaps(const ring *r, char *zMsg, size_t nMsg){
  uint32_t nFree = 0, nRun = 0;
  for(uint32_t k=0; k<r->n_points; k++){
    if( r->owners[k]!=RING_UNOWNED ) continue;
    uint64_t first = k ? r->positions[k-1]+1 : 0;
    nFree += (uint32_t)(r->positions[k] - first + 1);
    nRun++;
  }
  if( nRun==0 ) return 0;
  int n = snprintf(zMsg, nMsg, "algorithm redis_cluster: %u slot%s served by "
                   "no master (a key there gets no node): ", nFree,
                   nFree==1 ? " is" : "s are");
  const size_t nTail = 40;              /* room for ", and N more ranges" */
  uint32_t nListed = 0;
  for(uint32_t k=0; k<r->n_points && n>=0 && (size_t)n<nMsg; k++){
    if( r->owners[k]!=RING_UNOWNED ) continue;
    uint64_t first = k ? r->positions[k-1]+1 : 0;
    uint64_t last = r->positions[k];
    char zRun[32];
    int nR = first==last
           ? snprintf(zRun, sizeof(zRun), "%s%llu", nListed ? ", " : "",
                      (unsigned long long)first)
           : snprintf(zRun, sizeof(zRun), "%s%llu-%llu", nListed ? ", " : "",
                      (unsigned long long)first, (unsigned long long)last);
    if( (size_t)n + (size_t)nR + nTail >= nMsg ) break;
    memcpy(zMsg+n, zRun, (size_t)nR+1);
    n += nR;
    nListed++;
  }
  if( nListed<nRun && n>=0 && (size_t)n<nMsg ){
    snprintf(zMsg+n, nMsg-(size_t)n, ", and %u more range%s", nRun-nListed,
             nRun-nListed==1 ? "" : "s");
  }
  return 1;
}

/* Not required, no example: without slots the ring is the fresh layout. */
static const ring_column redis_columns[] = {
  { .name = "slots", .about = "a master's slots as CLUSTER NODES lists "
    "them: `0-5460 10923`; `''` for none" },
  { .name = NULL }
};

const ring_algo algo_redis_cluster = {
  .name = "redis_cluster",
  .columns = redis_columns,
  .check_column = redis_check_column,
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
  .describe_gaps = redis_describe_gaps,
  .doc = {
    .summary = "the masters of a Redis Cluster made by `redis-cli --cluster "
               "create`, or of a live one (column `slots`)",
    .reproduces = "a Redis Cluster (`ch_keyslot`)",
    .cost = "O(1) (16384 slots in a few ranges)",
    .weights = "no (all 1)",
    .remove = "any node",
    .movement = "about half of the keys (the slot ranges shift, as a new "
                "`redis-cli --cluster create` would make them)",
    .options = "none (`hash` is `crc16`, `hash_tag` is `{}`)",
    .points = "one point per master, at the last slot of its range (with "
              "`slots`: one per run of a master's slots)",
    .arcs = "each master's range of slots (with `slots`: each run, node NULL "
            "where no master serves)",
    .diff = "exact, ranges of slots",
    .replicas = "masters of the next ranges (not Redis replicas)",
  },
};

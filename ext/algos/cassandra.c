/*
** cassandra.c: Cassandra's (and ScyllaDB's) Murmur3Partitioner token ring
** with its replication strategies, as the cluster holds it.
**
** The ring is not derived from names: each node carries its tokens (the
** column `tokens`, signed 64-bit integers separated by commas or spaces,
** as `initial_token` or `nodetool ring` give them), its datacenter `dc`
** and its `rack` (default dc1 and rack1). Two nodes never hold the same
** token. A key's token is the hash murmur3_cassandra of its serialized
** bytes (keyhash.c: MurmurHash3 x64 128 with sign-extended tail bytes, the
** first half as a signed long, -2^63 made 2^63-1, the empty key -2^63):
** TEXT its UTF-8 bytes, BLOB as given, INTEGER its 8 (integer_key=bigint,
** the default) or 4 (int) big-endian bytes.
**
** Positions are the tokens' 64-bit patterns. The unsigned order of the
** patterns is the signed order of the tokens turned by half a circle, so
** "the first token at or after the key's, wrapping" names the same token
** in both, and ch_points and ch_arcs show the signed tokens themselves
** (an arc across 2^63-1 -> -2^63 is two rows there).
**
** ch_locate: the owner of the first token at or after the key's (the
** primary replica). ch_replicas follows the option replication as
** Cassandra's server places replicas (docs/algorithms.md, "cassandra"):
**   simple:N   SimpleStrategy: walk the tokens from the primary's, once
**              round, taking each node not yet taken, until N
**   DC:N,...   NetworkTopologyStrategy (calculateNaturalReplicas): one
**              walk shared by every DC; a DC takes min(N, its nodes)
**              replicas, a node of a rack it has not used yet, or, while
**              it has rack repeats left (N minus its racks), a node of a
**              used rack not yet taken; the list in the order taken
** Read from Cassandra 3.11 to 5.x and the DataStax Python driver 3.25.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "options.h"

#define CASSANDRA_MAX_DCS 64          /* DCs one replication names */

enum { COL_TOKENS, COL_DC, COL_RACK };

typedef struct cassandra_config {
  char replication[101];
  int integer_key;                    /* 0 bigint, 1 int */
} cassandra_config;

/* The replication option, parsed: simple (n_dcs 0) with rf, or the RF of
** each DC named. */
typedef struct replication {
  uint32_t n_dcs;
  uint32_t rf;                        /* simple */
  struct { const char *z; uint32_t n, rf; } dc[CASSANDRA_MAX_DCS];
} replication;

/* Parse z into *p: 0, or 1 with a message in zErr. */
static int replication_parse(const char *z, replication *p, char *zErr,
                             size_t nErr){
  memset(p, 0, sizeof(*p));
  if( strncmp(z, "simple:", 7)==0 ){
    char *zEnd;
    unsigned long rf = strtoul(z+7, &zEnd, 10);
    if( z[7]<'0' || z[7]>'9' || *zEnd || rf<1 || rf>RING_MAX_NODES ){
      snprintf(zErr, nErr, "replication: '%s' is not simple:N with N a "
               "replication factor from 1 to %d", z, RING_MAX_NODES);
      return 1;
    }
    p->rf = (uint32_t)rf;
    return 0;
  }
  for(const char *zItem=z; ; ){
    const char *zComma = strchr(zItem, ',');
    const char *zItemEnd = zComma ? zComma : zItem + strlen(zItem);
    const char *zColon = memchr(zItem, ':', (size_t)(zItemEnd - zItem));
    char *zEnd;
    unsigned long rf = zColon ? strtoul(zColon+1, &zEnd, 10) : 0;
    if( zColon==NULL || zColon==zItem || zColon[1]<'0' || zColon[1]>'9'
     || zEnd!=zItemEnd || rf>RING_MAX_NODES ){
      snprintf(zErr, nErr, "replication: '%.*s' names no DC with its "
               "replication factor: write 'simple:N' (SimpleStrategy) or "
               "'DC:N,DC:N' (NetworkTopologyStrategy), e.g. "
               "replication='dc1:3,dc2:2'", (int)(zItemEnd - zItem), zItem);
      return 1;
    }
    uint32_t nName = (uint32_t)(zColon - zItem);
    for(uint32_t i=0; i<p->n_dcs; i++){
      if( p->dc[i].n==nName && memcmp(p->dc[i].z, zItem, nName)==0 ){
        snprintf(zErr, nErr, "replication: DC '%.*s' is named twice",
                 (int)nName, zItem);
        return 1;
      }
    }
    if( p->n_dcs==CASSANDRA_MAX_DCS ){
      snprintf(zErr, nErr, "replication: more than %d DCs",
               CASSANDRA_MAX_DCS);
      return 1;
    }
    p->dc[p->n_dcs].z = zItem;
    p->dc[p->n_dcs].n = nName;
    p->dc[p->n_dcs].rf = (uint32_t)rf;
    p->n_dcs++;
    if( zComma==NULL ) return 0;
    zItem = zComma + 1;
  }
}

static int check_replication(const ring_option *o, const char *zValue,
                             uint64_t v, char *zErr, size_t nErr){
  (void)o; (void)v;
  replication rep;
  return replication_parse(zValue, &rep, zErr, nErr);
}

static const char *const integer_key_choices[] = { "bigint", "int", NULL };

static const ring_option cassandra_options[] = {
  { .name = "replication", .type = RING_OPTION_TEXT,
    .offset = offsetof(cassandra_config, replication),
    .default_text = "simple:1",
    .about = "the keyspace's replication: 'simple:N' or 'DC:N,DC:N,...'",
    .hi = 100, .check = check_replication },
  { .name = "integer_key", .type = RING_OPTION_CHOICE,
    .offset = offsetof(cassandra_config, integer_key),
    .default_text = "bigint",
    .about = "how an INTEGER key is serialized: bigint (8 bytes) or int (4)",
    .choices = integer_key_choices },
  { .name = NULL }
};

static const ring_column cassandra_columns[] = {
  { .name = "tokens", .required = 1,
    .about = "the node's tokens, signed 64-bit integers separated by commas "
             "or spaces, as nodetool ring lists them",
    .example = "%d00" },
  { .name = "dc", .default_text = "dc1", .about = "the node's datacenter" },
  { .name = "rack", .default_text = "rack1", .about = "the node's rack" },
  { .name = NULL }
};

/* ------------------------------------------------------------- tokens */

static int is_separator(char c){
  return c==',' || c==' ' || c=='\t' || c=='\n' || c=='\r';
}

/*
** The tokens of z (n bytes): each into aOut (NULL: only counted), their
** count into *pn. 0, or 1 with a message in zErr naming the first that is
** not a signed 64-bit integer.
*/
static int tokens_parse(const char *z, size_t n, int64_t *aOut, uint32_t *pn,
                        char *zErr, size_t nErr){
  uint32_t k = 0;
  for(size_t i=0; i<n; ){
    if( is_separator(z[i]) ){ i++; continue; }
    size_t j = i;
    while( j<n && !is_separator(z[j]) ) j++;
    /* Digits with an optional sign, within [-2^63, 2^63-1]. */
    size_t d = i + (z[i]=='-' || z[i]=='+');
    uint64_t mag = 0;
    int bad = d==j;
    for(size_t q=d; q<j && !bad; q++){
      unsigned c = (unsigned char)z[q] - '0';
      bad = c>9 || mag > (UINT64_MAX - c)/10;
      mag = mag*10 + c;
    }
    int bNeg = z[i]=='-';
    if( !bad ) bad = mag > (bNeg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX);
    if( bad ){
      snprintf(zErr, nErr, "token '%.*s' is not a signed 64-bit integer",
               (int)(j-i > 40 ? 40 : j-i), z+i);
      return 1;
    }
    if( aOut ) aOut[k] = bNeg ? (int64_t)(0 - mag) : (int64_t)mag;
    k++;
    i = j;
  }
  if( k==0 ){
    snprintf(zErr, nErr, "no token (a node holds at least one)");
    return 1;
  }
  *pn = k;
  return 0;
}

static const char *cassandra_check_column(const ring_config *cfg, unsigned i,
                                          const char *z, size_t n,
                                          char *zErr, size_t nErr){
  (void)cfg;
  uint32_t nTokens;
  if( i==COL_TOKENS && tokens_parse(z, n, NULL, &nTokens, zErr, nErr) ){
    return zErr;
  }
  if( i!=COL_TOKENS && n==0 ) return "is empty";
  return NULL;
}

/* -------------------------------------------------------------- build */

/* What a ring keeps beyond its points: each node's DC and rack as small
** numbers, and per DC its replication factor, nodes and racks. */
typedef struct cassandra_state {
  replication rep;
  uint32_t *aDc;                      /* node -> DC number */
  uint32_t *aRack;                    /* node -> (DC, rack) number */
  uint32_t nDc, nRack;
  uint32_t *aDcRf;                    /* DC -> its RF (0: not named) */
  uint32_t *aDcNodes;                 /* DC -> nodes */
  uint32_t *aDcRacks;                 /* DC -> racks */
} cassandra_state;

static const ring *sort_ring;         /* qsort has no context argument */
static int sort_key;                  /* 0: by DC; 1: by DC, then rack */

static int node_location_compare(const void *pa, const void *pb){
  const ring_node *a = &sort_ring->nodes[*(const uint32_t *)pa];
  const ring_node *b = &sort_ring->nodes[*(const uint32_t *)pb];
  int c = strcmp(a->columns[COL_DC], b->columns[COL_DC]);
  if( c==0 && sort_key ) c = strcmp(a->columns[COL_RACK], b->columns[COL_RACK]);
  return c;
}

/* Number the distinct DCs (bRack: DC and rack pairs) of r's nodes into
** aId; returns how many. aOrder: scratch of n_nodes entries. */
static uint32_t number_locations(const ring *r, int bRack, uint32_t *aOrder,
                                 uint32_t *aId){
  for(uint32_t i=0; i<r->n_nodes; i++) aOrder[i] = i;
  sort_ring = r;
  sort_key = bRack;
  qsort(aOrder, r->n_nodes, sizeof(uint32_t), node_location_compare);
  uint32_t nId = 0;
  for(uint32_t i=0; i<r->n_nodes; i++){
    if( i>0 && node_location_compare(&aOrder[i-1], &aOrder[i])!=0 ) nId++;
    aId[aOrder[i]] = nId;
  }
  return r->n_nodes ? nId+1 : 0;
}

static int point_compare(const void *pa, const void *pb){
  int64_t a = (int64_t)((const ring_point *)pa)->pos;
  int64_t b = (int64_t)((const ring_point *)pb)->pos;
  return (a>b) - (a<b);
}

/* Every node's tokens as points into *paPoint (*pn), refusing a token two
** nodes share or a node lists twice, and more than RING_MAX_POINTS. */
static int make_points(ring *r, ring_point **paPoint, uint32_t *pn,
                       char *zErr, size_t nErr){
  uint64_t nTotal = 0;
  *paPoint = NULL;
  for(uint32_t i=0; i<r->n_nodes; i++){
    uint32_t nTokens;
    const ring_node *node = &r->nodes[i];
    if( tokens_parse(node->columns[COL_TOKENS], node->column_len[COL_TOKENS],
                     NULL, &nTokens, zErr, nErr) ){
      return RING_INVALID;              /* checked already: not reached */
    }
    nTotal += nTokens;
  }
  if( nTotal>RING_MAX_POINTS ){
    snprintf(zErr, nErr, "too many tokens: a ring holds at most %d",
             RING_MAX_POINTS);
    return RING_INVALID;
  }
  ring_point *a = ring_alloc(sizeof(ring_point) * (nTotal ? nTotal : 1));
  int64_t *aTok = ring_alloc(sizeof(int64_t) * (nTotal ? nTotal : 1));
  if( a==NULL || aTok==NULL ){
    ring_dealloc(a);
    ring_dealloc(aTok);
    return RING_NOMEM;
  }
  uint32_t k = 0;
  for(uint32_t i=0; i<r->n_nodes; i++){
    uint32_t nTokens;
    const ring_node *node = &r->nodes[i];
    tokens_parse(node->columns[COL_TOKENS], node->column_len[COL_TOKENS],
                 aTok, &nTokens, zErr, nErr);
    for(uint32_t t=0; t<nTokens; t++){
      a[k].pos = (uint64_t)aTok[t];
      a[k].node = i;
      k++;
    }
  }
  ring_dealloc(aTok);
  qsort(a, k, sizeof(ring_point), point_compare);
  for(uint32_t i=1; i<k; i++){
    if( a[i].pos!=a[i-1].pos ) continue;
    const char *x = r->nodes[a[i-1].node].name, *y = r->nodes[a[i].node].name;
    if( a[i].node==a[i-1].node ){
      snprintf(zErr, nErr, "node '%.200s' lists token %lld twice", x,
               (long long)a[i].pos);
    }else{
      snprintf(zErr, nErr, "token %lld is held by two nodes, '%.200s' and "
               "'%.200s' (a token belongs to one node)", (long long)a[i].pos,
               strcmp(x, y)<0 ? x : y, strcmp(x, y)<0 ? y : x);
    }
    ring_dealloc(a);
    return RING_INVALID;
  }
  *paPoint = a;
  *pn = k;
  return RING_OK;
}

/* r->state: the locations and the replication. */
static int make_state(ring *r, char *zErr, size_t nErr){
  uint32_t n = r->n_nodes ? r->n_nodes : 1;
  size_t nBytes = sizeof(cassandra_state) + sizeof(uint32_t) * 6 * (size_t)n;
  cassandra_state *s = ring_alloc(nBytes);
  if( s==NULL ) return RING_NOMEM;
  memset(s, 0, nBytes);
  r->state = s;
  const cassandra_config *cc = RING_OWN_CONFIG(&r->config, cassandra_config);
  if( replication_parse(cc->replication, &s->rep, zErr, nErr) ){
    return RING_INVALID;                /* checked already: not reached */
  }
  s->aDc = (uint32_t *)&s[1];
  s->aRack = s->aDc + n;
  s->aDcRf = s->aRack + n;
  s->aDcNodes = s->aDcRf + n;
  s->aDcRacks = s->aDcNodes + n;
  uint32_t *aOrder = s->aDcRacks + n;
  s->nDc = number_locations(r, 0, aOrder, s->aDc);
  s->nRack = number_locations(r, 1, aOrder, s->aRack);
  /* Racks are numbered in DC order, so a DC's racks are the distinct
  ** rack numbers of its nodes. */
  uint32_t lastRack = UINT32_MAX;
  for(uint32_t i=0; i<r->n_nodes; i++){
    uint32_t node = aOrder[i];        /* sorted by DC, then rack */
    s->aDcNodes[s->aDc[node]]++;
    if( s->aRack[node]!=lastRack ) s->aDcRacks[s->aDc[node]]++;
    lastRack = s->aRack[node];
  }
  for(uint32_t d=0; d<s->rep.n_dcs; d++){
    for(uint32_t i=0; i<r->n_nodes; i++){
      const ring_node *node = &r->nodes[i];
      if( node->column_len[COL_DC]==s->rep.dc[d].n
       && memcmp(node->columns[COL_DC], s->rep.dc[d].z, s->rep.dc[d].n)==0 ){
        s->aDcRf[s->aDc[i]] = s->rep.dc[d].rf;
        break;
      }
    }
  }
  return RING_OK;
}

static int cassandra_build(ring *r, const ring *prev, char *zErr,
                           size_t nErr){
  (void)prev;
  ring_point *a = NULL;
  uint32_t n = 0;
  int rc = make_points(r, &a, &n, zErr, nErr);
  if( rc==RING_OK ){
    ring_points_rule rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_NAME, 0 };
    rc = ring_points_place(r, a, n, &rule);
  }
  ring_dealloc(a);
  if( rc==RING_OK ) rc = make_state(r, zErr, nErr);
  return rc;
}

/* ----------------------------------------------------------- replicas */

static int bit_test(const uint64_t *a, uint32_t i){
  return (a[i/64] >> (i%64)) & 1;
}

static void bit_set(uint64_t *a, uint32_t i){
  a[i/64] |= (uint64_t)1 << (i%64);
}

static int cassandra_replicas(const ring *r, uint64_t pos, uint32_t *aOut,
                              uint32_t *pn){
  const cassandra_state *s = r->state;
  uint32_t nWords = r->n_nodes/64 + 1, nRackWords = s->nRack/64 + 1;
  size_t nBytes = sizeof(uint64_t) * (nWords + nRackWords)
                + sizeof(uint32_t) * 2 * (s->nDc + 1);
  uint64_t *aTaken = ring_alloc(nBytes);
  if( aTaken==NULL ) return RING_NOMEM;
  memset(aTaken, 0, nBytes);
  uint64_t *aRackUsed = aTaken + nWords;
  uint32_t *aLeft = (uint32_t *)(aRackUsed + nRackWords);
  uint32_t *aRepeats = aLeft + s->nDc + 1;
  uint32_t nOut = 0, nToFill = 0;
  if( s->rep.n_dcs==0 ){
    nToFill = 1;                      /* simple: one "DC" of every node */
  }else{
    for(uint32_t d=0; d<s->nDc; d++){
      uint32_t rf = s->aDcRf[d];
      if( rf==0 ) continue;
      aLeft[d] = rf < s->aDcNodes[d] ? rf : s->aDcNodes[d];
      aRepeats[d] = rf > s->aDcRacks[d] ? rf - s->aDcRacks[d] : 0;
      nToFill++;
    }
  }
  uint32_t k0 = ring_unit_of(r, pos);
  for(uint32_t step=0; step<r->n_points && nToFill>0; step++){
    uint32_t k = k0 + step;
    uint32_t node = r->owners[k>=r->n_points ? k - r->n_points : k];
    if( s->rep.n_dcs==0 ){
      if( bit_test(aTaken, node) ) continue;
      bit_set(aTaken, node);
      aOut[nOut++] = node;
      if( nOut==s->rep.rf || nOut==r->n_nodes ) nToFill = 0;
      continue;
    }
    uint32_t d = s->aDc[node];
    if( aLeft[d]==0 ) continue;
    if( !bit_test(aRackUsed, s->aRack[node]) ){
      bit_set(aRackUsed, s->aRack[node]);
    }else if( aRepeats[d]>0 && !bit_test(aTaken, node) ){
      aRepeats[d]--;
    }else{
      continue;
    }
    bit_set(aTaken, node);
    aOut[nOut++] = node;
    if( --aLeft[d]==0 ) nToFill--;
  }
  ring_dealloc(aTaken);
  *pn = nOut;
  return RING_OK;
}

/* ------------------------------------------------------------ options */

static int cassandra_check_options(ring_config *cfg, unsigned set,
                                   char *zErr, size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_MURMUR3_CASSANDRA ){
    snprintf(zErr, nErr, "algorithm cassandra hashes keys with "
             "murmur3_cassandra (the Murmur3Partitioner's token), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

/* Each node counts one point against the limit when written; its tokens
** are counted by the build and by the commit check (make_points). */
static int64_t cassandra_point_budget(const ring_config *cfg, double w){
  (void)cfg; (void)w;
  return 1;
}

static void cassandra_key_rule(const ring_config *cfg, ring_keys *k){
  const cassandra_config *cc = RING_OWN_CONFIG(cfg, cassandra_config);
  k->integer_bytes = cc->integer_key==1 ? 4 : 8;
}

/* A commit fails where the build does: a token two nodes share, too many
** tokens. */
static int cassandra_check_commit(const ring_config *cfg, const ring_commit *c,
                                  char *zErr, size_t nErr){
  ring *r = NULL;
  int rc = ring_build(cfg, c->nodes, c->n_nodes, &r, zErr, nErr);
  ring_release(r);
  return rc;
}

static unsigned cassandra_commit_needs(const ring_config *cfg){
  (void)cfg;
  return RING_COMMIT_NODES;
}

const ring_algo algo_cassandra = {
  .name = "cassandra",
  .default_hash = HASH_MURMUR3_CASSANDRA,
  .own_options = cassandra_options,
  .columns = cassandra_columns,
  .check_column = cassandra_check_column,
  .units = RING_UNITS_POINTS,
  .unit_name = "tokens",
  .check_options = cassandra_check_options,
  .no_weights = "algorithm cassandra has no weights (a node's share comes "
                "from its tokens): weight must be 1",
  .point_budget = cassandra_point_budget,
  .build = cassandra_build,
  .key_rule = cassandra_key_rule,
  .replicas = cassandra_replicas,
  .check_commit = cassandra_check_commit,
  .commit_needs = cassandra_commit_needs,
  .doc = {
    .summary = "Cassandra's Murmur3Partitioner token ring with its "
               "replication strategies",
    .reproduces = "a Cassandra or ScyllaDB cluster (nodetool ring, a "
                  "keyspace's replication)",
    .cost = "O(log tokens); replicas O(tokens walked)",
    .weights = "no (all 1): the tokens column gives each node's share",
    .remove = "any node",
    .movement = "only onto the new node's tokens",
    .options = "`replication` (`simple:1`; `simple:N` or `DC:N,DC:N`), "
               "`integer_key` (`bigint` or `int`)",
    .replicas = "the keyspace's replicas, in the order Cassandra's server "
                "walks the ring (SimpleStrategy or NetworkTopologyStrategy)",
  },
};

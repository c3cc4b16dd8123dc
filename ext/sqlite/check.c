/*
** check.c: the integrity check of a ring table, as R*Tree's rtreecheck().
**
**   SELECT ch_check('shards');      'ok', or one line per problem found
**   PRAGMA integrity_check;         (SQLite 3.44+) the same, per ring table
**
** The writes (store.c) keep the three shadow tables consistent with each
** other; a hand edit, a damaged file or a bug can break that. The check
** reads them and reports what does not hold, without trusting any of it:
**
**   %_config   every setting there once, of its type and range; the
**              options valid and fitting together; the points counter
**              equal to what the nodes count
**   %_nodes    names valid and unique, weights valid for the algorithm,
**              ids below nextid, the node and points limits
**   %_history  epochs whole, from 1, without gaps and never going back;
**              ops known; per node id: added once and first, nothing after
**              its removal, renames from its name of the time, nextid one
**              past the last id added; the last committed epoch the one
**              %_config says (or one more, in the transaction changing it)
**   together   the replay of the history equals %_nodes, and every
**              version builds and would have committed (the algorithm's
**              commit rule: jump's order, ketama's points)
**
** It never stops at the first problem: each line names the shadow table
** (or the version) and what is wrong. The cost is a read of the three
** tables plus one build per version (each reusing the last), so it grows
** with versions x nodes; PRAGMA quick_check skips the builds.
**
** Longer than most files here (about 680 lines) because it is one list of
** checks, table by table, each a few lines; split, a reader would have to
** hold three files to see what "ok" promises.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_layer.h"

/* A report stops listing after this many problems, and counts the rest. */
#define CHECK_MAX_PROBLEMS 100

typedef struct check_state {
  sqlite3 *db;
  const char *zSchema, *zName;
  sqlite3_str *pReport;    /* one line per problem */
  int nProblem;
  int rc;                  /* SQLITE_OK, or the error that stopped it */
  /* From %_config, where it could be read: */
  int bConfig;             /* config is usable (format and options valid) */
  ring_config config;
  int64_t epoch, nextid, points;
  int bEpoch, bNextid, bPoints;
  int bHistory;            /* %_history was read (the replay is complete) */
} check_state;

/* A node of the history replay: its id, name and weight as of the row
** replayed last, and whether it has been removed. */
typedef struct check_node {
  int64_t id;
  char *zName;
  int nName;
  double weight;
  int bGone;
} check_node;

static void check_problem(check_state *k, const char *zFmt, ...){
  k->nProblem++;
  if( k->nProblem>CHECK_MAX_PROBLEMS ) return;
  va_list ap;
  va_start(ap, zFmt);
  if( sqlite3_str_length(k->pReport)>0 ){
    sqlite3_str_appendchar(k->pReport, 1, '\n');
  }
  sqlite3_str_vappendf(k->pReport, zFmt, ap);
  va_end(ap);
}

/* Prepare a query on the shadow tables (a %-format); NULL if it fails,
** which for a missing table or column is a problem, else an error. */
static sqlite3_stmt *check_prepare(check_state *k, const char *zTable,
                                   const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  char *zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  sqlite3_stmt *pStmt = NULL;
  if( zSql==NULL ){
    k->rc = SQLITE_NOMEM;
    return NULL;
  }
  int rc = sqlite3_prepare_v3(k->db, zSql, -1, SQLITE_PREPARE_NO_VTAB,
                              &pStmt, NULL);
  sqlite3_free(zSql);
  if( rc==SQLITE_ERROR ){
    check_problem(k, "%s_%s cannot be read: %s", k->zName, zTable,
                  sqlite3_errmsg(k->db));
  }else if( rc!=SQLITE_OK ){
    k->rc = rc;
  }
  return pStmt;
}

/* A statement ended: SQLITE_DONE is fine, anything else stops the check. */
static void check_done(check_state *k, int rc){
  if( rc!=SQLITE_DONE && rc!=SQLITE_ROW && k->rc==SQLITE_OK ) k->rc = rc;
}

/* ------------------------------------------------------------ %_config */

/* The integer settings of %_config besides the options, by index. */
enum { CHECK_FORMAT, CHECK_EPOCH, CHECK_STAMP, CHECK_CREATED, CHECK_NEXTID,
       CHECK_POINTS };
static const struct {
  const char *zKey;
  int64_t lo, hi;          /* the valid range */
  const char *zRange;      /* it, in words */
} check_counters[] = {
  [CHECK_FORMAT] = { "format", CHASH_FORMAT, CHASH_FORMAT,
                     "1 (the format this chash reads)" },
  [CHECK_EPOCH] = { "epoch", 0, INT64_MAX, "a non-negative integer" },
  [CHECK_STAMP] = { "stamp", INT64_MIN, INT64_MAX, "an integer" },
  [CHECK_CREATED] = { "created", INT64_MIN, INT64_MAX, "an integer" },
  [CHECK_NEXTID] = { "nextid", 1, INT64_MAX, "a positive integer" },
  [CHECK_POINTS] = { "points", 0, RING_MAX_POINTS,
                     "an integer from 0 to the points limit" },
};
#define CHECK_N_COUNTERS \
  ((int)(sizeof(check_counters)/sizeof(check_counters[0])))

/* The options every ring has stored, by bit (options.h, OPTION_REQUIRED). */
static const struct {
  unsigned bit;
  const char *zKey;
} check_required[] = {
  { OPTION_ALGORITHM, "algorithm" }, { OPTION_HASH, "hash" },
  { OPTION_VNODES, "vnodes" }, { OPTION_SEED, "seed" },
  { OPTION_TABLE, "table" },
};

static void check_config(check_state *k){
  sqlite3_stmt *pStmt = check_prepare(k, "config",
      "SELECT key, value, typeof(value) FROM \"%w\".\"%w_config\"",
      k->zSchema, k->zName);
  if( pStmt==NULL ) return;
  unsigned seen = 0, set = 0;
  int bOptionsOk = 1, bFormatOk = 0;
  int rc;
  ring_config_default(&k->config);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    int eKey = sqlite3_column_type(pStmt, 0);
    int eValue = sqlite3_column_type(pStmt, 1);
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zValue = (const char *)sqlite3_column_text(pStmt, 1);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 2);
    if( zType==NULL || (zKey==NULL && eKey!=SQLITE_NULL)
     || (zValue==NULL && eValue!=SQLITE_NULL) ){
      rc = SQLITE_NOMEM;
      break;
    }
    if( zKey==NULL ){
      check_problem(k, "%s_config has a setting without a name", k->zName);
      continue;
    }
    int i;
    for(i=0; i<CHECK_N_COUNTERS; i++){
      if( strcmp(zKey, check_counters[i].zKey)==0 ) break;
    }
    if( i<CHECK_N_COUNTERS ){
      int64_t v = sqlite3_column_int64(pStmt, 1);
      seen |= 1u<<i;
      if( strcmp(zType, "integer")!=0 || v<check_counters[i].lo
       || v>check_counters[i].hi ){
        check_problem(k, "%s_config: %s is %s %Q, not %s", k->zName, zKey,
                      zType, zValue, check_counters[i].zRange);
        continue;
      }
      switch( i ){
        case CHECK_FORMAT: bFormatOk = 1; break;
        case CHECK_EPOCH:  k->epoch = v;  k->bEpoch = 1; break;
        case CHECK_NEXTID: k->nextid = v; k->bNextid = 1; break;
        case CHECK_POINTS: k->points = v; k->bPoints = 1; break;
      }
      continue;
    }
    char zMsg[512];
    if( zValue==NULL ){
      check_problem(k, "%s_config: %s is NULL", k->zName, zKey);
      bOptionsOk = 0;
    }else if( options_set(&k->config, &set, zKey, zValue, zMsg, sizeof(zMsg)) ){
      check_problem(k, "%s_config: %s", k->zName, zMsg);
      bOptionsOk = 0;
    }
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
  for(int i=0; i<CHECK_N_COUNTERS; i++){
    if( (seen & (1u<<i))==0 ){
      check_problem(k, "%s_config lacks the setting %s", k->zName,
                    check_counters[i].zKey);
    }
  }
  for(size_t i=0; i<sizeof(check_required)/sizeof(check_required[0]); i++){
    if( (set & check_required[i].bit)==0 ){
      check_problem(k, "%s_config lacks the option %s", k->zName,
                    check_required[i].zKey);
      bOptionsOk = 0;
    }
  }
  if( bOptionsOk ){
    char zMsg[512];
    /* Every option is stored, those that do not apply with their default
    ** (the seed 0 too): check the fit of those that apply, as if given. */
    unsigned given = set & (OPTION_ALGORITHM | OPTION_HASH
                            | k->config.algo->options);
    if( k->config.seed!=0 ) given |= OPTION_SEED;
    if( options_check(&k->config, given, zMsg, sizeof(zMsg)) ){
      check_problem(k, "%s_config: %s", k->zName, zMsg);
      bOptionsOk = 0;
    }
  }
  k->bConfig = bOptionsOk && bFormatOk;
}

/* ------------------------------------------------------------- %_nodes */

/* Points a node of weight w counts against the limit (as store.c counts
** them: at least one per node). */
static int64_t check_limit_points(const ring_config *cfg, double w){
  int64_t p = ring_node_points(cfg, w);
  return p<1 ? 1 : p;
}

/* A node's weight problem under cfg, or NULL. eType: the column's type. */
static const char *check_node_weight(const ring_config *cfg, int eType,
                                     double w){
  if( (eType!=SQLITE_FLOAT && eType!=SQLITE_INTEGER)
   || ring_node_points(cfg, w)<0 ){
    return "weight must be a positive finite number at most 1e+09";
  }
  return ring_check_weight(cfg, w);
}

static void check_nodes(check_state *k){
  sqlite3_stmt *pStmt = check_prepare(k, "nodes",
      "SELECT id, node, weight FROM \"%w\".\"%w_nodes\" ORDER BY id",
      k->zSchema, k->zName);
  if( pStmt==NULL ) return;
  int64_t nNode = 0, nPoints = 0;
  int rc;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    /* Types first: reading a value as text converts it. */
    int eNodeType = sqlite3_column_type(pStmt, 1);
    int eType = sqlite3_column_type(pStmt, 2);
    int64_t id = sqlite3_column_int64(pStmt, 0);
    const char *zNode = (const char *)sqlite3_column_text(pStmt, 1);
    int nByte = sqlite3_column_bytes(pStmt, 1);
    double w = sqlite3_column_double(pStmt, 2);
    nNode++;
    if( zNode==NULL ){
      if( eNodeType!=SQLITE_NULL ){ rc = SQLITE_NOMEM; break; }
      check_problem(k, "%s_nodes: node id %lld has a NULL name", k->zName,
                    (long long)id);
      continue;
    }
    const char *zBad = eNodeType!=SQLITE_TEXT
                     ? "node name is not text" : ring_check_name(zNode, nByte);
    if( zBad ){
      check_problem(k, "%s_nodes: node id %lld: %s", k->zName,
                    (long long)id, zBad);
    }
    if( k->bConfig ){
      zBad = check_node_weight(&k->config, eType, w);
      if( zBad ){
        check_problem(k, "%s_nodes: node %.*Q: %s", k->zName, nByte, zNode,
                      zBad);
      }else if( nPoints<=RING_MAX_POINTS ){
        /* Past the limit the sum stops: damaged weights could overflow it. */
        nPoints += check_limit_points(&k->config, w);
      }
    }
    if( k->bNextid && id>=k->nextid ){
      check_problem(k, "%s_nodes: node %.*Q has id %lld, but %s_config's "
                    "nextid is %lld", k->zName, nByte, zNode, (long long)id,
                    k->zName, (long long)k->nextid);
    }
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
  if( k->rc ) return;
  if( nNode>RING_MAX_NODES ){
    check_problem(k, "%s_nodes has %lld nodes; a ring holds at most %d",
                  k->zName, (long long)nNode, RING_MAX_NODES);
  }
  if( k->bConfig ){
    char zMsg[512];
    if( ring_check_count(&k->config, (uint64_t)nNode, zMsg, sizeof(zMsg)) ){
      check_problem(k, "%s_nodes: %s", k->zName, zMsg);
    }
    if( nPoints>RING_MAX_POINTS ){
      check_problem(k, "%s_nodes: the nodes have more than %d points, the "
                    "most a ring holds", k->zName, RING_MAX_POINTS);
    }else if( k->bPoints && nPoints!=k->points ){
      check_problem(k, "%s_config: points is %lld, but the nodes count %lld",
                    k->zName, (long long)k->points, (long long)nPoints);
    }
  }
  pStmt = check_prepare(k, "nodes",
      "SELECT node, count(*) FROM \"%w\".\"%w_nodes\" GROUP BY node"
      " HAVING count(*)>1 ORDER BY node", k->zSchema, k->zName);
  if( pStmt==NULL ) return;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    check_problem(k, "%s_nodes: %lld nodes are named %Q", k->zName,
                  (long long)sqlite3_column_int64(pStmt, 1),
                  sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
}

/* ----------------------------------------------------------- %_history */

/* The replay of the history: the nodes by id (ids are added in ascending
** order), and the last version built, for the next. */
typedef struct check_replay {
  check_node *aNode;
  int64_t n, nAlloc;
  ring_input *aPrev;            /* the last version's nodes, in join order */
  char *zPrevNames;             /* their names, which aPrev points into */
  uint32_t nPrev;
  ring *pPrev;                  /* the last version's ring */
  int bBuild;                   /* build every version */
  int bBuildFailed;             /* a version did not build: stop building */
} check_replay;

static void check_replay_free(check_replay *p){
  for(int64_t i=0; i<p->n; i++) sqlite3_free(p->aNode[i].zName);
  sqlite3_free(p->aNode);
  sqlite3_free(p->aPrev);
  sqlite3_free(p->zPrevNames);
  ring_release(p->pPrev);
}

/* The replayed node with this id, or NULL. */
static check_node *check_replay_find(check_replay *p, int64_t id){
  int64_t lo = 0, hi = p->n;
  while( lo<hi ){
    int64_t mid = lo + (hi-lo)/2;
    if( p->aNode[mid].id<id ) lo = mid+1;
    else hi = mid;
  }
  return lo<p->n && p->aNode[lo].id==id ? &p->aNode[lo] : NULL;
}

/*
** Version iVersion ends here: build it from the nodes replayed so far
** (reusing the last version's ring) and, if it was committed, check the
** algorithm's commit rule against the last version. The nodes are copied
** (names too), as the next version's renames replace the replay's names.
*/
static void check_replay_version(check_state *k, check_replay *p,
                                 int64_t iVersion){
  if( !p->bBuild || p->bBuildFailed ) return;
  size_t nBytes = 1;
  for(int64_t i=0; i<p->n; i++){
    if( !p->aNode[i].bGone ) nBytes += (size_t)p->aNode[i].nName;
  }
  ring_input *aIn = sqlite3_malloc64(sizeof(ring_input)*(p->n ? p->n : 1));
  char *zNames = sqlite3_malloc64(nBytes);
  if( aIn==NULL || zNames==NULL ){
    sqlite3_free(aIn);
    sqlite3_free(zNames);
    k->rc = SQLITE_NOMEM;
    return;
  }
  uint32_t nIn = 0;
  size_t off = 0;
  for(int64_t i=0; i<p->n; i++){
    const check_node *x = &p->aNode[i];
    if( x->bGone ) continue;
    memcpy(zNames+off, x->zName, x->nName);
    aIn[nIn].name = zNames+off;
    aIn[nIn].name_len = (uint32_t)x->nName;
    aIn[nIn].weight = x->weight;
    aIn[nIn].id = x->id;
    off += x->nName;
    nIn++;
  }
  char zMsg[512];
  ring *r = NULL;
  int rcRing = ring_build_from(p->pPrev, &k->config, aIn, nIn, &r, zMsg,
                               sizeof(zMsg));
  if( rcRing==RING_OK && iVersion<=k->epoch ){
    rcRing = ring_check_commit(&k->config, p->aPrev, p->nPrev, aIn, nIn,
                               zMsg, sizeof(zMsg));
  }
  if( rcRing==RING_NOMEM ){
    k->rc = SQLITE_NOMEM;
  }else if( rcRing!=RING_OK ){
    check_problem(k, "version %lld does not build: %s", (long long)iVersion,
                  zMsg);
    p->bBuildFailed = 1;
  }
  ring_release(p->pPrev);
  sqlite3_free(p->aPrev);
  sqlite3_free(p->zPrevNames);
  p->pPrev = r;
  p->aPrev = aIn;
  p->zPrevNames = zNames;
  p->nPrev = nIn;
}

/* One history row (in seq order) applied to the replay. */
static void check_replay_row(check_state *k, check_replay *p, int64_t seq,
                       const char *zOp, int64_t id, const char *zNode,
                       int nNode, double w, const char *zOld){
  const char *zT = k->zName;
  check_node *x = check_replay_find(p, id);
  if( strcmp(zOp, "add")==0 ){
    if( x ){
      check_problem(k, "%s_history: seq %lld adds node id %lld a second "
                    "time", zT, (long long)seq, (long long)id);
      return;
    }
    if( p->n>0 && p->aNode[p->n-1].id>id ){
      check_problem(k, "%s_history: seq %lld adds node id %lld after id "
                    "%lld (ids grow in join order)", zT, (long long)seq,
                    (long long)id, (long long)p->aNode[p->n-1].id);
      return;
    }
    if( p->n==p->nAlloc ){
      int64_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
      check_node *aNew = sqlite3_realloc64(p->aNode, sizeof(check_node)*nNew);
      if( aNew==NULL ){ k->rc = SQLITE_NOMEM; return; }
      p->aNode = aNew;
      p->nAlloc = nNew;
    }
    x = &p->aNode[p->n++];
    memset(x, 0, sizeof(*x));
    x->id = id;
  }else if( x==NULL ){
    check_problem(k, "%s_history: seq %lld: %s of node id %lld, which was "
                  "never added", zT, (long long)seq, zOp, (long long)id);
    return;
  }else if( x->bGone ){
    check_problem(k, "%s_history: seq %lld: %s of node id %lld after its "
                  "removal", zT, (long long)seq, zOp, (long long)id);
    return;
  }else if( strcmp(zOp, "rename")==0 ){
    if( zOld==NULL || strcmp(zOld, x->zName)!=0 ){
      check_problem(k, "%s_history: seq %lld renames node id %lld from %Q, "
                    "but its name was %Q", zT, (long long)seq, (long long)id,
                    zOld, x->zName);
    }
  }else if( nNode!=x->nName || memcmp(zNode, x->zName, nNode)!=0 ){
    check_problem(k, "%s_history: seq %lld: %s of node id %lld names it "
                  "%.*Q, but its name was %Q", zT, (long long)seq, zOp,
                  (long long)id, nNode, zNode, x->zName);
  }
  if( strcmp(zOp, "remove")==0 ){
    x->bGone = 1;
    return;
  }
  /* add, reweight, rename: the node's name and weight from now on. */
  char *zCopy = sqlite3_malloc64(nNode+1);
  if( zCopy==NULL ){ k->rc = SQLITE_NOMEM; return; }
  memcpy(zCopy, zNode, nNode);
  zCopy[nNode] = 0;
  sqlite3_free(x->zName);
  x->zName = zCopy;
  x->nName = nNode;
  x->weight = w;
}

/* The ops of %_history. */
static int check_op_known(const char *zOp){
  return strcmp(zOp, "add")==0 || strcmp(zOp, "remove")==0
      || strcmp(zOp, "reweight")==0 || strcmp(zOp, "rename")==0;
}

/* Read %_history in seq order: each row's fields, the epochs, and the
** replay (p), building each version where it ends. */
static void check_history(check_state *k, check_replay *p){
  const char *zT = k->zName;
  sqlite3_stmt *pStmt = check_prepare(k, "history",
      "SELECT seq, epoch, op, id, node, weight, old FROM \"%w\".\"%w_history\""
      " ORDER BY seq", k->zSchema, zT);
  if( pStmt==NULL ) return;
  int64_t lastEpoch = 0, maxAdd = 0;
  int rc = SQLITE_DONE;
  while( k->rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    /* Types first: reading a value as text converts it. */
    int aType[7];
    for(int i=0; i<7; i++) aType[i] = sqlite3_column_type(pStmt, i);
    int64_t seq = sqlite3_column_int64(pStmt, 0);
    int64_t epoch = sqlite3_column_int64(pStmt, 1);
    int64_t id = sqlite3_column_int64(pStmt, 3);
    const char *zOp = (const char *)sqlite3_column_text(pStmt, 2);
    const char *zNode = (const char *)sqlite3_column_text(pStmt, 4);
    int nNode = sqlite3_column_bytes(pStmt, 4);
    const char *zOld = (const char *)sqlite3_column_text(pStmt, 6);
    double w = sqlite3_column_double(pStmt, 5);
    if( (zOp==NULL && aType[2]!=SQLITE_NULL)
     || (zNode==NULL && aType[4]!=SQLITE_NULL)
     || (zOld==NULL && aType[6]!=SQLITE_NULL) ){
      rc = SQLITE_NOMEM;
      break;
    }
    if( aType[1]!=SQLITE_INTEGER || epoch<1 ){
      check_problem(k, "%s_history: seq %lld: epoch %Q is not a version "
                    "number", zT, (long long)seq,
                    sqlite3_column_text(pStmt, 1));
      p->bBuild = 0;                  /* versions cannot be told apart */
      continue;
    }
    if( epoch<lastEpoch ){
      check_problem(k, "%s_history: seq %lld: epoch %lld comes after epoch "
                    "%lld (epochs never go back)", zT, (long long)seq,
                    (long long)epoch, (long long)lastEpoch);
      p->bBuild = 0;
    }else if( epoch>lastEpoch ){
      if( epoch-lastEpoch>1 ){
        check_problem(k, "%s_history: seq %lld: epoch %lld follows epoch "
                      "%lld (every version has its changes)", zT,
                      (long long)seq, (long long)epoch, (long long)lastEpoch);
      }
      if( lastEpoch>0 ) check_replay_version(k, p, lastEpoch);
      lastEpoch = epoch;
    }
    if( zOp==NULL || !check_op_known(zOp) ){
      check_problem(k, "%s_history: seq %lld: unknown op %Q", zT,
                    (long long)seq, zOp);
      p->bBuild = 0;
      continue;
    }
    int bOld = strcmp(zOp, "rename")==0;
    const char *zBad = NULL;
    if( aType[3]!=SQLITE_INTEGER || id<1 ){
      zBad = "its node id is not a positive integer";
    }else if( aType[4]!=SQLITE_TEXT ){
      zBad = "its node name is not text";
    }else if( aType[5]!=SQLITE_INTEGER && aType[5]!=SQLITE_FLOAT ){
      zBad = "its weight is not a number";
    }else if( bOld!=(aType[6]==SQLITE_TEXT) ){
      zBad = bOld ? "a rename without the old name"
                  : "an old name on an op other than rename";
    }
    if( zBad ){
      check_problem(k, "%s_history: seq %lld (%s): %s", zT, (long long)seq,
                    zOp, zBad);
      p->bBuild = 0;
      continue;
    }
    if( strcmp(zOp, "add")==0 && id>maxAdd ) maxAdd = id;
    check_replay_row(k, p, seq, zOp, id, zNode, nNode, w, zOld);
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
  if( k->rc ) return;
  k->bHistory = 1;
  if( lastEpoch>0 ) check_replay_version(k, p, lastEpoch);
  if( k->bNextid && k->nextid-1!=maxAdd ){
    check_problem(k, "%s_config: nextid is %lld, but the last node id added "
                  "is %lld", zT, (long long)k->nextid, (long long)maxAdd);
  }
  /* The changes of an open transaction are the version after the
  ** committed one. */
  if( k->bEpoch && lastEpoch!=k->epoch
   && !(lastEpoch-1==k->epoch && !sqlite3_get_autocommit(k->db)) ){
    check_problem(k, "%s_history ends at version %lld, but %s_config says "
                  "%lld were committed", zT, (long long)lastEpoch, zT,
                  (long long)k->epoch);
  }
}

/* The replay's nodes against %_nodes: the same ids, names and weights. */
static void check_replay_matches(check_state *k, check_replay *p){
  const char *zT = k->zName;
  sqlite3_stmt *pStmt = check_prepare(k, "nodes",
      "SELECT id, node, weight FROM \"%w\".\"%w_nodes\" ORDER BY id",
      k->zSchema, zT);
  if( pStmt==NULL ) return;
  /* A merge of two lists in id order: the replay's nodes still in the
  ** ring, and the rows of %_nodes. */
  int64_t i = 0;
  int rc = sqlite3_step(pStmt);
  for(;;){
    while( i<p->n && p->aNode[i].bGone ) i++;
    const check_node *x = i<p->n ? &p->aNode[i] : NULL;
    if( rc!=SQLITE_ROW && (rc!=SQLITE_DONE || x==NULL) ) break;
    int64_t id = rc==SQLITE_ROW ? sqlite3_column_int64(pStmt, 0) : 0;
    if( rc==SQLITE_DONE || (x && x->id<id) ){
      check_problem(k, "%s_nodes lacks node %Q (id %lld), which the "
                    "history has", zT, x->zName, (long long)x->id);
      i++;
      continue;
    }
    int eNodeType = sqlite3_column_type(pStmt, 1);
    const char *zNode = (const char *)sqlite3_column_text(pStmt, 1);
    int nNode = sqlite3_column_bytes(pStmt, 1);
    double w = sqlite3_column_double(pStmt, 2);
    if( zNode==NULL && eNodeType!=SQLITE_NULL ){
      rc = SQLITE_NOMEM;
      break;
    }
    if( x==NULL || x->id>id ){
      check_problem(k, "%s_nodes has node %.*Q (id %lld), which the history "
                    "does not", zT, nNode, zNode, (long long)id);
    }else{
      if( zNode==NULL || nNode!=x->nName || memcmp(zNode, x->zName, nNode)!=0
       || w!=x->weight ){
        check_problem(k, "%s_nodes: node id %lld is %.*Q weight %!.15g, but "
                      "the history makes it %Q weight %!.15g", zT,
                      (long long)id, nNode, zNode, w, x->zName, x->weight);
      }
      i++;
    }
    rc = sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
}

int check_ring(sqlite3 *db, const char *zSchema, const char *zName,
               int bQuick, char **pzReport){
  check_state k;
  check_replay replay;
  memset(&k, 0, sizeof(k));
  memset(&replay, 0, sizeof(replay));
  *pzReport = NULL;
  k.db = db;
  k.zSchema = zSchema;
  k.zName = zName;
  k.pReport = sqlite3_str_new(db);
  /* Shadow tables that are not the ring's own kind are not read at all:
  ** a view or a trigger there runs SQL the file chose. */
  char *zShape = NULL;
  k.rc = store_check_tables(db, zSchema, zName, &zShape);
  if( zShape ) check_problem(&k, "%s", zShape);
  if( k.rc==SQLITE_OK && zShape==NULL ){
    check_config(&k);
    if( k.rc==SQLITE_OK ) check_nodes(&k);
    if( k.rc==SQLITE_OK ){
      replay.bBuild = !bQuick && k.bConfig && k.bEpoch;
      check_history(&k, &replay);
    }
    if( k.rc==SQLITE_OK && k.bHistory ) check_replay_matches(&k, &replay);
  }
  sqlite3_free(zShape);
  check_replay_free(&replay);
  if( k.rc==SQLITE_OK && k.nProblem>CHECK_MAX_PROBLEMS ){
    sqlite3_str_appendf(k.pReport, "\n... and %d more problems",
                        k.nProblem - CHECK_MAX_PROBLEMS);
  }
  int rc = sqlite3_str_errcode(k.pReport);
  char *zReport = sqlite3_str_finish(k.pReport);
  if( k.rc!=SQLITE_OK ) rc = k.rc;
  if( rc!=SQLITE_OK ){
    sqlite3_free(zReport);
    return rc;
  }
  *pzReport = zReport;              /* NULL when there is no problem */
  return SQLITE_OK;
}

/* ch_check([ring]) */
void check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  char *zSchema = NULL, *zName = NULL, *zErr = NULL, *zReport = NULL;
  int rc = spec_ring_table(sqlite3_user_data(ctx), argc>0 ? argv[0] : NULL,
                           "ch_check", &zSchema, &zName, &zErr);
  if( rc==SQLITE_OK ){
    rc = check_ring(sqlite3_context_db_handle(ctx), zSchema, zName, 0,
                    &zReport);
  }
  if( rc==SQLITE_OK ){
    if( zReport ){
      sqlite3_result_text(ctx, zReport, -1, sqlite3_free);
    }else{
      sqlite3_result_text(ctx, "ok", -1, SQLITE_STATIC);
    }
  }else if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( zErr ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_result_error_code(ctx, rc);
  }else{
    char *zMsg = sqlite3_mprintf("ch_check: %s", sqlite3_errmsg(
                                 sqlite3_context_db_handle(ctx)));
    chash_result_error(ctx, zMsg);
    sqlite3_free(zMsg);
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zErr);
  sqlite3_free(zSchema);
  sqlite3_free(zName);
}

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
**   the ring   what the algorithm says of the last version, built, that
**              a user should hear of though the ring allows it (a live
**              Redis map's slots no master serves); ch_check only, as
**              it is no damage for PRAGMA integrity_check to report
**
** It never stops at the first problem: each line names the shadow table
** (or the version) and what is wrong. The cost is a read of the three
** tables, once, and one build: the replay keeps what the core's checks of
** a build look at (names, duplicates, weights, the limits) as counts that
** each row updates, and checks each version's commit rule from what the
** version changed, as a commit does; a version is built only where the
** counts say it fails (for the build's own message), and the last one
** always. So it grows with the history plus the nodes, not versions x
** nodes (but for an algorithm whose commit rule reads every node, ketama
** and hashring with vnodes under 8). PRAGMA quick_check skips the versions.
**
** Longer than most files here (about 1,000 lines) because it is one list of
** checks, table by table, each a few lines; split, a reader would have to
** hold three files to see what "ok" promises.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
  int bGaps;               /* report what the algorithm says of the ring */
} check_state;

/* A node of the history replay: its id, name and weight as of the row
** replayed last, whether it has been removed, and what the version being
** replayed needs to know of it. */
typedef struct check_node {
  int64_t id;
  char *zName;
  int nName;
  double weight;
  int bGone;
  int64_t iAdded;          /* the version that added it */
  int64_t iChanged;        /* the last version that changed it */
  char *zWas;              /* its name before that version's first change */
  int bBadName;            /* its name fails the core's check */
  int bBadWeight;          /* its weight is not one the algorithm takes */
  int bBadColumn;          /* a column value is not one it takes */
  char *azColumn[RING_MAX_COLUMNS];   /* its column values, NULL: none */
  int anColumn[RING_MAX_COLUMNS];
  int64_t nPoints;         /* its points, at most RING_MAX_POINTS+1 */
  int64_t iPrev, iNext;    /* the nodes in the ring before and after it */
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
  [CHECK_FORMAT] = { "format", CHASH_FORMAT, CHASH_FORMAT_COLUMNS,
                     "1 or 2 (the formats this chash reads)" },
  [CHECK_EPOCH] = { "epoch", 0, INT64_MAX, "a non-negative integer" },
  [CHECK_STAMP] = { "stamp", INT64_MIN, INT64_MAX, "an integer" },
  [CHECK_CREATED] = { "created", INT64_MIN, INT64_MAX, "an integer" },
  [CHECK_NEXTID] = { "nextid", 1, INT64_MAX, "a positive integer" },
  [CHECK_POINTS] = { "points", 0, RING_MAX_POINTS,
                     "an integer from 0 to the points limit" },
};
#define CHECK_N_COUNTERS \
  ((int)(sizeof(check_counters)/sizeof(check_counters[0])))

static void check_config(check_state *k){
  sqlite3_stmt *pStmt = check_prepare(k, "config",
      "SELECT key, value, typeof(value) FROM \"%w\".\"%w_config\"",
      k->zSchema, k->zName);
  if( pStmt==NULL ) return;
  unsigned seen = 0;
  options_given given;
  memset(&given, 0, sizeof(given));
  int bOptionsOk = 1, bFormatOk = 0;
  int64_t format = 0;
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
        case CHECK_FORMAT: bFormatOk = 1; format = v; break;
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
    }else if( options_set(&k->config, &given, zKey, zValue, zMsg,
                          sizeof(zMsg)) ){
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
  for(int i=0; options_required[i]; i++){
    if( !options_given_has(&given, options_required[i]) ){
      check_problem(k, "%s_config lacks the option %s", k->zName,
                    options_required[i]);
      bOptionsOk = 0;
    }
  }
  char zMsg[512];
  if( bOptionsOk && options_load(&k->config, &given, zMsg, sizeof(zMsg)) ){
    check_problem(k, "%s_config: %s", k->zName, zMsg);
    bOptionsOk = 0;
  }
  if( bOptionsOk ){
    /* Every format-1 option is stored, those that do not apply with their
    ** default (the seed 0 too): check the fit of those that apply, as if
    ** given. */
    unsigned set = given.set & (OPTION_ALGORITHM | OPTION_HASH
                                | k->config.algo->options);
    if( k->config.seed!=0 ) set |= OPTION_SEED;
    if( options_check(&k->config, set, zMsg, sizeof(zMsg)) ){
      check_problem(k, "%s_config: %s", k->zName, zMsg);
      bOptionsOk = 0;
    }
  }
  if( bOptionsOk && bFormatOk && !store_format_fits(&k->config, format) ){
    check_problem(k, "%s_config: format is integer '%lld', not %d (the "
                  "format this chash reads%s%s%s)", k->zName,
                  (long long)format, store_format(&k->config),
                  ring_columns(&k->config) ? " for algorithm " : "",
                  ring_columns(&k->config) ? k->config.algo->name : "",
                  ring_columns(&k->config) ? ", whose nodes have columns" : "");
    bFormatOk = 0;
  }
  k->bConfig = bOptionsOk && bFormatOk;
}

/* ------------------------------------------------------------- %_nodes */

/* Points a node of weight w counts against the limit (as store.c counts
** them: at least one per node). */
static int64_t check_limit_points(const ring_config *cfg, double w){
  int64_t p = ring_point_budget(cfg, w);
  return p<1 ? 1 : p;
}

/* A node's weight problem under cfg, or NULL. eType: the column's type. */
static const char *check_node_weight(const ring_config *cfg, int eType,
                                     double w){
  if( (eType!=SQLITE_FLOAT && eType!=SQLITE_INTEGER)
   || ring_point_budget(cfg, w)<0 ){
    return "weight must be a positive finite number at most 1e+09";
  }
  return ring_check_weight(cfg, w);
}

/* The column values of row pStmt, from column iFirst on, into az and an
** (a value of another type than text as if NULL, which *pbType tells);
** 0, or SQLITE_NOMEM. */
static int check_row_columns(check_state *k, sqlite3_stmt *pStmt, int iFirst,
                             const char **az, int *an, int *pbType){
  unsigned n = k->bConfig ? ring_columns(&k->config) : 0;
  *pbType = 0;
  for(unsigned i=0; i<RING_MAX_COLUMNS; i++){
    az[i] = NULL;
    an[i] = 0;
    if( i>=n ) continue;
    int eType = sqlite3_column_type(pStmt, iFirst+(int)i);
    if( eType==SQLITE_NULL ) continue;
    if( eType!=SQLITE_TEXT ){ *pbType = 1; continue; }
    az[i] = (const char *)sqlite3_column_text(pStmt, iFirst+(int)i);
    an[i] = sqlite3_column_bytes(pStmt, iFirst+(int)i);
    if( az[i]==NULL ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* What the algorithm says of node zNode's column values az (an), into
** zMsg: 0 if it takes them. */
static int check_node_columns(check_state *k, const char *const *az,
                              const int *an, const char *zNode, int nNode,
                              char *zMsg, size_t nMsg){
  unsigned n = ring_columns(&k->config);
  for(unsigned i=0; i<n; i++){
    if( ring_check_column(&k->config, i, az[i], (size_t)an[i], zNode,
                          (size_t)nNode, zMsg, nMsg) ){
      return 1;
    }
  }
  return 0;
}

static void check_nodes(check_state *k){
  char *zColumns = store_column_sql(&k->config, STORE_COLUMNS_NAMES);
  if( zColumns==NULL ){ k->rc = SQLITE_NOMEM; return; }
  sqlite3_stmt *pStmt = check_prepare(k, "nodes",
      "SELECT id, node, weight%s FROM \"%w\".\"%w_nodes\" ORDER BY id",
      k->bConfig ? zColumns : "", k->zSchema, k->zName);
  sqlite3_free(zColumns);
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
    const char *az[RING_MAX_COLUMNS];
    int an[RING_MAX_COLUMNS], bType;
    char zMsg[600];
    if( check_row_columns(k, pStmt, 3, az, an, &bType) ){
      rc = SQLITE_NOMEM;
      break;
    }
    if( bType ){
      check_problem(k, "%s_nodes: node %.*Q has a column value that is not "
                    "text", k->zName, nByte, zNode);
    }else if( k->bConfig
           && check_node_columns(k, az, an, zNode, nByte, zMsg, sizeof(zMsg)) ){
      check_problem(k, "%s_nodes: %s", k->zName, zMsg);
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

/* How many of the nodes in the ring have each name (names ever seen). */
typedef struct check_name {
  char *z;
  int n;
  int64_t nLive;
} check_name;

/*
** The replay of the history. The nodes by id (ids are added in ascending
** order), those in the ring linked in id order; what the ring's nodes
** would fail of the core's checks, kept up to date row by row; and the
** nodes of the last version that the version being replayed removed.
** A version is then checked from what it changed, and built only where
** those counts say the build fails (for its message) and at the end.
*/
typedef struct check_replay {
  check_node *aNode;
  int64_t n, nAlloc;
  int64_t iFirst, iLast;        /* the ring's first and last node, or -1 */
  int bBuild;                   /* check every version */
  int bBuildFailed;             /* a version did not build: stop checking */
  /* The ring as replayed so far: */
  int64_t nLive;                /* nodes */
  double weightSum;
  int64_t nBadName, nBadWeight; /* nodes with a bad name, a bad weight, */
  int64_t nBadColumn;           /* a bad column value */
  int64_t nDuplicate;           /* nodes named as another one is */
  int64_t nPoints;              /* their points (core limit) */
  check_name *aName;            /* open addressing, by name */
  int64_t nName, nNameAlloc;    /* nNameAlloc: 0 or a power of 2 */
  ring_input *aGone;            /* nodes of the last version removed since */
  int64_t nGone, nGoneAlloc;
  ring_input *aList;            /* the ring's nodes, for a build */
  int64_t nListAlloc;
} check_replay;

static void check_replay_free(check_replay *p){
  for(int64_t i=0; i<p->n; i++){
    sqlite3_free(p->aNode[i].zName);
    sqlite3_free(p->aNode[i].zWas);
    for(int c=0; c<RING_MAX_COLUMNS; c++) sqlite3_free(p->aNode[i].azColumn[c]);
  }
  sqlite3_free(p->aNode);
  for(int64_t i=0; i<p->nNameAlloc; i++) sqlite3_free(p->aName[i].z);
  sqlite3_free(p->aName);
  sqlite3_free(p->aGone);
  sqlite3_free(p->aList);
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

/* The slot of name z (n bytes) in p->aName: its entry, or the empty slot
** where it goes. */
static check_name *check_name_slot(check_replay *p, const char *z, int n){
  uint64_t mask = (uint64_t)p->nNameAlloc - 1;
  uint64_t h = hash_bytes(HASH_XXH3, 0, z, (size_t)n) & mask;
  for(;;){
    check_name *e = &p->aName[h];
    if( e->z==NULL || (e->n==n && memcmp(e->z, z, n)==0) ) return e;
    h = (h+1) & mask;
  }
}

/* One more (d=1) or one fewer (d=-1) node in the ring is named z. */
static void check_name_count(check_state *k, check_replay *p, const char *z,
                             int n, int d){
  if( d>0 && (p->nName+1)*2>p->nNameAlloc ){
    check_name *aOld = p->aName;
    int64_t nOld = p->nNameAlloc;
    int64_t nNew = nOld ? nOld*2 : 64;
    p->aName = sqlite3_malloc64(sizeof(check_name)*nNew);
    if( p->aName==NULL ){
      p->aName = aOld;
      k->rc = SQLITE_NOMEM;
      return;
    }
    memset(p->aName, 0, sizeof(check_name)*nNew);
    p->nNameAlloc = nNew;
    for(int64_t i=0; i<nOld; i++){
      if( aOld[i].z ) *check_name_slot(p, aOld[i].z, aOld[i].n) = aOld[i];
    }
    sqlite3_free(aOld);
  }
  check_name *e = check_name_slot(p, z, n);
  if( e->z==NULL ){
    if( d<0 ) return;
    e->z = sqlite3_malloc64(n ? n : 1);
    if( e->z==NULL ){ k->rc = SQLITE_NOMEM; return; }
    memcpy(e->z, z, n);
    e->n = n;
    p->nName++;
  }
  if( d>0 ){
    if( e->nLive>0 ) p->nDuplicate++;
    e->nLive++;
  }else{
    if( e->nLive>1 ) p->nDuplicate--;
    e->nLive--;
  }
}

/* Node x joins the ring's counts (d=1) or leaves them (d=-1). */
static void check_node_count(check_state *k, check_replay *p, check_node *x,
                             int d){
  if( !p->bBuild ) return;
  p->nLive += d;
  p->weightSum += d * x->weight;
  p->nBadName += d * x->bBadName;
  p->nBadWeight += d * x->bBadWeight;
  p->nBadColumn += d * x->bBadColumn;
  p->nPoints += d * x->nPoints;
  check_name_count(k, p, x->zName, x->nName, d);
}

/* x's name, weight and column values from now on (zName: a copy, which
** x takes; az, an: the row's, copied). */
static void check_node_set(check_state *k, check_node *x, char *zName,
                           int nName, double w, const char *const *az,
                           const int *an){
  x->zName = zName;
  x->nName = nName;
  x->weight = w;
  for(int c=0; c<RING_MAX_COLUMNS; c++){
    sqlite3_free(x->azColumn[c]);
    x->azColumn[c] = az[c] ? sqlite3_mprintf("%.*s", an[c], az[c]) : NULL;
    x->anColumn[c] = an[c];
    if( az[c] && x->azColumn[c]==NULL ) k->rc = SQLITE_NOMEM;
  }
  char zMsg[600];
  x->bBadColumn = check_node_columns(k, (const char *const *)x->azColumn,
                                     x->anColumn, zName, nName, zMsg,
                                     sizeof(zMsg));
  x->bBadName = ring_check_name(zName, nName)!=NULL;
  int64_t pts = ring_point_budget(&k->config, w);
  x->bBadWeight = pts<0 || ring_check_weight(&k->config, w)!=NULL;
  x->nPoints = x->bBadWeight ? 0 : pts>RING_MAX_POINTS ? RING_MAX_POINTS+1 : pts;
}

/* The ring's nodes in join order, into p->aList; their number. */
static uint32_t check_replay_list(check_state *k, check_replay *p){
  if( p->nLive>p->nListAlloc ){
    sqlite3_free(p->aList);
    p->nListAlloc = p->nLive;
    p->aList = sqlite3_malloc64(sizeof(ring_input)*p->nListAlloc);
    if( p->aList==NULL ){
      p->nListAlloc = 0;
      k->rc = SQLITE_NOMEM;
      return 0;
    }
  }
  uint32_t n = 0;
  for(int64_t i=p->iFirst; i>=0; i=p->aNode[i].iNext){
    const check_node *x = &p->aNode[i];
    ring_input *in = &p->aList[n++];
    memset(in, 0, sizeof(*in));
    in->name = x->zName;
    in->name_len = (uint32_t)x->nName;
    in->weight = x->weight;
    in->id = x->id;
    for(int c=0; c<RING_MAX_COLUMNS; c++){
      in->columns[c] = x->azColumn[c];
      in->column_len[c] = (uint32_t)x->anColumn[c];
    }
  }
  return n;
}

static int check_gone_compare(const void *pa, const void *pb){
  const ring_input *a = pa, *b = pb;
  return (a->id>b->id) - (a->id<b->id);
}

/*
** Version iVersion ends here. Build it if the counts say a core check
** fails (the build's message says which), and at the last version
** (bLast); if it was committed, check the algorithm's commit rule against
** the last version, from what this one changed. Either failing is a
** problem, and stops the checks of later versions.
*/
static void check_replay_version(check_state *k, check_replay *p,
                                 int64_t iVersion, int bLast){
  int64_t nGone = p->nGone;
  p->nGone = 0;                 /* for the next version */
  if( !p->bBuild || p->bBuildFailed || k->rc ) return;
  char zMsg[512];
  int rcRing = RING_OK;
  if( bLast || p->nLive>RING_MAX_NODES || p->nBadName || p->nBadWeight
   || p->nBadColumn || p->nDuplicate || p->nPoints>RING_MAX_POINTS
   || ring_check_count(&k->config, (uint64_t)p->nLive, zMsg, sizeof(zMsg)) ){
    uint32_t nIn = check_replay_list(k, p);
    if( k->rc ) return;
    ring *r = NULL;
    rcRing = ring_build(&k->config, p->aList, nIn, &r, zMsg, sizeof(zMsg));
    char zGaps[1024];
    if( rcRing==RING_OK && bLast && k->bGaps
     && ring_describe_gaps(r, zGaps, sizeof(zGaps)) ){
      check_problem(k, "version %lld: %s", (long long)iVersion, zGaps);
    }
    ring_release(r);
  }
  if( rcRing==RING_OK && iVersion<=k->epoch ){
    ring_commit c;
    memset(&c, 0, sizeof(c));
    if( nGone>1 ){
      qsort(p->aGone, (size_t)nGone, sizeof(ring_input), check_gone_compare);
    }
    c.gone = p->aGone;
    c.n_gone = (uint32_t)nGone;
    /* The nodes added in this version are the last ones. */
    int64_t i = p->iLast;
    while( i>=0 && p->aNode[i].iAdded==iVersion ) i = p->aNode[i].iPrev;
    ring_input kept;
    memset(&kept, 0, sizeof(kept));
    if( i>=0 ){
      kept.name = p->aNode[i].zName;
      kept.name_len = (uint32_t)p->aNode[i].nName;
      kept.weight = p->aNode[i].weight;
      kept.id = p->aNode[i].id;
      c.last_kept = &kept;
    }
    c.n_nodes = (uint32_t)p->nLive;
    c.weight_sum = p->weightSum;
    if( ring_commit_needs(&k->config) & RING_COMMIT_NODES ){
      c.n_nodes = check_replay_list(k, p);
      if( k->rc ) return;
      c.nodes = p->aList;
    }
    rcRing = ring_check_commit(&k->config, &c, zMsg, sizeof(zMsg));
  }
  if( rcRing==RING_NOMEM ){
    k->rc = SQLITE_NOMEM;
  }else if( rcRing!=RING_OK ){
    check_problem(k, "version %lld does not build: %s", (long long)iVersion,
                  zMsg);
    p->bBuildFailed = 1;
  }
}

/* x, a node of the last version, leaves the ring in version iVersion:
** one for the commit rule's gone nodes, named as it was then. */
static void check_replay_gone(check_state *k, check_replay *p, check_node *x,
                              int64_t iVersion){
  if( !p->bBuild || x->iAdded>=iVersion ) return;
  if( p->nGone==p->nGoneAlloc ){
    int64_t nNew = p->nGoneAlloc ? p->nGoneAlloc*2 : 16;
    ring_input *aNew = sqlite3_realloc64(p->aGone, sizeof(ring_input)*nNew);
    if( aNew==NULL ){ k->rc = SQLITE_NOMEM; return; }
    p->aGone = aNew;
    p->nGoneAlloc = nNew;
  }
  ring_input *g = &p->aGone[p->nGone++];
  memset(g, 0, sizeof(*g));
  int bChanged = x->iChanged==iVersion;
  g->name = bChanged ? x->zWas : x->zName;
  g->name_len = (uint32_t)strlen(g->name);
  g->weight = x->weight;
  g->id = x->id;
}

/* One history row (in seq order, of version iVersion) applied to the
** replay. */
static void check_replay_row(check_state *k, check_replay *p, int64_t seq,
                       int64_t iVersion, const char *zOp, int64_t id,
                       const char *zNode, int nNode, double w,
                       const char *zOld, const char *const *azColumn,
                       const int *anColumn){
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
    x = &p->aNode[p->n];
    memset(x, 0, sizeof(*x));
    x->id = id;
    x->iAdded = x->iChanged = iVersion;
    x->iPrev = p->iLast;
    x->iNext = -1;
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
    check_node_count(k, p, x, -1);
    check_replay_gone(k, p, x, iVersion);
    x->bGone = 1;
    if( x->iPrev>=0 ) p->aNode[x->iPrev].iNext = x->iNext;
    else p->iFirst = x->iNext;
    if( x->iNext>=0 ) p->aNode[x->iNext].iPrev = x->iPrev;
    else p->iLast = x->iPrev;
    return;
  }
  /* add, reweight, rename, update: the node's name, weight and column
  ** values from now on. */
  char *zCopy = sqlite3_malloc64(nNode+1);
  if( zCopy==NULL ){ k->rc = SQLITE_NOMEM; return; }
  memcpy(zCopy, zNode, nNode);
  zCopy[nNode] = 0;
  if( x->zName ){
    check_node_count(k, p, x, -1);
    if( x->iChanged!=iVersion ){
      /* Its first change in this version: keep the name it had before. */
      sqlite3_free(x->zWas);
      x->zWas = x->zName;
      x->iChanged = iVersion;
    }else{
      sqlite3_free(x->zName);
    }
  }else{
    /* A new node: into the ring, last. */
    int64_t i = p->n++;
    if( p->iLast>=0 ) p->aNode[p->iLast].iNext = i;
    else p->iFirst = i;
    p->iLast = i;
  }
  check_node_set(k, x, zCopy, nNode, w, azColumn, anColumn);
  check_node_count(k, p, x, 1);
}

/* The ops of %_history (update: a change of column values, only for
** algorithms with columns). */
static int check_op_known(check_state *k, const char *zOp){
  return strcmp(zOp, "add")==0 || strcmp(zOp, "remove")==0
      || strcmp(zOp, "reweight")==0 || strcmp(zOp, "rename")==0
      || (ring_columns(&k->config) && strcmp(zOp, "update")==0);
}

/* Read %_history in seq order: each row's fields, the epochs, and the
** replay (p), building each version where it ends. */
static void check_history(check_state *k, check_replay *p){
  const char *zT = k->zName;
  char *zColumns = store_column_sql(&k->config, STORE_COLUMNS_NAMES);
  if( zColumns==NULL ){ k->rc = SQLITE_NOMEM; return; }
  sqlite3_stmt *pStmt = check_prepare(k, "history",
      "SELECT seq, epoch, op, id, node, weight, old%s FROM"
      " \"%w\".\"%w_history\" ORDER BY seq",
      k->bConfig ? zColumns : "", k->zSchema, zT);
  sqlite3_free(zColumns);
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
      if( lastEpoch>0 ) check_replay_version(k, p, lastEpoch, 0);
      lastEpoch = epoch;
    }
    if( zOp==NULL || !check_op_known(k, zOp) ){
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
    const char *az[RING_MAX_COLUMNS];
    int an[RING_MAX_COLUMNS], bType;
    if( check_row_columns(k, pStmt, 7, az, an, &bType) ){
      rc = SQLITE_NOMEM;
      break;
    }
    if( bType ){
      check_problem(k, "%s_history: seq %lld (%s): a column value is not "
                    "text", zT, (long long)seq, zOp);
      p->bBuild = 0;
      continue;
    }
    if( strcmp(zOp, "add")==0 && id>maxAdd ) maxAdd = id;
    check_replay_row(k, p, seq, epoch, zOp, id, zNode, nNode, w, zOld, az,
                     an);
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
  if( k->rc ) return;
  k->bHistory = 1;
  if( lastEpoch>0 ) check_replay_version(k, p, lastEpoch, 1);
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
/* Do x's column values differ from az (an)? */
static int check_columns_differ(const check_node *x, const char *const *az,
                                const int *an){
  for(int c=0; c<RING_MAX_COLUMNS; c++){
    if( (az[c]==NULL)!=(x->azColumn[c]==NULL) ) return 1;
    if( az[c] && (an[c]!=x->anColumn[c]
                  || memcmp(az[c], x->azColumn[c], an[c])!=0) ){
      return 1;
    }
  }
  return 0;
}

static void check_replay_matches(check_state *k, check_replay *p){
  const char *zT = k->zName;
  char *zColumns = store_column_sql(&k->config, STORE_COLUMNS_NAMES);
  if( zColumns==NULL ){ k->rc = SQLITE_NOMEM; return; }
  sqlite3_stmt *pStmt = check_prepare(k, "nodes",
      "SELECT id, node, weight%s FROM \"%w\".\"%w_nodes\" ORDER BY id",
      k->bConfig ? zColumns : "", k->zSchema, zT);
  sqlite3_free(zColumns);
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
      }else{
        const char *az[RING_MAX_COLUMNS];
        int an[RING_MAX_COLUMNS], bType;
        if( check_row_columns(k, pStmt, 3, az, an, &bType) ){
          rc = SQLITE_NOMEM;
          break;
        }
        if( !bType && check_columns_differ(x, az, an) ){
          check_problem(k, "%s_nodes: node %Q has other column values than "
                        "the history gives it", zT, x->zName);
        }
      }
      i++;
    }
    rc = sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  check_done(k, rc);
}

int check_ring(sqlite3 *db, const char *zSchema, const char *zName,
               int bQuick, int bGaps, char **pzReport){
  check_state k;
  check_replay replay;
  memset(&k, 0, sizeof(k));
  memset(&replay, 0, sizeof(replay));
  replay.iFirst = replay.iLast = -1;
  *pzReport = NULL;
  k.db = db;
  k.zSchema = zSchema;
  k.zName = zName;
  k.bGaps = bGaps;
  k.pReport = sqlite3_str_new(db);
  /* Shadow tables that are not the ring's own kind are not read at all:
  ** a view or a trigger there runs SQL the file chose. */
  char *zShape = NULL;
  k.rc = store_check_tables(db, zSchema, zName, 1, &zShape);
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
    rc = check_ring(sqlite3_context_db_handle(ctx), zSchema, zName, 0, 1,
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

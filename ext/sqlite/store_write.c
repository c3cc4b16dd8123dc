/*
** store_write.c: the write handle of a ring table's shadow tables (the
** format is at the top of store.c). A ring_store holds the table's
** prepared statements; every change is ordinary SQL on the same
** connection, logged in %_history with the next version's epoch, and
** checked against the limits and the algorithm's rules as it is written
** (at the statement) or when the transaction commits. A statement's text
** has marks where the algorithm's columns go (store_sql): @C their names,
** @P their parameters, @S their assignments; nothing for most algorithms.
*/

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_layer.h"

enum {
  STMT_FIND_NAME,          /* id, weight of the node named ?1 */
  STMT_FIND_ID,            /* node, weight, columns of node id ?1 */
  STMT_COUNTERS,           /* epoch, nextid, points */
  STMT_INSERT_NODE,
  STMT_DELETE_NODE,
  STMT_UPDATE_NODE,
  STMT_HISTORY,            /* log one change */
  STMT_BUMP,               /* points += ?1, nextid += ?2, stamp = ?3 */
  STMT_PENDING,            /* created, committed epoch, last logged epoch */
  STMT_COMMIT_EPOCH,       /* pending changes become the next version */
  STMT_LAST_NODE,          /* id, node of the last node; count of nodes */
  STMT_CHANGES,            /* the history, newest change first */
  STMT_LAST_BELOW,         /* id, node of the last node with an id below ?1 */
  STMT_TOTALS,             /* count of nodes, sum of their weights */
  STMT_COUNT
};

static const char *const azStmtSql[STMT_COUNT] = {
  [STMT_FIND_NAME] = "SELECT id, weight FROM \"%w\".\"%w_nodes\" WHERE node=?1",
  [STMT_FIND_ID] = "SELECT node, weight@C FROM \"%w\".\"%w_nodes\""
                   " WHERE id=?1",
  [STMT_COUNTERS] = "SELECT key, value FROM \"%w\".\"%w_config\""
                    " WHERE key IN ('epoch', 'nextid', 'points')",
  [STMT_INSERT_NODE] = "INSERT INTO \"%w\".\"%w_nodes\"(id, node, weight@C)"
                       " VALUES(?1, ?2, ?3@P)",
  [STMT_DELETE_NODE] = "DELETE FROM \"%w\".\"%w_nodes\" WHERE id=?1",
  [STMT_UPDATE_NODE] = "UPDATE \"%w\".\"%w_nodes\" SET node=?2, weight=?3@S"
                       " WHERE id=?1",
  [STMT_HISTORY] = "INSERT INTO \"%w\".\"%w_history\"(epoch, op, id, node,"
                   " weight, old@C) VALUES(?1, ?2, ?3, ?4, ?5, ?6@P)",
  [STMT_BUMP] = "UPDATE \"%w\".\"%w_config\" SET value = CASE key"
                " WHEN 'points' THEN value+?1 WHEN 'nextid' THEN value+?2"
                " ELSE ?3 END WHERE key IN ('points', 'nextid', 'stamp')",
  [STMT_PENDING] = "SELECT (SELECT value FROM \"%w\".\"%w_config\""
                   " WHERE key='created'), (SELECT value FROM"
                   " \"%w\".\"%w_config\" WHERE key='epoch'), (SELECT epoch"
                   " FROM \"%w\".\"%w_history\" ORDER BY seq DESC LIMIT 1)",
  [STMT_COMMIT_EPOCH] = "UPDATE \"%w\".\"%w_config\" SET value=value+1"
                        " WHERE key='epoch'",
  [STMT_LAST_NODE] = "SELECT id, node, (SELECT count(*) FROM \"%w\".\"%w_nodes\")"
                     " FROM \"%w\".\"%w_nodes\" ORDER BY id DESC LIMIT 1",
  [STMT_CHANGES] = "SELECT epoch, op, id, node, old FROM \"%w\".\"%w_history\""
                   " ORDER BY seq DESC",
  [STMT_LAST_BELOW] = "SELECT id, node FROM \"%w\".\"%w_nodes\" WHERE id<?1"
                      " ORDER BY id DESC LIMIT 1",
  [STMT_TOTALS] = "SELECT count(*), total(weight) FROM \"%w\".\"%w_nodes\"",
};

struct ring_store {
  sqlite3 *db;
  char *zSchema;
  char *zName;
  chash_txn *txn;          /* the connection's transaction */
  store_info info;         /* as read at open; counters re-read per change */
  unsigned nColumns;       /* the algorithm's columns */
  char *azColumnSql[3];    /* what @C, @P and @S stand for (store_sql) */
  sqlite3_stmt *aStmt[STMT_COUNT];
  char *zErr;              /* message of the last failure, or NULL */
};

int store_open(sqlite3 *db, const char *zSchema, const char *zName,
               chash_txn *txn, ring_store **ppStore, char **pzErr){
  ring_store *st = sqlite3_malloc64(sizeof(*st));
  *ppStore = NULL;
  if( st==NULL ) return SQLITE_NOMEM;
  memset(st, 0, sizeof(*st));
  st->db = db;
  st->txn = txn;
  st->zSchema = sqlite3_mprintf("%s", zSchema);
  st->zName = sqlite3_mprintf("%s", zName);
  if( st->zSchema==NULL || st->zName==NULL ){
    store_close(st);
    return SQLITE_NOMEM;
  }
  /* A write runs under the triggers of the shadow tables: a trigger there
  ** is corruption too (store_check_tables). */
  int rc = store_read_info(db, zSchema, zName, &st->info, pzErr);
  if( rc==SQLITE_OK ) rc = store_check_corrupt(db, zSchema, zName, 1, pzErr);
  if( rc!=SQLITE_OK ){
    store_close(st);
    return rc;
  }
  static const store_columns_as aAs[3] = {
    STORE_COLUMNS_NAMES, STORE_COLUMNS_PARAMS, STORE_COLUMNS_SETS
  };
  st->nColumns = ring_columns(&st->info.config);
  for(int i=0; i<3; i++){
    st->azColumnSql[i] = store_column_sql(&st->info.config, aAs[i]);
    if( st->azColumnSql[i]==NULL ){
      store_close(st);
      return SQLITE_NOMEM;
    }
  }
  *ppStore = st;
  return SQLITE_OK;
}

void store_reset_statements(ring_store *st){
  for(int i=0; i<STMT_COUNT; i++){
    sqlite3_finalize(st->aStmt[i]);
    st->aStmt[i] = NULL;
  }
}

void store_close(ring_store *st){
  if( st==NULL ) return;
  store_reset_statements(st);
  sqlite3_free(st->zSchema);
  sqlite3_free(st->zName);
  sqlite3_free(st->zErr);
  for(int i=0; i<3; i++) sqlite3_free(st->azColumnSql[i]);
  sqlite3_free(st);
}

const store_info *store_info_of(ring_store *st){
  return &st->info;
}

const char *store_errmsg(ring_store *st){
  return st->zErr;
}

const char *store_schema(ring_store *st){
  return st->zSchema;
}

const char *store_name(ring_store *st){
  return st->zName;
}

static int store_fail(ring_store *st, int rc, const char *zFmt, ...){
  sqlite3_free(st->zErr);
  va_list ap;
  va_start(ap, zFmt);
  st->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return rc;
}

/* A statement on the shadow tables did not prepare: a table or column is
** missing, so the ring is corrupt (or SQLite is out of memory, or busy). */
static int store_prepare_fail(ring_store *st, int rc){
  if( rc==SQLITE_ERROR ){
    return store_fail(st, SQLITE_CORRUPT_VTAB, "ring '%q.%q' is corrupt: %s",
                      st->zSchema, st->zName, sqlite3_errmsg(st->db));
  }
  return store_fail(st, rc, "%s: %s", st->zName, sqlite3_errmsg(st->db));
}

/* Statement text zSql with its column marks filled in; NULL: no memory. */
static char *store_sql(ring_store *st, const char *zSql){
  sqlite3_str *s = sqlite3_str_new(NULL);
  for(const char *z=zSql; *z; z++){
    const char *zMark = z[0]=='@' ? strchr("CPS", z[1]) : NULL;
    if( zMark && z[1] ){
      sqlite3_str_appendall(s, st->azColumnSql[zMark - "CPS"]);
      z++;
    }else{
      sqlite3_str_appendchar(s, 1, *z);
    }
  }
  return sqlite3_str_finish(s);
}

/* The cached statement i, prepared on first use and reset for reuse. */
static int store_stmt(ring_store *st, int i, sqlite3_stmt **ppStmt){
  if( st->aStmt[i]==NULL ){
    char *zSql = store_sql(st, azStmtSql[i]);
    if( zSql==NULL ) return SQLITE_NOMEM;
    int rc = chash_prepare_fmt(st->db, &st->aStmt[i], SQLITE_PREPARE_PERSISTENT,
                         zSql, st->zSchema, st->zName,
                         st->zSchema, st->zName, st->zSchema, st->zName,
                         st->zSchema, st->zName);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return store_prepare_fail(st, rc);
  }
  *ppStmt = st->aStmt[i];
  return SQLITE_OK;
}

/* Step a cached statement once; reset it unless it returned a row. */
static int store_step(ring_store *st, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ) return rc;
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_DONE ){
    rc = store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                    sqlite3_errmsg(st->db));
  }
  return rc;
}

int store_find_by_name(ring_store *st, const char *zNode, int nNode,
                       int64_t *pId, double *pWeight){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_FIND_NAME, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_text(pStmt, 1, zNode, nNode, SQLITE_STATIC);
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 0);
    *pWeight = sqlite3_column_double(pStmt, 1);
    sqlite3_reset(pStmt);
  }
  return rc;
}

/* A stored node as store_change and store_remove read it. */
typedef struct stored_node {
  char *zName;
  double weight;
  char *azColumn[RING_MAX_COLUMNS];     /* NULL: none */
  int anColumn[RING_MAX_COLUMNS];
} stored_node;

static void stored_node_clear(stored_node *x){
  sqlite3_free(x->zName);
  for(int i=0; i<RING_MAX_COLUMNS; i++) sqlite3_free(x->azColumn[i]);
  memset(x, 0, sizeof(*x));
}

/* Node id into *x (freed with stored_node_clear): SQLITE_ROW, SQLITE_DONE
** if there is none, or an error. */
static int read_node(ring_store *st, int64_t id, stored_node *x){
  sqlite3_stmt *pStmt = NULL;
  memset(x, 0, sizeof(*x));
  int rc = store_stmt(st, STMT_FIND_ID, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = store_step(st, pStmt);
  if( rc!=SQLITE_ROW ) return rc;
  x->zName = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
  x->weight = sqlite3_column_double(pStmt, 1);
  if( x->zName==NULL ) rc = SQLITE_NOMEM;
  for(unsigned i=0; i<st->nColumns && rc==SQLITE_ROW; i++){
    if( sqlite3_column_type(pStmt, 2+i)==SQLITE_NULL ) continue;
    const char *z = (const char *)sqlite3_column_text(pStmt, 2+i);
    x->anColumn[i] = sqlite3_column_bytes(pStmt, 2+i);
    x->azColumn[i] = z ? sqlite3_mprintf("%.*s", x->anColumn[i], z) : NULL;
    if( x->azColumn[i]==NULL ) rc = SQLITE_NOMEM;
  }
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_ROW ) stored_node_clear(x);
  return rc;
}

/* Bind the column values az (an, NULL: none) at their parameters. */
static void bind_columns(ring_store *st, sqlite3_stmt *pStmt,
                         const char *const *az, const int *an){
  for(unsigned i=0; i<st->nColumns; i++){
    if( az[i] ){
      sqlite3_bind_text(pStmt, STORE_COLUMN_PARAM+(int)i, az[i], an[i],
                        SQLITE_STATIC);
    }else{
      sqlite3_bind_null(pStmt, STORE_COLUMN_PARAM+(int)i);
    }
  }
}

/* node's column values as bind_columns takes them. */
static void input_columns(const ring_input *node, const char **az, int *an){
  for(int i=0; i<RING_MAX_COLUMNS; i++){
    az[i] = node->columns[i];
    an[i] = (int)node->column_len[i];
  }
}

/* Counters as they are now in this transaction. */
typedef struct store_counters {
  int64_t epoch, next_id, points;
} store_counters;

static int read_counters(ring_store *st, store_counters *c){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_COUNTERS, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  memset(c, 0, sizeof(*c));
  c->next_id = -1;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    int64_t v = sqlite3_column_int64(pStmt, 1);
    if( zKey==NULL ) continue;
    if( strcmp(zKey, "epoch")==0 ) c->epoch = v;
    else if( strcmp(zKey, "nextid")==0 ) c->next_id = v;
    else c->points = v;
  }
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_DONE ){
    return store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                      sqlite3_errmsg(st->db));
  }
  /* Out of range only if damaged; the arithmetic on them must not overflow. */
  if( c->next_id<1 || c->next_id==INT64_MAX || c->epoch<0
   || c->epoch==INT64_MAX || c->points<0 || c->points>RING_MAX_POINTS ){
    return store_fail(st, SQLITE_CORRUPT_VTAB, "ring '%q.%q' is corrupt: "
                      "%s_config has an epoch, nextid or points out of range",
                      st->zSchema, st->zName, st->zName);
  }
  return SQLITE_OK;
}

/* Counters before a change. The ring is noted for the commit, and a raise
** of its epoch by a COMMIT of this transaction that failed is taken back
** first (txn.c, rules 1 and 4). */
static int begin_change(ring_store *st, store_counters *c){
  int rc = txn_before_change(st->txn, st->db, st->zSchema, st->zName,
                             st->info.created);
  if( rc!=SQLITE_OK ){
    return store_fail(st, rc, "%s: %s", st->zName, sqlite3_errmsg(st->db));
  }
  return read_counters(st, c);
}

/* Points a node of weight w counts against RING_MAX_POINTS (modn: 1). */
static int64_t limit_points(ring_store *st, double w){
  int64_t p = ring_point_budget(&st->info.config, w);
  return p<1 ? 1 : p;
}

/* Check the ring would stay within the points limit after adding delta. */
static int check_points(ring_store *st, const store_counters *c, int64_t delta){
  if( c->points + delta > RING_MAX_POINTS ){
    return store_fail(st, SQLITE_ERROR, "%s: too many points: the ring "
                      "would have %lld; the limit is %d (vnodes x total "
                      "weight, at least one per node)", st->zName,
                      (long long)(c->points + delta), RING_MAX_POINTS);
  }
  return SQLITE_OK;
}

/* Log a change of node id: its name, weight and column values after it
** (for remove: before it). */
static int log_change(ring_store *st, const store_counters *c, const char *zOp,
                      int64_t id, const char *zNode, int nNode, double w,
                      const char *zOld, const char *const *azColumn,
                      const int *anColumn){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_HISTORY, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, c->epoch + 1);
  sqlite3_bind_text(pStmt, 2, zOp, -1, SQLITE_STATIC);
  sqlite3_bind_int64(pStmt, 3, id);
  sqlite3_bind_text(pStmt, 4, zNode, nNode, SQLITE_STATIC);
  sqlite3_bind_double(pStmt, 5, w);
  if( zOld ){
    sqlite3_bind_text(pStmt, 6, zOld, -1, SQLITE_STATIC);
  }else{
    sqlite3_bind_null(pStmt, 6);
  }
  bind_columns(st, pStmt, azColumn, anColumn);
  rc = store_step(st, pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

static int bump_counters(ring_store *st, int64_t dPoints, int64_t dNextId){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_BUMP, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, dPoints);
  sqlite3_bind_int64(pStmt, 2, dNextId);
  sqlite3_bind_int64(pStmt, 3, chash_random_int64());
  rc = store_step(st, pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/*
** The last node joined (its id; its name, valid until the next store call)
** and how many nodes there are. SQLITE_ROW, or SQLITE_DONE if there are
** none.
*/
static int last_node(ring_store *st, int64_t *pId, const char **pzNode,
                     int64_t *pCount){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_LAST_NODE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  *pCount = 0;
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 0);
    *pzNode = (const char *)sqlite3_column_text(pStmt, 1);
    *pCount = sqlite3_column_int64(pStmt, 2);
  }
  return rc;
}

/*
** Would the ring hold one more node? At most RING_MAX_NODES, and the
** algorithm may hold fewer (algo.h, check_count: a maglev table holds at
** most as many nodes as it has slots). Ids are never reused, so while the
** next id is at most RING_MAX_NODES there cannot be more nodes than that;
** only past it (or when the algorithm counts) are the nodes counted.
*/
static int check_add(ring_store *st, const store_counters *c){
  int bCounts = st->info.config.algo->check_count!=NULL;
  if( !bCounts && c->next_id<=RING_MAX_NODES ) return SQLITE_OK;
  int64_t id = 0, n = 0;
  const char *zLast;
  int rc = last_node(st, &id, &zLast, &n);
  if( rc==SQLITE_ROW ) sqlite3_reset(st->aStmt[STMT_LAST_NODE]);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return rc;
  if( n>=RING_MAX_NODES ){
    return store_fail(st, SQLITE_ERROR, "%s: too many nodes: a ring holds at "
                      "most %d", st->zName, RING_MAX_NODES);
  }
  char zMsg[512];
  if( ring_check_count(&st->info.config, (uint64_t)n+1, zMsg, sizeof(zMsg)) ){
    return store_fail(st, SQLITE_ERROR, "%s: %s", st->zName, zMsg);
  }
  return SQLITE_OK;
}

int store_add(ring_store *st, const ring_input *node, int64_t *pId){
  store_counters c;
  const char *az[RING_MAX_COLUMNS];
  int an[RING_MAX_COLUMNS];
  input_columns(node, az, an);
  int rc = begin_change(st, &c);
  if( rc==SQLITE_OK ) rc = check_add(st, &c);
  if( rc==SQLITE_OK ) rc = check_points(st, &c, limit_points(st, node->weight));
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_stmt *pStmt = NULL;
  rc = store_stmt(st, STMT_INSERT_NODE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, c.next_id);
  sqlite3_bind_text(pStmt, 2, node->name, (int)node->name_len, SQLITE_STATIC);
  sqlite3_bind_double(pStmt, 3, node->weight);
  bind_columns(st, pStmt, az, an);
  rc = store_step(st, pStmt);
  sqlite3_clear_bindings(pStmt);
  if( rc!=SQLITE_DONE ) return rc;
  rc = log_change(st, &c, "add", c.next_id, node->name, (int)node->name_len,
                  node->weight, NULL, az, an);
  if( rc==SQLITE_OK ) rc = bump_counters(st, limit_points(st, node->weight), 1);
  *pId = c.next_id;
  return rc;
}

int store_remove(ring_store *st, int64_t id){
  stored_node old;
  store_counters c;
  int rc = begin_change(st, &c);
  if( rc!=SQLITE_OK ) return rc;
  rc = read_node(st, id, &old);
  if( rc==SQLITE_DONE ) return SQLITE_OK;      /* already gone */
  if( rc!=SQLITE_ROW ) return rc;
  sqlite3_stmt *pStmt = NULL;
  rc = store_stmt(st, STMT_DELETE_NODE, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, id);
    rc = store_step(st, pStmt);
    if( rc==SQLITE_DONE ){
      rc = log_change(st, &c, "remove", id, old.zName, -1, old.weight, NULL,
                      (const char *const *)old.azColumn, old.anColumn);
    }
  }
  if( rc==SQLITE_OK ) rc = bump_counters(st, -limit_points(st, old.weight), 0);
  stored_node_clear(&old);
  return rc;
}

/* Do the column values az (an) differ from those of x? */
static int columns_differ(ring_store *st, const stored_node *x,
                          const char *const *az, const int *an){
  for(unsigned i=0; i<st->nColumns; i++){
    if( (az[i]==NULL)!=(x->azColumn[i]==NULL) ) return 1;
    if( az[i] && (an[i]!=x->anColumn[i]
                  || memcmp(az[i], x->azColumn[i], an[i])!=0) ){
      return 1;
    }
  }
  return 0;
}

int store_change(ring_store *st, int64_t id, const ring_input *node){
  stored_node old;
  store_counters c;
  const char *az[RING_MAX_COLUMNS];
  int an[RING_MAX_COLUMNS];
  input_columns(node, az, an);
  int rc = begin_change(st, &c);
  if( rc!=SQLITE_OK ) return rc;
  rc = read_node(st, id, &old);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc!=SQLITE_ROW ) return rc;
  const char *zNode = node->name;
  int nNode = (int)node->name_len;
  double weight = node->weight;
  int bRename = (int)strlen(old.zName)!=nNode
             || memcmp(old.zName, zNode, nNode)!=0;
  int bColumns = columns_differ(st, &old, az, an);
  int64_t dPoints = limit_points(st, weight) - limit_points(st, old.weight);
  if( !bRename && !bColumns && weight==old.weight ){
    stored_node_clear(&old);
    return SQLITE_OK;                       /* nothing changes */
  }
  rc = check_points(st, &c, dPoints);
  sqlite3_stmt *pStmt = NULL;
  if( rc==SQLITE_OK ) rc = store_stmt(st, STMT_UPDATE_NODE, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, id);
    sqlite3_bind_text(pStmt, 2, zNode, nNode, SQLITE_STATIC);
    sqlite3_bind_double(pStmt, 3, weight);
    bind_columns(st, pStmt, az, an);
    rc = store_step(st, pStmt);
    sqlite3_clear_bindings(pStmt);
    if( rc==SQLITE_DONE ){
      const char *zOp = bRename ? "rename" : bColumns ? "update" : "reweight";
      rc = log_change(st, &c, zOp, id, zNode, nNode, weight,
                      bRename ? old.zName : NULL, az, an);
    }
  }
  if( rc==SQLITE_OK ) rc = bump_counters(st, dPoints, 0);
  stored_node_clear(&old);
  return rc;
}

/*
** The algorithm's check of the change this transaction made (algo.h,
** check_commit; jump refuses to lose any but its last nodes, ketama a
** ring without a point), from what changed: this transaction's rows of
** %_history, the newest ones (the only ones with an epoch past the
** committed one), and a look-up or two in %_nodes. Its cost is the
** change's, whatever the length of the history; an algorithm that asks
** for every node (ring_commit_needs) reads %_nodes too.
*/

/* A node this transaction changed: its first and last change in it, and
** its name in the committed version (for those it had one). */
typedef struct txn_node {
  int64_t id;
  int64_t order;           /* 0 for the newest change, then 1, 2, ... */
  int bAdd, bRemove;       /* the change is an add; a remove */
  char *zName;             /* the name the node had before the change */
} txn_node;

typedef struct txn_changes {
  txn_node *a;
  int64_t n, nAlloc;
} txn_changes;

static void txn_changes_free(txn_changes *p){
  for(int64_t i=0; i<p->n; i++) sqlite3_free(p->a[i].zName);
  sqlite3_free(p->a);
}

/* By id, then oldest change first. */
static int txn_node_compare(const void *pa, const void *pb){
  const txn_node *a = pa, *b = pb;
  if( a->id!=b->id ) return a->id<b->id ? -1 : 1;
  return (a->order<b->order) - (a->order>b->order);
}

static int store_corrupt(ring_store *st, const char *zWhat){
  return store_fail(st, SQLITE_CORRUPT_VTAB, "ring '%q.%q' is corrupt: %s",
                    st->zSchema, st->zName, zWhat);
}

/* This transaction's changes (rows with an epoch past the committed one),
** newest first, into p. */
static int read_changes(ring_store *st, int64_t iCommitted, txn_changes *p){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_CHANGES, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    if( sqlite3_column_int64(pStmt, 0)<=iCommitted ) break;
    const char *zOp = (const char *)sqlite3_column_text(pStmt, 1);
    int bRename = zOp && strcmp(zOp, "rename")==0;
    /* The name before the change: a rename's old one, else the node's. */
    const char *zName = (const char *)sqlite3_column_text(pStmt, bRename ? 4 : 3);
    if( zOp==NULL || zName==NULL ){
      if( sqlite3_errcode(st->db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
    }
    if( zOp==NULL || (!bRename && strcmp(zOp, "add")!=0
                      && strcmp(zOp, "remove")!=0 && strcmp(zOp, "reweight")!=0
                      && (st->nColumns==0 || strcmp(zOp, "update")!=0)) ){
      char *zWhat = sqlite3_mprintf("%s_history has an unknown op: %s",
                                    st->zName, zOp ? zOp : "NULL");
      rc = zWhat ? store_corrupt(st, zWhat) : SQLITE_NOMEM;
      sqlite3_free(zWhat);
      break;
    }
    if( zName==NULL ){
      rc = store_corrupt(st, "a node has a NULL name or a weight that is not "
                             "a number");
      break;
    }
    if( p->n==p->nAlloc ){
      int64_t nNew = p->nAlloc ? p->nAlloc*2 : 16;
      txn_node *aNew = sqlite3_realloc64(p->a, sizeof(txn_node)*nNew);
      if( aNew==NULL ){ rc = SQLITE_NOMEM; break; }
      p->a = aNew;
      p->nAlloc = nNew;
    }
    txn_node *x = &p->a[p->n];
    x->id = sqlite3_column_int64(pStmt, 2);
    x->order = p->n;
    x->bAdd = strcmp(zOp, "add")==0;
    x->bRemove = strcmp(zOp, "remove")==0;
    x->zName = x->bAdd ? NULL : sqlite3_mprintf("%s", zName);
    if( !x->bAdd && x->zName==NULL ){ rc = SQLITE_NOMEM; break; }
    p->n++;
  }
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
    if( rc==SQLITE_NOMEM || rc==SQLITE_CORRUPT_VTAB ) return rc;
    return store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                      sqlite3_errmsg(st->db));
  }
  return SQLITE_OK;
}

/*
** Make c->gone from p (sorted by id, oldest change first): every node
** whose first change here is not its add and whose last is its remove,
** named as its first change says it was. Returns the lowest id added here,
** or INT64_MAX.
*/
static int64_t changes_gone(txn_changes *p, ring_input *aGone, ring_commit *c){
  int64_t firstAdd = INT64_MAX;
  for(int64_t i=0; i<p->n; ){
    int64_t j = i;
    while( j+1<p->n && p->a[j+1].id==p->a[i].id ) j++;
    const txn_node *pFirst = &p->a[i], *pLast = &p->a[j];
    if( pFirst->bAdd && pFirst->id<firstAdd ) firstAdd = pFirst->id;
    if( !pFirst->bAdd && pLast->bRemove ){
      ring_input *g = &aGone[c->n_gone++];
      memset(g, 0, sizeof(*g));
      g->name = pFirst->zName;
      g->name_len = (uint32_t)strlen(pFirst->zName);
      g->weight = 0.0;
      g->id = pFirst->id;
    }
    i = j+1;
  }
  c->gone = aGone;
  return firstAdd;
}

/* c->last_kept: the last node with an id below iBelow, the next id of the
** committed version (into *pKept, named in the statement, which stays
** open until the caller resets it). */
static int read_last_kept(ring_store *st, int64_t iBelow, ring_input *pKept,
                          ring_commit *c){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_LAST_BELOW, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, iBelow);
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    memset(pKept, 0, sizeof(*pKept));
    pKept->id = sqlite3_column_int64(pStmt, 0);
    pKept->name = (const char *)sqlite3_column_text(pStmt, 1);
    pKept->name_len = (uint32_t)sqlite3_column_bytes(pStmt, 1);
    pKept->weight = 0.0;
    if( pKept->name==NULL ){
      sqlite3_reset(pStmt);
      if( sqlite3_errcode(st->db)==SQLITE_NOMEM ) return SQLITE_NOMEM;
      return store_corrupt(st, "a node has a NULL name or a weight that is "
                               "not a number");
    }
    c->last_kept = pKept;
    return SQLITE_OK;
  }
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

static int read_totals(ring_store *st, ring_commit *c){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_TOTALS, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_step(st, pStmt);
  if( rc!=SQLITE_ROW ) return rc==SQLITE_DONE ? SQLITE_OK : rc;
  c->n_nodes = (uint32_t)sqlite3_column_int64(pStmt, 0);
  c->weight_sum = sqlite3_column_double(pStmt, 1);
  sqlite3_reset(pStmt);
  return SQLITE_OK;
}

static int check_commit(ring_store *st){
  const ring_config *cfg = &st->info.config;
  if( cfg->algo->check_commit==NULL ) return SQLITE_OK;
  unsigned needs = ring_commit_needs(cfg);
  store_counters counters;
  txn_changes changes;
  node_list nodes;
  ring_commit c;
  ring_input kept;
  ring_input *aGone = NULL;
  char *zErr = NULL;
  memset(&changes, 0, sizeof(changes));
  memset(&nodes, 0, sizeof(nodes));
  memset(&c, 0, sizeof(c));
  int rc = read_counters(st, &counters);
  if( rc==SQLITE_OK ) rc = read_changes(st, counters.epoch, &changes);
  if( rc==SQLITE_OK ){
    if( changes.n>1 ){
      qsort(changes.a, (size_t)changes.n, sizeof(txn_node), txn_node_compare);
    }
    aGone = sqlite3_malloc64(sizeof(ring_input) * (changes.n ? changes.n : 1));
    if( aGone==NULL ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    int64_t firstAdd = changes_gone(&changes, aGone, &c);
    rc = read_last_kept(st, firstAdd<counters.next_id ? firstAdd
                                                     : counters.next_id,
                        &kept, &c);
  }
  if( rc==SQLITE_OK && (needs & RING_COMMIT_NODES) ){
    rc = load_node_list(st->db, st->zSchema, st->zName, cfg, -1, &nodes,
                        &zErr);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
      rc = store_fail(st, rc, "%s", zErr ? zErr : sqlite3_errmsg(st->db));
    }
    c.nodes = nodes.aInput;
    c.n_nodes = nodes.n;
    for(uint32_t i=0; i<nodes.n; i++) c.weight_sum += nodes.aInput[i].weight;
  }else if( rc==SQLITE_OK && (needs & RING_COMMIT_TOTALS) ){
    rc = read_totals(st, &c);
  }
  if( rc==SQLITE_OK ){
    char zMsg[512];
    int rcCheck = ring_check_commit(cfg, &c, zMsg, sizeof(zMsg));
    if( rcCheck==RING_NOMEM ){
      rc = SQLITE_NOMEM;
    }else if( rcCheck!=RING_OK ){
      rc = store_fail(st, SQLITE_ERROR, "%s: %s", st->zName, zMsg);
    }
  }
  if( st->aStmt[STMT_LAST_BELOW] ) sqlite3_reset(st->aStmt[STMT_LAST_BELOW]);
  sqlite3_free(zErr);
  sqlite3_free(aGone);
  node_list_free(&nodes);
  txn_changes_free(&changes);
  return rc;
}

int store_commit_epoch(ring_store *st, int64_t *pFrom){
  sqlite3_stmt *pStmt = NULL;
  *pFrom = -1;
  /* The table may have been dropped or renamed since the store was opened,
  ** and another ring may have its name: then it is not this store's. */
  int rc = store_stmt(st, STMT_PENDING, &pStmt);
  if( rc==SQLITE_CORRUPT_VTAB ) return SQLITE_NOTFOUND;
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pStmt);
    if( rc==SQLITE_ERROR || rc==SQLITE_SCHEMA ) return SQLITE_NOTFOUND;
    return store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                      sqlite3_errmsg(st->db));
  }
  int bMine = sqlite3_column_type(pStmt, 0)==SQLITE_INTEGER
           && sqlite3_column_int64(pStmt, 0)==st->info.created;
  int64_t from = sqlite3_column_int64(pStmt, 1);
  int bPending = sqlite3_column_type(pStmt, 2)==SQLITE_INTEGER
              && from<sqlite3_column_int64(pStmt, 2);
  sqlite3_reset(pStmt);
  if( !bMine ) return SQLITE_NOTFOUND;
  if( !bPending ) return SQLITE_OK;
  rc = check_commit(st);
  if( rc==SQLITE_OK ) rc = store_stmt(st, STMT_COMMIT_EPOCH, &pStmt);
  if( rc==SQLITE_OK ) rc = store_step(st, pStmt);
  if( rc!=SQLITE_DONE ) return rc;
  *pFrom = from;
  return SQLITE_OK;
}

int store_scan(ring_store *st, int eBy, sqlite3_value *pArg,
               sqlite3_stmt **ppStmt){
  static const char *const azWhere[] = { "", " WHERE node=?1", " WHERE id=?1" };
  int rc = chash_prepare_fmt(st->db, ppStmt, 0,
      "SELECT id, node, weight%s FROM \"%w\".\"%w_nodes\"%s ORDER BY id",
      st->azColumnSql[0], st->zSchema, st->zName, azWhere[eBy]);
  if( rc!=SQLITE_OK ) return store_prepare_fail(st, rc);
  if( eBy ) sqlite3_bind_value(*ppStmt, 1, pArg);
  return SQLITE_OK;
}

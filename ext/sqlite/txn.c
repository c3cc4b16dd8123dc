/*
** txn.c: how ring tables take part in a connection's transactions.
**
** A change to a ring is logged with the next version's epoch (the
** committed epoch + 1), and the commit raises the committed epoch to it
** (store.c). SQLite calls xSync on the virtual tables in its list of the
** transaction's tables, and a table's entry in that list does not follow
** DDL undone by ROLLBACK TO: after a rename, a drop or a CREATE is rolled
** back, the entry may name a table that no longer exists, another ring,
** or (after DROP TABLE, whose entry SQLite takes out) nothing at all.
** So the commit does not trust names. The rules:
**
**   1. Every xSync of a ring table, and of the sentinel below, commits
**      every ring of the connection that has pending changes (history rows
**      newer than its committed epoch) in a schema this transaction
**      writes: each becomes exactly one version. A ring that is gone has
**      nothing to commit. The first xSync of a commit does the work, the
**      others find nothing left.
**   2. The sentinel, the eponymous table chash_txn, joins a transaction
**      in which a ring is dropped, so that a ROLLBACK TO that brings the
**      ring back still finds a table whose xSync commits it.
**   3. A COMMIT that fails after xSync (SQLITE_BUSY) leaves the raised
**      epochs in the open transaction. Before the next change to such a
**      ring the raise is taken back, so the changes still go into the one
**      pending version, and the next COMMIT raises it again. A version
**      looked up while it was raised may be cached as committed: the
**      connection's caches are cleared when a raise is taken back or
**      rolled back.
*/
#include <string.h>

#include "sqlite_layer.h"

/* A ring whose epoch this transaction's commit raised from epoch `from`. */
typedef struct txn_raise {
  char *zSchema;
  int64_t created;         /* the ring's creation tag: renames keep it */
  int64_t from;
} txn_raise;

struct chash_txn {
  chash_conn *conn;
  int bSynced;             /* the rings are committed, nothing changed since */
  int bEnlisted;           /* the sentinel is in this transaction */
  txn_raise *aRaise;
  int nRaise, nRaiseAlloc;
};

chash_txn *txn_new(chash_conn *conn){
  chash_txn *txn = sqlite3_malloc64(sizeof(*txn));
  if( txn ){
    memset(txn, 0, sizeof(*txn));
    txn->conn = conn;
  }
  return txn;
}

chash_conn *txn_conn(chash_txn *txn){
  return txn->conn;
}

static void txn_forget_raises(chash_txn *txn){
  for(int i=0; i<txn->nRaise; i++) sqlite3_free(txn->aRaise[i].zSchema);
  txn->nRaise = 0;
}

/* The module destructor of the chash module: the connection's context
** goes with it. */
void txn_free(void *pTxn){
  chash_txn *txn = pTxn;
  if( txn==NULL ) return;
  txn_forget_raises(txn);
  sqlite3_free(txn->aRaise);
  conn_free(txn->conn);
  sqlite3_free(txn);
}

static int txn_note_raise(chash_txn *txn, const char *zSchema,
                          int64_t created, int64_t from){
  for(int i=0; i<txn->nRaise; i++){
    txn_raise *r = &txn->aRaise[i];
    if( r->created==created && strcmp(r->zSchema, zSchema)==0 ){
      r->from = from;
      return SQLITE_OK;
    }
  }
  if( txn->nRaise==txn->nRaiseAlloc ){
    int nNew = txn->nRaiseAlloc ? txn->nRaiseAlloc*2 : 4;
    txn_raise *aNew = sqlite3_realloc64(txn->aRaise, sizeof(*aNew)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    txn->aRaise = aNew;
    txn->nRaiseAlloc = nNew;
  }
  char *z = sqlite3_mprintf("%s", zSchema);
  if( z==NULL ) return SQLITE_NOMEM;
  txn->aRaise[txn->nRaise].zSchema = z;
  txn->aRaise[txn->nRaise].created = created;
  txn->aRaise[txn->nRaise].from = from;
  txn->nRaise++;
  return SQLITE_OK;
}

int txn_before_change(chash_txn *txn, sqlite3 *db, const char *zSchema,
                      const char *zName, int64_t created){
  txn->bSynced = 0;
  for(int i=0; i<txn->nRaise; i++){
    const txn_raise *r = &txn->aRaise[i];
    if( r->created!=created || strcmp(r->zSchema, zSchema)!=0 ) continue;
    int rc = chash_exec_fmt(db, "UPDATE \"%w\".\"%w_config\" SET value=%lld"
                            " WHERE key='epoch' AND value=%lld", zSchema,
                            zName, (long long)r->from, (long long)r->from+1);
    if( rc!=SQLITE_OK ) return rc;
    if( sqlite3_changes(db)>0 ) conn_forget_rings(txn->conn);
    return SQLITE_OK;
  }
  return SQLITE_OK;
}

void txn_changed(chash_txn *txn){
  txn->bSynced = 0;
}

/* Commit ring zSchema.zName if it has pending changes (rule 1). A table
** whose shadow tables cannot be read has nothing this transaction wrote
** through it: writes to a damaged ring are refused. */
static int commit_ring(chash_txn *txn, sqlite3 *db, const char *zSchema,
                       const char *zName, char **pzErr){
  ring_store *st = NULL;
  char *zOpenErr = NULL;
  int rc = store_open(db, zSchema, zName, txn, &st, &zOpenErr);
  sqlite3_free(zOpenErr);
  if( rc==SQLITE_CORRUPT_VTAB ) return SQLITE_OK;
  if( rc!=SQLITE_OK ) return rc;
  int64_t from = -1;
  rc = store_commit_epoch(st, &from);
  if( rc==SQLITE_OK && from>=0 ){
    rc = txn_note_raise(txn, zSchema, store_info_of(st)->created, from);
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && store_errmsg(st) ){
    *pzErr = sqlite3_mprintf("%s", store_errmsg(st));
  }
  store_close(st);
  return rc;
}

/* Commit the rings of schema zSchema. */
static int commit_schema(chash_txn *txn, sqlite3 *db, const char *zSchema,
                         char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT name, sql FROM \"%w\".sqlite_schema WHERE type='table'"
      " AND sql LIKE 'CREATE VIRTUAL TABLE%%'", zSchema);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zSql = (const char *)sqlite3_column_text(pStmt, 1);
    if( zName==NULL || zSql==NULL ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ) rc = SQLITE_NOMEM;
      continue;
    }
    if( catalog_is_ring_sql(zSql) ){
      rc = commit_ring(txn, db, zSchema, zName, pzErr);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && *pzErr==NULL ){
    *pzErr = sqlite3_mprintf("cannot commit the rings of %s: %s", zSchema,
                             sqlite3_errmsg(db));
  }
  return rc;
}

static int txn_sync(chash_txn *txn, sqlite3 *db, char **pzErr){
  *pzErr = NULL;
  if( txn->bSynced ) return SQLITE_OK;
  char **azSchema = NULL;
  int nSchema = 0;
  int rc = catalog_list_schemas(db, &azSchema, &nSchema);
  for(int i=0; rc==SQLITE_OK && i<nSchema; i++){
    if( sqlite3_txn_state(db, azSchema[i])!=SQLITE_TXN_WRITE ) continue;
    rc = commit_schema(txn, db, azSchema[i], pzErr);
  }
  catalog_free_schemas(azSchema, nSchema);
  if( rc==SQLITE_OK ) txn->bSynced = 1;
  return rc;
}

void txn_rolled_back(chash_txn *txn){
  txn->bSynced = 0;
  if( txn->nRaise>0 ) conn_forget_rings(txn->conn);
}

void txn_end(chash_txn *txn, int bCommitted){
  if( !bCommitted ) txn_rolled_back(txn);
  txn->bSynced = 0;
  txn->bEnlisted = 0;
  txn_forget_raises(txn);
}

/* ------------------------------------------------------------ sentinel */

typedef struct sentinel_vtab {
  sqlite3_vtab base;       /* base class, must be first */
  sqlite3 *db;
  chash_txn *txn;
} sentinel_vtab;

typedef struct sentinel_cursor {
  sqlite3_vtab_cursor base; /* base class, must be first */
} sentinel_cursor;

void txn_enlist(chash_txn *txn, sqlite3 *db){
  if( txn->bEnlisted || sqlite3_get_autocommit(db) ) return;
  /* A write to the sentinel makes SQLite call its xBegin. It has no rows,
  ** and WHERE 0 leaves alone a user's table that takes its name. Failing
  ** (main is read-only) leaves only a dropped ring that a ROLLBACK TO
  ** brings back to be committed by another ring's xSync. */
  sqlite3_stmt *pStmt = NULL;
  if( sqlite3_prepare_v2(db, "DELETE FROM main.chash_txn WHERE 0", -1, &pStmt,
                         NULL)==SQLITE_OK ){
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
}

static int sentinel_connect(sqlite3 *db, void *pAux, int argc,
                            const char *const *argv, sqlite3_vtab **ppVtab,
                            char **pzErr){
  (void)argc; (void)argv; (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(unused)");
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  sentinel_vtab *p = sqlite3_malloc64(sizeof(*p));
  if( p==NULL ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->txn = pAux;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int sentinel_disconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int sentinel_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  pInfo->estimatedCost = 1.0;
  pInfo->estimatedRows = 0;
  return SQLITE_OK;
}

static int sentinel_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  sentinel_cursor *c = sqlite3_malloc64(sizeof(*c));
  if( c==NULL ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *ppCursor = &c->base;
  return SQLITE_OK;
}

static int sentinel_close(sqlite3_vtab_cursor *pCursor){
  sqlite3_free(pCursor);
  return SQLITE_OK;
}

static int sentinel_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                           const char *idxStr, int argc, sqlite3_value **argv){
  (void)pCursor; (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  return SQLITE_OK;
}

static int sentinel_next(sqlite3_vtab_cursor *pCursor){
  (void)pCursor;
  return SQLITE_OK;
}

static int sentinel_eof(sqlite3_vtab_cursor *pCursor){
  (void)pCursor;
  return 1;
}

static int sentinel_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  (void)pCursor; (void)ctx; (void)iCol;
  return SQLITE_OK;
}

static int sentinel_rowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid){
  (void)pCursor;
  *pRowid = 0;
  return SQLITE_OK;
}

/* Only an INSERT reaches xUpdate (there are no rows to change). */
static int sentinel_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                           sqlite3_int64 *pRowid){
  (void)argc; (void)argv; (void)pRowid;
  return chash_vtab_error(pVtab, SQLITE_ERROR, "chash_txn: chash's own table "
                          "for its part in transactions; it holds no rows");
}

static int sentinel_begin(sqlite3_vtab *pVtab){
  ((sentinel_vtab *)pVtab)->txn->bEnlisted = 1;
  return SQLITE_OK;
}

/* xSync of the sentinel and of every ring table: rule 1, its error on
** pVtab. */
int txn_vtab_sync(chash_txn *txn, sqlite3 *db, sqlite3_vtab *pVtab){
  char *zErr = NULL;
  int rc = txn_sync(txn, db, &zErr);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && zErr ){
    rc = chash_vtab_error(pVtab, rc, "%s", zErr);
  }
  sqlite3_free(zErr);
  return rc;
}

static int sentinel_sync(sqlite3_vtab *pVtab){
  sentinel_vtab *p = (sentinel_vtab *)pVtab;
  return txn_vtab_sync(p->txn, p->db, pVtab);
}

static int sentinel_commit(sqlite3_vtab *pVtab){
  txn_end(((sentinel_vtab *)pVtab)->txn, 1);
  return SQLITE_OK;
}

static int sentinel_rollback(sqlite3_vtab *pVtab){
  txn_end(((sentinel_vtab *)pVtab)->txn, 0);
  return SQLITE_OK;
}

static int sentinel_savepoint(sqlite3_vtab *pVtab, int iSavepoint){
  (void)pVtab; (void)iSavepoint;
  return SQLITE_OK;
}

static int sentinel_rollback_to(sqlite3_vtab *pVtab, int iSavepoint){
  (void)iSavepoint;
  txn_rolled_back(((sentinel_vtab *)pVtab)->txn);
  return SQLITE_OK;
}

static const sqlite3_module sentinel_module = {
  2,
  NULL /* xCreate: eponymous only */, sentinel_connect, sentinel_best_index,
  sentinel_disconnect, sentinel_disconnect, sentinel_open, sentinel_close,
  sentinel_filter, sentinel_next, sentinel_eof, sentinel_column,
  sentinel_rowid, sentinel_update, sentinel_begin, sentinel_sync,
  sentinel_commit, sentinel_rollback, NULL /* xFindFunction */,
  NULL /* xRename */, sentinel_savepoint, sentinel_savepoint /* xRelease */,
  sentinel_rollback_to, NULL /* xShadowName */
};

int txn_register(sqlite3 *db, chash_txn *txn){
  return sqlite3_create_module_v2(db, "chash_txn", &sentinel_module, txn, NULL);
}

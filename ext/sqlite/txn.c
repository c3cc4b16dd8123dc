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
** So the commit does not trust the table it is called on. The rules:
**
**   1. The connection keeps the names of the rings the transaction
**      changed: the name at each change, and on a rename the new name
**      too, never dropping one. Whatever ROLLBACK TO undoes, every ring
**      with pending changes (history rows newer than its committed epoch)
**      is under one of those names.
**   2. Every xSync of a ring table, and of the sentinel below, commits the
**      rings under those names that have pending changes: each becomes
**      exactly one version. A name under which there is no ring, or one
**      without pending changes, has nothing to commit. The first xSync of
**      a commit does the work; the others find it done.
**   3. The sentinel, the eponymous table chash_txn, joins a transaction
**      in which a ring is dropped, so that a ROLLBACK TO that brings the
**      ring back still finds a table whose xSync commits it.
**   4. A COMMIT that fails after xSync (SQLITE_BUSY) leaves the raised
**      epochs in the open transaction. Before the next change to such a
**      ring the raise is taken back, so the changes still go into the one
**      pending version, and the next COMMIT raises it again. A version
**      looked up while it was raised may be cached as committed: the
**      connection's caches are cleared when a raise is taken back or
**      rolled back.
**
** xCommit and xRollback of any table in the transaction (every one that
** wrote, and the sentinel) end it: the lists are emptied.
*/
#include <string.h>

#include "sqlite_layer.h"

/* A ring the transaction changed (rule 1), or whose epoch its commit
** raised from `from` (rule 4). */
typedef struct txn_ring {
  char *zSchema;
  char *zName;
  int64_t created;         /* the ring's creation tag: renames keep it */
  int64_t from;
} txn_ring;

typedef struct txn_ring_list {
  txn_ring *a;
  int n, nAlloc;
} txn_ring_list;

struct chash_txn {
  chash_conn *conn;        /* one reference held */
  int nRef;                /* the two modules registered with it */
  int bSynced;             /* the rings are committed, nothing changed since */
  int bEnlisted;           /* the sentinel is in this transaction */
  txn_ring_list changed;   /* by name */
  txn_ring_list raised;    /* by schema and creation tag */
};

static void ring_list_clear(txn_ring_list *l){
  for(int i=0; i<l->n; i++){
    sqlite3_free(l->a[i].zSchema);
    sqlite3_free(l->a[i].zName);
  }
  l->n = 0;
}

static void ring_list_free(txn_ring_list *l){
  ring_list_clear(l);
  sqlite3_free(l->a);
}

static int ring_list_add(txn_ring_list *l, const char *zSchema,
                         const char *zName, int64_t created, int64_t from){
  if( l->n==l->nAlloc ){
    int nNew = l->nAlloc ? l->nAlloc*2 : 4;
    txn_ring *aNew = sqlite3_realloc64(l->a, sizeof(*aNew)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    l->a = aNew;
    l->nAlloc = nNew;
  }
  txn_ring *r = &l->a[l->n];
  r->zSchema = sqlite3_mprintf("%s", zSchema);
  r->zName = sqlite3_mprintf("%s", zName);
  r->created = created;
  r->from = from;
  if( r->zSchema==NULL || r->zName==NULL ){
    sqlite3_free(r->zSchema);
    sqlite3_free(r->zName);
    return SQLITE_NOMEM;
  }
  l->n++;
  return SQLITE_OK;
}

static txn_ring *find_changed(chash_txn *txn, const char *zSchema,
                              const char *zName){
  for(int i=0; i<txn->changed.n; i++){
    txn_ring *r = &txn->changed.a[i];
    if( sqlite3_stricmp(r->zName, zName)==0
     && sqlite3_stricmp(r->zSchema, zSchema)==0 ) return r;
  }
  return NULL;
}

static txn_ring *find_raised(chash_txn *txn, const char *zSchema,
                             int64_t created){
  for(int i=0; i<txn->raised.n; i++){
    txn_ring *r = &txn->raised.a[i];
    if( r->created==created && sqlite3_stricmp(r->zSchema, zSchema)==0 ){
      return r;
    }
  }
  return NULL;
}

chash_txn *txn_new(chash_conn *conn){
  chash_txn *txn = sqlite3_malloc64(sizeof(*txn));
  if( txn ){
    memset(txn, 0, sizeof(*txn));
    txn->nRef = 1;
    txn->conn = conn_retain(conn);
  }
  return txn;
}

chash_conn *txn_conn(chash_txn *txn){
  return txn->conn;
}

/* The module destructor of the chash and chash_txn modules: the last
** frees txn and its reference to the connection's context. */
void txn_release(void *pTxn){
  chash_txn *txn = pTxn;
  if( txn==NULL || --txn->nRef>0 ) return;
  ring_list_free(&txn->changed);
  ring_list_free(&txn->raised);
  conn_release(txn->conn);
  sqlite3_free(txn);
}

int txn_before_change(chash_txn *txn, sqlite3 *db, const char *zSchema,
                      const char *zName, int64_t created){
  txn->bSynced = 0;
  /* Outside an explicit transaction no COMMIT has failed: a raise listed
  ** is from a transaction whose end no table was left to see. */
  if( sqlite3_get_autocommit(db) ) ring_list_clear(&txn->raised);
  const txn_ring *r = find_raised(txn, zSchema, created);
  if( r ){
    int rc = chash_exec_fmt(db, "UPDATE \"%w\".\"%w_config\" SET value=%lld"
                            " WHERE key='epoch' AND value=%lld", zSchema,
                            zName, (long long)r->from, (long long)r->from+1);
    if( rc!=SQLITE_OK ) return rc;
    if( sqlite3_changes(db)>0 ) conn_forget_rings(txn->conn);
  }
  if( find_changed(txn, zSchema, zName) ) return SQLITE_OK;
  return ring_list_add(&txn->changed, zSchema, zName, created, -1);
}

int txn_renamed(chash_txn *txn, const char *zSchema, const char *zOld,
                const char *zNew){
  txn->bSynced = 0;
  const txn_ring *r = find_changed(txn, zSchema, zOld);
  if( r==NULL || find_changed(txn, zSchema, zNew) ) return SQLITE_OK;
  return ring_list_add(&txn->changed, zSchema, zNew, r->created, -1);
}

void txn_changed(chash_txn *txn){
  txn->bSynced = 0;
}

/* Commit the ring of store st if it is still under the store's name and
** has pending changes (rule 2); SQLITE_NOTFOUND if it is not. */
static int commit_store(chash_txn *txn, ring_store *st, char **pzErr){
  int64_t from = -1;
  int rc = store_commit_epoch(st, &from);
  if( rc==SQLITE_OK && from>=0 ){
    const char *zSchema = store_schema(st);
    int64_t created = store_info_of(st)->created;
    txn_ring *r = find_raised(txn, zSchema, created);
    if( r ){
      r->from = from;
    }else{
      rc = ring_list_add(&txn->raised, zSchema, store_name(st), created, from);
    }
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && rc!=SQLITE_NOTFOUND
   && store_errmsg(st) ){
    *pzErr = sqlite3_mprintf("%s", store_errmsg(st));
  }
  return rc;
}

/* Commit the ring under zSchema.zName, if there is one (rule 2): through
** pHint if that is a store of this name still holding its ring, else
** through a store opened for it. A table whose shadow tables cannot be
** read has nothing this transaction wrote through it: writes to a damaged
** ring are refused. */
static int commit_ring(chash_txn *txn, sqlite3 *db, const char *zSchema,
                       const char *zName, ring_store *pHint, char **pzErr){
  if( pHint && sqlite3_stricmp(store_name(pHint), zName)==0
   && sqlite3_stricmp(store_schema(pHint), zSchema)==0 ){
    int rc = commit_store(txn, pHint, pzErr);
    if( rc!=SQLITE_NOTFOUND ) return rc;
  }
  ring_store *st = NULL;
  char *zOpenErr = NULL;
  int rc = store_open(db, zSchema, zName, txn, &st, &zOpenErr);
  if( rc==SQLITE_CORRUPT_VTAB ){
    sqlite3_free(zOpenErr);
    return SQLITE_OK;
  }
  if( rc!=SQLITE_OK ){
    *pzErr = zOpenErr;
    return rc;
  }
  rc = commit_store(txn, st, pzErr);
  store_close(st);
  return rc==SQLITE_NOTFOUND ? SQLITE_OK : rc;
}

static int txn_sync(chash_txn *txn, sqlite3 *db, ring_store *pHint,
                    char **pzErr){
  *pzErr = NULL;
  if( txn->bSynced ) return SQLITE_OK;
  int rc = SQLITE_OK;
  for(int i=0; rc==SQLITE_OK && i<txn->changed.n; i++){
    rc = commit_ring(txn, db, txn->changed.a[i].zSchema,
                     txn->changed.a[i].zName, pHint, pzErr);
  }
  if( rc==SQLITE_OK ) txn->bSynced = 1;
  return rc;
}

static void txn_rolled_back(chash_txn *txn){
  txn->bSynced = 0;
  if( txn->raised.n>0 ) conn_forget_rings(txn->conn);
}

static void txn_end(chash_txn *txn, int bCommitted){
  if( !bCommitted ) txn_rolled_back(txn);
  txn->bSynced = 0;
  txn->bEnlisted = 0;
  ring_list_clear(&txn->changed);
  ring_list_clear(&txn->raised);
}

/* The transaction methods of the ring tables and of the sentinel. */
int txn_table_sync(txn_table *p, ring_store *pStore){
  char *zErr = NULL;
  int rc = txn_sync(p->txn, p->db, pStore, &zErr);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    /* An error whose message could not be made is out of memory. */
    rc = zErr ? chash_vtab_error(&p->base, rc, "%s", zErr) : SQLITE_NOMEM;
  }
  sqlite3_free(zErr);
  return rc;
}

int txn_table_commit(sqlite3_vtab *pVtab){
  txn_end(((txn_table *)pVtab)->txn, 1);
  return SQLITE_OK;
}

int txn_table_rollback(sqlite3_vtab *pVtab){
  txn_end(((txn_table *)pVtab)->txn, 0);
  return SQLITE_OK;
}

/* xSavepoint and xRelease change nothing, but without an xSavepoint SQLite
** skips xRollbackTo for the savepoints opened before the table joined. */
int txn_table_savepoint(sqlite3_vtab *pVtab, int iSavepoint){
  (void)pVtab; (void)iSavepoint;
  return SQLITE_OK;
}

int txn_table_rollback_to(sqlite3_vtab *pVtab, int iSavepoint){
  (void)iSavepoint;
  txn_rolled_back(((txn_table *)pVtab)->txn);
  return SQLITE_OK;
}

/* ------------------------------------------------------------ sentinel */

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
  txn_table *p = sqlite3_malloc64(sizeof(*p));
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

/* Only an INSERT reaches xUpdate (there are no rows to change). */
static int sentinel_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                           sqlite3_int64 *pRowid){
  (void)argc; (void)argv; (void)pRowid;
  return chash_vtab_error(pVtab, SQLITE_ERROR, "chash_txn: chash's own table "
                          "for its part in transactions; it holds no rows");
}

static int sentinel_begin(sqlite3_vtab *pVtab){
  ((txn_table *)pVtab)->txn->bEnlisted = 1;
  return SQLITE_OK;
}

static int sentinel_sync(sqlite3_vtab *pVtab){
  return txn_table_sync((txn_table *)pVtab, NULL);
}

static const sqlite3_module sentinel_module = {
  2,
  NULL /* xCreate: eponymous only */, sentinel_connect, empty_table_best_index,
  sentinel_disconnect, sentinel_disconnect, empty_table_open,
  empty_table_close, empty_table_filter, empty_table_next, empty_table_eof,
  empty_table_column, empty_table_rowid, sentinel_update, sentinel_begin, sentinel_sync,
  txn_table_commit, txn_table_rollback, NULL /* xFindFunction */,
  NULL /* xRename */, txn_table_savepoint, txn_table_savepoint /* xRelease */,
  txn_table_rollback_to, NULL /* xShadowName */
};

int txn_register(sqlite3 *db, chash_txn *txn){
  txn->nRef++;
  return sqlite3_create_module_v2(db, "chash_txn", &sentinel_module, txn,
                                  txn_release);
}

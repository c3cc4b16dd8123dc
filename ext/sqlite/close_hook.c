/*
** close_hook.c: how the connection's kept statements are finalized before
** sqlite3_close() looks for unfinalized ones.
**
** The connection keeps a few prepared statements across SQL statements
** (spec.c: the stamp queries of resolved specs). sqlite3_close() refuses
** to close a connection with unfinalized statements (sqlite3_close_v2()
** waits for them, for ever), and calls no destructor of chash's before it
** looks. What it does first is disconnect every virtual table, the
** eponymous ones too, which is when SQLite's own extensions finalize the
** statements their tables keep. So chash registers an eponymous table,
** chash_close_hook (no columns a user needs, no rows), connects it once,
** on the first statement the connection keeps, and finalizes every kept
** statement when it is disconnected.
**
** It is connected at most once: an eponymous table connected again after
** sqlite3_deserialize() replaced main can crash SQLite 3.40 (its schema
** pointer is left behind), so once disconnected (the connection is
** closing, or its modules are dropped) the connection keeps no more
** statements.
*/
#include <string.h>

#include "sqlite_layer.h"

typedef struct hook_vtab {
  sqlite3_vtab base;
  chash_conn *conn;
} hook_vtab;

static int hook_connect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  (void)argc;
  (void)argv;
  (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(closing)");
  if( rc!=SQLITE_OK ) return rc;
  hook_vtab *p = sqlite3_malloc64(sizeof(*p));
  if( p==NULL ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->conn = pAux;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  conn_keep_statements(p->conn, 1);
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int hook_disconnect(sqlite3_vtab *pVtab){
  hook_vtab *p = (hook_vtab *)pVtab;
  conn_keep_statements(p->conn, 0);
  sqlite3_free(p);
  return SQLITE_OK;
}

static const sqlite3_module hook_module = {
  .iVersion = 0,
  .xCreate = NULL,                         /* eponymous only */
  .xConnect = hook_connect,
  .xBestIndex = empty_table_best_index,
  .xDisconnect = hook_disconnect,
  .xDestroy = hook_disconnect,
  .xOpen = empty_table_open,
  .xClose = empty_table_close,
  .xFilter = empty_table_filter,
  .xNext = empty_table_next,
  .xEof = empty_table_eof,
  .xColumn = empty_table_column,
  .xRowid = empty_table_rowid,
};

int close_hook_register(sqlite3 *db, chash_conn *conn){
  if( conn==NULL ){
    return sqlite3_create_module_v2(db, "chash_close_hook", NULL, NULL, NULL);
  }
  return sqlite3_create_module_v2(db, "chash_close_hook", &hook_module,
                                  conn_retain(conn), conn_release);
}

void close_hook_connect(sqlite3 *db){
  sqlite3_stmt *pStmt = NULL;
  /* Preparing is enough: it connects the table (hook_connect). */
  sqlite3_prepare_v2(db, "SELECT closing FROM chash_close_hook", -1, &pStmt,
                     NULL);
  sqlite3_finalize(pStmt);
}

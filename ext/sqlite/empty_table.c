/*
** empty_table.c: the methods of a table with no rows, which chash's own
** eponymous tables share (chash_close_hook in close_hook.c, the
** transaction sentinel chash_txn in txn.c): a plan of cost 1 that finds
** nothing, and a cursor with no state of its own.
*/
#include <string.h>

#include "sqlite_layer.h"

int empty_table_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  pInfo->estimatedCost = 1.0;
  pInfo->estimatedRows = 0;
  return SQLITE_OK;
}

int empty_table_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  sqlite3_vtab_cursor *c = sqlite3_malloc64(sizeof(*c));
  if( c==NULL ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *ppCursor = c;
  return SQLITE_OK;
}

int empty_table_close(sqlite3_vtab_cursor *pCursor){
  sqlite3_free(pCursor);
  return SQLITE_OK;
}

int empty_table_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)pCursor; (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  return SQLITE_OK;
}

int empty_table_next(sqlite3_vtab_cursor *pCursor){
  (void)pCursor;
  return SQLITE_OK;
}

int empty_table_eof(sqlite3_vtab_cursor *pCursor){
  (void)pCursor;
  return 1;
}

int empty_table_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  (void)pCursor; (void)ctx; (void)iCol;
  return SQLITE_OK;
}

int empty_table_rowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid){
  (void)pCursor;
  *pRowid = 0;
  return SQLITE_OK;
}

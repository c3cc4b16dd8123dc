/*
** chash.c: the entry point of the chash SQLite extension.
**
**   .load ./chash          (sqlite3 shell; entry point sqlite3_chash_init)
**
** Registers the chash virtual table module and the ch_* functions on one
** connection. They share one per-connection context (spec.c's caches),
** owned by the module: SQLite frees it when the connection closes.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sqlite_layer.h"

static void *ring_sqlite_malloc(size_t n){
  return sqlite3_malloc64(n);
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_chash_init(sqlite3 *db, char **pzErrMsg,
                       const sqlite3_api_routines *pApi){
  SQLITE_EXTENSION_INIT2(pApi);
  if( sqlite3_libversion_number()<3038000 ){
    if( pzErrMsg ) *pzErrMsg = sqlite3_mprintf("chash needs SQLite 3.38 or later");
    return SQLITE_ERROR;
  }
  ring_set_allocator(ring_sqlite_malloc, sqlite3_free);
  chash_conn *conn = conn_new(db);
  if( conn==NULL ) return SQLITE_NOMEM;
  /* On failure SQLite calls conn_free itself. */
  int rc = vtab_register(db, conn);
  if( rc==SQLITE_OK ) rc = funcs_register(db, conn);
  if( rc==SQLITE_OK ) rc = tvf_register(db, conn);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("chash: cannot register: %s",
                                sqlite3_errmsg(db));
  }
  return rc;
}

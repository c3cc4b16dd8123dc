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
#include "chash.h"

#if SQLITE_VERSION_NUMBER < CHASH_SQLITE_MIN_VERSION_NUMBER
#error "chash needs the headers of SQLite 3.39.0 or later (sqlite3_db_name)"
#endif

static void *ring_sqlite_malloc(size_t n){
  return sqlite3_malloc64(n);
}

/*
** On a connection where chash is loaded already, were its ring tables'
** modules dropped since (sqlite3_drop_modules)? The functions stay, and
** registering the modules again would give the connection a second state
** beside the one the functions and the tables still connected share: so
** loading again says so, where it would otherwise succeed with no ring
** table to be had. A SQLite without PRAGMA module_list cannot tell: no.
*/
static int modules_dropped(sqlite3 *db, char **pzErrMsg){
  sqlite3_stmt *pList = NULL;
  int bDropped = 0;
  if( sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_module_list"
                         " WHERE name IN ('chash', 'chash_txn')", -1, &pList,
                         NULL)!=SQLITE_OK ){
    sqlite3_exec(db, "", NULL, NULL, NULL);     /* its error is not ours */
  }else if( sqlite3_step(pList)==SQLITE_ROW ){
    bDropped = sqlite3_column_int(pList, 0)<2;
  }
  sqlite3_finalize(pList);
  if( bDropped && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("chash: loaded on this connection already, "
                                "and its modules were dropped since "
                                "(sqlite3_drop_modules): ring tables cannot "
                                "come back on this connection; keep 'chash' "
                                "and 'chash_txn' when dropping modules");
  }
  return bDropped;
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_chash_init(sqlite3 *db, char **pzErrMsg,
                       const sqlite3_api_routines *pApi){
  SQLITE_EXTENSION_INIT2(pApi);
  /* An older SQLite's table of routines ends before the newer ones that
  ** chash calls: calling one would jump through whatever lies beyond it.
  ** So nothing but three old routines (the version, its number and
  ** sqlite3_mprintf) runs before this check. */
  if( sqlite3_libversion_number()<CHASH_SQLITE_MIN_VERSION_NUMBER ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("chash needs SQLite %s or later;"
                                  " this is SQLite %s",
                                  CHASH_SQLITE_MIN_VERSION, sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  /* Loaded a second time on the same connection (a package's load() and
  ** a load_extension of the same file): the first registration stays.
  ** Registering again would free the connection state that the first
  ** one's tables (chash_close_hook, chash_txn) still point at. */
  sqlite3_stmt *pLoaded = NULL;
  if( sqlite3_prepare_v2(db, "SELECT ch_version()", -1, &pLoaded,
                         NULL)==SQLITE_OK ){
    sqlite3_finalize(pLoaded);
    return modules_dropped(db, pzErrMsg) ? SQLITE_ERROR : SQLITE_OK;
  }
  /* The probe's "no such function" must not stay as the connection's
  ** error: sqlite3_open reads it after its automatic extensions. */
  sqlite3_exec(db, "", NULL, NULL, NULL);
  ring_set_allocator(ring_sqlite_malloc, sqlite3_free);
  chash_conn *conn = conn_new(db);
  if( conn==NULL ) return SQLITE_NOMEM;
  /* Each registration holds conn (SQLite releases it on failure too); the
  ** reference conn_new gave is let go at the end. When a part fails, the
  ** parts before it and its own registrations so far are removed: SQLite
  ** unloads a library whose entry point fails, and nothing of it may stay
  ** registered, not even a destructor for sqlite3_close to call. */
  static int (*const axPart[])(sqlite3 *, chash_conn *) = {
    vtab_register, funcs_register, aggregates_register, tvf_register,
    config_funcs_register, close_hook_register,
  };
  int nPart = (int)(sizeof(axPart)/sizeof(axPart[0]));
  int rc = SQLITE_OK, i;
  for(i=0; i<nPart && rc==SQLITE_OK; i++) rc = axPart[i](db, conn);
  if( rc!=SQLITE_OK ){
    while( i-- > 0 ) axPart[i](db, NULL);
  }
  conn_release(conn);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("chash: cannot register: %s",
                                sqlite3_errmsg(db));
  }
  return rc;
}

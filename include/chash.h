/*
** chash.h: the public header of chash, consistent hashing for SQLite.
**
** An application that links chash in (the one-file build, dist/chash.c,
** compiled with -DSQLITE_CORE) registers it on every connection it opens:
**
**   #include "chash.h"
**   sqlite3_auto_extension((void (*)(void))sqlite3_chash_init);
**
** or on one connection: sqlite3_chash_init(db, &zErrMsg, NULL). The
** loadable extension (chash.so) has the same entry point, which SQLite
** finds by itself: .load chash in the shell, sqlite3_load_extension() in C.
*/
#ifndef CHASH_H
#define CHASH_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** The oldest SQLite chash runs on. chash calls sqlite3_db_name(), which
** SQLite has since 3.39.0; every other interface it uses is older (the
** newest of them, sqlite3_total_changes64(), came in 3.37.0, and the JSON
** functions chash's inline rings are read with are built in since 3.38.0).
** sqlite3_chash_init() refuses an older SQLite with an error that says so.
*/
#define CHASH_SQLITE_MIN_VERSION        "3.39.0"
#define CHASH_SQLITE_MIN_VERSION_NUMBER 3039000

/*
** Register the chash virtual table module and the ch_* functions on db.
** Returns SQLITE_OK, or an error code with *pzErrMsg (if pzErrMsg is not
** NULL) set to a message from sqlite3_malloc() that the caller frees.
*/
int sqlite3_chash_init(sqlite3 *db, char **pzErrMsg,
                       const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif

#endif /* CHASH_H */

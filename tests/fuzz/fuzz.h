/*
** tests/fuzz/fuzz.h: what the libFuzzer targets share.
**
** Each target links the extension statically (the ext/ sources built with
** -DSQLITE_CORE, and smaller points and maglev-table limits: see the
** Makefile) against the system libsqlite3 and calls sqlite3_chash_init()
** on an in-memory database: a fresh one per input (fuzz_open, or
** fuzz_open_image for a copy of a database image made once, where rings
** must exist), or one kept for the whole process (fuzz_shared_db). A
** target may see any error from SQL; what it must never see is a crash, a
** sanitizer report, a leak, or a statement that runs away (a progress
** handler stops those).
*/
#ifndef CHASH_FUZZ_H
#define CHASH_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

int sqlite3_chash_init(sqlite3 *db, char **pzErrMsg, const void *pApi);

/* Stop any statement after this many VM steps x 1000. */
static inline int fuzz_progress(void *pArg){
  int *pn = pArg;
  return ++*pn > 20000;
}

/* A fresh in-memory database with chash loaded. Aborts on failure: that
** is a harness problem, not a finding. */
static inline sqlite3 *fuzz_open(int *pnProgress){
  static int bConfigured = 0;
  if( !bConfigured ){
    /* One thread, no memory statistics: SQLite's mutexes and counters
    ** cost about an eighth of an execution, and find nothing here. */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    bConfigured = 1;
  }
  sqlite3 *db = NULL;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK
   || sqlite3_chash_init(db, NULL, NULL)!=SQLITE_OK ){
    fprintf(stderr, "fuzz: cannot open a database with chash\n");
    abort();
  }
  *pnProgress = 0;
  sqlite3_progress_handler(db, 1000, fuzz_progress, pnProgress);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1<<20);
  return db;
}

/* Close, which must succeed: every statement of the extension finalized. */
static inline void fuzz_close(sqlite3 *db){
  if( sqlite3_close(db)!=SQLITE_OK ){
    fprintf(stderr, "fuzz: close failed: statements left unfinalized\n");
    abort();
  }
}

/* Run the harness's own SQL, which must succeed: a failure is a harness
** problem, not a finding. zWhat names the step in the message. */
static inline void fuzz_exec_must(sqlite3 *db, const char *zSql,
                                  const char *zWhat){
  if( sqlite3_exec(db, zSql, NULL, NULL, NULL)!=SQLITE_OK ){
    fprintf(stderr, "fuzz: %s failed: %s\n", zWhat, sqlite3_errmsg(db));
    abort();
  }
}

/*
** A fresh in-memory database with chash loaded, holding what zSetup
** creates. zSetup runs once per process; every later call gets a copy of
** the resulting database image (sqlite3_deserialize), which is much
** faster than creating rings again for every input.
*/
static inline sqlite3 *fuzz_open_image(const char *zSetup, int *pnProgress){
  static unsigned char *aImage = NULL;
  static sqlite3_int64 nImage = 0;
  if( aImage==NULL ){
    sqlite3 *db = fuzz_open(pnProgress);
    fuzz_exec_must(db, zSetup, "setup");
    aImage = sqlite3_serialize(db, "main", &nImage, 0);
    fuzz_close(db);
    if( aImage==NULL ) abort();
  }
  sqlite3 *db = fuzz_open(pnProgress);
  unsigned char *aCopy = sqlite3_malloc64(nImage);
  if( aCopy==NULL ) abort();
  memcpy(aCopy, aImage, nImage);
  if( sqlite3_deserialize(db, "main", aCopy, nImage, nImage,
                          SQLITE_DESERIALIZE_FREEONCLOSE
                          | SQLITE_DESERIALIZE_RESIZEABLE)!=SQLITE_OK ){
    abort();
  }
  return db;
}

/*
** A connection kept for the whole process in *pDb (a static of the
** caller), holding what zSetup creates: about ten times as many executions
** per second as a fresh database per input. For targets whose inputs only
** read (specs, keys), what an input leaves behind is only chash's ring
** caches; fuzz_dml puts its rings back itself. *pnProgress is reset for
** every input.
*/
static inline sqlite3 *fuzz_shared_db(sqlite3 **pDb, const char *zSetup,
                                      int *pnProgress){
  if( *pDb==NULL ){
    *pDb = fuzz_open(pnProgress);
    fuzz_exec_must(*pDb, zSetup, "setup");
  }
  *pnProgress = 0;
  return *pDb;
}

/* Run zSql; errors are expected and ignored. */
static inline void fuzz_exec(sqlite3 *db, const char *zSql){
  sqlite3_exec(db, zSql, NULL, NULL, NULL);
}

/* Step pStmt to the end, reading every column as text. */
static inline void fuzz_drain(sqlite3_stmt *pStmt){
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    for(int i=0; i<sqlite3_column_count(pStmt); i++){
      sqlite3_column_text(pStmt, i);
    }
  }
  sqlite3_reset(pStmt);
}

/* Prepare and drain one statement, binding ?1 to the text or blob given. */
static inline void fuzz_query(sqlite3 *db, const char *zSql, const void *p,
                              int n, int bBlob){
  sqlite3_stmt *pStmt = NULL;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)!=SQLITE_OK ) return;
  if( p ){
    if( bBlob ) sqlite3_bind_blob(pStmt, 1, p, n, SQLITE_TRANSIENT);
    else sqlite3_bind_text(pStmt, 1, p, n, SQLITE_TRANSIENT);
  }
  fuzz_drain(pStmt);
  sqlite3_finalize(pStmt);
}

#endif

/*
** tests/harness/concurrency.c: several processes on one WAL database, writers
** changing a ring while readers place keys on it.
**
** Usage:   build/concurrency [--ext PATH] [--seconds N] [--writers N]
**                            [--readers N]
**
** Writers (default 2) run transactions of 1..4 changes to ring r (add,
** remove, reweight; each writer owns its own node names, so the ring never
** runs out of nodes) until the time is up. Readers (default 3) loop:
**
**   1. read the committed version E0 straight from r_config;
**   2. in one statement, ask ch_epoch('r') and place 20 keys by 'r', by
**      'r@<that epoch>' and by 'r@-1', with ch_moved('k', 'r@-1', 'r').
**
** A reader checks that the version in (2) is at least E0 and at least the
** highest it saw before (it never places a key by a ring older than the
** last commit it has seen: no stale cache, no torn read), and that 'r'
** and 'r@E' place every key alike. Busy timeouts are short on purpose:
** SQLITE_BUSY is retried and counted; any other error fails the test.
**
** A first, single-process part drops a ring while a statement on another
** connection is still stepping through it (WAL lets the writer go ahead):
** the running statement must finish from its snapshot, and the next one
** must say the ring is gone. The exit status is 0 if all passed.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static const char *zExt = "./chash.so";

static sqlite3 *open_db(const char *zPath){
  sqlite3 *db = NULL;
  char *zErr = NULL;
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ){
    fprintf(stderr, "concurrency: open: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_busy_timeout(db, 20);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int *)0);
  if( sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr)!=SQLITE_OK ){
    fprintf(stderr, "concurrency: cannot load %s: %s\n", zExt, zErr);
    exit(1);
  }
  return db;
}

static double now(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec/1e9;
}

/* Fail the process on any error but SQLITE_BUSY (and its extended codes). */
static int is_busy(sqlite3 *db, int rc, const char *zWho, const char *zSql){
  if( (rc&0xff)==SQLITE_BUSY ) return 1;
  fprintf(stderr, "concurrency: %s: %s\n  in: %s\n", zWho, sqlite3_errmsg(db),
          zSql);
  exit(1);
}

/* A writer: transactions of changes to its own nodes w<id>_<k>. */
static void writer(const char *zPath, int id, double tEnd){
  sqlite3 *db = open_db(zPath);
  long nCommit = 0, nBusy = 0;
  srand(1000 + id);
  while( now()<tEnd ){
    sqlite3_str *pSql = sqlite3_str_new(db);
    sqlite3_str_appendall(pSql, "BEGIN IMMEDIATE;");
    int nChange = 1 + rand()%4;
    for(int i=0; i<nChange; i++){
      int k = rand()%8;
      switch( rand()%3 ){
        case 0: sqlite3_str_appendf(pSql, "INSERT OR IGNORE INTO r(node, weight)"
                                    " VALUES ('w%d_%d', %d);", id, k, 1+rand()%3);
                break;
        case 1: sqlite3_str_appendf(pSql, "DELETE FROM r WHERE node='w%d_%d';",
                                    id, k);
                break;
        default: sqlite3_str_appendf(pSql, "UPDATE r SET weight=%d.25 WHERE"
                                     " node='w%d_%d';", 1+rand()%3, id, k);
                 break;
      }
    }
    sqlite3_str_appendall(pSql, "COMMIT;");
    char *zSql = sqlite3_str_finish(pSql);
    int rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
    if( rc==SQLITE_OK ){
      nCommit++;
    }else if( is_busy(db, rc, "writer", zSql) ){
      nBusy++;
      sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_free(zSql);
  }
  printf("writer %d: %ld transactions committed, %ld busy\n", id, nCommit,
         nBusy);
  sqlite3_close(db);
}

/* Step pStmt to its first row; retry on SQLITE_BUSY. Returns 0 if busy
** (the caller starts the iteration over), 1 if there is a row. */
static int first_row(sqlite3 *db, sqlite3_stmt *pStmt, long *pnBusy){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ) return 1;
  sqlite3_reset(pStmt);
  if( is_busy(db, rc, "reader", sqlite3_sql(pStmt)) ) (*pnBusy)++;
  return 0;
}

/* A reader: places keys and checks versions never go back. */
static void reader(const char *zPath, int id, double tEnd){
  sqlite3 *db = open_db(zPath);
  sqlite3_stmt *pEpoch = NULL, *pPlace = NULL;
  long nCheck = 0, nBusy = 0, nKeys = 0;
  long long eSeen = 0;
  if( sqlite3_prepare_v2(db, "SELECT value FROM r_config WHERE key='epoch'",
                         -1, &pEpoch, NULL)!=SQLITE_OK
   || sqlite3_prepare_v2(db,
        "WITH k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i<20)"
        " SELECT ch_epoch('r'), i, ch_locate('key' || i, 'r'),"
        "  ch_locate('key' || i, 'r@' || ch_epoch('r')),"
        "  ch_locate('key' || i, 'r@-1'), ch_moved('key' || i, 'r@-1', 'r')"
        " FROM k", -1, &pPlace, NULL)!=SQLITE_OK ){
    fprintf(stderr, "concurrency: reader %d: %s\n", id, sqlite3_errmsg(db));
    exit(1);
  }
  while( now()<tEnd ){
    if( !first_row(db, pEpoch, &nBusy) ) continue;
    long long e0 = sqlite3_column_int64(pEpoch, 0);
    sqlite3_reset(pEpoch);
    if( !first_row(db, pPlace, &nBusy) ) continue;
    long long e = sqlite3_column_int64(pPlace, 0);
    if( e<e0 || e<eSeen ){
      fprintf(stderr, "concurrency: reader %d placed keys by version %lld "
              "after seeing version %lld committed\n", id, e,
              e0>eSeen ? e0 : eSeen);
      exit(1);
    }
    eSeen = e;
    int rc;
    do{
      const char *zCur = (const char *)sqlite3_column_text(pPlace, 2);
      const char *zVer = (const char *)sqlite3_column_text(pPlace, 3);
      if( sqlite3_column_int64(pPlace, 0)!=e || zCur==NULL || zVer==NULL
       || strcmp(zCur, zVer)!=0 ){
        fprintf(stderr, "concurrency: reader %d: key%d: 'r' says %s, "
                "'r@%lld' says %s\n", id, sqlite3_column_int(pPlace, 1),
                zCur, e, zVer);
        exit(1);
      }
      nKeys++;
    }while( (rc = sqlite3_step(pPlace))==SQLITE_ROW );
    if( rc!=SQLITE_DONE && is_busy(db, rc, "reader", sqlite3_sql(pPlace)) ){
      nBusy++;
    }
    sqlite3_reset(pPlace);
    nCheck++;
  }
  printf("reader %d: %ld checks, %ld keys placed, last version %lld, %ld "
         "busy\n", id, nCheck, nKeys, eSeen, nBusy);
  sqlite3_finalize(pEpoch);
  sqlite3_finalize(pPlace);
  sqlite3_close(db);
}

/* DROP TABLE of a ring that a statement on another connection is reading. */
static int drop_in_use(const char *zPath){
  sqlite3 *a = open_db(zPath), *b = open_db(zPath);
  sqlite3_stmt *pStmt = NULL;
  int bad = 0, nRow = 0, rc;
  sqlite3_busy_timeout(b, 2000);
  sqlite3_exec(a, "CREATE VIRTUAL TABLE gone USING chash(vnodes=4);"
                  "INSERT INTO gone(node) VALUES ('x'), ('y'), ('z')",
               NULL, NULL, NULL);
  sqlite3_prepare_v2(a, "SELECT node, points, ch_locate(node, 'gone')"
                        " FROM gone", -1, &pStmt, NULL);
  if( sqlite3_step(pStmt)!=SQLITE_ROW ) bad = 1;
  nRow++;
  /* The same connection cannot drop it under its own running statement. */
  rc = sqlite3_exec(a, "DROP TABLE gone", NULL, NULL, NULL);
  if( rc==SQLITE_OK ){
    fprintf(stderr, "concurrency: DROP under a running statement succeeded\n");
    bad = 1;
  }
  /* Another connection can (WAL); the statement goes on from its snapshot. */
  if( sqlite3_exec(b, "DROP TABLE gone", NULL, NULL, NULL)!=SQLITE_OK ){
    fprintf(stderr, "concurrency: DROP from another connection: %s\n",
            sqlite3_errmsg(b));
    bad = 1;
  }
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ) nRow++;
  if( rc!=SQLITE_DONE || nRow!=3 ){
    fprintf(stderr, "concurrency: the statement reading a dropped ring: %s "
            "after %d rows\n", sqlite3_errmsg(a), nRow);
    bad = 1;
  }
  sqlite3_finalize(pStmt);
  rc = sqlite3_exec(a, "SELECT ch_locate('k', 'gone')", NULL, NULL, NULL);
  if( rc==SQLITE_OK || strstr(sqlite3_errmsg(a), "no such ring: 'gone'")==0 ){
    fprintf(stderr, "concurrency: after the drop: %s\n", sqlite3_errmsg(a));
    bad = 1;
  }
  sqlite3_close(a);
  sqlite3_close(b);
  printf("drop in use: %s\n", bad ? "FAILED" : "ok");
  return bad;
}

int main(int argc, char **argv){
  double seconds = 5;
  int nWriter = 2, nReader = 3;
  for(int i=1; i<argc; i++){
    if( strcmp(argv[i], "--ext")==0 && i+1<argc ) zExt = argv[++i];
    else if( strcmp(argv[i], "--seconds")==0 && i+1<argc ) seconds = atof(argv[++i]);
    else if( strcmp(argv[i], "--writers")==0 && i+1<argc ) nWriter = atoi(argv[++i]);
    else if( strcmp(argv[i], "--readers")==0 && i+1<argc ) nReader = atoi(argv[++i]);
    else{
      fprintf(stderr, "usage: %s [--ext PATH] [--seconds N] [--writers N] "
              "[--readers N]\n", argv[0]);
      return 2;
    }
  }
  char zDir[] = "/tmp/chash-conc-XXXXXX";
  if( mkdtemp(zDir)==NULL ){ perror("mkdtemp"); return 2; }
  char *zPath = sqlite3_mprintf("%s/conc.db", zDir);

  sqlite3 *db = open_db(zPath);
  if( sqlite3_exec(db, "PRAGMA journal_mode=WAL;"
                       "CREATE VIRTUAL TABLE r USING chash(vnodes=16);"
                       "INSERT INTO r(node) VALUES ('base1');"
                       /* a second version, so that 'r@-1' has a node */
                       "INSERT INTO r(node) VALUES ('base2');",
                   NULL, NULL, NULL)!=SQLITE_OK ){
    fprintf(stderr, "concurrency: setup: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_close(db);
  int bad = drop_in_use(zPath);

  fflush(stdout);
  double tEnd = now() + seconds;
  for(int i=0; i<nWriter+nReader; i++){
    if( fork()==0 ){
      if( i<nWriter ) writer(zPath, i, tEnd); else reader(zPath, i-nWriter, tEnd);
      fflush(stdout);
      _exit(0);
    }
  }
  int status;
  while( wait(&status)>0 ){
    if( !WIFEXITED(status) || WEXITSTATUS(status)!=0 ) bad = 1;
  }

  db = open_db(zPath);
  sqlite3_stmt *pStmt = NULL;
  sqlite3_prepare_v2(db, "SELECT (SELECT group_concat(integrity_check) FROM"
                         " pragma_integrity_check), ch_epoch('r')", -1, &pStmt, NULL);
  if( sqlite3_step(pStmt)!=SQLITE_ROW
   || strcmp((const char *)sqlite3_column_text(pStmt, 0), "ok")!=0 ){
    fprintf(stderr, "concurrency: at the end: %s\n", sqlite3_errmsg(db));
    bad = 1;
  }else{
    printf("concurrency: %.0f s, %d writers, %d readers: ring at version %lld, "
           "%s\n", seconds, nWriter, nReader, sqlite3_column_int64(pStmt, 1),
           bad ? "FAILED" : "ok");
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db);

  char *zRm = sqlite3_mprintf("rm -rf '%s'", zDir);
  if( system(zRm)!=0 ) fprintf(stderr, "concurrency: cannot remove %s\n", zDir);
  sqlite3_free(zRm);
  sqlite3_free(zPath);
  return bad;
}

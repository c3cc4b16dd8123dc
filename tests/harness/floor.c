/*
** tests/harness/floor.c: chash refuses an SQLite older than it supports.
**
** Usage:   build/sqlite/VERSION/floor EXTENSION
**
** Built with the amalgamation of an SQLite older than chash's oldest
** supported version (see make test-sqlite-versions), it loads EXTENSION
** into a connection. The load must fail with chash's message naming both
** versions (SQLite may put its own words before it). If it loads instead,
** the program goes on with what crashed chash's old check on 3.38 (a ring,
** three nodes, one lookup) and reports the failure, if it gets that far.
** Prints "N passed, N failed".
*/
#include <stdio.h>
#include <string.h>

#include "chash.h"   /* sqlite3.h, and chash's oldest SQLite */

int main(int argc, char **argv){
  sqlite3 *db = 0;
  char *zErr = 0;
  char zWant[200];
  int rc;

  if( argc!=2 ){
    fprintf(stderr, "usage: %s EXTENSION\n", argv[0]);
    return 2;
  }
  snprintf(zWant, sizeof(zWant), "chash needs SQLite %s or later;"
           " this is SQLite %s", CHASH_SQLITE_MIN_VERSION, sqlite3_libversion());
  printf("floor: SQLite %s, %s\n", sqlite3_libversion(), argv[1]);
  fflush(stdout);                 /* seen even if what follows crashes */

  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "floor: cannot open a database\n");
    return 2;
  }
  sqlite3_enable_load_extension(db, 1);
  rc = sqlite3_load_extension(db, argv[1], "sqlite3_chash_init", &zErr);
  if( rc!=SQLITE_OK ){
    int bOk = zErr && strstr(zErr, zWant)!=0;
    printf("floor: load refused: %s\n", zErr ? zErr : "(no message)");
    if( !bOk ) printf("floor: expected: %s\n", zWant);
    sqlite3_free(zErr);
    sqlite3_close(db);
    printf("%d passed, %d failed\n", bOk, !bOk);
    return !bOk;
  }

  printf("floor: SQLite %s loaded chash: it must refuse\n", sqlite3_libversion());
  fflush(stdout);
  rc = sqlite3_exec(db,
      "CREATE VIRTUAL TABLE s USING chash;"
      "INSERT INTO s(node) VALUES('a'),('b'),('c');"
      "SELECT ch_locate('user:42');", 0, 0, &zErr);
  printf("floor: the lookup then gave %s\n", rc==SQLITE_OK ? "no error" : zErr);
  sqlite3_free(zErr);
  sqlite3_close(db);
  printf("0 passed, 1 failed\n");
  return 1;
}

/*
** tests/harness/holds.c: a statement's hold on its rings (ext/sqlite/
** spec_stmt.c), which the connection keeps for its next statement once
** the statement ends (conn_hold_take in ext/sqlite/spec.c).
**
** Usage:   build/holds EXTENSION
**
** Each case runs statements of ch_locate on ring r (a chash table of
** nodes a, b, c, vnodes 20, in memory) in the orders a pool can get wrong:
** a statement finalized after its connection was closed, a hold still out
** when the chash module is dropped, chash's functions called after every
** module is dropped, a statement holding a ring after chash's functions
** are replaced, two statements alive at once, a reset
** in the middle of a scan, the ring changed while a scan holds the old
** one, and every allocation failing in turn while another statement holds
** the connection's spare, and every allocation of the load failing in
** turn; and the rings a statement leaves with the connection for the next
** one, taken only while nothing can have changed them (ch_moved's two
** specs after a change of the ring, the default ring after a schema with a
** ring of its own is attached). Every placement is compared with the same key's
** on an inline JSON ring of the same nodes, on a connection of its own.
** The cases are meant to run under AddressSanitizer or valgrind too
** (make test-asan), which see a hold used or freed after its connection.
** Prints "N passed, N failed"; exits 1 if any failed.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#define NKEY 10                   /* keys 1..NKEY in the scans */

static const char *zExt;
static int nPass = 0, nFail = 0;
static char azWant[NKEY+1][16];   /* the owner of key k on a, b, c */
static char azWantD[NKEY+1][16];  /* ... and on a, b, c, d */

static void check(int bOk, const char *zCase, const char *zWhat){
  if( bOk ){
    nPass++;
  }else{
    nFail++;
    printf("holds: %s: %s\n", zCase, zWhat);
  }
}

/* ------------------------------------------- allocation failures */

/* SQLite's allocator, with a failure at call number iFail (0: none). */
static sqlite3_mem_methods memReal;
static int iFail = 0, nCall = 0, nHit = 0;

static void *faultMalloc(int n){
  if( iFail && ++nCall==iFail ){
    nHit++;
    return NULL;
  }
  return memReal.xMalloc(n);
}
static void *faultRealloc(void *p, int n){
  if( iFail && ++nCall==iFail ){
    nHit++;
    return NULL;
  }
  return memReal.xRealloc(p, n);
}
static void faultFree(void *p){ memReal.xFree(p); }
static int faultSize(void *p){ return memReal.xSize(p); }
static int faultRoundup(int n){ return memReal.xRoundup(n); }
static int faultInit(void *p){ (void)p; return memReal.xInit(memReal.pAppData); }
static void faultShutdown(void *p){ (void)p; memReal.xShutdown(memReal.pAppData); }

static void faultInstall(void){
  static sqlite3_mem_methods m = {
    faultMalloc, faultFree, faultRealloc, faultSize, faultRoundup,
    faultInit, faultShutdown, 0
  };
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memReal);
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
}

/* ------------------------------------------------------- helpers */

/* Database zName (a URI), chash loaded. */
static sqlite3 *open_uri(const char *zName){
  sqlite3 *db;
  char *zErr = NULL;
  if( sqlite3_open_v2(zName, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                      | SQLITE_OPEN_URI, NULL)!=SQLITE_OK ){
    fprintf(stderr, "holds: cannot open a database\n");
    exit(2);
  }
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr) ){
    fprintf(stderr, "holds: cannot load %s: %s\n", zExt, zErr);
    exit(2);
  }
  return db;
}

static sqlite3 *open_db(void){
  return open_uri(":memory:");
}

static void exec(sqlite3 *db, const char *zSql){
  char *zErr = NULL;
  if( sqlite3_exec(db, zSql, NULL, NULL, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "holds: %s: %s\n", zSql, zErr);
    exit(2);
  }
}

/* A connection with ring r of nodes a, b, c, its spec resolved once. */
static sqlite3 *ring_db(void){
  sqlite3 *db = open_db();
  exec(db, "CREATE VIRTUAL TABLE r USING chash(vnodes=20);"
           "INSERT INTO r(node) VALUES ('a'), ('b'), ('c');"
           "SELECT ch_locate(1, 'r')");
  return db;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = NULL;
  if( sqlite3_prepare_v2(db, zSql, -1, &p, NULL)!=SQLITE_OK ){
    fprintf(stderr, "holds: %s: %s\n", zSql, sqlite3_errmsg(db));
    exit(2);
  }
  return p;
}

/* The owners of keys 1..NKEY on an inline ring of the nodes in zNodes
** (a JSON array), on a connection of its own. */
static void owners_of(const char *zNodes, char azOut[][16]){
  sqlite3 *db = open_db();
  char *zSql = sqlite3_mprintf("SELECT ch_locate(?1, '{\"nodes\":%s,"
                               "\"vnodes\":20}')", zNodes);
  sqlite3_stmt *p = prepare(db, zSql);
  for(int k=1; k<=NKEY; k++){
    sqlite3_bind_int(p, 1, k);
    if( sqlite3_step(p)!=SQLITE_ROW ) exit(2);
    snprintf(azOut[k], sizeof(azOut[k]), "%s", sqlite3_column_text(p, 0));
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  sqlite3_free(zSql);
  sqlite3_close(db);
}

/* Does the current row of p hold key k's owner of azExpect? */
static int row_is(sqlite3_stmt *p, int k, char azExpect[][16]){
  const char *z = (const char *)sqlite3_column_text(p, 0);
  return z && strcmp(z, azExpect[k])==0;
}

/* Step p, bound to key k, to its row and check it. */
static int step_key(sqlite3_stmt *p, int k){
  sqlite3_bind_int(p, 1, k);
  return sqlite3_step(p)==SQLITE_ROW && row_is(p, k, azWant);
}

#define LOCATE "SELECT ch_locate(?1, 'r')"
#define SCAN   "WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM s" \
               " WHERE k<10) SELECT ch_locate(k, 'r') FROM s"

/* --------------------------------------------------------- cases */

/* A statement's row read after sqlite3_close_v2(), then finalized: the
** connection's state goes after the statement's hold. */
static void case_closed(void){
  sqlite3 *db = ring_db();
  sqlite3_stmt *p = prepare(db, LOCATE);
  check(step_key(p, 3), "closed", "the row before the close");
  check(sqlite3_close_v2(db)==SQLITE_OK, "closed", "sqlite3_close_v2");
  check(row_is(p, 3, azWant), "closed", "the row after the close");
  sqlite3_finalize(p);

  /* The hold given back (the connection's spare) when it closes. */
  db = ring_db();
  p = prepare(db, LOCATE);
  check(step_key(p, 4), "closed", "the row of a statement reset");
  sqlite3_reset(p);
  check(sqlite3_close_v2(db)==SQLITE_OK, "closed", "sqlite3_close_v2");
  sqlite3_finalize(p);
}

/* The chash module dropped while a statement holds a ring: its hold is
** given back at reset, after the connection's state was to be freed. */
static void case_dropped(void){
  sqlite3 *db = open_db();
  sqlite3_stmt *p = prepare(db, "SELECT ch_locate(?1, "
                                "'{\"nodes\":[\"a\",\"b\",\"c\"],"
                                "\"vnodes\":20}')");
  check(step_key(p, 5), "dropped", "the row before the drop");
  check(sqlite3_drop_modules(db, NULL)==SQLITE_OK, "dropped",
        "sqlite3_drop_modules");
  check(row_is(p, 5, azWant), "dropped", "the row after the drop");
  sqlite3_reset(p);
  sqlite3_finalize(p);
  sqlite3_close(db);
}

/* The modules dropped with no chash table connected, then chash's
** functions called: they hold the connection's state themselves. And
** chash's functions replaced one by one by the application's and the
** modules dropped, with a hold kept as the connection's spare: the last
** of them takes the state with it, and a statement prepared before runs
** the application's function. */
static void noop_text(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, "app", 3, SQLITE_STATIC);
}

static void case_functions_outlive_modules(void){
  sqlite3 *db = open_db();
  /* Every module but SQLite's json_each, which reads an inline ring. */
  static const char *azKeep[] = { "json_each", NULL };
  check(sqlite3_drop_modules(db, azKeep)==SQLITE_OK, "modules dropped",
        "sqlite3_drop_modules");
  sqlite3_stmt *p = prepare(db, "SELECT ch_locate(?1, "
                                "'{\"nodes\":[\"a\",\"b\",\"c\"],"
                                "\"vnodes\":20}')");
  for(int k=1; k<=NKEY; k++){
    check(step_key(p, k), "modules dropped", "a row of ch_locate");
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  /* json_each dropped too: a spec not read before cannot be read, and the
  ** error says why (it said out of memory). */
  check(sqlite3_drop_modules(db, NULL)==SQLITE_OK, "modules dropped",
        "sqlite3_drop_modules of json_each");
  p = prepare(db, "SELECT ch_locate(1, '{\"nodes\":[\"x\",\"y\"]}')");
  check(sqlite3_step(p)==SQLITE_ERROR
        && strstr(sqlite3_errmsg(db), "ch_locate: JSON ring spec: SQLite "
                  "cannot read JSON here: no such table: json_each")!=NULL,
        "modules dropped", "without json_each, the error names it");
  sqlite3_finalize(p);
  check(sqlite3_prepare_v2(db, "SELECT * FROM ch_points('{\"nodes\":[\"a\"]}')",
                           -1, &p, NULL)!=SQLITE_OK, "modules dropped",
        "ch_points is gone with its module");
  sqlite3_finalize(p);
  sqlite3_close(db);

  db = ring_db();
  p = prepare(db, LOCATE);
  check(step_key(p, 2), "replaced", "the row before the replacement");
  sqlite3_reset(p);
  static const struct { const char *zName; int nArg; } aFunc[] = {
    { "ch_locate", 1 }, { "ch_locate", 2 }, { "ch_moved", 3 },
    { "ch_hash", 1 }, { "ch_hash", 2 }, { "ch_keyslot", 1 },
    { "ch_epoch", 0 }, { "ch_epoch", 1 }, { "ch_version", 0 },
    { "ch_check", 0 }, { "ch_check", 1 }, { "ch_tally", 1 },
    { "ch_tally", 2 }, { "ch_flows", 3 }, { "ch_config", 2 },
    { "ch_config", 3 }, { "ch_export", 2 }, { "ch_export", 3 },
  };
  for(size_t i=0; i<sizeof(aFunc)/sizeof(aFunc[0]); i++){
    check(sqlite3_create_function(db, aFunc[i].zName, aFunc[i].nArg,
                                  SQLITE_UTF8, NULL, noop_text, NULL,
                                  NULL)==SQLITE_OK, "replaced",
          "sqlite3_create_function over chash's");
  }
  check(sqlite3_drop_modules(db, NULL)==SQLITE_OK, "replaced",
        "sqlite3_drop_modules");
  sqlite3_bind_int(p, 1, 2);
  check(sqlite3_step(p)==SQLITE_ROW
        && strcmp((const char *)sqlite3_column_text(p, 0), "app")==0,
        "replaced", "the statement runs the application's ch_locate");
  sqlite3_finalize(p);
  sqlite3_close(db);
}

/* chash loaded again on a connection that has it: with its modules kept,
** a success that changes nothing (its rings still place keys); with them
** dropped, an error that says so, not a success with no ring table. */
static void case_load_again(void){
  sqlite3 *db = ring_db();
  char *zErr = NULL;
  static const char *azKeep[] = { "chash", "chash_txn", NULL };
  check(sqlite3_drop_modules(db, azKeep)==SQLITE_OK, "load again",
        "sqlite3_drop_modules keeping chash's");
  check(sqlite3_load_extension(db, zExt, "sqlite3_chash_init",
                               &zErr)==SQLITE_OK, "load again",
        "a second load with the modules kept");
  sqlite3_free(zErr);
  zErr = NULL;
  sqlite3_stmt *p = prepare(db, LOCATE);
  check(step_key(p, 3), "load again", "a row after the second load");
  sqlite3_finalize(p);
  check(sqlite3_drop_modules(db, NULL)==SQLITE_OK, "load again",
        "sqlite3_drop_modules");
  check(sqlite3_load_extension(db, zExt, "sqlite3_chash_init",
                               &zErr)!=SQLITE_OK
        && zErr && strstr(zErr, "chash: loaded on this connection already, "
                          "and its modules were dropped since")!=NULL,
        "load again", "a load after the modules were dropped fails, saying why");
  sqlite3_free(zErr);
  sqlite3_close(db);
}

/* Two statements alive at once, reset in either order, again and again:
** one takes the connection's spare, the other a hold of its own. */
static void case_two(void){
  sqlite3 *db = ring_db();
  sqlite3_stmt *pA = prepare(db, LOCATE);
  sqlite3_stmt *pB = prepare(db, "SELECT ch_locate(?1, 'r') AS b");
  for(int i=0; i<6; i++){
    int kA = 1 + i, kB = NKEY - i;
    check(step_key(pA, kA), "two", "the first statement's row");
    check(step_key(pB, kB), "two", "the second statement's row");
    check(row_is(pA, kA, azWant), "two", "the first's row, the second out");
    sqlite3_reset(i%2 ? pA : pB);
    sqlite3_reset(i%2 ? pB : pA);
  }
  sqlite3_finalize(pA);
  sqlite3_finalize(pB);
  sqlite3_close(db);
}

/* A scan reset after a few rows, then run to its end. */
static void case_reset_mid_scan(void){
  sqlite3 *db = ring_db();
  sqlite3_stmt *p = prepare(db, SCAN);
  for(int i=0; i<4; i++){
    int k = 1, bOk = 1;
    for(; k<=3 && sqlite3_step(p)==SQLITE_ROW; k++) bOk &= row_is(p, k, azWant);
    check(bOk && k==4, "reset mid-scan", "the first rows");
    sqlite3_reset(p);
    for(k=1; sqlite3_step(p)==SQLITE_ROW; k++) bOk &= row_is(p, k, azWant);
    check(bOk && k==NKEY+1, "reset mid-scan", "the whole scan");
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  sqlite3_close(db);
}

/* Node d added while a scan is half done, and r resolved again by another
** statement (the connection's caches then hold the new ring only): the
** scan keeps the ring it started with, the other sees d. */
static void case_changed_mid_scan(void){
  sqlite3 *db = ring_db();
  sqlite3_stmt *pScan = prepare(db, SCAN);
  sqlite3_stmt *pOne = prepare(db, LOCATE);
  int k = 1, bOk = 1;
  for(; k<=5 && sqlite3_step(pScan)==SQLITE_ROW; k++){
    bOk &= row_is(pScan, k, azWant);
  }
  exec(db, "INSERT INTO r(node) VALUES ('d')");
  for(int j=1; j<=NKEY; j++){
    sqlite3_bind_int(pOne, 1, j);
    bOk &= sqlite3_step(pOne)==SQLITE_ROW && row_is(pOne, j, azWantD);
    sqlite3_reset(pOne);
  }
  check(bOk, "changed mid-scan", "the rows before, and the new ring's");
  check(row_is(pScan, 5, azWant), "changed mid-scan",
        "the scan's row, after the ring changed");
  for(; sqlite3_step(pScan)==SQLITE_ROW; k++) bOk &= row_is(pScan, k, azWant);
  check(bOk && k==NKEY+1, "changed mid-scan", "the rest of the scan");
  sqlite3_finalize(pScan);
  sqlite3_finalize(pOne);
  sqlite3_close(db);
}

/* The text of the one row of zSql (NULL if it has none or fails), in zOut
** (16 bytes). */
static const char *one_row(sqlite3 *db, const char *zSql, int k, char *zOut){
  sqlite3_stmt *p = prepare(db, zSql);
  sqlite3_bind_int(p, 1, k);
  const char *z = NULL;
  if( sqlite3_step(p)==SQLITE_ROW && sqlite3_column_text(p, 0) ){
    snprintf(zOut, 16, "%s", sqlite3_column_text(p, 0));
    z = zOut;
  }
  sqlite3_finalize(p);
  return z;
}

/* ch_moved(k, 'r@1', 'r') run twice (the second statement takes the first's
** rings), then node d added: the next statement resolves both again and
** tells the moved keys, which the inline rings say. */
static void case_kept_moved(void){
  sqlite3 *db = ring_db();
  const char *zMoved = "SELECT ch_moved(?1, 'r@1', 'r')";
  char z[16];
  int bOk = 1;
  for(int k=1; k<=NKEY; k++){
    bOk &= one_row(db, zMoved, k, z) && strcmp(z, "0")==0;
    bOk &= one_row(db, zMoved, k, z) && strcmp(z, "0")==0;
  }
  check(bOk, "kept moved", "no key moves between a ring and itself");
  exec(db, "INSERT INTO r(node) VALUES ('d')");
  for(int k=1; k<=NKEY; k++){
    const char *zWant = strcmp(azWant[k], azWantD[k]) ? "1" : "0";
    bOk &= one_row(db, zMoved, k, z) && strcmp(z, zWant)==0;
    bOk &= one_row(db, LOCATE, k, z) && strcmp(z, azWantD[k])==0;
  }
  check(bOk, "kept moved", "after d is added: the moves to d, d's keys");
  sqlite3_close(db);
}

/* The default ring, used by two statements, then a schema attached that
** already has a ring (made by another connection): attaching changes no
** count of changes and no data version of main, only the schemas, and the
** default ring is then ambiguous. */
static void case_kept_attached(void){
  const char *zAux = "file:holds_kept_aux?mode=memory&cache=shared";
  sqlite3 *dbAux = open_uri(zAux);
  exec(dbAux, "CREATE VIRTUAL TABLE s USING chash; "
              "INSERT INTO s(node) VALUES ('x')");
  sqlite3 *db = ring_db();
  char z[16];
  int bOk = 1;
  for(int k=1; k<=NKEY; k++){
    bOk &= one_row(db, "SELECT ch_locate(?1)", k, z)
        && strcmp(z, azWant[k])==0;
  }
  check(bOk, "kept attached", "the default ring before the attach");
  char *zSql = sqlite3_mprintf("ATTACH '%q' AS aux", zAux);
  exec(db, zSql);
  sqlite3_free(zSql);
  sqlite3_stmt *p = prepare(db, "SELECT ch_locate(1)");
  check(sqlite3_step(p)==SQLITE_ERROR
        && strstr(sqlite3_errmsg(db), "2 rings, so name one")!=NULL,
        "kept attached", "after the attach: two rings, none the default");
  sqlite3_finalize(p);
  sqlite3_close(db);
  sqlite3_close(dbAux);
}

/* Each allocation of a statement failing in turn while another statement
** holds the connection's spare: SQLITE_NOMEM, and the statement works
** when run again. */
static void case_nomem(void){
  sqlite3 *db = ring_db();
  sqlite3_stmt *pA = prepare(db, LOCATE);
  sqlite3_stmt *pB = prepare(db, "SELECT ch_locate(?1, 'r') AS b");
  int bOk = 1, bDone = 0, nFailed = 0;
  for(int i=1; i<200 && !bDone; i++){
    bOk &= step_key(pA, 2);
    sqlite3_bind_int(pB, 1, 7);
    nCall = nHit = 0;
    iFail = i;
    int rc = sqlite3_step(pB);
    iFail = 0;
    if( nHit==0 ){
      bDone = 1;
      bOk &= rc==SQLITE_ROW && row_is(pB, 7, azWant);
    }else{
      nFailed++;
      bOk &= rc==SQLITE_NOMEM || rc==SQLITE_ROW;
      if( rc==SQLITE_ROW ) bOk &= row_is(pB, 7, azWant);
    }
    sqlite3_reset(pB);
    sqlite3_reset(pA);
    bOk &= step_key(pB, 7);
    sqlite3_reset(pB);
  }
  check(bOk && bDone && nFailed>0, "nomem", "SQLITE_NOMEM, then the row");
  sqlite3_finalize(pA);
  sqlite3_finalize(pB);
  sqlite3_close(db);
}

/* Every allocation of the load failing in turn: a load that fails leaves
** nothing of chash registered (SQLite unloads the library, so a function,
** a module or a destructor left behind would run code that is gone, at
** the latest in sqlite3_close), and loading again then works. */
static void case_load_fails(void){
  int bOk = 1, bDone = 0, nFailed = 0;
  for(int i=1; i<2000 && !bDone; i++){
    sqlite3 *db;
    char *zErr = NULL;
    if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) exit(2);
    sqlite3_enable_load_extension(db, 1);
    nCall = nHit = 0;
    iFail = i;
    int rc = sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr);
    iFail = 0;
    sqlite3_free(zErr);
    zErr = NULL;
    if( nHit==0 ) bDone = 1;
    if( rc!=SQLITE_OK ){
      nFailed++;
      bOk &= sqlite3_load_extension(db, zExt, "sqlite3_chash_init",
                                    &zErr)==SQLITE_OK;
      sqlite3_free(zErr);
    }
    sqlite3_stmt *p = NULL;
    if( sqlite3_prepare_v2(db, "SELECT ch_locate(4, '{\"nodes\":[\"a\","
                           "\"b\",\"c\"],\"vnodes\":20}') FROM "
                           "ch_points('{\"nodes\":[\"a\"]}') LIMIT 1",
                           -1, &p, NULL)!=SQLITE_OK ){
      bOk = 0;
    }else{
      bOk &= sqlite3_step(p)==SQLITE_ROW && row_is(p, 4, azWant);
    }
    sqlite3_finalize(p);
    bOk &= sqlite3_close(db)==SQLITE_OK;
  }
  check(bOk && bDone && nFailed>0, "load fails",
        "a failed load leaves nothing, and the next load works");
}

int main(int argc, char **argv){
  if( argc!=2 ){
    fprintf(stderr, "usage: %s EXTENSION\n", argv[0]);
    return 2;
  }
  zExt = argv[1];
  faultInstall();
  owners_of("[\"a\",\"b\",\"c\"]", azWant);
  owners_of("[\"a\",\"b\",\"c\",\"d\"]", azWantD);
  int nMoved = 0;
  for(int k=1; k<=NKEY; k++) nMoved += strcmp(azWant[k], azWantD[k])!=0;
  check(nMoved>0, "keys", "some key moves to d (else a stale ring passes)");
  case_closed();
  case_dropped();
  case_functions_outlive_modules();
  case_load_again();
  case_two();
  case_reset_mid_scan();
  case_changed_mid_scan();
  case_kept_moved();
  case_kept_attached();
  case_nomem();
  case_load_fails();
  printf("holds: %d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

/*
** bench.c: the chash benchmark (make bench). Not a test: it only measures.
**
** Usage: tests/bench/bench [--ext PATH] [--reps N] [--rows N]
**
** It builds its own data in an in-memory database (a users table of
** --rows rows, 1,000,000 by default, and rings of 10 to 1,000 nodes),
** loads the extension (./chash.so), and runs each group of competing
** measurements alternately, --reps times (default 5), in this one process,
** so that they share the machine's state; times are the thread's CPU time.
** It prints the median of each and the ratios between them: absolute times
** vary between machines, the ratios are the figures to track
** (docs/performance.md).
**
** The ring core sections (lookups/s, builds, bytes per point) link the
** core's sources directly (no SQLite), with a counting allocator. Built
** with -DBENCH_LIBMEMCACHED (the Makefile does when libmemcached-dev is
** installed), it also races libmemcached's memcached_generate_hash on the
** same ketama ring.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <sqlite3.h>
#ifdef BENCH_LIBMEMCACHED
#include <libmemcached-1.0/memcached.h>
#endif

#include "algo.h"
#include "options.h"
#include "ring_index.h"

/* The scan every per-row query runs, a slice of users at a time. */
#define SCAN "FROM users WHERE id>?1 AND id<=?2"

static int nReps = 5;
static int nRows = 1000000;

/* CPU time of this thread: time the machine spends on other processes
** (tests, fuzzers, other benchmarks) does not count. */
static double now_ns(void){
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec*1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b){
  double x = *(const double *)a, y = *(const double *)b;
  return (x>y) - (x<y);
}

static double median(double *a, int n){
  qsort(a, n, sizeof(double), cmp_double);
  return n%2 ? a[n/2] : (a[n/2-1] + a[n/2]) / 2;
}

static void die(sqlite3 *db, const char *zWhat){
  fprintf(stderr, "bench: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql){
  char *zErr = NULL;
  if( sqlite3_exec(db, zSql, NULL, NULL, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "bench: %s\n  in: %.200s\n", zErr, zSql);
    exit(1);
  }
}

/* Run zSql (one statement) to the end; the first column of its last row. */
static sqlite3_int64 run(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt;
  sqlite3_int64 v = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)!=SQLITE_OK ) die(db, zSql);
  int rc;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ) v = sqlite3_column_int64(pStmt, 0);
  if( rc!=SQLITE_DONE ) die(db, zSql);
  sqlite3_finalize(pStmt);
  return v;
}

/* The no-ops the per-row figures are measured against: one returning an
** INTEGER, one a short TEXT as ch_locate does (a node name, not copied). */
static void noop_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  (void)argv;
  sqlite3_result_int(ctx, 1);
}

static void noop_text_func(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, "node-0042", 9, SQLITE_STATIC);
}

/*
** The floor of section 8: what SQLite's interface charges a one-row
** statement of ch_locate(key, spec) (two arguments) or ch_moved(key, old,
** new) (three) beyond ch_hash(key), with no work of chash's own (no hash,
** no lookup, no cache): each spec argument read and its auxdata asked
** for, the statement's auxdata asked for and set once (its destructor run
** at reset), main's state read once (its file name, temp's, the write
** transaction, the data version) and the connection's token for each spec (its change count, its schemas), and
** the result set as ch_locate's (a node name, not copied) or ch_moved's.
*/
static void hold_done(void *p){
  (void)p;
}

static void hold_floor_func(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  static int aHold[1];
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  unsigned nVersion = 0;
  int bSettled = 1;
  for(int i=1; i<argc; i++){
    if( sqlite3_get_auxdata(ctx, i) ) continue;
    bSettled &= sqlite3_value_text(argv[i])!=NULL
             && sqlite3_value_bytes(argv[i])>0;
    if( sqlite3_get_auxdata(ctx, -1)==NULL && i==1 ){
      const char *zFile = sqlite3_db_filename(db, NULL);
      bSettled &= zFile!=NULL && zFile[0]==0
               && sqlite3_db_filename(db, "temp")==NULL
               && sqlite3_txn_state(db, NULL)!=SQLITE_TXN_WRITE
               && sqlite3_file_control(db, NULL, SQLITE_FCNTL_DATA_VERSION,
                                       &nVersion)==SQLITE_OK;
      sqlite3_set_auxdata(ctx, -1, aHold, hold_done);
    }
    bSettled &= sqlite3_total_changes64(db)>=0
             && sqlite3_db_name(db, 1)!=NULL && sqlite3_db_name(db, 2)==NULL;
  }
  if( argc>2 ){
    sqlite3_result_int(ctx, bSettled);
  }else{
    sqlite3_result_text(ctx, bSettled ? "node-0042" : "node-0043", 9,
                        SQLITE_STATIC);
  }
}

/* A memory read a row, for the floor of section 12: read_far(id) reads
** one random 16-bit entry of 16 MiB (the size of a 10,000-node ring's owner
** table, in huge pages as the ring's arrays are), read_near(id) the same of
** 64 KiB, which stays in the L1 and L2 caches; both return a short TEXT
** that depends on what they read, as ch_locate's does. */
typedef struct read_array { uint16_t *a; int bits; } read_array;

static void read_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  const read_array *r = sqlite3_user_data(ctx);
  uint64_t x = (uint64_t)sqlite3_value_int64(argv[0]) * 0x9E3779B97F4A7C15ull;
  uint16_t v = r->a[x >> (64 - r->bits)];
  sqlite3_result_text(ctx, (v & 1) ? "node-0043" : "node-0042", 9,
                      SQLITE_STATIC);
}

static void register_read(sqlite3 *db, const char *zName, int bits){
  static read_array arrays[2];
  read_array *r = &arrays[bits>16];
  if( r->a==NULL ){
    size_t n = (size_t)2 << bits;
    r->a = aligned_alloc(2u << 20, n < (2u << 20) ? (2u << 20) : n);
    if( r->a==NULL ){ fprintf(stderr, "bench: out of memory\n"); exit(1); }
    madvise(r->a, n, MADV_HUGEPAGE);
    for(size_t i=0; i<n/2; i++) r->a[i] = (uint16_t)(i * 2654435761u >> 7);
    r->bits = bits;
  }
  sqlite3_create_function(db, zName, 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, r,
                          read_func, NULL, NULL);
}

static sqlite3 *open_db(const char *zExt){
  sqlite3 *db;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) die(db, "open");
  sqlite3_enable_load_extension(db, 1);
  char *zErr = NULL;
  if( sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr)!=SQLITE_OK ){
    fprintf(stderr, "bench: cannot load %s: %s\n", zExt, zErr);
    exit(1);
  }
  sqlite3_create_function(db, "noop", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                          noop_func, NULL, NULL);
  sqlite3_create_function(db, "noop_text", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                          NULL, noop_text_func, NULL, NULL);
  sqlite3_create_function(db, "hold_floor", -1, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                          NULL, hold_floor_func, NULL, NULL);
  register_read(db, "read_far", 23);
  register_read(db, "read_near", 15);
  return db;
}

/* Ring table zName with nNode nodes node-0000.. (one transaction). */
static void make_ring(sqlite3 *db, const char *zName, int nNode){
  char *zSql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE \"%w\" USING chash(vnodes=160);"
      "WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM s WHERE x<%d)"
      " INSERT INTO \"%w\"(node) SELECT printf('node-%%04d', x) FROM s",
      zName, nNode-1, zName);
  exec(db, zSql);
  sqlite3_free(zSql);
}

/*
** Time each of the n queries in azSql (which scan users WHERE id>?1 AND
** id<=?2) over all rows, reps times, and store the median ns per row of
** each in aNs. The queries take turns on slices of NSLICE rows' worth, so
** that other load on the machine falls on all of them alike.
*/
#define NSLICE 20
static void time_queries(sqlite3 *db, const char *const *azSql, int n,
                         double *aNs){
  sqlite3_stmt **aStmt = calloc(n, sizeof(*aStmt));
  double (*a)[64] = calloc(n, sizeof(*a));
  for(int i=0; i<n; i++){
    if( sqlite3_prepare_v2(db, azSql[i], -1, &aStmt[i], NULL)!=SQLITE_OK ){
      die(db, azSql[i]);
    }
  }
  for(int r=0; r<nReps; r++){
    for(int slice=0; slice<NSLICE; slice++){
      sqlite3_int64 lo = (sqlite3_int64)nRows*slice/NSLICE;
      sqlite3_int64 hi = (sqlite3_int64)nRows*(slice+1)/NSLICE;
      for(int i=0; i<n; i++){
        int k = (i + slice + r) % n;          /* rotate who goes first */
        sqlite3_stmt *pStmt = aStmt[k];
        sqlite3_bind_int64(pStmt, 1, lo);
        sqlite3_bind_int64(pStmt, 2, hi);
        double t0 = now_ns();
        while( sqlite3_step(pStmt)==SQLITE_ROW ){}
        if( sqlite3_reset(pStmt)!=SQLITE_OK ) die(db, azSql[k]);
        a[k][r] += now_ns() - t0;
      }
    }
  }
  for(int i=0; i<n; i++){
    for(int r=0; r<nReps; r++) a[i][r] /= nRows;
    aNs[i] = median(a[i], nReps);
    sqlite3_finalize(aStmt[i]);
  }
  free(a);
  free(aStmt);
}

static const char *verdict(int ok){ return ok ? "PASS" : "FAIL"; }

/* --------------------------------------------- 1-3: SQL per-row cost */

static void bench_per_row(sqlite3 *db){
  static const int aNode[] = { 10, 100, 1000 };
  printf("\n## 1. Per-row cost of a %d-row scan, ns/row (median of %d)\n\n",
         nRows, nReps);
  printf("| nodes | points | no-op | no-op TEXT | ch_hash | ch_locate |"
         " locate/hash | locate/no-op TEXT |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for(int i=0; i<3; i++){
    char *az[4];
    az[0] = sqlite3_mprintf("SELECT count(noop(id)) " SCAN);
    az[1] = sqlite3_mprintf("SELECT count(noop_text(id)) " SCAN);
    az[2] = sqlite3_mprintf("SELECT count(ch_hash(id)) " SCAN);
    az[3] = sqlite3_mprintf("SELECT count(ch_locate(id, 'r%d')) " SCAN,
                            aNode[i]);
    double ns[4];
    time_queries(db, (const char *const *)az, 4, ns);
    double toHash = ns[3]/ns[2], toText = ns[3]/ns[1];
    printf("| %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n",
           aNode[i], aNode[i]*160, ns[0], ns[1], ns[2], ns[3], toHash, toText);
    if( aNode[i]==100 ){
      printf("\ntarget at 100 nodes: locate/hash <= 1.3: %.2f %s;"
             " locate/no-op TEXT <= 1.6: %.2f %s\n\n", toHash,
             verdict(toHash<=1.3), toText, verdict(toText<=1.6));
    }
    for(int k=0; k<4; k++) sqlite3_free(az[k]);
  }

  printf("\n## 2. ch_locate vs the pure-SQL ring (points table + correlated"
         " subquery), ns/row\n\n");
  printf("| nodes | points | pure SQL | ch_locate | speedup | target >= 10 |\n"
         "|---:|---:|---:|---:|---:|---|\n");
  for(int i=0; i<3; i++){
    int n = aNode[i];
    char *z = sqlite3_mprintf(
        "CREATE TABLE p%d(token INTEGER PRIMARY KEY, node TEXT);"
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<160)"
        " INSERT OR IGNORE INTO p%d SELECT ch_hash(node||'#'||i), node"
        " FROM r%d, s", n, n, n);
    exec(db, z);
    sqlite3_free(z);
    /* Signed token order is the same circle cut elsewhere: the successor
    ** is the same point, wrapping to the smallest token. */
    char *az[2];
    az[0] = sqlite3_mprintf(
        "SELECT count(coalesce((SELECT node FROM p%d WHERE token>=ch_hash(u.id)"
        " ORDER BY token LIMIT 1), (SELECT node FROM p%d ORDER BY token LIMIT 1)))"
        " FROM users u WHERE id>?1 AND id<=?2", n, n);
    az[1] = sqlite3_mprintf("SELECT count(ch_locate(id, 'r%d')) " SCAN, n);
    z = sqlite3_mprintf(
        "SELECT count(*) FROM users u WHERE id<=100000 AND ch_locate(id, 'r%d')"
        " IS NOT coalesce((SELECT node FROM p%d WHERE token>=ch_hash(u.id)"
        " ORDER BY token LIMIT 1), (SELECT node FROM p%d ORDER BY token LIMIT 1))",
        n, n, n);
    sqlite3_int64 nDiff = run(db, z);
    sqlite3_free(z);
    if( nDiff ) printf("(!) pure SQL and ch_locate disagree on %lld keys\n",
                       (long long)nDiff);
    double ns[2];
    time_queries(db, (const char *const *)az, 2, ns);
    printf("| %d | %d | %.1f | %.1f | %.1fx | %s |\n", n, n*160, ns[0], ns[1],
           ns[0]/ns[1], verdict(ns[0]/ns[1]>=10));
    sqlite3_free(az[0]);
    sqlite3_free(az[1]);
  }
  printf("\n(the two agree on the owner of every one of the first 100,000"
         " keys)\n");

  printf("\n## 3. ch_moved(id, 'mv@1', 'mv@2') vs ch_locate(id, 'mv'),"
         " ns/row (mv: 100 nodes, then 101)\n\n");
  make_ring(db, "mv", 100);
  exec(db, "INSERT INTO mv(node) VALUES ('node-new')");
  {
    const char *az[2] = {
      "SELECT count(ch_moved(id, 'mv@1', 'mv@2')) " SCAN,
      "SELECT count(ch_locate(id, 'mv')) " SCAN,
    };
    double ns[2];
    time_queries(db, az, 2, ns);
    printf("| ch_moved | ch_locate | moved/locate | target <= 1.3 |\n"
           "|---:|---:|---:|---|\n| %.1f | %.1f | %.2f | %s |\n",
           ns[0], ns[1], ns[0]/ns[1], verdict(ns[0]/ns[1]<=1.3));
  }
}

/* ------------------------------- 9: the routers' algorithms per row */

/* The algorithms that reproduce a router or client library (those whose
** descriptor says what it reproduces, in registry order), each timed next
** to ketama: ch_locate ns/row on rings of 10 and 100 nodes node-0000..,
** each with its own defaults. One line per algorithm. */
#define MAX_ROUTER_ALGO 64

static int router_algos(const char **azName){
  int n = 0;
  for(int i=0; ring_algos[i] && n<MAX_ROUTER_ALGO; i++){
    if( ring_algos[i]->doc.reproduces ) azName[n++] = ring_algos[i]->name;
  }
  return n;
}

static void bench_routers(sqlite3 *db){
  static const int aNode[] = { 10, 100 };
  printf("\n## 9. Router algorithms: ch_locate, ns/row (median of %d)\n\n",
         nReps);
  printf("| algorithm | 10 nodes | 100 nodes | /ketama at 100 |\n"
         "|---|---:|---:|---:|\n");
  const char *azRouterAlgo[MAX_ROUTER_ALGO];
  int nAlgo = router_algos(azRouterAlgo);
  int iKetama = 0;
  for(int a=0; a<nAlgo; a++){
    if( strcmp(azRouterAlgo[a], "ketama")==0 ) iKetama = a;
  }
  double aNs[2][MAX_ROUTER_ALGO];
  for(int i=0; i<2; i++){
    char *az[MAX_ROUTER_ALGO] = { 0 };
    for(int a=0; a<nAlgo; a++){
      /* Columns a node must have (cassandra's tokens) take the value
      ** the descriptor gives as an example for node number x+1. */
      char *zCols = sqlite3_mprintf("%s", "");
      char *zVals = sqlite3_mprintf("%s", "");
      const ring_column *col = ring_algorithm_from_name(azRouterAlgo[a])->columns;
      for(; col && col->name && zCols && zVals; col++){
        if( !col->required || !col->example ) continue;
        char *zC = sqlite3_mprintf("%z, \"%w\"", zCols, col->name);
        char *zV = sqlite3_mprintf("%z, printf(%Q, x+1)", zVals,
                                   col->example);
        zCols = zC;
        zVals = zV;
      }
      if( zCols==NULL || zVals==NULL ) die(NULL, "out of memory");
      char *zSql = sqlite3_mprintf(
          "CREATE VIRTUAL TABLE \"rt_%s_%d\" USING chash(algorithm=%s);"
          "WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM s"
          " WHERE x<%d) INSERT INTO \"rt_%s_%d\"(node%s)"
          " SELECT printf('node-%%04d', x)%s FROM s",
          azRouterAlgo[a], aNode[i], azRouterAlgo[a], aNode[i]-1,
          azRouterAlgo[a], aNode[i], zCols, zVals);
      sqlite3_free(zCols);
      sqlite3_free(zVals);
      exec(db, zSql);
      sqlite3_free(zSql);
      az[a] = sqlite3_mprintf("SELECT count(ch_locate(id, 'rt_%s_%d')) " SCAN,
                              azRouterAlgo[a], aNode[i]);
    }
    time_queries(db, (const char *const *)az, nAlgo, aNs[i]);
    for(int a=0; a<nAlgo; a++) sqlite3_free(az[a]);
  }
  for(int a=0; a<nAlgo; a++){
    printf("| %s | %.1f | %.1f | %.2f |\n", azRouterAlgo[a], aNs[0][a],
           aNs[1][a], aNs[1][a]/aNs[1][iKetama]);
  }
}

/* ---------------------------------- 7: inline JSON spec vs named ring */

static void bench_inline_json(sqlite3 *db){
  printf("\n## 7. Inline JSON spec vs named ring (the same 100 nodes),"
         " ns/row\n\n");
  {
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_str_appendall(s, "SELECT count(ch_locate(id, '{\"vnodes\":160,"
                             "\"nodes\":[");
    for(int i=0; i<100; i++){
      sqlite3_str_appendf(s, "%s\"node-%04d\"", i ? "," : "", i);
    }
    sqlite3_str_appendall(s, "]}')) " SCAN);
    char *zJson = sqlite3_str_finish(s);
    const char *az[2] = {
      zJson, "SELECT count(ch_locate(id, 'r100')) " SCAN,
    };
    double ns[2];
    time_queries(db, az, 2, ns);
    printf("| inline JSON | named | json/named | target ~1.0 (<= 1.1) |\n"
           "|---:|---:|---:|---|\n| %.1f | %.1f | %.2f | %s |\n",
           ns[0], ns[1], ns[0]/ns[1], verdict(ns[0]/ns[1]<=1.1));
    sqlite3_free(zJson);
  }
}

/* ------------------------------------- 8: one-row statements */

/*
** Time each of the n statements in ap (one row each, taking one integer
** parameter), nStmt executions apiece per repetition, the statements
** taking turns; the median us per statement of each into aUs. bBegin[i]:
** statement i runs inside BEGIN ... COMMIT on db.
*/
static void time_statements(sqlite3 *db, sqlite3_stmt **ap, const int *bBegin,
                            int n, int nStmt, double *aUs){
  double (*a)[64] = calloc(n, sizeof(*a));
  for(int r=0; r<nReps; r++){
    for(int j=0; j<n; j++){
      int k = (j + r) % n;                   /* rotate who goes first */
      if( bBegin[k] ) exec(db, "BEGIN");
      double t0 = now_ns();
      for(int i=0; i<nStmt; i++){
        sqlite3_bind_int(ap[k], 1, 1 + i % 1000);
        if( sqlite3_step(ap[k])!=SQLITE_ROW ) die(sqlite3_db_handle(ap[k]), sqlite3_sql(ap[k]));
        sqlite3_reset(ap[k]);
      }
      a[k][r] = (now_ns() - t0) / nStmt / 1e3;
      if( bBegin[k] ) exec(db, "COMMIT");
    }
  }
  for(int i=0; i<n; i++) aUs[i] = median(a[i], nReps);
  free(a);
}

/*
** A database file of its own (removed at the end) with ring r (100 nodes)
** and an ordinary table t of 1,000 rows: the one-row statement a router
** runs against the one-row read any table costs in a file, where knowing
** the ring is current takes the read transaction such a read takes.
*/
static sqlite3 *open_file_db(const char *zExt, char *zPath){
  sqlite3 *db;
  remove(zPath);
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) die(db, "open");
  sqlite3_enable_load_extension(db, 1);
  char *zErr = NULL;
  if( sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr)!=SQLITE_OK ){
    fprintf(stderr, "bench: cannot load %s: %s\n", zExt, zErr);
    exit(1);
  }
  make_ring(db, "r", 100);
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);"
           "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s"
           " WHERE x<1000) INSERT INTO t SELECT x, 'name-'||x FROM s");
  return db;
}

/*
** The cost of a statement that places one key, as an application asking
** "where does key K live?" runs it: prepared once, then bound, stepped and
** reset. The spec resolves to the ring the connection remembers, checked
** with one kept query of the ring's stamp (spec.c: fast_get), which in
** memory costs what a one-row table read costs, and in a file the read
** transaction a table read takes. Ratios against ch_hash (in memory) and
** a one-row SELECT from a table (in a file), with their targets.
*/
static void bench_statements(sqlite3 *db, const char *zExt){
  enum { NSTMT = 2000, NMEM = 6 };
  static const char *const azMem[NMEM] = {
    "SELECT ch_hash(?1)",
    "SELECT ch_locate(?1, 'r100')",
    "SELECT ch_moved(?1, 'r100@1', 'r100')",
    "SELECT ch_locate(?1, 'r100')",
    "SELECT hold_floor(?1, 'r100')",
    "SELECT hold_floor(?1, 'r100@1', 'r100')",
  };
  static const int bMemBegin[NMEM] = { 0, 0, 0, 1, 0, 0 };
  static const char *const azFile[2] = {
    "SELECT name FROM t WHERE id=?1",
    "SELECT ch_locate(?1, 'r')",
  };
  static const int bFileBegin[2] = { 0, 0 };
  printf("\n## 8. One-row statements (prepared once; bind, step, reset),"
         " us/statement (median of %d x %d)\n\n", nReps, NSTMT);
  sqlite3_stmt *ap[NMEM];
  double usMem[NMEM], usFile[2];
  for(int i=0; i<NMEM; i++){
    if( sqlite3_prepare_v2(db, azMem[i], -1, &ap[i], NULL)!=SQLITE_OK ){
      die(db, azMem[i]);
    }
  }
  time_statements(db, ap, bMemBegin, NMEM, NSTMT, usMem);
  for(int i=0; i<NMEM; i++) sqlite3_finalize(ap[i]);

  char zDir[] = "/tmp/chash-bench-XXXXXX";
  if( mkdtemp(zDir)==NULL ){
    fprintf(stderr, "bench: cannot make a directory in /tmp\n");
    exit(1);
  }
  char *zPath = sqlite3_mprintf("%s/one-row.db", zDir);
  sqlite3 *pFile = open_file_db(zExt, zPath);
  for(int i=0; i<2; i++){
    if( sqlite3_prepare_v2(pFile, azFile[i], -1, &ap[i], NULL)!=SQLITE_OK ){
      die(pFile, azFile[i]);
    }
  }
  time_statements(pFile, ap, bFileBegin, 2, NSTMT, usFile);
  for(int i=0; i<2; i++) sqlite3_finalize(ap[i]);
  sqlite3_close(pFile);
  remove(zPath);
  char *zJournal = sqlite3_mprintf("%s-journal", zPath);
  remove(zJournal);
  sqlite3_free(zJournal);
  sqlite3_free(zPath);
  rmdir(zDir);

  printf("| statement | us |\n|---|---:|\n");
  for(int i=0; i<NMEM; i++){
    printf("| `%s`%s, in memory | %.2f |\n", azMem[i],
           bMemBegin[i] ? " inside BEGIN ... COMMIT" : "", usMem[i]);
  }
  for(int i=0; i<2; i++){
    printf("| `%s`, in a file | %.2f |\n", azFile[i], usFile[i]);
  }
  double locate = usMem[1]/usMem[0], moved = usMem[2]/usMem[0];
  double file = usFile[1]/usFile[0];
  /* hold_floor: SQLite's interface alone, ch_hash's work left out. */
  printf("\n| ratio | figure | target | | SQLite's calls alone (hold_floor) / ch_hash |\n"
         "|---|---:|---:|---|---:|\n");
  printf("| ch_locate / ch_hash, in memory | %.2f | <= 2.0 | %s | %.2f |\n",
         locate, verdict(locate<=2.0), usMem[4]/usMem[0]);
  printf("| ch_moved / ch_hash, in memory | %.2f | <= 3.0 | %s | %.2f |\n",
         moved, verdict(moved<=3.0), usMem[5]/usMem[0]);
  printf("| ch_locate / one-row table SELECT, in a file | %.2f | <= 1.5 | %s | |\n",
         file, verdict(file<=1.5));
}

/* ---------------------------------------------- 5: build through SQL */

static void bench_build_sql(sqlite3 *db){
  printf("\n## 5. Build through SQL: 1,000 nodes in one transaction + first"
         " lookup, then one more node + first lookup, ms (median of %d)\n\n",
         nReps);
  double *aFirst = calloc(nReps, sizeof(double));
  double *aSecond = calloc(nReps, sizeof(double));
  double *aLook1 = calloc(nReps, sizeof(double));
  double *aLook2 = calloc(nReps, sizeof(double));
  for(int r=0; r<nReps; r++){
    char *zCreate = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE b%d USING chash(vnodes=160)", r);
    char *zFill = sqlite3_mprintf(
        "BEGIN;"
        "WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM s WHERE x<999)"
        " INSERT INTO b%d(node) SELECT printf('node-%%04d', x) FROM s;"
        "COMMIT", r);
    char *zAdd = sqlite3_mprintf("INSERT INTO b%d(node) VALUES ('node-new')", r);
    char *zLook = sqlite3_mprintf("SELECT ch_locate(1, 'b%d')", r);
    exec(db, zCreate);
    double t0 = now_ns();
    exec(db, zFill);
    double t1 = now_ns();
    run(db, zLook);
    double t2 = now_ns();
    exec(db, zAdd);
    double t3 = now_ns();
    run(db, zLook);
    double t4 = now_ns();
    aFirst[r] = (t2-t0)/1e6;
    aLook1[r] = (t2-t1)/1e6;
    aSecond[r] = (t4-t2)/1e6;
    aLook2[r] = (t4-t3)/1e6;
    sqlite3_free(zCreate);
    sqlite3_free(zFill);
    sqlite3_free(zAdd);
    sqlite3_free(zLook);
  }
  double first = median(aFirst, nReps), second = median(aSecond, nReps);
  printf("| step | total | of which the first lookup (ring build) |\n"
         "|---|---:|---:|\n"
         "| insert 1,000 nodes + first lookup | %.2f | %.2f |\n"
         "| insert 1 node + first lookup | %.2f | %.2f |\n",
         first, median(aLook1, nReps), second, median(aLook2, nReps));
  printf("\nsecond/first: %.3f (target <= 0.1) %s\n", second/first,
         verdict(second/first<=0.1));
  free(aFirst);
  free(aSecond);
  free(aLook1);
  free(aLook2);
}

/* ---------------------------------------- 11: commits and history */

/* Commit n versions of ring zName: node n1 renamed to x and back. */
static void add_history(sqlite3 *db, const char *zName, int n){
  char *zTo = sqlite3_mprintf("UPDATE \"%w\" SET node='x' WHERE node='n1'",
                              zName);
  char *zBack = sqlite3_mprintf("UPDATE \"%w\" SET node='n1' WHERE node='x'",
                                zName);
  for(int i=0; i<n; i++) exec(db, i%2 ? zBack : zTo);
  sqlite3_free(zTo);
  sqlite3_free(zBack);
}

/* Ring zName of nNode nodes n1.. (one version) under chash(zArgs). */
static void make_ring_of(sqlite3 *db, const char *zName, const char *zArgs,
                         int nNode){
  char *zSql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE \"%w\" USING chash(%s);"
      "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<%d)"
      " INSERT INTO \"%w\"(node) SELECT 'n' || x FROM s",
      zName, zArgs, nNode, zName);
  exec(db, zSql);
  sqlite3_free(zSql);
}

/* Median ms a commit of a rename on ring zName (over 100 of them). */
static double commit_ms(sqlite3 *db, const char *zName){
  double *a = calloc(nReps, sizeof(double));
  for(int r=0; r<nReps; r++){
    double t0 = now_ns();
    add_history(db, zName, 100);
    a[r] = (now_ns() - t0) / 100 / 1e6;
  }
  double ms = median(a, nReps);
  free(a);
  return ms;
}

/* Median ms of ch_check on ring zName. */
static double check_ms(sqlite3 *db, const char *zName){
  double *a = calloc(nReps, sizeof(double));
  char *zSql = sqlite3_mprintf("SELECT ch_check(%Q) = 'ok'", zName);
  for(int r=0; r<nReps; r++){
    double t0 = now_ns();
    if( run(db, zSql)!=1 ) die(db, "ch_check is not ok");
    a[r] = (now_ns() - t0) / 1e6;
  }
  double ms = median(a, nReps);
  sqlite3_free(zSql);
  free(a);
  return ms;
}

static void bench_history(const char *zExt){
  enum { SHORT = 2000, LONG = 20000, BIG = 10000 };
  sqlite3 *db = open_db(zExt);
  printf("\n## 11. Commits and history, ms (median of %d)\n\n", nReps);

  /* A commit's cost against the length of the history. */
  printf("| commit of one rename, 50 nodes | after %d commits | after %d |"
         " ratio |\n|---|---:|---:|---:|\n", SHORT, LONG);
  static const char *const azAlgo[] = { "jump", "ketama", "ring" };
  double worst = 0.0;
  for(int i=0; i<3; i++){
    char *zArgs = sqlite3_mprintf("algorithm=%s", azAlgo[i]);
    char *zName = sqlite3_mprintf("h_%s", azAlgo[i]);
    make_ring_of(db, zName, zArgs, 50);
    add_history(db, zName, SHORT);
    double shortMs = commit_ms(db, zName);
    add_history(db, zName, LONG - SHORT);
    double longMs = commit_ms(db, zName);
    printf("| %s | %.3f | %.3f | %.2f |\n", azAlgo[i], shortMs, longMs,
           longMs/shortMs);
    if( longMs/shortMs>worst ) worst = longMs/shortMs;
    sqlite3_free(zArgs);
    sqlite3_free(zName);
  }
  printf("\nworst ratio: %.2f (target <= 1.5: a commit does not grow with"
         " the history) %s\n", worst, verdict(worst<=1.5));

  /* ch_check: the history once, not versions x nodes. */
  make_ring_of(db, "c5", "vnodes=160", 5);
  add_history(db, "c5", LONG);
  make_ring_of(db, "c50", "vnodes=160", 50);
  add_history(db, "c50", LONG);
  double c5 = check_ms(db, "c5"), c50 = check_ms(db, "c50");
  printf("\nch_check after %d commits: 5 nodes %.1f ms, 50 nodes %.1f ms;"
         " 50/5: %.2f (target <= 2; a build per version made it 3.6) %s\n",
         LONG, c5, c50, c50/c5, verdict(c50/c5<=2.0));

  /* One node joins a 10,000-node ring, then the next lookup builds: ring
  ** first (the others' measure), then jump and every points algorithm. */
  printf("\n| %d nodes: INSERT one node | INSERT | next ch_locate | both |"
         " / ring | target <= 3 |\n|---|---:|---:|---:|---:|---|\n", BIG);
  static const char *const azBig[] = {
    "ring", "ketama", "jump", "nginx", "hashring", "haproxy", "dubbo",
    "envoy_ring", "groupcache", "dalli" };
  enum { N_BIG = sizeof(azBig)/sizeof(azBig[0]) };
  double both[N_BIG];
  int nPass = 0;
  for(int i=0; i<N_BIG; i++){
    char *zArgs = sqlite3_mprintf("algorithm=%s", azBig[i]);
    char *zName = sqlite3_mprintf("big_%s", azBig[i]);
    char *zAdd = sqlite3_mprintf("INSERT INTO \"%w\"(node) VALUES ('new')",
                                 zName);
    char *zDel = sqlite3_mprintf("DELETE FROM \"%w\" WHERE node='new'", zName);
    char *zLook = sqlite3_mprintf("SELECT ch_locate(1, %Q)", zName);
    make_ring_of(db, zName, zArgs, BIG);
    run(db, zLook);
    double *aIns = calloc(nReps, sizeof(double));
    double *aLook = calloc(nReps, sizeof(double));
    for(int r=0; r<nReps; r++){
      double t0 = now_ns();
      exec(db, zAdd);
      double t1 = now_ns();
      run(db, zLook);
      double t2 = now_ns();
      aIns[r] = (t1-t0)/1e6;
      aLook[r] = (t2-t1)/1e6;
      exec(db, zDel);                 /* jump: the last node leaves */
      run(db, zLook);
    }
    double ins = median(aIns, nReps), look = median(aLook, nReps);
    both[i] = ins + look;
    int ok = both[i]/both[0]<=3.0;
    nPass += ok;
    printf("| %s | %.2f | %.2f | %.2f | %.2f | %s |\n", azBig[i], ins, look,
           both[i], both[i]/both[0], i ? verdict(ok) : "");
    free(aIns);
    free(aLook);
    sqlite3_free(zArgs);
    sqlite3_free(zName);
    sqlite3_free(zAdd);
    sqlite3_free(zDel);
    sqlite3_free(zLook);
  }
  printf("\nketama/ring: %.2f (target <= 3) %s; jump/ring: %.2f (target <= 3)"
         " %s; every algorithm: %d of %d within 3x %s\n", both[1]/both[0],
         verdict(both[1]/both[0]<=3.0), both[2]/both[0],
         verdict(both[2]/both[0]<=3.0), nPass - 1, N_BIG - 1,
         verdict(nPass==N_BIG));
  sqlite3_close(db);
}

/* ------------------------------------------------ 12: big rings */

/*
** Per-row ch_locate on a 10,000-node ring against a 100-node ring of the
** same algorithm, in whole-table scans that take turns (time_queries):
** a 10,000-node ring (1.6M points) does not fit a 2 MB L2, so a row costs
** at least one memory round trip, where the 100-node ring's arrays stay
** in cache.
*/
static void bench_big_rings(sqlite3 *db){
  static const char *const azAlgo[] = { "ring", "ketama", "nginx" };
  printf("\n## 12. Big rings: per-row ch_locate at 10,000 nodes and at 100,"
         " ns/row (median of %d)\n\n", nReps);
  /* The floor: a 10,000-node ring does not fit the cache, so a row pays
  ** at least one memory read more than at 100 nodes. */
  const char *const azRead[2] = { "SELECT count(read_near(id)) " SCAN,
                                  "SELECT count(read_far(id)) " SCAN };
  double read[2];
  time_queries(db, azRead, 2, read);
  double one_read = read[1] - read[0];
  printf("One random read of 16 MiB a row costs %.1f ns more than one of 64 "
         "KiB (%.1f against %.1f ns/row): the floor is the 100-node row plus "
         "that.\n\n", one_read, read[1], read[0]);
  printf("| algorithm | 100 nodes | 10,000 nodes | 10,000/100 | floor |"
         " target <= 2.5 |\n|---|---:|---:|---:|---:|---|\n");
  for(int i=0; i<3; i++){
    char *zSmall = sqlite3_mprintf("big100_%s", azAlgo[i]);
    char *zBig = sqlite3_mprintf("big10k_%s", azAlgo[i]);
    char *zArgs = sqlite3_mprintf("algorithm=%s", azAlgo[i]);
    make_ring_of(db, zSmall, zArgs, 100);
    make_ring_of(db, zBig, zArgs, 10000);
    char *az[2];
    az[0] = sqlite3_mprintf("SELECT count(ch_locate(id, %Q)) " SCAN, zSmall);
    az[1] = sqlite3_mprintf("SELECT count(ch_locate(id, %Q)) " SCAN, zBig);
    double ns[2];
    time_queries(db, (const char *const *)az, 2, ns);
    printf("| %s | %.1f | %.1f | %.2f | %.2f | %s |\n", azAlgo[i], ns[0],
           ns[1], ns[1]/ns[0], (ns[0]+one_read)/ns[0],
           verdict(ns[1]/ns[0]<=2.5));
    sqlite3_free(az[0]);
    sqlite3_free(az[1]);
    sqlite3_free(zSmall);
    sqlite3_free(zBig);
    sqlite3_free(zArgs);
  }
}

/* ------------------------------------------- 6: memory through SQLite */

static void bench_memory_sql(const char *zExt){
  sqlite3 *db = open_db(zExt);
  make_ring(db, "warm", 1);
  run(db, "SELECT ch_locate(1, 'warm')");
  make_ring(db, "m", 1000);
  sqlite3_int64 before = sqlite3_memory_used();
  run(db, "SELECT ch_locate(1, 'm')");   /* builds and caches the ring */
  sqlite3_int64 after = sqlite3_memory_used();
  double per = (double)(after-before) / (1000*160);
  printf("\n## 6. Memory of a built ring, 1,000 nodes x 160 = 160,000 points\n\n"
         "sqlite3_memory_used() grows by %lld bytes when the ring is built and"
         " cached: %.2f bytes/point (target <= 16) %s\n",
         (long long)(after-before), per, verdict(per<=16));
  sqlite3_close(db);
}

/* ------------------------------- 4, 5b: the ring core alone (no SQLite) */

/* A counting allocator: a size header before each block. */
static size_t nLive = 0;

static void *count_malloc(size_t n){
  size_t *p = malloc(n + 16);
  if( p==NULL ) return NULL;
  *p = n;
  nLive += n;
  return (char *)p + 16;
}

static void count_free(void *p){
  if( p==NULL ) return;
  size_t *h = (size_t *)((char *)p - 16);
  nLive -= *h;
  free(h);
}

static uint64_t rng_state = 42;

static uint64_t rnd(void){
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Where lookup results go, so that the compiler keeps the lookups. */
static volatile uint32_t sink;

static ring_input *make_inputs(int n){
  ring_input *a = calloc((size_t)n, sizeof(ring_input));  /* no columns */
  for(int i=0; i<n; i++){
    char *z = malloc(16);
    a[i].name_len = (uint32_t)snprintf(z, 16, "node-%06d", i);
    a[i].name = z;
    a[i].weight = 1.0;
    a[i].id = i+1;
  }
  return a;
}

static void free_inputs(ring_input *a, int n){
  for(int i=0; i<n; i++) free((char *)a[i].name);
  free(a);
}

static void bench_core(void){
  static const int aNode[] = { 10, 100, 1000, 10000, 100000 };
  enum { NKEY = 1 << 22 };
  uint64_t *aKey = malloc(sizeof(uint64_t) * NKEY);
  for(int i=0; i<NKEY; i++) aKey[i] = rnd();
  ring_config cfg;
  ring_config_default(&cfg);
  ring_set_allocator(count_malloc, count_free);

  printf("\n## 4. Ring core (C, no SQLite): lookups of random positions,"
         " millions/s (median of %d x %d lookups)\n\n", nReps, NKEY);
  printf("| nodes | points | bytes/point | full build ms | index M/s |"
         " binary search M/s | index/bsearch |\n"
         "|---:|---:|---:|---:|---:|---:|---:|\n");
  for(int i=0; i<5; i++){
    ring_input *aIn = make_inputs(aNode[i]);
    char zErr[200];
    ring *r = NULL;
    double tb = now_ns();
    if( ring_build(&cfg, aIn, aNode[i], &r, zErr, sizeof(zErr))!=RING_OK ){
      fprintf(stderr, "bench: ring_build: %s\n", zErr);
      exit(1);
    }
    tb = (now_ns() - tb) / 1e6;
    /* What ring_lookup did before the index: the same ring without it,
    ** which ring_lookup searches with a binary search over all points. */
    ring plain = *r;
    plain.index = NULL;
    plain.owner_due = 0;
    /* A scan of a big or small ring makes its owner table after a few of
    ** its lookups (ring_index.c): made here, outside the timing, and
    ** counted in the ring's bytes. */
    if( r->owner_due ) ring_index_owner_table(r);
    double perPoint = (double)nLive / r->n_points;
    double a[2][64] = {{0}};
    for(int rep=0; rep<nReps; rep++){
      for(int slice=0; slice<NSLICE; slice++){
        const uint64_t *aK = aKey + (size_t)NKEY/NSLICE*slice;
        for(int k=0; k<2; k++){
          int which = (k + slice + rep) % 2;
          uint32_t s = 0;
          double t0 = now_ns();
          if( which==0 ){
            for(int j=0; j<NKEY/NSLICE; j++) s += ring_lookup(r, aK[j]);
          }else{
            for(int j=0; j<NKEY/NSLICE; j++) s += ring_lookup(&plain, aK[j]);
          }
          a[which][rep] += now_ns() - t0;
          sink += s;
        }
      }
      for(int k=0; k<2; k++) a[k][rep] = NKEY / (a[k][rep] / 1e3);  /* M/s */
    }
    double mIdx = median(a[0], nReps), mBs = median(a[1], nReps);
    printf("| %d | %u | %.2f | %.1f | %.1f | %.1f | %.2f |\n", aNode[i],
           r->n_points, perPoint, tb, mIdx, mBs, mIdx/mBs);
    ring_release(r);
    free_inputs(aIn, aNode[i]);
  }
  printf("\nbytes/point: everything the ring holds (positions, owners, index,"
         " owner table where it has one, nodes, names) / points.\n");

  ring_set_allocator(malloc, free);
  free(aKey);
}

static void bench_core_builds(void){
  ring_config cfg;
  ring_config_default(&cfg);
  printf("\n## 5b. Ring core: full build vs incremental build"
         " (ring_build_from the previous ring), ms (median of %d)\n\n", nReps);
  printf("| change | full build | incremental | incremental/full |\n"
         "|---|---:|---:|---:|\n");
  {
    ring_input *aIn = make_inputs(1001);
    char zErr[200];
    ring *base = NULL;
    ring_build(&cfg, aIn, 1000, &base, zErr, sizeof(zErr));
    static const char *azChange[] = {
      "add 1 node to 1,000", "remove 1 node of 1,000", "reweight 1 node of 1,000"
    };
    for(int c=0; c<3; c++){
      uint32_t n = c==1 ? 999 : c==0 ? 1001 : 1000;
      aIn[0].weight = c==2 ? 2.0 : 1.0;
      double a[2][64];
      for(int rep=0; rep<nReps; rep++){
        for(int k=0; k<2; k++){
          int which = (k + rep) % 2;
          ring *r = NULL;
          double t0 = now_ns();
          ring_build_from(which ? base : NULL, &cfg, aIn, n, &r, zErr,
                          sizeof(zErr));
          a[which][rep] = (now_ns() - t0) / 1e6;
          ring_release(r);
        }
      }
      double full = median(a[0], nReps), inc = median(a[1], nReps);
      printf("| %s | %.2f | %.2f | %.3f |\n", azChange[c], full, inc, inc/full);
    }
    ring_release(base);
    free_inputs(aIn, 1001);
  }
}

/* ------------------------- 4b: ketama, chash's core vs libmemcached */

#ifdef BENCH_LIBMEMCACHED
/*
** libmemcached cannot hold the target's 1,000 servers: every rebuild of its
** ketama continuum (update_continuum in hosts.cc, run by each
** memcached_server_add_with_weight, by memcached_server_push of a whole list
** and by setting the distribution) asserts
**   memcached_server_count(ptr) * MEMCACHED_POINTS_PER_SERVER
**     <= MEMCACHED_CONTINUUM_SIZE
** with MEMCACHED_POINTS_PER_SERVER 100 and MEMCACHED_CONTINUUM_SIZE 100 x
** 100 (defaults.h: "This would then set max hosts to 100"), whatever the
** points per server really are (160 in weighted mode), and Debian builds it
** without NDEBUG, so the 101st server aborts the process. The 1,000-server
** ring is timed in chash alone.
*/
enum { KETAMA_NK = 1 << 20, LM_MAX_SERVERS = 100 };
static const int aKetamaServers[] = { 10, 100, 1000 };
#define N_KETAMA_RINGS (int)(sizeof(aKetamaServers)/sizeof(aKetamaServers[0]))

typedef struct ketama_ring {
  int nServer;
  ring *r;               /* chash's ring of the servers */
  memcached_st *memc;    /* libmemcached's, NULL past LM_MAX_SERVERS */
  uint32_t *aByAdd;      /* libmemcached's server index -> r's node index */
} ketama_ring;

/* Servers 10.0.x.y:11211, weight 1, in both; libmemcached names a server on
** the default port by its host alone, and so does chash's node name. */
static void ketama_ring_open(ketama_ring *k, int nServer){
  k->nServer = nServer;
  ring_input *aIn = calloc((size_t)nServer, sizeof(ring_input));
  memcached_server_list_st list = NULL;
  for(int i=0; i<nServer; i++){
    char *z = malloc(32);
    snprintf(z, 32, "10.0.%d.%d", i/250, i%250 + 1);
    aIn[i].name = z;
    aIn[i].name_len = (uint32_t)strlen(z);
    aIn[i].weight = 1.0;
    aIn[i].id = i+1;
    if( nServer<=LM_MAX_SERVERS ){
      memcached_return_t rc;
      list = memcached_server_list_append_with_weight(list, z, 11211, 1, &rc);
      if( rc!=MEMCACHED_SUCCESS ){
        fprintf(stderr, "bench: memcached_server_list_append_with_weight failed\n");
        exit(1);
      }
    }
  }
  ring_config cfg;
  ring_config_default(&cfg);
  options_set_algorithm(&cfg, ring_algorithm_from_name("ketama"));
  cfg.hash = HASH_MD5;
  char zErr[200];
  if( ring_build(&cfg, aIn, nServer, &k->r, zErr, sizeof(zErr))!=RING_OK ){
    fprintf(stderr, "bench: ketama ring_build: %s\n", zErr);
    exit(1);
  }
  k->memc = NULL;
  k->aByAdd = NULL;
  if( list ){
    /* One push builds the continuum once (adding servers one by one
    ** rebuilds it after each). */
    k->memc = memcached_create(NULL);
    memcached_behavior_set(k->memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    if( memcached_server_push(k->memc, list)!=MEMCACHED_SUCCESS ){
      fprintf(stderr, "bench: memcached_server_push failed\n");
      exit(1);
    }
    memcached_server_list_free(list);
    /* libmemcached answers with an add-order index, chash with a
    ** name-order one. */
    k->aByAdd = malloc(sizeof(uint32_t) * nServer);
    for(int i=0; i<nServer; i++){
      k->aByAdd[i] = (uint32_t)ring_find_node(k->r, aIn[i].name, aIn[i].name_len);
    }
  }
  for(int i=0; i<nServer; i++) free((char *)aIn[i].name);
  free(aIn);
}

static void ketama_ring_close(ketama_ring *k){
  ring_release(k->r);
  if( k->memc ) memcached_free(k->memc);
  free(k->aByAdd);
}

/*
** Keys lo..hi-1 to servers on ring k, by chash's core or (isLm)
** libmemcached; with k NULL, only the key's MD5 of either (nettle's or
** libhashkit's). The sum of the answers, so none is optimized away.
*/
static uint32_t ketama_slice(const ketama_ring *k, int isLm,
                             const char (*aKey)[16], const uint8_t *aLen,
                             int lo, int hi){
  uint32_t sum = 0;
  if( k && isLm ){
    for(int i=lo; i<hi; i++) sum += memcached_generate_hash(k->memc, aKey[i], aLen[i]);
  }else if( k ){
    for(int i=lo; i<hi; i++){
      sum += ring_lookup(k->r, hash_bytes(HASH_MD5, 0, aKey[i], aLen[i]));
    }
  }else if( isLm ){
    for(int i=lo; i<hi; i++){
      sum += memcached_generate_hash_value(aKey[i], aLen[i], MEMCACHED_HASH_MD5);
    }
  }else{
    for(int i=lo; i<hi; i++) sum += (uint32_t)hash_bytes(HASH_MD5, 0, aKey[i], aLen[i]);
  }
  return sum;
}

static void bench_ketama(void){
  /* Weighted ketama gives each server 4 x floor(40 x weight share x
  ** servers) points, in float arithmetic: 160 at weight 1, but 156 at 100
  ** servers (40 x 1/100 x 100 comes out just below 40), so the rows print
  ** the rings' real point counts. */
  printf("\n## 4b. Ketama (weight 1, MD5): key -> server,"
         " chash's core vs libmemcached's memcached_generate_hash, millions of"
         " keys/s (median of %d x %d keys)\n\n", nReps, KETAMA_NK);
  ketama_ring aRing[N_KETAMA_RINGS];
  for(int i=0; i<N_KETAMA_RINGS; i++) ketama_ring_open(&aRing[i], aKetamaServers[i]);
  char (*aKey)[16] = malloc(sizeof(*aKey) * KETAMA_NK);
  uint8_t *aLen = malloc(KETAMA_NK);
  for(int i=0; i<KETAMA_NK; i++){
    aLen[i] = (uint8_t)snprintf(aKey[i], 16, "user-%d", i);
  }

  /* A race between two programs that disagree would mean nothing: check
  ** both the key hash and the server of every key. */
  int nDiff = 0, nCheck = 0;
  for(int i=0; i<KETAMA_NK; i++){
    uint32_t h = (uint32_t)hash_bytes(HASH_MD5, 0, aKey[i], aLen[i]);
    nDiff += h!=memcached_generate_hash_value(aKey[i], aLen[i], MEMCACHED_HASH_MD5);
    nCheck++;
    for(int j=0; j<N_KETAMA_RINGS; j++){
      const ketama_ring *k = &aRing[j];
      if( k->memc==NULL ) continue;
      nDiff += k->aByAdd[memcached_generate_hash(k->memc, aKey[i], aLen[i])]
               != ring_lookup(k->r, h);
      nCheck++;
    }
  }

  /*
  ** Contender 2j is chash on ring j and 2j+1 libmemcached (skipped where it
  ** has no ring); the last pair is the key's MD5 alone. All take turns on
  ** slices of the keys.
  */
  enum { NC = 2*N_KETAMA_RINGS + 2 };
  double a[NC][64] = {{0}};
  for(int rep=0; rep<nReps; rep++){
    for(int slice=0; slice<NSLICE; slice++){
      int lo = KETAMA_NK/NSLICE*slice, hi = KETAMA_NK/NSLICE*(slice+1);
      for(int c=0; c<NC; c++){
        int which = (c + slice + rep) % NC;
        const ketama_ring *k = which/2<N_KETAMA_RINGS ? &aRing[which/2] : NULL;
        int isLm = which%2;
        if( k && isLm && k->memc==NULL ) continue;
        double t0 = now_ns();
        sink += ketama_slice(k, isLm, aKey, aLen, lo, hi);
        a[which][rep] += now_ns() - t0;
      }
    }
  }
  double m[NC];
  for(int c=0; c<NC; c++){
    for(int rep=0; rep<nReps; rep++) a[c][rep] = KETAMA_NK / (a[c][rep] / 1e3);
    m[c] = median(a[c], nReps);
  }

  printf("| servers | points | chash M/s | libmemcached M/s | chash/libmemcached |"
         " target >= 2 |\n|---:|---:|---:|---:|---:|---|\n");
  for(int j=0; j<N_KETAMA_RINGS; j++){
    const ketama_ring *k = &aRing[j];
    if( k->memc ){
      printf("| %d | %u | %.2f | %.2f | %.2f | %s |\n", k->nServer,
             k->r->n_points, m[2*j], m[2*j+1], m[2*j]/m[2*j+1],
             verdict(m[2*j]/m[2*j+1]>=2));
    }else{
      printf("| %d | %u | %.2f | - | - | - |\n", k->nServer, k->r->n_points,
             m[2*j]);
    }
  }
  int h = 2*N_KETAMA_RINGS;
  printf("| key MD5 only | | %.2f | %.2f | %.2f | |\n", m[h], m[h+1], m[h]/m[h+1]);
  printf("\n(they agree on %d of %d key hashes and servers; libmemcached aborts"
         " on a ketama ring of more than %d servers)\n",
         nCheck-nDiff, nCheck, LM_MAX_SERVERS);
  free(aKey);
  free(aLen);
  for(int i=0; i<N_KETAMA_RINGS; i++) ketama_ring_close(&aRing[i]);
}
#else
static void bench_ketama(void){
  printf("\n## 4b. Ketama vs libmemcached: skipped (built without"
         " libmemcached-dev)\n");
}
#endif

/* ----------------------- 10: the aggregates against the GROUP BY queries */

/* ch_tally against a plain ch_locate scan and the GROUP BY it replaces,
** and ch_flows against the GROUP BY of the moved keys, on r100 (and mv,
** 100 nodes then 101, from section 3, made here if section 3 did not
** run). The counts are compared first. */
static void bench_aggregates(sqlite3 *db){
  printf("\n## 10. Aggregates: ch_tally and ch_flows, ns/row\n\n");
  if( run(db, "SELECT count(*) FROM sqlite_schema WHERE name='mv'")==0 ){
    make_ring(db, "mv", 100);
    exec(db, "INSERT INTO mv(node) VALUES ('node-new')");
  }
  sqlite3_int64 nSame = run(db,
      "SELECT (SELECT ch_tally(id, 'r100') FROM users)"
      " = (SELECT json_group_object(node, n) FROM (SELECT ch_locate(id, 'r100')"
      " AS node, count(*) AS n FROM users GROUP BY 1 ORDER BY 1))");
  sqlite3_int64 nSameFlows = run(db,
      "SELECT (SELECT ch_flows(id, 'mv@1', 'mv@2') FROM users)"
      " = (SELECT json_group_array(json_array(s, d, n)) FROM (SELECT"
      " ch_locate(id, 'mv@1') AS s, ch_locate(id, 'mv@2') AS d, count(*) AS n"
      " FROM users WHERE ch_moved(id, 'mv@1', 'mv@2') GROUP BY 1, 2"
      " ORDER BY 1, 2))");
  printf("(counts equal to the GROUP BY's: ch_tally %s, ch_flows %s)\n\n",
         nSame ? "yes" : "NO", nSameFlows ? "yes" : "NO");
  const char *az[5] = {
    "SELECT count(ch_locate(id, 'r100')) " SCAN,
    "SELECT ch_tally(id, 'r100') " SCAN,
    "SELECT ch_locate(id, 'r100') AS n, count(*) " SCAN " GROUP BY n",
    "SELECT ch_flows(id, 'mv@1', 'mv@2') " SCAN,
    "SELECT ch_locate(id, 'mv@1'), ch_locate(id, 'mv@2'), count(*) " SCAN
    " AND ch_moved(id, 'mv@1', 'mv@2') GROUP BY 1, 2",
  };
  double ns[5];
  time_queries(db, az, 5, ns);
  printf("| ch_locate scan | ch_tally | GROUP BY | tally/scan | target <= 1.5 |"
         "\n|---:|---:|---:|---:|---|\n| %.1f | %.1f | %.1f | %.2f | %s |\n\n",
         ns[0], ns[1], ns[2], ns[1]/ns[0], verdict(ns[1]/ns[0]<=1.5));
  printf("| ch_flows | GROUP BY of the moved | GROUP BY/flows |\n"
         "|---:|---:|---:|\n| %.1f | %.1f | %.2fx |\n",
         ns[3], ns[4], ns[4]/ns[3]);
}

int main(int argc, char **argv){
  const char *zExt = "./chash.so";
  int iOnly = 0;                  /* --section N: only that one (1: 1-3) */
  for(int i=1; i<argc; i++){
    if( strcmp(argv[i], "--ext")==0 && i+1<argc ) zExt = argv[++i];
    else if( strcmp(argv[i], "--reps")==0 && i+1<argc ) nReps = atoi(argv[++i]);
    else if( strcmp(argv[i], "--rows")==0 && i+1<argc ) nRows = atoi(argv[++i]);
    else if( strcmp(argv[i], "--section")==0 && i+1<argc ) iOnly = atoi(argv[++i]);
    else{
      fprintf(stderr, "usage: %s [--ext PATH] [--reps N] [--rows N]"
              " [--section 1|4|5|6|7|8|9|10|11|12]\n", argv[0]);
      return 2;
    }
  }
  if( nReps<1 || nReps>64 || nRows<1 ){
    fprintf(stderr, "bench: --reps is 1..64, --rows at least 1\n");
    return 2;
  }
  printf("# chash benchmark: SQLite %s, %d rows, %d repetitions\n",
         sqlite3_libversion(), nRows, nReps);

  sqlite3 *db = open_db(zExt);
  char *z = sqlite3_mprintf(
      "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);"
      "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<%d)"
      " INSERT INTO users SELECT x, 'user-'||x FROM s", nRows);
  exec(db, z);
  sqlite3_free(z);
  make_ring(db, "r10", 10);
  make_ring(db, "r100", 100);
  make_ring(db, "r1000", 1000);

  if( iOnly==0 || iOnly==1 ) bench_per_row(db);
  if( iOnly==0 || iOnly==4 ){
    bench_core();
    bench_ketama();
  }
  if( iOnly==0 || iOnly==5 ){
    bench_build_sql(db);
    bench_core_builds();
  }
  if( iOnly==0 || iOnly==6 ) bench_memory_sql(zExt);
  if( iOnly==0 || iOnly==7 ) bench_inline_json(db);
  if( iOnly==0 || iOnly==8 ) bench_statements(db, zExt);
  if( iOnly==0 || iOnly==9 ) bench_routers(db);
  if( iOnly==0 || iOnly==10 ) bench_aggregates(db);
  if( iOnly==0 || iOnly==11 ) bench_history(zExt);
  if( iOnly==0 || iOnly==12 ) bench_big_rings(db);
  sqlite3_close(db);
  return 0;
}

/*
** tests/harness/crash.c: kill a writer with SIGKILL in the middle of ring changes,
** many rounds, and check what survives.
**
** Usage:   build/crash [--ext PATH] [--rounds N] [--seed N]
**
** Each round forks a writer that changes ring r on one database file in
** transactions (add, remove, reweight, rename nodes; several per
** transaction), forever, and kills it with SIGKILL after a random 1..40 ms.
** Rounds alternate the journal mode: WAL, then rollback (DELETE).
**
** Before each COMMIT the writer sends the parent, through a pipe,
** "P epoch digest" (the version it is committing and a digest of the ring
** as it will be); after it, "C epoch". The digest is ch_hash() of every
** node, weight and points, the history rows and the configuration. After
** the kill, the parent opens the database and checks:
**
**   - PRAGMA integrity_check is ok;
**   - the version is the last one committed, or the one whose commit was
**     under way when the writer died (a commit is atomic: all or nothing);
**   - the ring, its history and its configuration are exactly that version
**     (same digest), and placing keys by 'r' and by 'r@N' agrees.
**
** The exit status is 0 if every round passed.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static const char *zExt = "./chash.so";

/* The state of ring r that must survive: one integer. The stamp changes
** with every change and is rolled back with it, so it is part of it; the
** committed epoch is raised by the COMMIT itself, so it is checked apart. */
static const char zDigestSql[] =
  "SELECT ch_hash(coalesce((SELECT group_concat(node || ':' || weight || ':'"
  " || points, ',') FROM (SELECT * FROM r ORDER BY node)), '')"
  " || '|' || (SELECT group_concat(seq || epoch || op || id || node || weight"
  " || coalesce(old, ''), ',') FROM r_history)"
  " || '|' || (SELECT group_concat(key || value, ',') FROM r_config"
  " WHERE key<>'epoch')),"
  " ch_epoch('r')";

static void die(const char *zWhat, sqlite3 *db){
  fprintf(stderr, "crash: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static sqlite3 *open_db(const char *zPath){
  sqlite3 *db = NULL;
  char *zErr = NULL;
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) die("open", db);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int *)0);
  if( sqlite3_load_extension(db, zExt, "sqlite3_chash_init", &zErr)!=SQLITE_OK ){
    fprintf(stderr, "crash: cannot load %s: %s\n", zExt, zErr);
    exit(1);
  }
  return db;
}

static void exec(sqlite3 *db, const char *zSql){
  if( sqlite3_exec(db, zSql, NULL, NULL, NULL)!=SQLITE_OK ) die(zSql, db);
}

/* The digest and version of ring r as db sees it. */
static void digest(sqlite3 *db, long long *pDigest, long long *pEpoch){
  sqlite3_stmt *pStmt = NULL;
  if( sqlite3_prepare_v2(db, zDigestSql, -1, &pStmt, NULL)!=SQLITE_OK
   || sqlite3_step(pStmt)!=SQLITE_ROW ){
    die("digest", db);
  }
  *pDigest = sqlite3_column_int64(pStmt, 0);
  *pEpoch = sqlite3_column_int64(pStmt, 1);
  sqlite3_finalize(pStmt);
}

/* The writer: transactions of 1..6 random changes, until killed. A change
** that fails (a duplicate name, a node that is not there) is skipped; it
** is an ordinary SQL error and changes nothing. */
static void writer(const char *zPath, int fd, unsigned seed){
  sqlite3 *db = open_db(zPath);
  srand(seed);
  for(;;){
    exec(db, "BEGIN IMMEDIATE");
    int nChange = 1 + rand()%6;
    for(int i=0; i<nChange; i++){
      char *zSql;
      int a = rand()%24, b = rand()%24;
      switch( rand()%4 ){
        case 0: zSql = sqlite3_mprintf("INSERT INTO r(node, weight) VALUES"
                                       " ('n%d', %d)", a, 1 + b%3); break;
        case 1: zSql = sqlite3_mprintf("DELETE FROM r WHERE node='n%d'", a); break;
        case 2: zSql = sqlite3_mprintf("UPDATE r SET weight=%d.5 WHERE"
                                       " node='n%d'", b%4, a); break;
        default: zSql = sqlite3_mprintf("UPDATE r SET node='n%d' WHERE"
                                        " node='n%d'", b, a); break;
      }
      sqlite3_exec(db, zSql, NULL, NULL, NULL);
      sqlite3_free(zSql);
    }
    long long d, e;
    digest(db, &d, &e);
    dprintf(fd, "P %lld %lld\n", e, d);
    exec(db, "COMMIT");
    dprintf(fd, "C %lld\n", e);
  }
}

/* Check the database after the writer died. Returns 0 if all is well. */
static int check(const char *zPath, int round, long long lastC, long long lastCD,
                 long long lastP, long long lastPD){
  sqlite3 *db = open_db(zPath);
  sqlite3_stmt *pStmt = NULL;
  int bad = 0;
  if( sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pStmt, NULL)
      !=SQLITE_OK || sqlite3_step(pStmt)!=SQLITE_ROW ){
    die("integrity_check", db);
  }
  if( strcmp((const char *)sqlite3_column_text(pStmt, 0), "ok")!=0 ){
    fprintf(stderr, "crash: round %d: integrity_check: %s\n", round,
            sqlite3_column_text(pStmt, 0));
    bad = 1;
  }
  sqlite3_finalize(pStmt);

  long long d, e;
  digest(db, &d, &e);
  if( sqlite3_prepare_v2(db, "SELECT value FROM r_config WHERE key='epoch'",
                         -1, &pStmt, NULL)!=SQLITE_OK
   || sqlite3_step(pStmt)!=SQLITE_ROW ){
    die("committed epoch", db);
  }
  if( sqlite3_column_int64(pStmt, 0)!=e ){
    fprintf(stderr, "crash: round %d: r_config says version %lld was "
            "committed, the history ends at %lld\n", round,
            sqlite3_column_int64(pStmt, 0), e);
    bad = 1;
  }
  sqlite3_finalize(pStmt);
  if( !((e==lastC && d==lastCD) || (e==lastP && d==lastPD)) ){
    fprintf(stderr, "crash: round %d: ring at version %lld (digest %lld); "
            "expected version %lld (digest %lld) or, if its commit was under "
            "way, %lld (digest %lld)\n", round, e, d, lastC, lastCD, lastP,
            lastPD);
    bad = 1;
  }
  char *zSql = sqlite3_mprintf(
      "WITH k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i<200)"
      " SELECT count(*) FROM k WHERE (SELECT count(*) FROM r)>0"
      " AND ch_locate(i, 'r') IS NOT ch_locate(i, 'r@%lld')", e);
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)!=SQLITE_OK
   || sqlite3_step(pStmt)!=SQLITE_ROW ){
    die("placement check", db);
  }
  if( sqlite3_column_int(pStmt, 0)!=0 ){
    fprintf(stderr, "crash: round %d: 'r' and 'r@%lld' place %d of 200 keys "
            "differently\n", round, e, sqlite3_column_int(pStmt, 0));
    bad = 1;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_close(db);
  return bad;
}

int main(int argc, char **argv){
  int nRound = 40;
  unsigned seed = (unsigned)time(NULL);
  for(int i=1; i<argc; i++){
    if( strcmp(argv[i], "--ext")==0 && i+1<argc ) zExt = argv[++i];
    else if( strcmp(argv[i], "--rounds")==0 && i+1<argc ) nRound = atoi(argv[++i]);
    else if( strcmp(argv[i], "--seed")==0 && i+1<argc ) seed = (unsigned)atoi(argv[++i]);
    else{
      fprintf(stderr, "usage: %s [--ext PATH] [--rounds N] [--seed N]\n", argv[0]);
      return 2;
    }
  }
  char zDir[] = "/tmp/chash-crash-XXXXXX";
  if( mkdtemp(zDir)==NULL ){ perror("mkdtemp"); return 2; }
  char *zPath = sqlite3_mprintf("%s/crash.db", zDir);

  sqlite3 *db = open_db(zPath);
  exec(db, "CREATE VIRTUAL TABLE r USING chash(vnodes=8);"
           "INSERT INTO r(node) VALUES ('n0'), ('n1'), ('n2')");
  long long lastCD, lastC;
  digest(db, &lastCD, &lastC);
  sqlite3_close(db);

  srand(seed);
  int nBad = 0, nCommits = 0;
  int nInFlight = 0, nKeptInFlight = 0;   /* kills between "P" and "C" */
  for(int round=1; round<=nRound; round++){
    db = open_db(zPath);
    exec(db, round%2 ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
    sqlite3_close(db);

    int fds[2];
    if( pipe(fds) ){ perror("pipe"); return 2; }
    pid_t pid = fork();
    if( pid==0 ){
      close(fds[0]);
      writer(zPath, fds[1], seed + round);
      _exit(0);
    }
    close(fds[1]);
    usleep(1000 * (1 + rand()%40));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    /* Read what the writer said: the last commit done, and any under way. */
    FILE *in = fdopen(fds[0], "r");
    char zLine[100];
    long long lastP = lastC, lastPD = lastCD;
    while( fgets(zLine, sizeof(zLine), in) ){
      long long e, d;
      if( sscanf(zLine, "P %lld %lld", &e, &d)==2 ){ lastP = e; lastPD = d; }
      else if( sscanf(zLine, "C %lld", &e)==1 ){
        lastC = lastP; lastCD = lastPD; nCommits++;
      }
    }
    fclose(in);
    int bInFlight = lastP!=lastC || lastPD!=lastCD;
    nInFlight += bInFlight;
    if( check(zPath, round, lastC, lastCD, lastP, lastPD) ){
      nBad++;
    }else{
      /* Whichever version survived is now the last committed one. */
      db = open_db(zPath);
      digest(db, &lastCD, &lastC);
      sqlite3_close(db);
      nKeptInFlight += bInFlight && lastC==lastP && lastCD==lastPD;
    }
  }
  printf("crash: %d rounds (seed %u), %d transactions committed; %d kills "
         "during a commit (%d of those commits survived, %d rolled back); "
         "%d failed\n", nRound, seed, nCommits, nInFlight, nKeptInFlight,
         nInFlight-nKeptInFlight, nBad);

  char *zRm = sqlite3_mprintf("rm -rf '%s'", zDir);
  if( system(zRm)!=0 ) fprintf(stderr, "crash: cannot remove %s\n", zDir);
  sqlite3_free(zRm);
  sqlite3_free(zPath);
  return nBad>0;
}

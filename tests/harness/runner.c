/*
** tests/harness/runner.c: the sqllogictest runner for the chash extension.
**
** Usage:   build/runner [--ext PATH] [--ht N] [--oom] FILE.test...
**
**   --ext PATH   the extension to load into every connection, with entry
**                point sqlite3_chash_init (default ./chash.so). A runner
**                built with -DCHASH_EMBEDDED has chash linked in (the
**                one-file build, dist/chash.c with -DSQLITE_CORE) and
**                registers it with sqlite3_auto_extension() instead: it
**                takes no --ext.
**   --ht N       the hash-threshold each file starts with (default 0)
**   --oom        test every statement and query record as "oom" does
**                (but ATTACH, DETACH, and records run while a schema is
**                attached: the copy restored after a failure holds main
**                and temp only)
**
** Each FILE.test runs in-process against libsqlite3, on a fresh, empty
** database file in a private temporary directory. The file (and its -wal,
** -shm and -journal companions) is deleted before and after each script.
** A failure is printed as "FILE:LINE: reason", followed by the SQL and,
** where there are any, the expected and actual results, in a form that can
** be pasted back into the script. The last line is
** "N passed, N failed, N skipped", summed over all files; the first line
** names the SQLite it runs on. The exit status
** is 1 if anything failed or a file could not be read, 2 on a usage error.
**
** The format is sqlite.org's sqllogictest, narrowed as in Part F of the
** project's sqllogictest spec:
**
**   Lines end at LF; one trailing CR is dropped. Records are separated by
**   blank (or whitespace-only) lines. A line with '#' in column 0 is a
**   comment and is removed wherever it is, even inside a record.
**
**   statement ok             The SQL must succeed.
**   statement error          The SQL must fail. It may be followed by a
**                            "----" line and lines that must occur, joined
**                            by newlines, in sqlite3_errmsg(); if they end
**                            with '$', the message must end with them.
**   statement error CODE     The same, and the error's primary result code
**                            must be CODE, by name: SQLITE_BUSY,
**                            SQLITE_LOCKED, SQLITE_CORRUPT, ... (an
**                            extension of this project).
**   statement count N        The SQL must succeed and sqlite3_changes() must
**                            then be N.
**                            A statement record runs all its ;-separated
**                            statements in order and stops at the first
**                            error, as sqlite3_exec() does.
**
**   query TYPES [SORT [LABEL]]
**                            One SQL statement, then "----" and the expected
**                            values. TYPES has a letter per result column:
**                            T text, I integer, R real. SORT is nosort (the
**                            default), rowsort or valuesort; it sorts the
**                            actual values only, by strcmp(). Queries with
**                            the same LABEL must give the same values.
**                            The expected values come one per line, or one
**                            row per line with TAB between the columns (more
**                            than one column, every line has a TAB, not
**                            with valuesort), or as the single line
**                            "N values hashing to MD5": the MD5 of every
**                            value followed by a newline.
**
**   hash-threshold N         Failure reports show actual results of more
**                            than N values as a hash line (0: never).
**   halt                     Ends the script.
**   skipif NAME, onlyif NAME Prefixes: skip the record that follows (any
**                            kind) if NAME is, or is not, "sqlite" (in any
**                            case). Only the second word counts.
**
** Values are rendered as in the original: NULL as "NULL"; T as the text
** with every byte outside 0x20..0x7E replaced by '@', and "" as "(empty)";
** I as a 64-bit integer; R with SQLite's own printf, "%.3f".
**
** Extensions for this project (each a single-line record):
**
**   connection NAME          Run the following records on connection NAME,
**                            opened on first use on the same database file.
**                            The first connection is "default".
**   reopen                   Close every connection, reporting statements
**                            left unfinalized as failures, and reopen the
**                            current one on the same file: persistence tests.
**   save NAME                Copy the current connection's main database
**                            (sqlite3_backup) into copy NAME, a file
**                            beside the database, deleted with it.
**   restore NAME             Copy copy NAME over the current connection's
**                            main database (sqlite3_backup into it).
**   attach NAME SCHEMA       ATTACH copy NAME as SCHEMA on the current
**                            connection: copies that diverge by changes
**                            made through it.
**   dbconfig defensive on|off
**                            SQLITE_DBCONFIG_DEFENSIVE on this connection.
**   oom                      Prefix of a statement or query record: first
**                            run its SQL with allocation N failing, for
**                            N = 1, 2, ... until a run hits no fault (every
**                            allocation from N on, then only the Nth). Each
**                            failing run must fail with SQLITE_NOMEM (or
**                            the error the record expects; or, while every
**                            allocation fails, an error whose message SQLite
**                            could not copy), and if the SQL
**                            is one statement or starts with BEGIN, leave
**                            the database exactly as it was (sqlite_schema
**                            and every table's rows, chash tables read
**                            through the extension). The database is
**                            restored from a copy after every run, then the
**                            record runs as usual.
**
** Every allocation goes through a counting wrapper (lookaside is off), so
** allocations still live after sqlite3_shutdown() at exit are reported as
** a leak, and fail the run.
**
** Every connection has the extension loaded and a busy timeout of 2000 ms.
**
** Deliberate deviations from the original (spec F8): I is 64-bit; an error
** while stepping a query fails it, instead of looking like a short result;
** SQL after the first statement of a query is an error, not ignored; the
** hash form is chosen by the expected text, and the threshold only decides
** how failures are printed; "statement ok" with anything after "ok", a
** header with extra words, and a control record followed by more lines are
** parse errors. A parse error counts one failure and abandons the file.
**
** Each executed statement or query record is one test. Skipped records are
** counted as skipped; control records are not counted.
*/
#define _POSIX_C_SOURCE 200809L  /* for mkdtemp() */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/md5.h>
#include <sqlite3.h>
#ifdef CHASH_EMBEDDED
#include "chash.h"
#endif

/* The engine name that skipif and onlyif compare with. */
#define ENGINE_NAME "sqlite"

/* Room for a line "N values hashing to MD5". */
#define HASH_LINE_SIZE 80

/* What a record handler tells the loop over records to do next. */
#define REC_NEXT 0   /* go on with the next record */
#define REC_STOP 1   /* stop the file: halt, a parse error, no connection */

/* Sort modes of a query. */
#define SORT_NONE  0
#define SORT_ROW   1
#define SORT_VALUE 2

/* Totals over all files, for the closing line. */
static int nPass = 0;
static int nFail = 0;
static int nSkip = 0;

/* Command-line settings. */
static const char *zExtension = "./chash.so";
static int iInitialThreshold = 0;

/* A script line, with its 1-based number in the file. */
typedef struct Line Line;
struct Line {
  char *z;          /* the text: "" for a blank line */
  int iLine;        /* line number, for messages */
};

/* A named connection to the script's database. */
typedef struct Conn Conn;
struct Conn {
  char *zName;
  sqlite3 *db;
};

/* The result first seen for a query label. */
typedef struct Label Label;
struct Label {
  char *zName;
  char zHash[HASH_LINE_SIZE];  /* "N values hashing to MD5" */
  int iLine;                   /* the query that recorded it */
};

/* A running script. */
typedef struct Script Script;
struct Script {
  const char *zFile;     /* file name, for messages */
  const char *zDb;       /* the database file */
  Conn *aConn;           /* open connections */
  int nConn;
  int iConn;             /* the current one: always open */
  char **azCopy;         /* files of the copies "save" made */
  int nCopy;
  Label *aLabel;         /* labels seen so far */
  int nLabel;
  int hashThreshold;     /* failure reports hash results above this; 0 never */
};

/* A parsed query record. */
typedef struct Query Query;
struct Query {
  int iLine;             /* line of the header */
  const char *zTypes;    /* one of T, I, R per column */
  int nCol;
  int eSort;             /* SORT_NONE, SORT_ROW or SORT_VALUE */
  const char *zLabel;    /* or NULL */
  char *zSql;
  const char *zHash;     /* expected hash line, or NULL */
  char **azExp;          /* otherwise the expected values, flattened */
  int nExp;
  int nPerLine;          /* values per line when printing results */
};

/* Rendered query results, each allocated by SQLite. */
typedef struct Values Values;
struct Values {
  char **az;
  int n;
  int nAlloc;
};

/* One row, for rowsort. */
typedef struct Row Row;
struct Row {
  char **az;
  int nCol;
};

/* Out of memory is not worth recovering from in a test runner. */
static void noMemory(void){
  fprintf(stderr, "runner: out of memory\n");
  exit(2);
}

static void *oom(void *p){
  if( p==0 ) noMemory();
  return p;
}

static void *safeRealloc(void *p, size_t n){
  return oom(sqlite3_realloc64(p, n));
}

/*
** Report a failure at line iLine of the script (0 for the file as a
** whole) and count it.
*/
static void report(Script *p, int iLine, const char *zPrefix,
                   const char *zFormat, va_list ap){
  if( iLine>0 ){
    printf("%s:%d: %s", p->zFile, iLine, zPrefix);
  }else{
    printf("%s: %s", p->zFile, zPrefix);
  }
  vprintf(zFormat, ap);
  putchar('\n');
  nFail++;
}

__attribute__((format(printf, 3, 4)))
static void fail(Script *p, int iLine, const char *zFormat, ...){
  va_list ap;
  va_start(ap, zFormat);
  report(p, iLine, "", zFormat, ap);
  va_end(ap);
}

/* A parse error fails the file: it returns REC_STOP to end it. */
__attribute__((format(printf, 3, 4)))
static int parseError(Script *p, int iLine, const char *zFormat, ...){
  va_list ap;
  va_start(ap, zFormat);
  report(p, iLine, "parse error: ", zFormat, ap);
  va_end(ap);
  return REC_STOP;
}

/* Print zText under the heading "---- zTitle", or bare if zTitle is NULL. */
static void showText(const char *zTitle, const char *zText){
  if( zTitle ) printf("---- %s\n", zTitle);
  printf("%s\n", zText);
}

/* Print n values under a heading, nPerLine to a line, TAB-separated. */
static void showValues(const char *zTitle, char **az, int n, int nPerLine){
  int i;
  printf("---- %s\n", zTitle);
  for(i=0; i<n; i++){
    printf("%s%c", az[i], (i+1)%nPerLine==0 ? '\n' : '\t');
  }
}

/*
** Parse a non-negative decimal count of at most 9 digits, so that it fits
** an int. Return 0 if z is anything else.
*/
static int parseCount(const char *z, int *pN){
  size_t n = strspn(z, "0123456789");
  if( n==0 || n>9 || z[n]!=0 ) return 0;
  *pN = atoi(z);
  return 1;
}

/*
** Split z in place into whitespace-separated words. Store the first mx of
** them in az[] and return how many there were in all.
*/
static int tokenize(char *z, char **az, int mx){
  int n = 0;
  for(;;){
    while( isspace((unsigned char)*z) ) z++;
    if( *z==0 ) return n;
    if( n<mx ) az[n] = z;
    n++;
    while( *z && !isspace((unsigned char)*z) ) z++;
    if( *z ) *z++ = 0;
  }
}

/* Join n lines with newlines, into memory from sqlite3_malloc(). */
static char *joinLines(Line *a, int n){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  for(i=0; i<n; i++){
    if( i>0 ) sqlite3_str_appendchar(pStr, 1, '\n');
    sqlite3_str_appendall(pStr, a[i].z);
  }
  return oom(sqlite3_str_finish(pStr));
}

/* The index of the first "----" line after the header, or n if none. */
static int findDashes(Line *a, int n){
  int i;
  for(i=1; i<n && strcmp(a[i].z, "----")!=0; i++){}
  return i;
}

/* True if z is exactly "<digits> values hashing to <32 lowercase hex>". */
static int isHashLine(const char *z){
  static const char zMid[] = " values hashing to ";
  size_t n = strspn(z, "0123456789");
  if( n==0 || strncmp(z+n, zMid, sizeof(zMid)-1)!=0 ) return 0;
  z += n + sizeof(zMid) - 1;
  return strspn(z, "0123456789abcdef")==32 && z[32]==0;
}

/*
** Read file zFile and split it into lines, removing comment lines and
** making whitespace-only lines blank. Return the buffer that holds the
** lines (free it after *paLine), or NULL with errno set on error.
*/
static char *readScript(const char *zFile, Line **paLine, int *pnLine){
  FILE *in = fopen(zFile, "rb");
  char *zText = 0;
  size_t nText = 0, nAlloc = 0, nGot;
  char *z, *zEnd;
  Line *aLine = 0;
  int nLine = 0, iLine;
  size_t i;

  if( in==0 ) return 0;
  do{
    if( nText+1>=nAlloc ){
      nAlloc = nAlloc*2 + 4096;
      zText = safeRealloc(zText, nAlloc);
    }
    nGot = fread(zText+nText, 1, nAlloc-nText-1, in);
    nText += nGot;
  }while( nGot>0 );
  if( ferror(in) ){
    int e = errno;
    fclose(in);
    sqlite3_free(zText);
    errno = e;
    return 0;
  }
  fclose(in);
  zText[nText] = 0;

  /* A line per LF, and one more if the last line has no LF. */
  for(i=0; i<nText; i++) nLine += zText[i]=='\n';
  aLine = safeRealloc(0, sizeof(Line)*(nLine+1));
  nLine = 0;
  for(z=zText, iLine=1; z<zText+nText; z=zEnd+1, iLine++){
    size_t n;
    zEnd = memchr(z, '\n', zText+nText-z);
    if( zEnd ){
      *zEnd = 0;
    }else{
      zEnd = zText+nText;
    }
    n = strlen(z);
    if( n>0 && z[n-1]=='\r' ) z[--n] = 0;
    if( z[0]=='#' ) continue;
    while( n>0 && isspace((unsigned char)z[n-1]) ) n--;
    if( n==0 ) z[0] = 0;
    aLine[nLine].z = z;
    aLine[nLine].iLine = iLine;
    nLine++;
  }
  *paLine = aLine;
  *pnLine = nLine;
  return zText;
}

/* Delete the database file zDb and the files SQLite keeps beside it. */
static void deleteDb(const char *zDb){
  static const char *azSuffix[] = { "", "-wal", "-shm", "-journal" };
  size_t i;
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    char *z = oom(sqlite3_mprintf("%s%s", zDb, azSuffix[i]));
    unlink(z);
    sqlite3_free(z);
  }
}

/*
** Open a connection on the script's database with the extension loaded.
** On failure, report it and return NULL.
*/
static sqlite3 *openDb(Script *p, int iLine, const char *zName){
  sqlite3 *db = 0;
  char *zErr = 0;
  int rc;

  rc = sqlite3_open_v2(p->zDb, &db,
                       SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  if( rc==SQLITE_OK ){
    sqlite3_busy_timeout(db, 2000);
#ifndef CHASH_EMBEDDED
    /* This enables the C API only: SQL's load_extension() stays off. */
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int*)0);
    rc = sqlite3_load_extension(db, zExtension, "sqlite3_chash_init", &zErr);
#endif
  }
  if( rc!=SQLITE_OK ){
    fail(p, iLine, "cannot open connection %s with extension %s: %s",
         zName, zExtension, zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_free(zErr);
    sqlite3_close(db);
    return 0;
  }
  return db;
}

/*
** Close a connection. sqlite3_close() refuses while statements are left
** unfinalized (after disconnecting virtual tables), which is how leaks are
** found: each one is a failure. Then sqlite3_close_v2() must succeed.
*/
static void closeDb(Script *p, int iLine, Conn *pConn){
  int rc = sqlite3_close(pConn->db);
  if( rc==SQLITE_BUSY ){
    sqlite3_stmt *pStmt;
    while( (pStmt = sqlite3_next_stmt(pConn->db, 0))!=0 ){
      fail(p, iLine, "connection %s: statement left unfinalized: %s",
           pConn->zName, sqlite3_sql(pStmt));
      sqlite3_finalize(pStmt);
    }
    rc = sqlite3_close_v2(pConn->db);
  }
  if( rc!=SQLITE_OK ){
    fail(p, iLine, "connection %s: close failed: %s",
         pConn->zName, sqlite3_errstr(rc));
  }
}

static void closeAll(Script *p, int iLine){
  int i;
  for(i=0; i<p->nConn; i++){
    closeDb(p, iLine, &p->aConn[i]);
    sqlite3_free(p->aConn[i].zName);
  }
  sqlite3_free(p->aConn);
  p->aConn = 0;
  p->nConn = 0;
  p->iConn = 0;
}

/* Make connection zName current, opening it if need be. */
static int useConnection(Script *p, int iLine, const char *zName){
  sqlite3 *db;
  int i;
  for(i=0; i<p->nConn; i++){
    if( strcmp(p->aConn[i].zName, zName)==0 ){
      p->iConn = i;
      return REC_NEXT;
    }
  }
  db = openDb(p, iLine, zName);
  if( db==0 ) return REC_STOP;
  p->aConn = safeRealloc(p->aConn, sizeof(Conn)*(p->nConn+1));
  p->aConn[p->nConn].zName = oom(sqlite3_mprintf("%s", zName));
  p->aConn[p->nConn].db = db;
  p->iConn = p->nConn++;
  return REC_NEXT;
}

/* Close all connections and reopen the current one. */
static int reopen(Script *p, int iLine){
  char *zName = oom(sqlite3_mprintf("%s", p->aConn[p->iConn].zName));
  int rc;
  closeAll(p, iLine);
  rc = useConnection(p, iLine, zName);
  sqlite3_free(zName);
  return rc;
}

static sqlite3 *currentDb(Script *p){
  return p->aConn[p->iConn].db;
}

/* ------------------------------------------------ out-of-memory testing */

/*
** Every allocation SQLite (and so the extension, which allocates through
** sqlite3_malloc) makes goes through these wrappers. They count live
** allocations, so leaks show at exit, and can fail allocation number
** fault.iFail after arming (and, if bPersist, every one after it).
*/
static sqlite3_mem_methods memReal;

static struct {
  sqlite3_int64 nLive;     /* allocations not yet freed */
  sqlite3_int64 nCall;     /* allocations since the fault was armed */
  sqlite3_int64 iFail;     /* the allocation to fail; 0: disarmed */
  int bPersist;            /* fail every allocation after iFail too */
  int nHit;                /* allocations failed since armed */
} fault;

/* OOM figures for the closing line. */
static sqlite3_int64 nOomRuns = 0;
static int nOomRecords = 0;
static int bOomAll = 0;    /* --oom: every statement and query record */

static int faultNow(void){
  if( fault.iFail==0 ) return 0;
  fault.nCall++;
  if( fault.nCall==fault.iFail || (fault.bPersist && fault.nCall>fault.iFail) ){
    fault.nHit++;
    return 1;
  }
  return 0;
}

static void *faultMalloc(int n){
  void *p;
  if( faultNow() ) return 0;
  p = memReal.xMalloc(n);
  if( p ) fault.nLive++;
  return p;
}

static void faultFree(void *p){
  if( p ) fault.nLive--;
  memReal.xFree(p);
}

static void *faultRealloc(void *p, int n){
  if( faultNow() ) return 0;
  return memReal.xRealloc(p, n);
}

static int faultSize(void *p){ return memReal.xSize(p); }
static int faultRoundup(int n){ return memReal.xRoundup(n); }
static int faultInit(void *pApp){ (void)pApp; return memReal.xInit(memReal.pAppData); }
static void faultShutdown(void *pApp){ (void)pApp; memReal.xShutdown(memReal.pAppData); }

/* Install the wrappers; before SQLite initializes. */
static void faultInstall(void){
  static sqlite3_mem_methods m = {
    faultMalloc, faultFree, faultRealloc, faultSize, faultRoundup,
    faultInit, faultShutdown, 0
  };
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memReal);
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  /* Lookaside would serve small allocations without the wrappers. */
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
}

static void faultArm(sqlite3_int64 iFail, int bPersist){
  fault.nCall = 0;
  fault.iFail = iFail;
  fault.bPersist = bPersist;
  fault.nHit = 0;
}

static void faultDisarm(void){
  fault.iFail = 0;
}

/*
** A text image of database db's main and temp schemas: their
** sqlite_schema and every table's rows, chash tables included (which reads
** them through the extension and its caches). An error reading a table is
** part of the image.
*/
static char *dumpDb(sqlite3 *db){
  sqlite3_str *pOut = sqlite3_str_new(0);
  sqlite3_stmt *pList = 0;
  char *zOut;
  int rc = sqlite3_prepare_v2(db, "SELECT 'main', type, name, sql"
                              " FROM main.sqlite_schema UNION ALL"
                              " SELECT 'temp', type, name, sql"
                              " FROM temp.sqlite_schema ORDER BY 3, 1, 2", -1,
                              &pList, 0);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    const char *zSchema = (const char *)sqlite3_column_text(pList, 0);
    const char *zType = (const char *)sqlite3_column_text(pList, 1);
    const char *zName = (const char *)sqlite3_column_text(pList, 2);
    sqlite3_stmt *pRows = 0;
    char *zSql;
    int i, nCol;
    sqlite3_str_appendf(pOut, "%s %s %s: %s\n", zSchema, zType, zName,
                        sqlite3_column_text(pList, 3));
    if( strcmp(zType, "table")!=0 || strncmp(zName, "sqlite_", 7)==0 ){
      continue;
    }
    zSql = oom(sqlite3_mprintf("SELECT * FROM \"%w\".\"%w\"", zSchema,
                               zName));
    if( sqlite3_prepare_v2(db, zSql, -1, &pRows, 0)==SQLITE_OK ){
      nCol = sqlite3_column_count(pRows);
      while( sqlite3_step(pRows)==SQLITE_ROW ){
        for(i=0; i<nCol; i++){
          int eType = sqlite3_column_type(pRows, i);
          if( eType==SQLITE_FLOAT ){
            sqlite3_str_appendf(pOut, "%!.17g|", sqlite3_column_double(pRows, i));
          }else{
            const void *pData = sqlite3_column_blob(pRows, i);
            int n = sqlite3_column_bytes(pRows, i);
            sqlite3_str_appendf(pOut, "%d:%d:", eType, n);
            if( eType==SQLITE_BLOB || (n && memchr(pData, 0, n)) ){
              /* As hex: a zero byte would end the dump's comparison. */
              for(int j=0; j<n; j++){
                sqlite3_str_appendf(pOut, "%02x",
                                    ((const unsigned char *)pData)[j]);
              }
            }else if( n ){
              sqlite3_str_append(pOut, pData, n);
            }
            sqlite3_str_appendchar(pOut, 1, '|');
          }
        }
        sqlite3_str_appendchar(pOut, 1, '\n');
      }
    }
    sqlite3_str_appendf(pOut, "-- %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(pRows);
    sqlite3_free(zSql);
  }
  sqlite3_finalize(pList);
  if( sqlite3_str_errcode(pOut)!=SQLITE_OK ) noMemory();
  zOut = sqlite3_str_finish(pOut);
  return zOut ? zOut : oom(sqlite3_mprintf(""));   /* NULL: nothing added */
}

/* Does the temp schema hold nothing? */
static int isTempEmpty(sqlite3 *db){
  sqlite3_stmt *pStmt = 0;
  int bEmpty = 1;
  if( sqlite3_prepare_v2(db, "SELECT 1 FROM temp.sqlite_schema", -1, &pStmt,
                         0)==SQLITE_OK ){
    bEmpty = sqlite3_step(pStmt)!=SQLITE_ROW;
  }
  sqlite3_finalize(pStmt);
  return bEmpty;
}

/* Copy schema zFrom of pFrom over schema zTo of pTo (backup API). */
static int copyDb(sqlite3 *pTo, const char *zTo, sqlite3 *pFrom,
                  const char *zFrom){
  sqlite3_backup *pBackup = sqlite3_backup_init(pTo, zTo, pFrom, zFrom);
  if( pBackup==0 ) return sqlite3_errcode(pTo);
  sqlite3_backup_step(pBackup, -1);
  return sqlite3_backup_finish(pBackup);
}

/* The file of copy zName (made if bMake and not yet known), or NULL. */
static const char *copyFile(Script *p, const char *zName, int bMake){
  char *zFile = oom(sqlite3_mprintf("%s.copy-%s", p->zDb, zName));
  int i;
  for(i=0; i<p->nCopy; i++){
    if( strcmp(p->azCopy[i], zFile)==0 ){
      sqlite3_free(zFile);
      return p->azCopy[i];
    }
  }
  if( !bMake ){
    sqlite3_free(zFile);
    return 0;
  }
  p->azCopy = safeRealloc(p->azCopy, sizeof(char*)*(p->nCopy+1));
  p->azCopy[p->nCopy++] = zFile;
  return zFile;
}

/*
** The records save NAME, restore NAME and attach NAME SCHEMA: copies of
** the database that other records restore or attach.
*/
static int doCopy(Script *p, int iLine, char **az){
  const char *zFile = copyFile(p, az[1], strcmp(az[0], "save")==0);
  sqlite3 *db = currentDb(p), *pCopy = 0;
  int rc;
  if( zFile==0 ){
    fail(p, iLine, "no copy named %s (make it with save)", az[1]);
    return REC_NEXT;
  }
  if( strcmp(az[0], "attach")==0 ){
    char *zSql = oom(sqlite3_mprintf("ATTACH %Q AS \"%w\"", zFile, az[2]));
    rc = sqlite3_exec(db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
  }else{
    rc = sqlite3_open_v2(zFile, &pCopy,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
    if( rc==SQLITE_OK ){
      rc = strcmp(az[0], "save")==0 ? copyDb(pCopy, "main", db, "main")
                                    : copyDb(db, "main", pCopy, "main");
    }
    sqlite3_close(pCopy);
  }
  if( rc!=SQLITE_OK ){
    fail(p, iLine, "%s %s failed: %s", az[0], az[1], sqlite3_errmsg(db));
  }
  return REC_NEXT;
}

/*
** Restore the temp schema from schema zFrom of pCopy. The backup API
** cannot copy an empty temp schema (it has no pages), so then the temp
** tables and views are dropped instead.
*/
static int restoreTemp(sqlite3 *db, sqlite3 *pCopy, const char *zFrom,
                       int bEmpty){
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( !bEmpty ) return copyDb(db, "temp", pCopy, zFrom);
  rc = sqlite3_prepare_v2(db, "SELECT type, name FROM temp.sqlite_schema"
                          " WHERE type IN ('table', 'view') LIMIT 1", -1,
                          &pStmt, 0);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    char *zDrop = oom(sqlite3_mprintf("DROP %s temp.\"%w\"",
                                      sqlite3_column_text(pStmt, 0),
                                      sqlite3_column_text(pStmt, 1)));
    sqlite3_reset(pStmt);
    rc = sqlite3_exec(db, zDrop, 0, 0, 0);
    sqlite3_free(zDrop);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** Is zSql atomic, so that a failure must leave the database as it was: a
** single statement (but not one with OR FAIL), or a script that starts
** with BEGIN (the runner rolls back a transaction a failure leaves open)?
*/
static int isAtomic(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  const char *zTail = 0;
  int bOne;
  while( isspace((unsigned char)*zSql) ) zSql++;
  if( sqlite3_strnicmp(zSql, "BEGIN", 5)==0 ) return 1;
  /* OR FAIL keeps what the statement did before the failure. */
  if( sqlite3_strlike("%OR FAIL%", zSql, 0)==0 ) return 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, &zTail)!=SQLITE_OK ) return 1;
  sqlite3_finalize(pStmt);
  while( zTail && (isspace((unsigned char)*zTail) || *zTail==';') ) zTail++;
  bOne = zTail==0 || *zTail==0;
  return bOne;
}

/* Does error message zErr hold zExpect (at its end, if zExpect ends with
** '$')? */
static int errorMatches(const char *zErr, const char *zExpect){
  size_t nExpect = strlen(zExpect);
  if( nExpect>0 && zExpect[nExpect-1]=='$' ){
    size_t nErr = strlen(zErr);
    nExpect--;
    return nErr>=nExpect && memcmp(zErr+nErr-nExpect, zExpect, nExpect)==0;
  }
  return strstr(zErr, zExpect)!=0;
}

/*
** Is error rc on db, after a failed allocation, a clean failure? It is if
** it is SQLITE_NOMEM or has the message the record expects. When every
** allocation after the first failing one fails too, SQLite cannot copy an
** error message (sqlite3_result_error, a virtual table's zErrMsg) and
** reports the bare error code, as sqlite3_errstr() words it: that is clean
** too, in that mode only.
*/
static int isCleanOom(sqlite3 *db, int rc, const char *zExpect, int bPersist){
  const char *zErr = sqlite3_errmsg(db);
  if( (rc&0xff)==SQLITE_NOMEM ) return 1;
  if( zExpect && errorMatches(zErr, zExpect) ) return 1;
  return bPersist && strcmp(zErr, sqlite3_errstr(rc))==0;
}

/* Run zSql once as a statement record (bQuery 0) or a query (1). */
static int runSqlOnce(sqlite3 *db, const char *zSql, int bQuery){
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( !bQuery ) return sqlite3_exec(db, zSql, 0, 0, 0);
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){}
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** The oom test of a record: run zSql with allocation N failing, for
** N = 1, 2, 3 ... until a run hits no fault; first with every allocation
** from N on failing, then with only allocation N failing. Each failed run
** must fail cleanly: SQLITE_NOMEM, or the error the record expects
** (zExpect, when SQLite recovered from the fault); for an atomic record the
** database must then be exactly as before. A run that succeeds or changes
** the database is undone by restoring a copy, so every run starts from
** the same state, and so does the record's ordinary run afterwards. The
** copy covers the main and temp schemas. A record that runs inside a
** transaction left open by an earlier one cannot be copied around, and is
** not tested (returns 0 at once).
** Returns 0 if the record passed, else 1 (and the failure is reported).
*/
static int oomTest(Script *p, int iLine, const char *zSql, int bQuery,
                   const char *zExpect){
  sqlite3 *db = currentDb(p);
  int bAtomic, bTempEmpty;
  char *zBefore;
  sqlite3 *pCopy = 0;
  int bFailed = 0;
  int bPersist;

  if( !sqlite3_get_autocommit(db) ) return 0;
  bAtomic = bQuery || isAtomic(db, zSql);
  bTempEmpty = isTempEmpty(db);
  zBefore = dumpDb(db);
  if( sqlite3_open(":memory:", &pCopy)!=SQLITE_OK
   || sqlite3_exec(pCopy, "ATTACH ':memory:' AS t", 0, 0, 0)!=SQLITE_OK
   || (!bQuery && (copyDb(pCopy, "main", db, "main")!=SQLITE_OK
                   || (!bTempEmpty
                       && copyDb(pCopy, "t", db, "temp")!=SQLITE_OK))) ){
    fail(p, iLine, "oom: cannot copy the database: %s", sqlite3_errmsg(pCopy));
    sqlite3_close(pCopy);
    sqlite3_free(zBefore);
    return 1;
  }
  nOomRecords++;
  for(bPersist=1; bPersist>=0 && !bFailed; bPersist--){
    sqlite3_int64 iFail;
    for(iFail=1; !bFailed; iFail++){
      int rc, nHit;
      char *zAfter;
      faultArm(iFail, bPersist);
      rc = runSqlOnce(db, zSql, bQuery);
      nHit = fault.nHit;
      faultDisarm();
      nOomRuns++;
      if( rc!=SQLITE_OK && nHit>0 && !isCleanOom(db, rc, zExpect, bPersist) ){
        fail(p, iLine, "oom: failing allocation %lld%s gave %s, not "
             "SQLITE_NOMEM: %s", (long long)iFail, bPersist ? "+" : "",
             sqlite3_errstr(rc), sqlite3_errmsg(db));
        showText(0, zSql);
        bFailed = 1;
      }
      if( !sqlite3_get_autocommit(db) ){
        sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
      }
      zAfter = dumpDb(db);
      if( strcmp(zAfter, zBefore)!=0 ){
        if( rc!=SQLITE_OK && bAtomic && !bFailed ){
          fail(p, iLine, "oom: failing allocation %lld%s (%s) changed the "
               "database", (long long)iFail, bPersist ? "+" : "",
               sqlite3_errmsg(db));
          showText(0, zSql);
          showText("before", zBefore);
          showText("after", zAfter);
          bFailed = 1;
        }
        if( copyDb(db, "main", pCopy, "main")!=SQLITE_OK
         || restoreTemp(db, pCopy, "t", bTempEmpty)!=SQLITE_OK ){
          fail(p, iLine, "oom: cannot restore the database: %s",
               sqlite3_errmsg(db));
          bFailed = 1;
        }
      }
      sqlite3_free(zAfter);
      if( nHit==0 ) break;
    }
  }
  sqlite3_close(pCopy);
  sqlite3_free(zBefore);
  return bFailed;
}

/* The primary result codes, by name, for "statement error CODE". */
static const char *const azResultCode[] = {
  "SQLITE_OK", "SQLITE_ERROR", "SQLITE_INTERNAL", "SQLITE_PERM",
  "SQLITE_ABORT", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_NOMEM",
  "SQLITE_READONLY", "SQLITE_INTERRUPT", "SQLITE_IOERR", "SQLITE_CORRUPT",
  "SQLITE_NOTFOUND", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL",
  "SQLITE_EMPTY", "SQLITE_SCHEMA", "SQLITE_TOOBIG", "SQLITE_CONSTRAINT",
  "SQLITE_MISMATCH", "SQLITE_MISUSE", "SQLITE_NOLFS", "SQLITE_AUTH",
  "SQLITE_FORMAT", "SQLITE_RANGE", "SQLITE_NOTADB",
};
#define N_RESULT_CODE (int)(sizeof(azResultCode)/sizeof(azResultCode[0]))

/* The primary result code named z, or -1. */
static int resultCodeNamed(const char *z){
  int i;
  for(i=0; i<N_RESULT_CODE; i++){
    if( strcmp(azResultCode[i], z)==0 ) return i;
  }
  return -1;
}

/* The name of rc's primary result code. */
static const char *resultCodeName(int rc){
  return (rc & 0xff)<N_RESULT_CODE ? azResultCode[rc & 0xff] : "?";
}

/*
** Run a statement record: a[0] is its header, tokenized into az[0..nTok).
*/
static int doStatement(Script *p, Line *a, int n, char **az, int nTok,
                       int bSkip, int bOom){
  int iLine = a->iLine;
  int bError = 0;           /* statement error */
  int iCode = -1;           /* statement error CODE: CODE */
  int nChange = -1;         /* statement count N: N */
  int iDash = findDashes(a, n);
  char *zSql, *zMsg = 0, *zErr = 0;
  int rc;

  if( nTok==2 && strcmp(az[1], "ok")==0 ){
    /* nothing more to parse */
  }else if( nTok==2 && strcmp(az[1], "error")==0 ){
    bError = 1;
  }else if( nTok==3 && strcmp(az[1], "error")==0 ){
    bError = 1;
    iCode = resultCodeNamed(az[2]);
    if( iCode<0 ){
      return parseError(p, iLine, "unknown result code %s (use a name such "
                        "as SQLITE_BUSY)", az[2]);
    }
  }else if( nTok!=3 || strcmp(az[1], "count")!=0
         || !parseCount(az[2], &nChange) ){
    return parseError(p, iLine, "malformed header; use \"statement ok\", "
                      "\"statement error [CODE]\" or \"statement count N\"");
  }
  if( iDash==1 ) return parseError(p, iLine, "statement without SQL");
  if( iDash<n && !bError ){
    return parseError(p, a[iDash].iLine,
                      "\"----\" is only allowed after \"statement error\"");
  }
  if( iDash==n-1 ){
    return parseError(p, a[iDash].iLine,
                      "\"----\" without an expected error message");
  }
  if( bSkip ){
    nSkip++;
    return REC_NEXT;
  }

  zSql = joinLines(a+1, iDash-1);
  if( iDash<n ) zMsg = joinLines(a+iDash+1, n-iDash-1);
  if( bOom && oomTest(p, iLine, zSql, 0, bError ? (zMsg ? zMsg : "") : 0) ){
    sqlite3_free(zMsg);
    sqlite3_free(zSql);
    return REC_NEXT;
  }
  rc = sqlite3_exec(currentDb(p), zSql, 0, 0, &zErr);
  if( bError ){
    if( rc==SQLITE_OK ){
      fail(p, iLine, "statement succeeded, but an error was expected");
      showText(0, zSql);
      if( zMsg ) showText("expected", zMsg);
    }else if( zMsg && (zErr==0 || !errorMatches(zErr, zMsg)) ){
      fail(p, iLine, "wrong error message");
      showText(0, zSql);
      showText("expected", zMsg);
      showText("actual", zErr ? zErr : sqlite3_errstr(rc));
    }else if( iCode>=0 && (rc & 0xff)!=iCode ){
      fail(p, iLine, "wrong error code: expected %s, got %s (%d)", az[2],
           resultCodeName(rc), rc);
      showText(0, zSql);
      showText("message", zErr ? zErr : sqlite3_errstr(rc));
    }else{
      nPass++;
    }
  }else if( rc!=SQLITE_OK ){
    fail(p, iLine, "statement failed: %s", zErr ? zErr : sqlite3_errstr(rc));
    showText(0, zSql);
  }else if( nChange>=0 && sqlite3_changes64(currentDb(p))!=nChange ){
    fail(p, iLine, "wrong change count: expected %d, got %lld", nChange,
         (long long)sqlite3_changes64(currentDb(p)));
    showText(0, zSql);
  }else{
    nPass++;
  }
  sqlite3_free(zErr);
  sqlite3_free(zMsg);
  sqlite3_free(zSql);
  return REC_NEXT;
}

/*
** Read the n expected-value lines a[] of query q: one value per line, or
** TAB-separated rows (more than one column and every line has a TAB). The
** values point into the lines, which row-wise input splits in place.
*/
static int parseExpected(Script *p, Query *q, Line *a, int n){
  int bRowWise = q->nCol>1 && n>0;
  int i;

  for(i=0; i<n && bRowWise; i++){
    if( strchr(a[i].z, '\t')==0 ) bRowWise = 0;
  }
  if( bRowWise ){
    if( q->eSort==SORT_VALUE ){
      return parseError(p, a[0].iLine,
                        "TAB-separated rows cannot be used with valuesort");
    }
    for(i=0; i<n; i++){
      int nField = 1;
      const char *z;
      for(z=a[i].z; (z = strchr(z, '\t'))!=0; z++) nField++;
      if( nField!=q->nCol ){
        return parseError(p, a[i].iLine,
                          "row has %d TAB-separated values, expected %d",
                          nField, q->nCol);
      }
    }
  }

  q->azExp = safeRealloc(0, sizeof(char*)*((size_t)n*q->nCol + 1));
  for(i=0; i<n; i++){
    char *z = a[i].z;
    q->azExp[q->nExp++] = z;
    while( bRowWise && (z = strchr(z, '\t'))!=0 ){
      *z++ = 0;
      q->azExp[q->nExp++] = z;
    }
  }

  /* Print actual rows the way the author wrote (or will write) them. */
  if( bRowWise || (n==0 && q->nCol>1 && q->eSort!=SORT_VALUE) ){
    q->nPerLine = q->nCol;
  }else{
    q->nPerLine = 1;
  }
  return REC_NEXT;
}

/* Render column i of the current row as type letter cType asks. */
static char *renderValue(sqlite3_stmt *pStmt, int i, char cType){
  const unsigned char *zText;
  char *z;
  int n, j;

  /* Ask for the type first: fetching the value may convert it. */
  if( sqlite3_column_type(pStmt, i)==SQLITE_NULL ){
    return oom(sqlite3_mprintf("NULL"));
  }
  if( cType=='I' ){
    return oom(sqlite3_mprintf("%lld",
                               (long long)sqlite3_column_int64(pStmt, i)));
  }
  if( cType=='R' ){
    /* SQLite's printf: -0.0 gives 0.000, infinity gives Inf. */
    return oom(sqlite3_mprintf("%.3f", sqlite3_column_double(pStmt, i)));
  }
  zText = sqlite3_column_text(pStmt, i);
  n = sqlite3_column_bytes(pStmt, i);
  if( n==0 ) return oom(sqlite3_mprintf("(empty)"));
  if( zText==0 ) noMemory();
  /* The whole value, even past a NUL, with non-printable bytes as '@'. */
  z = safeRealloc(0, (size_t)n+1);
  for(j=0; j<n; j++){
    z[j] = (zText[j]<0x20 || zText[j]>0x7e) ? '@' : (char)zText[j];
  }
  z[n] = 0;
  return z;
}

static void appendValue(Values *v, char *z){
  if( v->n>=v->nAlloc ){
    v->nAlloc = v->nAlloc*2 + 16;
    v->az = safeRealloc(v->az, sizeof(char*)*v->nAlloc);
  }
  v->az[v->n++] = z;
}

static void freeValues(Values *v){
  int i;
  for(i=0; i<v->n; i++) sqlite3_free(v->az[i]);
  sqlite3_free(v->az);
}

static int compareValue(const void *pA, const void *pB){
  return strcmp(*(char *const*)pA, *(char *const*)pB);
}

static int compareRow(const void *pA, const void *pB){
  const Row *a = pA, *b = pB;
  int i, c = 0;
  for(i=0; i<a->nCol && c==0; i++) c = strcmp(a->az[i], b->az[i]);
  return c;
}

/* Sort the actual values as the query's sort mode asks. */
static void sortValues(Query *q, Values *v){
  int nRow = v->n/q->nCol;
  Row *aRow;
  char **az;
  int i;

  if( v->n<2 || q->eSort==SORT_NONE ) return;
  if( q->eSort==SORT_VALUE ){
    qsort(v->az, v->n, sizeof(char*), compareValue);
    return;
  }
  aRow = safeRealloc(0, sizeof(Row)*nRow);
  for(i=0; i<nRow; i++){
    aRow[i].az = v->az + i*q->nCol;
    aRow[i].nCol = q->nCol;
  }
  qsort(aRow, nRow, sizeof(Row), compareRow);
  az = safeRealloc(0, sizeof(char*)*v->nAlloc);
  for(i=0; i<nRow; i++){
    memcpy(az + i*q->nCol, aRow[i].az, sizeof(char*)*q->nCol);
  }
  sqlite3_free(aRow);
  sqlite3_free(v->az);
  v->az = az;
}

/* Write "N values hashing to MD5" for the values into zOut. */
static void hashValues(Values *v, char *zOut){
  static const char zHexDigit[] = "0123456789abcdef";
  struct md5_ctx ctx;
  uint8_t aDigest[MD5_DIGEST_SIZE];
  char zHex[MD5_DIGEST_SIZE*2 + 1];
  int i;

  md5_init(&ctx);
  for(i=0; i<v->n; i++){
    md5_update(&ctx, strlen(v->az[i]), (const uint8_t*)v->az[i]);
    md5_update(&ctx, 1, (const uint8_t*)"\n");
  }
  md5_digest(&ctx, MD5_DIGEST_SIZE, aDigest);
  for(i=0; i<MD5_DIGEST_SIZE; i++){
    zHex[2*i] = zHexDigit[aDigest[i]>>4];
    zHex[2*i+1] = zHexDigit[aDigest[i]&0xf];
  }
  zHex[MD5_DIGEST_SIZE*2] = 0;
  sqlite3_snprintf(HASH_LINE_SIZE, zOut, "%d values hashing to %s",
                   v->n, zHex);
}

/*
** Append to pWhy why the actual values differ from the expected ones, if
** they do.
*/
static void compareValues(Query *q, Values *v, sqlite3_str *pWhy){
  int i;
  if( q->nExp!=v->n ){
    sqlite3_str_appendf(pWhy, "wrong result: expected %d values, got %d",
                        q->nExp, v->n);
    return;
  }
  for(i=0; i<v->n && strcmp(q->azExp[i], v->az[i])==0; i++){}
  if( i==v->n ) return;
  if( q->nCol==1 || q->eSort==SORT_VALUE ){
    sqlite3_str_appendf(pWhy, "wrong result: value %d", i+1);
  }else{
    sqlite3_str_appendf(pWhy, "wrong result: row %d, column %d",
                        i/q->nCol + 1, i%q->nCol + 1);
  }
  sqlite3_str_appendf(pWhy, ": expected [%s], got [%s]",
                      q->azExp[i], v->az[i]);
}

/*
** Record the hash for the query's label if it is new. Return the label if
** an earlier query with it got different values, else NULL.
*/
static Label *checkLabel(Script *p, Query *q, const char *zHash){
  Label *pLabel;
  int i;
  for(i=0; i<p->nLabel; i++){
    pLabel = &p->aLabel[i];
    if( strcmp(pLabel->zName, q->zLabel)==0 ){
      return strcmp(pLabel->zHash, zHash)==0 ? 0 : pLabel;
    }
  }
  p->aLabel = safeRealloc(p->aLabel, sizeof(Label)*(p->nLabel+1));
  pLabel = &p->aLabel[p->nLabel++];
  pLabel->zName = oom(sqlite3_mprintf("%s", q->zLabel));
  memcpy(pLabel->zHash, zHash, HASH_LINE_SIZE);
  pLabel->iLine = q->iLine;
  return 0;
}

/*
** Compare the actual values of a query with the expected ones and its
** label. All that is wrong makes one failure.
*/
static void checkResult(Script *p, Query *q, Values *v){
  char zHash[HASH_LINE_SIZE];
  int bHashOnly = p->hashThreshold>0 && v->n>p->hashThreshold;
  sqlite3_str *pWhy = sqlite3_str_new(0);
  Label *pLabel = 0;
  char *zWhy;

  sortValues(q, v);
  hashValues(v, zHash);
  if( q->zHash ){
    if( strcmp(q->zHash, zHash)!=0 ){
      sqlite3_str_appendall(pWhy, "wrong result hash");
    }
  }else{
    compareValues(q, v, pWhy);
  }
  if( q->zLabel ) pLabel = checkLabel(p, q, zHash);
  if( pLabel ){
    sqlite3_str_appendf(pWhy, "%slabeled result [%s] does not agree with "
                        "line %d", sqlite3_str_length(pWhy) ? "; " : "",
                        q->zLabel, pLabel->iLine);
  }
  if( sqlite3_str_errcode(pWhy)!=SQLITE_OK ) noMemory();
  if( sqlite3_str_length(pWhy)==0 ){
    sqlite3_free(sqlite3_str_finish(pWhy));
    nPass++;
    return;
  }

  zWhy = sqlite3_str_finish(pWhy);
  fail(p, q->iLine, "%s", zWhy);
  sqlite3_free(zWhy);
  showText(0, q->zSql);
  if( q->zHash ){
    showText("expected", q->zHash);
  }else{
    showValues("expected", q->azExp, q->nExp, q->nPerLine);
  }
  if( q->zHash || bHashOnly ) showText("actual", zHash);
  if( !bHashOnly ){
    showValues(q->zHash ? "actual values" : "actual", v->az, v->n,
               q->nPerLine);
  }
  if( pLabel ){
    printf("---- label [%s] at line %d\n%s\n",
           pLabel->zName, pLabel->iLine, pLabel->zHash);
    printf("---- label [%s] here\n%s\n", pLabel->zName, zHash);
  }
}

/* Run query q on the current connection and check its result. */
static int runQuery(Script *p, Query *q){
  sqlite3 *db = currentDb(p);
  sqlite3_stmt *pStmt = 0;
  const char *zTail = 0;
  Values v = { 0, 0, 0 };
  int rc, i;

  if( sqlite3_prepare_v2(db, q->zSql, -1, &pStmt, &zTail)!=SQLITE_OK ){
    fail(p, q->iLine, "query failed: %s", sqlite3_errmsg(db));
    showText(0, q->zSql);
    return REC_NEXT;
  }
  if( pStmt==0 ) return parseError(p, q->iLine, "query without SQL");
  while( isspace((unsigned char)*zTail) ) zTail++;
  if( *zTail ){
    sqlite3_finalize(pStmt);
    return parseError(p, q->iLine, "a query must be a single statement; "
                      "this follows it: %s", zTail);
  }
  if( sqlite3_column_count(pStmt)!=q->nCol ){
    fail(p, q->iLine, "wrong number of result columns: \"%s\" has %d, "
         "the query returns %d", q->zTypes, q->nCol,
         sqlite3_column_count(pStmt));
    showText(0, q->zSql);
    sqlite3_finalize(pStmt);
    return REC_NEXT;
  }

  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    for(i=0; i<q->nCol; i++){
      appendValue(&v, renderValue(pStmt, i, q->zTypes[i]));
    }
  }
  if( rc==SQLITE_DONE ){
    checkResult(p, q, &v);
  }else{
    fail(p, q->iLine, "query failed after %d rows: %s",
         v.n/q->nCol, sqlite3_errmsg(db));
    showText(0, q->zSql);
  }
  sqlite3_finalize(pStmt);
  freeValues(&v);
  return REC_NEXT;
}

/*
** Parse and run a query record: a[0] is its header, tokenized into
** az[0..nTok).
*/
static int doQuery(Script *p, Line *a, int n, char **az, int nTok,
                   int bSkip, int bOom){
  Query q;
  int iDash = findDashes(a, n);
  int nRes = iDash<n ? n-iDash-1 : 0;
  int rc;

  memset(&q, 0, sizeof(q));
  q.iLine = a->iLine;
  if( nTok<2 || nTok>4 ){
    return parseError(p, q.iLine, "malformed header; use "
                      "\"query TYPES [nosort|rowsort|valuesort [LABEL]]\"");
  }
  q.zTypes = az[1];
  q.nCol = (int)strlen(az[1]);
  if( strspn(q.zTypes, "TIR")!=strlen(q.zTypes) ){
    return parseError(p, q.iLine, "bad type string \"%s\": use one of "
                      "T, I or R per column", q.zTypes);
  }
  if( nTok>=3 ){
    if( strcmp(az[2], "nosort")==0 ){
      q.eSort = SORT_NONE;
    }else if( strcmp(az[2], "rowsort")==0 ){
      q.eSort = SORT_ROW;
    }else if( strcmp(az[2], "valuesort")==0 ){
      q.eSort = SORT_VALUE;
    }else{
      return parseError(p, q.iLine, "unknown sort mode \"%s\"", az[2]);
    }
  }
  if( nTok==4 ) q.zLabel = az[3];
  if( iDash==1 ) return parseError(p, q.iLine, "query without SQL");
  if( nRes==1 && isHashLine(a[iDash+1].z) ){
    q.zHash = a[iDash+1].z;
    q.nPerLine = q.eSort==SORT_VALUE ? 1 : q.nCol;
  }else if( parseExpected(p, &q, a+iDash+1, nRes)!=REC_NEXT ){
    return REC_STOP;
  }

  if( bSkip ){
    nSkip++;
    rc = REC_NEXT;
  }else{
    q.zSql = joinLines(a+1, iDash-1);
    rc = REC_NEXT;
    if( !bOom || !oomTest(p, q.iLine, q.zSql, 1, 0) ) rc = runQuery(p, &q);
    sqlite3_free(q.zSql);
  }
  sqlite3_free(q.azExp);
  return rc;
}

/*
** A control record must be exactly one line with the right words (bOk).
** If not, report a parse error and return 0.
*/
static int controlOk(Script *p, Line *a, int n, int bOk, const char *zUsage){
  if( !bOk ){
    parseError(p, a->iLine, "malformed; use \"%s\"", zUsage);
    return 0;
  }
  if( n>1 ){
    parseError(p, a[1].iLine, "\"%s\" must be alone in its record; "
               "records are separated by blank lines", zUsage);
    return 0;
  }
  return 1;
}

/*
** Run one record: the n non-blank lines a[]. Return REC_NEXT to go on
** with the next record, REC_STOP to stop the file.
*/
static int runRecord(Script *p, Line *a, int n){
  char *az[4];
  int nTok;
  int bSkip = 0;
  int bOom = bOomAll;
  int x = 0;

  /* Prefixes: any skipif/onlyif that says so skips the record; oom tests
  ** it under out-of-memory faults. */
  for(;;){
    int bMatch;
    nTok = tokenize(a->z, az, 4);
    if( strcmp(az[0], "oom")==0 && nTok==1 && n>1 ){
      bOom = 1;
      a++;
      n--;
      continue;
    }
    if( strcmp(az[0], "skipif")!=0 && strcmp(az[0], "onlyif")!=0 ) break;
    if( nTok<2 ){
      return parseError(p, a->iLine, "\"%s\" needs an engine name", az[0]);
    }
    bMatch = sqlite3_stricmp(az[1], ENGINE_NAME)==0;
    if( az[0][0]=='s' ? bMatch : !bMatch ) bSkip = 1;
    if( n==1 ){
      return parseError(p, a->iLine, "\"%s\" is not followed by a record",
                        az[0]);
    }
    a++;
    n--;
  }

  if( strcmp(az[0], "statement")==0 ){
    /* --oom leaves alone ATTACH, DETACH and whatever runs while a schema
    ** is attached: the copy a failing run is checked against and restored
    ** from holds main and temp only. */
    if( bOomAll && n>1 && (sqlite3_strnicmp(a[1].z, "ATTACH", 6)==0
                           || sqlite3_strnicmp(a[1].z, "DETACH", 6)==0
                           || (currentDb(p)
                               && sqlite3_db_name(currentDb(p), 2)!=NULL)) ){
      bOom = 0;
    }
    return doStatement(p, a, n, az, nTok, bSkip, bOom);
  }
  if( strcmp(az[0], "query")==0 ){
    return doQuery(p, a, n, az, nTok, bSkip, bOom);
  }
  if( strcmp(az[0], "hash-threshold")==0 ){
    if( !controlOk(p, a, n, nTok==2 && parseCount(az[1], &x),
                   "hash-threshold N") ) return REC_STOP;
    if( !bSkip ) p->hashThreshold = x;
  }else if( strcmp(az[0], "halt")==0 ){
    if( !controlOk(p, a, n, nTok==1, "halt") ) return REC_STOP;
    if( !bSkip ) return REC_STOP;
  }else if( strcmp(az[0], "connection")==0 ){
    if( !controlOk(p, a, n, nTok==2, "connection NAME") ) return REC_STOP;
    if( !bSkip ) return useConnection(p, a->iLine, az[1]);
  }else if( strcmp(az[0], "reopen")==0 ){
    if( !controlOk(p, a, n, nTok==1, "reopen") ) return REC_STOP;
    if( !bSkip ) return reopen(p, a->iLine);
  }else if( strcmp(az[0], "save")==0 || strcmp(az[0], "restore")==0 ){
    if( !controlOk(p, a, n, nTok==2, "save|restore NAME") ) return REC_STOP;
    if( !bSkip ) return doCopy(p, a->iLine, az);
  }else if( strcmp(az[0], "attach")==0 ){
    if( !controlOk(p, a, n, nTok==3, "attach NAME SCHEMA") ) return REC_STOP;
    if( !bSkip ) return doCopy(p, a->iLine, az);
  }else if( strcmp(az[0], "dbconfig")==0 ){
    int bOn = nTok==3 && strcmp(az[2], "on")==0;
    if( !controlOk(p, a, n, nTok==3 && strcmp(az[1], "defensive")==0
                            && (bOn || strcmp(az[2], "off")==0),
                   "dbconfig defensive on|off") ) return REC_STOP;
    if( !bSkip && sqlite3_db_config(currentDb(p), SQLITE_DBCONFIG_DEFENSIVE,
                                    bOn, (int*)0)!=SQLITE_OK ){
      fail(p, a->iLine, "dbconfig failed: %s",
           sqlite3_errmsg(currentDb(p)));
    }
  }else{
    return parseError(p, a->iLine, "unknown record type \"%s\"", az[0]);
  }
  return REC_NEXT;
}

/* Run the script zFile on a fresh database zDb. */
static void runFile(const char *zFile, const char *zDb){
  Script s;
  Line *aLine = 0;
  int nLine = 0;
  char *zText;
  int i, j;

  memset(&s, 0, sizeof(s));
  s.zFile = zFile;
  s.zDb = zDb;
  s.hashThreshold = iInitialThreshold;
  zText = readScript(zFile, &aLine, &nLine);
  if( zText==0 ){
    fail(&s, 0, "cannot read: %s", strerror(errno));
    return;
  }

  deleteDb(zDb);
  if( useConnection(&s, 0, "default")==REC_NEXT ){
    /* A record is a run of non-blank lines. */
    for(i=0; i<nLine; i=j){
      if( aLine[i].z[0]==0 ){
        j = i+1;
        continue;
      }
      for(j=i; j<nLine && aLine[j].z[0]; j++){}
      if( runRecord(&s, aLine+i, j-i)!=REC_NEXT ) break;
    }
  }
  closeAll(&s, 0);
  deleteDb(zDb);
  for(i=0; i<s.nCopy; i++){
    deleteDb(s.azCopy[i]);
    sqlite3_free(s.azCopy[i]);
  }
  sqlite3_free(s.azCopy);

  for(i=0; i<s.nLabel; i++) sqlite3_free(s.aLabel[i].zName);
  sqlite3_free(s.aLabel);
  sqlite3_free(aLine);
  sqlite3_free(zText);
}

static void usage(const char *zArgv0){
  fprintf(stderr, "usage: %s [--ext PATH] [--ht N] [--oom] FILE.test...\n",
          zArgv0);
  exit(2);
}

int main(int argc, char **argv){
  const char *zTmp = getenv("TMPDIR");
  const char **azFile;
  int nFile = 0;
  char *zDir, *zDb;
  int i;

  faultInstall();
  azFile = oom(sqlite3_malloc64(sizeof(char*)*argc));

#ifdef CHASH_EMBEDDED
  zExtension = "chash (linked in)";
  if( sqlite3_auto_extension((void (*)(void))sqlite3_chash_init)!=SQLITE_OK ){
    fprintf(stderr, "runner: cannot register chash\n");
    return 2;
  }
#endif

  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "--ext")==0 && i+1<argc ){
#ifdef CHASH_EMBEDDED
      usage(argv[0]);
#endif
      zExtension = argv[++i];
    }else if( strcmp(argv[i], "--oom")==0 ){
      bOomAll = 1;
    }else if( strcmp(argv[i], "--ht")==0 && i+1<argc
           && parseCount(argv[i+1], &iInitialThreshold) ){
      i++;
    }else if( argv[i][0]=='-' ){
      usage(argv[0]);
    }else{
      azFile[nFile++] = argv[i];
    }
  }
  if( nFile==0 ) usage(argv[0]);
  printf("runner: SQLite %s, %s\n", sqlite3_libversion(), zExtension);

  /* A private directory, so that runs in parallel do not collide. */
  zDir = oom(sqlite3_mprintf("%s/chash-slt-XXXXXX",
                             zTmp && zTmp[0] ? zTmp : "/tmp"));
  if( mkdtemp(zDir)==0 ){
    fprintf(stderr, "runner: cannot create %s: %s\n", zDir, strerror(errno));
    return 2;
  }
  zDb = oom(sqlite3_mprintf("%s/test.db", zDir));

  for(i=0; i<nFile; i++) runFile(azFile[i], zDb);
  rmdir(zDir);
  sqlite3_free(zDb);
  sqlite3_free(zDir);
  sqlite3_free(azFile);

  /* Everything is closed: whatever SQLite still holds after shutdown leaked. */
  sqlite3_shutdown();
  if( fault.nLive!=0 ){
    printf("runner: %lld allocations leaked\n", (long long)fault.nLive);
    nFail++;
  }
  if( nOomRecords>0 ){
    printf("oom: %d records, %lld runs with a failing allocation\n",
           nOomRecords, (long long)nOomRuns);
  }
  printf("%d passed, %d failed, %d skipped\n", nPass, nFail, nSkip);
  return nFail>0;
}

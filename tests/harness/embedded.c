/*
** tests/harness/embedded.c: chash linked into a program, as an application
** embeds it: the one-file build (dist/chash.c, compiled with -DSQLITE_CORE)
** registered on every connection with sqlite3_auto_extension().
**
** Usage:   build/embedded FILE.sql
**
** Runs FILE.sql on an in-memory database, skipping the sqlite3 shell's
** dot-commands, and prints every row as the shell's list mode does (values
** as text, '|' between them, NULL as nothing), so that the output can be
** compared with the shell's with the loadable extension. Exits 1 at the
** first error.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chash.h"

/* The whole of FILE, without its lines that start with '.'. */
static char *embedded_read_sql(const char *zPath){
  FILE *in = fopen(zPath, "r");
  char zLine[4096];
  size_t n = 0, nAlloc = 1;
  char *z = malloc(1);
  if( in==NULL || z==NULL ){
    fprintf(stderr, "embedded: cannot read %s\n", zPath);
    exit(2);
  }
  z[0] = 0;
  while( fgets(zLine, sizeof(zLine), in) ){
    size_t m = strlen(zLine);
    if( zLine[0]=='.' ) continue;
    if( n+m+1>nAlloc ){
      nAlloc = 2*(n+m+1);
      z = realloc(z, nAlloc);
      if( z==NULL ){ fprintf(stderr, "embedded: out of memory\n"); exit(2); }
    }
    memcpy(z+n, zLine, m+1);
    n += m;
  }
  fclose(in);
  return z;
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  const char *zTail;
  char *zSql;

  if( argc!=2 ){
    fprintf(stderr, "usage: %s FILE.sql\n", argv[0]);
    return 2;
  }
  if( sqlite3_auto_extension((void (*)(void))sqlite3_chash_init)!=SQLITE_OK
   || sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "embedded: cannot open a database with chash\n");
    return 1;
  }
  zSql = embedded_read_sql(argv[1]);
  zTail = zSql;
  while( *zTail ){
    sqlite3_stmt *pStmt = 0;
    int rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zTail);
    if( rc!=SQLITE_OK ){
      fprintf(stderr, "embedded: %s\n", sqlite3_errmsg(db));
      return 1;
    }
    if( pStmt==NULL ) continue;            /* whitespace or a comment */
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      int i, n = sqlite3_column_count(pStmt);
      for(i=0; i<n; i++){
        const unsigned char *z = sqlite3_column_text(pStmt, i);
        printf("%s%s", i ? "|" : "", z ? (const char*)z : "");
      }
      printf("\n");
    }
    if( rc!=SQLITE_DONE ){
      fprintf(stderr, "embedded: %s\n", sqlite3_errmsg(db));
      return 1;
    }
    sqlite3_finalize(pStmt);
  }
  free(zSql);
  sqlite3_close(db);
  return 0;
}

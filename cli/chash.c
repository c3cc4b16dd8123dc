/*
** cli/chash.c: the command-line tool chash, a thin shell over the SQL
** functions (chash is linked in and registered on every connection with
** sqlite3_auto_extension):
**
**   chash locate --format F --config FILE [--name N] [KEY...]
**   chash locate --db DB [--ring R] [KEY...]
**       the node of each KEY (or of each line of the standard input):
**       "KEY<TAB>NODE" lines; ch_locate(key, ch_config(F, FILE, N))
**   chash diff --format F OLD NEW [--name N]
**       the exact fraction of keys that move, per source and destination:
**       "SRC<TAB>DST<TAB>SHARE" lines and a total; ch_diff of the two specs
**   chash moved --format F OLD NEW [--name N] < KEYS
**       the keys of the standard input (one a line) that move, as CSV
**       key,src,dst; ch_moved
**   chash export --format F --db DB [--ring R] [--name N]
**       the program's configuration text for a ring table; ch_export
**
** Exit status, as diff(1): 0 success (diff, moved: no key moves), 1 diff
** and moved only: keys move, 2 trouble (bad arguments, a file that cannot
** be read, a configuration chash refuses). Errors go to stderr.
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "chash.h"

#define CLI_MAX_FILE (4 * 1024 * 1024 + 1)   /* ch_config says if too big */

static const char zUsage[] =
  "usage: chash COMMAND [OPTIONS] [ARGS]\n"
  "\n"
  "  chash locate --format F --config FILE [--name N] [KEY...]\n"
  "  chash locate --db DB [--ring R] [KEY...]\n"
  "      where each KEY goes (no KEY: one key per line of standard input);\n"
  "      prints KEY<TAB>NODE lines\n"
  "  chash diff --format F OLD NEW [--name N]\n"
  "      the exact fraction of keys that move from SRC to DST between two\n"
  "      versions of a configuration file: SRC<TAB>DST<TAB>SHARE lines,\n"
  "      then total<TAB><TAB>SHARE\n"
  "  chash moved --format F OLD NEW [--name N] < KEYS\n"
  "      the keys (one a line) that move, as CSV: key,src,dst\n"
  "  chash export --format F --db DB [--ring R] [--name N]\n"
  "      a ring table as the configuration text of program F\n"
  "\n"
  "formats: nutcracker, nginx, haproxy, envoy, libmemcached, spymemcached,\n"
  "hashring, nodetool_ring, redis_nodes, dalli, pymemcache, redis_cli.\n"
  "--name picks the pool, upstream, backend or cluster of a file that\n"
  "holds several (export: names the one written).\n"
  "Exit status: 0 done (diff, moved: no key moves), 1 keys move (diff,\n"
  "moved), 2 trouble. See docs/reference.md.\n";

/* What the command line gives. */
typedef struct cli_args {
  const char *zCommand;
  const char *zFormat, *zConfig, *zName, *zDb, *zRing;
  const char **azArg;                  /* the other arguments */
  int nArg;
} cli_args;

static int cli_usage_error(const char *zMsg, const char *zWhat){
  fprintf(stderr, "chash: %s%s\n(chash --help for usage)\n", zMsg,
          zWhat ? zWhat : "");
  return 2;
}

/* The whole of file zPath, NUL-terminated, in *pz (*pn bytes); NULL with a
** message on stderr if it cannot be read. */
static char *cli_read_file(const char *zPath, int *pn){
  FILE *in = fopen(zPath, "rb");
  if( in==NULL ){
    fprintf(stderr, "chash: cannot read %s\n", zPath);
    return NULL;
  }
  char *z = malloc(CLI_MAX_FILE+1);
  size_t n = z ? fread(z, 1, CLI_MAX_FILE, in) : 0;
  int bad = z==NULL || ferror(in);
  fclose(in);
  if( bad ){
    fprintf(stderr, "chash: cannot read %s\n", zPath);
    free(z);
    return NULL;
  }
  z[n] = 0;
  *pn = (int)n;
  return z;
}

/* Column i of a row as text: a NULL (a key no node serves, such as one
** of a Redis map's uncovered slots) is an empty field, as in CSV. */
static const char *cli_column(sqlite3_stmt *pStmt, int i){
  const char *z = (const char *)sqlite3_column_text(pStmt, i);
  return z ? z : "";
}

/* Prepare zSql on db; NULL with the error on stderr. */
static sqlite3_stmt *cli_prepare(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = NULL;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)!=SQLITE_OK ){
    fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
    return NULL;
  }
  return pStmt;
}

/* The ring spec of a configuration file: ch_config(format, text, name).
** Returns a malloc'd spec, or NULL with the error on stderr. */
static char *cli_spec(sqlite3 *db, const cli_args *a, const char *zPath){
  int n;
  char *zText = cli_read_file(zPath, &n);
  if( zText==NULL ) return NULL;
  sqlite3_stmt *pStmt = cli_prepare(db, a->zName
                                    ? "SELECT ch_config(?1, ?2, ?3)"
                                    : "SELECT ch_config(?1, ?2)");
  char *zSpec = NULL;
  if( pStmt ){
    sqlite3_bind_text(pStmt, 1, a->zFormat, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zText, n, SQLITE_STATIC);
    if( a->zName ) sqlite3_bind_text(pStmt, 3, a->zName, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      zSpec = strdup(cli_column(pStmt, 0));
      if( zSpec==NULL ) fprintf(stderr, "chash: out of memory\n");
    }else{
      fprintf(stderr, "chash: %s: %s\n", zPath, sqlite3_errmsg(db));
    }
    sqlite3_finalize(pStmt);
  }
  free(zText);
  return zSpec;
}

/* The next line of in, without its newline (and a CR before it), into a
** buffer that grows; NULL at the end. */
static char *cli_line(FILE *in, char **pz, size_t *pAlloc, int *pn){
  ssize_t n = getline(pz, pAlloc, in);
  if( n<0 ) return NULL;
  if( n>0 && (*pz)[n-1]=='\n' ) n--;
  if( n>0 && (*pz)[n-1]=='\r' ) n--;
  (*pz)[n] = 0;
  *pn = (int)n;
  return *pz;
}

/* Can z (n bytes) be a field of a tab-separated line as it is? A tab, a
** line break or a NUL byte in it would make the line mean otherwise. */
static int cli_tsv_field(const char *z, int n){
  for(int i=0; i<n; i++){
    if( z[i]=='\t' || z[i]=='\n' || z[i]==0 ) return 0;
  }
  return 1;
}

static int cli_tsv_refused(const char *zWhat){
  fprintf(stderr, "chash: %s holds a tab, a line break or a NUL byte, which "
          "a tab-separated line cannot show (chash moved writes CSV; SQL "
          "takes any key)\n", zWhat);
  return 2;
}

/* chash locate */
static int cli_locate(sqlite3 *db, const cli_args *a){
  char *zSpec = NULL;
  if( a->zConfig ){
    if( a->zFormat==NULL ) return cli_usage_error("--config needs --format", 0);
    zSpec = cli_spec(db, a, a->zConfig);
    if( zSpec==NULL ) return 2;
  }else if( a->zDb==NULL ){
    return cli_usage_error("locate needs --config FILE or --db DB", 0);
  }
  /* Keys given as arguments are checked before any is looked up. */
  for(int i=0; i<a->nArg; i++){
    if( !cli_tsv_field(a->azArg[i], (int)strlen(a->azArg[i])) ){
      char zWhat[30];
      snprintf(zWhat, sizeof(zWhat), "key %d", i+1);
      free(zSpec);
      return cli_tsv_refused(zWhat);
    }
  }
  sqlite3_stmt *pStmt = cli_prepare(db, a->zRing || zSpec
                                    ? "SELECT ch_locate(?1, ?2)"
                                    : "SELECT ch_locate(?1)");
  int rc = pStmt ? 0 : 2;
  const char *zRing = zSpec ? zSpec : a->zRing;
  char *zLine = NULL;
  size_t nAlloc = 0;
  for(int i=0; rc==0; i++){
    const char *zKey;
    int nKey;
    if( a->nArg>0 ){
      if( i>=a->nArg ) break;
      zKey = a->azArg[i];
      nKey = (int)strlen(zKey);
    }else if( (zKey = cli_line(stdin, &zLine, &nAlloc, &nKey))==NULL ){
      break;
    }
    if( !cli_tsv_field(zKey, nKey) ){
      char zWhat[60];
      snprintf(zWhat, sizeof(zWhat), "line %d of the standard input", i+1);
      rc = cli_tsv_refused(zWhat);
      break;
    }
    sqlite3_bind_text(pStmt, 1, zKey, nKey, SQLITE_STATIC);
    if( zRing ) sqlite3_bind_text(pStmt, 2, zRing, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zNode = cli_column(pStmt, 0);
      if( !cli_tsv_field(zNode, sqlite3_column_bytes(pStmt, 0)) ){
        rc = cli_tsv_refused("the name of the key's node");
      }else{
        printf("%s\t%s\n", zKey, zNode);
      }
    }else{
      fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
      rc = 2;
    }
    sqlite3_reset(pStmt);
  }
  free(zLine);
  sqlite3_finalize(pStmt);
  free(zSpec);
  return rc;
}

/* The two specs of diff and moved, or 2. */
static int cli_two_specs(sqlite3 *db, const cli_args *a, char **pzOld,
                         char **pzNew){
  if( a->zFormat==NULL ) return cli_usage_error(a->zCommand, " needs --format");
  if( a->nArg!=2 ){
    return cli_usage_error(a->zCommand, " takes two files: OLD NEW");
  }
  *pzOld = cli_spec(db, a, a->azArg[0]);
  *pzNew = *pzOld ? cli_spec(db, a, a->azArg[1]) : NULL;
  if( *pzNew==NULL ){
    free(*pzOld);
    return 2;
  }
  return 0;
}

/* chash diff */
static int cli_diff(sqlite3 *db, const cli_args *a){
  char *zOld, *zNew;
  if( cli_two_specs(db, a, &zOld, &zNew) ) return 2;
  sqlite3_stmt *pStmt = cli_prepare(db,
      "SELECT src, dst, sum(share) FROM ch_diff(?1, ?2) GROUP BY src, dst "
      "ORDER BY src, dst");
  int rc = pStmt ? 0 : 2;
  double total = 0;
  if( pStmt ){
    sqlite3_bind_text(pStmt, 1, zOld, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zNew, -1, SQLITE_STATIC);
    int step;
    while( (step = sqlite3_step(pStmt))==SQLITE_ROW ){
      const char *zSrc = cli_column(pStmt, 0);
      const char *zDst = cli_column(pStmt, 1);
      if( !cli_tsv_field(zSrc, sqlite3_column_bytes(pStmt, 0))
       || !cli_tsv_field(zDst, sqlite3_column_bytes(pStmt, 1)) ){
        rc = cli_tsv_refused("a node name");
        break;
      }
      printf("%s\t%s\t%.17g\n", zSrc, zDst, sqlite3_column_double(pStmt, 2));
      total += sqlite3_column_double(pStmt, 2);
      rc = 1;
    }
    if( rc<2 && step!=SQLITE_DONE ){
      fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
      rc = 2;
    }
    if( rc<2 ) printf("total\t\t%.17g\n", total);
    sqlite3_finalize(pStmt);
  }
  free(zOld);
  free(zNew);
  return rc;
}

/* One CSV field (RFC 4180: quoted when it holds a comma, quote or line
** break). */
static void cli_csv(const char *z, int n, const char *zEnd){
  int bQuote = 0;
  for(int i=0; i<n; i++){
    if( z[i]==',' || z[i]=='"' || z[i]=='\n' || z[i]=='\r' ) bQuote = 1;
  }
  if( !bQuote ){
    fwrite(z, 1, (size_t)n, stdout);
  }else{
    putchar('"');
    for(int i=0; i<n; i++){
      if( z[i]=='"' ) putchar('"');
      putchar(z[i]);
    }
    putchar('"');
  }
  fputs(zEnd, stdout);
}

/* chash moved */
static int cli_moved(sqlite3 *db, const cli_args *a){
  char *zOld, *zNew;
  if( cli_two_specs(db, a, &zOld, &zNew) ) return 2;
  sqlite3_stmt *pStmt = cli_prepare(db,
      "SELECT ch_moved(?1, ?2, ?3), ch_locate(?1, ?2), ch_locate(?1, ?3)");
  int rc = pStmt ? 0 : 2;
  char *zLine = NULL;
  size_t nAlloc = 0;
  int nKey;
  if( pStmt ) printf("key,src,dst\n");
  while( rc<2 && cli_line(stdin, &zLine, &nAlloc, &nKey) ){
    sqlite3_bind_text(pStmt, 1, zLine, nKey, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zOld, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 3, zNew, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
      rc = 2;
    }else if( sqlite3_column_int(pStmt, 0) ){
      cli_csv(zLine, nKey, ",");
      for(int i=1; i<=2; i++){
        cli_csv((const char *)sqlite3_column_text(pStmt, i),
                sqlite3_column_bytes(pStmt, i), i==1 ? "," : "\n");
      }
      rc = 1;
    }
    sqlite3_reset(pStmt);
  }
  free(zLine);
  sqlite3_finalize(pStmt);
  free(zOld);
  free(zNew);
  return rc;
}

/* The ring table of the database when there is exactly one (malloc'd),
** else NULL with a message listing them. */
static char *cli_only_ring(sqlite3 *db, const char *zDb){
  sqlite3_stmt *pStmt = cli_prepare(db,
      "SELECT count(*), group_concat(name, ', ') FROM sqlite_schema "
      "WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING chash%'");
  if( pStmt==NULL ) return NULL;
  char *zRing = NULL;
  if( sqlite3_step(pStmt)!=SQLITE_ROW ){
    fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
  }else if( sqlite3_column_int(pStmt, 0)!=1 ){
    const char *zList = (const char *)sqlite3_column_text(pStmt, 1);
    fprintf(stderr, "chash: %s holds %d ring tables%s%s: name one with "
            "--ring\n", zDb, sqlite3_column_int(pStmt, 0), zList ? ": " : "",
            zList ? zList : "");
  }else{
    zRing = strdup(cli_column(pStmt, 1));
    if( zRing==NULL ) fprintf(stderr, "chash: out of memory\n");
  }
  sqlite3_finalize(pStmt);
  return zRing;
}

/* chash export */
static int cli_export(sqlite3 *db, const cli_args *a){
  if( a->zFormat==NULL ) return cli_usage_error("export needs --format", 0);
  if( a->zDb==NULL ) return cli_usage_error("export needs --db DB", 0);
  if( a->nArg>0 ) return cli_usage_error("export takes no argument: ",
                                         a->azArg[0]);
  char *zRing = a->zRing ? strdup(a->zRing) : cli_only_ring(db, a->zDb);
  if( zRing==NULL ){
    if( a->zRing ) fprintf(stderr, "chash: out of memory\n");
    return 2;
  }
  sqlite3_stmt *pStmt = cli_prepare(db, a->zName
                                    ? "SELECT ch_export(?1, ?2, ?3)"
                                    : "SELECT ch_export(?1, ?2)");
  int rc = 2;
  if( pStmt ){
    sqlite3_bind_text(pStmt, 1, zRing, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, a->zFormat, -1, SQLITE_STATIC);
    if( a->zName ) sqlite3_bind_text(pStmt, 3, a->zName, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      fputs(cli_column(pStmt, 0), stdout);
      rc = 0;
    }else{
      fprintf(stderr, "chash: %s\n", sqlite3_errmsg(db));
    }
    sqlite3_finalize(pStmt);
  }
  free(zRing);
  return rc;
}

/* chash --version */
static int cli_version(sqlite3 *db, const cli_args *a){
  (void)a;
  sqlite3_stmt *pStmt = cli_prepare(db, "SELECT ch_version(), sqlite_version()");
  if( pStmt==NULL || sqlite3_step(pStmt)!=SQLITE_ROW ){
    sqlite3_finalize(pStmt);
    return 2;
  }
  printf("chash %s (SQLite %s)\n", (const char *)sqlite3_column_text(pStmt, 0),
         (const char *)sqlite3_column_text(pStmt, 1));
  sqlite3_finalize(pStmt);
  return 0;
}

/* Read the options and arguments; returns 0, or 2 after a message. */
static int cli_parse(int argc, const char **argv, cli_args *a){
  static const struct { const char *zOpt; size_t off; } aOpt[] = {
    { "--format", offsetof(cli_args, zFormat) },
    { "--config", offsetof(cli_args, zConfig) },
    { "--name",   offsetof(cli_args, zName) },
    { "--db",     offsetof(cli_args, zDb) },
    { "--ring",   offsetof(cli_args, zRing) },
  };
  a->zCommand = argv[1];
  a->azArg = calloc((size_t)argc, sizeof(char *));
  if( a->azArg==NULL ) return cli_usage_error("out of memory", 0);
  for(int i=2; i<argc; i++){
    const char *z = argv[i];
    if( strcmp(z, "--")==0 ){
      while( ++i<argc ) a->azArg[a->nArg++] = argv[i];
      break;
    }
    if( strncmp(z, "--", 2)!=0 ){
      a->azArg[a->nArg++] = z;
      continue;
    }
    size_t k = 0;
    while( k<sizeof(aOpt)/sizeof(aOpt[0]) && strcmp(aOpt[k].zOpt, z)!=0 ) k++;
    if( k==sizeof(aOpt)/sizeof(aOpt[0]) ){
      return cli_usage_error("unknown option ", z);
    }
    if( i+1>=argc ) return cli_usage_error(z, " needs a value");
    const char **pz = (const char **)((char *)a + aOpt[k].off);
    if( *pz ) return cli_usage_error(z, " is given twice");
    *pz = argv[++i];
  }
  return 0;
}

int main(int argc, const char **argv){
  if( argc<2 ) return cli_usage_error("no command", 0);
  for(int i=1; i<argc; i++){
    if( strcmp(argv[i], "--help")==0 || strcmp(argv[i], "-h")==0 ){
      fputs(zUsage, stdout);
      return 0;
    }
  }
  static const struct {
    const char *zName;
    int (*xRun)(sqlite3 *, const cli_args *);
  } aCmd[] = {
    { "locate", cli_locate }, { "diff", cli_diff }, { "moved", cli_moved },
    { "export", cli_export }, { "--version", cli_version },
  };
  size_t c = 0;
  while( c<sizeof(aCmd)/sizeof(aCmd[0]) && strcmp(aCmd[c].zName, argv[1]) ) c++;
  if( c==sizeof(aCmd)/sizeof(aCmd[0]) ){
    return cli_usage_error("unknown command ", argv[1]);
  }
  cli_args a;
  memset(&a, 0, sizeof(a));
  int rc = cli_parse(argc, argv, &a);
  if( rc==0 && a.zDb && a.zConfig ){
    rc = cli_usage_error("give --config or --db, not both", 0);
  }
  sqlite3 *db = NULL;
  if( rc==0 ){
    sqlite3_auto_extension((void (*)(void))sqlite3_chash_init);
    int flags = a.zDb ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if( sqlite3_open_v2(a.zDb ? a.zDb : ":memory:", &db, flags, NULL)
        !=SQLITE_OK ){
      fprintf(stderr, "chash: cannot open %s: %s\n", a.zDb ? a.zDb : "",
              sqlite3_errmsg(db));
      rc = 2;
    }
  }
  if( rc==0 ) rc = aCmd[c].xRun(db, &a);
  if( fflush(stdout)!=0 && rc<2 ){
    fprintf(stderr, "chash: cannot write the output\n");
    rc = 2;
  }
  sqlite3_close(db);
  free(a.azArg);
  return rc;
}

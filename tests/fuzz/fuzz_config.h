/*
** tests/fuzz/fuzz_config.h: what the configuration fuzz targets
** (fuzz_nginx.c, fuzz_haproxy.c, fuzz_nutcracker.c, fuzz_envoy.c,
** fuzz_libmemcached.c, fuzz_hashring.c, fuzz_nodetool_ring.c,
** fuzz_redis_nodes.c, fuzz_dalli.c, fuzz_pymemcache.c, fuzz_redis_cli.c)
** share. The input is a configuration text of format FUZZ_FORMAT, read by
** ch_config with no pool name and with the name "a"; a spec it gives is
** placed on (ch_locate) and written back (ch_export), and the text written
** must read back as the same spec: an input where it does not is a crash.
*/
#include "fuzz.h"

/* The spec that `SELECT ch_config(FUZZ_FORMAT, ?1 [, 'a'])` gives for
** the text, malloc'd, or NULL on an error. */
static char *fuzz_config_spec(sqlite3 *db, const char *zSql, const void *p,
                              int n){
  sqlite3_stmt *pStmt = NULL;
  char *zSpec = NULL;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)!=SQLITE_OK ) return NULL;
  sqlite3_bind_text(pStmt, 1, p, n, SQLITE_TRANSIENT);
  if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_text(pStmt, 0) ){
    zSpec = strdup((const char *)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  return zSpec;
}

/* The spec, placed and exported; the export read back must be the spec. */
static void fuzz_config_round_trip(sqlite3 *db, const char *zSpec){
  fuzz_query(db, "SELECT ch_locate('key', ?1), ch_locate('', ?1)", zSpec,
             (int)strlen(zSpec), 0);
  char *zText = fuzz_config_spec(db, "SELECT ch_export(?1, '" FUZZ_FORMAT
                                 "', 'p')", zSpec, (int)strlen(zSpec));
  if( zText==NULL ) return;            /* not a ring, or not writable */
  char *zBack = fuzz_config_spec(db, "SELECT ch_config('" FUZZ_FORMAT
                                 "', ?1)", zText, (int)strlen(zText));
  if( zBack==NULL || strcmp(zBack, zSpec)!=0 ){
    fprintf(stderr, "round trip: spec %s\nexported as:\n%s\nread back as "
            "%s\n", zSpec, zText, zBack ? zBack : "(an error)");
    abort();
  }
  free(zBack);
  free(zText);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size>65536 ) return 0;
  static int nProgress;
  static sqlite3 *pShared;
  sqlite3 *db = fuzz_shared_db(&pShared, "SELECT 1", &nProgress);
  const char *azSql[] = {
    "SELECT ch_config('" FUZZ_FORMAT "', ?1)",
    "SELECT ch_config('" FUZZ_FORMAT "', ?1, 'a')",
  };
  for(int i=0; i<2; i++){
    char *zSpec = fuzz_config_spec(db, azSql[i], data, (int)size);
    if( zSpec ) fuzz_config_round_trip(db, zSpec);
    free(zSpec);
  }
  return 0;
}

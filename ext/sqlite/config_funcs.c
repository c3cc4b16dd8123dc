/*
** config_funcs.c: the SQL functions over configuration files (the formats
** are ext/config/):
**
**   ch_config(format, text [, name])   the JSON ring spec of the pool
**   ch_export(ring, format [, name])   the program's text for a ring
**
** ch_config is a pure function of its arguments: DETERMINISTIC and
** INNOCUOUS. ch_export reads a ring that can change, as ch_locate does:
** INNOCUOUS only.
*/
#include <string.h>

#include "algo.h"
#include "config.h"
#include "sqlite_layer.h"

/* Argument i as text, or NULL with the error set on ctx (a NULL value is
** the error "zFunc: zWhat is NULL"). *pn gets its length. */
static const char *config_text_arg(sqlite3_context *ctx, sqlite3_value *v,
                                   const char *zFunc, const char *zWhat,
                                   int *pn){
  if( sqlite3_value_type(v)==SQLITE_NULL ){
    char *zMsg = sqlite3_mprintf("%s: %s is NULL", zFunc, zWhat);
    chash_result_error(ctx, zMsg);
    sqlite3_free(zMsg);
    return NULL;
  }
  const char *z = (const char *)sqlite3_value_text(v);
  if( z==NULL ){
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  *pn = sqlite3_value_bytes(v);
  return z;
}

/* The result of a config_read_spec or config_write_ring call. */
static void config_result(sqlite3_context *ctx, const char *zFunc, int rc,
                          char *zOut, char *zErr){
  if( rc==CONFIG_OK ){
    sqlite3_result_text(ctx, zOut, -1, SQLITE_TRANSIENT);
  }else if( rc==CONFIG_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    char *zMsg = sqlite3_mprintf("%s: %s", zFunc, zErr);
    chash_result_error(ctx, zMsg);
    sqlite3_free(zMsg);
  }
  ring_dealloc(zOut);
  ring_dealloc(zErr);
}

/* ch_config(format, text [, name]) */
static void config_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int nFormat, nText, nName;
  const char *zFormat = config_text_arg(ctx, argv[0], "ch_config",
                                        "the format", &nFormat);
  if( zFormat==NULL ) return;
  const char *zName = NULL;
  if( argc>2 ){
    zName = config_text_arg(ctx, argv[2], "ch_config", "the pool name",
                            &nName);
    if( zName==NULL ) return;
  }
  /* Read last: reading another argument as text could convert it. */
  const char *zText = config_text_arg(ctx, argv[1], "ch_config",
                                      "the text (readfile() of a file "
                                      "that is not there?)", &nText);
  if( zText==NULL ) return;
  if( (int)strlen(zText)!=nText ){
    sqlite3_result_error(ctx, "ch_config: the text holds a NUL byte", -1);
    return;
  }
  char *zSpec = NULL, *zErr = NULL;
  int rc = config_read_spec(zFormat, zText, (size_t)nText, zName, &zSpec,
                            &zErr);
  config_result(ctx, "ch_config", rc, zSpec, zErr);
}

/* ch_export(ring, format [, name]) */
static void export_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int nFormat, nName;
  const char *zFormat = config_text_arg(ctx, argv[1], "ch_export",
                                        "the format", &nFormat);
  if( zFormat==NULL ) return;
  const char *zName = NULL;
  if( argc>2 ){
    zName = config_text_arg(ctx, argv[2], "ch_export", "the pool name",
                            &nName);
    if( zName==NULL ) return;
  }
  ring *r = NULL;
  spec_table where = {0};
  char *zErr = NULL;
  int rc = spec_ring_value(sqlite3_user_data(ctx), argv[0], "ch_export", &r,
                           &where, &zErr);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
    else chash_result_error(ctx, zErr);
    sqlite3_free(zErr);
    return;
  }
  /* The pool is named as the table, unless named; an inline ring "chash". */
  if( zName==NULL ) zName = where.zName ? where.zName : "chash";
  if( r->n_nodes==0 ){
    sqlite3_result_error(ctx, "ch_export: the ring is empty (it has no "
                         "nodes)", -1);
  }else{
    char *zText = NULL;
    rc = config_write_ring(zFormat, r, zName, &zText, &zErr);
    config_result(ctx, "ch_export", rc, zText, zErr);
  }
  ring_release(r);
  spec_table_free(&where);
}

int config_funcs_register(sqlite3 *db, chash_conn *conn){
  static const int pure = SQLITE_UTF8 | SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC;
  static const int placement = SQLITE_UTF8 | SQLITE_INNOCUOUS;
  static const chash_function_def aFunc[] = {
    { "ch_config", 2, pure, config_func },
    { "ch_config", 3, pure, config_func },
    { "ch_export", 2, placement, export_func },
    { "ch_export", 3, placement, export_func },
  };
  return chash_functions(db, conn, aFunc, sizeof(aFunc)/sizeof(aFunc[0]));
}

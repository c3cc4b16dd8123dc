/*
** common.c: what every file of the SQLite layer uses: whole numbers in
** values, a key's owner for algorithms that look keys up by their bytes
** (the out-of-line half of key_value.h's value_owner), the error helpers
** of functions and of virtual tables, statements prepared from a
** %-format, and the registration of a function. (The rule that turns a key value into the bytes it hashes is
** key_value.h's, inline.)
*/
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "key_value.h"
#include "sqlite_layer.h"

int value_whole_int64(sqlite3_value *v, int64_t *pOut){
  switch( sqlite3_value_type(v) ){
    case SQLITE_INTEGER:
      *pOut = sqlite3_value_int64(v);
      return 1;
    case SQLITE_FLOAT: {
      /* -2^63 is a double and an int64; 2^63 is a double but no int64.
      ** NaN fails both comparisons; -0.0 converts to 0. */
      double d = sqlite3_value_double(v);
      if( !(d>=-9223372036854775808.0 && d<9223372036854775808.0)
       || d!=floor(d) ){
        return 0;
      }
      *pOut = (int64_t)d;
      return 1;
    }
    default:
      return 0;
  }
}

int value_owner_by_bytes(sqlite3_value *v, const ring *r, uint32_t *pOwner){
  char zInt[24];
  const void *p;
  size_t n;
  if( !key_bytes(v, zInt, &p, &n) ) return 0;
  *pOwner = ring_locate_key(r, p, n);
  return 1;
}

int value_owners_by_bytes(sqlite3_value *v, const ring *rOld,
                          const ring *rNew, uint32_t *pOld, uint32_t *pNew){
  return value_owner(v, rOld, pOld) && value_owner(v, rNew, pNew);
}

void chash_result_error(sqlite3_context *ctx, const char *zMsg){
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
}

int chash_vtab_error(sqlite3_vtab *pVtab, int rc, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  /* An error that cannot be worded is an out-of-memory error. */
  if( pVtab->zErrMsg==NULL ) return SQLITE_NOMEM;
  return rc==SQLITE_OK ? SQLITE_ERROR : rc;
}

/* Prepare the statement in zFmt (a %-format; NULL zFmt result = NOMEM),
** touching real tables only (NO_VTAB). */
int chash_prepare_fmt(sqlite3 *db, sqlite3_stmt **ppStmt, unsigned flags,
                      const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  char *zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  *ppStmt = NULL;
  if( zSql==NULL ) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v3(db, zSql, -1, flags | SQLITE_PREPARE_NO_VTAB,
                              ppStmt, NULL);
  sqlite3_free(zSql);
  return rc;
}

/* Run zSql (a %-format) to completion. */
int chash_exec_fmt(sqlite3 *db, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  char *zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==NULL ) return SQLITE_NOMEM;
  int rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  sqlite3_free(zSql);
  return rc;
}

const char *chash_cut_mark(const char *z){
  int nChar = 0;
  for(; *z; z++){
    /* UTF-8 continuation bytes do not start a character. */
    if( ((unsigned char)*z & 0xC0)!=0x80 && ++nChar>60 ) return "...";
  }
  return "";
}

int64_t chash_random_int64(void){
  int64_t v;
  sqlite3_randomness(sizeof(v), &v);
  return v;
}

int chash_function(sqlite3 *db, const char *zName, int nArg, int flags,
                   chash_conn *conn,
                   void (*xFunc)(sqlite3_context *, int, sqlite3_value **),
                   void (*xStep)(sqlite3_context *, int, sqlite3_value **),
                   void (*xFinal)(sqlite3_context *)){
  if( conn==NULL ){
    return sqlite3_create_function_v2(db, zName, nArg, flags, NULL, NULL,
                                      NULL, NULL, NULL);
  }
  return sqlite3_create_function_v2(db, zName, nArg, flags, conn_retain(conn),
                                    xFunc, xStep, xFinal, conn_release);
}

int chash_functions(sqlite3 *db, chash_conn *conn,
                    const chash_function_def *aFunc, size_t n){
  for(size_t i=0; i<n; i++){
    int rc = chash_function(db, aFunc[i].zName, aFunc[i].nArg,
                            aFunc[i].flags, conn, aFunc[i].xFunc, NULL, NULL);
    if( rc!=SQLITE_OK && conn ) return rc;
  }
  return SQLITE_OK;
}

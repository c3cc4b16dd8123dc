/*
** common.c: what every file of the SQLite layer uses: the rule that turns a
** key value into the bytes it hashes (and its position under a ring's key
** rule), the error helpers of functions and of
** virtual tables, and
** statements prepared from a %-format.
*/
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "sqlite_layer.h"

/* Decimal text of v, written to end at buf+24; returns where it starts.
** Two digits per division: integer keys are the common case of a scan. */
static inline __attribute__((always_inline))
const char *format_int64(int64_t v, char buf[24]){
  static const char aPair[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";
  char *z = buf + 24;
  uint64_t u = v<0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  while( u>=100 ){
    unsigned d = (unsigned)(u % 100);
    u /= 100;
    z -= 2;
    memcpy(z, &aPair[2*d], 2);
  }
  if( u>=10 ){
    z -= 2;
    memcpy(z, &aPair[2*u], 2);
  }else{
    *--z = (char)('0' + u);
  }
  if( v<0 ) *--z = '-';
  return z;
}

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

/* key_bytes, inline in value_position: it runs once per row. */
static inline __attribute__((always_inline))
int key_bytes_inline(sqlite3_value *v, char zInt[24], const void **pp,
                     size_t *pn){
  const void *p;
  int n;
  int64_t i = 0;
  int eType = sqlite3_value_type(v);
  if( eType==SQLITE_FLOAT && value_whole_int64(v, &i) ) eType = SQLITE_INTEGER;
  else if( eType==SQLITE_INTEGER ) i = sqlite3_value_int64(v);
  switch( eType ){
    case SQLITE_NULL:
      return 0;
    case SQLITE_INTEGER:
      /* 42 and 42.0 (SQL holds them equal) are the text "42". */
      p = format_int64(i, zInt);
      n = (int)(zInt + 24 - (const char *)p);    /* zInt has 24 bytes */
      break;
    case SQLITE_BLOB:
      p = sqlite3_value_blob(v);
      n = sqlite3_value_bytes(v);
      break;
    default:                     /* TEXT; any other REAL as SQLite's text */
      p = sqlite3_value_text(v);
      n = sqlite3_value_bytes(v);
      break;
  }
  *pp = p ? p : "";
  *pn = (size_t)n;
  return 1;
}

int key_bytes(sqlite3_value *v, char zInt[24], const void **pp, size_t *pn){
  return key_bytes_inline(v, zInt, pp, pn);
}

/* An integer key (or 42.0) as k->integer_bytes big-endian bytes into z:
** 1; 0 if v is no integer; -1 if it is out of the range of those bytes. */
static int integer_key_bytes(sqlite3_value *v, const ring_keys *k,
                             unsigned char z[8]){
  int64_t i;
  int eType = sqlite3_value_type(v);
  if( eType==SQLITE_INTEGER ) i = sqlite3_value_int64(v);
  else if( eType!=SQLITE_FLOAT || !value_whole_int64(v, &i) ) return 0;
  if( k->integer_bytes==4 && (i<INT32_MIN || i>INT32_MAX) ) return -1;
  for(uint32_t b=0; b<k->integer_bytes; b++){
    z[b] = (unsigned char)((uint64_t)i >> (8*(k->integer_bytes-1-b)));
  }
  return 1;
}

int value_position(sqlite3_value *v, const ring_keys *k, uint64_t *pPos){
  char zInt[24];
  const void *p;
  size_t n;
  if( k->integer_bytes ){
    unsigned char zBytes[8];
    int bInt = integer_key_bytes(v, k, zBytes);
    if( bInt<0 ) return 0;               /* no int has that value */
    if( bInt ){
      *pPos = ring_keys_place(k, zBytes, k->integer_bytes);
      return 1;
    }
  }
  if( !key_bytes_inline(v, zInt, &p, &n) ) return 0;
  if( k->hash==HASH_IDENTITY ){
    /* identity places integer keys only; any other key is like NULL. */
    size_t nPart = n;
    const void *pPart = k->tag[0] ? hash_tag_part(k->tag, p, n, &nPart) : p;
    if( !hash_identity_ok(k->hash, pPart, nPart) ) return 0;
  }
  *pPos = ring_keys_place(k, p, n);
  return 1;
}

int value_positions(sqlite3_value *v, const ring_keys *kOld,
                    const ring_keys *kNew, uint64_t *pOld, uint64_t *pNew){
  if( !value_position(v, kOld, pOld) ) return 0;
  if( ring_keys_same(kOld, kNew) ){
    *pNew = *pOld;
    return 1;
  }
  return value_position(v, kNew, pNew);
}

int value_owner_by_bytes(sqlite3_value *v, const ring *r, uint32_t *pOwner){
  char zInt[24];
  const void *p;
  size_t n;
  if( !key_bytes_inline(v, zInt, &p, &n) ) return 0;
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

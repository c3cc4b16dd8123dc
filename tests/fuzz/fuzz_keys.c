/*
** tests/fuzz/fuzz_keys.c: keys of every type. The first input byte picks
** the key's type (text, blob, integer, real, NULL) and the ring; the rest
** is the key. Checks that a key lands on a node of the ring and that
** placement agrees with itself (ch_locate twice, ch_moved against itself).
*/
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size<1 || size>65536 ) return 0;
  static const char *const azRing[] = {
    "r", "m", "r@1", "{\"nodes\":{\"p\":1,\"q\":0.001},\"vnodes\":3}",
  };
  static int nProgress;
  static sqlite3 *pShared;
  sqlite3 *db = fuzz_shared_db(&pShared,
    "CREATE VIRTUAL TABLE r USING chash(vnodes=16, seed=99);"
    "CREATE VIRTUAL TABLE m USING chash(algorithm=modn, hash=xxh64);"
    "INSERT INTO r(node) VALUES ('a'), ('b'), ('c');"
    "INSERT INTO m(node) VALUES ('a'), ('b'), ('c');", &nProgress);
  sqlite3_stmt *pStmt = NULL;
  if( sqlite3_prepare_v2(db,
        "SELECT ch_locate(?1, ?2), ch_locate(?1, ?2), ch_moved(?1, ?2, ?2),"
        " ch_hash(?1), ch_hash(?1, 'xxh64')", -1, &pStmt, NULL)!=SQLITE_OK ){
    abort();
  }
  int eType = data[0] % 5;
  const uint8_t *p = data+1;
  int n = (int)size-1;
  int64_t i = 0;
  double r = 0;
  switch( eType ){
    case 0: sqlite3_bind_text(pStmt, 1, (const char *)p, n, SQLITE_STATIC); break;
    case 1: sqlite3_bind_blob(pStmt, 1, p, n, SQLITE_STATIC); break;
    case 2: memcpy(&i, p, n<8 ? n : 8); sqlite3_bind_int64(pStmt, 1, i); break;
    case 3: memcpy(&r, p, n<8 ? n : 8); sqlite3_bind_double(pStmt, 1, r); break;
    default: sqlite3_bind_null(pStmt, 1); break;
  }
  sqlite3_bind_text(pStmt, 2, azRing[(data[0]/5) % 4], -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *a = (const char *)sqlite3_column_text(pStmt, 0);
    const char *b = (const char *)sqlite3_column_text(pStmt, 1);
    /* NULL key: NULL owner; otherwise one of the ring's nodes, stable. */
    int bNull = eType==4 || (eType==3 && r!=r);   /* SQLite binds NaN as NULL */
    if( bNull != (a==NULL) ) abort();
    if( a && (b==NULL || strcmp(a, b)!=0 || strlen(a)!=1) ) abort();
    if( a && sqlite3_column_int(pStmt, 2)!=0 ) abort();
  }
  sqlite3_finalize(pStmt);
  return 0;
}

/*
** tests/fuzz/fuzz_dml.c: sequences of DML and queries on a ring, driven by
** the input. Each input byte is an operation (its low 4 bits) and an
** argument (its high 4 bits): add, remove, reweight, rename, INSERT OR
** REPLACE, begin, commit, rollback, savepoint, rollback to, locate, moved,
** read the table. Node names come from a small alphabet (so operations
** collide) or, rarely, from the input itself. After every operation the
** ring must agree with itself: shares sum to 1 and ch_epoch() is the
** highest version in the history.
*/
#include <math.h>

#include "fuzz.h"

/* The single integer of a query, or -1 if it fails. */
static double query_num(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = NULL;
  double v = -1;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    v = sqlite3_column_type(pStmt, 0)==SQLITE_NULL ? -2
                                                   : sqlite3_column_double(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return v;
}

/* Shares sum to 1 (or there are no nodes); the epoch is the history's. */
static void check(sqlite3 *db){
  double s = query_num(db, "SELECT sum(share) FROM r");
  if( s!=-2 && s!=-1 && fabs(s-1.0)>1e-9 ) abort();
  double e = query_num(db, "SELECT ch_epoch('r')");
  double h = query_num(db, "SELECT coalesce(max(epoch), 0) FROM r_history");
  if( e>=0 && e!=h ) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size>512 ) return 0;
  int nProgress;
  sqlite3 *db = fuzz_open_image("CREATE VIRTUAL TABLE r USING chash(vnodes=3)",
                                 &nProgress);
  for(size_t i=0; i<size; i++){
    int op = data[i] & 0xf, arg = data[i] >> 4;
    char zName[40];
    snprintf(zName, sizeof(zName), "n%d", arg % 6);
    char *zSql = NULL;
    switch( op ){
      case 0: zSql = sqlite3_mprintf("INSERT INTO r(node, weight) VALUES"
                                     " (%Q, %d)", zName, arg % 4 + 1); break;
      case 1: zSql = sqlite3_mprintf("DELETE FROM r WHERE node=%Q", zName); break;
      case 2: zSql = sqlite3_mprintf("UPDATE r SET weight=%f WHERE node=%Q",
                                     arg/3.0 + 0.1, zName); break;
      case 3: zSql = sqlite3_mprintf("UPDATE r SET node='n%d' WHERE node=%Q",
                                     (arg+1) % 6, zName); break;
      case 4: zSql = sqlite3_mprintf("INSERT OR REPLACE INTO r(node, weight)"
                                     " VALUES (%Q, 2)", zName); break;
      case 5: zSql = sqlite3_mprintf("BEGIN"); break;
      case 6: zSql = sqlite3_mprintf("COMMIT"); break;
      case 7: zSql = sqlite3_mprintf("ROLLBACK"); break;
      case 8: zSql = sqlite3_mprintf("SAVEPOINT s%d", arg % 2); break;
      case 9: zSql = sqlite3_mprintf("ROLLBACK TO s%d", arg % 2); break;
      case 10: zSql = sqlite3_mprintf("SELECT ch_locate('k%d', 'r@%d')",
                                      arg, arg % 4); break;
      case 11: zSql = sqlite3_mprintf("SELECT ch_moved(%d, 'r@-1', 'r'),"
                                      " ch_locate(%d)", arg, arg); break;
      case 12: zSql = sqlite3_mprintf("SELECT * FROM r WHERE node=%Q", zName); break;
      case 13: zSql = sqlite3_mprintf("DELETE FROM r WHERE rowid IN (SELECT"
                                      " rowid FROM r WHERE ch_locate(node, 'r')"
                                      " = node LIMIT 1)"); break;
      case 14: {
        /* A node named by the next bytes of the input, as they are. */
        size_t n = size-i-1 < (size_t)arg ? size-i-1 : (size_t)arg;
        char *zNode = sqlite3_mprintf("%.*s", (int)n, data+i+1);
        if( zNode ) zSql = sqlite3_mprintf("INSERT INTO r(node) VALUES (%Q)", zNode);
        sqlite3_free(zNode);
        break;
      }
      default: zSql = sqlite3_mprintf("RELEASE s%d", arg % 2); break;
    }
    if( zSql ) fuzz_query(db, zSql, NULL, 0, 0);
    sqlite3_free(zSql);
    check(db);
  }
  fuzz_close(db);
  return 0;
}

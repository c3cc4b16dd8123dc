/*
** tests/fuzz/fuzz_corrupt.c: corrupted shadow tables. A ring with nodes
** and history is damaged with defensive mode off, as the input says: each
** 4-byte group picks a shadow table, a row, a column and a new value
** (NULL, an integer, a real, text or a blob, some of them extreme), or
** deletes or duplicates a row; a group starting with 0xFF instead puts in
** place of a shadow table something that is not an ordinary table, as a
** crafted file may (a view that calls chash on the ring, a trigger that
** writes it, a virtual table). Then every function and the table itself
** are used, and the table is dropped. Errors are expected; crashes,
** sanitizer reports and leaks are not. (tests/sql/corrupt.test checks the
** wording of the errors.)
*/
#include "fuzz.h"

static const char *const azTable[] = { "r_config", "r_nodes", "r_history" };
static const char *const azCol[3][7] = {
  { "key", "value" },
  { "id", "node", "weight" },
  { "seq", "epoch", "op", "id", "node", "weight", "old" },
};
static const int anCol[3] = { 2, 3, 7 };
static const char *const azValue[] = {
  "NULL", "0", "-1", "1", "2", "9223372036854775807", "-9223372036854775808",
  "1e308", "-0.0", "'x'", "''", "x'00ff'", "'add'", "'remove'", "'rename'",
  "'reweight'", "'a'", "'ring'", "'modn'", "'xxh64'", "100001", "0.5",
  "'9999999999999999999999'", "(SELECT max(rowid) FROM r_nodes)", "1e-300",
  "'a#1'", "char(0)", "'b'", "3", "'format'", "'epoch'", "'vnodes'",
  /* Other algorithms and hashes, so that damage can turn the ring into a
  ** jump or maglev ring with a history it never had, and the other keys. */
  "'jump'", "'maglev'", "'ketama'", "'rendezvous'", "'md5'", "'crc32'",
  "'fnv1a_64'", "65537", "7", "'algorithm'", "'hash'", "'seed'", "'table'",
  "'stamp'", "'points'", "'nextid'", "'created'",
};

/* What group 0xFF t k puts in the place of shadow table t (k picks one;
** each %s is the table's name). */
static const char *const azReplace[] = {
  "CREATE TABLE saved_%s AS SELECT * FROM %s; DROP TABLE %s;"
  " CREATE VIEW %s AS SELECT * FROM saved_%s WHERE ch_locate('k', 'r') IS NOT NULL",
  "CREATE TRIGGER again_%s AFTER INSERT ON %s BEGIN"
  " INSERT INTO r(node) VALUES (hex(randomblob(4))); END",
  "CREATE TRIGGER again_%s AFTER UPDATE ON %s BEGIN"
  " SELECT ch_locate('k', 'r'); END",
  "DROP TABLE %s; CREATE VIRTUAL TABLE %s USING chash",
};

/* Run the functions and the table on the damaged ring. */
static void use_ring(sqlite3 *db){
  static const char *const azSql[] = {
    "SELECT ch_locate('k', 'r')", "SELECT ch_locate('k', 'r@1')",
    "SELECT ch_locate('k', 'r@-1')", "SELECT ch_epoch('r')",
    "SELECT ch_moved('k', 'r@1', 'r')", "SELECT ch_moved(7, 'r@2', 'r@3')",
    "SELECT node, weight, points, share FROM r",
    "SELECT * FROM r WHERE node='a'", "SELECT * FROM r WHERE rowid=2",
    "INSERT INTO r(node) VALUES ('new')", "UPDATE r SET weight=2",
    "DELETE FROM r WHERE node='b'", "SELECT ch_locate('k')",
    "SELECT ch_check('r')", "DROP TABLE r",
  };
  for(size_t i=0; i<sizeof(azSql)/sizeof(azSql[0]); i++){
    sqlite3_stmt *pStmt = NULL;
    if( sqlite3_prepare_v2(db, azSql[i], -1, &pStmt, NULL)!=SQLITE_OK ) continue;
    fuzz_drain(pStmt);
    sqlite3_finalize(pStmt);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size>64 ) return 0;
  int nProgress;
  sqlite3 *db = fuzz_open_image(
    "CREATE VIRTUAL TABLE r USING chash(vnodes=5);"
    "INSERT INTO r(node) VALUES ('a'), ('b');"
    "INSERT INTO r(node, weight) VALUES ('c', 2);"
    "BEGIN; UPDATE r SET weight=3 WHERE node='a'; DELETE FROM r WHERE node='b';"
    " COMMIT;"
    "UPDATE r SET node='d' WHERE node='c';", &nProgress);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, (int *)0);
  for(size_t i=0; i+4<=size; i+=4){
    if( data[i]==0xFF ){
      const char *zT = azTable[data[i+1] % 3];
      char *zSql = sqlite3_mprintf(
          azReplace[data[i+2] % (sizeof(azReplace)/sizeof(azReplace[0]))],
          zT, zT, zT, zT, zT);
      fuzz_exec(db, zSql);
      sqlite3_free(zSql);
      continue;
    }
    int t = data[i] % 3;
    int row = data[i+1] % 12;
    int col = data[i+2] % anCol[t];
    const char *zValue = azValue[data[i+3] % (sizeof(azValue)/sizeof(azValue[0]))];
    const char *zRow = t==0 ? "(SELECT key FROM r_config LIMIT 1 OFFSET %d)"
                            : "(SELECT rowid FROM %s LIMIT 1 OFFSET %d)";
    char *zWhere = t==0 ? sqlite3_mprintf(zRow, row)
                        : sqlite3_mprintf(zRow, azTable[t], row);
    char *zSql;
    switch( data[i+2] >> 6 ){
      case 0:
        zSql = sqlite3_mprintf("DELETE FROM %s WHERE %s=%s", azTable[t],
                               t==0 ? "key" : "rowid", zWhere);
        break;
      case 1:
        zSql = sqlite3_mprintf("INSERT INTO %s SELECT * FROM %s WHERE %s=%s",
                               azTable[t], azTable[t],
                               t==0 ? "key" : "rowid", zWhere);
        break;
      default:
        zSql = sqlite3_mprintf("UPDATE %s SET %s=%s WHERE %s=%s", azTable[t],
                               azCol[t][col], zValue,
                               t==0 ? "key" : "rowid", zWhere);
        break;
    }
    fuzz_exec(db, zSql);
    sqlite3_free(zSql);
    sqlite3_free(zWhere);
  }
  use_ring(db);
  fuzz_close(db);
  return 0;
}

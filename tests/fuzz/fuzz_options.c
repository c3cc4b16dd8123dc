/*
** tests/fuzz/fuzz_options.c: CREATE VIRTUAL TABLE ... USING chash(<input>).
** The input is the argument list. If the table is created, it is used
** (nodes added, keys placed, reopened through its options) and dropped.
*/
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size>4096 || memchr(data, ';', size) ) return 0;
  int nProgress;
  sqlite3 *db = fuzz_open(&nProgress);
  char *zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE r USING chash(%.*s)",
                               (int)size, (const char *)data);
  if( zSql && sqlite3_exec(db, zSql, NULL, NULL, NULL)==SQLITE_OK ){
    fuzz_exec(db, "INSERT INTO r(node, weight) VALUES ('a', 1), ('b', 2.5)");
    fuzz_query(db, "SELECT node, weight, points, share FROM r", NULL, 0, 0);
    fuzz_query(db, "SELECT ch_locate('key'), ch_epoch(), ch_moved(1, 0, 1)",
               NULL, 0, 0);
    fuzz_exec(db, "DROP TABLE r");
  }
  sqlite3_free(zSql);
  fuzz_close(db);
  return 0;
}

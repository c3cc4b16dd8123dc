/*
** tests/fuzz/fuzz_spec.c: ring specs. The input is bound as the ring
** argument of every function: names, schema.name, @versions, inline JSON.
** The database has two rings (ring and modn, with versions) and an
** attached schema with a third.
*/
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size>8192 ) return 0;
  static int nProgress;
  static sqlite3 *pShared;
  sqlite3 *db = fuzz_shared_db(&pShared,
    "CREATE VIRTUAL TABLE r USING chash(vnodes=4);"
    "CREATE VIRTUAL TABLE m USING chash(algorithm=modn);"
    "INSERT INTO r(node) VALUES ('a'), ('b');"
    "INSERT INTO m(node) VALUES ('a'), ('b');"
    "INSERT INTO r(node, weight) VALUES ('c', 2);"
    "DELETE FROM m WHERE node='a';"
    "ATTACH ':memory:' AS aux;"
    "CREATE VIRTUAL TABLE aux.x USING chash(hash=xxh64, seed=3);"
    "INSERT INTO aux.x(node) VALUES ('z');", &nProgress);
  fuzz_query(db, "SELECT ch_locate('k', ?1), ch_locate(x'00ff', ?1),"
                 " ch_locate(42, ?1)", data, (int)size, 0);
  fuzz_query(db, "SELECT ch_epoch(?1)", data, (int)size, 0);
  fuzz_query(db, "SELECT ch_moved('k', ?1, 'r'), ch_moved('k', 'm@1', ?1)",
             data, (int)size, 0);
  fuzz_query(db, "SELECT ch_locate('k', ?1), ch_locate(x'00ff', ?1),"
                 " ch_locate(42, ?1)", data, (int)size, 0);
  fuzz_query(db, "SELECT ch_epoch(?1)", data, (int)size, 0);
  fuzz_query(db, "SELECT ch_moved('k', ?1, 'r'), ch_moved('k', 'm@1', ?1)",
             data, (int)size, 0);
  fuzz_query(db, "SELECT ch_locate('k', ?1)", data, (int)size, 1);
  return 0;
}

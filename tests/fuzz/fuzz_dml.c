/*
** tests/fuzz/fuzz_dml.c: sequences of DML and queries on a ring, driven by
** the input. The first byte picks the ring: a virtual-node ring, or a jump
** ring, whose removals are checked when the transaction commits. Each
** later byte is an operation (its low 4 bits) and an
** argument (its high 4 bits): add, remove, reweight, rename, INSERT OR
** REPLACE, begin, commit, rollback, savepoint, rollback to, locate, moved,
** read the table. Node names come from a small alphabet (so operations
** collide) or, rarely, from the input itself. After every operation the
** ring must agree with itself: shares sum to 1, ch_epoch() is the
** highest version in the history and keys land on the nodes the table
** shows (checked after each statement outside a transaction that wrote
** something, after each rollback and at the end); at the end, ch_check
** finds the shadow tables consistent.
**
** One connection per ring serves every input, and every statement is
** prepared once, when first needed, and run with bound values: opening a
** database and parsing SQL took most of the time of an execution. Each
** input starts from the empty ring of the setup: any transaction is
** rolled back and the shadow tables get back the rows they had then,
** stamp included, with a new 'created'. The ring caches of chash
** (spec.c) key current rings by stamp, which every change draws at
** random, and committed versions by 'created', so what they remember of
** earlier inputs is never served again.
*/
#include <math.h>

#include "fuzz.h"

/* One statement per operation; ?1 is a node name, ?2 and ?3 numbers. */
static const char *const azOp[16] = {
  "INSERT INTO r(node, weight) VALUES (?1, ?2 % 4 + 1)",
  "DELETE FROM r WHERE node=?1",
  "UPDATE r SET weight=?2/3.0 + 0.1 WHERE node=?1",
  "UPDATE r SET node='n' || ((?2+1) % 6) WHERE node=?1",
  "INSERT OR REPLACE INTO r(node, weight) VALUES (?1, 2)",
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "SAVEPOINT s",
  "ROLLBACK TO s",
  "SELECT ch_locate('k' || ?2, 'r@' || (?2 % 4))",
  "SELECT ch_moved(?2, 'r@-1', 'r'), ch_locate(?2)",
  "SELECT * FROM r WHERE node=?1",
  "DELETE FROM r WHERE rowid IN (SELECT rowid FROM r WHERE ch_locate(node) = node LIMIT 1)",
  "INSERT INTO r(node) VALUES (?3)",
  "RELEASE s",
};

/* The ring's invariants, as queries prepared with the others. The last
** places keys by 'r' and by an inline ring of the nodes the table shows
** (%s: the ring's JSON spec): a ring remembered past a change (spec.c)
** would place some elsewhere. */
enum { CHECK_SHARES = 16, CHECK_EPOCH, CHECK_HISTORY, CHECK_PLACED,
       CHECK_MONOTONE, CHECK_INTEGRITY, N_STMT };
static const char *const azCheck[4] = {
  "SELECT sum(share) FROM r",
  "SELECT ch_epoch('r')",
  "SELECT coalesce(max(epoch), 0) FROM r_history",
  "WITH k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i<8),"
  " j(spec) AS (SELECT %s)"
  " SELECT count(*) FROM k, j WHERE ch_locate(i, 'r') IS NOT ch_locate(i, spec)",
};

/* The rings, each in a connection of its own (so that it is the default
** ring there), with the inline ring of its nodes (jump takes them in the
** order they joined) and a count of keys that broke monotonicity from the
** version before: jump may move a key only to a node that joined or from
** one that left (the commit refuses any other removal), so none may move
** between two nodes of both versions. Nodes are told apart by id, since
** renames may swap names. */
typedef struct dml_ring {
  const char *zCreate;
  const char *zJson;
  const char *zMonotone;
  sqlite3 *db;
  sqlite3_stmt *apStmt[N_STMT];
} dml_ring;
static dml_ring aRing[2] = {
  { .zCreate = "CREATE VIRTUAL TABLE r USING chash(vnodes=3)",
    .zJson = "json_object('vnodes', 3, 'nodes',"
             " json_group_object(node, weight)) FROM r",
    .zMonotone = "SELECT 0" },
  { .zCreate = "CREATE VIRTUAL TABLE r USING chash(algorithm=jump)",
    .zJson = "json_object('algorithm', 'jump', 'nodes', json_group_array(node))"
             " FROM (SELECT node FROM r ORDER BY rowid)",
    .zMonotone =
      "WITH k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i<16),"
      " prev(id, node) AS (SELECT id, node FROM r_history WHERE op<>'remove'"
      "  AND seq IN (SELECT max(seq) FROM r_history"
      "  WHERE epoch<ch_epoch('r') GROUP BY id)),"
      " placed(a, b) AS (SELECT ch_locate(i, 'r@-1'), ch_locate(i, 'r') FROM k),"
      " v(a, b) AS (SELECT (SELECT id FROM prev WHERE node=a),"
      "  (SELECT rowid FROM r WHERE node=b) FROM placed)"
      " SELECT count(*) FROM v WHERE a<>b AND a IN (SELECT rowid FROM r)"
      " AND b IN (SELECT id FROM prev)" },
};

/* The single number of a query, -2 if it is NULL, -1 if it fails. */
static double query_num(sqlite3_stmt *pStmt){
  double v = -1;
  if( pStmt && sqlite3_step(pStmt)==SQLITE_ROW ){
    v = sqlite3_column_type(pStmt, 0)==SQLITE_NULL ? -2
                                                   : sqlite3_column_double(pStmt, 0);
  }
  sqlite3_reset(pStmt);
  return v;
}

/* Shares sum to 1 (or there are no nodes); the epoch is the history's;
** keys land where the table's nodes say (or the ring is empty: an error);
** outside a transaction, no key broke monotonicity (jump). */
static void check(sqlite3 *db, sqlite3_stmt **apStmt){
  double s = query_num(apStmt[CHECK_SHARES]);
  if( s!=-2 && s!=-1 && fabs(s-1.0)>1e-9 ) abort();
  double e = query_num(apStmt[CHECK_EPOCH]);
  double h = query_num(apStmt[CHECK_HISTORY]);
  if( e>=0 && e!=h ) abort();
  double nMisplaced = query_num(apStmt[CHECK_PLACED]);
  if( nMisplaced>0 ) abort();
  if( sqlite3_get_autocommit(db) && query_num(apStmt[CHECK_MONOTONE])>0 ){
    abort();
  }
}

/* Prepare zSql, which must succeed: the statements are the harness's. */
static void prepare(sqlite3 *db, const char *zSql, sqlite3_stmt **ppStmt){
  if( sqlite3_prepare_v2(db, zSql, -1, ppStmt, NULL)!=SQLITE_OK ){
    fprintf(stderr, "fuzz: cannot prepare %s: %s\n", zSql, sqlite3_errmsg(db));
    abort();
  }
}

/* Back to the ring of the setup: no transaction, no nodes, no history,
** the configuration as it was (a copy kept in temp.setup_config), but a
** new 'created', as a table created again would have: chash keys the
** rings of committed versions by it, since those never change. */
static void reset_ring(sqlite3 *db){
  if( !sqlite3_get_autocommit(db) ) fuzz_exec(db, "ROLLBACK");
  fuzz_exec_must(db, "DELETE FROM r_nodes; DELETE FROM r_history;"
                 " DELETE FROM r_config;"
                 " INSERT INTO r_config SELECT * FROM temp.setup_config;"
                 " UPDATE r_config SET value=random() WHERE key='created'",
                 "reset of the ring");
}

/* The connection of ring p, made and given its check queries at first use. */
static sqlite3 *ring_db(dml_ring *p, int *pnProgress){
  if( p->db==NULL ){
    char *zSetup = sqlite3_mprintf("%s; CREATE TEMP TABLE setup_config AS"
                                   " SELECT * FROM r_config", p->zCreate);
    char *zPlaced = sqlite3_mprintf(azCheck[CHECK_PLACED-CHECK_SHARES],
                                    p->zJson);
    if( zSetup==NULL || zPlaced==NULL ) abort();
    fuzz_shared_db(&p->db, zSetup, pnProgress);
    for(int i=CHECK_SHARES; i<CHECK_PLACED; i++){
      prepare(p->db, azCheck[i-CHECK_SHARES], &p->apStmt[i]);
    }
    prepare(p->db, zPlaced, &p->apStmt[CHECK_PLACED]);
    prepare(p->db, p->zMonotone, &p->apStmt[CHECK_MONOTONE]);
    prepare(p->db, "SELECT ch_check('r')='ok'", &p->apStmt[CHECK_INTEGRITY]);
    sqlite3_free(zSetup);
    sqlite3_free(zPlaced);
  }
  *pnProgress = 0;
  return p->db;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  if( size<1 || size>512 ) return 0;
  static int nProgress;
  dml_ring *pRing = &aRing[data[0] & 1];
  sqlite3 *db = ring_db(pRing, &nProgress);
  sqlite3_stmt **apStmt = pRing->apStmt;
  reset_ring(db);
  sqlite3_int64 nChecked = -1;    /* total changes at the last check */
  for(size_t i=1; i<size; i++){
    int op = data[i] & 0xf, arg = data[i] >> 4;
    char zName[8];
    snprintf(zName, sizeof(zName), "n%d", arg % 6);
    /* Operation 14 names its node by the next bytes of the input. */
    size_t nNode = size-i-1 < (size_t)arg ? size-i-1 : (size_t)arg;
    if( apStmt[op]==NULL ) prepare(db, azOp[op], &apStmt[op]);
    sqlite3_stmt *pStmt = apStmt[op];
    sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 2, arg);
    sqlite3_bind_text(pStmt, 3, (const char *)data+i+1, (int)nNode,
                      SQLITE_STATIC);
    fuzz_drain(pStmt);
    sqlite3_clear_bindings(pStmt);   /* zName and data do not outlive this */
    /* The invariants hold between statements; checking them at the ends of
    ** transactions and of the input finds the same faults three times as
    ** fast as after every statement. A statement that wrote nothing (a
    ** query, a failed change) leaves them as the last check saw them. */
    sqlite3_int64 nChanges = sqlite3_total_changes64(db);
    if( (sqlite3_get_autocommit(db) && nChanges!=nChecked) || op==7 || op==9 ){
      check(db, apStmt);
      nChecked = nChanges;
    }
  }
  check(db, apStmt);
  /* The shadow tables the writes left agree with each other: ch_check
  ** replays the history and builds every version (once per input: it
  ** costs more than the other checks). */
  if( query_num(apStmt[CHECK_INTEGRITY])==0 ) abort();
  return 0;
}

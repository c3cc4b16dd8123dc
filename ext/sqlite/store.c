/*
** store.c: the shadow tables that hold a ring table, and every read and
** write of them.
**
** Database format (CHASH_FORMAT 1). A ring table T in schema S has:
**
**   S.T_config(key TEXT PRIMARY KEY, value) WITHOUT ROWID
**       format     1
**       algorithm  'ring' | 'ketama' | 'jump' | 'rendezvous' | 'maglev' | 'modn'
**       hash       a hash name (hash.h): 'xxh3', 'md5', 'fnv1a_64', ...
**       vnodes     integer
**       seed       decimal text (it is an unsigned 64-bit number)
**       table      integer: the maglev table size (stored for every ring)
**       epoch      the last committed version (0 when created)
**       stamp      random integer, replaced by every change to the ring
**       created    random integer, set when the table is created
**       nextid     the id the next node added gets
**       points     total points of the current nodes (to enforce limits)
**
**   S.T_nodes(id INTEGER PRIMARY KEY, node TEXT NOT NULL UNIQUE,
**             weight REAL NOT NULL)
**       the current nodes. id is the table's rowid: the order nodes were
**       added in, kept across renames.
**
**   S.T_history(seq INTEGER PRIMARY KEY, epoch INTEGER NOT NULL,
**               op TEXT NOT NULL, id INTEGER NOT NULL, node TEXT NOT NULL,
**               weight REAL NOT NULL, old TEXT)
**       every change, in order: op is add, remove, reweight or rename; node
**       and weight are the node's name and weight after the change (for
**       remove: before it); old is the previous name of a rename.
**
** Versions. A change is logged with epoch = committed epoch + 1. When the
** transaction commits, xSync calls store_commit_epoch, which raises the
** committed epoch to that number, so every committed transaction that
** changes the ring is one version. A rolled back change takes its history
** rows with it. Version N is rebuilt from the last history row of each id
** with epoch <= N (unless that row is a remove).
**
** All writes are ordinary SQL on the same connection, so transactions,
** savepoints and statement rollback come from SQLite itself.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sqlite_layer.h"

int store_is_shadow_suffix(const char *zSuffix){
  static const char *const azSuffix[] = { "config", "nodes", "history" };
  for(size_t i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    if( sqlite3_stricmp(zSuffix, azSuffix[i])==0 ) return 1;
  }
  return 0;
}

static int64_t random_int64(void){
  int64_t v;
  sqlite3_randomness(sizeof(v), &v);
  return v;
}

/* The config rows of cfg's options: ", ('hash', 'xxh3'), ..." (NULL: no
** memory). */
static char *option_rows(const ring_config *cfg){
  sqlite3_str *pRows = sqlite3_str_new(NULL);
  const char *zKey;
  char zValue[OPTION_MAX_TEXT];
  int bStore, bInteger;
  for(int i=0; options_stored(cfg, i, &zKey, zValue, sizeof(zValue), &bStore,
                              &bInteger); i++){
    if( !bStore ) continue;
    sqlite3_str_appendf(pRows, bInteger ? ", (%Q, %s)" : ", (%Q, %Q)", zKey,
                        zValue);
  }
  return sqlite3_str_finish(pRows);
}

int store_create(sqlite3 *db, const char *zSchema, const char *zName,
                 const ring_config *cfg, char **pzErr){
  /* For the message: when the script fails for want of memory, SQLite
  ** resets the schema, which frees the table's arguments (zName too). */
  char *zTable = sqlite3_mprintf("%s", zName);
  char *zRows = option_rows(cfg);
  if( zTable==NULL || zRows==NULL ){
    sqlite3_free(zTable);
    sqlite3_free(zRows);
    return SQLITE_NOMEM;
  }
  int rc = chash_exec_fmt(db,
    "CREATE TABLE \"%w\".\"%w_config\"(key TEXT PRIMARY KEY, value)"
    " WITHOUT ROWID;"
    "INSERT INTO \"%w\".\"%w_config\"(key, value) VALUES"
    " ('format', %d)%s, ('epoch', 0), ('stamp', %lld),"
    " ('created', %lld), ('nextid', 1), ('points', 0);"
    "CREATE TABLE \"%w\".\"%w_nodes\"(id INTEGER PRIMARY KEY,"
    " node TEXT NOT NULL UNIQUE, weight REAL NOT NULL);"
    "CREATE TABLE \"%w\".\"%w_history\"(seq INTEGER PRIMARY KEY,"
    " epoch INTEGER NOT NULL, op TEXT NOT NULL, id INTEGER NOT NULL,"
    " node TEXT NOT NULL, weight REAL NOT NULL, old TEXT);",
    zSchema, zName, zSchema, zName, CHASH_FORMAT, zRows,
    (long long)random_int64(), (long long)random_int64(),
    zSchema, zName, zSchema, zName);
  sqlite3_free(zRows);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: cannot create shadow tables: %s", zTable,
                             sqlite3_errmsg(db));
  }
  sqlite3_free(zTable);
  return rc;
}

int store_drop(sqlite3 *db, const char *zSchema, const char *zName){
  return chash_exec_fmt(db,
    "DROP TABLE IF EXISTS \"%w\".\"%w_config\";"
    "DROP TABLE IF EXISTS \"%w\".\"%w_nodes\";"
    "DROP TABLE IF EXISTS \"%w\".\"%w_history\";",
    zSchema, zName, zSchema, zName, zSchema, zName);
}

int store_rename(sqlite3 *db, const char *zSchema, const char *zOld,
                 const char *zNew){
  return chash_exec_fmt(db,
    "ALTER TABLE \"%w\".\"%w_config\" RENAME TO \"%w_config\";"
    "ALTER TABLE \"%w\".\"%w_nodes\" RENAME TO \"%w_nodes\";"
    "ALTER TABLE \"%w\".\"%w_history\" RENAME TO \"%w_history\";",
    zSchema, zOld, zNew, zSchema, zOld, zNew, zSchema, zOld, zNew);
}

/* ------------------------------------------------------------ reading */

/* An integer from a config value, which must be stored as an integer. */
static int config_int(sqlite3_stmt *pStmt, int64_t lo, int64_t *pOut){
  if( sqlite3_column_type(pStmt, 1)!=SQLITE_INTEGER ) return 1;
  int64_t v = sqlite3_column_int64(pStmt, 1);
  if( v<lo ) return 1;
  *pOut = v;
  return 0;
}

int store_read_info(sqlite3 *db, const char *zSchema, const char *zName,
                    store_info *pInfo, char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT key, value FROM \"%w\".\"%w_config\"", zSchema, zName);
  if( rc==SQLITE_NOMEM ) return rc;
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: cannot read %s_config: "
                             "%s", zSchema, zName, zName, sqlite3_errmsg(db));
    return SQLITE_CORRUPT_VTAB;
  }
  memset(pInfo, 0, sizeof(*pInfo));
  ring_config_default(&pInfo->config);
  unsigned nSeen = 0, setOptions = 0;
  char zMsg[512] = "";
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zValue = (const char *)sqlite3_column_text(pStmt, 1);
    int64_t format;
    int bad = 0;
    if( zKey==NULL ) continue;
    if( zValue==NULL ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      bad = 1;
    }else if( strcmp(zKey, "format")==0 ){
      bad = config_int(pStmt, 0, &format) || format!=CHASH_FORMAT;
      if( bad ){
        snprintf(zMsg, sizeof(zMsg), "unsupported format %s (this chash "
                 "reads format %d)", zValue, CHASH_FORMAT);
      }
      nSeen |= 0x01;
    }else if( strcmp(zKey, "epoch")==0 ){
      bad = config_int(pStmt, 0, &pInfo->epoch);
      nSeen |= 0x02;
    }else if( strcmp(zKey, "stamp")==0 ){
      bad = config_int(pStmt, INT64_MIN, &pInfo->stamp);
      nSeen |= 0x04;
    }else if( strcmp(zKey, "created")==0 ){
      bad = config_int(pStmt, INT64_MIN, &pInfo->created);
      nSeen |= 0x08;
    }else if( strcmp(zKey, "nextid")==0 ){
      bad = config_int(pStmt, 1, &pInfo->next_id);
      nSeen |= 0x10;
    }else if( strcmp(zKey, "points")==0 ){
      bad = config_int(pStmt, 0, &pInfo->points);
      nSeen |= 0x20;
    }else{
      char zOptErr[160];
      bad = options_set(&pInfo->config, &setOptions, zKey, zValue,
                        zOptErr, sizeof(zOptErr));
      if( bad ) snprintf(zMsg, sizeof(zMsg), "%s", zOptErr);
    }
    if( bad ){
      if( zMsg[0]==0 ){
        snprintf(zMsg, sizeof(zMsg), "bad %s in %s_config: %.40s", zKey,
                 zName, zValue ? zValue : "NULL");
      }
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE ){
    if( nSeen!=0x3F || (setOptions & OPTION_REQUIRED)!=OPTION_REQUIRED ){
      snprintf(zMsg, sizeof(zMsg), "%s_config lacks a setting", zName);
      rc = SQLITE_CORRUPT_VTAB;
    }else{
      rc = SQLITE_OK;
    }
  }
  if( rc==SQLITE_CORRUPT_VTAB ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s", zSchema, zName, zMsg);
  }else if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("ring '%q.%q': %s", zSchema, zName,
                             sqlite3_errmsg(db));
  }
  return rc;
}

int store_current_version(sqlite3 *db, const char *zSchema,
                          const char *zName, int64_t *pVersion){
  sqlite3_stmt *pStmt = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT epoch FROM \"%w\".\"%w_history\" ORDER BY seq DESC LIMIT 1",
      zSchema, zName);
  if( rc!=SQLITE_OK ) return rc;
  *pVersion = 0;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    *pVersion = sqlite3_column_int64(pStmt, 0);
    rc = SQLITE_OK;
    /* Only a damaged table has an epoch that is not a version number. */
    if( sqlite3_column_type(pStmt, 0)!=SQLITE_INTEGER || *pVersion<0 ){
      rc = SQLITE_CORRUPT_VTAB;
    }
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  return rc;
}

int store_stamp_holds(sqlite3 *db, const char *zSchema, const char *zName,
                      int64_t stamp){
  /* A table of temp hides one of the same name in main. */
  int bHidable = strcmp(zSchema, "main")==0
              && sqlite3_db_filename(db, "temp")!=NULL;
  sqlite3_stmt *pStmt = NULL;
  int bHolds = chash_prepare_fmt(db, &pStmt, 0,
                 "SELECT value FROM \"%w\".\"%w_config\" WHERE key='stamp'%s",
                 zSchema, zName, bHidable
                 ? " AND NOT EXISTS (SELECT 1 FROM temp.sqlite_schema"
                   " WHERE type='table' AND name=?1 COLLATE NOCASE)" : "")
                 ==SQLITE_OK
            && sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC)
                 !=SQLITE_NOMEM
            && sqlite3_step(pStmt)==SQLITE_ROW
            && sqlite3_column_type(pStmt, 0)==SQLITE_INTEGER
            && sqlite3_column_int64(pStmt, 0)==stamp;
  sqlite3_finalize(pStmt);
  return bHolds;
}

int store_history(sqlite3 *db, const char *zSchema, const char *zName,
                  int64_t iMaxEpoch, sqlite3_stmt **ppStmt){
  int rc = chash_prepare_fmt(db, ppStmt, 0,
      "SELECT epoch, op, node, weight, old FROM \"%w\".\"%w_history\""
      " WHERE epoch<=?1 ORDER BY seq", zSchema, zName);
  if( rc==SQLITE_OK ) sqlite3_bind_int64(*ppStmt, 1, iMaxEpoch);
  return rc;
}

/* Node names and weights read from the shadow tables, before the build. */
typedef struct node_list {
  ring_input *aInput;
  uint32_t n, nAlloc;
  char *zNames;            /* every name, back to back */
  size_t nNames, nNamesAlloc;
} node_list;

static int node_list_add(node_list *p, int64_t id, const char *z, int n,
                         double w){
  if( p->n==p->nAlloc ){
    uint32_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
    ring_input *aNew = sqlite3_realloc64(p->aInput, sizeof(ring_input)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    p->aInput = aNew;
    p->nAlloc = nNew;
  }
  /* Allocated even for empty names (only in a damaged table), so that
  ** zNames is never NULL when offsets into it are taken. */
  if( p->zNames==NULL || p->nNames + n > p->nNamesAlloc ){
    size_t nNew = (p->nNamesAlloc + n) * 2 + 64;
    char *zNew = sqlite3_realloc64(p->zNames, nNew);
    if( zNew==NULL ) return SQLITE_NOMEM;
    p->zNames = zNew;
    p->nNamesAlloc = nNew;
  }
  memcpy(p->zNames + p->nNames, z, n);
  /* Names are offsets until the list is complete (zNames may move). */
  p->aInput[p->n].name = (const char *)(uintptr_t)p->nNames;
  p->aInput[p->n].name_len = (uint32_t)n;
  p->aInput[p->n].weight = w;
  p->aInput[p->n].id = id;
  p->nNames += n;
  p->n++;
  return SQLITE_OK;
}

static void node_list_free(node_list *p){
  sqlite3_free(p->aInput);
  sqlite3_free(p->zNames);
}

/* The nodes of version iVersion (the current ones if it is negative), in
** id order, into *pList (freed by the caller whatever the result). */
static int load_node_list(sqlite3 *db, const char *zSchema, const char *zName,
                          int64_t iVersion, node_list *pList, char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc;
  if( iVersion<0 ){
    rc = chash_prepare_fmt(db, &pStmt, 0,
        "SELECT node, weight, 'add', id FROM \"%w\".\"%w_nodes\" ORDER BY id",
        zSchema, zName);
  }else{
    rc = chash_prepare_fmt(db, &pStmt, 0,
        "SELECT node, weight, op, id FROM \"%w\".\"%w_history\" WHERE seq IN"
        " (SELECT max(seq) FROM \"%w\".\"%w_history\" WHERE epoch<=?1"
        "  GROUP BY id) ORDER BY id",
        zSchema, zName, zSchema, zName);
    if( rc==SQLITE_OK ) sqlite3_bind_int64(pStmt, 1, iVersion);
  }
  if( rc!=SQLITE_OK ){
    if( rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s", zSchema, zName,
                               sqlite3_errmsg(db));
      rc = SQLITE_CORRUPT_VTAB;
    }
    return rc;
  }
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zOp = (const char *)sqlite3_column_text(pStmt, 2);
    if( zOp && strcmp(zOp, "remove")==0 ) continue;
    if( zOp==NULL || (strcmp(zOp, "add")!=0 && strcmp(zOp, "reweight")!=0
                      && strcmp(zOp, "rename")!=0) ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s_history has an "
                               "unknown op: %s", zSchema, zName, zName,
                               zOp ? zOp : "NULL");
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    int eType = sqlite3_column_type(pStmt, 1);
    const char *zNode = (const char *)sqlite3_column_text(pStmt, 0);
    int nNode = sqlite3_column_bytes(pStmt, 0);
    if( zNode==NULL || (eType!=SQLITE_FLOAT && eType!=SQLITE_INTEGER) ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: a node has a NULL name "
                               "or a weight that is not a number",
                               zSchema, zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    rc = node_list_add(pList, sqlite3_column_int64(pStmt, 3), zNode, nNode,
                       sqlite3_column_double(pStmt, 1));
    if( rc!=SQLITE_OK ) break;
  }
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_DONE ){
    if( rc!=SQLITE_NOMEM && rc!=SQLITE_CORRUPT_VTAB ){
      *pzErr = sqlite3_mprintf("ring '%q.%q': %s", zSchema, zName,
                               sqlite3_errmsg(db));
    }
    return rc;
  }
  for(uint32_t i=0; i<pList->n; i++){
    pList->aInput[i].name = pList->zNames + (uintptr_t)pList->aInput[i].name;
  }
  return SQLITE_OK;
}

int store_load_ring(sqlite3 *db, const char *zSchema, const char *zName,
                    const ring_config *cfg, int64_t iVersion,
                    const ring *pBase, ring **ppRing, char **pzErr){
  node_list list;
  memset(&list, 0, sizeof(list));
  *ppRing = NULL;
  int rc = load_node_list(db, zSchema, zName, iVersion, &list, pzErr);
  if( rc==SQLITE_OK ){
    /* The writes check every node, so a stored ring that does not build
    ** was damaged. */
    char zMsg[512];
    int rcRing = ring_build_from(pBase, cfg, list.aInput, list.n, ppRing,
                                 zMsg, sizeof(zMsg));
    if( rcRing==RING_NOMEM ){
      rc = SQLITE_NOMEM;
    }else if( rcRing!=RING_OK ){
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s", zSchema, zName, zMsg);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }
  node_list_free(&list);
  return rc;
}


/* ------------------------------------------------------------ writing */

enum {
  STMT_FIND_NAME,          /* id, weight of the node named ?1 */
  STMT_FIND_ID,            /* node, weight of node id ?1 */
  STMT_COUNTERS,           /* epoch, nextid, points */
  STMT_INSERT_NODE,
  STMT_DELETE_NODE,
  STMT_UPDATE_NODE,
  STMT_HISTORY,            /* log one change */
  STMT_BUMP,               /* points += ?1, nextid += ?2, stamp = ?3 */
  STMT_COMMIT_EPOCH,       /* pending changes become the next version */
  STMT_LAST_NODE,          /* id, node of the last node; count of nodes */
  STMT_COUNT
};

static const char *const azStmtSql[STMT_COUNT] = {
  [STMT_FIND_NAME] = "SELECT id, weight FROM \"%w\".\"%w_nodes\" WHERE node=?1",
  [STMT_FIND_ID] = "SELECT node, weight FROM \"%w\".\"%w_nodes\" WHERE id=?1",
  [STMT_COUNTERS] = "SELECT key, value FROM \"%w\".\"%w_config\""
                    " WHERE key IN ('epoch', 'nextid', 'points')",
  [STMT_INSERT_NODE] = "INSERT INTO \"%w\".\"%w_nodes\"(id, node, weight)"
                       " VALUES(?1, ?2, ?3)",
  [STMT_DELETE_NODE] = "DELETE FROM \"%w\".\"%w_nodes\" WHERE id=?1",
  [STMT_UPDATE_NODE] = "UPDATE \"%w\".\"%w_nodes\" SET node=?2, weight=?3"
                       " WHERE id=?1",
  [STMT_HISTORY] = "INSERT INTO \"%w\".\"%w_history\"(epoch, op, id, node,"
                   " weight, old) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
  [STMT_BUMP] = "UPDATE \"%w\".\"%w_config\" SET value = CASE key"
                " WHEN 'points' THEN value+?1 WHEN 'nextid' THEN value+?2"
                " ELSE ?3 END WHERE key IN ('points', 'nextid', 'stamp')",
  [STMT_COMMIT_EPOCH] = "UPDATE \"%w\".\"%w_config\" SET value=value+1"
                        " WHERE key='epoch' AND value<(SELECT epoch FROM"
                        " \"%w\".\"%w_history\" ORDER BY seq DESC LIMIT 1)",
  [STMT_LAST_NODE] = "SELECT id, node, (SELECT count(*) FROM \"%w\".\"%w_nodes\")"
                     " FROM \"%w\".\"%w_nodes\" ORDER BY id DESC LIMIT 1",
};

struct ring_store {
  sqlite3 *db;
  char *zSchema;
  char *zName;
  store_info info;         /* as read at open; counters re-read per change */
  sqlite3_stmt *aStmt[STMT_COUNT];
  char *zErr;              /* message of the last failure, or NULL */
};

int store_open(sqlite3 *db, const char *zSchema, const char *zName,
               ring_store **ppStore, char **pzErr){
  ring_store *st = sqlite3_malloc64(sizeof(*st));
  *ppStore = NULL;
  if( st==NULL ) return SQLITE_NOMEM;
  memset(st, 0, sizeof(*st));
  st->db = db;
  st->zSchema = sqlite3_mprintf("%s", zSchema);
  st->zName = sqlite3_mprintf("%s", zName);
  if( st->zSchema==NULL || st->zName==NULL ){
    store_close(st);
    return SQLITE_NOMEM;
  }
  int rc = store_read_info(db, zSchema, zName, &st->info, pzErr);
  if( rc!=SQLITE_OK ){
    store_close(st);
    return rc;
  }
  *ppStore = st;
  return SQLITE_OK;
}

void store_reset_statements(ring_store *st){
  for(int i=0; i<STMT_COUNT; i++){
    sqlite3_finalize(st->aStmt[i]);
    st->aStmt[i] = NULL;
  }
}

void store_close(ring_store *st){
  if( st==NULL ) return;
  store_reset_statements(st);
  sqlite3_free(st->zSchema);
  sqlite3_free(st->zName);
  sqlite3_free(st->zErr);
  sqlite3_free(st);
}

const store_info *store_info_of(ring_store *st){
  return &st->info;
}

const char *store_errmsg(ring_store *st){
  return st->zErr;
}

static int store_fail(ring_store *st, int rc, const char *zFmt, ...){
  sqlite3_free(st->zErr);
  va_list ap;
  va_start(ap, zFmt);
  st->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return rc;
}

/* A statement on the shadow tables did not prepare: a table or column is
** missing, so the ring is corrupt (or SQLite is out of memory, or busy). */
static int store_prepare_fail(ring_store *st, int rc){
  if( rc==SQLITE_ERROR ){
    return store_fail(st, SQLITE_CORRUPT_VTAB, "ring '%q.%q' is corrupt: %s",
                      st->zSchema, st->zName, sqlite3_errmsg(st->db));
  }
  return store_fail(st, rc, "%s: %s", st->zName, sqlite3_errmsg(st->db));
}

/* The cached statement i, prepared on first use and reset for reuse. */
static int store_stmt(ring_store *st, int i, sqlite3_stmt **ppStmt){
  if( st->aStmt[i]==NULL ){
    int rc = chash_prepare_fmt(st->db, &st->aStmt[i], SQLITE_PREPARE_PERSISTENT,
                         azStmtSql[i], st->zSchema, st->zName,
                         st->zSchema, st->zName, st->zSchema, st->zName,
                         st->zSchema, st->zName);
    if( rc!=SQLITE_OK ) return store_prepare_fail(st, rc);
  }
  *ppStmt = st->aStmt[i];
  return SQLITE_OK;
}

/* Step a cached statement once; reset it unless it returned a row. */
static int store_step(ring_store *st, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ) return rc;
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_DONE ){
    rc = store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                    sqlite3_errmsg(st->db));
  }
  return rc;
}

int store_find_by_name(ring_store *st, const char *zNode, int nNode,
                       int64_t *pId, double *pWeight){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_FIND_NAME, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_text(pStmt, 1, zNode, nNode, SQLITE_STATIC);
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 0);
    *pWeight = sqlite3_column_double(pStmt, 1);
    sqlite3_reset(pStmt);
  }
  return rc;
}

int store_find_by_id(ring_store *st, int64_t id, char **pzNode,
                     double *pWeight){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_FIND_ID, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    *pzNode = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
    *pWeight = sqlite3_column_double(pStmt, 1);
    sqlite3_reset(pStmt);
    if( *pzNode==NULL ) rc = SQLITE_NOMEM;
  }
  return rc;
}

/* Counters as they are now in this transaction. */
typedef struct store_counters {
  int64_t epoch, next_id, points;
} store_counters;

static int read_counters(ring_store *st, store_counters *c){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_COUNTERS, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  memset(c, 0, sizeof(*c));
  c->next_id = -1;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    int64_t v = sqlite3_column_int64(pStmt, 1);
    if( zKey==NULL ) continue;
    if( strcmp(zKey, "epoch")==0 ) c->epoch = v;
    else if( strcmp(zKey, "nextid")==0 ) c->next_id = v;
    else c->points = v;
  }
  sqlite3_reset(pStmt);
  if( rc!=SQLITE_DONE ){
    return store_fail(st, sqlite3_errcode(st->db), "%s: %s", st->zName,
                      sqlite3_errmsg(st->db));
  }
  /* Out of range only if damaged; the arithmetic on them must not overflow. */
  if( c->next_id<1 || c->next_id==INT64_MAX || c->epoch<0
   || c->epoch==INT64_MAX || c->points<0 || c->points>RING_MAX_POINTS ){
    return store_fail(st, SQLITE_CORRUPT_VTAB, "ring '%q.%q' is corrupt: "
                      "%s_config has an epoch, nextid or points out of range",
                      st->zSchema, st->zName, st->zName);
  }
  return SQLITE_OK;
}

/* Points a node of weight w counts against RING_MAX_POINTS (modn: 1). */
static int64_t limit_points(ring_store *st, double w){
  int64_t p = ring_node_points(&st->info.config, w);
  return p<1 ? 1 : p;
}

/* Check the ring would stay within the points limit after adding delta. */
static int check_points(ring_store *st, const store_counters *c, int64_t delta){
  if( c->points + delta > RING_MAX_POINTS ){
    return store_fail(st, SQLITE_ERROR, "%s: too many points: the ring "
                      "would have %lld; the limit is %d (vnodes x total "
                      "weight, at least one per node)", st->zName,
                      (long long)(c->points + delta), RING_MAX_POINTS);
  }
  return SQLITE_OK;
}

static int log_change(ring_store *st, const store_counters *c, const char *zOp,
                      int64_t id, const char *zNode, int nNode, double w,
                      const char *zOld){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_HISTORY, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, c->epoch + 1);
  sqlite3_bind_text(pStmt, 2, zOp, -1, SQLITE_STATIC);
  sqlite3_bind_int64(pStmt, 3, id);
  sqlite3_bind_text(pStmt, 4, zNode, nNode, SQLITE_STATIC);
  sqlite3_bind_double(pStmt, 5, w);
  if( zOld ){
    sqlite3_bind_text(pStmt, 6, zOld, -1, SQLITE_STATIC);
  }else{
    sqlite3_bind_null(pStmt, 6);
  }
  rc = store_step(st, pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

static int bump_counters(ring_store *st, int64_t dPoints, int64_t dNextId){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_BUMP, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, dPoints);
  sqlite3_bind_int64(pStmt, 2, dNextId);
  sqlite3_bind_int64(pStmt, 3, random_int64());
  rc = store_step(st, pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/*
** The last node joined (its id; its name, valid until the next store call)
** and how many nodes there are. SQLITE_ROW, or SQLITE_DONE if there are
** none.
*/
static int last_node(ring_store *st, int64_t *pId, const char **pzNode,
                     int64_t *pCount){
  sqlite3_stmt *pStmt = NULL;
  int rc = store_stmt(st, STMT_LAST_NODE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  *pCount = 0;
  rc = store_step(st, pStmt);
  if( rc==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 0);
    *pzNode = (const char *)sqlite3_column_text(pStmt, 1);
    *pCount = sqlite3_column_int64(pStmt, 2);
  }
  return rc;
}

/*
** Would the ring hold one more node? At most RING_MAX_NODES, and the
** algorithm may hold fewer (algo.h, check_count: a maglev table holds at
** most as many nodes as it has slots). Ids are never reused, so while the
** next id is at most RING_MAX_NODES there cannot be more nodes than that;
** only past it (or when the algorithm counts) are the nodes counted.
*/
static int check_add(ring_store *st, const store_counters *c){
  int bCounts = st->info.config.algo->check_count!=NULL;
  if( !bCounts && c->next_id<=RING_MAX_NODES ) return SQLITE_OK;
  int64_t id = 0, n = 0;
  const char *zLast;
  int rc = last_node(st, &id, &zLast, &n);
  if( rc==SQLITE_ROW ) sqlite3_reset(st->aStmt[STMT_LAST_NODE]);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return rc;
  if( n>=RING_MAX_NODES ){
    return store_fail(st, SQLITE_ERROR, "%s: too many nodes: a ring holds at "
                      "most %d", st->zName, RING_MAX_NODES);
  }
  char zMsg[512];
  if( ring_check_count(&st->info.config, (uint64_t)n+1, zMsg, sizeof(zMsg)) ){
    return store_fail(st, SQLITE_ERROR, "%s: %s", st->zName, zMsg);
  }
  return SQLITE_OK;
}

int store_add(ring_store *st, const char *zNode, int nNode, double weight,
              int64_t *pId){
  store_counters c;
  int rc = read_counters(st, &c);
  if( rc==SQLITE_OK ) rc = check_add(st, &c);
  if( rc==SQLITE_OK ) rc = check_points(st, &c, limit_points(st, weight));
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_stmt *pStmt = NULL;
  rc = store_stmt(st, STMT_INSERT_NODE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_int64(pStmt, 1, c.next_id);
  sqlite3_bind_text(pStmt, 2, zNode, nNode, SQLITE_STATIC);
  sqlite3_bind_double(pStmt, 3, weight);
  rc = store_step(st, pStmt);
  sqlite3_clear_bindings(pStmt);
  if( rc!=SQLITE_DONE ) return rc;
  rc = log_change(st, &c, "add", c.next_id, zNode, nNode, weight, NULL);
  if( rc==SQLITE_OK ) rc = bump_counters(st, limit_points(st, weight), 1);
  *pId = c.next_id;
  return rc;
}

int store_remove(ring_store *st, int64_t id){
  char *zNode = NULL;
  double weight;
  store_counters c;
  int rc = read_counters(st, &c);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_find_by_id(st, id, &zNode, &weight);
  if( rc==SQLITE_DONE ) return SQLITE_OK;      /* already gone */
  if( rc!=SQLITE_ROW ) return rc;
  sqlite3_stmt *pStmt = NULL;
  rc = store_stmt(st, STMT_DELETE_NODE, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, id);
    rc = store_step(st, pStmt);
    if( rc==SQLITE_DONE ){
      rc = log_change(st, &c, "remove", id, zNode, -1, weight, NULL);
    }
  }
  if( rc==SQLITE_OK ) rc = bump_counters(st, -limit_points(st, weight), 0);
  sqlite3_free(zNode);
  return rc;
}

int store_change(ring_store *st, int64_t id, const char *zNode, int nNode,
                 double weight){
  char *zOld = NULL;
  double oldWeight;
  store_counters c;
  int rc = read_counters(st, &c);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_find_by_id(st, id, &zOld, &oldWeight);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc!=SQLITE_ROW ) return rc;
  int bRename = (int)strlen(zOld)!=nNode || memcmp(zOld, zNode, nNode)!=0;
  int64_t dPoints = limit_points(st, weight) - limit_points(st, oldWeight);
  if( !bRename && weight==oldWeight ){
    sqlite3_free(zOld);
    return SQLITE_OK;                       /* nothing changes */
  }
  rc = check_points(st, &c, dPoints);
  sqlite3_stmt *pStmt = NULL;
  if( rc==SQLITE_OK ) rc = store_stmt(st, STMT_UPDATE_NODE, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, id);
    sqlite3_bind_text(pStmt, 2, zNode, nNode, SQLITE_STATIC);
    sqlite3_bind_double(pStmt, 3, weight);
    rc = store_step(st, pStmt);
    sqlite3_clear_bindings(pStmt);
    if( rc==SQLITE_DONE ){
      rc = log_change(st, &c, bRename ? "rename" : "reweight", id, zNode,
                      nNode, weight, bRename ? zOld : NULL);
    }
  }
  if( rc==SQLITE_OK ) rc = bump_counters(st, dPoints, 0);
  sqlite3_free(zOld);
  return rc;
}

/*
** The algorithm's check of the change this transaction made (algo.h,
** check_commit; jump refuses to lose any but its last nodes, ketama a
** ring without a point): the nodes of the committed version against the
** nodes now. Only for algorithms that have one.
*/
static int check_commit(ring_store *st){
  const ring_config *cfg = &st->info.config;
  if( cfg->algo->check_commit==NULL ) return SQLITE_OK;
  store_counters c;
  node_list before, after;
  memset(&before, 0, sizeof(before));
  memset(&after, 0, sizeof(after));
  char *zErr = NULL;
  int rc = read_counters(st, &c);
  if( rc==SQLITE_OK ){
    rc = load_node_list(st->db, st->zSchema, st->zName, c.epoch, &before,
                        &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = load_node_list(st->db, st->zSchema, st->zName, -1, &after, &zErr);
  }
  if( rc==SQLITE_OK ){
    char zMsg[512];
    int rcCheck = ring_check_commit(cfg, before.aInput, before.n,
                                    after.aInput, after.n, zMsg, sizeof(zMsg));
    if( rcCheck==RING_NOMEM ){
      rc = SQLITE_NOMEM;
    }else if( rcCheck!=RING_OK ){
      rc = store_fail(st, SQLITE_ERROR, "%s: %s", st->zName, zMsg);
    }
  }else if( rc!=SQLITE_NOMEM ){
    rc = store_fail(st, rc, "%s", zErr ? zErr : sqlite3_errmsg(st->db));
  }
  sqlite3_free(zErr);
  node_list_free(&before);
  node_list_free(&after);
  return rc;
}

int store_commit_epoch(ring_store *st){
  sqlite3_stmt *pStmt = NULL;
  int rc = check_commit(st);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_stmt(st, STMT_COMMIT_EPOCH, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_step(st, pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

int store_scan(ring_store *st, int eBy, sqlite3_value *pArg,
               sqlite3_stmt **ppStmt){
  static const char *const azWhere[] = { "", " WHERE node=?1", " WHERE id=?1" };
  int rc = chash_prepare_fmt(st->db, ppStmt, 0,
      "SELECT id, node, weight FROM \"%w\".\"%w_nodes\"%s ORDER BY id",
      st->zSchema, st->zName, azWhere[eBy]);
  if( rc!=SQLITE_OK ) return store_prepare_fail(st, rc);
  if( eBy ) sqlite3_bind_value(*ppStmt, 1, pArg);
  return SQLITE_OK;
}

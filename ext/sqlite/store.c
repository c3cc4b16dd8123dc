/*
** store.c: the shadow tables that hold a ring table, and every read and
** write of them.
**
** Database format (CHASH_FORMAT 1; CHASH_FORMAT_COLUMNS 2 for the
** algorithms whose nodes have columns, below). A ring table T in schema S
** has:
**
**   S.T_config(key TEXT PRIMARY KEY, value) WITHOUT ROWID
**       format     1, or 2
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
** Format 2 is format 1 with the algorithm's columns (algo.h: cassandra's
** tokens, dc, rack) as TEXT columns of T_nodes and T_history, after the
** others, in the algorithm's order: a node's values, and in the history
** its values after the change (for remove: before it). Its history has one
** more op, update: a change of column values (and maybe of the weight),
** which is a new version as a reweight is. Tables of the other algorithms
** stay format 1, so a database written before format 2 opens unchanged.
**
** Versions. A change is logged with epoch = committed epoch + 1. When the
** transaction commits, xSync calls store_commit_epoch for every ring the
** transaction changed, under each name it had (txn.c: SQLite calls xSync on
** tables that DDL undone by ROLLBACK TO may have renamed or dropped), which
** raises the committed epoch to that number if the history ends past it,
** so every committed transaction that changes the ring is one version. A
** rolled back change takes its history rows with it. A COMMIT that fails
** after xSync has its raise taken back before the next change, so the
** version still comes from one commit.
** Version N is rebuilt from the last history row of each id with
** epoch <= N (unless that row is a remove).
**
** All writes are ordinary SQL on the same connection, so transactions,
** savepoints and statement rollback come from SQLite itself.
*/
#include <stdio.h>
#include <string.h>

#include "sqlite_layer.h"

int store_is_shadow_suffix(const char *zSuffix){
  static const char *const azSuffix[] = { "config", "nodes", "history" };
  for(size_t i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    if( sqlite3_stricmp(zSuffix, azSuffix[i])==0 ) return 1;
  }
  return 0;
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

int store_format(const ring_config *cfg){
  return ring_columns(cfg) ? CHASH_FORMAT_COLUMNS : CHASH_FORMAT;
}

int store_format_fits(ring_config *cfg, int64_t format){
  /* Only optional columns can have come after the table: a ring of an
  ** algorithm with a required one (cassandra's tokens) was never format 1. */
  int bRequired = 0;
  for(unsigned i=0; i<ring_columns(cfg); i++){
    bRequired |= cfg->algo->columns[i].required;
  }
  if( format==CHASH_FORMAT && ring_columns(cfg) && !bRequired ){
    cfg->no_columns = 1;
  }
  return format==store_format(cfg);
}

char *store_column_sql(const ring_config *cfg, store_columns_as eAs){
  unsigned n = ring_columns(cfg);
  /* sqlite3_str_finish may give NULL for an empty text. */
  if( n==0 ) return sqlite3_mprintf("");
  sqlite3_str *s = sqlite3_str_new(NULL);
  for(unsigned i=0; i<n; i++){
    const char *zCol = ring_column_name(cfg, i);
    int iParam = STORE_COLUMN_PARAM + (int)i;
    switch( eAs ){
      case STORE_COLUMNS_NAMES:  sqlite3_str_appendf(s, ", \"%w\"", zCol); break;
      case STORE_COLUMNS_TYPED:
        sqlite3_str_appendf(s, ", \"%w\" TEXT", zCol);
        break;
      case STORE_COLUMNS_PARAMS: sqlite3_str_appendf(s, ", ?%d", iParam); break;
      case STORE_COLUMNS_SETS:
        sqlite3_str_appendf(s, ", \"%w\"=?%d", zCol, iParam);
        break;
    }
  }
  return sqlite3_str_finish(s);
}

int store_create(sqlite3 *db, const char *zSchema, const char *zName,
                 const ring_config *cfg, char **pzErr){
  /* For the message: when the script fails for want of memory, SQLite
  ** resets the schema, which frees the table's arguments (zName too). */
  char *zTable = sqlite3_mprintf("%s", zName);
  char *zRows = option_rows(cfg);
  char *zColumns = store_column_sql(cfg, STORE_COLUMNS_TYPED);
  if( zTable==NULL || zRows==NULL || zColumns==NULL ){
    sqlite3_free(zTable);
    sqlite3_free(zRows);
    sqlite3_free(zColumns);
    return SQLITE_NOMEM;
  }
  int rc = chash_exec_fmt(db,
    "CREATE TABLE \"%w\".\"%w_config\"(key TEXT PRIMARY KEY, value)"
    " WITHOUT ROWID;"
    "INSERT INTO \"%w\".\"%w_config\"(key, value) VALUES"
    " ('format', %d)%s, ('epoch', 0), ('stamp', %lld),"
    " ('created', %lld), ('nextid', 1), ('points', 0);"
    "CREATE TABLE \"%w\".\"%w_nodes\"(id INTEGER PRIMARY KEY,"
    " node TEXT NOT NULL UNIQUE, weight REAL NOT NULL%s);"
    "CREATE TABLE \"%w\".\"%w_history\"(seq INTEGER PRIMARY KEY,"
    " epoch INTEGER NOT NULL, op TEXT NOT NULL, id INTEGER NOT NULL,"
    " node TEXT NOT NULL, weight REAL NOT NULL, old TEXT%s);",
    zSchema, zName, zSchema, zName, store_format(cfg), zRows,
    (long long)chash_random_int64(), (long long)chash_random_int64(),
    zSchema, zName, zColumns, zSchema, zName, zColumns);
  sqlite3_free(zRows);
  sqlite3_free(zColumns);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: cannot create shadow tables: %s", zTable,
                             sqlite3_errmsg(db));
  }
  sqlite3_free(zTable);
  return rc;
}

/* The WHERE clause that picks the schema rows of zName's shadow tables and
** of whatever else is on them (indexes, triggers): %q-escaped three times. */
#define SHADOW_ROWS "tbl_name COLLATE NOCASE IN ('%q_config', '%q_nodes'," \
                    " '%q_history')"

/*
** Drops the shadow tables that are ordinary tables, and only those: a view
** or a virtual table of one of their names (in a damaged or crafted file)
** was never the ring's, dropping a virtual table would run its module, and
** DROP TABLE must work on any damaged ring. What is left stays, under the
** name it has.
*/
int store_drop(sqlite3 *db, const char *zSchema, const char *zName){
  sqlite3_stmt *pStmt = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT name FROM \"%w\".sqlite_schema WHERE type='table'"
      " AND sql NOT LIKE 'CREATE VIRTUAL%%' AND " SHADOW_ROWS,
      zSchema, zName, zName, zName);
  if( rc!=SQLITE_OK ) return rc;
  /* Collected first: a table cannot be dropped while a statement reads the
  ** schema. */
  sqlite3_str *pDrop = sqlite3_str_new(db);
  int bNoMem = 0;
  while( !bNoMem && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zTable = (const char *)sqlite3_column_text(pStmt, 0);
    bNoMem = zTable==NULL;
    if( zTable ){
      sqlite3_str_appendf(pDrop, "DROP TABLE \"%w\".\"%w\";", zSchema, zTable);
    }
  }
  rc = sqlite3_finalize(pStmt);
  if( bNoMem ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pDrop);
  char *zDrop = sqlite3_str_finish(pDrop);
  if( rc==SQLITE_OK && zDrop ) rc = sqlite3_exec(db, zDrop, NULL, NULL, NULL);
  sqlite3_free(zDrop);
  return rc;
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

/* Does the CREATE TABLE statement zSql make a WITHOUT ROWID table? Its
** options follow the last ')'. */
static int sql_without_rowid(const char *zSql){
  const char *z = strrchr(zSql, ')');
  for(z = z ? z+1 : zSql; *z; z++){
    if( sqlite3_strnicmp(z, "WITHOUT", 7)==0 ) return 1;
  }
  return 0;
}

/* What is wrong with the schema row of a shadow table or of a trigger on
** one (zType, zObj, the table zTable, zSql as sqlite_schema has them), or
** NULL if nothing is. zName is the ring's. */
static char *shadow_row_problem(const char *zName, const char *zType,
                                const char *zObj, const char *zTable,
                                const char *zSql, int *pbNoMem){
  char *zProblem;
  /* config is WITHOUT ROWID; nodes and history number their rows by rowid
  ** (INTEGER PRIMARY KEY). */
  int bRowid = sqlite3_stricmp(zTable + strlen(zName), "_config")!=0;
  if( strcmp(zType, "trigger")==0 ){
    zProblem = sqlite3_mprintf("%s has a trigger, %s", zTable, zObj);
  }else if( strcmp(zType, "table")!=0 ){
    zProblem = sqlite3_mprintf("%s is a %s, not a table", zObj, zType);
  }else if( zSql==NULL || sqlite3_strnicmp(zSql, "CREATE TABLE", 12)!=0 ){
    zProblem = sqlite3_mprintf("%s is a virtual table, not an ordinary table",
                               zObj);
  }else if( bRowid && sql_without_rowid(zSql) ){
    zProblem = sqlite3_mprintf("%s is a WITHOUT ROWID table", zObj);
  }else{
    return NULL;
  }
  if( zProblem==NULL ) *pbNoMem = 1;
  return zProblem;
}

int store_check_tables(sqlite3 *db, const char *zSchema, const char *zName,
                       int bTriggers, char **pzProblem){
  sqlite3_stmt *pStmt = NULL;
  int bNoMem = 0;
  *pzProblem = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT type, name, tbl_name, sql FROM \"%w\".sqlite_schema"
      " WHERE type<>'index' AND " SHADOW_ROWS, zSchema, zName, zName, zName);
  while( rc==SQLITE_OK && *pzProblem==NULL && !bNoMem
      && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zObj = (const char *)sqlite3_column_text(pStmt, 1);
    const char *zTable = (const char *)sqlite3_column_text(pStmt, 2);
    if( zType && zObj && zTable
     && (bTriggers || strcmp(zType, "trigger")!=0) ){
      *pzProblem = shadow_row_problem(zName, zType, zObj, zTable,
                     (const char *)sqlite3_column_text(pStmt, 3), &bNoMem);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  if( bNoMem ) rc = SQLITE_NOMEM;
  if( rc!=SQLITE_OK ){
    sqlite3_free(*pzProblem);
    *pzProblem = NULL;
  }
  return rc;
}

int store_check_corrupt(sqlite3 *db, const char *zSchema, const char *zName,
                        int bTriggers, char **pzErr){
  char *zProblem = NULL;
  int rc = store_check_tables(db, zSchema, zName, bTriggers, &zProblem);
  if( rc==SQLITE_OK && zProblem ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s", zSchema, zName,
                             zProblem);
    rc = *pzErr ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
  }else if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("ring '%q.%q': %s", zSchema, zName,
                             sqlite3_errmsg(db));
  }
  sqlite3_free(zProblem);
  return rc;
}

int store_read_info(sqlite3 *db, const char *zSchema, const char *zName,
                    store_info *pInfo, char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc = SQLITE_OK;
  /* The shapes are read from sqlite_schema, not asked of
  ** sqlite3_table_column_metadata: SQLite 3.54 reads past an empty column
  ** array there for a virtual table not yet connected (one put in a shadow
  ** table's place, after a reopen). */
  rc = store_check_corrupt(db, zSchema, zName, 0, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT key, value FROM \"%w\".\"%w_config\"", zSchema, zName);
  if( rc==SQLITE_NOMEM ) return rc;
  if( rc!=SQLITE_OK ){
    /* A virtual table there looks right, but no read may use one. */
    char *zRead = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    if( zRead==NULL ) return SQLITE_NOMEM;
    rc = store_check_corrupt(db, zSchema, zName, 1, pzErr);
    if( rc==SQLITE_OK ){
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: cannot read "
                               "%s_config: %s", zSchema, zName, zName, zRead);
      rc = SQLITE_CORRUPT_VTAB;
    }
    sqlite3_free(zRead);
    return rc;
  }
  memset(pInfo, 0, sizeof(*pInfo));
  ring_config_default(&pInfo->config);
  unsigned nSeen = 0;
  options_given given;
  memset(&given, 0, sizeof(given));
  char zMsg[512] = "";
  int64_t format = 0;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zValue = (const char *)sqlite3_column_text(pStmt, 1);
    int bad = 0;
    if( zKey==NULL ) continue;
    if( zValue==NULL ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      bad = 1;
    }else if( strcmp(zKey, "format")==0 ){
      /* Which of the two the algorithm has is checked once it is read. */
      bad = config_int(pStmt, 0, &format) || format<CHASH_FORMAT
         || format>CHASH_FORMAT_COLUMNS;
      if( bad ){
        snprintf(zMsg, sizeof(zMsg), "unsupported format %s (this chash "
                 "reads format %d, and %d for algorithms with columns)",
                 zValue, CHASH_FORMAT, CHASH_FORMAT_COLUMNS);
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
      bad = options_set(&pInfo->config, &given, zKey, zValue,
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
    int bAll = nSeen==0x3F;
    for(int i=0; bAll && options_required[i]; i++){
      bAll = options_given_has(&given, options_required[i]);
    }
    if( !bAll ){
      snprintf(zMsg, sizeof(zMsg), "%s_config lacks a setting", zName);
      rc = SQLITE_CORRUPT_VTAB;
    }else if( options_load(&pInfo->config, &given, zMsg, sizeof(zMsg)) ){
      rc = SQLITE_CORRUPT_VTAB;
    }else if( !store_format_fits(&pInfo->config, format) ){
      char zList[100];
      if( ring_columns(&pInfo->config) ){
        snprintf(zMsg, sizeof(zMsg), "unsupported format %lld (this chash "
                 "reads format %d for algorithm %s, whose nodes have the "
                 "columns %s)", (long long)format, CHASH_FORMAT_COLUMNS,
                 pInfo->config.algo->name,
                 ring_column_list(&pInfo->config, zList, sizeof(zList)));
      }else{
        snprintf(zMsg, sizeof(zMsg), "unsupported format %lld (this chash "
                 "reads format %d); format %d is for algorithms whose nodes "
                 "have columns", (long long)format, CHASH_FORMAT,
                 CHASH_FORMAT_COLUMNS);
      }
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

/* The stamp query of zSchema.zName; flags: the chash_prepare_fmt ones. */
static int stamp_prepare(sqlite3 *db, const char *zSchema, const char *zName,
                         int bHidable, unsigned flags, sqlite3_stmt **ppStmt){
  /* A table of temp hides one of the same name in main. */
  int rc = chash_prepare_fmt(db, ppStmt, flags,
             "SELECT value FROM \"%w\".\"%w_config\" WHERE key='stamp'%s",
             zSchema, zName, bHidable
             ? " AND NOT EXISTS (SELECT 1 FROM temp.sqlite_schema"
               " WHERE type='table' AND name=?1 COLLATE NOCASE)" : "");
  if( rc==SQLITE_OK && bHidable ){
    rc = sqlite3_bind_text(*ppStmt, 1, zName, -1, SQLITE_STATIC);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_finalize(*ppStmt);
    *ppStmt = NULL;
  }
  return rc;
}

int store_stamp_check(sqlite3_stmt *pStmt, int64_t stamp){
  int bHolds = sqlite3_step(pStmt)==SQLITE_ROW
            && sqlite3_column_type(pStmt, 0)==SQLITE_INTEGER
            && sqlite3_column_int64(pStmt, 0)==stamp;
  sqlite3_reset(pStmt);
  return bHolds;
}

int store_stamp_prepare(sqlite3 *db, const char *zSchema, const char *zName,
                        int bHidable, sqlite3_stmt **ppStmt){
  return stamp_prepare(db, zSchema, zName, bHidable,
                       SQLITE_PREPARE_PERSISTENT, ppStmt);
}

int store_stamp_holds(sqlite3 *db, const char *zSchema, const char *zName,
                      int64_t stamp){
  int bHidable = strcmp(zSchema, "main")==0
              && sqlite3_db_filename(db, "temp")!=NULL;
  sqlite3_stmt *pStmt = NULL;
  int bHolds = stamp_prepare(db, zSchema, zName, bHidable, 0, &pStmt)
                 ==SQLITE_OK
            && store_stamp_check(pStmt, stamp);
  sqlite3_finalize(pStmt);
  return bHolds;
}

/* "json_object('tokens', "tokens", ...)" over cfg's columns, or "NULL". */
static char *columns_json_sql(const ring_config *cfg){
  unsigned n = ring_columns(cfg);
  if( n==0 ) return sqlite3_mprintf("NULL");
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "json_object(");
  for(unsigned i=0; i<n; i++){
    const char *zCol = ring_column_name(cfg, i);
    sqlite3_str_appendf(s, "%s%Q, \"%w\"", i ? ", " : "", zCol, zCol);
  }
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

int store_history(sqlite3 *db, const char *zSchema, const char *zName,
                  const ring_config *cfg, int64_t iMaxEpoch,
                  sqlite3_stmt **ppStmt){
  char *zColumns = columns_json_sql(cfg);
  if( zColumns==NULL ) return SQLITE_NOMEM;
  int rc = chash_prepare_fmt(db, ppStmt, 0,
      "SELECT epoch, op, node, weight, old, %s FROM \"%w\".\"%w_history\""
      " WHERE epoch<=?1 ORDER BY seq", zColumns, zSchema, zName);
  sqlite3_free(zColumns);
  if( rc==SQLITE_OK ) sqlite3_bind_int64(*ppStmt, 1, iMaxEpoch);
  return rc;
}

/* Append z (n bytes) to p's text; its offset there into *pOffset. */
static int node_list_text(node_list *p, const char *z, size_t n,
                          uintptr_t *pOffset){
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
  *pOffset = p->nNames;
  p->nNames += n;
  return SQLITE_OK;
}

/* Append the node of row pStmt: name in column 0, weight w, id, and the
** values of nColumns columns from column iColumn on. */
static int node_list_add(node_list *p, sqlite3_stmt *pStmt, int64_t id,
                         double w, int iColumn, unsigned nColumns){
  if( p->n==p->nAlloc ){
    uint32_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
    ring_input *aNew = sqlite3_realloc64(p->aInput, sizeof(ring_input)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    p->aInput = aNew;
    p->nAlloc = nNew;
  }
  ring_input *x = &p->aInput[p->n];
  memset(x, 0, sizeof(*x));
  /* Names and values are offsets until the list is complete (zNames may
  ** move); a value not given stays NULL. */
  uintptr_t off;
  const char *z = (const char *)sqlite3_column_text(pStmt, 0);
  int n = sqlite3_column_bytes(pStmt, 0);
  if( node_list_text(p, z, (size_t)n, &off) ) return SQLITE_NOMEM;
  x->name = (const char *)off;
  x->name_len = (uint32_t)n;
  x->weight = w;
  x->id = id;
  for(unsigned i=0; i<nColumns; i++){
    int iCol = iColumn + (int)i;
    if( sqlite3_column_type(pStmt, iCol)==SQLITE_NULL ) continue;
    z = (const char *)sqlite3_column_text(pStmt, iCol);
    n = sqlite3_column_bytes(pStmt, iCol);
    if( z==NULL || node_list_text(p, z, (size_t)n, &off) ) return SQLITE_NOMEM;
    /* Offset + 1, so that an empty value at offset 0 is not "none". */
    x->columns[i] = (const char *)(off + 1);
    x->column_len[i] = (uint32_t)n;
  }
  p->n++;
  return SQLITE_OK;
}

void node_list_free(node_list *p){
  sqlite3_free(p->aInput);
  sqlite3_free(p->zNames);
}

int load_node_list(sqlite3 *db, const char *zSchema, const char *zName,
                   const ring_config *cfg, int64_t iVersion, node_list *pList,
                   char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc;
  unsigned nColumns = ring_columns(cfg);
  char *zColumns = store_column_sql(cfg, STORE_COLUMNS_NAMES);
  if( zColumns==NULL ) return SQLITE_NOMEM;
  if( iVersion<0 ){
    rc = chash_prepare_fmt(db, &pStmt, 0,
        "SELECT node, weight, 'add', id%s FROM \"%w\".\"%w_nodes\""
        " ORDER BY id", zColumns, zSchema, zName);
  }else{
    rc = chash_prepare_fmt(db, &pStmt, 0,
        "SELECT node, weight, op, id%s FROM \"%w\".\"%w_history\" WHERE"
        " seq IN (SELECT max(seq) FROM \"%w\".\"%w_history\""
        " WHERE epoch<=?1 GROUP BY id) ORDER BY id",
        zColumns, zSchema, zName, zSchema, zName);
    if( rc==SQLITE_OK ) sqlite3_bind_int64(pStmt, 1, iVersion);
  }
  sqlite3_free(zColumns);
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
                      && strcmp(zOp, "rename")!=0
                      && (nColumns==0 || strcmp(zOp, "update")!=0)) ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s_history has an "
                               "unknown op: %s", zSchema, zName, zName,
                               zOp ? zOp : "NULL");
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    int eType = sqlite3_column_type(pStmt, 1);
    const char *zNode = (const char *)sqlite3_column_text(pStmt, 0);
    if( zNode==NULL || (eType!=SQLITE_FLOAT && eType!=SQLITE_INTEGER) ){
      if( sqlite3_errcode(db)==SQLITE_NOMEM ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: a node has a NULL name "
                               "or a weight that is not a number",
                               zSchema, zName);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    rc = node_list_add(pList, pStmt, sqlite3_column_int64(pStmt, 3),
                       sqlite3_column_double(pStmt, 1), 4, nColumns);
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
    ring_input *x = &pList->aInput[i];
    x->name = pList->zNames + (uintptr_t)x->name;
    for(unsigned k=0; k<nColumns; k++){
      if( x->columns[k] ){
        x->columns[k] = pList->zNames + ((uintptr_t)x->columns[k] - 1);
      }
    }
  }
  return SQLITE_OK;
}

int store_load_ring(sqlite3 *db, const char *zSchema, const char *zName,
                    const ring_config *cfg, int64_t iVersion,
                    const ring *pBase, ring **ppRing, char **pzErr){
  node_list list;
  memset(&list, 0, sizeof(list));
  *ppRing = NULL;
  int rc = load_node_list(db, zSchema, zName, cfg, iVersion, &list, pzErr);
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

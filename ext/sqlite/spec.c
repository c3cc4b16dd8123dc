/*
** spec.c: ring specs resolved to ring snapshots, and the caches that keep
** that cheap.
**
** A ring spec names a ring: 'shards' (as this connection sees it now),
** 'shards@3' (version 3), 'shards@-1' (one version before the current),
** 'aux.shards' (in attached schema aux), inline JSON ('["a","b"]' or
** '{"nodes":{"a":1,"b":2},"vnodes":300}'), an integer N (version N of the
** default ring) or nothing (the default ring: the only one there is).
** ext/core/ring_spec.c parses it; here it is looked up (catalog.c), read
** (store.c, json_spec.c) and built.
**
** Functions resolve a spec once per statement (spec_stmt.c). Below that,
** the connection keeps two caches (both over ring_cache.c's LRU):
**   - the last CONN_CACHE_SIZE rings built, each valid while its table's
**     stamp (random, replaced by every change, rolled back with the change)
**     is the one it was built at: for committed versions too, since the
**     file's content can be replaced by a copy with another version of the
**     same number (table_ring_read).
**
** Finding a spec's ring and reading its stamp takes several small queries
** (the schemas, the table's schema row, its configuration, its last
** version): some 25 us per statement, most of a one-row query such as
** SELECT ch_locate(?, 'shards'). So the connection also remembers the last
** FAST_CACHE_SIZE specs it resolved to rings in main or temp, with the
** table's stamp and a token of what could make the spec name another table
** (the connection's change count, which creating a chash table raises too,
** and the number of schemas). While the token holds, one query tells
** whether the ring is still the one read: it reads the table's stamp and,
** for a ring in main, checks that no table of its name in temp hides it.
** Attached schemas are left out: one can be detached and another attached
** under its name.
**
** Longer than most files here (about 660 lines): the three kinds of ring
** (default, named, inline) and the two caches they share are one path
** from a spec to a ring, best read together; the per-statement layer
** above them is spec_stmt.c.
*/
#include <stdio.h>
#include <string.h>

#include "ring_spec.h"
#include "sqlite_layer.h"

#define CONN_CACHE_SIZE   16       /* built rings a connection keeps */

/* ------------------------------------------------ per-connection cache */

#define FAST_CACHE_SIZE 8

#define KEEP_NOT_YET 0     /* no statement kept: close_hook.c's table is */
#define KEEP_ON      1     /* not connected yet, connected, or was and */
#define KEEP_ENDED   2     /* is no more (conn_keep_statements) */

struct chash_conn {
  sqlite3 *db;
  int eKeep;               /* KEEP_*: may statements be kept */
  ring_cache built;        /* built rings, by "schema.name[@version]" or
                           ** "json:..."; tag: the stamp or creation tag */
  ring_cache resolved;     /* specs resolved to rings in main or temp, with
                           ** their table and the connection's state */
  ring_cache_entry aBuilt[CONN_CACHE_SIZE];
  ring_cache_entry aResolved[FAST_CACHE_SIZE];
  int bResolving;          /* a spec is being resolved (see resolve_enter) */
  void *pSpareHold;        /* a statement's hold given back, for the next */
  int nRef;                /* its owners: see conn_retain */
};

chash_conn *conn_new(sqlite3 *db){
  chash_conn *conn = sqlite3_malloc64(sizeof(*conn));
  if( conn ){
    memset(conn, 0, sizeof(*conn));
    conn->nRef = 1;
    conn->db = db;
    conn->built.a = conn->aBuilt;
    conn->built.n = CONN_CACHE_SIZE;
    conn->resolved.a = conn->aResolved;
    conn->resolved.n = FAST_CACHE_SIZE;
  }
  return conn;
}

void conn_keep_statements(chash_conn *conn, int bKeep){
  if( bKeep ){
    if( conn->eKeep==KEEP_NOT_YET ) conn->eKeep = KEEP_ON;
    return;
  }
  conn->eKeep = KEEP_ENDED;
  for(int i=0; i<conn->resolved.n; i++){
    sqlite3_finalize(conn->resolved.a[i].pCheck);
    conn->resolved.a[i].pCheck = NULL;
  }
}

/*
** Everything that can reach conn owns a reference: each function and
** module registered with it (released by SQLite's destructor when it is
** dropped, replaced or the connection closes), the chash_txn of the
** modules that keep transactions, and each statement's hold. So no order
** of sqlite3_drop_modules, sqlite3_create_function over chash's names,
** statements finalized late and sqlite3_close_v2 leaves one of them with
** freed memory.
*/
chash_conn *conn_retain(chash_conn *conn){
  conn->nRef++;
  return conn;
}

void conn_release(void *pConn){
  chash_conn *conn = pConn;
  if( conn==NULL || --conn->nRef>0 ) return;
  ring_cache_clear(&conn->built);
  ring_cache_clear(&conn->resolved);
  stmt_hold_free(conn->pSpareHold);
  sqlite3_free(conn);
}

/*
** A statement's hold on its rings (spec_stmt.c) is nByte bytes (the same
** for every hold), allocated once per statement. The last one given back
** is kept for the next statement, so a connection running one statement
** after another allocates none; it may keep its rings for that statement
** too (spec_state_holds), until the caches are dropped.
*/
void *conn_hold_take(chash_conn *conn, size_t nByte){
  void *p = conn->pSpareHold;
  conn->pSpareHold = NULL;
  if( p==NULL ) p = sqlite3_malloc64(nByte);
  if( p ) conn_retain(conn);
  return p;
}

void conn_hold_give(chash_conn *conn, void *p){
  /* The last owner's hold is not kept: conn goes with it. */
  if( conn->pSpareHold==NULL && conn->nRef>1 ){
    conn->pSpareHold = p;
  }else{
    stmt_hold_free(p);
  }
  conn_release(conn);
}

void *conn_hold_spare(chash_conn *conn){
  return conn->pSpareHold;
}

/*
** Resolving a spec runs only chash's own queries on shadow tables, so a
** resolution begun while one runs was started by SQL hidden in them (a view
** put in a shadow table's place after it was last checked, a virtual
** table's module) and would recurse until the stack is gone: refused.
** 0 if the caller may go on (and must call resolve_leave), else 1 with the
** error in *pzErr.
*/
static int resolve_enter(chash_conn *conn, const char *zFunc, char **pzErr){
  if( conn->bResolving ){
    *pzErr = sqlite3_mprintf("%s: called while a ring's shadow tables are "
                             "read (they run SQL: a damaged file?)", zFunc);
    return 1;
  }
  conn->bResolving = 1;
  return 0;
}

static void resolve_leave(chash_conn *conn){
  conn->bResolving = 0;
}

void conn_forget_rings(chash_conn *conn){
  ring_cache_clear(&conn->built);
  ring_cache_clear(&conn->resolved);
  stmt_hold_free(conn->pSpareHold);
  conn->pSpareHold = NULL;
}

/* A new reference to the built ring for (zKey, tag), or NULL. */
static ring *cache_get(chash_conn *conn, const char *zKey, int64_t tag){
  ring_cache_entry *e = ring_cache_find(&conn->built, zKey, (int)strlen(zKey));
  if( e==NULL || e->tag!=tag ) return NULL;
  ring_retain(e->ring);
  return e->ring;
}

/* Keep r under (zKey, tag). Out of memory just means it is not kept. */
static void cache_put(chash_conn *conn, const char *zKey, int64_t tag, ring *r){
  ring_cache_entry fresh;
  if( ring_cache_entry_init(&fresh, zKey, (int)strlen(zKey), r)!=SQLITE_OK ){
    return;
  }
  fresh.tag = tag;
  ring_cache_put(&conn->built, &fresh);
}

/*
** The most recently used built ring of table zTable ("schema.name"), at
** any version or tag, or NULL: the base an incremental build starts from.
** Any ring is a correct base (ring_build_from checks what it reuses); one
** of the same table just shares the most points.
*/
static ring *cache_base(chash_conn *conn, const char *zTable){
  int n = (int)strlen(zTable);
  const ring_cache_entry *pBest = NULL;
  for(int i=0; i<conn->built.n; i++){
    const ring_cache_entry *e = &conn->built.a[i];
    if( e->zKey && e->nKey>=n && memcmp(e->zKey, zTable, n)==0
     && (e->nKey==n || e->zKey[n]=='@')
     && (pBest==NULL || e->last_use>pBest->last_use) ){
      pBest = e;
    }
  }
  return pBest ? pBest->ring : NULL;
}

/* ------------------------------------------------------- table rings */

/*
** The ring of table zSchema.zName (a chash table, name as stored) at the
** version pSpec asks for (zSpec: the spec as written, for messages). Checks
** the version is in range. New reference in *ppRing.
*/
static int table_ring_read(chash_conn *conn, const char *zSchema,
                           const char *zName, const ring_spec *pSpec,
                           const char *zSpec, ring **ppRing, int64_t *pStamp,
                           char **pzErr){
  sqlite3 *db = conn->db;
  int bCurrent = pSpec->when==RING_SPEC_CURRENT;
  int64_t iVersion = pSpec->version;
  store_info info;
  int64_t nCurrent;
  int rc = store_read_info(db, zSchema, zName, &info, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  rc = store_current_version(db, zSchema, zName, &nCurrent);
  if( rc==SQLITE_CORRUPT_VTAB ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s_history has an epoch "
                             "that is not a version number", zSchema, zName,
                             zName);
    return rc;
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s", zSchema, zName,
                             sqlite3_errmsg(db));
    return rc==SQLITE_NOMEM ? rc : SQLITE_CORRUPT_VTAB;
  }
  /* Every committed version has its rows in the history. */
  if( nCurrent<info.epoch ){
    *pzErr = sqlite3_mprintf("ring '%q.%q' is corrupt: %s_history ends at "
                             "version %lld, but %s_config says %lld were "
                             "committed", zSchema, zName, zName,
                             (long long)nCurrent, zName, (long long)info.epoch);
    return SQLITE_CORRUPT_VTAB;
  }
  if( !bCurrent ){
    if( pSpec->when==RING_SPEC_RELATIVE ) iVersion = nCurrent + iVersion;
    if( iVersion<0 || iVersion>nCurrent ){
      /* An integer spec is a version of the default ring. */
      *pzErr = sqlite3_mprintf(pSpec->kind==RING_SPEC_NAMED
                               ? "no such version: " CHASH_ECHO " (ring "
                                 "'%q.%q' has versions 0 to %lld)"
                               : "no such version: %s%s of the default ring "
                                 "(ring '%q.%q' has versions 0 to %lld)",
                               zSpec, chash_cut_mark(zSpec), zSchema, zName,
                               (long long)nCurrent);
      return SQLITE_ERROR;
    }
  }
  /* Every version is kept under the table's stamp, committed ones too: a
  ** committed version never changes in this database, but the file's
  ** content can be replaced (a backup restored, sqlite3_deserialize, a
  ** copy attached in place of another) by a copy whose version of that
  ** number differs. The copy has the same creation tag; its stamp is new
  ** from its first change on. */
  int64_t tag = info.stamp;
  char *zTable = sqlite3_mprintf("%s.%s", zSchema, zName);
  char *zKey = bCurrent ? sqlite3_mprintf("%s", zTable)
                        : sqlite3_mprintf("%s@%lld", zTable,
                                          (long long)iVersion);
  if( zTable==NULL || zKey==NULL ){
    sqlite3_free(zTable);
    sqlite3_free(zKey);
    return SQLITE_NOMEM;
  }
  ring *r = cache_get(conn, zKey, tag);
  if( r==NULL ){
    /* Held while the load runs SQL, so nothing can free it meanwhile. */
    ring *pBase = cache_base(conn, zTable);
    if( pBase ) ring_retain(pBase);
    rc = store_load_ring(db, zSchema, zName, &info.config,
                         bCurrent ? -1 : iVersion, pBase, &r, pzErr);
    ring_release(pBase);
    if( rc==SQLITE_OK ){
      r->version = bCurrent ? nCurrent : iVersion;
      cache_put(conn, zKey, tag, r);
    }
  }
  sqlite3_free(zTable);
  sqlite3_free(zKey);
  *ppRing = r;
  *pStamp = info.stamp;
  return rc;
}

/*
** table_ring_read, with the configuration, the version and the nodes read
** from one snapshot of the database. Each read is its own statement; when
** the calling statement reads no table of that schema, each would
** otherwise see the latest commit at its own time, and a ring could be
** built from nodes newer than its version number and stamp say. A
** statement left open on the schema holds one read transaction for all.
*/
static int table_ring(chash_conn *conn, const char *zSchema, const char *zName,
                      const ring_spec *pSpec, const char *zSpec,
                      ring **ppRing, int64_t *pStamp, char **pzErr){
  sqlite3_stmt *pPin = NULL;
  char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema", zSchema);
  if( zSql==NULL ) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(conn->db, zSql, -1, &pPin, NULL);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pPin);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ){
    rc = table_ring_read(conn, zSchema, zName, pSpec, zSpec, ppRing, pStamp,
                         pzErr);
  }else if( rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("ring '%q.%q': %s", zSchema, zName,
                             sqlite3_errmsg(conn->db));
  }
  sqlite3_finalize(pPin);
  return rc;
}

int spec_current_ring(chash_conn *conn, const char *zSchema,
                      const char *zName, ring **ppRing, char **pzErr){
  int64_t stamp;
  ring_spec current;
  ring_spec_default(&current);
  if( resolve_enter(conn, zName, pzErr) ){
    return *pzErr ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
  }
  int rc = table_ring(conn, zSchema, zName, &current, zName, ppRing, &stamp,
                      pzErr);
  resolve_leave(conn);
  return rc;
}

/* Record which table a spec named, and its stamp, for callers that ask
** (pWhere). */
static int where_set(spec_table *pWhere, const char *zSchema,
                     const char *zName, int64_t stamp){
  if( pWhere==NULL ) return SQLITE_OK;
  pWhere->stamp = stamp;
  pWhere->zSchema = sqlite3_mprintf("%s", zSchema);
  pWhere->zName = sqlite3_mprintf("%s", zName);
  return pWhere->zSchema && pWhere->zName ? SQLITE_OK : SQLITE_NOMEM;
}

void spec_table_free(spec_table *pWhere){
  sqlite3_free(pWhere->zSchema);
  sqlite3_free(pWhere->zName);
  pWhere->zSchema = pWhere->zName = NULL;
}

/* The default ring: the only chash table of the connection. */
static int default_ring(chash_conn *conn, const ring_spec *pSpec,
                        const char *zSpec, ring **ppRing, spec_table *pWhere,
                        char **pzErr){
  char *zList = NULL, *zSchema = NULL, *zName = NULL;
  int nRing = 0;
  int rc = catalog_list_rings(conn->db, &zList, &nRing, &zSchema, &zName);
  if( rc!=SQLITE_OK ) return rc;
  if( nRing==0 ){
    *pzErr = sqlite3_mprintf("no ring to use: create one with CREATE VIRTUAL "
                             "TABLE name USING chash, or pass a ring spec");
    rc = SQLITE_ERROR;
  }else if( nRing>1 ){
    *pzErr = sqlite3_mprintf("%d rings, so name one: %s", nRing, zList);
    rc = SQLITE_ERROR;
  }else{
    int64_t stamp;
    rc = table_ring(conn, zSchema, zName, pSpec, zSpec, ppRing, &stamp,
                    pzErr);
    if( rc==SQLITE_OK ) rc = where_set(pWhere, zSchema, zName, stamp);
  }
  sqlite3_free(zList);
  sqlite3_free(zSchema);
  sqlite3_free(zName);
  return rc;
}

/*
** The chash table that spec p names (NAMED: [schema.]name, the version left
** aside): the schema it is in and its name as stored, in *pzSchema and
** *pzName (freed by the caller). zSpec is the spec as written, for the
** messages.
*/
static int find_ring_table(sqlite3 *db, const ring_spec *p, const char *zSpec,
                           char **pzSchema, char **pzName, char **pzErr){
  *pzSchema = *pzName = NULL;
  /* The schema and the table unquoted, and the whole name as written. */
  char *zCopy = sqlite3_malloc64(p->schema_len + p->table_len + p->name_len
                                 + 3);
  if( zCopy==NULL ) return SQLITE_NOMEM;
  char *zSchemaPart = zCopy;
  char *zTablePart = zSchemaPart + p->schema_len + 1;
  char *zWhole = zTablePart + p->table_len + 1;
  ring_spec_unquote(p->schema, p->schema_len, zSchemaPart);
  ring_spec_unquote(p->table, p->table_len, zTablePart);
  memcpy(zWhole, p->name, p->name_len);
  zWhole[p->name_len] = 0;
  char **azSchema = NULL;
  int nList = 0;
  int rc = catalog_list_schemas(db, &azSchema, &nList);
  if( rc!=SQLITE_OK ){
    sqlite3_free(zCopy);
    return rc;
  }
  /* No schema: the name is looked up in temp, main, then attached. A
  ** schema that is not there names no ring, unless the spec was 'x.y' with
  ** nothing quoted, which is then the table 'x.y'. */
  const char *zName = zTablePart;
  int iOnly = -1;
  if( p->schema ){
    iOnly = nList;
    for(int i=0; i<nList; i++){
      if( sqlite3_stricmp(azSchema[i], zSchemaPart)==0 ){
        iOnly = i;
        break;
      }
    }
    if( iOnly==nList && p->schema_if_exists ){
      iOnly = -1;
      zName = zWhole;
    }
  }
  int found = 0;
  int iSchema;
  for(iSchema=0; iSchema<nList && found==0; iSchema++){
    if( iOnly>=0 && iSchema!=iOnly ) continue;
    found = catalog_find_ring(db, azSchema[iSchema], zName, pzName);
    if( found==0 ) continue;
    break;
  }
  if( found<0 ){
    rc = -found;
  }else if( found==0 || *zName==0 ){
    char *zHint = NULL;
    rc = catalog_ring_hint(db, iOnly>=0 && iOnly<nList ? azSchema[iOnly] : 0,
                           &zHint);
    if( rc==SQLITE_OK ){
      *pzErr = sqlite3_mprintf("no such ring: " CHASH_ECHO "; %s", zSpec,
                               chash_cut_mark(zSpec), zHint);
      rc = SQLITE_ERROR;
    }
    sqlite3_free(zHint);
  }else if( found==2 ){
    *pzErr = sqlite3_mprintf("not a chash ring: " CHASH_ECHO, zSpec,
                             chash_cut_mark(zSpec));
    rc = SQLITE_ERROR;
  }else{
    *pzSchema = sqlite3_mprintf("%s", azSchema[iSchema]);
    rc = *pzSchema ? SQLITE_OK : SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(*pzName);
    *pzName = NULL;
  }
  catalog_free_schemas(azSchema, nList);
  sqlite3_free(zCopy);
  return rc;
}

/* A spec naming a table: [schema.]name[@version] (zSpec as written). */
static int named_ring(chash_conn *conn, const ring_spec *pSpec,
                      const char *zSpec, ring **ppRing, spec_table *pWhere,
                      char **pzErr){
  char *zSchema = NULL, *zTable = NULL;
  int rc = find_ring_table(conn->db, pSpec, zSpec, &zSchema, &zTable, pzErr);
  if( rc==SQLITE_OK ){
    int64_t stamp;
    rc = table_ring(conn, zSchema, zTable, pSpec, zSpec, ppRing, &stamp,
                    pzErr);
    if( rc==SQLITE_OK ) rc = where_set(pWhere, zSchema, zTable, stamp);
  }
  sqlite3_free(zSchema);
  sqlite3_free(zTable);
  return rc;
}

/* ------------------------------------------------------ inline JSON */

/* An inline ring: '["a","b"]' or '{"nodes": ..., option: value, ...}'. */
static int json_ring(chash_conn *conn, const char *z, int n, ring **ppRing,
                     char **pzErr){
  char *zKey = sqlite3_mprintf("json:%.*s", n, z);
  if( zKey==NULL ) return SQLITE_NOMEM;
  *ppRing = cache_get(conn, zKey, 0);
  if( *ppRing ){
    sqlite3_free(zKey);
    return SQLITE_OK;
  }
  ring_config cfg;
  ring_input *aInput = NULL;
  uint32_t nInput = 0;
  int rc = json_spec_read(conn->db, z, n, &cfg, &aInput, &nInput, pzErr);
  if( rc==SQLITE_OK ){
    char zMsg[512];
    int rcRing = ring_build(&cfg, aInput, nInput, ppRing, zMsg, sizeof(zMsg));
    if( rcRing==RING_NOMEM ){
      rc = SQLITE_NOMEM;
    }else if( rcRing!=RING_OK ){
      *pzErr = sqlite3_mprintf("JSON ring spec: %s", zMsg);
      rc = SQLITE_ERROR;
    }else{
      cache_put(conn, zKey, 0, *ppRing);
    }
  }
  json_spec_free(aInput, nInput);
  sqlite3_free(zKey);
  return rc;
}

/* Resolve a spec of the given type to a new ring reference. A spec that
** names a table also fills *pWhere, if given (not for inline JSON). */
static int resolve(chash_conn *conn, int eType, const char *z, int n,
                   int64_t i, ring **ppRing, spec_table *pWhere,
                   char **pzErr){
  ring_spec spec;
  char zVersion[32];
  if( eType==SQLITE_NULL ){
    ring_spec_default(&spec);
    return default_ring(conn, &spec, "", ppRing, pWhere, pzErr);
  }
  if( eType==SQLITE_INTEGER ){
    ring_spec_version(i, &spec);
    snprintf(zVersion, sizeof(zVersion), "%lld", (long long)i);
    return default_ring(conn, &spec, zVersion, ppRing, pWhere, pzErr);
  }
  char zMsg[512];
  if( ring_spec_parse(z, (size_t)n, &spec, zMsg, sizeof(zMsg)) ){
    *pzErr = sqlite3_mprintf("%s", zMsg);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( spec.kind==RING_SPEC_INLINE ) return json_ring(conn, z, n, ppRing, pzErr);
  return named_ring(conn, &spec, z, ppRing, pWhere, pzErr);
}

int spec_arg_read(sqlite3_value *pSpec, const char *zFunc, spec_arg *a,
                  char **pzErr){
  memset(a, 0, sizeof(*a));
  a->eType = pSpec ? sqlite3_value_type(pSpec) : SQLITE_NULL;
  switch( a->eType ){
    case SQLITE_TEXT:
      a->z = (const char *)sqlite3_value_text(pSpec);
      a->n = sqlite3_value_bytes(pSpec);
      return a->z ? SQLITE_OK : SQLITE_NOMEM;
    case SQLITE_INTEGER:
      a->i = sqlite3_value_int64(pSpec);
      return SQLITE_OK;
    case SQLITE_FLOAT:
      /* A whole number given as a REAL (a JavaScript number) is a version. */
      if( value_whole_int64(pSpec, &a->i) ){
        a->eType = SQLITE_INTEGER;
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("%s: a ring spec is a name, a JSON ring or "
                               "an integer version, not the real %s", zFunc,
                               sqlite3_value_text(pSpec));
      break;
    case SQLITE_NULL:
      if( pSpec==NULL ) return SQLITE_OK;
      *pzErr = sqlite3_mprintf("%s: the ring spec is NULL", zFunc);
      break;
    default:
      *pzErr = sqlite3_mprintf("%s: a ring spec is a name, a JSON ring or "
                               "an integer version, not a blob", zFunc);
      break;
  }
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* ------------------------------------------------ resolved specs */

/* Room for most specs' keys on the stack (longer ones are allocated). */
#define SPEC_KEY_ROOM 128
#define SPEC_KEY_TEXT 't'          /* the first byte of a TEXT spec's key */

/*
** A spec's key in the resolved cache: its type, then its text or value.
** Written to zRoom (SPEC_KEY_ROOM bytes) if it fits, else to memory the
** caller frees when *pzKey is not zRoom. Its length, or -1 if out of memory.
*/
static int spec_arg_key(const spec_arg *a, char *zRoom, char **pzKey){
  int n;
  *pzKey = zRoom;
  if( a->eType==SQLITE_TEXT ){
    n = a->n+1;
    if( n>SPEC_KEY_ROOM ){
      *pzKey = sqlite3_malloc64(n);
      if( *pzKey==NULL ) return -1;
    }
    (*pzKey)[0] = SPEC_KEY_TEXT;
    memcpy(*pzKey+1, a->z, a->n);
    return n;
  }
  if( a->eType==SQLITE_INTEGER ){
    return snprintf(zRoom, SPEC_KEY_ROOM, "i%lld", (long long)a->i);
  }
  zRoom[0] = 'd';
  return 1;
}

static void spec_arg_key_free(char *zKey, const char *zRoom){
  if( zKey!=zRoom ) sqlite3_free(zKey);
}

/* What could change which table a spec names, or the table without
** changing its stamp (see the top): a chash table created (its shadow
** tables' rows count as changes) or an edit of the shadow tables
** (nChange), an attached schema with a ring (nDb, for the default ring). */
static void token_read(sqlite3 *db, int64_t *pnChange, int *pnDb){
  *pnChange = sqlite3_total_changes64(db);
  *pnDb = 0;
  while( sqlite3_db_name(db, *pnDb) ) (*pnDb)++;
}

/* Is the token (nChange, nDb) as token_read would read it now, without
** counting the schemas? */
static int token_holds(sqlite3 *db, int64_t nChange, int nDb){
  return sqlite3_total_changes64(db)==nChange
      && sqlite3_db_name(db, nDb-1)!=NULL
      && sqlite3_db_name(db, nDb)==NULL;
}

/*
** Is main settled: a database that only this connection's pager holds (in
** memory or in a temporary file, and not one sqlite3_deserialize() put in
** place, which is named "x"), with no write transaction open on the
** connection and no temp schema that could hide its rings? Then *pVersion
** is main's data version, which every commit to main raises (this
** connection's, and a shared cache's other connections', since they share
** the pager), so while it stays the same main's committed content does:
** a ring's stamp read when main was settled holds while main is settled at
** the same data version. A rolled-back change leaves the content it was
** read from; a database put in place by sqlite3_deserialize() is not
** settled, however its count runs; one restored from a backup is committed
** into main, which raises the count; and a change of this connection not
** yet committed is inside a write transaction.
*/
static int main_settled(sqlite3 *db, unsigned *pVersion){
  /* NULL names main without a lookup by name, in every SQLite chash runs
  ** on (3.39 and later). */
  const char *zFile = sqlite3_db_filename(db, NULL);
  return zFile!=NULL && zFile[0]==0
      && sqlite3_db_filename(db, "temp")==NULL
      && sqlite3_txn_state(db, NULL)!=SQLITE_TXN_WRITE
      && sqlite3_file_control(db, NULL, SQLITE_FCNTL_DATA_VERSION,
                              pVersion)==SQLITE_OK;
}

/*
** Does this connection share a page cache with another (shared-cache
** mode)? With PRAGMA read_uncommitted it may then have read the other's
** change before it was committed, and a rollback there raises no data
** version: what was read is trusted only if no cache was shared.
*/
static int cache_shared(sqlite3 *db){
  int nUsed = 0, nShared = 0, nHigh;
  if( sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &nUsed, &nHigh,
                        0)!=SQLITE_OK
   || sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED_SHARED, &nShared,
                        &nHigh, 0)!=SQLITE_OK ){
    return 1;
  }
  return nShared<nUsed;
}

/*
** Record on e that its table's stamp was just read (or found to hold) in
** schema zSchema, with main settled at data version nVersion (bSettled:
** main_settled, called before the read).
*/
static void settled_note(sqlite3 *db, ring_cache_entry *e,
                         const char *zSchema, int bSettled, unsigned nVersion){
  e->bSettled = bSettled && strcmp(zSchema, "main")==0 && !cache_shared(db);
  e->nDataVersion = nVersion;
}

/*
** In state *pAt (spec_checked), main settled: the token of the moment, and
** main's data version, which together say what a ring found current then
** was found at (fast_get): while they are the same, so is the ring.
*/
int spec_state_holds(chash_conn *conn, const spec_state *pAt){
  unsigned nVersion = 0;
  return !conn->bResolving
      && token_holds(conn->db, pAt->nChange, pAt->nDb)
      && main_settled(conn->db, &nVersion) && nVersion==pAt->nDataVersion;
}

#define STAMP_CHANGED      0   /* fast_stamp_holds: it does not hold */
#define STAMP_HOLDS        1   /* it does (a query said so) */
#define STAMP_HOLDS_SETTLED 2  /* it does, main settled at *pVersion */

/*
** Does the table of resolved entry e still have the stamp it was resolved
** at, with no table of temp hiding it (STAMP_*)? Without a query if main is
** settled at the data version it was when the stamp was last read
** (main_settled). The query is kept with the entry while the connection
** may keep statements (spec.c's top).
*/
static int fast_stamp_holds(chash_conn *conn, ring_cache_entry *e,
                            unsigned *pVersion){
  sqlite3 *db = conn->db;
  const spec_table *w = &e->where;
  unsigned nVersion = 0;
  int bSettled = main_settled(db, &nVersion);
  if( bSettled && e->bSettled && nVersion==e->nDataVersion ){
    *pVersion = nVersion;
    return STAMP_HOLDS_SETTLED;
  }
  /* A table of temp can hide a ring of main while temp is open. Temp
  ** opens with its first table, after the statement may have been kept,
  ** and closes when PRAGMA temp_store changes. */
  int bHidable = strcmp(w->zSchema, "main")==0
              && sqlite3_db_filename(db, "temp")!=NULL;
  if( e->pCheck && e->bCheckHidable!=bHidable ){
    sqlite3_finalize(e->pCheck);
    e->pCheck = NULL;
  }
  if( e->pCheck==NULL && conn->eKeep==KEEP_NOT_YET ) close_hook_connect(db);
  if( e->pCheck==NULL && conn->eKeep==KEEP_ON ){
    store_stamp_prepare(db, w->zSchema, w->zName, bHidable, &e->pCheck);
    e->bCheckHidable = bHidable;
  }
  int bHolds = e->pCheck ? store_stamp_check(e->pCheck, w->stamp)
                         : store_stamp_holds(db, w->zSchema, w->zName,
                                             w->stamp);
  if( bHolds ) settled_note(db, e, w->zSchema, bSettled, nVersion);
  return bHolds ? STAMP_HOLDS : STAMP_CHANGED;
}

/*
** The ring spec a resolved to last time, as a new reference in *ppRing
** (and its table in *pWhere, if given), if nothing can have changed it
** since: 1. Otherwise 0, and the caller resolves it with queries.
*/
static int fast_get(chash_conn *conn, const spec_arg *a, ring **ppRing,
                    spec_table *pWhere, spec_checked *pChecked){
  sqlite3 *db = conn->db;
  ring_cache_entry *e;
  if( a->eType==SQLITE_TEXT ){
    e = ring_cache_find_tagged(&conn->resolved, SPEC_KEY_TEXT, a->z, a->n);
  }else{
    char zRoom[SPEC_KEY_ROOM], *zKey;
    int nKey = spec_arg_key(a, zRoom, &zKey);
    if( nKey<0 ) return 0;
    e = ring_cache_find(&conn->resolved, zKey, nKey);
    spec_arg_key_free(zKey, zRoom);
  }
  if( e==NULL || !token_holds(db, e->nChange, e->nDb) ) return 0;
  int64_t nChange = e->nChange;
  const ring_cache_entry *c = pChecked ? pChecked->e : NULL;
  unsigned nVersion = 0;
  int eHolds;
  if( c && c->born==pChecked->born && pChecked->nChange==nChange
   && c->where.stamp==e->where.stamp
   && strcmp(c->where.zSchema, e->where.zSchema)==0
   && strcmp(c->where.zName, e->where.zName)==0 ){
    /* checked in this statement: current in the state of that check if
    ** it was settled and the schemas are the same */
    pChecked->bAt = pChecked->bAt && pChecked->at.nDb==e->nDb;
  }else if( (eHolds = fast_stamp_holds(conn, e, &nVersion))==STAMP_CHANGED ){
    return 0;
  }else if( pChecked ){
    pChecked->e = e;
    pChecked->born = e->born;
    pChecked->nChange = nChange;
    pChecked->at.nChange = nChange;
    pChecked->at.nDb = e->nDb;
    pChecked->at.nDataVersion = nVersion;
    pChecked->bAt = eHolds==STAMP_HOLDS_SETTLED;
  }
  if( pWhere && where_set(pWhere, e->where.zSchema, e->where.zName,
                          e->where.stamp)!=SQLITE_OK ){
    spec_table_free(pWhere);
    return 0;
  }
  ring_retain(e->ring);
  *ppRing = e->ring;
  return 1;
}

/* Remember that spec a resolved to ring r of table pWhere, if the table is
** in main or temp; bSettled and nVersion: main_settled before it was read.
** Out of memory just means it is not remembered. */
static void fast_put(chash_conn *conn, const spec_arg *a, ring *r,
                     const spec_table *pWhere, int bSettled,
                     unsigned nVersion){
  sqlite3 *db = conn->db;
  if( pWhere->zSchema==NULL ) return;
  if( strcmp(pWhere->zSchema, "main")!=0 && strcmp(pWhere->zSchema, "temp")!=0 ){
    return;
  }
  ring_cache_entry fresh;
  token_read(db, &fresh.nChange, &fresh.nDb);
  /* The default ring is the only ring of all schemas, attached ones too. */
  if( a->eType!=SQLITE_TEXT && fresh.nDb>2 ) return;
  int64_t nChange = fresh.nChange;
  int nDb = fresh.nDb;
  char zRoom[SPEC_KEY_ROOM], *zKey;
  int nKey = spec_arg_key(a, zRoom, &zKey);
  if( nKey<0 ) return;
  int rc = ring_cache_entry_init(&fresh, zKey, nKey, r);
  spec_arg_key_free(zKey, zRoom);
  if( rc!=SQLITE_OK ) return;
  if( where_set(&fresh.where, pWhere->zSchema, pWhere->zName,
                pWhere->stamp)!=SQLITE_OK ){
    ring_cache_entry_clear(&fresh);
    return;
  }
  fresh.nChange = nChange;
  fresh.nDb = nDb;
  settled_note(db, &fresh, pWhere->zSchema, bSettled, nVersion);
  ring_cache_put(&conn->resolved, &fresh);
}

int spec_arg_resolve(chash_conn *conn, const spec_arg *a, const char *zFunc,
                     ring **ppRing, spec_table *pWhere,
                     spec_checked *pChecked, char **pzErr){
  char *zErr = NULL;
  *ppRing = NULL;
  if( resolve_enter(conn, zFunc, pzErr) ){
    return *pzErr ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
  }
  if( fast_get(conn, a, ppRing, pWhere, pChecked) ){
    resolve_leave(conn);
    return SQLITE_OK;
  }
  /* Read with queries: current at no state a later statement can check. */
  if( pChecked ) pChecked->bAt = 0;
  spec_table where = { NULL, NULL, 0 };
  unsigned nVersion = 0;
  int bSettled = main_settled(conn->db, &nVersion);
  int rc = resolve(conn, a->eType, a->z, a->n, a->i, ppRing, &where, &zErr);
  resolve_leave(conn);
  if( rc==SQLITE_OK ){
    fast_put(conn, a, *ppRing, &where, bSettled, nVersion);
    if( pWhere ){
      *pWhere = where;
      where.zSchema = where.zName = NULL;
    }
  }
  spec_table_free(&where);
  /* resolve() words every error and corruption it finds; no words: it ran
  ** out of memory. */
  if( (rc==SQLITE_ERROR || rc==SQLITE_CORRUPT_VTAB) && zErr==NULL ){
    rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ){
    if( rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
      if( *pzErr==NULL ) rc = SQLITE_NOMEM;
    }
    ring_release(*ppRing);
    *ppRing = NULL;
  }
  sqlite3_free(zErr);
  return rc;
}

int spec_ring_value(chash_conn *conn, sqlite3_value *pSpec, const char *zFunc,
                    ring **ppRing, spec_table *pWhere, char **pzErr){
  spec_arg a;
  *ppRing = NULL;
  if( pWhere ) memset(pWhere, 0, sizeof(*pWhere));
  int rc = spec_arg_read(pSpec, zFunc, &a, pzErr);
  if( rc==SQLITE_OK ){
    rc = spec_arg_resolve(conn, &a, zFunc, ppRing, pWhere, NULL, pzErr);
  }
  if( rc!=SQLITE_OK && pWhere ) spec_table_free(pWhere);
  return rc;
}

char *spec_display(chash_conn *conn, sqlite3_value *pSpec){
  int64_t iVersion = 0;
  int bVersion = pSpec!=NULL && value_whole_int64(pSpec, &iVersion);
  if( pSpec && !bVersion ){
    const char *z = (const char *)sqlite3_value_text(pSpec);
    int n = sqlite3_value_bytes(pSpec);
    if( z==NULL ) return NULL;
    /* An inline ring can be long: its start says which it is. */
    return n>60 ? sqlite3_mprintf("%.60Q...", z) : sqlite3_mprintf("%Q", z);
  }
  char *zList = NULL, *zSchema = NULL, *zName = NULL, *zOut;
  int nRing = 0;
  int rc = catalog_list_rings(conn->db, &zList, &nRing, &zSchema, &zName);
  if( rc!=SQLITE_OK ) return NULL;
  if( nRing!=1 ){
    zOut = sqlite3_mprintf("the default ring");
  }else if( bVersion ){
    zOut = sqlite3_mprintf("'%q.%q@%lld'", zSchema, zName, (long long)iVersion);
  }else{
    zOut = sqlite3_mprintf("'%q.%q'", zSchema, zName);
  }
  sqlite3_free(zList);
  sqlite3_free(zSchema);
  sqlite3_free(zName);
  return zOut;
}

int spec_ring_table(chash_conn *conn, sqlite3_value *pSpec, const char *zFunc,
                    char **pzSchema, char **pzName, char **pzErr){
  char *zErr = NULL, *zList = NULL;
  int rc;
  *pzSchema = *pzName = NULL;
  if( pSpec==NULL ){
    int nRing = 0;
    rc = catalog_list_rings(conn->db, &zList, &nRing, pzSchema, pzName);
    if( rc==SQLITE_OK && nRing!=1 ){
      zErr = nRing==0 ? sqlite3_mprintf("no ring to check: create one with "
                                        "CREATE VIRTUAL TABLE name USING "
                                        "chash, or name one")
                      : sqlite3_mprintf("%d rings, so name one: %s", nRing,
                                        zList);
      rc = SQLITE_ERROR;
    }
  }else if( sqlite3_value_type(pSpec)!=SQLITE_TEXT ){
    zErr = sqlite3_mprintf("the ring is the name of a chash table, not %s",
                           sqlite3_value_type(pSpec)==SQLITE_NULL ? "NULL"
                           : "a number or a blob");
    rc = SQLITE_ERROR;
  }else{
    const char *z = (const char *)sqlite3_value_text(pSpec);
    int n = sqlite3_value_bytes(pSpec);
    ring_spec spec;
    char zMsg[512];
    if( z==NULL ) return SQLITE_NOMEM;
    if( ring_spec_parse(z, (size_t)n, &spec, zMsg, sizeof(zMsg)) ){
      zErr = sqlite3_mprintf("%s", zMsg);
      rc = SQLITE_ERROR;
    }else if( spec.kind!=RING_SPEC_NAMED || spec.when!=RING_SPEC_CURRENT ){
      /* Versions and inline rings are built from a table, not stored. */
      zErr = sqlite3_mprintf(CHASH_ECHO " is not a chash table: name the "
                             "table, which holds every version", z,
                             chash_cut_mark(z));
      rc = SQLITE_ERROR;
    }else{
      rc = find_ring_table(conn->db, &spec, z, pzSchema, pzName, &zErr);
    }
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(*pzSchema);
    sqlite3_free(*pzName);
    *pzSchema = *pzName = NULL;
    /* Errors of ours have words; none: out of memory. Other codes are
    ** SQLite's (a locked database), told in its words. */
    if( (rc==SQLITE_ERROR || rc==SQLITE_CORRUPT_VTAB) && zErr==NULL ){
      rc = SQLITE_NOMEM;
    }
    if( rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
      if( *pzErr==NULL ) rc = SQLITE_NOMEM;
    }
  }
  sqlite3_free(zErr);
  sqlite3_free(zList);
  return rc;
}

/*
** vtab.c: the chash virtual table, one ring per table.
**
**   CREATE VIRTUAL TABLE shards USING chash(algorithm=ring, hash=xxh3,
**                                           vnodes=160, seed=0);
**   INSERT INTO shards(node, weight) VALUES ('db-a', 1), ('db-b', 2);
**   SELECT node, weight, points, share FROM shards;
**
** Columns: node (TEXT, unique, required), weight (REAL > 0, default 1),
** points and share (computed, read-only), a hidden column named like the
** table, which loads a whole ring spec (vtab_pool.c), and the columns the
** algorithm declares (algo.h: cassandra's tokens, dc and rack; TEXT,
** stored with the node). The rowid is the node's id: the order nodes were
** added in.
**
** The table keeps nothing in memory: every change is written through to
** the shadow tables (store.c) with ordinary SQL on the same connection, so
** ROLLBACK, savepoints and failed statements undo it like any other write.
** xSync turns a transaction's changes into the ring's next version: those
** of every ring the transaction changed, since the table SQLite calls may
** have another name by then, or none (txn.c holds the rules). xCommit,
** xRollback and xRollbackTo tell txn.c where the transaction is.
**
** Flags: SQLITE_VTAB_INNOCUOUS (the table reads and writes only its own
** shadow tables) and SQLITE_VTAB_CONSTRAINT_SUPPORT (xUpdate checks before it
** writes, and does INSERT OR REPLACE / OR IGNORE itself).
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_layer.h"

#define COLUMN_NODE    0
#define COLUMN_WEIGHT  1
#define COLUMN_POINTS  2
#define COLUMN_SHARE   3
#define COLUMN_POOL    4   /* hidden, named like the table (vtab_pool.c) */
#define COLUMN_EXTRA   5   /* the algorithm's columns, in its order */

typedef struct chash_vtab {
  txn_table t;             /* base class and connection, must be first */
  chash_conn *conn;        /* the connection's ring caches */
  char *zSchema;           /* schema holding the table */
  char *zName;             /* the table's name */
  ring_store *store;       /* its shadow tables; NULL if they are corrupt */
  char *zCorrupt;          /* then: what is wrong with them */
} chash_vtab;

typedef struct chash_cursor {
  sqlite3_vtab_cursor base; /* base class, must be first */
  sqlite3_stmt *pStmt;     /* over the current nodes: id, node, weight,
                           ** the algorithm's columns (store_scan) */
  int bEof;
  ring *ring;              /* the current ring, once points or share is read */
} chash_cursor;

/* Replace the table's error message (the caller returns the error code;
** vtab_result makes it SQLITE_NOMEM if the message could not be made). */
#define vtab_error(p, ...) \
  ((void)chash_vtab_error(&(p)->t.base, SQLITE_ERROR, __VA_ARGS__))

/* An error whose message could not be built is an out-of-memory error. */
static int vtab_result(chash_vtab *p, int rc){
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && p->t.base.zErrMsg==NULL ){
    return SQLITE_NOMEM;
  }
  return rc;
}

/* The store's last error becomes the table's. */
static int store_error(chash_vtab *p, int rc){
  if( rc!=SQLITE_NOMEM && store_errmsg(p->store) ){
    vtab_error(p, "%s", store_errmsg(p->store));
  }
  return rc;
}

static void vtab_free(chash_vtab *p){
  if( p==NULL ) return;
  store_close(p->store);
  sqlite3_free(p->zCorrupt);
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zName);
  sqlite3_free(p);
}

/*
** Options of CREATE VIRTUAL TABLE name USING chash(...), each key=value:
**   algorithm  ring | ketama | jump | rendezvous | maglev | modn  (ring)
**   hash       a name of hash.h               (xxh3; ketama md5, maglev xxh64)
**   vnodes     1..RING_MAX_VNODES, points per unit of weight  (160)
**   seed       0..2^64-1, the seed of every hash of the ring  (0)
**   and the algorithm's own options (its descriptor's own_options)
** options_finish says which options fit which algorithm.
** Unknown, repeated and malformed options are errors that name the option
** and list what is accepted. Connecting reads the options back from
** %_config, which is the authority once the table exists.
*/
/* Is a CREATE argument such as 'vnodes=100' quoted as a whole? SQLite
** hands module arguments over as written, quotes and all. */
static int create_arg_is_quoted(const char *z){
  size_t n = strlen(z);
  char q = z[0], end = q=='[' ? ']' : q;
  return n>=2 && (q=='\'' || q=='"' || q=='`' || q=='[') && z[n-1]==end;
}

static int parse_create_options(int argc, const char *const *argv,
                                ring_config *cfg, char **pzErr){
  options_given given;
  char zMsg[512];
  memset(&given, 0, sizeof(given));
  ring_config_default(cfg);
  for(int i=3; i<argc; i++){
    char *zArg = sqlite3_mprintf("%s", argv[i]);
    char *zKey, *zValue;
    if( zArg==NULL ) return SQLITE_NOMEM;
    int bad = options_split(zArg, &zKey, &zValue);
    if( bad==0 && create_arg_is_quoted(argv[i]) ){
      snprintf(zMsg, sizeof(zMsg), "the argument %s is quoted as a whole: "
               "write option=value, quoting only the value if at all "
               "(vnodes=100, hash='xxh64')", argv[i]);
      bad = 1;
    }else if( bad ){
      char zList[200];
      snprintf(zMsg, sizeof(zMsg), "bad option '%s': write option=value; "
               "options: %s", argv[i], options_names(zList, sizeof(zList)));
    }else{
      bad = options_set(cfg, &given, zKey, zValue, zMsg, sizeof(zMsg));
    }
    sqlite3_free(zArg);
    if( bad ){
      *pzErr = sqlite3_mprintf("%s: %s", argv[2], zMsg);
      return SQLITE_ERROR;
    }
  }
  if( options_finish(cfg, &given, zMsg, sizeof(zMsg)) ){
    *pzErr = sqlite3_mprintf("%s: %s", argv[2], zMsg);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/*
** Empty arguments. SQLite drops an empty module argument, so "chash(,)"
** or "chash(vnodes=3,)" would pass as if the commas were not there: read
** the statement back from the schema (written before xCreate runs) and
** find them. A tokenizer of SQL's quoting and comments, enough to split
** the argument list as SQLite does: at commas outside parentheses.
*/
static const char *sql_skip_blanks(const char *z){
  for(;;){
    while( *z==' ' || *z=='\t' || *z=='\n' || *z=='\r' || *z=='\f' ) z++;
    if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      const char *zEnd = strstr(z+2, "*/");
      z = zEnd ? zEnd+2 : z+strlen(z);
    }else{
      return z;
    }
  }
}

/* The end of the token at z (not a blank, not the end). */
static const char *sql_token_end(const char *z){
  char q = z[0]=='[' ? ']' : z[0];
  if( q=='\'' || q=='"' || q=='`' || q==']' ){
    for(z++; *z; z++){
      if( *z==q ){
        if( q!=']' && z[1]==q ){ z++; continue; }
        return z+1;
      }
    }
    return z;
  }
  if( isalnum((unsigned char)*z) || *z=='_' || (unsigned char)*z>=0x80 ){
    while( isalnum((unsigned char)*z) || *z=='_' || *z=='$'
        || (unsigned char)*z>=0x80 ){
      z++;
    }
    return z;
  }
  return z+1;
}

/* 0, or the number (from 1) of the first empty argument in the module
** arguments of CREATE VIRTUAL TABLE statement zSql, when there is more
** than one ("chash()" has none). */
static int sql_empty_argument(const char *zSql){
  const char *z = sql_skip_blanks(zSql), *zEnd;
  int bUsing = 0;
  for(; *z; z = sql_skip_blanks(zEnd)){
    zEnd = sql_token_end(z);
    if( bUsing==0 ){
      bUsing = zEnd-z==5 && sqlite3_strnicmp(z, "using", 5)==0;
    }else if( bUsing==1 ){
      bUsing = 2;                           /* the module's name */
    }else{
      break;
    }
  }
  if( *z!='(' ) return 0;
  int depth = 0, iArg = 1, bEmpty = 1, iFirstEmpty = 0, nComma = 0;
  for(; *z; z = sql_skip_blanks(zEnd)){
    zEnd = sql_token_end(z);
    if( *z=='(' && depth++==0 ) continue;
    if( *z==')' && --depth==0 ) break;
    if( *z==',' && depth==1 ){
      if( bEmpty && iFirstEmpty==0 ) iFirstEmpty = iArg;
      nComma++;
      iArg++;
      bEmpty = 1;
      continue;
    }
    bEmpty = 0;
  }
  if( bEmpty && iFirstEmpty==0 ) iFirstEmpty = iArg;
  return nComma>0 ? iFirstEmpty : 0;
}

/* SQLITE_OK, or an error naming the first empty argument of the CREATE
** of table zName in zSchema. */
static int check_empty_arguments(sqlite3 *db, const char *zSchema,
                                 const char *zName, char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0, "SELECT sql FROM \"%w\".sqlite_schema"
                             " WHERE type='table' AND name=?1", zSchema);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zSql = (const char *)sqlite3_column_text(pStmt, 0);
    int iEmpty = zSql ? sql_empty_argument(zSql) : 0;
    if( zSql==NULL && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
      rc = SQLITE_NOMEM;
    }else if( iEmpty ){
      *pzErr = sqlite3_mprintf("%s: argument %d of chash(...) is empty: write "
                               "option=value, with one comma between two "
                               "(vnodes=100, hash='xxh64')", zName, iEmpty);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  int rcFinal = sqlite3_finalize(pStmt);
  return rc!=SQLITE_OK ? rc : rcFinal;
}

/* xCreate (bCreate) and xConnect. argv[1] is the schema, argv[2] the table. */
static int chash_init(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr, int bCreate){
  const char *zSchema = argv[1], *zName = argv[2];
  int rc = SQLITE_OK;
  *ppVtab = NULL;
  if( bCreate ){
    ring_config cfg;
    rc = parse_create_options(argc, argv, &cfg, pzErr);
    if( rc==SQLITE_OK ) rc = check_empty_arguments(db, zSchema, zName, pzErr);
    if( rc==SQLITE_OK ) rc = store_create(db, zSchema, zName, &cfg, pzErr);
    if( rc!=SQLITE_OK ) return rc;
  }
  chash_vtab *p = sqlite3_malloc64(sizeof(*p));
  if( p==NULL ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->t.db = db;
  p->t.txn = pAux;
  p->conn = txn_conn(p->t.txn);
  p->zSchema = sqlite3_mprintf("%s", zSchema);
  p->zName = sqlite3_mprintf("%s", zName);
  if( p->zSchema==NULL || p->zName==NULL ){
    vtab_free(p);
    return SQLITE_NOMEM;
  }
  rc = store_open(db, zSchema, zName, p->t.txn, &p->store, pzErr);
  if( rc==SQLITE_CORRUPT_VTAB && !bCreate ){
    /* Connect all the same, so that DROP TABLE can remove a damaged ring;
    ** everything else reports the damage (store_ok). */
    p->zCorrupt = *pzErr;
    *pzErr = NULL;
    rc = p->zCorrupt ? SQLITE_OK : SQLITE_NOMEM;
  }
  /* The algorithm's columns, as the shadow tables say (none for a damaged
  ** ring, which only DROP TABLE can use). */
  char *zColumns = NULL;
  if( rc==SQLITE_OK ){
    ring_config none;
    ring_config_default(&none);
    zColumns = store_column_sql(p->store ? &store_info_of(p->store)->config
                                         : &none, STORE_COLUMNS_TYPED);
    if( zColumns==NULL ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    char *zDecl = sqlite3_mprintf("CREATE TABLE x(node TEXT, weight REAL, "
                                  "points INTEGER, share REAL, \"%w\" HIDDEN"
                                  "%s)", zName, zColumns);
    rc = zDecl ? sqlite3_declare_vtab(db, zDecl) : SQLITE_NOMEM;
    sqlite3_free(zDecl);
  }
  sqlite3_free(zColumns);
  if( rc!=SQLITE_OK ){
    vtab_free(p);
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *ppVtab = &p->t.base;
  return SQLITE_OK;
}

/* An error of chash_init without a message: building it ran out of
** memory (SQLite would say "vtable constructor failed"). */
static int init_result(int rc, char **pzErr){
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && *pzErr==NULL ) rc = SQLITE_NOMEM;
  return rc;
}

static int chash_create(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  return init_result(chash_init(db, pAux, argc, argv, ppVtab, pzErr, 1), pzErr);
}

static int chash_connect(sqlite3 *db, void *pAux, int argc,
                         const char *const *argv, sqlite3_vtab **ppVtab,
                         char **pzErr){
  return init_result(chash_init(db, pAux, argc, argv, ppVtab, pzErr, 0), pzErr);
}

/* SQLITE_OK if the table's shadow tables could be opened, else the error
** that says how they are corrupt. */
static int store_ok(chash_vtab *p){
  if( p->store ) return SQLITE_OK;
  vtab_error(p, "%s", p->zCorrupt);
  return SQLITE_CORRUPT_VTAB;
}

static int chash_disconnect(sqlite3_vtab *pVtab){
  vtab_free((chash_vtab *)pVtab);
  return SQLITE_OK;
}

static int chash_destroy(sqlite3_vtab *pVtab){
  chash_vtab *p = (chash_vtab *)pVtab;
  if( p->store ) store_reset_statements(p->store);
  /* SQLite forgets this table's part in the transaction: should ROLLBACK
  ** TO bring the ring back, the sentinel commits it (txn.c). */
  txn_enlist(p->t.txn, p->t.db);
  txn_changed(p->t.txn);
  int rc = store_drop(p->t.db, p->zSchema, p->zName);
  if( rc==SQLITE_OK ) vtab_free(p);
  return rc;
}

/*
** xBestIndex. The contract with xFilter, as idxNum:
**   0  full scan of the nodes, in rowid (id) order
**   1  node = argv[0]: at most one row
**   2  rowid = argv[0]: at most one row
*/
static int chash_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  int iNode = -1, iRowid = -1;
  for(int i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if( !c->usable || c->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( c->iColumn==COLUMN_NODE ) iNode = i;
    if( c->iColumn==-1 ) iRowid = i;
  }
  int iUse = iNode>=0 ? iNode : iRowid;
  if( iUse>=0 ){
    pInfo->idxNum = iNode>=0 ? STORE_SCAN_NAME : STORE_SCAN_ID;
    pInfo->aConstraintUsage[iUse].argvIndex = 1;
    pInfo->aConstraintUsage[iUse].omit = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  }else{
    pInfo->idxNum = STORE_SCAN_ALL;
    pInfo->estimatedCost = 10000.0;
    pInfo->estimatedRows = 1000;
  }
  return SQLITE_OK;
}

static int chash_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  chash_cursor *c = sqlite3_malloc64(sizeof(*c));
  if( c==NULL ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *ppCursor = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(chash_cursor *c){
  sqlite3_finalize(c->pStmt);
  c->pStmt = NULL;
  ring_release(c->ring);
  c->ring = NULL;
}

static int chash_close(sqlite3_vtab_cursor *pCursor){
  chash_cursor *c = (chash_cursor *)pCursor;
  cursor_reset(c);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int chash_next(sqlite3_vtab_cursor *pCursor){
  chash_cursor *c = (chash_cursor *)pCursor;
  int rc = sqlite3_step(c->pStmt);
  c->bEof = rc!=SQLITE_ROW;
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  chash_vtab *p = (chash_vtab *)pCursor->pVtab;
  vtab_error(p, "%s: %s", p->zName, sqlite3_errmsg(p->t.db));
  return rc;
}

static int chash_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  chash_cursor *c = (chash_cursor *)pCursor;
  chash_vtab *p = (chash_vtab *)pCursor->pVtab;
  cursor_reset(c);
  int rc = store_ok(p);
  if( rc==SQLITE_OK ){
    rc = store_scan(p->store, idxNum, argc>0 ? argv[0] : NULL, &c->pStmt);
    if( rc!=SQLITE_OK ) rc = store_error(p, rc);
  }
  if( rc==SQLITE_OK ) rc = chash_next(pCursor);
  return vtab_result(p, rc);
}

static int chash_eof(sqlite3_vtab_cursor *pCursor){
  return ((chash_cursor *)pCursor)->bEof;
}

/* points or share of the cursor's node, from the current ring. */
static int computed_column(chash_cursor *c, sqlite3_context *ctx, int iCol){
  chash_vtab *p = (chash_vtab *)c->base.pVtab;
  if( c->ring==NULL ){
    char *zErr = NULL;
    int rc = spec_current_ring(p->conn, p->zSchema, p->zName, &c->ring, &zErr);
    if( rc!=SQLITE_OK ){
      /* spec.c words every error it finds; none: out of memory. */
      if( zErr ) vtab_error(p, "%s", zErr);
      sqlite3_free(zErr);
      return vtab_result(p, rc);
    }
  }
  const char *zNode = (const char *)sqlite3_column_text(c->pStmt, 1);
  int64_t i = zNode ? ring_find_node(c->ring, zNode,
                                     sqlite3_column_bytes(c->pStmt, 1)) : -1;
  if( i<0 ){
    vtab_error(p, "ring '%q.%q' is corrupt: node %Q is not in its ring",
               p->zSchema, p->zName, zNode);
    return SQLITE_CORRUPT_VTAB;
  }
  const ring_node *node = &c->ring->nodes[i];
  if( iCol==COLUMN_SHARE ){
    sqlite3_result_double(ctx, node->share);
  }else if( ring_lists_units(c->ring) ){
    /* Points on the ring, or slots of a table; the others: NULL. */
    sqlite3_result_int64(ctx, node->points);
  }
  return SQLITE_OK;
}

static int chash_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                        int iCol){
  chash_cursor *c = (chash_cursor *)pCursor;
  switch( iCol ){
    case COLUMN_NODE:
      sqlite3_result_value(ctx, sqlite3_column_value(c->pStmt, 1));
      return SQLITE_OK;
    case COLUMN_WEIGHT:
      sqlite3_result_double(ctx, sqlite3_column_double(c->pStmt, 2));
      return SQLITE_OK;
    case COLUMN_POOL:
      return SQLITE_OK;    /* written only: INSERT INTO t(t) VALUES (spec) */
    case COLUMN_POINTS:
    case COLUMN_SHARE:
      /* An UPDATE that leaves them alone need not compute the ring. */
      if( sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;
      return computed_column(c, ctx, iCol);
    default:
      /* The algorithm's columns follow the scan's id, node and weight. */
      sqlite3_result_value(ctx, sqlite3_column_value(c->pStmt,
                                                     3 + iCol-COLUMN_EXTRA));
      return SQLITE_OK;
  }
}

static int chash_rowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid){
  *pRowid = sqlite3_column_int64(((chash_cursor *)pCursor)->pStmt, 0);
  return SQLITE_OK;
}

/* The node name in v, checked. Numbers become their text, as a TEXT column
** would store them. */
static int node_arg(chash_vtab *p, sqlite3_value *v, const char **pz, int *pn){
  int eType = sqlite3_value_type(v);
  if( eType==SQLITE_NULL ){
    vtab_error(p, "%s: node must not be NULL", p->zName);
    return SQLITE_CONSTRAINT_NOTNULL;
  }
  if( eType==SQLITE_BLOB ){
    vtab_error(p, "%s: node must be text, not a blob", p->zName);
    return SQLITE_ERROR;
  }
  *pz = (const char *)sqlite3_value_text(v);
  *pn = sqlite3_value_bytes(v);
  if( *pz==NULL ) return SQLITE_NOMEM;
  const char *zBad = ring_check_name(*pz, (size_t)*pn);
  if( zBad ){
    vtab_error(p, "%s: %s", p->zName, zBad);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/*
** The weight in v, checked. SQLite hands a virtual table an omitted column
** as NULL, so on INSERT (bInsert) a NULL the statement wrote is the default
** 1: it cannot be told from an omitted weight. A NULL bound as a parameter
** can be told, and is refused, as any NULL weight of an UPDATE is: a host
** language's NaN is bound as NULL and must not become 1 unseen.
*/
static int weight_arg(chash_vtab *p, sqlite3_value *v, int bInsert, double *pW){
  int eType = sqlite3_value_numeric_type(v);
  if( eType==SQLITE_NULL ){
    if( bInsert && !sqlite3_value_frombind(v) ){
      *pW = 1.0;
      return SQLITE_OK;
    }
    vtab_error(p, "%s: weight must not be NULL (a NaN is bound as NULL): "
               "leave the weight out of an INSERT for the default 1",
               p->zName);
    return SQLITE_ERROR;
  }
  double w = sqlite3_value_double(v);
  if( (eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT)
   || !(w>0.0) || !isfinite(w) || w>RING_MAX_WEIGHT ){
    const char *zText = (const char *)sqlite3_value_text(v);
    vtab_error(p, "%s: weight must be a positive finite number at most %g, "
               "not %.40s", p->zName, RING_MAX_WEIGHT,
               eType==SQLITE_BLOB ? "a blob" : zText ? zText : "?");
    return SQLITE_ERROR;
  }
  const char *zBad = ring_check_weight(&store_info_of(p->store)->config, w);
  if( zBad ){
    vtab_error(p, "%s: %s", p->zName, zBad);
    return SQLITE_ERROR;
  }
  *pW = w;
  return SQLITE_OK;
}

/* Reject a value for a computed column (NULL or "unchanged" is fine). */
static int readonly_arg(chash_vtab *p, sqlite3_value *v, const char *zCol){
  if( sqlite3_value_nochange(v) || sqlite3_value_type(v)==SQLITE_NULL ){
    return SQLITE_OK;
  }
  vtab_error(p, "%s: column %s is read-only (computed from the ring)",
             p->zName, zCol);
  return SQLITE_ERROR;
}

/*
** The values of the algorithm's columns in argv (from COLUMN_EXTRA on),
** checked, into node's columns. A NULL (or an omitted column, which
** SQLite hands over as NULL) is the column's default, and refused for a
** column without one that the algorithm requires. A number is its text,
** as a TEXT column would store it.
*/
static int columns_arg(chash_vtab *p, sqlite3_value **argv, ring_input *node){
  const ring_config *cfg = &store_info_of(p->store)->config;
  unsigned n = ring_columns(cfg);
  for(unsigned i=0; i<n; i++){
    sqlite3_value *v = argv[2+COLUMN_EXTRA+i];
    const char *z = NULL;
    size_t nz = 0;
    int eType = sqlite3_value_type(v);
    if( eType==SQLITE_BLOB ){
      vtab_error(p, "%s: %s must be text, not a blob", p->zName,
                 ring_column_name(cfg, i));
      return SQLITE_ERROR;
    }
    if( eType!=SQLITE_NULL ){
      z = (const char *)sqlite3_value_text(v);
      nz = (size_t)sqlite3_value_bytes(v);
      if( z==NULL ) return SQLITE_NOMEM;
    }else if( ring_column_default(cfg, i) ){
      z = ring_column_default(cfg, i);
      nz = strlen(z);
    }
    char zMsg[600];
    if( ring_check_column(cfg, i, z, nz, node->name, node->name_len, zMsg,
                          sizeof(zMsg)) ){
      vtab_error(p, "%s: %s", p->zName, zMsg);
      return eType==SQLITE_NULL ? SQLITE_CONSTRAINT_NOTNULL : SQLITE_ERROR;
    }
    node->columns[i] = z;
    node->column_len[i] = (uint32_t)nz;
  }
  return SQLITE_OK;
}

/*
** Another node already has the name being written. Returns SQLITE_OK if the
** conflict is resolved (OR REPLACE removed the other node), else
** SQLITE_CONSTRAINT (with OR IGNORE, SQLite then skips the row quietly).
*/
static int name_conflict(chash_vtab *p, int64_t idOther, const char *zNode){
  if( sqlite3_vtab_on_conflict(p->t.db)==SQLITE_REPLACE ){
    int rc = store_remove(p->store, idOther);
    return rc==SQLITE_OK ? rc : store_error(p, rc);
  }
  vtab_error(p, "%s: duplicate node: %Q", p->zName, zNode);
  return SQLITE_CONSTRAINT_UNIQUE;
}

/* A write to the column named like the table: INSERT INTO t(t) VALUES
** (spec) alone loads the spec. */
static int pool_write(chash_vtab *p, int bInsert, sqlite3_value **argv){
  int bAlone = bInsert && sqlite3_value_type(argv[2+COLUMN_NODE])==SQLITE_NULL
            && sqlite3_value_type(argv[2+COLUMN_WEIGHT])==SQLITE_NULL;
  unsigned nColumns = ring_columns(&store_info_of(p->store)->config);
  for(unsigned i=0; bAlone && i<nColumns; i++){
    bAlone = sqlite3_value_type(argv[2+COLUMN_EXTRA+i])==SQLITE_NULL;
  }
  if( !bAlone ){
    vtab_error(p, "%s: column %s takes a ring spec, written alone: INSERT "
               "INTO %s(%s) VALUES (spec)", p->zName, p->zName, p->zName,
               p->zName);
    return SQLITE_ERROR;
  }
  char *zErr = NULL;
  int rc = vtab_pool_load(p->conn, p->zName, p->store, argv[2+COLUMN_POOL],
                          &zErr);
  if( zErr ) vtab_error(p, "%s", zErr);
  sqlite3_free(zErr);
  return rc;
}

/*
** xUpdate: argc==1 is DELETE of rowid argv[0]; argv[0] NULL is INSERT;
** otherwise UPDATE of rowid argv[0]. argv[2..6] are node, weight, points,
** share and the hidden column named like the table, then the algorithm's
** columns.
*/
static int update_row(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  chash_vtab *p = (chash_vtab *)pVtab;
  int rc = store_ok(p);
  if( rc!=SQLITE_OK ) return rc;
  if( argc==1 ){
    rc = store_remove(p->store, sqlite3_value_int64(argv[0]));
    return rc==SQLITE_OK ? rc : store_error(p, rc);
  }

  int bInsert = sqlite3_value_type(argv[0])==SQLITE_NULL;
  if( sqlite3_value_type(argv[2+COLUMN_POOL])!=SQLITE_NULL ){
    return pool_write(p, bInsert, argv);
  }
  if( bInsert && sqlite3_value_type(argv[1])!=SQLITE_NULL ){
    vtab_error(p, "%s: the rowid is the node's id and cannot be set", p->zName);
    return SQLITE_ERROR;
  }
  if( !bInsert && sqlite3_value_int64(argv[0])!=sqlite3_value_int64(argv[1]) ){
    vtab_error(p, "%s: the rowid is the node's id and cannot be changed",
               p->zName);
    return SQLITE_ERROR;
  }
  const char *zNode;
  int nNode;
  double w;
  ring_input node;
  memset(&node, 0, sizeof(node));
  rc = readonly_arg(p, argv[2+COLUMN_POINTS], "points");
  if( rc==SQLITE_OK ) rc = readonly_arg(p, argv[2+COLUMN_SHARE], "share");
  if( rc==SQLITE_OK ) rc = node_arg(p, argv[2+COLUMN_NODE], &zNode, &nNode);
  if( rc==SQLITE_OK ) rc = weight_arg(p, argv[2+COLUMN_WEIGHT], bInsert, &w);
  if( rc==SQLITE_OK ){
    node.name = zNode;
    node.name_len = (uint32_t)nNode;
    node.weight = w;
    rc = columns_arg(p, argv, &node);
  }
  if( rc!=SQLITE_OK ) return rc;

  int64_t idOther;
  double wOther;
  rc = store_find_by_name(p->store, zNode, nNode, &idOther, &wOther);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return store_error(p, rc);
  int bExists = rc==SQLITE_ROW;

  if( bInsert ){
    if( bExists && sqlite3_vtab_on_conflict(p->t.db)==SQLITE_REPLACE ){
      /* INSERT OR REPLACE of an existing node: it takes the new weight and
      ** column values. */
      rc = store_change(p->store, idOther, &node);
      *pRowid = idOther;
    }else if( bExists ){
      return name_conflict(p, idOther, zNode);
    }else{
      int64_t id = 0;
      rc = store_add(p->store, &node, &id);
      *pRowid = id;
    }
  }else{
    int64_t id = sqlite3_value_int64(argv[0]);
    if( bExists && idOther!=id ){
      rc = name_conflict(p, idOther, zNode);
      if( rc!=SQLITE_OK ) return rc;
    }
    rc = store_change(p->store, id, &node);
  }
  return rc==SQLITE_OK ? rc : store_error(p, rc);
}

/* xUpdate. Every error of update_row comes with a message; if building
** the message ran out of memory, the error is that. */
static int chash_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                        sqlite3_int64 *pRowid){
  return vtab_result((chash_vtab *)pVtab,
                     update_row(pVtab, argc, argv, pRowid));
}

static int chash_begin(sqlite3_vtab *pVtab){
  (void)pVtab;
  return SQLITE_OK;
}

/* At commit: the transaction's changes become the next version of each
** ring they changed, whatever this table is called now or whether it
** still exists (txn.c says why). Done in xSync because errors from xCommit
** are ignored. */
static int chash_sync(sqlite3_vtab *pVtab){
  chash_vtab *p = (chash_vtab *)pVtab;
  return txn_table_sync(&p->t, p->store);
}

static int chash_rename(sqlite3_vtab *pVtab, const char *zNew){
  chash_vtab *p = (chash_vtab *)pVtab;
  if( store_ok(p)!=SQLITE_OK ) return SQLITE_CORRUPT_VTAB;
  char *zName = sqlite3_mprintf("%s", zNew);
  if( zName==NULL ) return SQLITE_NOMEM;
  store_reset_statements(p->store);
  int rc = txn_renamed(p->t.txn, p->zSchema, p->zName, zNew);
  if( rc!=SQLITE_OK ){
    sqlite3_free(zName);
    return rc;
  }
  rc = store_rename(p->t.db, p->zSchema, p->zName, zNew);
  ring_store *pNew = NULL;
  char *zErr = NULL;
  if( rc==SQLITE_OK ){
    rc = store_open(p->t.db, p->zSchema, zNew, p->t.txn, &pNew, &zErr);
  }
  if( rc!=SQLITE_OK ){
    vtab_error(p, "%s: cannot rename: %s", p->zName,
               zErr ? zErr : sqlite3_errmsg(p->t.db));
    sqlite3_free(zErr);
    sqlite3_free(zName);
    return rc;
  }
  store_close(p->store);
  p->store = pNew;
  sqlite3_free(p->zName);
  p->zName = zName;
  return SQLITE_OK;
}

static int chash_shadow_name(const char *zSuffix){
  return store_is_shadow_suffix(zSuffix);
}

/*
** xIntegrity (SQLite 3.44 and later): PRAGMA integrity_check and
** quick_check report what ch_check does, headed by the ring's name, as
** R*Tree reports its own. quick_check (mFlags 1) does not build the
** versions. Neither reports what the algorithm says of a ring that is
** whole (a live Redis map's uncovered slots): that is no damage.
*/
static int chash_integrity(sqlite3_vtab *pVtab, const char *zSchema,
                           const char *zTabName, int mFlags, char **pzErr){
  chash_vtab *p = (chash_vtab *)pVtab;
  char *zReport = NULL;
  int rc = check_ring(p->t.db, zSchema, zTabName, mFlags & 1, 0, &zReport);
  if( rc==SQLITE_OK && zReport ){
    *pzErr = sqlite3_mprintf("In chash ring '%q.%q':\n%z", zSchema, zTabName,
                             zReport);
    if( *pzErr==NULL ) rc = SQLITE_NOMEM;
  }
  return rc;
}

/* The methods of every version of the module, from xCreate on. */
#define CHASH_MODULE_METHODS \
  chash_create, chash_connect, chash_best_index, chash_disconnect, \
  chash_destroy, chash_open, chash_close, chash_filter, chash_next, \
  chash_eof, chash_column, chash_rowid, chash_update, chash_begin, \
  chash_sync, txn_table_commit, txn_table_rollback, \
  NULL /* xFindFunction */, chash_rename, txn_table_savepoint, \
  txn_table_savepoint /* xRelease */, txn_table_rollback_to, \
  chash_shadow_name

/* For SQLite before 3.44, which knows the module up to version 3. */
static const sqlite3_module chash_module_v3 = { 3, CHASH_MODULE_METHODS };

/*
** Version 4 adds xIntegrity, right after xShadowName. Built with an
** sqlite3.h older than 3.44 (Debian 12 has 3.40), whose sqlite3_module
** ends at xShadowName, the member is added behind it here, where SQLite
** 3.44 and later read it.
*/
#if SQLITE_VERSION_NUMBER>=3044000
static const sqlite3_module chash_module_v4 = {
  4, CHASH_MODULE_METHODS, chash_integrity
};
#define CHASH_MODULE_V4 (&chash_module_v4)
#else
static const struct {
  sqlite3_module base;
  int (*xIntegrity)(sqlite3_vtab *, const char *, const char *, int, char **);
} chash_module_v4 = { { 4, CHASH_MODULE_METHODS }, chash_integrity };
#define CHASH_MODULE_V4 (&chash_module_v4.base)
#endif

int vtab_register(sqlite3 *db, chash_conn *conn){
  if( conn==NULL ){
    sqlite3_create_module_v2(db, "chash_txn", NULL, NULL, NULL);
    return sqlite3_create_module_v2(db, "chash", NULL, NULL, NULL);
  }
  chash_txn *txn = txn_new(conn);
  if( txn==NULL ) return SQLITE_NOMEM;
  /* An SQLite before 3.44 does not read version 4's member: give it the
  ** module it knows. */
  const sqlite3_module *pModule = sqlite3_libversion_number()>=3044000
                                ? CHASH_MODULE_V4 : &chash_module_v3;
  int rc = sqlite3_create_module_v2(db, "chash", pModule, txn, txn_release);
  if( rc==SQLITE_OK ) rc = txn_register(db, txn);
  return rc;
}

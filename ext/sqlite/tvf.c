/*
** tvf.c: what the table-valued functions share (see tvf.h for how they
** work): the virtual table object, the base cursor, argument planning,
** argument and node columns, errors, and tvf_register, which registers
** the five functions:
**
**   SELECT * FROM ch_points('shards');          every point, in ring order
**   SELECT * FROM ch_arcs('shards');            the hash space, cut into arcs
**   SELECT sum(share) FROM ch_diff('shards@1', 'shards');  fraction that moves
**   SELECT * FROM ch_replicas('user:42', 3);    preference list of a key
**   SELECT * FROM ch_history('shards');         the change log
**
** Each lives in its own file: tvf_points.c (ch_points, ch_arcs),
** tvf_diff.c, tvf_replicas.c, tvf_history.c.
*/
#include <string.h>

#include "tvf.h"

void tvf_cursor_clear(tvf_cursor *c){
  for(int i=0; i<TVF_MAX_ARGS; i++){
    sqlite3_value_free(c->aArg[i]);
    c->aArg[i] = NULL;
  }
  if( c->xClear ) c->xClear(c);       /* before the ring it may point into */
  ring_release(c->ring);
  c->ring = NULL;
  c->iRow = 1;
  c->bEof = 1;
}

int tvf_ring(tvf_cursor *c, const char *zFunc, sqlite3_value *pSpec,
             ring **ppRing, spec_table *pWhere){
  tvf_vtab *p = (tvf_vtab *)c->base.pVtab;
  char *zErr = NULL;
  int rc = spec_ring_value(p->conn, pSpec, zFunc, ppRing, pWhere, &zErr);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    /* spec_ring_value words every error; none: out of memory. */
    rc = zErr ? tvf_error(c, rc, "%s", zErr) : SQLITE_NOMEM;
  }
  sqlite3_free(zErr);
  return rc;
}

int tvf_cursor_start(tvf_cursor *c, const char *zFunc, int nArg,
                     sqlite3_value **argv, int iSpec, spec_table *pWhere){
  tvf_cursor_clear(c);
  for(int i=0; i<nArg; i++){
    c->aArg[i] = sqlite3_value_dup(argv[i]);
    if( c->aArg[i]==NULL ) return SQLITE_NOMEM;
  }
  int rc = tvf_ring(c, zFunc, iSpec>=0 ? argv[iSpec] : NULL, &c->ring, pWhere);
  if( rc==SQLITE_OK ) c->top = ring_space_top(c->ring);
  return rc;
}

void tvf_arg_column(tvf_cursor *c, sqlite3_context *ctx, int i){
  if( c->aArg[i] ) sqlite3_result_value(ctx, c->aArg[i]);
}

int64_t tvf_node_arg(const ring *r, sqlite3_value *v){
  const char *z = (const char *)sqlite3_value_text(v);
  if( z==NULL ) return -1;
  return ring_find_node(r, z, (size_t)sqlite3_value_bytes(v));
}

void tvf_node_result(sqlite3_context *ctx, const ring *r, uint32_t i){
  if( i==RING_UNOWNED ) return;              /* NULL: no node */
  sqlite3_result_text(ctx, r->nodes[i].name, (int)r->nodes[i].name_len,
                      SQLITE_TRANSIENT);
}

int tvf_plan_args(sqlite3_index_info *pInfo, const int *aArgCol, int nArg,
                  int nRequired, int iNodeCol){
  /* The constraint used per argument, and the node's last. */
  int aUse[TVF_MAX_ARGS+1] = {-1, -1, -1, -1};
  int aUnusable[TVF_MAX_ARGS] = {0, 0, 0};
  const int iNode = TVF_MAX_ARGS;
  for(int i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    for(int a=0; a<nArg; a++){
      if( pC->iColumn!=aArgCol[a] ) continue;
      if( pC->usable ) aUse[a] = i; else aUnusable[a] = 1;
    }
    /* node = ? is matched bytewise, so only under the BINARY collation */
    if( pC->iColumn==iNodeCol && pC->usable
     && sqlite3_stricmp(sqlite3_vtab_collation(pInfo, i), "BINARY")==0 ){
      aUse[iNode] = i;
    }
  }
  /* An argument given from a table not yet scanned (a join): this plan
  ** would run without it, so it is impossible. */
  for(int a=0; a<nArg; a++){
    if( aUse[a]<0 && aUnusable[a] ) return SQLITE_CONSTRAINT;
  }
  int nArgv = 0;
  pInfo->idxNum = 0;
  for(int a=0; a<=iNode; a++){
    if( aUse[a]<0 ) continue;
    pInfo->aConstraintUsage[aUse[a]].argvIndex = ++nArgv;
    pInfo->aConstraintUsage[aUse[a]].omit = 1;
    pInfo->idxNum |= a==iNode ? TVF_HAS_NODE : TVF_HAS_ARG(a);
  }
  pInfo->estimatedCost = aUse[iNode]>=0 ? 100.0 : 10000.0;
  pInfo->estimatedRows = aUse[iNode]>=0 ? 100 : 10000;
  for(int a=0; a<nRequired; a++){
    if( aUse[a]<0 ) pInfo->estimatedCost = 1e300;
  }
  return SQLITE_OK;
}

int tvf_connect(sqlite3 *db, void *pAux, const char *zSchema,
                sqlite3_vtab **ppVtab){
  int rc = sqlite3_declare_vtab(db, zSchema);
  if( rc!=SQLITE_OK ) return rc;
  tvf_vtab *p = sqlite3_malloc64(sizeof(*p));
  if( p==NULL ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->conn = pAux;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *ppVtab = &p->base;
  return SQLITE_OK;
}

int tvf_disconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

int tvf_open(sqlite3_vtab *pVtab, size_t nCursor, void (*xClear)(tvf_cursor *),
             sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  tvf_cursor *c = sqlite3_malloc64(nCursor);
  if( c==NULL ) return SQLITE_NOMEM;
  memset(c, 0, nCursor);
  c->xClear = xClear;
  c->bEof = 1;
  *ppCursor = &c->base;
  return SQLITE_OK;
}

int tvf_close(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  tvf_cursor_clear(c);
  sqlite3_free(c);
  return SQLITE_OK;
}

int tvf_eof(sqlite3_vtab_cursor *pCursor){
  return ((tvf_cursor *)pCursor)->bEof;
}

int tvf_rowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((tvf_cursor *)pCursor)->iRow;
  return SQLITE_OK;
}

int tvf_register(sqlite3 *db, chash_conn *conn){
  static const struct {
    const char *zName;
    const sqlite3_module *pModule;
  } aModule[] = {
    { "ch_points",   &tvf_points_module },
    { "ch_arcs",     &tvf_arcs_module },
    { "ch_diff",     &tvf_diff_module },
    { "ch_replicas", &tvf_replicas_module },
    { "ch_history",  &tvf_history_module },
  };
  for(size_t i=0; i<sizeof(aModule)/sizeof(aModule[0]); i++){
    int rc = conn==NULL
      ? sqlite3_create_module_v2(db, aModule[i].zName, NULL, NULL, NULL)
      : sqlite3_create_module_v2(db, aModule[i].zName, aModule[i].pModule,
                                 conn_retain(conn), conn_release);
    if( rc!=SQLITE_OK && conn ) return rc;
  }
  return SQLITE_OK;
}

/*
** vtab_pool.c: a whole ring spec loaded into a ring table, through the
** hidden column named like the table (FTS5's idiom):
**
**   INSERT INTO pool(pool) VALUES (ch_config('nginx', readfile('a.conf')));
**
** The table's nodes become exactly the spec's, in the spec's order, with
** its weights and column values, as one more change of the current
** transaction (so one new version when it commits): nodes the spec lacks
** leave, nodes whose weight or column values differ are changed, the
** spec's new nodes join in its order. Join
** order places keys for some algorithms (jump, the routers), so where the
** nodes the table keeps are not in the spec's order, the first one out of
** place and those after it leave and join again in the spec's order.
**
** The spec's algorithm and options must be the table's: otherwise the
** error shows the CREATE VIRTUAL TABLE whose table the spec fits.
*/
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sqlite_layer.h"

/* "CREATE VIRTUAL TABLE "name" USING chash(algorithm=..., ...)" for cfg. */
static char *pool_create_statement(const char *zName, const ring_config *cfg){
  config_pool p;
  memset(&p, 0, sizeof(p));
  config_options_of(cfg, &p);
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "CREATE VIRTUAL TABLE \"%w\" USING chash(algorithm=%s",
                      zName, p.algorithm);
  for(int i=0; i<p.n_options; i++){
    if( p.options[i].integer ){
      sqlite3_str_appendf(s, ", %s=%s", p.options[i].key, p.options[i].value);
    }else{
      sqlite3_str_appendf(s, ", %s=%Q", p.options[i].key, p.options[i].value);
    }
  }
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

/* A node of the table as it is: id, and its name, weight and column
** values (copies, in one allocation with the name). */
typedef struct pool_node {
  int64_t id;
  ring_input input;
  int64_t in_spec;          /* its index in the spec ring's nodes, or -1 */
} pool_node;

/* spec's node as a ring_input, for the store. */
static ring_input pool_input(const ring_node *node, unsigned nColumns){
  ring_input x;
  memset(&x, 0, sizeof(x));
  x.name = node->name;
  x.name_len = node->name_len;
  x.weight = node->weight;
  for(unsigned i=0; i<nColumns; i++){
    x.columns[i] = node->columns[i];
    x.column_len[i] = node->column_len[i];
  }
  return x;
}

/* Does the table's node a differ from the spec's node b in weight or in a
** column value? */
static int pool_node_differs(const pool_node *a, const ring_node *b,
                             unsigned nColumns){
  if( a->input.weight!=b->weight ) return 1;
  for(unsigned i=0; i<nColumns; i++){
    const char *x = a->input.columns[i], *y = b->columns[i];
    if( (x==NULL)!=(y==NULL) ) return 1;
    if( x && (a->input.column_len[i]!=b->column_len[i]
              || memcmp(x, y, b->column_len[i])!=0) ){
      return 1;
    }
  }
  return 0;
}

/* Join order of the spec ring's nodes, for qsort. */
static int pool_by_join(const void *a, const void *b){
  uint32_t x = (*(const ring_node *const *)a)->join;
  uint32_t y = (*(const ring_node *const *)b)->join;
  return (x>y) - (x<y);
}

/* The table's current nodes, in join order, into *paNode (*pn). */
static int pool_read_nodes(ring_store *st, const ring *r, pool_node **paNode,
                           int *pn){
  unsigned nColumns = ring_columns(&r->config);
  sqlite3_stmt *pStmt = NULL;
  int rc = store_scan(st, STORE_SCAN_ALL, NULL, &pStmt);
  pool_node *a = NULL;
  int n = 0;
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    pool_node *aNew = sqlite3_realloc64(a, sizeof(*a)*(size_t)(n+1));
    if( aNew==NULL ){ rc = SQLITE_NOMEM; break; }
    a = aNew;
    /* The name (column 1) and the values (3 on), each with a NUL, back to
    ** back. */
    sqlite3_int64 nText = 0;
    for(unsigned i=0; i<1+nColumns; i++){
      nText += sqlite3_column_bytes(pStmt, i ? 2+(int)i : 1) + 1;
    }
    char *zText = sqlite3_malloc64(nText);
    if( zText==NULL ){ rc = SQLITE_NOMEM; break; }
    zText[0] = 0;
    pool_node *x = &a[n++];
    memset(x, 0, sizeof(*x));
    x->id = sqlite3_column_int64(pStmt, 0);
    x->input.weight = sqlite3_column_double(pStmt, 2);
    for(unsigned i=0; i<1+nColumns; i++){
      int iCol = i ? 2+(int)i : 1;
      const char *z = (const char *)sqlite3_column_text(pStmt, iCol);
      int nz = sqlite3_column_bytes(pStmt, iCol);
      if( z==NULL && sqlite3_column_type(pStmt, iCol)!=SQLITE_NULL ){
        rc = SQLITE_NOMEM;
      }
      if( z==NULL ){
        if( i==0 ) x->input.name = zText++;   /* freed with the node */
        continue;
      }
      memcpy(zText, z, (size_t)nz);
      zText[nz] = 0;
      if( i==0 ){
        x->input.name = zText;
        x->input.name_len = (uint32_t)nz;
      }else{
        x->input.columns[i-1] = zText;
        x->input.column_len[i-1] = (uint32_t)nz;
      }
      zText += nz + 1;
    }
    x->in_spec = ring_find_node(r, x->input.name, x->input.name_len);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_reset(pStmt);
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  *paNode = a;
  *pn = n;
  return rc;
}

/* Make the table's nodes those of ring r (same options). */
static int pool_apply(ring_store *st, const ring *r){
  unsigned nColumns = ring_columns(&r->config);
  pool_node *aTable = NULL;
  int nTable = 0;
  const ring_node **aSpec = sqlite3_malloc64(sizeof(ring_node *)*(r->n_nodes+1));
  int rc = aSpec ? pool_read_nodes(st, r, &aTable, &nTable) : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    for(uint32_t i=0; i<r->n_nodes; i++) aSpec[i] = &r->nodes[i];
    qsort(aSpec, r->n_nodes, sizeof(aSpec[0]), pool_by_join);
    /* Kept: the table's nodes that are in the spec, as long as they come
    ** in the spec's order from its first node on. */
    uint32_t nKept = 0;
    for(int i=0; i<nTable && rc==SQLITE_OK; i++){
      int bKeep = aTable[i].in_spec>=0 && nKept<r->n_nodes
               && aSpec[nKept]==&r->nodes[aTable[i].in_spec];
      if( !bKeep ){
        rc = store_remove(st, aTable[i].id);
      }else{
        if( pool_node_differs(&aTable[i], aSpec[nKept], nColumns) ){
          ring_input x = pool_input(aSpec[nKept], nColumns);
          rc = store_change(st, aTable[i].id, &x);
        }
        nKept++;
      }
    }
    for(uint32_t i=nKept; i<r->n_nodes && rc==SQLITE_OK; i++){
      int64_t id;
      ring_input x = pool_input(aSpec[i], nColumns);
      rc = store_add(st, &x, &id);
    }
  }
  for(int i=0; i<nTable; i++) sqlite3_free((char *)aTable[i].input.name);
  sqlite3_free(aTable);
  sqlite3_free(aSpec);
  return rc;
}

int vtab_pool_load(chash_conn *conn, const char *zName, ring_store *st,
                   sqlite3_value *pSpec, char **pzErr){
  ring *r = NULL;
  *pzErr = NULL;
  int rc = spec_ring_value(conn, pSpec, zName, &r, NULL, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  const ring_config *cfg = &store_info_of(st)->config;
  if( !options_same(&r->config, cfg) ){
    char *zTable = pool_create_statement(zName, cfg);
    char *zSpec = pool_create_statement(zName, &r->config);
    if( zTable && zSpec ){
      *pzErr = sqlite3_mprintf("%s: the spec's algorithm and options are not "
                               "the table's (%s); the table the spec fits "
                               "is: %s", zName, zTable, zSpec);
    }
    sqlite3_free(zTable);
    sqlite3_free(zSpec);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }else{
    rc = pool_apply(st, r);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && store_errmsg(st) ){
      *pzErr = sqlite3_mprintf("%s", store_errmsg(st));
    }
  }
  ring_release(r);
  return rc;
}

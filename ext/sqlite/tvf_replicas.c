/*
** tvf_replicas.c: ch_replicas, a key's preference list (tvf.h says how the
** table-valued functions work).
**
**   SELECT * FROM ch_replicas('user:42', 3);    preference list of a key
**
** ch_replicas(key, n [, ring]): rank, node: a preference list of n
** distinct nodes (fewer if the ring has fewer), rank 1 being ch_locate's
** answer. It is the core's replica walk (geometry.h):
**   rings with units   the owners of the units met walking on from the
**                      key's unit, wrapping around, each node once: points
**                      clockwise from the key's position, the table slots
**                      after the key's slot, the buckets after the owner's
**   rings without      the nodes by falling score for the key (the
**                      descriptor's score; ties: name order), the natural
**                      preference list of a scoring algorithm
** xBestIndex contract: key and n required, ring optional; argv = key, n
** (REPLICAS_HAS_KEY, REPLICAS_HAS_N), then the ring if REPLICAS_HAS_RING.
** Rows are made one at a time, so LIMIT stops the walk early without help.
*/
#include "key_value.h"
#include "tvf.h"

#define REPLICAS_RANK 0
#define REPLICAS_NODE 1
#define REPLICAS_KEY  2
#define REPLICAS_N    3
#define REPLICAS_RING 4

/* idxNum bits (see the top of the file). */
#define REPLICAS_HAS_KEY  TVF_HAS_ARG(0)
#define REPLICAS_HAS_N    TVF_HAS_ARG(1)
#define REPLICAS_HAS_RING TVF_HAS_ARG(2)

typedef struct replicas_cursor {
  tvf_cursor base;         /* base class, must be first */
  replica_walk walk;
  int64_t nWant;           /* n */
  uint32_t iOwner;         /* node of the current row */
} replicas_cursor;

static void replicas_clear(tvf_cursor *pBase){
  replica_walk_free(&((replicas_cursor *)pBase)->walk);
}

static int replicas_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { REPLICAS_KEY, REPLICAS_N, REPLICAS_RING };
  (void)pVtab;
  int rc = tvf_plan_args(pInfo, aArg, 3, 2, -1);
  if( (pInfo->idxNum & (REPLICAS_HAS_KEY|REPLICAS_HAS_N))
      ==(REPLICAS_HAS_KEY|REPLICAS_HAS_N) ){
    pInfo->estimatedRows = 3;
    pInfo->estimatedCost = 10.0;
  }
  return rc;
}

/* The next node of the list, or the end (n listed, or the walk's end). */
static void replicas_settle(replicas_cursor *c){
  int64_t owner = c->base.iRow>c->nWant ? -1 : replica_walk_next(&c->walk);
  c->base.bEof = owner<0;
  if( owner>=0 ) c->iOwner = (uint32_t)owner;
}

static int replicas_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                           const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  replicas_cursor *c = (replicas_cursor *)pCursor;
  if( (idxNum & (REPLICAS_HAS_KEY|REPLICAS_HAS_N))
      !=(REPLICAS_HAS_KEY|REPLICAS_HAS_N) ){
    tvf_cursor_clear(&c->base);
    return tvf_error(&c->base, SQLITE_ERROR, "ch_replicas: needs arguments: "
                     "ch_replicas(key, n [, ring])");
  }
  int bRing = (idxNum & REPLICAS_HAS_RING)!=0;
  int rc = tvf_cursor_start(&c->base, "ch_replicas", bRing ? 3 : 2, argv,
                            bRing ? 2 : -1, NULL);
  if( rc!=SQLITE_OK ) return rc;
  const ring *r = c->base.ring;
  /* n given as a whole REAL (a JavaScript number) is an integer too. */
  if( !value_whole_int64(argv[1], &c->nWant) ){
    return tvf_error(&c->base, SQLITE_ERROR, "ch_replicas: n must be an "
                     "integer");
  }
  if( c->nWant<1 ){
    return tvf_error(&c->base, SQLITE_ERROR, "ch_replicas: n must be at "
                     "least 1");
  }
  /* A NULL key has no replicas, on any ring (an empty one too). */
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return SQLITE_OK;
  if( r->n_nodes==0 ){
    tvf_vtab *p = (tvf_vtab *)c->base.base.pVtab;
    char *zRing = spec_display(p->conn, bRing ? argv[2] : NULL);
    if( zRing==NULL ) return SQLITE_NOMEM;
    rc = tvf_error(&c->base, SQLITE_ERROR, "ch_replicas: ring %s is empty "
                   "(it has no nodes)", zRing);
    sqlite3_free(zRing);
    return rc;
  }
  /* A key the ring's hash cannot place (identity: not an integer) has no
  ** replicas either. */
  if( r->config.algo->key_score ){
    char zInt[24];
    const void *pKey;
    size_t nKey;
    if( !key_bytes(argv[0], zInt, &pKey, &nKey) ) return SQLITE_OK;
    rc = replica_walk_start_key(&c->walk, r, pKey, nKey);
  }else{
    uint64_t pos, low;
    if( !value_position(argv[0], &r->keys, &pos, &low) ) return SQLITE_OK;
    rc = replica_walk_start(&c->walk, r, pos, low);
  }
  if( rc!=RING_OK ) return SQLITE_NOMEM;
  replicas_settle(c);
  return SQLITE_OK;
}

static int replicas_next(sqlite3_vtab_cursor *pCursor){
  replicas_cursor *c = (replicas_cursor *)pCursor;
  c->base.iRow++;
  replicas_settle(c);
  return SQLITE_OK;
}

static int replicas_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  replicas_cursor *c = (replicas_cursor *)pCursor;
  switch( iCol ){
    case REPLICAS_RANK: sqlite3_result_int64(ctx, c->base.iRow); break;
    case REPLICAS_NODE: tvf_node_result(ctx, c->base.ring, c->iOwner); break;
    default:            tvf_arg_column(&c->base, ctx, iCol-REPLICAS_KEY); break;
  }
  return SQLITE_OK;
}

TVF_MODULE(tvf_replicas,
  "CREATE TABLE x(rank INTEGER, node TEXT, key HIDDEN, n HIDDEN, ring HIDDEN)",
  replicas_cursor, replicas_clear, replicas_best_index, replicas_filter,
  replicas_next, replicas_column)

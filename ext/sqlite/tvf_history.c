/*
** tvf_history.c: ch_history, a ring table's change log (tvf.h says how the
** table-valued functions work).
**
**   SELECT * FROM ch_history('shards');         the change log
**
** ch_history(ring): epoch, op, node, weight, old, columns: the ring
** table's log,
** oldest first, up to the spec's version ('shards@3': versions 1 to 3;
** 'shards': everything, including this connection's uncommitted changes,
** logged with the next epoch). A rename row has the new name in node and
** the previous one in old (NULL in other rows); columns is a JSON object
** of the node's column values after the change (algorithms with columns,
** such as cassandra's tokens, dc and rack; else NULL), whose changes are
** op update. The same for every algorithm; an inline JSON ring has no table, so no history (an error).
** xBestIndex contract: HISTORY_HAS_RING, the ring spec is in argv (else
** the default ring).
*/
#include "tvf.h"

#define HISTORY_EPOCH  0
#define HISTORY_OP     1
#define HISTORY_NODE   2
#define HISTORY_WEIGHT 3
#define HISTORY_OLD    4
#define HISTORY_COLUMNS 5
#define HISTORY_RING   6

/* idxNum bits (see the top of the file). */
#define HISTORY_HAS_RING TVF_HAS_ARG(0)

typedef struct history_cursor {
  tvf_cursor base;         /* base class, must be first */
  sqlite3_stmt *pStmt;     /* over the log (store_history) */
} history_cursor;

static void history_clear(tvf_cursor *pBase){
  history_cursor *c = (history_cursor *)pBase;
  sqlite3_finalize(c->pStmt);
  c->pStmt = NULL;
}

static int history_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { HISTORY_RING };
  (void)pVtab;
  return tvf_plan_args(pInfo, aArg, 1, 0, -1);
}

static int history_next(sqlite3_vtab_cursor *pCursor){
  history_cursor *c = (history_cursor *)pCursor;
  c->base.iRow++;
  int rc = sqlite3_step(c->pStmt);
  c->base.bEof = rc!=SQLITE_ROW;
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  return tvf_error(&c->base, rc, "ch_history: %s",
                   sqlite3_errmsg(sqlite3_db_handle(c->pStmt)));
}

static int history_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                          const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  history_cursor *c = (history_cursor *)pCursor;
  spec_table where;
  int bRing = (idxNum & HISTORY_HAS_RING)!=0;
  int rc = tvf_cursor_start(&c->base, "ch_history", bRing, argv,
                            bRing ? 0 : -1, &where);
  if( rc!=SQLITE_OK ) return rc;
  if( where.zSchema==NULL ){
    return tvf_error(&c->base, SQLITE_ERROR, "ch_history: an inline JSON "
                     "ring has no history");
  }
  tvf_vtab *p = (tvf_vtab *)c->base.base.pVtab;
  rc = store_history(p->db, where.zSchema, where.zName, &c->base.ring->config,
                     c->base.ring->version, &c->pStmt);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    rc = tvf_error(&c->base, rc, "ch_history: %s", sqlite3_errmsg(p->db));
  }
  spec_table_free(&where);
  if( rc!=SQLITE_OK ) return rc;
  c->base.iRow = 0;                 /* history_next counts the first row */
  return history_next(pCursor);
}

static int history_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                          int iCol){
  history_cursor *c = (history_cursor *)pCursor;
  if( iCol==HISTORY_RING ){
    tvf_arg_column(&c->base, ctx, 0);
  }else{
    sqlite3_result_value(ctx, sqlite3_column_value(c->pStmt, iCol));
  }
  return SQLITE_OK;
}

TVF_MODULE(tvf_history,
  "CREATE TABLE x(epoch INTEGER, op TEXT, node TEXT, weight REAL, old TEXT,"
  " columns TEXT, ring HIDDEN)",
  history_cursor, history_clear, history_best_index, history_filter,
  history_next, history_column)

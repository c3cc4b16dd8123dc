/*
** tvf_diff.c: ch_diff, the positions that change owner between two rings
** (tvf.h says how the table-valued functions work).
**
**   SELECT sum(share) FROM ch_diff('shards@1', 'shards');  fraction that moves
**
** ch_diff(old, new): start, end, src, dst, share: the positions whose
** owner is src under ring old and dst under new. The sum of share is the
** exact fraction of positions (so of keys, for a uniform hash) that move.
** Both rings must place keys at the same positions (the same key rule,
** keys.h), else there is no common position to compare. How a ring is compared is ring_diff_kind's
** answer (geometry.h), from its descriptor:
**   points rings (either algorithm with either): the two point arrays are
**     merged into runs (diff_point_runs); a run is the longest stretch of
**     moved positions with one src and dst, also across the wrap (that run
**     comes last). A run across the drop of signed values is two rows.
**   slots rings (either with either): position p's owner depends only on
**     p mod its period (the slot count), so the owners of both depend only
**     on p mod L = lcm of the periods. Each residue class c whose owner
**     changes is one row, with NULL start and end and its exact share
**     (floor((2^b-1-c)/L) + 1 positions). Rows are made one at a time, for
**     L up to DIFF_MAX_RESIDUES.
**   a descriptor with no_diff: an error that says why; ch_moved counts
**     keys instead.
** xBestIndex contract: both specs are required; argv = old, new
** (DIFF_HAS_OLD and DIFF_HAS_NEW set).
*/
#include <stdio.h>
#include <string.h>

#include "tvf.h"

#define DIFF_START 0
#define DIFF_END   1
#define DIFF_SRC   2
#define DIFF_DST   3
#define DIFF_SHARE 4
#define DIFF_OLD   5
#define DIFF_NEW   6

/* idxNum bits (see the top of the file). */
#define DIFF_HAS_OLD TVF_HAS_ARG(0)
#define DIFF_HAS_NEW TVF_HAS_ARG(1)

typedef struct diff_cursor {
  tvf_cursor base;         /* base class, must be first; base.ring is old */
  ring *ringNew;           /* the new ring (one reference) */
  int64_t *aMap;           /* old node index -> new node index, or -1 */
  int bResidue;            /* rows are residue classes, else runs */
  /* points rings: */
  diff_run *aRun;          /* every run */
  uint32_t nRun, iRun;     /* how many, and the current one */
  pos_range aRange[2];     /* the current run's rows */
  int nRange, iRange;
  /* slots rings: */
  residue_diff residues;   /* the walk over residue classes */
} diff_cursor;

static void diff_clear(tvf_cursor *pBase){
  diff_cursor *c = (diff_cursor *)pBase;
  ring_release(c->ringNew);
  c->ringNew = NULL;
  ring_dealloc(c->aMap);
  c->aMap = NULL;
  ring_dealloc(c->aRun);
  c->aRun = NULL;
  c->nRun = 0;
  c->bResidue = 0;
}

static int diff_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { DIFF_OLD, DIFF_NEW };
  (void)pVtab;
  return tvf_plan_args(pInfo, aArg, 2, 2, -1);
}

/* Cut run iRun (if there is one) into its rows. */
static void diff_settle_run(diff_cursor *c){
  c->base.bEof = c->iRun>=c->nRun;
  if( c->base.bEof ) return;
  const diff_run *run = &c->aRun[c->iRun];
  c->nRange = range_rows(c->base.top, run->s, run->e, c->aRange);
  c->iRange = 0;
}

/* Slots rings: start the walk over residue classes. */
static int diff_residues(diff_cursor *c){
  residue_diff *d = &c->residues;
  residue_diff_start(d, c->base.ring, c->ringNew, c->aMap);
  if( d->period>DIFF_MAX_RESIDUES ){
    return tvf_error(&c->base, SQLITE_ERROR, "ch_diff: the owners of these "
                     "rings repeat every lcm(%llu, %llu) = %llu positions "
                     "(node counts or table sizes), more than the %d residue "
                     "classes this exact count walks; count moved keys with "
                     "ch_moved",
                     (unsigned long long)ring_residue_period(c->base.ring),
                     (unsigned long long)ring_residue_period(c->ringNew),
                     (unsigned long long)d->period, DIFF_MAX_RESIDUES);
  }
  c->bResidue = 1;
  c->base.bEof = !residue_diff_seek(d);
  return SQLITE_OK;
}

/* Can rings a and b (of the specs in argv) be compared position by
** position? */
static int diff_check(diff_cursor *c, const ring *a, const ring *b,
                      sqlite3_value **argv){
  if( a->n_nodes==0 || b->n_nodes==0 ){
    int bOld = a->n_nodes==0;
    tvf_vtab *p = (tvf_vtab *)c->base.base.pVtab;
    char *zRing = spec_display(p->conn, argv[bOld ? 0 : 1]);
    if( zRing==NULL ) return SQLITE_NOMEM;
    int rc = tvf_error(&c->base, SQLITE_ERROR, "ch_diff: the %s ring %s is "
                       "empty (it has no nodes)", bOld ? "old" : "new", zRing);
    sqlite3_free(zRing);
    return rc;
  }
  for(int i=0; i<2; i++){
    const ring *x = i==0 ? a : b;
    if( ring_diff_kind(x)==DIFF_NOT_EXACT ){
      return tvf_error(&c->base, SQLITE_ERROR, "ch_diff: algorithm %s has no "
                       "exact diff (%s); count moved keys with ch_moved",
                       x->config.algo->name, x->config.algo->no_diff);
    }
  }
  if( ring_diff_kind(a)!=ring_diff_kind(b) ){
    return tvf_error(&c->base, SQLITE_ERROR, "ch_diff: cannot compare "
                     "algorithm %s with algorithm %s; count moved keys with "
                     "ch_moved", a->config.algo->name, b->config.algo->name);
  }
  if( !ring_keys_same(&a->keys, &b->keys) ){
    char zWhy[400];
    return tvf_error(&c->base, SQLITE_ERROR, "ch_diff: %s, so positions cannot "
                     "be compared; count moved keys with ch_moved",
                     ring_keys_differ(&a->keys, &b->keys, zWhy, sizeof(zWhy)));
  }
  return SQLITE_OK;
}

static int diff_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  diff_cursor *c = (diff_cursor *)pCursor;
  if( (idxNum & (DIFF_HAS_OLD|DIFF_HAS_NEW))!=(DIFF_HAS_OLD|DIFF_HAS_NEW) ){
    tvf_cursor_clear(&c->base);
    return tvf_error(&c->base, SQLITE_ERROR, "ch_diff: needs arguments: "
                     "ch_diff(old, new)");
  }
  int rc = tvf_cursor_start(&c->base, "ch_diff", 2, argv, 0, NULL);
  if( rc==SQLITE_OK ) rc = tvf_ring(&c->base, "ch_diff", argv[1], &c->ringNew,
                                    NULL);
  if( rc==SQLITE_OK ) rc = diff_check(c, c->base.ring, c->ringNew, argv);
  if( rc!=SQLITE_OK ) return rc;
  c->aMap = diff_node_map(c->base.ring, c->ringNew);
  if( c->aMap==NULL ) return SQLITE_NOMEM;
  if( ring_diff_kind(c->base.ring)==DIFF_BY_RESIDUES ) return diff_residues(c);
  if( diff_point_runs(c->base.ring, c->ringNew, c->aMap, &c->aRun,
                      &c->nRun)!=RING_OK ){
    return SQLITE_NOMEM;
  }
  c->iRun = 0;
  diff_settle_run(c);
  return SQLITE_OK;
}

static int diff_next(sqlite3_vtab_cursor *pCursor){
  diff_cursor *c = (diff_cursor *)pCursor;
  c->base.iRow++;
  if( c->bResidue ){
    c->residues.c++;
    c->base.bEof = !residue_diff_seek(&c->residues);
  }else if( ++c->iRange>=c->nRange ){     /* else a run's second row */
    c->iRun++;
    diff_settle_run(c);
  }
  return SQLITE_OK;
}

static int diff_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  diff_cursor *c = (diff_cursor *)pCursor;
  const residue_diff *d = &c->residues;
  const pos_range *g = c->bResidue ? NULL : &c->aRange[c->iRange];
  const diff_run *run = c->bResidue ? NULL : &c->aRun[c->iRun];
  switch( iCol ){
    case DIFF_START: if( g ) sqlite3_result_int64(ctx, g->start); break;
    case DIFF_END:   if( g ) sqlite3_result_int64(ctx, g->end); break;
    case DIFF_SRC:
      tvf_node_result(ctx, c->base.ring, run ? run->src : d->src);
      break;
    case DIFF_DST:
      tvf_node_result(ctx, c->ringNew, run ? run->dst : d->dst);
      break;
    case DIFF_SHARE:
      sqlite3_result_double(ctx, g ? range_share(c->base.top, g)
                                   : class_share(c->base.top, d->c, d->period));
      break;
    default:         tvf_arg_column(&c->base, ctx, iCol-DIFF_OLD); break;
  }
  return SQLITE_OK;
}

TVF_MODULE(tvf_diff,
  "CREATE TABLE x(start INTEGER, \"end\" INTEGER, src TEXT, dst TEXT,"
  " share REAL, old HIDDEN, new HIDDEN)",
  diff_cursor, diff_clear, diff_best_index, diff_filter, diff_next,
  diff_column)

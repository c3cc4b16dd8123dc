/*
** tvf_points.c: ch_points and ch_arcs, a ring's units as rows (tvf.h says
** how the table-valued functions work).
**
**   SELECT * FROM ch_points('shards');          every point, in ring order
**   SELECT * FROM ch_arcs('shards');            the hash space, cut into arcs
**
** Both list the units of a ring (ring.h): the points of a points ring, the
** table slots of a slots ring. An algorithm whose descriptor has no_units,
** or whose ring has no units at all, is an error that says why.
**
** ch_points(ring): token, node, replica.
**   points  token = the point (ring_point_token: its position, or
**           r->tokens where positions are the ends of the points' arcs,
**           under a lookup rule other than the successor's), replica =
**           its replica number (r->replicas, or the descriptor's
**           node_positions numbers a node's points)
**   slots   one row per table slot: token = the slot s, replica = what
**           the descriptor's slot_replica says (the step of the owner's
**           preference list that took s), NULL without one
** For example (each algorithm's file says what its points are): ring's
** point i of node N is at hash("N#i"), replica i (1, 2, ...); ketama's
** are the words w of MD5("N-i"), replica 4i+w (0, 1, ...); maglev's slot
** s shows the j at which s came in its owner's preference list.
**
** ch_arcs(ring): start, end, node, share.
**   points  point k owns the arc (position k-1, position k]; point 0 the
**           arc that wraps around (point_arc). (Where the ring has
**           tokens, the positions are the ends of the points' arcs, say
**           half-way to the next point.) Points at equal positions
**           give the later ones empty arcs, which are left out. An arc
**           across the drop of signed values is two rows (range_rows).
**   slots   slot s owns the positions p with p mod table = s, which are no
**           range: start and end are NULL, share is exact (class_share:
**           floor((2^b-1-s) / table) + 1 positions, as the ring table's
**           share column counts). Rows in slot order, as ch_points; slots
**           past 2^b - 1 (a table larger than a 15-bit space) own nothing
**           and are left out.
**
** xBestIndex contract (idxNum bits), both:
**   POINTS_HAS_RING    argv has the ring spec (else the default ring)
**   TVF_HAS_NODE       argv's last value is a node name: only its rows
** and ch_points only:
**   POINTS_WANT_REPLICA the replica column is read (so replica numbers are
**                      computed)
** LIMIT needs no help: rows are produced one at a time, and a replica
** number costs the hashing of its node's points only, once per node.
*/
#include <string.h>

#include "tvf.h"

#define POINTS_TOKEN   0
#define POINTS_NODE    1
#define POINTS_REPLICA 2
#define POINTS_RING    3

#define ARCS_START  0
#define ARCS_END    1
#define ARCS_NODE   2
#define ARCS_SHARE  3
#define ARCS_RING   4

/* idxNum bits (see the top of the file). */
#define POINTS_HAS_RING     TVF_HAS_ARG(0)
#define POINTS_WANT_REPLICA TVF_FIRST_OWN_BIT

/* A listing of units: ch_points' cursor, and the start of ch_arcs'. */
typedef struct units_cursor {
  tvf_cursor base;         /* base class, must be first */
  uint32_t k;              /* the current unit (point or slot) */
  uint32_t nUnit;          /* units to walk: all, or 0 for an unknown node */
  int64_t iNode;           /* only units of this node, or -1 for all */
  int bPoints;             /* units are points, else slots */
  point_replicas replicas; /* ch_points: replica numbers, if planned for */
} units_cursor;

typedef struct arcs_cursor {
  units_cursor units;      /* base class, must be first */
  pos_range aRange[2];     /* the current arc's rows */
  int nRange, iRange;
} arcs_cursor;

static void units_clear(tvf_cursor *pBase){
  units_cursor *c = (units_cursor *)pBase;
  point_replicas_free(&c->replicas);
}

/*
** Start a listing: the ring, its algorithm checked, and the node of a
** "node = ?" constraint (argv's last value). zWhat is "points" or "arcs",
** for the error.
*/
static int units_start(units_cursor *c, const char *zFunc, const char *zWhat,
                       int idxNum, int argc, sqlite3_value **argv){
  int bRing = (idxNum & POINTS_HAS_RING)!=0;
  int rc = tvf_cursor_start(&c->base, zFunc, bRing, argv, bRing ? 0 : -1,
                            NULL);
  if( rc!=SQLITE_OK ) return rc;
  const ring *r = c->base.ring;
  const ring_algo *a = r->config.algo;
  if( !ring_lists_units(r) ){
    /* An inline ring (no version) has no table to point to. */
    return tvf_error(&c->base, SQLITE_ERROR, "%s: algorithm %s has no %s "
                     "(%s); %s", zFunc, a->name, zWhat,
                     a->no_units ? a->no_units : "it lists no units",
                     r->version<0 ? "the share column of a chash table with "
                                    "these nodes gives their shares"
                                  : "its nodes' shares are in the ring "
                                    "table's share column");
  }
  c->bPoints = ring_has_points(r);
  c->nUnit = ring_units(r);
  c->iNode = idxNum & TVF_HAS_NODE ? tvf_node_arg(r, argv[argc-1]) : -1;
  if( (idxNum & TVF_HAS_NODE) && c->iNode<0 ) c->nUnit = 0; /* no such node */
  c->k = 0;
  return SQLITE_OK;
}

/* Is unit k one to list: owned by the wanted node? */
static int unit_wanted(const units_cursor *c, uint32_t k){
  return c->iNode<0 || ring_unit_owner(c->base.ring, k)==c->iNode;
}

/* ----------------------------------------------------------- ch_points */

static int points_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { POINTS_RING };
  (void)pVtab;
  int rc = tvf_plan_args(pInfo, aArg, 1, 0, POINTS_NODE);
  if( pInfo->colUsed & ((sqlite3_uint64)1<<POINTS_REPLICA) ){
    pInfo->idxNum |= POINTS_WANT_REPLICA;
  }
  return rc;
}

/* Skip to the next unit of the wanted node (from c->k on). */
static void points_settle(units_cursor *c){
  /* A unit no node owns (a slot map's gap) is no node's point; ch_arcs
  ** lists it with node NULL. */
  while( c->k<c->nUnit && (!unit_wanted(c, c->k)
         || ring_unit_owner(c->base.ring, c->k)==RING_UNOWNED) ) c->k++;
  c->base.bEof = c->k>=c->nUnit;
}

static int points_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  units_cursor *c = (units_cursor *)pCursor;
  int rc = units_start(c, "ch_points", "points", idxNum, argc, argv);
  if( rc!=SQLITE_OK ) return rc;
  if( (idxNum & POINTS_WANT_REPLICA) && c->bPoints ){
    if( point_replicas_init(&c->replicas, c->base.ring)!=RING_OK ){
      return SQLITE_NOMEM;
    }
  }
  points_settle(c);
  return SQLITE_OK;
}

static int points_next(sqlite3_vtab_cursor *pCursor){
  units_cursor *c = (units_cursor *)pCursor;
  c->k++;
  c->base.iRow++;
  points_settle(c);
  return SQLITE_OK;
}

static int points_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                         int iCol){
  units_cursor *c = (units_cursor *)pCursor;
  const ring *r = c->base.ring;
  switch( iCol ){
    case POINTS_TOKEN:
      sqlite3_result_int64(ctx, c->bPoints ? (int64_t)ring_point_token(r, c->k)
                                           : c->k);
      break;
    case POINTS_NODE:
      tvf_node_result(ctx, r, ring_unit_owner(r, c->k));
      break;
    case POINTS_REPLICA: {
      if( !c->bPoints ){
        if( r->config.algo->slot_replica ){
          sqlite3_result_int64(ctx, (int64_t)r->config.algo->slot_replica(r, c->k));
        }
        break;
      }
      uint32_t i = 0;
      if( c->replicas.aNode==NULL ) break;  /* not planned for: never read */
      if( point_replica(&c->replicas, c->k, &i)!=RING_OK ) return SQLITE_NOMEM;
      sqlite3_result_int64(ctx, i);
      break;
    }
    default:
      tvf_arg_column(&c->base, ctx, 0);
      break;
  }
  return SQLITE_OK;
}

TVF_MODULE(tvf_points,
  "CREATE TABLE x(token INTEGER, node TEXT, replica INTEGER, ring HIDDEN)",
  units_cursor, units_clear, points_best_index, points_filter, points_next,
  points_column)

/* ------------------------------------------------------------- ch_arcs */

static int arcs_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { ARCS_RING };
  (void)pVtab;
  return tvf_plan_args(pInfo, aArg, 1, 0, ARCS_NODE);
}

/* Find the next non-empty arc from unit k on, and cut it into rows. */
static void arcs_settle(arcs_cursor *c){
  units_cursor *u = &c->units;
  const ring *r = u->base.ring;
  for(; u->k<u->nUnit; u->k++){
    if( !unit_wanted(u, u->k) ) continue;
    c->iRange = 0;
    u->base.bEof = 0;
    if( !u->bPoints ){                           /* a slot: one row */
      if( u->k>u->base.top ) break;              /* holds no position */
      c->nRange = 1;
      return;
    }
    uint64_t s, e;
    if( !point_arc(r, u->base.top, u->k, &s, &e) ) continue;  /* empty arc */
    c->nRange = range_rows(u->base.top, s, e, c->aRange);
    return;
  }
  u->base.bEof = 1;
}

static int arcs_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  arcs_cursor *c = (arcs_cursor *)pCursor;
  int rc = units_start(&c->units, "ch_arcs", "arcs", idxNum, argc, argv);
  if( rc!=SQLITE_OK ) return rc;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_next(sqlite3_vtab_cursor *pCursor){
  arcs_cursor *c = (arcs_cursor *)pCursor;
  c->units.base.iRow++;
  if( ++c->iRange<c->nRange ) return SQLITE_OK;    /* an arc's second row */
  c->units.k++;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  arcs_cursor *c = (arcs_cursor *)pCursor;
  const units_cursor *u = &c->units;
  const ring *r = u->base.ring;
  const pos_range *g = &c->aRange[c->iRange];
  switch( iCol ){
    case ARCS_START: if( u->bPoints ) sqlite3_result_int64(ctx, g->start); break;
    case ARCS_END:   if( u->bPoints ) sqlite3_result_int64(ctx, g->end); break;
    case ARCS_NODE:  tvf_node_result(ctx, r, ring_unit_owner(r, u->k)); break;
    case ARCS_SHARE:
      sqlite3_result_double(ctx, u->bPoints
                            ? range_share(u->base.top, g)
                            : class_share(u->base.top, u->k, ring_units(r)));
      break;
    default:         tvf_arg_column(&c->units.base, ctx, 0); break;
  }
  return SQLITE_OK;
}

TVF_MODULE(tvf_arcs,
  "CREATE TABLE x(start INTEGER, \"end\" INTEGER, node TEXT, share REAL,"
  " ring HIDDEN)",
  arcs_cursor, units_clear, arcs_best_index, arcs_filter, arcs_next,
  arcs_column)

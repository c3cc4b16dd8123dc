/*
** tvf.c: the table-valued functions of chash, the ring as rows.
**
**   SELECT * FROM ch_points('shards');          every point, in ring order
**   SELECT * FROM ch_arcs('shards');            the hash space, cut into arcs
**   SELECT sum(share) FROM ch_diff('shards@1', 'shards');  fraction that moves
**   SELECT * FROM ch_replicas('user:42', 3);    preference list of a key
**   SELECT * FROM ch_history('shards');         the change log
**
** HOW IT WORKS (as SQLite's series.c): each function is an eponymous-only
** virtual table (xCreate is NULL, so CREATE VIRTUAL TABLE ... USING ch_arcs
** fails) whose arguments are HIDDEN columns. ch_arcs('x') is
** "SELECT ... FROM ch_arcs WHERE ring='x'": xBestIndex takes the equality
** constraints on the hidden columns and hands their values to xFilter.
** A ring argument that is left out means the default ring (the only one),
** as everywhere in chash.
**
** Positions. token, start and end are positions of the ring's key hash,
** in [0, 2^b) with b = hash_space_bits (64, 32 or 15), shown as signed
** integers: the same numbers ch_hash gives. Rows come in ring order
** (unsigned positions). Every arc row has start <= end as signed integers:
** an arc across the place where signed values drop (2^63-1 -> -2^63 in a
** 64-bit space, 2^b-1 -> 0 in a smaller one) is given as two rows, so
** "ch_hash(k) BETWEEN start AND end" finds exactly one row per key. Shares
** are exact fractions of the 2^b positions.
**
** Algorithms (docs/analysis.md has the table):
**   ring, ketama   points and arcs; ch_diff merges the points of the two
**                  rings (also one ring with one ketama ring); ch_replicas
**                  walks the points clockwise.
**   maglev         the table slots are its points (token = slot) and arcs
**                  (slot s: the positions p with p mod table = s, so start
**                  and end are NULL); ch_diff per residue class, as modn;
**                  ch_replicas walks the slots after the key's slot.
**   modn           no points or arcs (an error says why); ch_diff per
**                  residue class of lcm(n, m); ch_replicas takes the nodes
**                  after the owner in name order.
**   jump           no points, arcs or exact diff (errors say why);
**                  ch_replicas takes the buckets after the owner's.
**   rendezvous     no points, arcs or exact diff; ch_replicas lists the
**                  nodes by falling score.
** ch_replicas walks "units" (ring.h) for all but rendezvous.
**
** Flags: SQLITE_VTAB_INNOCUOUS. They only read ring specs and the rings'
** shadow tables on their own connection, with no side effects.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_layer.h"

/* One virtual table object serves every use of a function. */
typedef struct tvf_vtab {
  sqlite3_vtab base;       /* base class, must be first */
  sqlite3 *db;
  chash_conn *conn;        /* for ring specs */
} tvf_vtab;

/* A point's replica number, while ch_points computes them (see below). */
typedef struct replica_entry {
  uint64_t pos;
  uint32_t replica;
} replica_entry;

/* One row's signed bounds of positions. */
typedef struct pos_range {
  int64_t start, end;
} pos_range;

/* A row of ch_diff between rings with points, computed in xFilter. */
typedef struct diff_row {
  pos_range range;
  uint32_t src, dst;       /* node index in the old and the new ring */
} diff_row;

/* A node and its score for a key (ch_replicas, rendezvous). */
typedef struct scored_node {
  double score;
  uint32_t node;
} scored_node;

/* One cursor type for all five functions; each uses its own fields. */
typedef struct tvf_cursor {
  sqlite3_vtab_cursor base; /* base class, must be first */
  int64_t iRow;            /* rowid: 1, 2, ... */
  int bEof;
  sqlite3_value *aArg[3];  /* the arguments, for the hidden columns */
  ring *ring;              /* the ring listed (one reference) */
  ring *ringNew;           /* ch_diff: the new ring (one reference) */
  uint64_t top;            /* the largest position of the ring's hash */
  /* ch_points, ch_arcs: */
  uint32_t k;              /* current unit (point or slot) */
  uint32_t nUnit;
  int64_t iNode;           /* only units of this node, or -1 for all */
  pos_range aRange[2];     /* ch_arcs: the current arc's rows */
  int nRange, iRange;
  replica_entry **aReplica;/* ch_points: per node, its points sorted */
  /* ch_diff: */
  int64_t *aMap;           /* old node index -> new node index, or -1 */
  diff_row *aDiff;         /* rings with points: every row */
  int64_t nDiff;
  int bResidue;            /* modn, maglev: rows are residue classes */
  uint64_t period, nClass; /* residues: lcm, and the classes walked */
  uint64_t r;              /* residues: the current class */
  uint32_t src, dst;       /* residues: the current row's owners */
  /* ch_replicas: */
  uint64_t *aSeen;         /* bit set: nodes already listed */
  scored_node *aScored;    /* rendezvous: nodes by falling score */
  uint32_t k0;             /* the key's unit */
  uint32_t nStep;          /* units walked past k0 */
  int64_t nWant;           /* n */
  uint32_t iOwner;         /* node of the current row */
  /* ch_history: */
  sqlite3_stmt *pStmt;
} tvf_cursor;

/* ----------------------------------------------------------- shared */

static void cursor_reset(tvf_cursor *c){
  for(int i=0; i<3; i++){
    sqlite3_value_free(c->aArg[i]);
    c->aArg[i] = NULL;
  }
  if( c->aReplica ){
    for(uint32_t n=0; n<c->ring->n_nodes; n++) sqlite3_free(c->aReplica[n]);
    sqlite3_free(c->aReplica);
    c->aReplica = NULL;
  }
  ring_release(c->ring);
  ring_release(c->ringNew);
  c->ring = c->ringNew = NULL;
  sqlite3_free(c->aMap);
  c->aMap = NULL;
  sqlite3_free(c->aDiff);
  c->aDiff = NULL;
  c->nDiff = 0;
  c->bResidue = 0;
  sqlite3_free(c->aSeen);
  c->aSeen = NULL;
  sqlite3_free(c->aScored);
  c->aScored = NULL;
  sqlite3_finalize(c->pStmt);
  c->pStmt = NULL;
  c->iRow = 1;
  c->bEof = 1;
}

/* Set the table's error message; returns rc (SQLITE_ERROR if it is OK). */
static int tvf_error(tvf_cursor *c, int rc, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_free(c->base.pVtab->zErrMsg);
  c->base.pVtab->zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  /* An error that cannot be worded is an out-of-memory error. */
  if( c->base.pVtab->zErrMsg==NULL ) return SQLITE_NOMEM;
  return rc==SQLITE_OK ? SQLITE_ERROR : rc;
}

/* The largest position of r's key hash: positions are [0, 2^b). */
static uint64_t space_top(const ring *r){
  unsigned b = hash_space_bits(r->config.hash);
  return b==64 ? UINT64_MAX : ((uint64_t)1<<b) - 1;
}

/* The share of n+1 positions in the space [0, top] (n+1 may be 2^64). */
static double count_share(uint64_t top, uint64_t n){
  return (double)(((long double)n + 1.0L) / ((long double)top + 1.0L));
}

/* The share of the positions of a row (start <= end). */
static double range_share(uint64_t top, const pos_range *g){
  return count_share(top, (uint64_t)g->end - (uint64_t)g->start);
}

/* The share of the residue class r mod L (r <= top): the positions
** r, r+L, ... up to top. */
static double class_share(uint64_t top, uint64_t r, uint64_t L){
  return count_share(top, (top - r) / L);
}

/*
** The rows of the cyclic range [s, e] of positions in [0, top]: one, or
** two if it runs across the place where signed values drop (2^63-1 ->
** -2^63 in a 64-bit space, top -> 0 in a smaller one). Returns the count.
*/
static int range_rows(uint64_t top, uint64_t s, uint64_t e, pos_range *a){
  uint64_t brk = top==UINT64_MAX ? (uint64_t)INT64_MAX : top;
  if( ((brk - s) & top) < ((e - s) & top) ){
    a[0].start = (int64_t)s;
    a[0].end = (int64_t)brk;
    a[1].start = (int64_t)((brk + 1) & top);
    a[1].end = (int64_t)e;
    return 2;
  }
  a[0].start = (int64_t)s;
  a[0].end = (int64_t)e;
  return 1;
}

/* Keep copies of the nArg arguments (the first values of argv), then
** resolve the ring spec argument argv[iSpec] (iSpec<0: omitted). */
static int cursor_start(tvf_cursor *c, const char *zFunc, int nArg,
                        sqlite3_value **argv, int iSpec, ring **ppRing,
                        spec_table *pWhere){
  cursor_reset(c);
  for(int i=0; i<nArg; i++){
    c->aArg[i] = sqlite3_value_dup(argv[i]);
    if( c->aArg[i]==NULL ) return SQLITE_NOMEM;
  }
  tvf_vtab *p = (tvf_vtab *)c->base.pVtab;
  char *zErr = NULL;
  int rc = spec_ring_value(p->conn, iSpec>=0 ? argv[iSpec] : NULL, zFunc,
                           ppRing, pWhere, &zErr);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    /* spec_ring_value words every error; none: out of memory. */
    rc = zErr ? tvf_error(c, rc, "%s", zErr) : SQLITE_NOMEM;
  }
  sqlite3_free(zErr);
  if( rc==SQLITE_OK ) c->top = space_top(*ppRing);
  return rc;
}

static int tvf_connect(sqlite3 *db, void *pAux, const char *zSchema,
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

static int tvf_disconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int tvf_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  tvf_cursor *c = sqlite3_malloc64(sizeof(*c));
  if( c==NULL ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->bEof = 1;
  *ppCursor = &c->base;
  return SQLITE_OK;
}

static int tvf_close(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  cursor_reset(c);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int tvf_eof(sqlite3_vtab_cursor *pCursor){
  return ((tvf_cursor *)pCursor)->bEof;
}

static int tvf_rowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((tvf_cursor *)pCursor)->iRow;
  return SQLITE_OK;
}

/* A hidden argument column: the value given to xFilter. */
static void arg_column(tvf_cursor *c, sqlite3_context *ctx, int i){
  if( c->aArg[i] ) sqlite3_result_value(ctx, c->aArg[i]);
}

/*
** The argument planning of every function. aArgCol[] lists the hidden
** argument columns in argv order, nRequired of them first and required.
** Equality constraints on them become argv[] of xFilter, in that order,
** and idxNum bit i says whether argument i is there. An argument with only
** unusable constraints is SQLITE_CONSTRAINT (this plan cannot work, try
** another). A plan without a required argument gets a prohibitive cost, and
** xFilter reports it if it is chosen all the same: SQLite also plans OR
** terms alone, without the argument constraints. When iNodeCol>=0, an
** equality on that column is passed last and sets bit 0x10.
*/
static int plan_args(sqlite3_index_info *pInfo, const int *aArgCol, int nArg,
                     int nRequired, int iNodeCol){
  int aUse[4] = {-1, -1, -1, -1};     /* constraint per argument, node last */
  int aUnusable[3] = {0, 0, 0};
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
      aUse[3] = i;
    }
  }
  /* An argument given from a table not yet scanned (a join): this plan
  ** would run without it, so it is impossible. */
  for(int a=0; a<nArg; a++){
    if( aUse[a]<0 && aUnusable[a] ) return SQLITE_CONSTRAINT;
  }
  int nArgv = 0;
  pInfo->idxNum = 0;
  for(int a=0; a<4; a++){
    if( aUse[a]<0 ) continue;
    pInfo->aConstraintUsage[aUse[a]].argvIndex = ++nArgv;
    pInfo->aConstraintUsage[aUse[a]].omit = 1;
    pInfo->idxNum |= a==3 ? 0x10 : 1<<a;
  }
  pInfo->estimatedCost = aUse[3]>=0 ? 100.0 : 10000.0;
  pInfo->estimatedRows = aUse[3]>=0 ? 100 : 10000;
  for(int a=0; a<nRequired; a++){
    if( aUse[a]<0 ) pInfo->estimatedCost = 1e300;
  }
  return SQLITE_OK;
}

/* The node named by a "node = ?" value on r: its index, or -1. */
static int64_t node_arg(const ring *r, sqlite3_value *v){
  const char *z = (const char *)sqlite3_value_text(v);
  if( z==NULL ) return -1;
  return ring_find_node(r, z, (size_t)sqlite3_value_bytes(v));
}

/* Result a node name of ring r. The ring lives as long as the cursor and a
** result may outlive that, so SQLite copies the name. */
static void node_result(sqlite3_context *ctx, const ring *r, uint32_t i){
  sqlite3_result_text(ctx, r->nodes[i].name, (int)r->nodes[i].name_len,
                      SQLITE_TRANSIENT);
}

/* ------------------------------------------------- ch_points, ch_arcs */

/*
** Both list the units of a ring (ring.h): the points of ring and ketama,
** the table slots of maglev. modn, jump and rendezvous have none.
** Start a listing: the ring, its algorithm checked, and the node of a
** "node = ?" constraint (idxNum 0x10, argv's last value). zWhat is
** "points" or "arcs", for the error.
*/
static int units_start(tvf_cursor *c, const char *zFunc, const char *zWhat,
                       int idxNum, int argc, sqlite3_value **argv){
  int rc = cursor_start(c, zFunc, idxNum & 0x01, argv,
                        idxNum & 0x01 ? 0 : -1, &c->ring, NULL);
  if( rc!=SQLITE_OK ) return rc;
  const ring *r = c->ring;
  const ring_algo *a = r->config.algo;
  if( !ring_lists_units(r) ){
    return tvf_error(c, SQLITE_ERROR, "%s: algorithm %s has no %s (%s); its "
                     "nodes' shares are in the ring table's share column",
                     zFunc, a->name, zWhat,
                     a->no_units ? a->no_units : "it lists no units");
  }
  c->nUnit = ring_units(r);
  c->iNode = idxNum & 0x10 ? node_arg(r, argv[argc-1]) : -1;
  if( (idxNum & 0x10) && c->iNode<0 ) c->nUnit = 0;       /* no such node */
  c->k = 0;
  return SQLITE_OK;
}

/* Is unit k one to list: owned by the wanted node? */
static int unit_wanted(const tvf_cursor *c, uint32_t k){
  return c->iNode<0 || ring_unit_owner(c->ring, k)==c->iNode;
}

/*
** ch_points(ring): token, node, replica. xBestIndex contract (idxNum):
**   0x01  argv has the ring spec (else the default ring)
**   0x10  argv's last value is a node name: only that node's points
**   0x20  the replica column is read (so replica numbers are computed)
** LIMIT needs no help: rows are produced one at a time, and a replica
** number costs the hashing of its node's labels only, once per node.
**   ring    token = hash("N#i"), replica = i (1, 2, ...)
**   ketama  token = word w of MD5("N-i"), replica = 4i+w (0, 1, ...)
**   haproxy token = full_hash(id*4096 + i), replica = i (0, 1, ...), in
**           the order of the points' arcs (algo.h, point_token)
**   maglev  one row per table slot: token = the slot s, replica = the j
**           at which s comes in the node's preference list
**           (offset + skip*j) mod table
*/
#define POINTS_TOKEN   0
#define POINTS_NODE    1
#define POINTS_REPLICA 2
#define POINTS_RING    3

static int points_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { POINTS_RING };
  (void)pVtab;
  int rc = plan_args(pInfo, aArg, 1, 0, POINTS_NODE);
  if( pInfo->colUsed & ((sqlite3_uint64)1<<POINTS_REPLICA) ) pInfo->idxNum |= 0x20;
  return rc;
}

/* Skip to the next unit of the wanted node (from c->k on). */
static void points_settle(tvf_cursor *c){
  while( c->k<c->nUnit && !unit_wanted(c, c->k) ) c->k++;
  c->bEof = c->k>=c->nUnit;
}

static int points_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  int rc = units_start(c, "ch_points", "points", idxNum, argc, argv);
  if( rc!=SQLITE_OK ) return rc;
  if( (idxNum & 0x20) && ring_has_points(c->ring) ){
    size_t n = sizeof(replica_entry *)*(c->ring->n_nodes+1);
    c->aReplica = sqlite3_malloc64(n);
    if( c->aReplica==NULL ) return SQLITE_NOMEM;
    memset(c->aReplica, 0, n);
  }
  points_settle(c);
  return SQLITE_OK;
}

static int points_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->k++;
  c->iRow++;
  points_settle(c);
  return SQLITE_OK;
}

static int replica_compare(const void *pa, const void *pb){
  const replica_entry *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  return (a->replica>b->replica) - (a->replica<b->replica);
}

/* The token of point k (algo.h, point_token). */
static uint64_t tvf_point_token(const ring *r, uint32_t k){
  const ring_algo *a = r->config.algo;
  return a->point_token ? a->point_token(r, k) : r->positions[k];
}

/*
** The replica number of point k. The ring keeps no replica numbers
** (memory), so node N's positions are made again (ring_node_positions)
** and sorted like the ring sorts them; equal positions of one node are in
** replica order on the ring (ring and ketama alike), so the d-th of them
** on the ring is the d-th here.
*/
static int point_replica(tvf_cursor *c, uint32_t k, uint32_t *pReplica){
  const ring *r = c->ring;
  uint32_t n = r->owners[k];
  uint32_t nPoint = r->nodes[n].points;
  if( c->aReplica[n]==NULL ){
    replica_entry *a = sqlite3_malloc64(sizeof(replica_entry)*nPoint);
    uint64_t *aPos = sqlite3_malloc64(sizeof(uint64_t)*nPoint);
    if( a==NULL || aPos==NULL ){
      sqlite3_free(a);
      sqlite3_free(aPos);
      return SQLITE_NOMEM;
    }
    uint32_t first = r->config.algo->node_positions(r, n, aPos);
    for(uint32_t j=0; j<nPoint; j++){
      a[j].pos = aPos[j];
      a[j].replica = first + j;
    }
    sqlite3_free(aPos);
    qsort(a, nPoint, sizeof(replica_entry), replica_compare);
    c->aReplica[n] = a;
  }
  const replica_entry *a = c->aReplica[n];
  uint64_t pos = tvf_point_token(r, k);
  uint32_t lo = 0, hi = nPoint;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( a[mid].pos<pos ) lo = mid+1; else hi = mid;
  }
  for(uint32_t j=k; j>0 && tvf_point_token(r, j-1)==pos; j--){
    if( r->owners[j-1]==n ) lo++;
  }
  *pReplica = a[lo].replica;
  return SQLITE_OK;
}

static int points_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                         int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  const ring *r = c->ring;
  int bPoints = ring_has_points(r);
  switch( iCol ){
    case POINTS_TOKEN:
      sqlite3_result_int64(ctx, bPoints ? (int64_t)tvf_point_token(r, c->k) : c->k);
      break;
    case POINTS_NODE:
      node_result(ctx, r, ring_unit_owner(r, c->k));
      break;
    case POINTS_REPLICA: {
      if( !bPoints ){
        if( r->config.algo->slot_replica ){
          sqlite3_result_int64(ctx, (int64_t)r->config.algo->slot_replica(r, c->k));
        }
        break;
      }
      uint32_t i = 0;
      if( c->aReplica==NULL ) break;    /* not planned for: never read */
      int rc = point_replica(c, c->k, &i);
      if( rc!=SQLITE_OK ) return rc;
      sqlite3_result_int64(ctx, i);
      break;
    }
    default:
      arg_column(c, ctx, 0);
      break;
  }
  return SQLITE_OK;
}

/*
** ch_arcs(ring): start, end, node, share.
**   ring, ketama, haproxy: point k owns the arc (position k-1, position k];
**     point 0 the arc that wraps around. (haproxy's positions are the ends
**     of its points' arcs: half-way to the next point.) Points at equal positions give the later
**     ones empty arcs, which are left out.
**   maglev: slot s owns the positions p with p mod table = s, which are no
**     range: start and end are NULL, share is exact (floor((2^b-1-s) /
**     table) + 1 positions, as the ring table's share column counts).
**     Rows in slot order, as ch_points; slots past 2^b - 1 (a table larger
**     than a 15-bit space) own nothing and are left out.
** xBestIndex contract (idxNum): 0x01 the ring spec is in argv (else the
** default ring); 0x10 argv's last value is a node: only its arcs.
*/
#define ARCS_START  0
#define ARCS_END    1
#define ARCS_NODE   2
#define ARCS_SHARE  3
#define ARCS_RING   4

static int arcs_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { ARCS_RING };
  (void)pVtab;
  return plan_args(pInfo, aArg, 1, 0, ARCS_NODE);
}

/* Find the next non-empty arc from unit c->k on, and cut it into rows. */
static void arcs_settle(tvf_cursor *c){
  const ring *r = c->ring;
  const uint64_t *pos = r->positions;
  for(; c->k<c->nUnit; c->k++){
    if( !unit_wanted(c, c->k) ) continue;
    c->iRange = 0;
    c->bEof = 0;
    if( !ring_has_points(r) ){                            /* a slot */
      if( c->k>c->top ) break;
      c->nRange = 1;
      return;
    }
    uint64_t prev = pos[c->k==0 ? r->n_points-1 : c->k-1];
    if( c->k>0 && prev==pos[c->k] ) continue;             /* empty arc */
    c->nRange = range_rows(c->top, (prev + 1) & c->top, pos[c->k], c->aRange);
    return;
  }
  c->bEof = 1;
}

static int arcs_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  int rc = units_start(c, "ch_arcs", "arcs", idxNum, argc, argv);
  if( rc!=SQLITE_OK ) return rc;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  if( ++c->iRange<c->nRange ) return SQLITE_OK;    /* an arc's second row */
  c->k++;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  const ring *r = c->ring;
  const pos_range *g = &c->aRange[c->iRange];
  int bPoints = ring_has_points(r);
  switch( iCol ){
    case ARCS_START: if( bPoints ) sqlite3_result_int64(ctx, g->start); break;
    case ARCS_END:   if( bPoints ) sqlite3_result_int64(ctx, g->end); break;
    case ARCS_NODE:  node_result(ctx, r, ring_unit_owner(r, c->k)); break;
    case ARCS_SHARE:
      sqlite3_result_double(ctx, bPoints ? range_share(c->top, g)
                                 : class_share(c->top, c->k, r->n_units));
      break;
    default:         arg_column(c, ctx, 0); break;
  }
  return SQLITE_OK;
}

/* -------------------------------------------------------------- ch_diff */

/*
** ch_diff(old, new): start, end, src, dst, share: the positions whose
** owner is src under ring old and dst under new. The sum of share is the
** exact fraction of positions (so of keys, for a uniform hash) that move.
** Both rings must place keys by the same hash and seed, else there is no
** common position to compare.
**   ring, ketama (either with either): the two point arrays are merged;
**     between consecutive distinct positions the owner in each ring is
**     constant. Neighbouring pieces with the same src and dst are one row,
**     also across the wrap (that row comes last).
**   modn, maglev (either with either): position p's owner depends only on
**     p mod its period (n nodes, or the table size), so the owners of both
**     depend only on p mod L = lcm of the periods. Each residue class r
**     whose owner changes is one row, with NULL start and end and its
**     exact share (floor((2^b-1-r)/L) + 1 positions). Rows are made one at
**     a time, for L up to DIFF_MAX_RESIDUES.
**   jump, rendezvous: an error (why_no_arcs); ch_moved counts keys.
** xBestIndex contract: both specs are required, argv = old, new.
*/
#define DIFF_START 0
#define DIFF_END   1
#define DIFF_SRC   2
#define DIFF_DST   3
#define DIFF_SHARE 4
#define DIFF_OLD   5
#define DIFF_NEW   6

#define DIFF_MAX_RESIDUES 16777216 /* L at most 2^24: any one maglev table */

static int diff_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { DIFF_OLD, DIFF_NEW };
  (void)pVtab;
  return plan_args(pInfo, aArg, 2, 2, -1);
}

/* How ch_diff compares rings of an algorithm. */
enum { DIFF_BY_POINTS, DIFF_BY_RESIDUES, DIFF_NOT_EXACT };

static int diff_method(const ring *r){
  if( r->config.algo->no_diff ) return DIFF_NOT_EXACT;
  return ring_has_points(r) ? DIFF_BY_POINTS : DIFF_BY_RESIDUES;
}

/* Append the rows of the cyclic range [s, e] of positions. */
static int diff_add(tvf_cursor *c, int64_t *pnAlloc, uint64_t s, uint64_t e,
                    uint32_t src, uint32_t dst){
  if( c->nDiff+2>*pnAlloc ){
    int64_t nNew = *pnAlloc ? *pnAlloc*2 : 64;
    diff_row *aNew = sqlite3_realloc64(c->aDiff, sizeof(diff_row)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    c->aDiff = aNew;
    *pnAlloc = nNew;
  }
  pos_range a[2];
  int n = range_rows(c->top, s, e, a);
  for(int i=0; i<n; i++){
    diff_row *d = &c->aDiff[c->nDiff++];
    d->range = a[i];
    d->src = src;
    d->dst = dst;
  }
  return SQLITE_OK;
}

/* For each node of a, its index in b, or -1. */
static int64_t *node_map(const ring *a, const ring *b){
  int64_t *aMap = sqlite3_malloc64(sizeof(int64_t)*(a->n_nodes+1));
  if( aMap==NULL ) return NULL;
  for(uint32_t i=0; i<a->n_nodes; i++){
    aMap[i] = ring_find_node(b, a->nodes[i].name, a->nodes[i].name_len);
  }
  return aMap;
}

/* A run of pieces with one src and dst, as unsigned positions [s, e]. */
typedef struct diff_run {
  uint64_t s, e;
  uint32_t src, dst;
} diff_run;

static int diff_points(tvf_cursor *c){
  const ring *a = c->ring, *b = c->ringNew;
  int64_t nAlloc = 0;
  uint32_t i = 0, j = 0;
  /* Pieces run from after the previous boundary to the next; the first
  ** one wraps around, from after the last position of both rings. */
  uint64_t lastA = a->positions[a->n_points-1];
  uint64_t lastB = b->positions[b->n_points-1];
  uint64_t prevEnd = lastA>lastB ? lastA : lastB;
  int bRun = 0;                         /* is run being extended? */
  diff_run run = {0, 0, 0, 0};
  /* A run that starts with the first piece is held back: the last run may
  ** continue it across the wrap, and then they are one row. */
  int bFirst = 0, bFirstOpen = 0;
  diff_run first = {0, 0, 0, 0};
  while( i<a->n_points || j<b->n_points ){
    /* The next boundary u: the owners of (prevEnd, u] are the first points
    ** at or after u, a[i] and b[j] (point 0 once a ring is passed). */
    uint64_t u;
    if( i==a->n_points ) u = b->positions[j];
    else if( j==b->n_points ) u = a->positions[i];
    else u = a->positions[i]<b->positions[j] ? a->positions[i] : b->positions[j];
    uint32_t src = a->owners[i<a->n_points ? i : 0];
    uint32_t dst = b->owners[j<b->n_points ? j : 0];
    int bMoves = c->aMap[src]!=(int64_t)dst;
    if( bRun && (!bMoves || src!=run.src || dst!=run.dst) ){
      run.e = prevEnd;
      if( bFirstOpen ){
        first = run;
        bFirst = 1;
        bFirstOpen = 0;
      }else{
        int rc = diff_add(c, &nAlloc, run.s, run.e, run.src, run.dst);
        if( rc!=SQLITE_OK ) return rc;
      }
      bRun = 0;
    }
    if( bMoves && !bRun ){
      bRun = 1;
      bFirstOpen = i==0 && j==0;
      run.s = (prevEnd + 1) & c->top;
      run.src = src;
      run.dst = dst;
    }
    prevEnd = u;
    while( i<a->n_points && a->positions[i]==u ) i++;
    while( j<b->n_points && b->positions[j]==u ) j++;
  }
  int rc = SQLITE_OK;
  if( bRun && bFirst && run.src==first.src && run.dst==first.dst ){
    return diff_add(c, &nAlloc, run.s, first.e, run.src, run.dst);
  }
  if( bRun ) rc = diff_add(c, &nAlloc, run.s, prevEnd, run.src, run.dst);
  if( rc==SQLITE_OK && bFirst ){
    rc = diff_add(c, &nAlloc, first.s, first.e, first.src, first.dst);
  }
  return rc;
}

static uint64_t gcd64(uint64_t x, uint64_t y){
  while( y ){ uint64_t t = x % y; x = y; y = t; }
  return x;
}

/* modn, maglev: a position's owner depends on it mod this. */
static uint64_t residue_period(const ring *r){
  return r->n_units;
}

/* Residues: go to the next class, from c->r on, whose owner changes. A
** class r <= top has the positions r, r+L, ..., so position r itself
** tells its owners. */
static void diff_settle_residues(tvf_cursor *c){
  for(; c->r<c->nClass; c->r++){
    c->src = ring_lookup(c->ring, c->r);
    c->dst = ring_lookup(c->ringNew, c->r);
    if( c->aMap[c->src]!=(int64_t)c->dst ){
      c->bEof = 0;
      return;
    }
  }
  c->bEof = 1;
}

static int diff_residues(tvf_cursor *c){
  uint64_t p = residue_period(c->ring), q = residue_period(c->ringNew);
  uint64_t L = p / gcd64(p, q) * q;            /* p, q < 2^25: no overflow */
  if( L>DIFF_MAX_RESIDUES ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: the owners of these rings "
                     "repeat every lcm(%llu, %llu) = %llu positions (node "
                     "counts or table sizes), more than the %d residue classes "
                     "this exact count walks; count moved keys with ch_moved",
                     (unsigned long long)p, (unsigned long long)q,
                     (unsigned long long)L, DIFF_MAX_RESIDUES);
  }
  c->bResidue = 1;
  c->period = L;
  c->nClass = L-1<=c->top ? L : c->top+1;     /* a small space ends first */
  c->r = 0;
  diff_settle_residues(c);
  return SQLITE_OK;
}

static int diff_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  if( (idxNum & 0x03)!=0x03 ){
    cursor_reset(c);
    return tvf_error(c, SQLITE_ERROR, "ch_diff: needs arguments: "
                     "ch_diff(old, new)");
  }
  int rc = cursor_start(c, "ch_diff", 2, argv, 0, &c->ring, NULL);
  if( rc!=SQLITE_OK ) return rc;
  tvf_vtab *p = (tvf_vtab *)c->base.pVtab;
  char *zErr = NULL;
  rc = spec_ring_value(p->conn, argv[1], "ch_diff", &c->ringNew, NULL, &zErr);
  if( rc!=SQLITE_OK ){
    if( rc!=SQLITE_NOMEM ){
      rc = zErr ? tvf_error(c, rc, "%s", zErr) : SQLITE_NOMEM;
    }
    sqlite3_free(zErr);
    return rc;
  }
  const ring *a = c->ring, *b = c->ringNew;
  if( a->n_nodes==0 || b->n_nodes==0 ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: the %s ring is empty (it has "
                     "no nodes)", a->n_nodes==0 ? "old" : "new");
  }
  for(int i=0; i<2; i++){
    const ring *x = i==0 ? a : b;
    if( diff_method(x)==DIFF_NOT_EXACT ){
      return tvf_error(c, SQLITE_ERROR, "ch_diff: algorithm %s has no exact "
                       "diff (%s); count moved keys with ch_moved",
                       x->config.algo->name,
                       x->config.algo->no_diff);
    }
  }
  if( diff_method(a)!=diff_method(b) ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: cannot compare algorithm %s with "
                     "algorithm %s; count moved keys with ch_moved",
                     a->config.algo->name, b->config.algo->name);
  }
  if( a->config.hash!=b->config.hash || a->config.seed!=b->config.seed ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: the rings hash keys "
                     "differently (%s seed %llu, %s seed %llu), so positions "
                     "cannot be compared; count moved keys with ch_moved",
                     hash_name(a->config.hash), (unsigned long long)a->config.seed,
                     hash_name(b->config.hash), (unsigned long long)b->config.seed);
  }
  if( a->config.algo->key_position!=b->config.algo->key_position ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: algorithm %s and algorithm "
                     "%s hash keys differently, so positions cannot be "
                     "compared; count moved keys with ch_moved",
                     a->config.algo->name, b->config.algo->name);
  }
  if( !ring_keys_alike(&a->config, &b->config) ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: the rings hash keys "
                     "differently (avalanche %d, avalanche %d), so positions "
                     "cannot be compared; count moved keys with ch_moved",
                     a->config.avalanche, b->config.avalanche);
  }
  c->aMap = node_map(a, b);
  if( c->aMap==NULL ) return SQLITE_NOMEM;
  if( diff_method(a)==DIFF_BY_RESIDUES ) return diff_residues(c);
  rc = diff_points(c);
  c->k = 0;
  c->bEof = c->nDiff==0;
  return rc;
}

static int diff_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  if( c->bResidue ){
    c->r++;
    diff_settle_residues(c);
  }else{
    c->k++;
    c->bEof = c->k>=c->nDiff;
  }
  return SQLITE_OK;
}

static int diff_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  const diff_row *d = c->bResidue ? NULL : &c->aDiff[c->k];
  switch( iCol ){
    case DIFF_START: if( d ) sqlite3_result_int64(ctx, d->range.start); break;
    case DIFF_END:   if( d ) sqlite3_result_int64(ctx, d->range.end); break;
    case DIFF_SRC:   node_result(ctx, c->ring, d ? d->src : c->src); break;
    case DIFF_DST:   node_result(ctx, c->ringNew, d ? d->dst : c->dst); break;
    case DIFF_SHARE:
      sqlite3_result_double(ctx, d ? range_share(c->top, &d->range)
                                   : class_share(c->top, c->r, c->period));
      break;
    default:         arg_column(c, ctx, iCol-DIFF_OLD); break;
  }
  return SQLITE_OK;
}

/* ---------------------------------------------------------- ch_replicas */

/*
** ch_replicas(key, n [, ring]): rank, node: a preference list of n
** distinct nodes (fewer if the ring has fewer), rank 1 being ch_locate's
** answer. For every algorithm but rendezvous: the owners of the units
** (ring.h) met walking on from the key's unit, wrapping around, each node
** once:
**   ring, ketama  the points clockwise from the key's position
**   maglev        the table slots after the key's slot
**   modn          the nodes after the owner, in name order
**   jump          the buckets after the owner's, in join order
** rendezvous: the nodes by falling score for the key (ties: name order),
** its natural preference list.
** xBestIndex contract: key and n required, ring optional; argv = key, n,
** then ring if idxNum has 0x04. Rows are made one at a time, so LIMIT
** stops the walk early without help.
*/
#define REPLICAS_RANK 0
#define REPLICAS_NODE 1
#define REPLICAS_KEY  2
#define REPLICAS_N    3
#define REPLICAS_RING 4

static int replicas_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { REPLICAS_KEY, REPLICAS_N, REPLICAS_RING };
  (void)pVtab;
  int rc = plan_args(pInfo, aArg, 3, 2, -1);
  if( (pInfo->idxNum & 0x03)==0x03 ){
    pInfo->estimatedRows = 3;
    pInfo->estimatedCost = 10.0;
  }
  return rc;
}

/* Falling score, then name order (the lower index), as rendezvous_lookup
** breaks ties. */
static int scored_compare(const void *pa, const void *pb){
  const scored_node *a = pa, *b = pb;
  if( a->score!=b->score ) return a->score>b->score ? -1 : 1;
  return (a->node>b->node) - (a->node<b->node);
}

/* Walk to the next node not listed yet, or stop. */
static void replicas_settle(tvf_cursor *c){
  const ring *r = c->ring;
  if( c->iRow>c->nWant || c->iRow>r->n_nodes ){
    c->bEof = 1;
    return;
  }
  if( c->aScored ){
    c->iOwner = c->aScored[c->iRow-1].node;
    c->bEof = 0;
    return;
  }
  uint32_t nUnit = ring_units(r);
  for(; c->nStep<nUnit; c->nStep++){
    uint32_t k = c->k0 + c->nStep;
    uint32_t owner = ring_unit_owner(r, k>=nUnit ? k-nUnit : k);
    if( c->aSeen[owner/64] & ((uint64_t)1<<(owner%64)) ) continue;
    c->aSeen[owner/64] |= (uint64_t)1<<(owner%64);
    c->iOwner = owner;
    c->bEof = 0;
    return;
  }
  c->bEof = 1;
}

static int replicas_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                           const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  if( (idxNum & 0x03)!=0x03 ){
    cursor_reset(c);
    return tvf_error(c, SQLITE_ERROR, "ch_replicas: needs arguments: "
                     "ch_replicas(key, n [, ring])");
  }
  int rc = cursor_start(c, "ch_replicas", idxNum & 0x04 ? 3 : 2, argv,
                        idxNum & 0x04 ? 2 : -1, &c->ring, NULL);
  if( rc!=SQLITE_OK ) return rc;
  const ring *r = c->ring;
  if( sqlite3_value_type(argv[1])!=SQLITE_INTEGER ){
    return tvf_error(c, SQLITE_ERROR, "ch_replicas: n must be an integer");
  }
  c->nWant = sqlite3_value_int64(argv[1]);
  if( c->nWant<1 ){
    return tvf_error(c, SQLITE_ERROR, "ch_replicas: n must be at least 1");
  }
  if( r->n_nodes==0 ){
    return tvf_error(c, SQLITE_ERROR, "ch_replicas: the ring is empty (it has "
                     "no nodes)");
  }
  uint64_t pos;
  if( !key_position(argv[0], &r->config, &pos) ) return SQLITE_OK;
  if( r->config.algo->units==RING_UNITS_NONE ){
    c->aScored = sqlite3_malloc64(sizeof(scored_node)*r->n_nodes);
    if( c->aScored==NULL ) return SQLITE_NOMEM;
    for(uint32_t n=0; n<r->n_nodes; n++){
      c->aScored[n].score = r->config.algo->score(r, n, pos);
      c->aScored[n].node = n;
    }
    qsort(c->aScored, r->n_nodes, sizeof(scored_node), scored_compare);
  }else{
    size_t nSeen = sizeof(uint64_t)*(r->n_nodes/64+1);
    c->aSeen = sqlite3_malloc64(nSeen);
    if( c->aSeen==NULL ) return SQLITE_NOMEM;
    memset(c->aSeen, 0, nSeen);
    c->k0 = ring_unit_of(r, pos);
    c->nStep = 0;
  }
  replicas_settle(c);
  return SQLITE_OK;
}

static int replicas_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  replicas_settle(c);
  return SQLITE_OK;
}

static int replicas_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  switch( iCol ){
    case REPLICAS_RANK: sqlite3_result_int64(ctx, c->iRow); break;
    case REPLICAS_NODE: node_result(ctx, c->ring, c->iOwner); break;
    default:            arg_column(c, ctx, iCol-REPLICAS_KEY); break;
  }
  return SQLITE_OK;
}

/* ---------------------------------------------------------- ch_history */

/*
** ch_history(ring): epoch, op, node, weight, old: the ring table's log,
** oldest first, up to the spec's version ('shards@3': versions 1 to 3;
** 'shards': everything, including this connection's uncommitted changes,
** logged with the next epoch). A rename row has the new name in node and
** the previous one in old (NULL in other rows).
** xBestIndex contract (idxNum): 0x01 the ring spec is in argv.
*/
#define HISTORY_EPOCH  0
#define HISTORY_OP     1
#define HISTORY_NODE   2
#define HISTORY_WEIGHT 3
#define HISTORY_OLD    4
#define HISTORY_RING   5

static int history_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { HISTORY_RING };
  (void)pVtab;
  return plan_args(pInfo, aArg, 1, 0, -1);
}

static int history_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  int rc = sqlite3_step(c->pStmt);
  c->bEof = rc!=SQLITE_ROW;
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  return tvf_error(c, rc, "ch_history: %s",
                   sqlite3_errmsg(sqlite3_db_handle(c->pStmt)));
}

static int history_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                          const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  (void)argc;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  spec_table where;
  int rc = cursor_start(c, "ch_history", idxNum & 0x01, argv,
                        idxNum & 0x01 ? 0 : -1, &c->ring, &where);
  if( rc!=SQLITE_OK ) return rc;
  if( where.zSchema==NULL ){
    return tvf_error(c, SQLITE_ERROR, "ch_history: an inline JSON ring has no "
                     "history");
  }
  tvf_vtab *p = (tvf_vtab *)c->base.pVtab;
  rc = store_history(p->db, where.zSchema, where.zName, c->ring->version,
                     &c->pStmt);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    rc = tvf_error(c, rc, "ch_history: %s", sqlite3_errmsg(p->db));
  }
  spec_table_free(&where);
  if( rc!=SQLITE_OK ) return rc;
  c->iRow = 0;                      /* history_next counts the first row */
  return history_next(pCursor);
}

static int history_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                          int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  if( iCol==HISTORY_RING ){
    arg_column(c, ctx, 0);
  }else{
    sqlite3_result_value(ctx, sqlite3_column_value(c->pStmt, iCol));
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------- registration */

#define TVF_CONNECT(zFn, zSchema)                                           \
  static int zFn(sqlite3 *db, void *pAux, int argc, const char *const *argv, \
                 sqlite3_vtab **ppVtab, char **pzErr){                      \
    (void)argc; (void)argv; (void)pzErr;                                    \
    return tvf_connect(db, pAux, zSchema, ppVtab);                          \
  }

TVF_CONNECT(points_connect,
  "CREATE TABLE x(token INTEGER, node TEXT, replica INTEGER, ring HIDDEN)")
TVF_CONNECT(arcs_connect,
  "CREATE TABLE x(start INTEGER, \"end\" INTEGER, node TEXT, share REAL,"
  " ring HIDDEN)")
TVF_CONNECT(diff_connect,
  "CREATE TABLE x(start INTEGER, \"end\" INTEGER, src TEXT, dst TEXT,"
  " share REAL, old HIDDEN, new HIDDEN)")
TVF_CONNECT(replicas_connect,
  "CREATE TABLE x(rank INTEGER, node TEXT, key HIDDEN, n HIDDEN, ring HIDDEN)")
TVF_CONNECT(history_connect,
  "CREATE TABLE x(epoch INTEGER, op TEXT, node TEXT, weight REAL, old TEXT,"
  " ring HIDDEN)")

/* An eponymous-only, read-only module: xCreate is NULL. */
#define TVF_MODULE(zName, xConnect, xBestIndex, xFilter, xNext, xColumn)    \
  static sqlite3_module zName = {                                           \
    /* iVersion    */ 0,                                                    \
    /* xCreate     */ NULL,                                                 \
    /* xConnect    */ xConnect,                                             \
    /* xBestIndex  */ xBestIndex,                                           \
    /* xDisconnect */ tvf_disconnect,                                       \
    /* xDestroy    */ NULL,                                                 \
    /* xOpen       */ tvf_open,                                             \
    /* xClose      */ tvf_close,                                            \
    /* xFilter     */ xFilter,                                              \
    /* xNext       */ xNext,                                                \
    /* xEof        */ tvf_eof,                                              \
    /* xColumn     */ xColumn,                                              \
    /* xRowid      */ tvf_rowid,                                            \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL        \
  };

TVF_MODULE(points_module, points_connect, points_best_index, points_filter,
           points_next, points_column)
TVF_MODULE(arcs_module, arcs_connect, arcs_best_index, arcs_filter,
           arcs_next, arcs_column)
TVF_MODULE(diff_module, diff_connect, diff_best_index, diff_filter,
           diff_next, diff_column)
TVF_MODULE(replicas_module, replicas_connect, replicas_best_index,
           replicas_filter, replicas_next, replicas_column)
TVF_MODULE(history_module, history_connect, history_best_index,
           history_filter, history_next, history_column)

int tvf_register(sqlite3 *db, chash_conn *conn){
  static const struct {
    const char *zName;
    const sqlite3_module *pModule;
  } aModule[] = {
    { "ch_points",   &points_module },
    { "ch_arcs",     &arcs_module },
    { "ch_diff",     &diff_module },
    { "ch_replicas", &replicas_module },
    { "ch_history",  &history_module },
  };
  for(size_t i=0; i<sizeof(aModule)/sizeof(aModule[0]); i++){
    /* conn belongs to the chash module, which outlives these */
    int rc = sqlite3_create_module_v2(db, aModule[i].zName, aModule[i].pModule,
                                      conn, NULL);
    if( rc!=SQLITE_OK ) return rc;
  }
  return SQLITE_OK;
}

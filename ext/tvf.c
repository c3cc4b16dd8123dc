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
** Positions. token, start and end are 64-bit positions shown as signed
** integers, the same numbers ch_hash gives. Rows come in ring order
** (unsigned positions: 0 .. 2^63-1 shown positive, then 2^63 .. 2^64-1
** shown negative). Every arc row has start <= end as signed integers: the
** one arc that runs from 2^63-1 to -2^63 is given as two rows, so
** "ch_hash(k) BETWEEN start AND end" finds exactly one row per key.
**
** Algorithms. The ring algorithm has points and arcs. modn has neither (a
** key's owner is its position mod n, so ownership changes at every
** position): ch_points and ch_arcs say so in an error, ch_diff computes the
** exact moved fraction per residue class (rows without start and end),
** ch_replicas takes the following nodes in name order. Any other algorithm
** gets an error naming it until it is taught here.
**
** Flags: SQLITE_VTAB_INNOCUOUS. They only read ring specs and the rings'
** shadow tables on their own connection, with no side effects.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chash.h"

#define SPACE 18446744073709551616.0L            /* 2^64 positions */

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

/* A row of ch_diff, computed in xFilter. */
typedef struct diff_row {
  int64_t start, end;      /* signed bounds; unused if bNoArc */
  uint32_t src, dst;       /* node index in the old and the new ring */
  double share;
} diff_row;

/* One cursor type for all five functions; each uses its own fields. */
typedef struct tvf_cursor {
  sqlite3_vtab_cursor base; /* base class, must be first */
  int64_t iRow;            /* rowid: 1, 2, ... */
  int bEof;
  sqlite3_value *aArg[3];  /* the arguments, for the hidden columns */
  ring *ring;              /* the ring listed (one reference) */
  ring *ringNew;           /* ch_diff: the new ring (one reference) */
  /* ch_points, ch_arcs: */
  uint32_t k;              /* current point */
  int64_t iNode;           /* only points of this node, or -1 for all */
  int bSecond;             /* ch_arcs: at the second row of a split arc */
  int64_t start, end;      /* ch_arcs: the current row */
  replica_entry **aReplica;/* ch_points: per node, its points sorted */
  /* ch_diff: */
  diff_row *aDiff;
  int64_t nDiff;
  int bNoArc;              /* modn: rows have no start and end */
  /* ch_replicas: */
  uint64_t *aSeen;         /* bit set: nodes already listed */
  uint32_t k0;             /* the key's first point */
  uint32_t nStep;          /* points walked past k0 */
  int64_t nWant;           /* n */
  uint32_t iOwner;         /* node of the current row */
  uint64_t keyPos;         /* the key's position */
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
  sqlite3_free(c->aDiff);
  c->aDiff = NULL;
  sqlite3_free(c->aSeen);
  c->aSeen = NULL;
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
  return rc;
}

/* The error for an algorithm this file does not know yet. */
static int unsupported(tvf_cursor *c, const char *zFunc, const ring *r){
  return tvf_error(c, SQLITE_ERROR, "%s: not available for algorithm %s",
                   zFunc, ring_algorithm_name(r->config.algorithm));
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

/* Share of the signed range [s, e] of positions (s <= e). */
static double range_share(int64_t s, int64_t e){
  unsigned __int128 n = (unsigned __int128)((uint64_t)e - (uint64_t)s) + 1;
  return (double)((long double)n / SPACE);
}

/* ------------------------------------------------------------ ch_points */

/*
** ch_points(ring): token, node, replica. xBestIndex contract (idxNum):
**   0x01  argv has the ring spec (else the default ring)
**   0x10  argv's last value is a node name: only that node's points
**   0x20  the replica column is read (so replica numbers are computed)
** LIMIT needs no help: rows are produced one at a time, and a replica
** number costs the hashing of its node's labels only, once per node.
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

/* Skip to the next point of the wanted node (from c->k on). */
static void points_settle(tvf_cursor *c){
  const ring *r = c->ring;
  while( c->k<r->n_points && c->iNode>=0 && r->owners[c->k]!=c->iNode ) c->k++;
  c->bEof = c->k>=r->n_points;
}

static int points_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  int rc = cursor_start(c, "ch_points", idxNum & 0x01, argv,
                        idxNum & 0x01 ? 0 : -1,
                        &c->ring, NULL);
  if( rc!=SQLITE_OK ) return rc;
  switch( c->ring->config.algorithm ){
    case RING_ALGO_RING:
      break;
    case RING_ALGO_MODN:
      return tvf_error(c, SQLITE_ERROR, "ch_points: algorithm modn has no "
                       "points (a key's owner is its position mod n)");
    default:
      return unsupported(c, "ch_points", c->ring);
  }
  c->iNode = idxNum & 0x10 ? node_arg(c->ring, argv[argc-1]) : -1;
  if( (idxNum & 0x10) && c->iNode<0 ) return SQLITE_OK;   /* no such node */
  if( idxNum & 0x20 ){
    c->aReplica = sqlite3_malloc64(sizeof(replica_entry *)*(c->ring->n_nodes+1));
    if( c->aReplica==NULL ) return SQLITE_NOMEM;
    memset(c->aReplica, 0, sizeof(replica_entry *)*(c->ring->n_nodes+1));
  }
  c->k = 0;
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

/*
** The replica number i ("N#i") of point k. The ring keeps no replica
** numbers (memory), so node N's labels are hashed again, as ring.c hashes
** them, and sorted like the ring sorts them; equal positions of one node
** are in replica order, so the d-th of them on the ring is the d-th here.
*/
static int point_replica(tvf_cursor *c, uint32_t k, uint32_t *pReplica){
  const ring *r = c->ring;
  uint32_t n = r->owners[k];
  const ring_node *node = &r->nodes[n];
  if( c->aReplica[n]==NULL ){
    replica_entry *a = sqlite3_malloc64(sizeof(replica_entry)*node->points);
    if( a==NULL ) return SQLITE_NOMEM;
    char label[RING_MAX_NAME + 32];
    memcpy(label, node->name, node->name_len);
    for(uint32_t i=1; i<=node->points; i++){
      int len = (int)node->name_len;
      len += snprintf(label+len, sizeof(label)-len, "#%u", i);
      a[i-1].pos = hash_bytes(r->config.hash, r->config.seed, label, len);
      a[i-1].replica = i;
    }
    qsort(a, node->points, sizeof(replica_entry), replica_compare);
    c->aReplica[n] = a;
  }
  const replica_entry *a = c->aReplica[n];
  uint64_t pos = r->positions[k];
  uint32_t lo = 0, hi = node->points;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( a[mid].pos<pos ) lo = mid+1; else hi = mid;
  }
  for(uint32_t j=k; j>0 && r->positions[j-1]==pos; j--){
    if( r->owners[j-1]==n ) lo++;
  }
  *pReplica = a[lo].replica;
  return SQLITE_OK;
}

static int points_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                         int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  const ring *r = c->ring;
  switch( iCol ){
    case POINTS_TOKEN:
      sqlite3_result_int64(ctx, (int64_t)r->positions[c->k]);
      break;
    case POINTS_NODE:
      node_result(ctx, r, r->owners[c->k]);
      break;
    case POINTS_REPLICA: {
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

/* -------------------------------------------------------------- ch_arcs */

/*
** ch_arcs(ring): start, end, node, share. Point k owns the arc
** (position k-1, position k]; point 0 the arc that wraps around. Points at
** equal positions give the later ones empty arcs, which are left out.
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

/* Find the next non-empty arc from point c->k (first half) on, and set
** c->start, c->end to its first row. */
static void arcs_settle(tvf_cursor *c){
  const ring *r = c->ring;
  const uint64_t *pos = r->positions;
  uint32_t last = r->n_points-1;
  for(; c->k<r->n_points; c->k++){
    if( c->iNode>=0 && r->owners[c->k]!=c->iNode ) continue;
    uint64_t prev = pos[c->k==0 ? last : c->k-1];
    if( c->k>0 && prev==pos[c->k] ) continue;             /* empty arc */
    /* An arc not crossing 2^63-1 -> -2^63 has start <= end (signed). */
    c->start = (int64_t)(prev+1);
    c->end = (int64_t)pos[c->k];
    if( c->start>c->end ) c->end = INT64_MAX;             /* split: row 1 */
    c->bSecond = 0;
    c->bEof = 0;
    return;
  }
  c->bEof = 1;
}

static int arcs_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxStr;
  tvf_cursor *c = (tvf_cursor *)pCursor;
  int rc = cursor_start(c, "ch_arcs", idxNum & 0x01, argv,
                        idxNum & 0x01 ? 0 : -1,
                        &c->ring, NULL);
  if( rc!=SQLITE_OK ) return rc;
  switch( c->ring->config.algorithm ){
    case RING_ALGO_RING:
      break;
    case RING_ALGO_MODN:
      return tvf_error(c, SQLITE_ERROR, "ch_arcs: algorithm modn has no arcs "
                       "(a key's owner is its position mod n, so it changes "
                       "at every position); its nodes' shares are in the "
                       "ring table's share column");
    default:
      return unsupported(c, "ch_arcs", c->ring);
  }
  c->iNode = idxNum & 0x10 ? node_arg(c->ring, argv[argc-1]) : -1;
  if( (idxNum & 0x10) && c->iNode<0 ) return SQLITE_OK;
  c->k = 0;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  if( !c->bSecond && c->end==INT64_MAX
   && (uint64_t)c->ring->positions[c->k]!=(uint64_t)INT64_MAX ){
    /* the second row of an arc split at 2^63-1 -> -2^63 */
    c->bSecond = 1;
    c->start = INT64_MIN;
    c->end = (int64_t)c->ring->positions[c->k];
    return SQLITE_OK;
  }
  c->k++;
  arcs_settle(c);
  return SQLITE_OK;
}

static int arcs_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  switch( iCol ){
    case ARCS_START: sqlite3_result_int64(ctx, c->start); break;
    case ARCS_END:   sqlite3_result_int64(ctx, c->end); break;
    case ARCS_NODE:  node_result(ctx, c->ring, c->ring->owners[c->k]); break;
    case ARCS_SHARE:
      sqlite3_result_double(ctx, range_share(c->start, c->end));
      break;
    default:         arg_column(c, ctx, 0); break;
  }
  return SQLITE_OK;
}

/* -------------------------------------------------------------- ch_diff */

/*
** ch_diff(old, new): start, end, src, dst, share: the arcs whose owner is
** src under ring old and dst under new. The sum of share is the exact
** fraction of positions (so of keys, for a uniform hash) that move.
** Both rings must place keys by the same hash and seed, else there is no
** common position to compare.
**   ring: the two point arrays are merged; between consecutive distinct
**     positions the owner in each ring is constant. Neighbouring pieces
**     with the same src and dst are one row, also across the wrap (that
**     row comes last).
**   modn: position p has owners (p mod n, p mod m), which depend only on
**     p mod lcm(n, m); each residue class r is counted exactly
**     (floor((2^64-1-r)/lcm) + 1 positions) and is one row, with NULL start
**     and end.
** xBestIndex contract: both specs are required, argv = old, new.
*/
#define DIFF_START 0
#define DIFF_END   1
#define DIFF_SRC   2
#define DIFF_DST   3
#define DIFF_SHARE 4
#define DIFF_OLD   5
#define DIFF_NEW   6

#define DIFF_MAX_RESIDUES 1048576  /* modn: lcm(n, m) at most (32 MB of rows) */

static int diff_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  static const int aArg[] = { DIFF_OLD, DIFF_NEW };
  (void)pVtab;
  return plan_args(pInfo, aArg, 2, 2, -1);
}

/* Append a row; the cyclic range of positions [s, e] becomes two rows if
** it crosses 2^63-1 -> -2^63. */
static int diff_add(tvf_cursor *c, int64_t *pnAlloc, uint64_t s, uint64_t e,
                    uint32_t src, uint32_t dst){
  int bSplit = (int64_t)s>(int64_t)e;
  if( c->nDiff+2>*pnAlloc ){
    int64_t nNew = *pnAlloc ? *pnAlloc*2 : 64;
    diff_row *aNew = sqlite3_realloc64(c->aDiff, sizeof(diff_row)*nNew);
    if( aNew==NULL ) return SQLITE_NOMEM;
    c->aDiff = aNew;
    *pnAlloc = nNew;
  }
  for(int i=0; i<=bSplit; i++){
    diff_row *d = &c->aDiff[c->nDiff++];
    d->start = i==0 ? (int64_t)s : INT64_MIN;
    d->end = bSplit && i==0 ? INT64_MAX : (int64_t)e;
    d->src = src;
    d->dst = dst;
    d->share = range_share(d->start, d->end);
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

static int diff_rings(tvf_cursor *c, const int64_t *aMap){
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
    int bMoves = aMap[src]!=(int64_t)dst;
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
      run.s = prevEnd + 1;
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

static int diff_modn(tvf_cursor *c, const int64_t *aMap){
  const ring *a = c->ring, *b = c->ringNew;
  uint64_t n = a->n_nodes, m = b->n_nodes;
  uint64_t lcm = n / gcd64(n, m) * m;
  if( lcm>DIFF_MAX_RESIDUES ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: modn rings of %u and %u nodes "
                     "repeat every lcm = %llu positions, more than the %d this "
                     "exact count allows", a->n_nodes, b->n_nodes,
                     (unsigned long long)lcm, DIFF_MAX_RESIDUES);
  }
  int64_t nAlloc = 0;
  c->bNoArc = 1;
  for(uint64_t r=0; r<lcm; r++){
    uint32_t src = (uint32_t)(r % n), dst = (uint32_t)(r % m);
    if( aMap[src]==(int64_t)dst ) continue;
    /* one row per class: diff_add with an empty range, then the share */
    int rc = diff_add(c, &nAlloc, 0, 0, src, dst);
    if( rc!=SQLITE_OK ) return rc;
    unsigned __int128 count = (unsigned __int128)((UINT64_MAX - r) / lcm) + 1;
    c->aDiff[c->nDiff-1].share = (double)((long double)count / SPACE);
  }
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
  if( a->config.algorithm!=b->config.algorithm ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: cannot compare algorithm %s with "
                     "algorithm %s; count moved keys with ch_moved",
                     ring_algorithm_name(a->config.algorithm),
                     ring_algorithm_name(b->config.algorithm));
  }
  if( a->config.hash!=b->config.hash || a->config.seed!=b->config.seed ){
    return tvf_error(c, SQLITE_ERROR, "ch_diff: the rings hash keys "
                     "differently (%s seed %llu, %s seed %llu), so positions "
                     "cannot be compared; count moved keys with ch_moved",
                     hash_name(a->config.hash), (unsigned long long)a->config.seed,
                     hash_name(b->config.hash), (unsigned long long)b->config.seed);
  }
  int64_t *aMap = node_map(a, b);
  if( aMap==NULL ) return SQLITE_NOMEM;
  switch( a->config.algorithm ){
    case RING_ALGO_RING: rc = diff_rings(c, aMap); break;
    case RING_ALGO_MODN: rc = diff_modn(c, aMap); break;
    default:             rc = unsupported(c, "ch_diff", a); break;
  }
  sqlite3_free(aMap);
  if( rc!=SQLITE_OK ) return rc;
  c->k = 0;
  c->bEof = c->nDiff==0;
  return SQLITE_OK;
}

static int diff_next(sqlite3_vtab_cursor *pCursor){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  c->iRow++;
  c->k++;
  c->bEof = c->k>=c->nDiff;
  return SQLITE_OK;
}

static int diff_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol){
  tvf_cursor *c = (tvf_cursor *)pCursor;
  const diff_row *d = &c->aDiff[c->k];
  switch( iCol ){
    case DIFF_START: if( !c->bNoArc ) sqlite3_result_int64(ctx, d->start); break;
    case DIFF_END:   if( !c->bNoArc ) sqlite3_result_int64(ctx, d->end); break;
    case DIFF_SRC:   node_result(ctx, c->ring, d->src); break;
    case DIFF_DST:   node_result(ctx, c->ringNew, d->dst); break;
    case DIFF_SHARE: sqlite3_result_double(ctx, d->share); break;
    default:         arg_column(c, ctx, iCol-DIFF_OLD); break;
  }
  return SQLITE_OK;
}

/* ---------------------------------------------------------- ch_replicas */

/*
** ch_replicas(key, n [, ring]): rank, node: the first n distinct nodes met
** walking clockwise from the key's position (rank 1 is ch_locate's
** answer); fewer if the ring has fewer nodes. modn: the owner, then the
** nodes after it in name order, wrapping around.
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

/* Walk to the next node not listed yet (ring), or stop. */
static void replicas_settle(tvf_cursor *c){
  const ring *r = c->ring;
  if( c->iRow>c->nWant || c->iRow>r->n_nodes ){
    c->bEof = 1;
    return;
  }
  if( r->config.algorithm==RING_ALGO_MODN ){
    c->iOwner = (uint32_t)((c->keyPos % r->n_nodes + (uint64_t)(c->iRow-1))
                           % r->n_nodes);
    c->bEof = 0;
    return;
  }
  for(; c->nStep<r->n_points; c->nStep++){
    uint32_t k = c->k0 + c->nStep;
    uint32_t owner = r->owners[k>=r->n_points ? k-r->n_points : k];
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
  if( r->config.algorithm!=RING_ALGO_RING && r->config.algorithm!=RING_ALGO_MODN ){
    return unsupported(c, "ch_replicas", r);
  }
  if( !key_position(argv[0], &r->config, &c->keyPos) ) return SQLITE_OK;
  if( r->config.algorithm==RING_ALGO_RING ){
    c->aSeen = sqlite3_malloc64(sizeof(uint64_t)*(r->n_nodes/64+1));
    if( c->aSeen==NULL ) return SQLITE_NOMEM;
    memset(c->aSeen, 0, sizeof(uint64_t)*(r->n_nodes/64+1));
    /* the key's first point: the first at or after it, wrapping to 0 */
    uint32_t lo = 0, hi = r->n_points;
    while( lo<hi ){
      uint32_t mid = lo + (hi-lo)/2;
      if( r->positions[mid]<c->keyPos ) lo = mid+1; else hi = mid;
    }
    c->k0 = lo==r->n_points ? 0 : lo;
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
** ch_history(ring): epoch, op, node, weight: the ring table's change log,
** oldest first, up to the spec's version ('shards@3': versions 1 to 3;
** 'shards': everything, including this connection's uncommitted changes,
** logged with the next epoch). A rename row has the new name.
** xBestIndex contract (idxNum): 0x01 the ring spec is in argv.
*/
#define HISTORY_EPOCH  0
#define HISTORY_OP     1
#define HISTORY_NODE   2
#define HISTORY_WEIGHT 3
#define HISTORY_RING   4

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
  "CREATE TABLE x(epoch INTEGER, op TEXT, node TEXT, weight REAL,"
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

/*
** geometry.h: a ring's hash space cut into pieces, and the walks over it
** that the table-valued functions list as rows. Pure C, no SQLite calls.
**
** Positions are in [0, top], top = 2^b - 1 with b = ring_space_bits of the
** ring (64, 32, 16, 15 or 14). A cyclic range [s, e] runs from s up to e,
** wrapping from top to 0 when s > e; [e+1, e] is the whole space. SQL shows
** positions as signed integers, so a range across the place where signed
** values drop (2^63-1 -> -2^63 in a 64-bit space, top -> 0 in a smaller
** one) is given as two rows with start <= end: range_rows cuts it.
**
** What is here, and which function lists it:
**   ranges         range_rows, and the exact share of a range or of a
**                  residue class of positions (ch_arcs, ch_diff)
**   arcs           the range a point owns (ch_arcs)
**   point replicas the replica number of each point (ch_points)
**   diffs          two points rings merged into runs of positions that
**                  change owner; two slot rings compared per residue class
**                  (ch_diff)
**   replica walks  the first distinct owners on from a key's unit, or the
**                  nodes by falling score (ch_replicas)
**
** Memory comes from the ring core's allocator (ring_alloc), so the
** extension's out-of-memory tests reach every allocation here.
*/
#ifndef CHASH_GEOMETRY_H
#define CHASH_GEOMETRY_H

#include "algo.h"

/* ---------------------------------------------------------- ranges */

/* The bounds of one row of positions, as signed integers, start <= end. */
typedef struct pos_range {
  int64_t start, end;
} pos_range;

/* The largest position of r's key hash: positions are [0, top]. */
uint64_t ring_space_top(const ring *r);

/*
** The ranges and arcs below are inline: they are computed once per row of
** ch_arcs and ch_diff, and a call into another file per row cost ch_arcs
** 5% of its time.
*/

/*
** The rows of the cyclic range [s, e] in [0, top] into a: one, or two if it
** runs across the place where signed values drop. Returns the count.
*/
static inline int range_rows(uint64_t top, uint64_t s, uint64_t e,
                             pos_range a[2]){
  /* Where signed values drop: after 2^63-1 in a 64-bit space, after top
  ** (back to 0) in a smaller one. The range crosses it when the drop is
  ** nearer to s, going up, than e is. */
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

/* The share of n+1 positions in the space [0, top] (n+1 may be 2^64, so
** it is counted from 0). long double holds 64-bit counts exactly. */
static inline double space_share(uint64_t top, uint64_t n){
  return (double)(((long double)n + 1.0L) / ((long double)top + 1.0L));
}

/* The exact share of the positions of row g in the space [0, top]. */
static inline double range_share(uint64_t top, const pos_range *g){
  return space_share(top, (uint64_t)g->end - (uint64_t)g->start);
}

/* The exact share of residue class c mod L (c <= top): the positions c,
** c+L, ... up to top. */
static inline double class_share(uint64_t top, uint64_t c, uint64_t L){
  return space_share(top, (top - c) / L);
}

/* ------------------------------------------------------------ arcs */

/*
** The arc of point k of a points ring: the positions whose first point at
** or after them is k, (position k-1, position k], point 0's arc wrapping
** around. Sets the cyclic range [*pS, *pE] and returns 1; returns 0 for an
** empty arc (a point at the same position as the one before it: the
** earlier one owns what lies before them). top is ring_space_top(r).
*/
static inline int point_arc(const ring *r, uint64_t top, uint32_t k,
                            uint64_t *pS, uint64_t *pE){
  const uint64_t *pos = r->positions;
  uint64_t prev = pos[k==0 ? r->n_points-1 : k-1];
  if( k>0 && prev==pos[k] ) return 0;
  *pS = (prev + 1) & top;
  *pE = pos[k];
  return 1;
}

/* The token ch_points shows for point k: the point, where r->positions
** are the ends of the points' arcs rather than the points (lookup rules
** other than the successor's, ring_points_place), else the position.
** Inline: once per row. */
static inline uint64_t ring_point_token(const ring *r, uint32_t k){
  return r->tokens ? r->tokens[k] : r->positions[k];
}

/* -------------------------------------------------- point replicas */

/*
** The replica numbers of a ring built by ring_points_place are in
** r->replicas. Other points rings keep none (memory), so they are made
** again on demand: a node's positions (its descriptor's node_positions),
** sorted as the ring sorts them, once per node asked about.
*/
typedef struct replica_entry replica_entry;
typedef struct point_replicas {
  const ring *r;
  replica_entry **aNode;   /* per node, its points sorted; NULL until asked */
} point_replicas;

/* Start on points ring r. RING_OK or RING_NOMEM. */
int point_replicas_init(point_replicas *p, const ring *r);

/* The replica number of point k into *pReplica. RING_OK or RING_NOMEM. */
int point_replica(point_replicas *p, uint32_t k, uint32_t *pReplica);

void point_replicas_free(point_replicas *p);

/* ----------------------------------------------------------- diffs */

/* How two rings of an algorithm are compared position by position. */
typedef enum diff_kind {
  DIFF_BY_POINTS,          /* merge the two point arrays */
  DIFF_BY_RESIDUES,        /* owners repeat with a period: residue classes */
  DIFF_NOT_EXACT           /* neither: the descriptor's no_diff says why */
} diff_kind;

diff_kind ring_diff_kind(const ring *r);

/* For each node of a, the index in b of the node of the same name, or -1;
** from ring_alloc (NULL: out of memory), freed with ring_dealloc. */
int64_t *diff_node_map(const ring *a, const ring *b);

/* A run of positions, the cyclic range [s, e], owned by node src of the
** old ring and node dst of the new one. */
typedef struct diff_run {
  uint64_t s, e;
  uint32_t src, dst;
} diff_run;

/*
** The positions that change owner from points ring a to points ring b
** (both with nodes, the same hash and seed; aMap from diff_node_map), as
** runs in position order: each the longest stretch of moved positions with
** one src and one dst. A run across the wrap from top to 0 comes last.
** *paRun is from ring_alloc (NULL if there are no runs), freed with
** ring_dealloc. RING_OK or RING_NOMEM.
*/
int diff_point_runs(const ring *a, const ring *b, const int64_t *aMap,
                    diff_run **paRun, uint32_t *pnRun);

/* The most residue classes a diff walks: 2^24 (any one maglev table). */
#define DIFF_MAX_RESIDUES 16777216

/* The period of a slots ring's owners: a position's owner depends only on
** it mod this (its unit count). */
uint64_t ring_residue_period(const ring *r);

/*
** Slots rings a and b (the same hash and seed) compared per residue class
** c mod period, period = lcm of their periods: the owners of position p
** under both depend only on p mod period, so position c tells those of the
** whole class. Classes past top hold no position and are not walked.
*/
typedef struct residue_diff {
  const ring *a, *b;
  const int64_t *aMap;     /* diff_node_map(a, b) */
  uint64_t period;         /* lcm of the periods: at most 2^50 */
  uint64_t nClass;         /* classes walked: period, or top+1 if fewer */
  uint64_t c;              /* the current class */
  uint32_t src, dst;       /* its owners in a and in b */
} residue_diff;

/* Start at class 0 (call residue_diff_seek next); d->period is set, for
** the caller to check against DIFF_MAX_RESIDUES. */
void residue_diff_start(residue_diff *d, const ring *a, const ring *b,
                        const int64_t *aMap);

/* From class d->c on, go to the first whose owner changes: 1, with c, src
** and dst set; 0 if none is left. */
int residue_diff_seek(residue_diff *d);

/* --------------------------------------------------- replica walks */

/*
** A key's preference list of distinct nodes. For rings with units: the
** owners of the units met walking on from the key's unit, wrapping around,
** each node once (points clockwise, the slots or buckets after the
** key's). For rings without: the nodes by the descriptor's score for the
** key, highest first, ties to the lower index (name order). A descriptor
** with a replicas hook gives the list itself (cassandra's strategies).
*/
typedef struct scored_node scored_node;
typedef struct replica_walk {
  const ring *r;
  uint64_t *aSeen;         /* units: bit set of the nodes already listed */
  scored_node *aScored;    /* no units: every node, by falling score */
  uint32_t *aList;         /* the descriptor's list (replicas hook) */
  uint32_t nList;
  uint32_t k0;             /* units: the key's unit */
  uint32_t nStep;          /* units: units walked past k0 */
  uint32_t nListed;        /* nodes listed so far */
} replica_walk;

/* Start the walk of key position pos (low: the 64 bits below it, as
** ring_lookup_low takes them) on r (r has nodes). RING_OK or RING_NOMEM
** (then replica_walk_free is still to be called). */
int replica_walk_start(replica_walk *w, const ring *r, uint64_t pos,
                       uint64_t low);

/* The same for the key of nKey bytes at pKey on a ring whose algorithm
** has key_score (algo.h). */
int replica_walk_start_key(replica_walk *w, const ring *r, const void *pKey,
                           size_t nKey);

/* The index in r->nodes of the next node of the list, or -1 at its end. */
int64_t replica_walk_next(replica_walk *w);

void replica_walk_free(replica_walk *w);

#endif

/*
** tvf.h: what the table-valued functions share (tvf.c): the virtual table
** object, the base cursor every function's cursor starts with, the
** planning of hidden arguments with its idxNum bits, and the macro that
** makes a function's module.
**
** HOW THEY WORK (as SQLite's series.c): each function is an eponymous-only
** virtual table (xCreate is NULL, so CREATE VIRTUAL TABLE ... USING ch_arcs
** fails) whose arguments are HIDDEN columns. ch_arcs('x') is
** "SELECT ... FROM ch_arcs WHERE ring='x'": xBestIndex takes the equality
** constraints on the hidden columns (tvf_plan_args) and hands their values
** to xFilter. A ring argument that is left out means the default ring (the
** only one), as everywhere in chash.
**
** One file per function (tvf_points.c has ch_points and ch_arcs, which
** list the same units); each says at its top what its columns and
** arguments are, its xBestIndex contract, and what it does per algorithm.
** The geometry they list (arcs, diffs, replica walks) is computed in the
** core, ext/core/geometry.c; these files turn it into rows.
**
** Positions. token, start and end are positions of the ring's key hash,
** in [0, 2^b) with b = ring_space_bits (64, 32, 16, 15 or 14), shown as signed
** integers: the same numbers ch_hash gives. Rows come in ring order
** (unsigned positions). Every range row has start <= end as signed
** integers (range_rows), so "ch_hash(k) BETWEEN start AND end" finds
** exactly one row per key. Shares are exact fractions of the 2^b
** positions.
**
** Algorithms: the functions ask the ring (tokens, replicas) and its
** descriptor (algo.h) what it has (units, no_units, no_diff,
** node_positions, slot_replica, score) and never name an algorithm.
**
** Flags: SQLITE_VTAB_INNOCUOUS. They only read ring specs and the rings'
** shadow tables on their own connection, with no side effects.
*/
#ifndef CHASH_TVF_H
#define CHASH_TVF_H

#include "geometry.h"
#include "sqlite_layer.h"

/* One virtual table object serves every use of a function. */
typedef struct tvf_vtab {
  sqlite3_vtab base;       /* base class, must be first */
  sqlite3 *db;
  chash_conn *conn;        /* for ring specs */
} tvf_vtab;

#define TVF_MAX_ARGS 3     /* hidden arguments of any function */

/*
** The part of a cursor every function has; each function's cursor embeds
** it first and adds its own fields, which its xClear frees (the base calls
** it before each xFilter and at xClose).
*/
typedef struct tvf_cursor tvf_cursor;
struct tvf_cursor {
  sqlite3_vtab_cursor base;     /* base class, must be first */
  void (*xClear)(tvf_cursor *); /* free the function's own fields */
  int64_t iRow;                 /* rowid: 1, 2, ... */
  int bEof;
  sqlite3_value *aArg[TVF_MAX_ARGS]; /* the arguments, for hidden columns */
  ring *ring;                   /* the ring listed (one reference) */
  uint64_t top;                 /* the largest position of its key hash */
};

/* Set the table's error message (chash_vtab_error): returns rc
** (SQLITE_ERROR if rc is SQLITE_OK), or SQLITE_NOMEM if the message cannot
** be made. */
#define tvf_error(c, rc, ...) chash_vtab_error((c)->base.pVtab, rc, __VA_ARGS__)

/* Free what the cursor holds (the function's fields too): no rows. */
void tvf_cursor_clear(tvf_cursor *c);

/*
** Start an xFilter: clear the cursor, keep copies of the nArg arguments
** (the first values of argv, for the hidden columns), and resolve the ring
** spec argv[iSpec] (iSpec<0: omitted, the default ring) into c->ring and
** c->top. pWhere: as spec_ring_value. Errors are set on the table.
*/
int tvf_cursor_start(tvf_cursor *c, const char *zFunc, int nArg,
                     sqlite3_value **argv, int iSpec, spec_table *pWhere);

/* Resolve ring spec pSpec (NULL: omitted) into *ppRing, a reference the
** caller releases (ch_diff's new ring; tvf_cursor_start's); pWhere: as
** spec_ring_value. Errors are set on the table. */
int tvf_ring(tvf_cursor *c, const char *zFunc, sqlite3_value *pSpec,
             ring **ppRing, spec_table *pWhere);

/* A hidden argument column: the value argument i had in xFilter. */
void tvf_arg_column(tvf_cursor *c, sqlite3_context *ctx, int i);

/* The node named by a "node = ?" value on r: its index, or -1. */
int64_t tvf_node_arg(const ring *r, sqlite3_value *v);

/* Result the name of node i of ring r (copied: a result may outlive the
** cursor's ring). */
void tvf_node_result(sqlite3_context *ctx, const ring *r, uint32_t i);

/*
** idxNum bits of tvf_plan_args: argument i (in the order the function
** lists them) is in argv; a node = ? value is last in argv. Functions may
** use the bits from TVF_FIRST_OWN_BIT up for their own plans.
*/
#define TVF_HAS_ARG(i)    (1<<(i))
#define TVF_HAS_NODE      0x10
#define TVF_FIRST_OWN_BIT 0x20

/*
** Plan a function's hidden arguments. aArgCol[] lists their columns in
** argv order, nRequired of them first and required. Equality constraints
** on them become argv[] of xFilter, in that order, and set
** TVF_HAS_ARG(i). An argument with only unusable constraints is
** SQLITE_CONSTRAINT (this plan cannot work, try another). A plan without a
** required argument gets a prohibitive cost, and xFilter reports it if it
** is chosen all the same: SQLite also plans OR terms alone, without the
** argument constraints. When iNodeCol>=0, an equality on that column
** (under the BINARY collation) is passed last and sets TVF_HAS_NODE.
*/
int tvf_plan_args(sqlite3_index_info *pInfo, const int *aArgCol, int nArg,
                  int nRequired, int iNodeCol);

/* The methods every function shares. */
int tvf_connect(sqlite3 *db, void *pAux, const char *zSchema,
                sqlite3_vtab **ppVtab);
int tvf_disconnect(sqlite3_vtab *pVtab);
int tvf_open(sqlite3_vtab *pVtab, size_t nCursor, void (*xClear)(tvf_cursor *),
             sqlite3_vtab_cursor **ppCursor);
int tvf_close(sqlite3_vtab_cursor *pCursor);
int tvf_eof(sqlite3_vtab_cursor *pCursor);
int tvf_rowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid);

/*
** The module NAME_module of a function: an eponymous-only, read-only
** table with columns zSchema, whose cursor is a CURSOR (a struct that
** begins with a tvf_cursor) cleared by xClear (NULL: nothing of its own).
*/
#define TVF_MODULE(NAME, zSchema, CURSOR, xClear, xBestIndex, xFilter,      \
                   xNext, xColumn)                                          \
  static int NAME##_connect(sqlite3 *db, void *pAux, int argc,              \
                            const char *const *argv, sqlite3_vtab **ppVtab, \
                            char **pzErr){                                  \
    (void)argc; (void)argv; (void)pzErr;                                    \
    return tvf_connect(db, pAux, zSchema, ppVtab);                          \
  }                                                                         \
  static int NAME##_open(sqlite3_vtab *pVtab,                               \
                         sqlite3_vtab_cursor **ppCursor){                   \
    return tvf_open(pVtab, sizeof(CURSOR), xClear, ppCursor);               \
  }                                                                         \
  const sqlite3_module NAME##_module = {                                    \
    /* iVersion    */ 0,                                                    \
    /* xCreate     */ NULL,                                                 \
    /* xConnect    */ NAME##_connect,                                       \
    /* xBestIndex  */ xBestIndex,                                           \
    /* xDisconnect */ tvf_disconnect,                                       \
    /* xDestroy    */ NULL,                                                 \
    /* xOpen       */ NAME##_open,                                          \
    /* xClose      */ tvf_close,                                            \
    /* xFilter     */ xFilter,                                              \
    /* xNext       */ xNext,                                                \
    /* xEof        */ tvf_eof,                                              \
    /* xColumn     */ xColumn,                                              \
    /* xRowid      */ tvf_rowid,                                            \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL        \
  };

/* The modules, one per function (tvf_*.c); tvf_register registers them. */
extern const sqlite3_module tvf_points_module;
extern const sqlite3_module tvf_arcs_module;
extern const sqlite3_module tvf_diff_module;
extern const sqlite3_module tvf_replicas_module;
extern const sqlite3_module tvf_history_module;

#endif

/*
** sqlite_layer.h: what the SQLite-facing parts of chash share: the per-connection
** context, the shadow-table store, ring-spec resolution and key hashing.
**
** The parts, each calling only the ones above it and the core (ext/core):
**   key_value.h  the key-to-bytes rule and a key's position (inline)
**   common.c     whole numbers, the error helpers, prepared formats
**   store.c      shadow tables: layout, reads, writes, versions
**   catalog.c    which tables of a schema are rings
**   json_spec.c  inline JSON ring specs -> options and nodes
**   ring_cache.c the connection's caches of built rings (one LRU)
**   spec.c       ring specs -> ring snapshots, through those caches
**   close_hook.c the kept statements finalized as the connection closes
**   empty_table.c the methods of chash's own tables, which have no rows
**   vtab.c       the chash virtual table
**   check.c      ch_check and xIntegrity: the shadow tables' check
**   funcs.c      the SQL functions
**   aggregates.c the aggregates ch_tally and ch_flows
**   tvf*.c       the table-valued functions
**   chash.c      the entry point that registers them
*/
#ifndef CHASH_SQLITE_LAYER_H
#define CHASH_SQLITE_LAYER_H

#include <sqlite3ext.h>
#ifndef SQLITE_CORE
SQLITE_EXTENSION_INIT3
#endif

#include "algo.h"
#include "options.h"
#include "ring.h"

#define CHASH_VERSION "0.1.0"
#define CHASH_FORMAT  1            /* on-disk format of the shadow tables */
#define CHASH_FORMAT_COLUMNS 2     /* the same, for algorithms with columns */

/* --------------------------------------------------------------- common.c */

/*
** Is v an integer: an INTEGER, or a REAL with a whole value in the 64-bit
** range (what a JavaScript number or a JSON value becomes)? If so, 1 and
** the value in *pOut; else 0.
*/
int value_whole_int64(sqlite3_value *v, int64_t *pOut);

/* Set zMsg as ctx's error; if it is NULL (building the message ran out of
** memory), the error is SQLITE_NOMEM. */
void chash_result_error(sqlite3_context *ctx, const char *zMsg);

/* Replace a virtual table's error message with zFmt (an sqlite3_mprintf
** format); returns rc (SQLITE_ERROR if rc is SQLITE_OK), or SQLITE_NOMEM
** if the message cannot be made. */
int chash_vtab_error(sqlite3_vtab *pVtab, int rc, const char *zFmt, ...);

/* Prepare the statement zFmt (a %-format) touching real tables only
** (SQLITE_PREPARE_NO_VTAB, plus flags); SQLITE_NOMEM if the text cannot be
** made. */
int chash_prepare_fmt(sqlite3 *db, sqlite3_stmt **ppStmt, unsigned flags,
                      const char *zFmt, ...);

/*
** Messages echo what the caller wrote (a spec, a name) cut after 60
** characters, so that a megabyte spec is not repeated whole: the format
** CHASH_ECHO ("%!.60Q%s") takes the text, then chash_cut_mark of it ("..."
** if it was cut, else "").
*/
#define CHASH_ECHO "%!.60Q%s"
const char *chash_cut_mark(const char *z);

/* A random 64-bit integer, from SQLite's generator (stamps, tags). */
int64_t chash_random_int64(void);

/* Run the statements of zFmt (a %-format) to completion. */
int chash_exec_fmt(sqlite3 *db, const char *zFmt, ...);

/* ---------------------------------------------------------------- store.c */

/* What the %_config shadow table says about a ring table. */
typedef struct store_info {
  ring_config config;
  int64_t epoch;          /* last committed version */
  int64_t stamp;          /* random; changes with every change to the ring */
  int64_t created;        /* random; set when the table is created */
  int64_t next_id;        /* id of the next node added */
  int64_t points;         /* points of the current nodes (for the limits) */
} store_info;

/* The format of the shadow tables of a ring of cfg: CHASH_FORMAT, or
** CHASH_FORMAT_COLUMNS when its algorithm has columns. */
int store_format(const ring_config *cfg);

/* Does a table of cfg stored in this format fit cfg? Format 1 for an
** algorithm that has columns is a table made before it had them (a
** redis_cluster table before slots): it fits, with cfg->no_columns set, so
** the table keeps its columns and format. */
int store_format_fits(ring_config *cfg, int64_t format);

/*
** The algorithm's columns as a piece of SQL, one item per column, each
** after ", ": their names ("tokens"), typed ("tokens" TEXT), their
** parameters (?11, ?12, ...: a column's value is always bound at
** STORE_COLUMN_PARAM + its index) or assignments ("tokens"=?11). "" for
** an algorithm without columns; NULL: no memory.
*/
#define STORE_COLUMN_PARAM 11
typedef enum store_columns_as {
  STORE_COLUMNS_NAMES, STORE_COLUMNS_TYPED, STORE_COLUMNS_PARAMS,
  STORE_COLUMNS_SETS
} store_columns_as;
char *store_column_sql(const ring_config *cfg, store_columns_as eAs);

/* Node names, weights and column values read from the shadow tables,
** before the build. */
typedef struct node_list {
  ring_input *aInput;
  uint32_t n, nAlloc;
  char *zNames;            /* every name and column value, back to back */
  size_t nNames, nNamesAlloc;
} node_list;

/* The nodes of version iVersion (the current ones if it is negative) of a
** ring of cfg, with their column values, in id (join) order, into *pList (zeroed by the caller, freed with
** node_list_free whatever the result). */
int load_node_list(sqlite3 *db, const char *zSchema, const char *zName,
                   const ring_config *cfg, int64_t iVersion, node_list *pList,
                   char **pzErr);
void node_list_free(node_list *p);

/* A ring table's shadow tables and the statements that write them. */
typedef struct ring_store ring_store;

/* The connection's part in transactions (txn.c). */
typedef struct chash_txn chash_txn;

/* Create the shadow tables of a new ring table. */
int store_create(sqlite3 *db, const char *zSchema, const char *zName,
                 const ring_config *cfg, char **pzErr);
/* Drop them (DROP TABLE), rename them (ALTER TABLE ... RENAME). */
int store_drop(sqlite3 *db, const char *zSchema, const char *zName);
int store_rename(sqlite3 *db, const char *zSchema, const char *zOld,
                 const char *zNew);
/* The shadow table suffixes, for xShadowName. */
int store_is_shadow_suffix(const char *zSuffix);

/*
** Are the shadow tables of zSchema.zName, where they exist, what the ring
** made: ordinary tables (not views, not virtual tables), nodes and history
** with rowids, and no trigger on any of them? Reading a view or writing
** under a trigger would run SQL that a crafted file chose, which may call
** chash again. SQLITE_OK with *pzProblem NULL, or saying what is not
** (freed by the caller: "r_config is a view, not a table"), or an error.
** A missing table is left to the read that needs it. bTriggers 0 leaves
** triggers out (a read runs none).
*/
int store_check_tables(sqlite3 *db, const char *zSchema, const char *zName,
                       int bTriggers, char **pzProblem);

/* The same as an error: SQLITE_CORRUPT_VTAB with *pzErr "ring 'main.r' is
** corrupt: r_config is a view, not a table", or SQLITE_OK. */
int store_check_corrupt(sqlite3 *db, const char *zSchema, const char *zName,
                        int bTriggers, char **pzErr);

/* Read %_config. On error *pzErr says what is wrong (corrupt ring). A
** shadow table that is not what the ring made (a view, a WITHOUT ROWID
** table, a virtual table) is reported, not read; triggers, which only
** writes meet, are left to store_open. */
int store_read_info(sqlite3 *db, const char *zSchema, const char *zName,
                    store_info *pInfo, char **pzErr);

/* The current version: the highest epoch in %_history, or 0. */
int store_current_version(sqlite3 *db, const char *zSchema,
                          const char *zName, int64_t *pVersion);

/*
** Is zSchema.zName's stamp still stamp, with no table of temp hiding it?
** Every change to a ring replaces its stamp (rolled back with the change)
** and a new table gets a new one, so then the table holds the same ring.
** The query also begins a read transaction on the schema if the statement
** has none, so that other connections' latest commit shows. 0 on any error.
*/
int store_stamp_holds(sqlite3 *db, const char *zSchema, const char *zName,
                      int64_t stamp);

/*
** The same query prepared to be kept and run again (store_stamp_check):
** zName must outlive it. bHidable: a ring in main with temp open, so the
** query checks that no table of temp hides it (a table made in temp later
** makes SQLite prepare the statement again, with the same text).
*/
int store_stamp_prepare(sqlite3 *db, const char *zSchema, const char *zName,
                        int bHidable, sqlite3_stmt **ppStmt);
int store_stamp_check(sqlite3_stmt *pStmt, int64_t stamp);

/* A statement over the change log of zSchema.zName (a ring of cfg) up
** to version iMaxEpoch, in the order of the changes: columns epoch, op,
** node, weight, old, and the node's column values after the change as a
** JSON object (NULL for an algorithm without columns).
** The caller finalizes it. */
int store_history(sqlite3 *db, const char *zSchema, const char *zName,
                  const ring_config *cfg, int64_t iMaxEpoch,
                  sqlite3_stmt **ppStmt);

/*
** Build the ring of version iVersion (replayed from %_history), or of the
** current nodes if iVersion<0. The ring's version field is set by the
** caller. pBase (may be NULL) is an earlier ring of the table whose points
** are reused where they still apply (ring_build_from).
*/
int store_load_ring(sqlite3 *db, const char *zSchema, const char *zName,
                    const ring_config *cfg, int64_t iVersion,
                    const ring *pBase, ring **ppRing, char **pzErr);

/* The write side, used by the virtual table's xUpdate. */
int store_open(sqlite3 *db, const char *zSchema, const char *zName,
               chash_txn *txn,
               ring_store **ppStore, char **pzErr);
void store_close(ring_store *st);
const store_info *store_info_of(ring_store *st);
/* Finalize cached statements (before a rename). */
void store_reset_statements(ring_store *st);
/* Look a node up by name. Returns SQLITE_ROW if found (with its id and
** weight), SQLITE_DONE if not, or an error. */
int store_find_by_name(ring_store *st, const char *zNode, int nNode,
                       int64_t *pId, double *pWeight);
/* Add a node: its name, weight and column values (node->id unused). */
int store_add(ring_store *st, const ring_input *node, int64_t *pId);
int store_remove(ring_store *st, int64_t id);
/* Change the name, weight and column values of node id to node's (op
** "rename", "reweight", or "update" for a change of column values). */
int store_change(ring_store *st, int64_t id, const ring_input *node);
/* A statement over the current nodes (columns id, node, weight, then the
** algorithm's columns), in id order: all of them (STORE_SCAN_ALL), the one
** named pArg, or the one with id pArg. The caller finalizes it. */
#define STORE_SCAN_ALL   0
#define STORE_SCAN_NAME  1
#define STORE_SCAN_ID    2
int store_scan(ring_store *st, int eBy, sqlite3_value *pArg,
               sqlite3_stmt **ppStmt);
/* At commit: the pending changes, if there are any, become the next
** version (*pFrom: the epoch raised from, or -1 if nothing was pending).
** SQLITE_NOTFOUND if the store's name no longer holds the ring it was
** opened on (dropped, renamed, or another ring), or cannot be read. */
int store_commit_epoch(ring_store *st, int64_t *pFrom);
/* The schema and name a store was opened with. */
const char *store_schema(ring_store *st);
const char *store_name(ring_store *st);
/* The error message of the last failing store call (or NULL). */
const char *store_errmsg(ring_store *st);

/* -------------------------------------------------------------- catalog.c */

/*
** Look table zName up in zSchema (case-insensitively): 1 if it is a chash
** table, 2 if it is another table, 0 if there is none, <0 the negated
** SQLite error code. *pzName gets the table's name as stored.
*/
int catalog_find_ring(sqlite3 *db, const char *zSchema, const char *zName,
                      char **pzName);

/* The connection's schemas in SQLite's search order: temp, main, attached.
** Free the list with catalog_free_schemas. */
int catalog_list_schemas(sqlite3 *db, char ***pazSchema, int *pn);
void catalog_free_schemas(char **azSchema, int n);

/* Every chash table of the connection as 'schema.name', comma-separated,
** in SQLite's search order (temp, main, attached), each written as the spec
** that names it ('main."a@b"'); *pnRing counts them, *pzSchema and *pzName
** get the first one's. */
int catalog_list_rings(sqlite3 *db, char **pzList, int *pnRing,
                       char **pzSchema, char **pzName);

/* What a "no such ring" message adds: the rings of schema zSchema (NULL:
** of every schema), "rings: 'main.a', 'main.b'", the first 10 and a count
** of the rest, or "there is no ring". New string in *pzHint. */
int catalog_ring_hint(sqlite3 *db, const char *zSchema, char **pzHint);

/* ------------------------------------------------------------ json_spec.c */

/*
** Read the inline JSON ring spec z (n bytes): its options into *cfg (the
** defaults, then what it sets) and its nodes, in the order given, into a
** new array *paInput of *pnInput entries, freed with json_spec_free.
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR with *pzErr saying what is
** wrong.
*/
int json_spec_read(sqlite3 *db, const char *z, int n, ring_config *cfg,
                   ring_input **paInput, uint32_t *pnInput, char **pzErr);
void json_spec_free(ring_input *aInput, uint32_t n);

/* ----------------------------------------------------------- ring_cache.c */

/* The table a ring spec named (both NULL for an inline JSON ring). */
typedef struct spec_table {
  char *zSchema;
  char *zName;
  int64_t stamp;           /* its stamp when the ring was read */
} spec_table;
void spec_table_free(spec_table *pWhere);

/* A cached ring: one reference held, under zKey (nKey bytes). */
typedef struct ring_cache_entry {
  char *zKey;              /* NULL if the entry is free */
  int nKey;
  ring *ring;
  int64_t tag;             /* the caller's: valid while it matches */
  spec_table where;        /* the caller's: the table the ring is of */
  int64_t nChange;         /* the caller's: state when it was cached */
  int nDb;
  int bSettled;            /* the caller's: main settled when last checked, */
  unsigned nDataVersion;   /* at this data version (spec.c) */
  uint64_t born;           /* the clock when it was put: which entry it is */
  sqlite3_stmt *pCheck;    /* the caller's: a kept statement, finalized
                           ** with the entry */
  int bCheckHidable;       /* the caller's: pCheck looks in temp too */
  uint64_t last_use;
} ring_cache_entry;

typedef struct ring_cache {
  ring_cache_entry *a;     /* n entries, the caller's memory */
  int n;
  uint64_t clock;          /* last_use of the latest use */
} ring_cache;

/* The entry of key zKey (marked as just used), or NULL. */
ring_cache_entry *ring_cache_find(ring_cache *c, const char *zKey, int nKey);
/* The same for the key that is byte cTag then the n bytes z, without
** making that key. */
ring_cache_entry *ring_cache_find_tagged(ring_cache *c, char cTag,
                                         const char *z, int n);

/* Fill e (a copy of zKey, a new reference to r), to be put. SQLITE_OK or
** SQLITE_NOMEM (e is then clear). */
int ring_cache_entry_init(ring_cache_entry *e, const char *zKey, int nKey,
                          ring *r);

/* Put *pNew in c (which owns it from then on, *pNew is cleared), in place
** of the entry of the same key, a free one, or the least recently used. */
void ring_cache_put(ring_cache *c, ring_cache_entry *pNew);

void ring_cache_entry_clear(ring_cache_entry *e);
void ring_cache_clear(ring_cache *c);

/* ----------------------------------------------------------------- spec.c */

/* The per-connection context: module pAux and functions' user data. */
typedef struct chash_conn chash_conn;

chash_conn *conn_new(sqlite3 *db);
/* A new reference to conn (returned), and the end of one: the last frees
** conn and what its caches hold. conn_release is the destructor SQLite is
** given with conn, after a conn_retain for each registration. */
chash_conn *conn_retain(chash_conn *conn);
void conn_release(void *pConn);
/* Register SQL function zName of nArg arguments with conn as its user
** data (a reference, released by SQLite when the function goes), or, conn
** NULL, remove it: each part's X_register(db, NULL) undoes its
** registrations when a later part fails to load. */
int chash_function(sqlite3 *db, const char *zName, int nArg, int flags,
                   chash_conn *conn,
                   void (*xFunc)(sqlite3_context *, int, sqlite3_value **),
                   void (*xStep)(sqlite3_context *, int, sqlite3_value **),
                   void (*xFinal)(sqlite3_context *));
/* A part's scalar functions, registered (or removed) as chash_function
** does, n of them. */
typedef struct chash_function_def {
  const char *zName;
  int nArg;
  int flags;
  void (*xFunc)(sqlite3_context *, int, sqlite3_value **);
} chash_function_def;
int chash_functions(sqlite3 *db, chash_conn *conn,
                    const chash_function_def *aFunc, size_t n);
/* A statement's hold on rings (spec_stmt.c), of nByte bytes: the one the
** connection kept or a new one (NULL: out of memory). Given back when its
** statement ends, holding a reference to conn until then. */
void *conn_hold_take(chash_conn *conn, size_t nByte);
void conn_hold_give(chash_conn *conn, void *p);
/* The hold the connection keeps for the next statement (NULL: none), left
** in place. */
void *conn_hold_spare(chash_conn *conn);
/* Free hold p with the references it keeps (spec_stmt.c): what the
** connection calls for its spare when it drops it. */
void stmt_hold_free(void *p);
/* Drop every ring the connection's caches hold. */
void conn_forget_rings(chash_conn *conn);

/*
** Whether the connection may keep prepared statements between SQL
** statements: from when close_hook.c's table is connected (bKeep 1) until
** it is disconnected (bKeep 0), which finalizes every kept statement and
** ends keeping them.
*/
void conn_keep_statements(chash_conn *conn, int bKeep);

/* ---------------------------------------------------------- empty_table.c */

/* The methods of a table with no rows (chash_close_hook, chash_txn). */
int empty_table_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo);
int empty_table_open(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor);
int empty_table_close(sqlite3_vtab_cursor *pCursor);
int empty_table_filter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv);
int empty_table_next(sqlite3_vtab_cursor *pCursor);
int empty_table_eof(sqlite3_vtab_cursor *pCursor);
int empty_table_column(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                       int iCol);
int empty_table_rowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid);

/* ----------------------------------------------------------- close_hook.c */

int close_hook_register(sqlite3 *db, chash_conn *conn);
/* Connect the hook's table (conn_keep_statements(conn, 1) if it works). */
void close_hook_connect(sqlite3 *db);

/*
** The ring named by the spec pSpec (NULL: the argument is omitted, so the
** default ring). Resolved once per statement; the ring stays valid until
** the statement ends, so results may point into it. On error, the error
** (prefixed by zFunc) is set on ctx and NULL is returned.
*/
ring *spec_ring_arg(sqlite3_context *ctx, sqlite3_value *pSpec,
                    const char *zFunc);

/* The same for argument iArg of a function call (-1: omitted), faster on
** every row after the first when the argument is a constant: its ring is
** then the argument's auxdata (spec_stmt.c), read inline. */
ring *spec_ring_at_first(sqlite3_context *ctx, sqlite3_value **argv,
                         int iArg, const char *zFunc);
static inline ring *spec_ring_at(sqlite3_context *ctx, sqlite3_value **argv,
                                 int iArg, const char *zFunc){
  ring *r = iArg>=0 ? sqlite3_get_auxdata(ctx, iArg) : NULL;
  return r ? r : spec_ring_at_first(ctx, argv, iArg, zFunc);
}

/*
** The same resolution for callers without a function context (the
** table-valued functions): spec value pSpec (NULL: omitted, the default
** ring) with the connection's caches. On success *ppRing is a new
** reference the caller releases, and *pWhere (if not NULL) names the table,
** freed with spec_table_free. On error, *pzErr says why, prefixed by zFunc
** (NULL on SQLITE_NOMEM).
*/
int spec_ring_value(chash_conn *conn, sqlite3_value *pSpec, const char *zFunc,
                    ring **ppRing, spec_table *pWhere, char **pzErr);

/* A ring spec argument as read: its type (SQLITE_NULL: omitted) and value. */
typedef struct spec_arg {
  int eType;               /* SQLITE_TEXT, SQLITE_INTEGER or SQLITE_NULL */
  const char *z;           /* TEXT: the spec */
  int n;                   /* TEXT: its bytes */
  int64_t i;               /* INTEGER: the version */
} spec_arg;

/* Read spec argument pSpec (NULL: omitted). SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ERROR with *pzErr saying what is wrong with it. */
int spec_arg_read(sqlite3_value *pSpec, const char *zFunc, spec_arg *a,
                  char **pzErr);

/*
** The last check of a remembered spec's stamp in one SQL statement. Another
** spec of the same table resolved later in that statement (ch_moved's
** second) needs no query of its own while the connection's change count is
** the same: nothing else runs in between but the statement itself, and
** then both rings are of one moment.
*/
typedef struct spec_state {
  int64_t nChange;             /* the connection's change count */
  int nDb;                     /* its schemas */
  unsigned nDataVersion;       /* main's data version, main settled */
} spec_state;

typedef struct spec_checked {
  const ring_cache_entry *e;   /* the entry checked, or NULL */
  uint64_t born;               /* e->born then: e is still that entry */
  int64_t nChange;             /* the connection's change count then */
  spec_state at;               /* the state of that check, main settled */
  int bAt;                     /* the ring resolved last is current while
                               ** the connection is in state at */
} spec_checked;

/* Is the connection in state *pAt, main settled (spec.c), with no spec
** being resolved? Then every ring found current in that state still is. */
int spec_state_holds(chash_conn *conn, const spec_state *pAt);

/* Resolve a read spec to a new ring reference; errors are prefixed with
** zFunc into *pzErr (none for SQLITE_NOMEM). pChecked (may be NULL): the
** statement's last check, used and updated. */
int spec_arg_resolve(chash_conn *conn, const spec_arg *a, const char *zFunc,
                     ring **ppRing, spec_table *pWhere,
                     spec_checked *pChecked, char **pzErr);

/* The current ring of table zSchema.zName (for the table's own columns);
** the caller releases it. */
int spec_current_ring(chash_conn *conn, const char *zSchema,
                      const char *zName, ring **ppRing, char **pzErr);

/*
** The ring of spec pSpec (NULL: omitted) as a message names it, quoted:
** the spec's text ('shards@0'; an inline ring cut short after 60 bytes),
** or for the default ring (an omitted or integer spec) its table
** ('main.shards', 'main.shards@0'). NULL if out of memory.
*/
char *spec_display(chash_conn *conn, sqlite3_value *pSpec);

/*
** The chash table a ring argument names, for functions that read the table
** itself (ch_check): pSpec is [schema.]name, or NULL for the default ring
** (the only one). The schema and the name as stored go to *pzSchema and
** *pzName, freed by the caller. On error, *pzErr says why, prefixed by
** zFunc (NULL on SQLITE_NOMEM).
*/
int spec_ring_table(chash_conn *conn, sqlite3_value *pSpec, const char *zFunc,
                    char **pzSchema, char **pzName, char **pzErr);

/* ---------------------------------------------------------------- check.c */

/*
** Check the shadow tables of ring table zSchema.zName (check.c says what
** is checked). *pzReport gets NULL if every check holds, else the
** problems, one per line (free it). bQuick (PRAGMA quick_check) leaves out
** building every version; bGaps (ch_check) adds what the algorithm says
** of the last version (ring_describe_gaps). Returns SQLITE_OK, or the
** error that stopped it.
*/
int check_ring(sqlite3 *db, const char *zSchema, const char *zName,
               int bQuick, int bGaps, char **pzReport);

/* ch_check([ring]): 'ok', or the problems check_ring finds. */
void check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---------------------------------------------------------------- funcs.c */

/* Each part's X_register(db, conn) registers its functions or modules
** with conn, and X_register(db, NULL) removes them (chash_function). */
int funcs_register(sqlite3 *db, chash_conn *conn);

/* ----------------------------------------------------------- aggregates.c */

/* The aggregates ch_tally and ch_flows. */
int aggregates_register(sqlite3 *db, chash_conn *conn);

/* ------------------------------------------------------------------ tvf.c */

/* The table-valued functions ch_points, ch_arcs, ch_diff, ch_replicas,
** ch_history. */
int tvf_register(sqlite3 *db, chash_conn *conn);

/* ----------------------------------------------------------------- vtab.c */

/* Registers the chash module and the sentinel of txn.c, which hold conn
** through their chash_txn. */
int vtab_register(sqlite3 *db, chash_conn *conn);

/* INSERT INTO t(t) VALUES (spec): make ring table zName's nodes those of
** the spec (vtab_pool.c). On error *pzErr says why (NULL: out of memory). */
int vtab_pool_load(chash_conn *conn, const char *zName, ring_store *st,
                   sqlite3_value *pSpec, char **pzErr);

/* ch_config and ch_export (config_funcs.c). */
int config_funcs_register(sqlite3 *db, chash_conn *conn);

/* ------------------------------------------------------------------ txn.c */

/* The state of the connection's transaction, holding a reference to conn;
** txn_release is the destructor of the two modules registered with it
** (txn_register counts the second). */
chash_txn *txn_new(chash_conn *conn);
void txn_release(void *pTxn);
chash_conn *txn_conn(chash_txn *txn);
/* Register the sentinel table chash_txn. */
int txn_register(sqlite3 *db, chash_txn *txn);

/* Before a change to the ring zSchema.zName (creation tag created): the
** ring is noted for the commit, and a raise of its epoch by a failed COMMIT
** of this transaction is taken back. */
int txn_before_change(chash_txn *txn, sqlite3 *db, const char *zSchema,
                      const char *zName, int64_t created);
/* Ring zOld of zSchema is being renamed to zNew: the commit looks under
** both names. */
int txn_renamed(chash_txn *txn, const char *zSchema, const char *zOld,
                const char *zNew);
/* A ring was dropped: the next xSync looks again. */
void txn_changed(chash_txn *txn);
/* A table that is dropped inside a transaction enlists the sentinel. */
void txn_enlist(chash_txn *txn, sqlite3 *db);
/* What a ring table and the sentinel start with, for the methods below. */
typedef struct txn_table {
  sqlite3_vtab base;       /* base class, must be first */
  sqlite3 *db;
  chash_txn *txn;
} txn_table;
/* xSync: commit every ring the transaction changed; the error goes on p.
** pStore (or NULL): the calling table's store, used for its own ring while
** that is still under its name (its statements are prepared). */
int txn_table_sync(txn_table *p, ring_store *pStore);
/* xCommit, xRollback, xSavepoint (and xRelease) and xRollbackTo. */
int txn_table_commit(sqlite3_vtab *pVtab);
int txn_table_rollback(sqlite3_vtab *pVtab);
int txn_table_savepoint(sqlite3_vtab *pVtab, int iSavepoint);
int txn_table_rollback_to(sqlite3_vtab *pVtab, int iSavepoint);

#endif

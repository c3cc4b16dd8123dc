/*
** spec_stmt.c: ring specs as SQL functions see them: resolved once per
** statement.
**
** A statement keeps a list of (spec, ring) as SQLite auxdata with a
** negative argument index, which lives until the statement is reset. A
** spec is resolved once per statement (spec.c), so the next statement sees
** other connections' commits, and results may point at node names in a
** ring because the ring outlives every row of the statement. A constant
** spec argument also keeps its ring as the argument's own auxdata, so
** rows after the first skip even the list.
**
** When the statement ends, the connection keeps its list for the next
** statement (conn_hold_give) with the rings, if every one was found
** current in one state of the connection with main settled (spec.c): the
** next statement that finds the connection in that state takes the list
** as it is, with no spec resolved again. An application's router runs the
** same statement for key after key, each a statement of its own.
*/
#include <string.h>

#include "sqlite_layer.h"

#define STMT_CACHE_MAX    256      /* distinct specs in one statement */
#define STMT_CACHE_AUXID  (-0x6368) /* auxdata slot of the statement cache */
#define STMT_FIRST_SPECS  2        /* entries in the cache's own allocation */
#define STMT_SHORT_SPEC   48       /* spec bytes an entry holds itself */

typedef struct stmt_entry {
  int eType;               /* SQLITE_TEXT, SQLITE_INTEGER, or SQLITE_NULL
                           ** for an omitted spec */
  int nSpec;               /* bytes of a TEXT spec: in zShort if they fit, */
  char *zLong;             /* else here */
  char zShort[STMT_SHORT_SPEC];
  int64_t iSpec;           /* value of an INTEGER spec */
  ring *ring;              /* one reference held */
  unsigned argMask;        /* arguments spec_ring_at offered it to */
  int bFound;              /* found or made by this statement before */
} stmt_entry;

/* One block for a statement's first specs, the connection's (conn_hold_take:
** a connection running one statement after another reuses one block);
** more go to an array of their own. */
typedef struct stmt_cache {
  chash_conn *conn;        /* the connection it is given back to */
  int n, nAlloc;
  int iLast;               /* the entry found last: checked first */
  spec_checked checked;    /* the statement's last check of a stamp */
  int bAt;                 /* every entry is current while the connection */
  spec_state at;           /* is in this state (spec_state_holds) */
  stmt_entry *a;           /* aFirst, or an allocated array */
  stmt_entry aFirst[STMT_FIRST_SPECS];
} stmt_cache;

static const char *entry_spec(const stmt_entry *e){
  return e->nSpec<=STMT_SHORT_SPEC ? e->zShort : e->zLong;
}

/* Empty sc's list, releasing its rings. */
static void stmt_cache_clear(stmt_cache *sc){
  for(int i=0; i<sc->n; i++){
    sqlite3_free(sc->a[i].zLong);
    ring_release(sc->a[i].ring);
  }
  if( sc->a!=sc->aFirst ) sqlite3_free(sc->a);
  sc->a = sc->aFirst;
  sc->nAlloc = STMT_FIRST_SPECS;
  sc->n = sc->iLast = 0;
}

void stmt_hold_free(void *p){
  if( p==NULL ) return;
  stmt_cache_clear(p);
  sqlite3_free(p);
}

/* The statement's end (SQLite's auxdata destructor): the list is kept for
** the next statement if it is current in one state and in the hold's own
** block. */
static void stmt_cache_free(void *p){
  stmt_cache *sc = p;
  if( !sc->bAt || sc->a!=sc->aFirst ) stmt_cache_clear(sc);
  conn_hold_give(sc->conn, sc);
}

static int state_same(const spec_state *a, const spec_state *b){
  return a->nChange==b->nChange && a->nDb==b->nDb
      && a->nDataVersion==b->nDataVersion;
}

/*
** A statement's first call: the list the connection kept from the last
** statement, made this statement's if the connection is still in the state
** its rings were current in, else emptied. NULL if there is none to take
** (*pbNomem: out of memory setting it).
*/
static stmt_cache *stmt_cache_adopt(sqlite3_context *ctx, int *pbNomem){
  chash_conn *conn = sqlite3_user_data(ctx);
  stmt_cache *sc = conn_hold_spare(conn);
  *pbNomem = 0;
  if( sc==NULL || sc->n==0 ) return NULL;
  if( !sc->bAt || !spec_state_holds(conn, &sc->at) ){
    stmt_cache_clear(sc);
    return NULL;
  }
  conn_hold_take(conn, sizeof(*sc));
  for(int i=0; i<sc->n; i++){
    sc->a[i].argMask = 0;
    sc->a[i].bFound = 0;
  }
  sc->iLast = 0;
  /* Checks of this statement are its own (spec_checked). */
  sc->checked.e = NULL;
  sc->checked.bAt = 0;
  /* On failure SQLite calls the destructor: the list is given back. */
  sqlite3_set_auxdata(ctx, STMT_CACHE_AUXID, sc, stmt_cache_free);
  if( sqlite3_get_auxdata(ctx, STMT_CACHE_AUXID)!=sc ){
    *pbNomem = 1;
    return NULL;
  }
  return sc;
}

/* Is a the spec of type eType, text z of n bytes or integer i? */
static int spec_arg_is(const spec_arg *a, int eType, const char *z, int n,
                       int64_t i){
  if( eType!=a->eType ) return 0;
  if( eType==SQLITE_INTEGER ) return i==a->i;
  if( eType==SQLITE_TEXT ) return n==a->n && memcmp(z, a->z, n)==0;
  return 1;
}

static int entry_matches(const stmt_entry *e, const spec_arg *a){
  return spec_arg_is(a, e->eType, entry_spec(e), e->nSpec, e->iSpec);
}

/* Set the error rc (message zErr, which is freed) on ctx. The code is
** passed on as it is: SQLITE_BUSY and SQLITE_LOCKED tell the caller to
** retry, a corrupt ring is SQLITE_CORRUPT_VTAB. */
static void spec_result_error(sqlite3_context *ctx, int rc, char *zErr){
  if( rc==SQLITE_NOMEM || zErr==NULL ){
    sqlite3_result_error_nomem(ctx);
  }else{
    chash_result_error(ctx, zErr);
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zErr);
}

/* spec_ring_arg, also telling which statement cache entry holds the ring
** and whether the entry was there before this call (*pbKnown). */
static ring *stmt_ring(sqlite3_context *ctx, sqlite3_value *pSpec,
                       const char *zFunc, stmt_entry **ppEntry, int *pbKnown){
  spec_arg a;
  char *zErr = NULL;
  int rc = spec_arg_read(pSpec, zFunc, &a, &zErr);
  if( rc!=SQLITE_OK ){
    spec_result_error(ctx, rc, zErr);
    return NULL;
  }
  stmt_cache *sc = sqlite3_get_auxdata(ctx, STMT_CACHE_AUXID);
  if( sc==NULL ){
    int bNomem;
    sc = stmt_cache_adopt(ctx, &bNomem);
    if( bNomem ){
      sqlite3_result_error_nomem(ctx);
      return NULL;
    }
  }
  if( sc ){
    /* From the entry found last on: a statement's specs are asked for in
    ** the order they were added. */
    int k = sc->iLast, j = 0;
    while( j<sc->n && !entry_matches(&sc->a[k], &a) ){
      k = k+1<sc->n ? k+1 : 0;
      j++;
    }
    if( j<sc->n ){
      stmt_entry *e = &sc->a[k];
      sc->iLast = k;
      *ppEntry = e;
      *pbKnown = e->bFound;
      e->bFound = 1;
      return e->ring;
    }
    if( sc->n>=STMT_CACHE_MAX ){
      char *zMsg = sqlite3_mprintf("%s: more than %d different ring specs in "
                                   "one statement", zFunc, STMT_CACHE_MAX);
      chash_result_error(ctx, zMsg);
      sqlite3_free(zMsg);
      return NULL;
    }
  }

  *pbKnown = 0;
  ring *r;
  spec_checked first = { NULL, 0, 0, { 0, 0, 0 }, 0 };
  spec_checked *pChecked = sc ? &sc->checked : &first;
  rc = spec_arg_resolve(sqlite3_user_data(ctx), &a, zFunc, &r, NULL, pChecked,
                        &zErr);
  if( rc!=SQLITE_OK ){
    spec_result_error(ctx, rc, zErr);
    return NULL;
  }

  /* Keep r for the rest of the statement. */
  if( sc==NULL ){
    chash_conn *conn = sqlite3_user_data(ctx);
    sc = conn_hold_take(conn, sizeof(*sc));
    if( sc==NULL ) goto nomem;
    sc->conn = conn;
    sc->n = sc->iLast = 0;
    sc->checked = first;
    sc->bAt = 0;
    sc->a = sc->aFirst;
    sc->nAlloc = STMT_FIRST_SPECS;
    sqlite3_set_auxdata(ctx, STMT_CACHE_AUXID, sc, stmt_cache_free);
    if( sqlite3_get_auxdata(ctx, STMT_CACHE_AUXID)!=sc ) goto nomem;
  }
  if( sc->n==sc->nAlloc ){
    int nNew = sc->nAlloc*2;
    stmt_entry *aNew = sqlite3_malloc64(sizeof(stmt_entry)*nNew);
    if( aNew==NULL ) goto nomem;
    memcpy(aNew, sc->a, sizeof(stmt_entry)*sc->n);
    if( sc->a!=sc->aFirst ) sqlite3_free(sc->a);
    sc->a = aNew;
    sc->nAlloc = nNew;
  }
  stmt_entry *e = &sc->a[sc->n];
  e->zLong = NULL;
  e->nSpec = 0;
  if( a.eType==SQLITE_TEXT ){
    char *z = e->zShort;
    if( a.n>STMT_SHORT_SPEC ){
      z = e->zLong = sqlite3_malloc64(a.n);
      if( z==NULL ) goto nomem;
    }
    memcpy(z, a.z, a.n);
  }
  e->eType = a.eType;
  e->nSpec = a.n;
  e->iSpec = a.i;
  e->ring = r;
  e->argMask = 0;
  e->bFound = 1;
  /* The list is current in one state while each entry is, in the same. */
  if( sc->n==0 ){
    sc->bAt = sc->checked.bAt;
    sc->at = sc->checked.at;
  }else{
    sc->bAt = sc->bAt && sc->checked.bAt
           && state_same(&sc->at, &sc->checked.at);
  }
  sc->iLast = sc->n++;
  *ppEntry = e;
  return r;

nomem:
  ring_release(r);
  sqlite3_result_error_nomem(ctx);
  return NULL;
}

ring *spec_ring_arg(sqlite3_context *ctx, sqlite3_value *pSpec,
                    const char *zFunc){
  stmt_entry *e;
  int bKnown;
  return stmt_ring(ctx, pSpec, zFunc, &e, &bKnown);
}

static void release_ring(void *p){
  ring_release(p);
}

/*
** The per-row fast path (spec_ring_at, inline in sqlite_layer.h, calls
** this when the argument has no auxdata). A constant spec argument (the
** usual 'shards') keeps its ring as the argument's own auxdata, which
** SQLite hands back on every row without the statement cache's compare of
** the spec text. SQLite
** drops the auxdata of an argument that is not constant after each call,
** so it is offered once per (spec, argument): a spec that changes from row
** to row costs no allocation per row. It is offered from the second call
** on (the first to find the spec in the statement cache), so a statement
** of one row, the commonest, sets one auxdata, not two.
*/
ring *spec_ring_at_first(sqlite3_context *ctx, sqlite3_value **argv,
                         int iArg, const char *zFunc){
  if( iArg<0 ) return spec_ring_arg(ctx, NULL, zFunc);
  ring *r;
  stmt_entry *e;
  int bKnown;
  r = stmt_ring(ctx, argv[iArg], zFunc, &e, &bKnown);
  if( r && bKnown && iArg<32 && (e->argMask & (1u << iArg))==0 ){
    e->argMask |= 1u << iArg;
    ring_retain(r);
    sqlite3_set_auxdata(ctx, iArg, r, release_ring);
  }
  return r;
}

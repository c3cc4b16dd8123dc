/*
** aggregates.c: the aggregate functions of chash, which count keys in one
** pass instead of grouping them (GROUP BY sorts every row first).
**
**   ch_tally(key [, ring])    '{"node": keys, ...}': how many of the keys
**                             each node of the ring owns; every node is
**                             present (0 where none), in the ring's node
**                             order (by name, bytewise)
**   ch_flows(key, old, new)   '[["src", "dst", keys], ...]': the keys whose
**                             owner differs between two rings, per source
**                             and destination, ordered by src then dst
**
** A NULL key is not counted (as count(x) skips NULL). Over no rows at all
** both give NULL, as sum() does: without a row there is no ring to name
** the nodes of. The ring arguments must name the same ring on every row;
** it is resolved as the scalar functions resolve it (spec_stmt.c), so the
** counts are those of one snapshot of the ring. (Not through spec_ring_at:
** SQLite keeps an aggregate's argument auxdata from row to row even where
** the argument is not constant.)
**
** The state lives in SQLite's aggregate context: ch_tally keeps one
** counter per node; ch_flows an open-addressing table keyed by the pair
** (old node, new node), since the matrix of a 10,000-node ring would not
** fit, while the pairs that occur are few (a change moves keys to and
** from few nodes).
*/
#include <stdlib.h>
#include <string.h>

#include "key_value.h"
#include "sqlite_layer.h"

/* The flag that says a function may set a result's subtype (SQLite 3.45;
** older versions ignore it, and older headers lack it). */
#ifndef SQLITE_RESULT_SUBTYPE
#define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* ------------------------------------------------------------ JSON output */

/* Append node name z (n bytes) to s as a JSON string, escaped as SQLite's
** json_quote() escapes it (so the text equals json_group_object's). */
static void json_append_name(sqlite3_str *s, const char *z, size_t n){
  static const char hex[] = "0123456789abcdef";
  static const char shortEscape[32] = {
    ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'
  };
  sqlite3_str_appendchar(s, 1, '"');
  for(size_t i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c=='"' || c=='\\' ){
      sqlite3_str_appendchar(s, 1, '\\');
      sqlite3_str_appendchar(s, 1, (char)c);
    }else if( c<0x20 && shortEscape[c] ){
      sqlite3_str_appendchar(s, 1, '\\');
      sqlite3_str_appendchar(s, 1, shortEscape[c]);
    }else if( c<0x20 ){
      char esc[6] = { '\\', 'u', '0', '0', hex[c>>4], hex[c&15] };
      sqlite3_str_append(s, esc, 6);
    }else{
      sqlite3_str_appendchar(s, 1, (char)c);
    }
  }
  sqlite3_str_appendchar(s, 1, '"');
}

/* Make s the result of ctx (or its error), and free s. */
static void json_result(sqlite3_context *ctx, sqlite3_str *s){
  int rc = sqlite3_str_errcode(s);
  int n = sqlite3_str_length(s);
  char *z = sqlite3_str_finish(s);
  if( rc!=SQLITE_OK || z==NULL ){
    sqlite3_free(z);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, z, n, sqlite3_free);
  sqlite3_result_subtype(ctx, 'J');     /* JSON, as SQLite's json() marks it */
}

/* Set "zFunc: ..." as the aggregate's error. */
static void aggregate_error(sqlite3_context *ctx, const char *zFunc,
                            const char *zWhat){
  char *zMsg = sqlite3_mprintf("%s: %s", zFunc, zWhat);
  chash_result_error(ctx, zMsg);
  sqlite3_free(zMsg);
}

/*
** The ring argument of an aggregate, as the first row gave it: its spec
** (kept to compare later rows with, without resolving them again) and the
** ring it named, one reference held.
*/
typedef struct aggregate_ring {
  ring *ring;
  int eType;               /* the spec's type: SQLITE_NULL when omitted */
  char *zSpec;             /* TEXT: a copy of the spec */
  int nSpec;
  int64_t iSpec;           /* INTEGER: the version */
} aggregate_ring;

/* Is pSpec (NULL: omitted) the spec of the first row? */
static int same_spec(const aggregate_ring *a, sqlite3_value *pSpec){
  int eType = pSpec ? sqlite3_value_type(pSpec) : SQLITE_NULL;
  if( eType!=a->eType ) return 0;
  if( eType==SQLITE_INTEGER ) return sqlite3_value_int64(pSpec)==a->iSpec;
  if( eType!=SQLITE_TEXT ) return eType==SQLITE_NULL && pSpec==NULL;
  const char *z = (const char *)sqlite3_value_text(pSpec);
  return z && sqlite3_value_bytes(pSpec)==a->nSpec
      && memcmp(z, a->zSpec, a->nSpec)==0;
}

/*
** The ring of argument pSpec (NULL: omitted) on this row: on the first row
** it is resolved and kept in *a; later rows must give the same spec, or
** name the same ring. NULL if an error was set on ctx.
*/
static ring *aggregate_ring_of(sqlite3_context *ctx, aggregate_ring *a,
                               sqlite3_value *pSpec, const char *zFunc,
                               const char *zDiffers){
  if( a->ring && same_spec(a, pSpec) ) return a->ring;
  ring *r = spec_ring_arg(ctx, pSpec, zFunc);
  if( r==NULL ) return NULL;
  if( a->ring ){
    if( r==a->ring ) return r;           /* another spec of the same ring */
    aggregate_error(ctx, zFunc, zDiffers);
    return NULL;
  }
  a->eType = pSpec ? sqlite3_value_type(pSpec) : SQLITE_NULL;
  if( a->eType==SQLITE_TEXT ){
    a->nSpec = sqlite3_value_bytes(pSpec);
    a->zSpec = sqlite3_malloc64(a->nSpec + 1);
    const void *z = sqlite3_value_text(pSpec);
    if( a->zSpec==NULL || z==NULL ){
      sqlite3_result_error_nomem(ctx);
      return NULL;
    }
    memcpy(a->zSpec, z, a->nSpec);
  }else if( a->eType==SQLITE_INTEGER ){
    a->iSpec = sqlite3_value_int64(pSpec);
  }else{
    a->eType = SQLITE_NULL;              /* a value spec_ring_arg refused */
  }
  ring_retain(r);
  a->ring = r;
  return r;
}

static void aggregate_ring_clear(aggregate_ring *a){
  sqlite3_free(a->zSpec);
  ring_release(a->ring);
}

/* Place key v on r (not empty): the owner's index, or -1 for a NULL key
** and where no node owns it. */
static int64_t owner_index(const ring *r, sqlite3_value *v){
  uint32_t owner;
  if( !value_owner(v, r, &owner) || owner==RING_UNOWNED ) return -1;
  return (int64_t)owner;
}

/* --------------------------------------------------------------- ch_tally */

typedef struct tally {
  aggregate_ring arg;      /* the ring argument */
  uint64_t *aCount;        /* ring->n_nodes counters */
  int bError;              /* an error was set: later rows do nothing */
} tally;

static void tally_step(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  tally *t = sqlite3_aggregate_context(ctx, sizeof(*t));
  if( t==NULL ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( t->bError ) return;
  ring *r = aggregate_ring_of(ctx, &t->arg, argc>1 ? argv[1] : NULL,
                              "ch_tally",
                              "the ring must be the same on every row");
  if( r==NULL ){
    t->bError = 1;
    return;
  }
  if( t->aCount==NULL && r->n_nodes>0 ){
    t->aCount = sqlite3_malloc64(sizeof(uint64_t) * r->n_nodes);
    if( t->aCount==NULL ){
      t->bError = 1;
      sqlite3_result_error_nomem(ctx);
      return;
    }
    memset(t->aCount, 0, sizeof(uint64_t) * r->n_nodes);
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return;
  if( r->n_nodes==0 ){
    t->bError = 1;
    aggregate_error(ctx, "ch_tally", "the ring is empty (it has no nodes)");
    return;
  }
  int64_t i = owner_index(r, argv[0]);
  if( i>=0 ) t->aCount[i]++;
}

static void tally_final(sqlite3_context *ctx){
  tally *t = sqlite3_aggregate_context(ctx, 0);
  if( t==NULL ) return;                      /* no rows: NULL */
  const ring *r = t->arg.ring;
  if( !t->bError && r ){
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(s, 1, '{');
    for(uint32_t i=0; i<r->n_nodes; i++){
      const ring_node *node = &r->nodes[i];
      if( i>0 ) sqlite3_str_appendchar(s, 1, ',');
      json_append_name(s, node->name, node->name_len);
      sqlite3_str_appendf(s, ":%llu", (unsigned long long)t->aCount[i]);
    }
    sqlite3_str_appendchar(s, 1, '}');
    json_result(ctx, s);
  }
  sqlite3_free(t->aCount);
  aggregate_ring_clear(&t->arg);
}

/* --------------------------------------------------------------- ch_flows */

/* One (source, destination) pair and its count; src<0 marks a free slot. */
typedef struct flow {
  int64_t src, dst;        /* node indexes on the old and the new ring */
  uint64_t keys;
} flow;

typedef struct flows {
  aggregate_ring old, new; /* the two ring arguments */
  int64_t *aSame;          /* old node i is node aSame[i] of new, or -1 */
  flow *aFlow;             /* nSlot slots (a power of two), nUsed in use */
  uint64_t nSlot, nUsed;
  int bError;
} flows;

/* For each node of rOld, its index on rNew (-1 if absent): both are
** sorted by name, so one merge. */
static int64_t *same_nodes(const ring *rOld, const ring *rNew){
  int64_t *a = sqlite3_malloc64(sizeof(int64_t) * (rOld->n_nodes + 1));
  if( a==NULL ) return NULL;
  uint32_t j = 0;
  for(uint32_t i=0; i<rOld->n_nodes; i++){
    const ring_node *x = &rOld->nodes[i];
    int c = 1;
    while( j<rNew->n_nodes ){
      const ring_node *y = &rNew->nodes[j];
      size_t n = x->name_len<y->name_len ? x->name_len : y->name_len;
      c = memcmp(y->name, x->name, n);
      if( c==0 ) c = (y->name_len>x->name_len) - (y->name_len<x->name_len);
      if( c>=0 ) break;
      j++;
    }
    a[i] = (j<rNew->n_nodes && c==0) ? (int64_t)j : -1;
  }
  a[rOld->n_nodes] = rNew->n_nodes;          /* no owner stays no owner */
  return a;
}

static uint64_t flow_slot(int64_t src, int64_t dst, uint64_t nSlot){
  uint64_t h = ((uint64_t)src << 32 ^ (uint64_t)dst) * 0x9e3779b97f4a7c15ULL;
  return (h >> 17) & (nSlot - 1);
}

/* Double the table (or make its first 64 slots). 0 on out of memory. */
static int flows_grow(flows *f){
  uint64_t nSlot = f->nSlot ? f->nSlot * 2 : 64;
  flow *a = sqlite3_malloc64(sizeof(flow) * nSlot);
  if( a==NULL ) return 0;
  for(uint64_t i=0; i<nSlot; i++) a[i].src = -1;
  for(uint64_t i=0; i<f->nSlot; i++){
    if( f->aFlow[i].src<0 ) continue;
    uint64_t k = flow_slot(f->aFlow[i].src, f->aFlow[i].dst, nSlot);
    while( a[k].src>=0 ) k = (k + 1) & (nSlot - 1);
    a[k] = f->aFlow[i];
  }
  sqlite3_free(f->aFlow);
  f->aFlow = a;
  f->nSlot = nSlot;
  return 1;
}

/* Count one key moving from src to dst. 0 on out of memory. */
static int flows_add(flows *f, int64_t src, int64_t dst){
  if( (f->nUsed + 1) * 2 > f->nSlot && !flows_grow(f) ) return 0;
  uint64_t k = flow_slot(src, dst, f->nSlot);
  while( f->aFlow[k].src>=0 ){
    if( f->aFlow[k].src==src && f->aFlow[k].dst==dst ){
      f->aFlow[k].keys++;
      return 1;
    }
    k = (k + 1) & (f->nSlot - 1);
  }
  f->aFlow[k].src = src;
  f->aFlow[k].dst = dst;
  f->aFlow[k].keys = 1;
  f->nUsed++;
  return 1;
}

static void flows_step(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  flows *f = sqlite3_aggregate_context(ctx, sizeof(*f));
  if( f==NULL ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( f->bError ) return;
  f->bError = 1;                   /* until this row is counted */
  static const char zDiffers[] = "the rings must be the same on every row";
  ring *rOld = aggregate_ring_of(ctx, &f->old, argv[1], "ch_flows", zDiffers);
  if( rOld==NULL ) return;
  ring *rNew = aggregate_ring_of(ctx, &f->new, argv[2], "ch_flows", zDiffers);
  if( rNew==NULL ) return;
  if( f->aSame==NULL ){
    f->aSame = same_nodes(rOld, rNew);
    if( f->aSame==NULL ){
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    f->bError = 0;
    return;
  }
  if( rOld->n_nodes==0 || rNew->n_nodes==0 ){
    aggregate_error(ctx, "ch_flows", rOld->n_nodes==0
                    ? "the old ring is empty (it has no nodes)"
                    : "the new ring is empty (it has no nodes)");
    return;
  }
  uint32_t iOld, iNew;
  if( !value_owners(argv[0], rOld, rNew, &iOld, &iNew) ){
    f->bError = 0;                  /* no owner on one ring: not counted */
    return;
  }
  /* Where no node owns the key: index n_nodes, written as null. */
  int64_t src = iOld==RING_UNOWNED ? rOld->n_nodes : iOld;
  int64_t dst = iNew==RING_UNOWNED ? rNew->n_nodes : iNew;
  if( f->aSame[src]!=dst && !flows_add(f, src, dst) ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  f->bError = 0;
}

/* Node i of r as a JSON string, or null for n_nodes (no owner). */
static void flow_append_node(sqlite3_str *s, const ring *r, int64_t i){
  if( i==(int64_t)r->n_nodes ){
    sqlite3_str_appendall(s, "null");
  }else{
    json_append_name(s, r->nodes[i].name, r->nodes[i].name_len);
  }
}

static int flow_cmp(const void *a, const void *b){
  const flow *x = a, *y = b;
  if( x->src!=y->src ) return x->src<y->src ? -1 : 1;
  return (x->dst>y->dst) - (x->dst<y->dst);
}

static void flows_final(sqlite3_context *ctx){
  flows *f = sqlite3_aggregate_context(ctx, 0);
  if( f==NULL ) return;                      /* no rows: NULL */
  const ring *rOld = f->old.ring, *rNew = f->new.ring;
  if( !f->bError && rOld && rNew ){
    /* Gather the used slots at the front, in (src, dst) order: both rings'
    ** nodes are sorted by name, so this is the order of the names. */
    uint64_t n = 0;
    for(uint64_t i=0; i<f->nSlot; i++){
      if( f->aFlow[i].src>=0 ) f->aFlow[n++] = f->aFlow[i];
    }
    if( n>0 ) qsort(f->aFlow, n, sizeof(flow), flow_cmp);
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(s, 1, '[');
    for(uint64_t i=0; i<n; i++){
      if( i>0 ) sqlite3_str_appendchar(s, 1, ',');
      sqlite3_str_appendchar(s, 1, '[');
      flow_append_node(s, rOld, f->aFlow[i].src);
      sqlite3_str_appendchar(s, 1, ',');
      flow_append_node(s, rNew, f->aFlow[i].dst);
      sqlite3_str_appendf(s, ",%llu]", (unsigned long long)f->aFlow[i].keys);
    }
    sqlite3_str_appendchar(s, 1, ']');
    json_result(ctx, s);
  }
  sqlite3_free(f->aFlow);
  sqlite3_free(f->aSame);
  aggregate_ring_clear(&f->old);
  aggregate_ring_clear(&f->new);
}

int aggregates_register(sqlite3 *db, chash_conn *conn){
  static const int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS | SQLITE_RESULT_SUBTYPE;
  static const struct {
    const char *zName;
    int nArg;
    void (*xStep)(sqlite3_context *, int, sqlite3_value **);
    void (*xFinal)(sqlite3_context *);
  } aFunc[] = {
    { "ch_tally", 1, tally_step, tally_final },
    { "ch_tally", 2, tally_step, tally_final },
    { "ch_flows", 3, flows_step, flows_final },
  };
  for(size_t i=0; i<sizeof(aFunc)/sizeof(aFunc[0]); i++){
    int rc = chash_function(db, aFunc[i].zName, aFunc[i].nArg, flags, conn,
                            NULL, aFunc[i].xStep, aFunc[i].xFinal);
    if( rc!=SQLITE_OK && conn ) return rc;
  }
  return SQLITE_OK;
}

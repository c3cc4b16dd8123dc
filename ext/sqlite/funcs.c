/*
** funcs.c: the scalar SQL functions of chash.
**
**   ch_locate(key [, ring])    the node that owns key
**   ch_moved(key, old, new)    1 if key's owner differs between two rings
**   ch_hash(key [, hash])      the key's 64-bit position, as a signed integer
**   ch_epoch([ring])           the ring's version number
**   ch_version()               the extension's version
**   ch_check([ring])           'ok' or the ring's damage (check.c)
**
** Flags, and why:
**   - ch_locate, ch_moved, ch_epoch read a ring that can change, so they are
**     not DETERMINISTIC (no indexes or generated columns on them). They only
**     read the ring's shadow tables on the same connection and have no side
**     effects, so they are INNOCUOUS: views and triggers may use them even
**     with trusted_schema=OFF. ch_check reads the shadow tables too.
**   - ch_hash and ch_version are pure: DETERMINISTIC and INNOCUOUS.
*/
#include <string.h>

#include "key_value.h"
#include "sqlite_layer.h"

/* Set "zFunc: ring '...' is empty" on ctx, naming the ring of spec pSpec
** (NULL: omitted): rings with no nodes own no key. */
static void error_empty(sqlite3_context *ctx, const char *zFunc,
                        sqlite3_value *pSpec){
  char *zRing = spec_display(sqlite3_user_data(ctx), pSpec);
  char *zMsg = zRing ? sqlite3_mprintf("%s: ring %s is empty (it has no "
                                       "nodes)", zFunc, zRing) : NULL;
  chash_result_error(ctx, zMsg);
  sqlite3_free(zMsg);
  sqlite3_free(zRing);
}

/* Node i of r, or NULL for RING_UNOWNED (a slot no master serves). */
static const ring_node *node_of(const ring *r, uint32_t i){
  return i==RING_UNOWNED ? NULL : &r->nodes[i];
}

/* ch_locate(key [, ring]) */
static void locate_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3_value *pSpec = argc>1 ? argv[1] : NULL;
  ring *r = spec_ring_at(ctx, argv, argc>1 ? 1 : -1, "ch_locate");
  if( r==NULL ) return;
  if( r->n_nodes==0 ){
    /* A NULL key has no owner, on any ring (an empty one too). */
    if( sqlite3_value_type(argv[0])!=SQLITE_NULL ){
      error_empty(ctx, "ch_locate", pSpec);
    }
    return;
  }
  uint32_t owner;
  if( !value_owner(argv[0], r, &owner) || owner==RING_UNOWNED ) return;
  /* The ring outlives the statement's rows (spec.c), so no copy. */
  const ring_name *name = &r->names[owner];
  sqlite3_result_text(ctx, name->name, (int)name->name_len, SQLITE_STATIC);
}

/* ch_moved(key, old, new) */
static void moved_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  ring *rOld = spec_ring_at(ctx, argv, 1, "ch_moved");
  if( rOld==NULL ) return;
  ring *rNew = spec_ring_at(ctx, argv, 2, "ch_moved");
  if( rNew==NULL ) return;
  if( rOld->n_nodes==0 || rNew->n_nodes==0 ){
    /* A NULL key has no owner, on any ring (an empty one too). */
    if( sqlite3_value_type(argv[0])!=SQLITE_NULL ){
      error_empty(ctx, "ch_moved", rOld->n_nodes==0 ? argv[1] : argv[2]);
    }
    return;
  }
  uint32_t src, dst;
  if( !value_owners(argv[0], rOld, rNew, &src, &dst) ){
    return;                         /* no owner on one ring or the other */
  }
  /* No owner (NULL) to no owner is no move; to or from a node is. */
  const ring_node *a = node_of(rOld, src);
  const ring_node *b = node_of(rNew, dst);
  int bMoved = a==NULL || b==NULL ? a!=b
             : a->name_len!=b->name_len
               || memcmp(a->name, b->name, a->name_len)!=0;
  sqlite3_result_int(ctx, bMoved);
}

/* ch_hash(key [, hash]) */
static void hash_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  hash_id h = HASH_XXH3;                 /* seed 0, as a ring's default */
  if( argc>1 ){
    static const char *const azType[] = {
      "", "an integer", "a real", "", "a blob", "NULL"
    };
    int eType = sqlite3_value_type(argv[1]);
    const char *zHash = (const char *)sqlite3_value_text(argv[1]);
    int iHash = eType==SQLITE_TEXT && zHash ? hash_from_name(zHash) : -1;
    if( iHash<0 ){
      char zList[400];
      char *zMsg;
      if( eType==SQLITE_TEXT && zHash==NULL ){
        zMsg = NULL;                                 /* out of memory */
      }else if( eType==SQLITE_TEXT ){
        zMsg = sqlite3_mprintf("ch_hash: unknown hash " CHASH_ECHO
                               "; accepted: %s", zHash, chash_cut_mark(zHash),
                               hash_names(zList, sizeof(zList)));
      }else{
        zMsg = sqlite3_mprintf("ch_hash: the hash name must be text, not %s; "
                               "accepted: %s", azType[eType],
                               hash_names(zList, sizeof(zList)));
      }
      chash_result_error(ctx, zMsg);
      sqlite3_free(zMsg);
      return;
    }
    h = (hash_id)iHash;
  }
  char zInt[24];
  const void *p;
  size_t n;
  if( key_bytes(argv[0], zInt, &p, &n) && hash_identity_ok(h, p, n) ){
    sqlite3_result_int64(ctx, (int64_t)hash_bytes(h, 0, p, n));
  }
}

/* ch_keyslot(key): the Redis Cluster slot of a key, 0..16383: the CRC-16
** of the key, or of its {hash tag}, mod 16384. */
static void keyslot_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  char zInt[24];
  const void *p;
  size_t n;
  if( !key_bytes(argv[0], zInt, &p, &n) ) return;
  const void *pTag = hash_tag_part("{}", p, n, &n);
  sqlite3_result_int(ctx, (int)(hash_bytes(HASH_CRC16, 0, pTag, n) % 16384));
}

/* ch_epoch([ring]) */
static void epoch_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ring *r = spec_ring_arg(ctx, argc>0 ? argv[0] : NULL, "ch_epoch");
  if( r==NULL ) return;
  if( r->version<0 ){
    sqlite3_result_error(ctx, "ch_epoch: an inline JSON ring has no versions",
                         -1);
    return;
  }
  sqlite3_result_int64(ctx, r->version);
}

/* ch_version() */
static void version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, CHASH_VERSION, -1, SQLITE_STATIC);
}

int funcs_register(sqlite3 *db, chash_conn *conn){
  static const int placement = SQLITE_UTF8 | SQLITE_INNOCUOUS;
  static const int pure = SQLITE_UTF8 | SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC;
  static const chash_function_def aFunc[] = {
    { "ch_locate",  1, placement, locate_func },
    { "ch_locate",  2, placement, locate_func },
    { "ch_moved",   3, placement, moved_func },
    { "ch_hash",    1, pure,      hash_func },
    { "ch_hash",    2, pure,      hash_func },
    { "ch_keyslot", 1, pure,      keyslot_func },
    { "ch_epoch",   0, placement, epoch_func },
    { "ch_epoch",   1, placement, epoch_func },
    { "ch_version", 0, pure,      version_func },
    { "ch_check",   0, placement, check_func },
    { "ch_check",   1, placement, check_func },
  };
  return chash_functions(db, conn, aFunc, sizeof(aFunc)/sizeof(aFunc[0]));
}

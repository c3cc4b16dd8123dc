/*
** ring.h: the ring core. Pure C, no SQLite calls, testable alone.
**
** A ring is an immutable snapshot (but for a lookup table ring_lookup
** makes for itself, see there) built from a list of (node, weight) pairs
** and a ring_config. It answers "which node owns this key position" and
** "what fraction of the hash space does each node own".
**
** The algorithm is a descriptor (algo.h): each lives in its own file in
** ext/algos/ and says how a ring of it is built, how keys are placed and
** what it can list. The core does what is common to all: checking and
** sorting the nodes, the limits, shares, and the dispatch.
**
** Positions live in [0, 2^b) where b = ring_space_bits(config): 64 for
** xxh3/xxh64, 32 for the other key hashes, 16 for crc16, 15 for crc32, 14
** for redis_cluster (its slots). Shares are exact fractions of that space.
**
** Memory comes from the allocator installed with ring_set_allocator (the
** extension installs SQLite's, so SQLite's accounting and OOM tests see it).
*/
#ifndef CHASH_RING_H
#define CHASH_RING_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "keys.h"

/* Limits, so that no statement can make chash allocate without bound. */
#define RING_MAX_NAME     1024        /* bytes in a node name */
#define RING_MAX_VNODES   100000      /* the vnodes option */
#ifndef RING_MAX_POINTS     /* the fuzz targets build with smaller ones */
#define RING_MAX_POINTS   16777216    /* points in one ring (2^24) */
#endif
#define RING_MAX_NODES    1048576     /* nodes in one ring (2^20) */
#define RING_MAX_WEIGHT   1e9         /* a node's weight */
#define RING_MAX_LABEL    100         /* bytes in a label template */
#define RING_OWN_CONFIG_BYTES 128     /* an algorithm's own options */
#define RING_MAX_COLUMNS  3           /* columns an algorithm declares beyond
                                      ** node and weight (algo.h) */
#define RING_MAX_COLUMN_TEXT 65536    /* bytes in one node's column value */

/* Which of two points at one position wins (the ties option). */
typedef enum ring_ties {
  RING_TIES_NAME = 0,      /* the node whose name sorts first (bytewise) */
  RING_TIES_FIRST,         /* the node that joined first */
  RING_TIES_LAST           /* the node that joined last (a map overwrite) */
} ring_ties;

/* An algorithm: its descriptor (algo.h), and one of its own options
** (options.h). */
typedef struct ring_algo ring_algo;
typedef struct ring_option ring_option;

/* The options of a ring: the common ones, and the algorithm's own in its
** own block (options.h: its descriptor says what is where, and
** RING_OWN_CONFIG reads it). */
typedef struct ring_config {
  const ring_algo *algo;
  hash_id hash;
  int vnodes;              /* points per unit of weight (ring, ketama) */
  uint64_t seed;           /* seed of every hash of this ring */
  char hash_tag[3];        /* the hash_tag option: two characters, such as
                           ** "{}", or "" for none (hash_tag_part) */
  union {
    uint64_t align;
    unsigned char bytes[RING_OWN_CONFIG_BYTES];
  } own;
  int no_columns;          /* 1: a ring table made before its algorithm had
                           ** columns (format 1: redis_cluster's before
                           ** slots), whose nodes have none */
} ring_config;

/* One node of a built ring. */
typedef struct ring_node {
  const char *name;        /* NUL-terminated, owned by the ring */
  uint32_t name_len;       /* bytes in name, without the NUL */
  double weight;
  uint32_t join;           /* rank in the order the nodes joined: 0, 1, ...
                           ** (r->by_join is the other way round) */
  uint32_t points;         /* points on the ring, or slots in a table */
  uint32_t made;           /* points rings: the points its algorithm made
                           ** for it, of which ties took made - points
                           ** (ring_points_make) */
  uint32_t intact;         /* ... and how many of its first made it kept
                           ** before the first it lost (made if none) */
  double share;            /* exact fraction of the hash space owned */
  /* The values of the algorithm's columns (algo.h), in its order: NUL-
  ** terminated, owned by the ring; a value not given is the column's
  ** default, or NULL if it has none. */
  const char *columns[RING_MAX_COLUMNS];
  uint32_t column_len[RING_MAX_COLUMNS];
} ring_node;

/* A node's name again, where a lookup's result reads it (ring.names). */
typedef struct ring_name {
  const char *name;        /* the node's name, NUL-terminated */
  uint32_t name_len;
} ring_name;

typedef struct ring {
  ring_config config;
  ring_keys keys;          /* where keys go (keys.h), from config */
  uint32_t n_nodes;
  ring_node *nodes;        /* sorted by name, bytewise */
  ring_name *names;        /* names[i]: nodes[i]'s name, in 16 bytes where
                           ** a ring_node takes 88: the owners of a big
                           ** ring's lookups share fewer cache lines */
  uint32_t n_points;       /* points rings (algo.h): */
  uint64_t *positions;     /*   n_points positions, ascending: where each
                           **   point's arc ends (the points themselves
                           **   under the successor rule) */
  uint32_t *owners;        /*   owners[i]: index in nodes of point i */
  uint32_t *index;         /*   first point of each bucket of positions */
  unsigned index_shift;    /*   a position's bucket: pos >> index_shift, */
  uint32_t index_last;     /*   at most index_last (ring_index.c) */
  void *owner_table;       /*   big and small rings: the owner of each of
                           **   many finer buckets, or where to look
                           **   (ring_index.c, made by lookups);
                           **   entries of owner_bytes bytes: 1, 2 or 4 */
  unsigned owner_bytes;
  unsigned owner_bits;     /*   2^owner_bits entries: pos >> owner_shift, */
  unsigned owner_shift;    /*   at most owner_last */
  uint32_t owner_last;
  unsigned owner_at_shift; /*   (pos >> owner_at_shift) & owner_at_mask:
                           **   where pos is in its bucket, as one-point */
  uint32_t owner_at_mask;  /*   entries give their point's */
  uint32_t owner_due;      /*   lookups left before the table is made; 0:
                           **   made, or none for this ring. ring_lookup
                           **   writes it: a ring is looked up by one
                           **   thread at a time */
  uint32_t n_units;        /* slots and buckets rings: */
  uint32_t *unit_owners;   /*   unit -> index in nodes */
  uint64_t *tokens;        /* points rings: the points, when positions are
                           ** not (lookup rules other than the successor's,
                           ** ring_points_place); else NULL */
  uint64_t *lows;          /* points rings of 128-bit points (uhashring):
                           ** each token's low 64 bits, in the tokens'
                           ** order, which the tokens (the top 64) and
                           ** positions leave out; else NULL */
  uint32_t *replicas;      /* points rings: each point's number among its
                           ** node's points, or NULL (node_positions) */
  uint32_t *by_join;       /* by_join[j]: index in nodes of the node of
                           ** join rank j (nodes in the order they joined) */
  void *state;             /* the algorithm's own, one block (algo.h) */
  int64_t version;         /* set by the loader: ring version, -1 if none */
  int refs;                /* reference count; freed when it drops to 0 */
} ring;

/* A node as given to ring_build: name (not NUL-terminated) and weight. */
typedef struct ring_input {
  const char *name;
  uint32_t name_len;
  double weight;
  int64_t id;              /* a ring table's node id (join order), else 0 */
  /* The values of the algorithm's columns (not NUL-terminated), in its
  ** order; NULL: not given. Zero them for algorithms without columns. */
  const char *columns[RING_MAX_COLUMNS];
  uint32_t column_len[RING_MAX_COLUMNS];
} ring_input;

/* Result codes of the ring core. */
#define RING_OK      0
#define RING_NOMEM   1
#define RING_INVALID 2           /* bad input; the message says why */

/* Install the allocator (default: malloc, realloc, free). */
void ring_set_allocator(void *(*xMalloc)(size_t), void (*xFree)(void *));

/* Defaults: ring, xxh3, vnodes 160, seed 0, no hash_tag, and the ring
** algorithm's own defaults (label "%s#%d", first 1, ties name). */
void ring_config_default(ring_config *cfg);

/* The algorithm named zName (case-insensitive), or NULL. */
const ring_algo *ring_algorithm_from_name(const char *zName);

/* The name of an algorithm, e.g. "ring". */
const char *ring_algorithm_name(const ring_algo *a);

/* "ring, ketama, ...": every algorithm's name, in registry order, into
** zOut (nOut bytes); for error messages. Returns zOut. */
const char *ring_algorithm_list(char *zOut, size_t nOut);

/* The key rule of rings of cfg (keys.h): its hash, seed and hash tag,
** then what the algorithm's key_rule adds. */
void ring_keys_of(const ring_config *cfg, ring_keys *k);

/* What a node of weight w counts against RING_MAX_POINTS under cfg (the
** descriptor's point_budget; 0 for algorithms without points). Returns -1
** if w is not a positive finite number no larger than RING_MAX_WEIGHT,
** and the budget even when it is over RING_MAX_POINTS (callers check). */
int64_t ring_point_budget(const ring_config *cfg, double w);

/*
** Check a node name: 1..RING_MAX_NAME bytes of valid UTF-8 without NUL.
** Returns NULL if it is fine, else a static message saying what is wrong.
*/
const char *ring_check_name(const char *z, size_t n);

/*
** Node name z (n bytes) as messages quote names, into zOut (nOut bytes, at
** least 6): in single quotes, a quote inside doubled (as SQL writes a
** string); cut short to fit, at a UTF-8 character, with "..." after the
** closing quote.
*/
void ring_quote_name(char *zOut, size_t nOut, const char *z, size_t n);

/*
** What the algorithm of cfg says about weight w (already a valid weight):
** NULL if it is accepted, else a static message (jump takes only 1).
*/
const char *ring_check_weight(const ring_config *cfg, double w);

/*
** Can a ring of cfg hold n nodes? NULL if so, else a message in zErr
** (maglev: the table must have at least as many slots as nodes).
*/
const char *ring_check_count(const ring_config *cfg, uint64_t n, char *zErr,
                             size_t nErr);

/*
** Columns: what an algorithm's nodes carry beyond node and weight (algo.h,
** `columns`: cassandra's tokens, dc and rack). ring_columns counts cfg's
** algorithm's columns (0 for most), ring_column_name names column i, and
** ring_column_find gives the index of the column named zName
** (case-insensitive), or -1. ring_column_list writes "tokens, dc, rack"
** (or "none") into zOut, for messages.
*/
unsigned ring_columns(const ring_config *cfg);
const char *ring_column_name(const ring_config *cfg, unsigned i);
int ring_column_find(const ring_config *cfg, const char *zName);
const char *ring_column_list(const ring_config *cfg, char *zOut, size_t nOut);

/* The value a node has in column i when none is given (NULL: none). */
const char *ring_column_default(const ring_config *cfg, unsigned i);

/*
** Check node zNode's value z (n bytes; NULL: not given) of column i: a
** required column must have one, a value is at most RING_MAX_COLUMN_TEXT
** bytes of UTF-8 without NUL, and the algorithm's check_column must take
** it. 0, or 1 with a message naming the node and the column in zErr.
*/
int ring_check_column(const ring_config *cfg, unsigned i, const char *z,
                      size_t n, const char *zNode, size_t nNode, char *zErr,
                      size_t nErr);

/* Does the ring have points in position order, so that it can be listed
** as points and arcs? */
int ring_has_points(const ring *r);

/* Can ch_points and ch_arcs list the ring's units (its points, or the
** slots of a table)? Then the ring table's points column counts them. */
int ring_lists_units(const ring *r);


/* Bits in cfg's key positions: the algorithm's key_bits, else the hash's
** (hash_space_bits). Positions and shares live in [0, 2^bits). */
unsigned ring_space_bits(const ring_config *cfg);

/*
** A transaction's change to a ring table, as the algorithm's commit check
** sees it (algo.h, check_commit): what changed, not the whole ring, so that
** a check costs what the change does, however long the history and however
** big the ring. The committed version is the last one before the change.
** The parts marked with a RING_COMMIT_* bit are filled in only when the
** algorithm's commit_needs asks for them (they cost a read of every node).
*/
typedef struct ring_commit {
  const ring_input *gone;       /* the committed version's nodes that are
                                ** gone, ascending id, named as they were */
  uint32_t n_gone;
  const ring_input *last_kept;  /* of the committed version's nodes that
                                ** stay, the one with the highest id, as it
                                ** is now; NULL if none stays */
  uint32_t n_nodes;             /* TOTALS or NODES: the nodes after it */
  double weight_sum;            /* TOTALS or NODES: the sum of their
                                ** weights (exact for whole weights) */
  const ring_input *nodes;      /* NODES: every node after it, in join
                                ** order (ascending id), with its column
                                ** values (gone and last_kept have none) */
} ring_commit;

#define RING_COMMIT_TOTALS 0x01
#define RING_COMMIT_NODES  0x02

/* What cfg's commit check reads beyond gone and last_kept: RING_COMMIT_*
** bits (0 for an algorithm without one). */
unsigned ring_commit_needs(const ring_config *cfg);

/*
** The algorithm's check of a commit (algo.h, check_commit). RING_OK if it
** commits; RING_INVALID with a message in zErr; RING_NOMEM.
*/
int ring_check_commit(const ring_config *cfg, const ring_commit *c,
                      char *zErr, size_t nErr);

/* What the algorithm says of built ring r beyond its integrity (algo.h,
** describe_gaps): 0, or 1 with a line for ch_check in zMsg. */
int ring_describe_gaps(const ring *r, char *zMsg, size_t nMsg);

/*
** Build a ring from n nodes. On success *ppRing holds a ring with one
** reference. On RING_INVALID, zErr (nErr bytes) says why (duplicate node,
** bad weight, limits). Duplicate names are an error. The order of aInput
** is the nodes' join order (jump's buckets, the routers' server lists).
*/
int ring_build(const ring_config *cfg, const ring_input *aInput, uint32_t n,
               ring **ppRing, char *zErr, size_t nErr);

/*
** The same as ring_build, but letting the algorithm reuse the work of
** prev (any ring, NULL for none) where it can: algorithm ring keeps the
** points of every node whose name and point count did not change, and
** hashes and merges in only the others. The result is identical to
** ring_build's.
*/
int ring_build_from(const ring *prev, const ring_config *cfg,
                    const ring_input *aInput, uint32_t n, ring **ppRing,
                    char *zErr, size_t nErr);

void ring_retain(ring *r);
void ring_release(ring *r);

/*
** The owner of a unit no node owns: a live Redis Cluster map's slots that
** no master serves. ring_lookup and ring_unit_owner give it for them, and
** the functions answer NULL there (no node).
*/
#define RING_UNOWNED UINT32_MAX

/*
** The index in r->nodes of the node that owns key position pos, or
** RING_UNOWNED. The ring must have at least one node, and its algorithm
** no key_lookup (algo.h: its keys have no one position). A big or small
** ring looked up often enough makes its owner table here (ring_index.c),
** the one change a ring sees after its build: a ring is looked up by one
** thread at a time (the extension's rings belong to one connection).
*/
uint32_t ring_lookup(const ring *r, uint64_t pos);

/*
** The same for a key whose position has 64 bits more below it (low:
** ring_keys_place_low's). On a ring of 128-bit points (r->lows) the key
** (pos, low) goes to the first point strictly above it, so where pos is a
** point's top word, low decides; ring_lookup places a key as if its low
** word were all ones. On any other ring low is ignored. Inline: it runs
** per row, and so does the common case of a ring with an owner table of
** 8 or 16-bit entries (ring_index.c): a key in a bucket that holds no
** point is owned by the bucket's entry, which is an owner where its
** escape bit (OWNER_BYTE_ESCAPE, OWNER_ESCAPE) is clear (the call into
** ring_lookup and its dispatch were a third of the lookup).
** Not on a ring of 128-bit points: its point just before the bucket
** (at the bucket's start - 1) can be above a key at the bucket's start.
*/
#define OWNER_BYTE_ESCAPE 0x80u
#define OWNER_ESCAPE 0x8000u
uint32_t ring_unit_of_low(const ring *r, uint64_t pos, uint64_t low);
static inline uint32_t ring_lookup_low(const ring *r, uint64_t pos,
                                       uint64_t low){
  if( r->lows ) return r->owners[ring_unit_of_low(r, pos, low)];
  if( r->owner_table ){
    uint64_t b = pos >> r->owner_shift;
    if( b>r->owner_last ) b = r->owner_last;
    if( r->owner_bytes==1 ){
      uint32_t e = ((const uint8_t *)r->owner_table)[b];
      if( !(e & OWNER_BYTE_ESCAPE) ) return e;
    }else if( r->owner_bytes==2 ){
      uint32_t e = ((const uint16_t *)r->owner_table)[b];
      if( !(e & OWNER_ESCAPE) ) return e;
    }
  }
  return ring_lookup(r, pos);
}

/* The same for the key of n bytes at p, for every algorithm: its
** key_lookup, or ring_lookup_low of the key's position and low word. */
uint32_t ring_locate_key(const ring *r, const void *p, size_t n);

/*
** Units: the pieces a placement is made of, in order (algo.h): the points
** in position order, the slots of a table, the buckets; none for
** rendezvous. A key's owner is the owner of the unit its position falls
** in (for every algorithm with units); ch_replicas walks on from there.
*/
uint32_t ring_units(const ring *r);
/* The unit position pos falls in (r has units); ring_unit_of_low (above)
** for a key with a low word, as ring_lookup_low. */
uint32_t ring_unit_of(const ring *r, uint64_t pos);
/* The index in r->nodes of the owner of unit k. */
uint32_t ring_unit_owner(const ring *r, uint32_t k);

/* The index in r->nodes of the node named z (n bytes), or -1. */
int64_t ring_find_node(const ring *r, const char *z, size_t n);

#endif

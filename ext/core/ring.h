/*
** ring.h: the ring core. Pure C, no SQLite calls, testable alone.
**
** A ring is an immutable snapshot built from a list of (node, weight) pairs
** and a ring_config. It answers "which node owns this key position" and
** "what fraction of the hash space does each node own".
**
**   algorithm ring: node N gets points i = 1..round(vnodes*weight) (at least
**     one), point i at hash("N#i") under the ring's hash and seed. A key at
**     position p belongs to the first point at or after p (unsigned),
**     wrapping to the first point. Points at equal positions are ordered by
**     node name (bytewise), then by i, so placement never depends on the
**     order nodes were added in.
**   algorithm modn: nodes sorted by name (bytewise); a key at position p
**     belongs to node p mod n. Weights are ignored.
**   algorithm ketama: twemproxy's and libmemcached's weighted MD5 ring
**     (ketama.c); positions are 32-bit.
**   algorithm jump: Lamping & Veach's jump hash over the nodes in the order
**     they were given (jump.c).
**   algorithm rendezvous: highest random weight, logarithmic method
**     (rendezvous.c).
**   algorithm maglev: Maglev's lookup table, filled as Envoy does (maglev.c).
**
** Positions live in [0, 2^b) where b = hash_space_bits(config.hash): 64 for
** xxh3/xxh64, 32 for the other key hashes, 15 for crc32. Shares are exact
** fractions of that space.
**
** Memory comes from the allocator installed with ring_set_allocator (the
** extension installs SQLite's, so SQLite's accounting and OOM tests see it).
*/
#ifndef CHASH_RING_H
#define CHASH_RING_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/* Limits, so that no statement can make chash allocate without bound. */
#define RING_MAX_NAME     1024        /* bytes in a node name */
#define RING_MAX_VNODES   100000      /* the vnodes option */
#ifndef RING_MAX_POINTS     /* the fuzz targets build with smaller ones */
#define RING_MAX_POINTS   16777216    /* points in one ring (2^24) */
#endif
#define RING_MAX_NODES    1048576     /* nodes in one ring (2^20) */
#define RING_MAX_WEIGHT   1e9         /* a node's weight */
#ifndef RING_MAX_TABLE
#define RING_MAX_TABLE    16777213    /* maglev table size (largest prime
                                      ** below 2^24) */
#endif
#define RING_DEFAULT_TABLE 65537      /* maglev table size, as Envoy */

typedef enum ring_algorithm {
  RING_ALGO_RING = 0,      /* virtual-node ring */
  RING_ALGO_MODN,          /* hash mod n, the baseline */
  RING_ALGO_KETAMA,        /* twemproxy/libmemcached weighted MD5 ring */
  RING_ALGO_JUMP,          /* jump consistent hash */
  RING_ALGO_RENDEZVOUS,    /* highest random weight */
  RING_ALGO_MAGLEV,        /* Maglev lookup table */
  RING_ALGO_COUNT
} ring_algorithm;

typedef struct ring_config {
  ring_algorithm algorithm;
  hash_id hash;
  int vnodes;              /* points per unit of weight (ring, ketama) */
  uint64_t seed;           /* seed of every hash of this ring */
  uint32_t table;          /* maglev: lookup table size, a prime */
} ring_config;

/* One node of a built ring. */
typedef struct ring_node {
  const char *name;        /* NUL-terminated, owned by the ring */
  uint32_t name_len;       /* bytes in name, without the NUL */
  double weight;
  uint32_t points;         /* points on the ring, slots in a maglev table
                           ** (0 for modn, jump, rendezvous) */
  double share;            /* exact fraction of the hash space owned */
} ring_node;

typedef struct ring {
  ring_config config;
  uint32_t n_nodes;
  ring_node *nodes;        /* sorted by name, bytewise */
  uint32_t n_points;
  uint64_t *positions;     /* n_points positions, ascending */
  uint32_t *owners;        /* owners[i]: index in nodes of point i */
  uint32_t *buckets;       /* jump: buckets[b] = index in nodes of the b-th
                           ** node given (the join order) */
  uint64_t *node_hashes;   /* rendezvous: per node (name order) hash */
  uint32_t *table;         /* maglev: slot -> index in nodes */
  uint32_t *index;         /* ring, ketama: first point of each bucket of
                           ** positions (ring_index.c) */
  unsigned index_shift;    /* a position's bucket: pos >> index_shift, */
  uint32_t index_last;     /* at most index_last */
  int64_t version;         /* set by the loader: ring version, -1 if none */
  int refs;                /* reference count; freed when it drops to 0 */
} ring;

/* A node as given to ring_build: name (not NUL-terminated) and weight. */
typedef struct ring_input {
  const char *name;
  uint32_t name_len;
  double weight;
} ring_input;

/* Result codes of the ring core. */
#define RING_OK      0
#define RING_NOMEM   1
#define RING_INVALID 2           /* bad input; the message says why */

/* Install the allocator (default: malloc, realloc, free). */
void ring_set_allocator(void *(*xMalloc)(size_t), void (*xFree)(void *));

/* Defaults: ring, xxh3, vnodes 160, seed 0, table 65537. */
void ring_config_default(ring_config *cfg);

/* The canonical name of an algorithm, e.g. "ring". */
const char *ring_algorithm_name(ring_algorithm a);

/* The algorithm named zName (case-insensitive), or -1. */
int ring_algorithm_from_name(const char *zName);

/* "ring, modn, ...": the accepted algorithm names, for error messages. */
const char *ring_algorithm_names(void);

/*
** Points a node of weight w gets under cfg: round(vnodes*w) rounded half
** away from zero, at least 1; for ketama (whose counts depend on the whole
** ring) the most it can get, vnodes; 0 for algorithms without points.
** Returns -1 if w is not a positive finite number no larger than
** RING_MAX_WEIGHT, and the count even when it is over RING_MAX_POINTS
** (callers check).
*/
int64_t ring_node_points(const ring_config *cfg, double w);

/*
** Check a node name: 1..RING_MAX_NAME bytes of valid UTF-8 without NUL.
** Returns NULL if it is fine, else a static message saying what is wrong.
*/
const char *ring_check_name(const char *z, size_t n);

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

/* Does the ring have points in position order (ring, ketama), so that it
** can be listed as points and arcs? */
int ring_has_points(const ring *r);

/*
** Build a ring from n nodes. On success *ppRing holds a ring with one
** reference. On RING_INVALID, zErr (nErr bytes) says why (duplicate node,
** bad weight, limits). Duplicate names are an error.
*/
int ring_build(const ring_config *cfg, const ring_input *aInput, uint32_t n,
               ring **ppRing, char *zErr, size_t nErr);

/*
** The same as ring_build, but reusing the points of prev (any ring, NULL
** for none) where it can: when both use algorithm ring with the same
** config, every node with the same name and point count in both keeps its
** points, and only the other nodes are hashed and merged in. The result is
** identical to ring_build's; the cost is linear in prev's points instead
** of a re-hash and re-sort of them all.
*/
int ring_build_from(const ring *prev, const ring_config *cfg,
                    const ring_input *aInput, uint32_t n, ring **ppRing,
                    char *zErr, size_t nErr);

void ring_retain(ring *r);
void ring_release(ring *r);

/*
** The index in r->nodes of the node that owns key position pos.
** The ring must have at least one node.
*/
uint32_t ring_lookup(const ring *r, uint64_t pos);

/*
** Units: the pieces a placement is made of, in order. ring, ketama: the
** points in position order; maglev: the table slots; jump: the buckets
** (join order); modn: the nodes (name order); rendezvous: none. A key's
** owner is the owner of the unit its position falls in (for every
** algorithm but rendezvous); ch_replicas walks on from there.
*/
uint32_t ring_units(const ring *r);
/* The unit position pos falls in (r has units). */
uint32_t ring_unit_of(const ring *r, uint64_t pos);
/* The index in r->nodes of the owner of unit k. */
uint32_t ring_unit_owner(const ring *r, uint32_t k);

/*
** The positions of node n's points in the order they are made (a ring
** with points; r->nodes[n].points entries in aPos). Returns the replica
** number of aPos[0]; aPos[j] is that number + j.
**   ring:   replica i (1, 2, ...) is at hash("N#i")
**   ketama: replica 4i+w (0, 1, ...) is word w of MD5("N-i")
*/
uint32_t ring_node_positions(const ring *r, uint32_t n, uint64_t *aPos);

/* maglev: the j at which slot s comes in its owner's preference list
** (offset + skip*j) mod table. */
uint64_t ring_slot_preference(const ring *r, uint32_t s);

/* rendezvous: node n's score for the key at pos; the highest wins, ties
** to the lowest index. */
double ring_score(const ring *r, uint32_t n, uint64_t pos);

/* The index in r->nodes of the node named z (n bytes), or -1. */
int64_t ring_find_node(const ring *r, const char *z, size_t n);

#endif

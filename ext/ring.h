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
#define RING_MAX_POINTS   16777216    /* points in one ring (2^24) */
#define RING_MAX_NODES    1048576     /* nodes in one ring (2^20) */
#define RING_MAX_WEIGHT   1e9         /* a node's weight */

typedef enum ring_algorithm {
  RING_ALGO_RING = 0,      /* virtual-node ring */
  RING_ALGO_MODN,          /* hash mod n, the baseline */
  RING_ALGO_COUNT
} ring_algorithm;

typedef struct ring_config {
  ring_algorithm algorithm;
  hash_id hash;
  int vnodes;              /* points per unit of weight (algorithm ring) */
  uint64_t seed;           /* seed of every hash of this ring */
} ring_config;

/* One node of a built ring. */
typedef struct ring_node {
  const char *name;        /* NUL-terminated, owned by the ring */
  uint32_t name_len;       /* bytes in name, without the NUL */
  double weight;
  uint32_t points;         /* points on the ring (0 for modn) */
  double share;            /* exact fraction of the hash space owned */
} ring_node;

typedef struct ring {
  ring_config config;
  uint32_t n_nodes;
  ring_node *nodes;        /* sorted by name, bytewise */
  uint32_t n_points;
  uint64_t *positions;     /* n_points positions, ascending */
  uint32_t *owners;        /* owners[i]: index in nodes of point i */
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

/* Defaults: ring, xxh3, vnodes 160, seed 0. */
void ring_config_default(ring_config *cfg);

/* The canonical name of an algorithm, e.g. "ring". */
const char *ring_algorithm_name(ring_algorithm a);

/* The algorithm named zName (case-insensitive), or -1. */
int ring_algorithm_from_name(const char *zName);

/* "ring, modn": the accepted algorithm names, for error messages. */
const char *ring_algorithm_names(void);

/*
** Points a node of weight w gets under cfg: round(vnodes*w) rounded half
** away from zero, at least 1; 0 for algorithms without points. Returns -1
** if w is not a positive finite number no larger than RING_MAX_WEIGHT, and
** the count even when it is over RING_MAX_POINTS (callers check).
*/
int64_t ring_node_points(const ring_config *cfg, double w);

/*
** Check a node name: 1..RING_MAX_NAME bytes of valid UTF-8 without NUL.
** Returns NULL if it is fine, else a static message saying what is wrong.
*/
const char *ring_check_name(const char *z, size_t n);

/*
** Build a ring from n nodes. On success *ppRing holds a ring with one
** reference. On RING_INVALID, zErr (nErr bytes) says why (duplicate node,
** bad weight, limits). Duplicate names are an error.
*/
int ring_build(const ring_config *cfg, const ring_input *aInput, uint32_t n,
               ring **ppRing, char *zErr, size_t nErr);

void ring_retain(ring *r);
void ring_release(ring *r);

/*
** The index in r->nodes of the node that owns key position pos.
** The ring must have at least one node.
*/
uint32_t ring_lookup(const ring *r, uint64_t pos);

/* The index in r->nodes of the node named z (n bytes), or -1. */
int64_t ring_find_node(const ring *r, const char *z, size_t n);

#endif

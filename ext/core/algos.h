/*
** algos.h: what ring.c and the algorithm files (ketama.c, jump.c,
** rendezvous.c, maglev.c) share inside the core. Not part of the ring API.
**
** Each builder gets a ring whose nodes are filled in (sorted by name,
** weights set) and fills its own fields; it returns RING_OK or RING_NOMEM.
*/
#ifndef CHASH_ALGOS_H
#define CHASH_ALGOS_H

#include "ring.h"

/* The allocator installed with ring_set_allocator. */
void *ring_alloc(size_t n);
void ring_dealloc(void *p);

/* ketama.c: positions, owners, n_points and each node's points. */
int ketama_build(ring *r);
/* ketama.c: the 4 points of node's digest i, MD5("N-i") words 0..3. */
void ketama_digest(const ring_node *node, uint32_t i, uint64_t aPos[4]);

/* jump.c: the bucket in [0, n) of 64-bit key k (n >= 1). */
uint32_t jump_bucket(uint64_t k, uint32_t n);

/* rendezvous.c: node_hashes; the winning node of position pos. */
int rendezvous_build(ring *r);
uint32_t rendezvous_lookup(const ring *r, uint64_t pos);

/* maglev.c: table and each node's points (= slots it owns). */
int maglev_build(ring *r);

#endif

/*
** ring_impl.h: what the files of the ring core share and nobody else uses.
**
**   ring.c         the model: nodes, limits, shares, lookups
**   ring_points.c  a ring's point arrays: hashing labels, sorting, and the
**                  incremental merge that reuses a previous ring's points
**   ring_index.c   the lookup index over the sorted positions
*/
#ifndef CHASH_RING_IMPL_H
#define CHASH_RING_IMPL_H

#include "ring.h"

/* The allocator installed with ring_set_allocator. */
void *ring_alloc(size_t n);
void ring_dealloc(void *p);

/*
** Fill r->positions and r->owners for r's nodes (set up, sorted by name,
** with their point counts), reusing prev's points if prev is not NULL and
** has the same config. RING_OK or RING_NOMEM.
*/
int ring_points_build(ring *r, const ring *prev);

/* Build r->index over r->positions (NULL when the ring has no points). */
int ring_index_build(ring *r);

/* The index of the point that owns pos: the first at or after it,
** wrapping to 0. The ring must have points. */
uint32_t ring_index_find(const ring *r, uint64_t pos);

#endif

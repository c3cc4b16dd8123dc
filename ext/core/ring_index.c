/*
** ring_index.c: the lookup index of a ring's sorted positions.
**
** Positions are hashes, so they are spread evenly over the hash's space
** [0, 2^b) (b = ring_space_bits: 64 down to 14). The index cuts that space
** into 2^bits equal buckets by the top bits of a position and
** keeps, for each bucket b, index[b] = the first point whose position has
** top bits >= b (n_points if there is none). A lookup (ring_index_find,
** inline in ring_index.h) reads one index entry and the few positions after
** it: O(1) expected time and two or three cache lines, where a plain
** binary search over 160,000 points touches about 17 and mispredicts half
** its branches.
**
** Size: the largest 2^bits <= n_points/2 (at least 2 buckets), so a bucket
** holds 2 to 4 points on average and the index costs at most 2 bytes per
** point (the ring's budget is 16: 8 position + 4 owner + index).
*/
#include <string.h>

#include "ring_index.h"

int ring_index_build(ring *r){
  r->index = NULL;
  r->index_shift = 63;
  r->index_last = 0;
  if( r->n_points==0 ) return RING_OK;
  unsigned space = ring_space_bits(&r->config);
  unsigned bits = 1;
  while( bits<31 && bits<space
      && ((uint64_t)1 << (bits+1))<=r->n_points/2 ) bits++;
  uint32_t nBucket = (uint32_t)1 << bits;
  uint32_t *index = ring_alloc(sizeof(uint32_t) * nBucket);
  if( index==NULL ) return RING_NOMEM;
  /* Buckets cut the hash's space [0, 2^space); anything above it (no point
  ** or key of this hash is) would fall in the last bucket, still right. */
  unsigned shift = space - bits;
  uint32_t last = nBucket - 1;
  /* Count the points of each bucket, then turn the counts into first
  ** indexes (a running sum): two passes without data-dependent branches. */
  memset(index, 0, sizeof(uint32_t) * nBucket);
  for(uint32_t k=0; k<r->n_points; k++){
    uint64_t b = r->positions[k] >> shift;
    index[b<last ? b : last]++;
  }
  uint32_t sum = 0;
  for(uint32_t b=0; b<nBucket; b++){
    uint32_t c = index[b];
    index[b] = sum;
    sum += c;
  }
  r->index = index;
  r->index_shift = shift;
  r->index_last = last;
  return RING_OK;
}

/*
** ring_index.c: the lookup index of a ring's sorted positions.
**
** Positions are hashes, so they are spread evenly over 2^64. The index cuts
** that space into 2^bits equal buckets by the top bits of a position and
** keeps, for each bucket b, index[b] = the first point whose position has
** top bits >= b (index[2^bits] = n_points). A lookup reads two index
** entries and binary-searches only the bucket's few points: O(1) expected
** time and two or three cache lines, where a plain binary search over
** 160,000 points touches about 17.
**
** Size: the largest 2^bits <= n_points/2 (at least 2 buckets), so a bucket
** holds 2 to 4 points on average and the index costs at most 2 bytes per
** point (the ring's budget is 16: 8 position + 4 owner + index).
*/
#include "ring_impl.h"

int ring_index_build(ring *r){
  r->index = NULL;
  r->index_shift = 63;
  if( r->n_points==0 ) return RING_OK;
  unsigned bits = 1;
  while( bits<31 && ((uint64_t)1 << (bits+1))<=r->n_points/2 ) bits++;
  uint32_t nBucket = (uint32_t)1 << bits;
  uint32_t *index = ring_alloc(sizeof(uint32_t) * ((size_t)nBucket + 1));
  if( index==NULL ) return RING_NOMEM;
  unsigned shift = 64 - bits;
  uint32_t k = 0;
  for(uint32_t b=0; b<nBucket; b++){
    while( k<r->n_points && (r->positions[k] >> shift)<b ) k++;
    index[b] = k;
  }
  index[nBucket] = r->n_points;
  r->index = index;
  r->index_shift = shift;
  return RING_OK;
}

uint32_t ring_index_find(const ring *r, uint64_t pos){
  uint64_t b = pos >> r->index_shift;
  uint32_t lo = r->index[b], hi = r->index[b+1];
  /* Every point of a later bucket is > pos, so the answer is in [lo, hi]. */
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( r->positions[mid]<pos ) lo = mid+1; else hi = mid;
  }
  return lo==r->n_points ? 0 : lo;
}

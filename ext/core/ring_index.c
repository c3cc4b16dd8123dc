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
**
** A big ring (RING_OWNER_TABLE_POINTS points and more: its arrays are
** larger than a cache) also gets an owner table: 4 to 8 entries per point
** of finer buckets, each the owner of every position in its bucket when
** the bucket holds no point (78 to 88% of them), else the bit
** OWNER_TABLE_ESCAPE and the first point at or after the bucket's start.
** A lookup (ring_index_owner) then reads one entry, one cache line, in
** the common case, where the index, positions and owners are three; the
** table costs 16 to 32 bytes per point.
*/
#include <string.h>

#include "ring_index.h"

/* r's owner table over its positions in a space of `space` bits. */
static int owner_table_build(ring *r, unsigned space){
  unsigned bits = 1;
  while( bits<space && ((uint64_t)1 << bits) < (uint64_t)4*r->n_points ) bits++;
  uint64_t nEntry = (uint64_t)1 << bits;
  uint32_t *table = ring_alloc_lookup(sizeof(uint32_t) * nEntry);
  if( table==NULL ) return RING_NOMEM;
  unsigned shift = space - bits;
  uint32_t n = r->n_points, last = (uint32_t)(nEntry - 1);
  /* Walk the points: the buckets before point k's that hold no point go
  ** to k's owner; the bucket of the first point in it is an escape. */
  uint32_t b = 0;
  for(uint32_t k=0; k<n; k++){
    uint64_t bk = r->positions[k] >> shift;
    uint32_t to = bk<last ? (uint32_t)bk : last;
    if( to<b ) continue;                     /* its bucket has a point */
    uint32_t owner = r->owners[k];
    while( b<to ) table[b++] = owner;
    table[b++] = OWNER_TABLE_ESCAPE | k;
  }
  while( b<=last ) table[b++] = r->owners[0];    /* wrapping to point 0 */
  r->owner_table = table;
  r->owner_shift = shift;
  r->owner_last = last;
  return RING_OK;
}

int ring_index_build(ring *r){
  r->index = NULL;
  r->owner_table = NULL;
  r->index_shift = 63;
  r->index_last = 0;
  if( r->n_points==0 ) return RING_OK;
  unsigned space = ring_space_bits(&r->config);
  unsigned bits = 1;
  while( bits<31 && bits<space
      && ((uint64_t)1 << (bits+1))<=r->n_points/2 ) bits++;
  uint32_t nBucket = (uint32_t)1 << bits;
  uint32_t *index = ring_alloc_lookup(sizeof(uint32_t) * nBucket);
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
  return r->n_points>=RING_OWNER_TABLE_POINTS ? owner_table_build(r, space)
                                               : RING_OK;
}

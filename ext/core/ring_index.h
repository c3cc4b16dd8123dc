/*
** ring_index.h: the lookup of a position among a ring's sorted points,
** through the index ring_index.c builds. Inline: it is the whole of a
** points ring's lookup, once per row of a query.
*/
#ifndef CHASH_RING_INDEX_H
#define CHASH_RING_INDEX_H

#include "algo.h"

/*
** The rings that get an owner table (ring_index.c), and when. Big rings,
** of RING_OWNER_TABLE_POINTS points and more (their arrays are larger
** than a cache): 4 to 8 entries a point, made after n_points /
** RING_OWNER_TABLE_DUE lookups without it. Small rings, of at most
** RING_OWNER_TABLE_SMALL points (so that their table is at most 512 kB):
** 8 to 16 entries a point (of 8 bits on rings of up to OWNER_BYTE_NODES
** nodes, so at most 256 kB there), made after
** RING_OWNER_TABLE_SMALL_DUE x n_points lookups. Rings between the two have none: with one, a ring of
** 1,000 nodes x 160 points would cost more than 16 bytes a point.
*/
#define RING_OWNER_TABLE_POINTS 262144
#define RING_OWNER_TABLE_DUE 16
#define RING_OWNER_TABLE_SMALL 32768
#define RING_OWNER_TABLE_SMALL_DUE 2

/*
** Owner table entries of 8 bits (small rings of up to OWNER_BYTE_NODES
** nodes): an owner (OWNER_BYTE_ESCAPE clear, ring.h), or OWNER_BYTE_ESCAPE
** alone for a bucket that holds a point (the lookup takes the index).
** Of 16 bits (rings of up to OWNER_NARROW_NODES
** nodes): an owner (OWNER_ESCAPE clear, ring.h); or OWNER_ONE and the
** top bits (up to OWNER_ONE_BITS) of where the bucket's one point k is
** in it, for a bucket whose
** neighbours hold no point (so that their entries are the owners of k and
** of the point after it); or OWNER_ESCAPE and where the bucket's first
** point is, as its distance from the estimate b * n_points / 2^owner_bits
** plus OWNER_NEAR_BIAS, or OWNER_FAR where that does not fit. Of 32 bits:
** an owner, or OWNER_WIDE_ESCAPE and the first point's index.
*/
#define OWNER_BYTE_NODES 128
#define OWNER_NARROW_NODES 32768
#define OWNER_ONE 0xC000u
#define OWNER_ONE_BITS 14
#define OWNER_PAYLOAD 0x3FFFu
#define OWNER_FAR 0xBFFFu
#define OWNER_NEAR_BIAS 8192
#define OWNER_WIDE_ESCAPE 0x80000000u

/* Count a lookup of r without its owner table, and make the table when
** it is due (ring_index.c). */
void ring_index_owner_due(ring *r);

/* Make r's owner table now: RING_OK, or RING_NOMEM (r is unchanged, and
** still looks up right). */
int ring_index_owner_table(ring *r);

/*
** The index of the point that owns pos: the first at or after it,
** wrapping to 0. The ring must have points.
*/
static inline uint32_t ring_index_find(const ring *r, uint64_t pos){
  const uint64_t *p = r->positions;
  uint32_t n = r->n_points;
  if( r->index==NULL ){
    /* A ring made by hand (unit tests): a plain lower-bound search. */
    uint32_t lo = 0, hi = n;
    while( lo<hi ){
      uint32_t mid = lo + (hi-lo)/2;
      if( p[mid]<pos ) lo = mid+1; else hi = mid;
    }
    return lo==n ? 0 : lo;
  }
  uint64_t b = pos >> r->index_shift;
  uint32_t i = r->index[b<r->index_last ? b : r->index_last];
  /* The owner is next to owners[i]: fetch its line while the positions
  ** are compared, so a large ring costs two memory round trips, not three. */
  __builtin_prefetch(&r->owners[i]);
  /*
  ** The answer is i plus the number of points from i on that are < pos;
  ** points of later buckets are all > pos, so they never count. Count the
  ** next four without branches (a search's branches are coin flips, and
  ** mispredictions cost more than the compares: 2-3x, measured), and go
  ** on one by one only in the rare bucket with more below pos, or near
  ** the end of the array.
  */
  if( i+4<=n ){
    uint32_t c = (p[i]<pos) + (p[i+1]<pos) + (p[i+2]<pos) + (p[i+3]<pos);
    i += c;
    if( c<4 ) return i==n ? 0 : i;
  }
  while( i<n && p[i]<pos ) i++;
  return i==n ? 0 : i;
}

/*
** The owner of pos under the successor rule: owners[ring_index_find(r,
** pos)], through the owner table when the ring has one, so that a big
** ring costs one cache line a lookup in the common case (a bucket without
** a point); in a bucket with points, the scan starts at its first.
*/
static inline uint32_t ring_index_owner(const ring *r, uint64_t pos){
  if( r->owner_table==NULL ){
    /* The one write a lookup makes: ring_lookup's caller looks up a ring
    ** from one thread at a time (ring.h). */
    if( r->owner_due ) ring_index_owner_due((ring *)r);
    return r->owners[ring_index_find(r, pos)];
  }
  uint64_t b = pos >> r->owner_shift;
  if( b>r->owner_last ) b = r->owner_last;
  uint32_t i;
  if( r->owner_bytes==1 ){
    uint32_t e = ((const uint8_t *)r->owner_table)[b];
    if( !(e & OWNER_BYTE_ESCAPE) ) return e;
    return r->owners[ring_index_find(r, pos)];
  }else if( r->owner_bytes==4 ){
    uint32_t e = ((const uint32_t *)r->owner_table)[b];
    if( !(e & OWNER_WIDE_ESCAPE) ) return e;
    i = e & ~OWNER_WIDE_ESCAPE;
  }else{
    const uint16_t *t = r->owner_table;
    uint32_t e = t[b];
    if( !(e & OWNER_ESCAPE) ) return e;
    if( (e & OWNER_ONE)==OWNER_ONE ){
      /* One point, at offset `at` of the bucket (its top bits): keys
      ** before it go to its owner, after it to the next point's. */
      uint32_t at = e & OWNER_PAYLOAD;
      uint32_t key = (uint32_t)(pos >> r->owner_at_shift) & r->owner_at_mask;
      if( key<at ) return t[b-1];
      if( key>at ) return t[b+1];
      return r->owners[ring_index_find(r, pos)];
    }
    if( e==OWNER_FAR ) return r->owners[ring_index_find(r, pos)];
    i = (uint32_t)((b * r->n_points) >> r->owner_bits)
      + (e & OWNER_PAYLOAD) - OWNER_NEAR_BIAS;
  }
  const uint64_t *p = r->positions;
  uint32_t n = r->n_points;
  while( i<n && p[i]<pos ) i++;
  return r->owners[i==n ? 0 : i];
}

#endif

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
** the bucket holds no point (78 to 88% of them), else an escape to the
** first point at or after the bucket's start. A lookup (ring_index_owner)
** then reads one entry, one cache line, in the common case, where the
** index, positions and owners are three. A small ring (at most
** RING_OWNER_TABLE_SMALL points) gets one of 8 to 16 entries per point
** (88 to 94% without a point), at most 512 kB (256 kB up to 128 nodes,
** whose entries are of 8 bits): it fits the cache either
** way, but the table's read is one where the index's are three dependent
** ones, and its common case is inline in the per-row lookup
** (ring_lookup_low, ring.h). Entries are of 16 bits where the
** owners fit (rings of up to 32,768 nodes): an escape then gives the
** first point as its distance from where it would be if the points were
** evenly spread, which positions (hashes) nearly are; a distance that
** does not fit sends the lookup to the index. A small ring of up to 128
** nodes has entries of 8 bits, whose escape is a bare mark that sends
** the lookup to the index: half the memory, and faster in a scan (at
** 100 nodes a table of 128 kB against 256 kB, 2-3 ns a row), though its
** lookups take the index more often (no one-point entries). The
** table costs 8 to 16 bytes per point (16 to 32 with 32-bit entries; in a
** small ring 8 to 16 with 8-bit entries, else 16 to 32).
**
** The table is made only after n_points / RING_OWNER_TABLE_DUE lookups
** without it: filling it costs about what that many lookups lose to the
** memory round trips it saves, so a ring rebuilt after every change to it
** (one node at a time into a big ring) and looked up a few times does not
** pay for a table it does not use, and a ring scanned pays at most twice.
** A small ring's, after RING_OWNER_TABLE_SMALL_DUE x n_points lookups, by
** the same rule: there a lookup saves no memory round trip but about 47
** instructions, and filling the table costs about 73 a point (37 with
** 8-bit entries).
*/
#include <string.h>

#include "ring_index.h"

/* The 16-bit entry of bucket b whose first point is k: a one-point entry
** where it can be one (bOne: k is alone in b, and b's neighbours hold
** none; r's owner_at_shift and owner_at_mask set), else an escape to k. */
static uint16_t owner_escape_narrow(const ring *r, uint64_t b, uint32_t k,
                                    int bOne, unsigned shift, unsigned bits){
  if( bOne && shift>0 ){
    uint64_t at = (r->positions[k] >> r->owner_at_shift) & r->owner_at_mask;
    return (uint16_t)(OWNER_ONE | at);
  }
  int64_t d = (int64_t)k - (int64_t)((b * r->n_points) >> bits)
            + OWNER_NEAR_BIAS;
  if( d<0 || d>=(int64_t)OWNER_PAYLOAD ) return OWNER_FAR;
  return (uint16_t)(OWNER_ESCAPE | (uint32_t)d);
}

/* Entry b of a table of entries of `bytes` bytes (1, 2 or 4). */
static inline void owner_put(void *table, unsigned bytes, uint32_t b,
                             uint32_t v){
  if( bytes==4 ) ((uint32_t *)table)[b] = v;
  else if( bytes==2 ) ((uint16_t *)table)[b] = (uint16_t)v;
  else ((uint8_t *)table)[b] = (uint8_t)v;
}

/* Walk r's points into a table of 2^bits entries: the buckets before
** point k's that hold no point go to k's owner; the bucket of the first
** point in it gets an escape to k, or a one-point entry. Inlined where
** bytes is a constant, so that each width gets a loop of its own. */
static inline __attribute__((always_inline))
void owner_table_fill(const ring *r, void *table, unsigned bytes,
                      unsigned shift, unsigned bits){
  const uint64_t *pos = r->positions;
  const uint32_t *owners = r->owners;
  uint32_t n = r->n_points, last = (uint32_t)(((uint64_t)1 << bits) - 1);
  uint32_t b = 0;
  for(uint32_t k=0; k<n; k++){
    uint64_t bk = pos[k] >> shift;
    uint32_t to = bk<last ? (uint32_t)bk : last;
    if( to<b ) continue;                     /* its bucket has a point */
    uint32_t owner = owners[k], e = OWNER_WIDE_ESCAPE | k;
    if( bytes==1 ){
      e = OWNER_BYTE_ESCAPE;
    }else if( bytes==2 ){
      /* Alone in a bucket between two without a point (not the first or
      ** the last bucket, which wrap)? */
      int bOne = b<to && to<last
              && (k+1==n || (pos[k+1] >> shift) > (uint64_t)to+1);
      e = owner_escape_narrow(r, to, k, bOne, shift, bits);
    }
    while( b<to ) owner_put(table, bytes, b++, owner);
    owner_put(table, bytes, b++, e);
  }
  while( b<=last ) owner_put(table, bytes, b++, owners[0]);  /* wrapping */
}

int ring_index_owner_table(ring *r){
  /* An entry holds an owner, and a slot no master serves (redis_cluster:
  ** RING_UNOWNED) has none: such a ring keeps to its index. */
  for(uint32_t k=0; k<r->n_points; k++){
    if( r->owners[k]==RING_UNOWNED ){
      r->owner_due = 0;
      return RING_OK;
    }
  }
  unsigned space = ring_space_bits(&r->config);
  int bSmall = r->n_points<=RING_OWNER_TABLE_SMALL;
  unsigned bytes = bSmall && r->n_nodes<=OWNER_BYTE_NODES ? 1
                 : r->n_nodes<=OWNER_NARROW_NODES ? 2 : 4;
  uint64_t nPer = bSmall ? 8 : 4;
  unsigned bits = 1;
  while( bits<space && ((uint64_t)1 << bits) < nPer*r->n_points ) bits++;
  void *table = ring_alloc_lookup(bytes * ((size_t)1 << bits));
  if( table==NULL ) return RING_NOMEM;
  unsigned shift = space - bits;
  /* One-point entries keep the top OWNER_ONE_BITS bits of where their
  ** point is in its bucket, or all of them in a smaller bucket. */
  unsigned at = shift>OWNER_ONE_BITS ? OWNER_ONE_BITS : shift;
  r->owner_at_shift = shift - at;
  r->owner_at_mask = ((uint32_t)1 << at) - 1;
  if( bytes==1 ) owner_table_fill(r, table, 1, shift, bits);
  else if( bytes==2 ) owner_table_fill(r, table, 2, shift, bits);
  else owner_table_fill(r, table, 4, shift, bits);
  r->owner_table = table;
  r->owner_bytes = bytes;
  r->owner_bits = bits;
  r->owner_shift = shift;
  r->owner_last = (uint32_t)(((uint64_t)1 << bits) - 1);
  r->owner_due = 0;
  return RING_OK;
}

/* Lookups of r without its owner table before the table is made. */
static uint32_t owner_table_due(const ring *r){
  if( r->n_points<=RING_OWNER_TABLE_SMALL ){
    return RING_OWNER_TABLE_SMALL_DUE * r->n_points;
  }
  return r->n_points / RING_OWNER_TABLE_DUE;
}

void ring_index_owner_due(ring *r){
  if( --r->owner_due ) return;
  /* Without memory for it, the lookups go on through the index, and the
  ** table is tried again as many lookups later. */
  if( ring_index_owner_table(r)!=RING_OK ){
    r->owner_due = owner_table_due(r);
  }
}

int ring_index_build(ring *r){
  r->index = NULL;
  r->owner_table = NULL;
  r->owner_due = 0;
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
  if( r->n_points>=RING_OWNER_TABLE_POINTS
   || r->n_points<=RING_OWNER_TABLE_SMALL ){
    r->owner_due = owner_table_due(r);
  }
  return RING_OK;
}

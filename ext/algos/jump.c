/*
** jump.c: Lamping & Veach's jump consistent hash ("A Fast, Minimal Memory,
** Consistent Hash Algorithm", 2014), written from its definition
** (research/compat-spec.md, 6.1).
**
** The key's 64-bit position is the jump key; the nodes are buckets
** 0..n-1 in the order they joined (ring.c keeps that order in
** r->buckets). Growing n moves only 1/n of the keys, all onto the new
** bucket; so only the last bucket can leave without moving other keys,
** which is why chash refuses to remove any other node. No weights. Lookup
** costs O(log n) steps and no memory.
*/
#include "algos.h"

uint32_t jump_bucket(uint64_t k, uint32_t n){
  int64_t b = -1, j = 0;
  while( j<(int64_t)n ){
    b = j;
    k = k * 2862933555777941757ULL + 1;
    /* The order of the double operations is part of the definition. */
    j = (int64_t)((double)(b+1) * (2147483648.0 / (double)((k >> 33) + 1)));
  }
  return (uint32_t)b;
}

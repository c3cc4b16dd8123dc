/*
** guava.c: algorithm guava, Guava's Hashing.consistentHash(input, buckets)
** (Guava 31, com.google.common.hash.Hashing), written from its definition.
**
** The nodes are buckets 0..n-1 in the order they joined. A key's input is
** a Java long: by default the key's bytes hashed with murmur3_128 (the
** low 64 bits of MurmurHash3 x64 128, which is
** Hashing.murmur3_128().hashString(key, UTF_8).padToLong() for a key in
** UTF-8), or with hash identity the INTEGER key itself, as in
** consistentHash(id, n). Guava seeds a 64-bit linear congruential
** generator with the input and jumps from bucket 0:
**
**   state = 2862933555777941757 * state + 1            (mod 2^64)
**   d = (double)((int)(state >>> 33) + 1) / 2^31
**   next = (int)((candidate + 1) / d)
**
** while next is in [0, buckets) it becomes the candidate; otherwise the
** candidate is the bucket. Two Java details are part of the rule: the
** `+ 1` is 32-bit int arithmetic, so state >>> 33 = 2^31 - 1 gives
** -2^31 and a negative d (then next < 0 and the walk stops); and Java's
** (int) of a double saturates at the int range, where C's is undefined,
** so the conversion is done by hand. It is jump's idea with another
** generator, so it moves keys as jump does: only onto a new last bucket,
** and only the last buckets may leave. No weights.
*/
#include <stdio.h>

#include "algo.h"

/* Java's (int) of a double: NaN is 0, values beyond the int range are
** its ends, others truncate toward zero. */
static int32_t java_double_to_int(double d){
  if( d!=d ) return 0;
  if( d>=2147483647.0 ) return INT32_MAX;
  if( d<=-2147483648.0 ) return INT32_MIN;
  return (int32_t)d;
}

uint32_t guava_bucket(uint64_t input, uint32_t buckets){
  uint64_t state = input;
  int32_t candidate = 0;
  for(;;){
    state = 2862933555777941757ULL * state + 1;
    /* (int)(state >>> 33) + 1 wraps in Java's int: 2^31 - 1 + 1 is -2^31. */
    int32_t top = (int32_t)(uint32_t)((uint32_t)(state >> 33) + 1u);
    double d = (double)top / 2147483648.0;
    int32_t next = java_double_to_int((double)(candidate + 1) / d);
    if( next<0 || (uint32_t)next>=buckets ) return (uint32_t)candidate;
    candidate = next;
  }
}

static uint32_t guava_unit_of(const ring *r, uint64_t pos){
  return guava_bucket(pos, r->n_nodes);
}

static int guava_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_MURMUR3_128 && cfg->hash!=HASH_IDENTITY ){
    snprintf(zErr, nErr, "algorithm guava takes hash murmur3_128 (the "
             "default: Hashing.murmur3_128().hashString(key, UTF_8)) or "
             "identity (consistentHash(long, n) on an integer key), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_guava = {
  .name = "guava",
  .default_hash = HASH_MURMUR3_128,
  .integer_keys = 1,
  .units = RING_UNITS_BUCKETS,
  .unit_name = "buckets",
  .no_units = "a key's bucket comes from pseudo-random jumps seeded by its "
              "input, not from ranges of positions",
  .no_diff = "a key's bucket comes from pseudo-random jumps seeded by its "
             "input, not from ranges of positions",
  .check_options = guava_check_options,
  .build = ring_units_join_order,
  .unit_of = guava_unit_of,
  .shares = ring_shares_even,
  .no_weights = "algorithm guava has no weights (consistentHash has none): "
                "every node's weight must be 1",
  .check_commit = ring_check_commit_last_only,
  .doc = {
    .summary = "Guava's `Hashing.consistentHash`",
    .reproduces = "Guava's `consistentHash` on `murmur3_128` or on longs",
    .cost = "O(log n), no memory",
    .weights = "no (all 1)",
    .remove = "only the last nodes",
    .movement = "about 1/n of keys, all onto the new node",
    .options = "`hash`: `murmur3_128` (default) or `identity`",
  },
};

/*
** registry.c: every algorithm chash knows, in the order error messages
** list them. Adding an algorithm is its file in ext/algos/ and one line
** here (ARCHITECTURE.md, "Adding an algorithm").
*/
#include "algo.h"

#define ALGORITHMS(X) \
  X(ring)             \
  X(ketama)           \
  X(jump)             \
  X(rendezvous)       \
  X(maglev)           \
  X(modn)             \
  X(nginx)            \
  X(hashring)         \
  X(haproxy)          \
  X(dubbo)            \
  X(envoy_ring)        \
  X(groupcache)       \
  X(redis_cluster)    \
  X(guava)            \
  X(kafka)            \
  X(dalli)            \
  X(pymemcache)       \
  X(php_memcache)     \
  X(spymemcached)     \
  X(cassandra)        \
  X(uhashring)        \
  X(uhashring_ketama)

#define ALGO_DECLARE(name) extern const ring_algo algo_##name;
#define ALGO_ENTRY(name) &algo_##name,

ALGORITHMS(ALGO_DECLARE)

const ring_algo *const ring_algos[] = { ALGORITHMS(ALGO_ENTRY) NULL };

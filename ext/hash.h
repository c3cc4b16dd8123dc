/*
** hash.h: the hash functions chash places keys and points with.
**
** Pure C, no SQLite calls. A hash is named by a hash_id; every hash maps
** (seed, bytes) to a 64-bit position on the ring.
*/
#ifndef CHASH_HASH_H
#define CHASH_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef enum hash_id {
  HASH_XXH3 = 0,           /* XXH3_64bits_withSeed (the default) */
  HASH_XXH64,              /* XXH64 */
  HASH_COUNT
} hash_id;

/* The hash named zName (case-insensitive), or -1 if there is none. */
int hash_from_name(const char *zName);

/* The canonical name of a hash, e.g. "xxh3". */
const char *hash_name(hash_id id);

/* "xxh3, xxh64": the accepted names, for error messages. */
const char *hash_names(void);

/* The 64-bit position of nData bytes at pData under hash id and seed. */
uint64_t hash_bytes(hash_id id, uint64_t seed, const void *pData, size_t nData);

#endif

/*
** hash.c: the hash functions chash places keys and points with.
**
** xxHash comes from Debian's libxxhash-dev and is inlined here
** (XXH_INLINE_ALL), so chash.so has no runtime dependency on libxxhash.
*/
#include <strings.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"

static const char *const hash_names_by_id[HASH_COUNT] = {
  [HASH_XXH3] = "xxh3",
  [HASH_XXH64] = "xxh64",
};

int hash_from_name(const char *zName){
  for(int i=0; i<HASH_COUNT; i++){
    if( strcasecmp(zName, hash_names_by_id[i])==0 ) return i;
  }
  return -1;
}

const char *hash_name(hash_id id){
  return hash_names_by_id[id];
}

const char *hash_names(void){
  return "xxh3, xxh64";
}

uint64_t hash_bytes(hash_id id, uint64_t seed, const void *pData, size_t nData){
  switch( id ){
    case HASH_XXH64: return XXH64(pData, nData, seed);
    case HASH_XXH3:
    default:         return XXH3_64bits_withSeed(pData, nData, seed);
  }
}

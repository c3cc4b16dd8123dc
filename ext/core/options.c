/*
** options.c: parsing and checking the options of a ring (see options.h).
*/
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"

const char *options_names(void){
  return "algorithm, hash, vnodes, seed, table";
}

/* Parse an unsigned decimal integer of at most 20 digits, no sign, no
** blanks. Returns 0 on success. */
static int parse_u64(const char *z, uint64_t *pOut){
  if( *z==0 || strlen(z)>20 ) return 1;
  for(const char *p=z; *p; p++){
    if( !isdigit((unsigned char)*p) ) return 1;
  }
  errno = 0;
  unsigned long long v = strtoull(z, NULL, 10);
  if( errno ) return 1;
  *pOut = v;
  return 0;
}

/* Trial division: table sizes are below 2^24. */
static int is_prime(uint64_t v){
  if( v<2 ) return 0;
  for(uint64_t d=2; d*d<=v; d++){
    if( v%d==0 ) return 0;
  }
  return 1;
}

int options_set(ring_config *cfg, unsigned *pSet, const char *zKey,
                const char *zValue, char *zErr, size_t nErr){
  unsigned bit;
  if( strcasecmp(zKey, "algorithm")==0 )   bit = OPTION_ALGORITHM;
  else if( strcasecmp(zKey, "hash")==0 )   bit = OPTION_HASH;
  else if( strcasecmp(zKey, "vnodes")==0 ) bit = OPTION_VNODES;
  else if( strcasecmp(zKey, "seed")==0 )   bit = OPTION_SEED;
  else if( strcasecmp(zKey, "table")==0 )  bit = OPTION_TABLE;
  else{
    snprintf(zErr, nErr, "unknown option '%s'; accepted: %s", zKey,
             options_names());
    return 1;
  }
  if( *pSet & bit ){
    snprintf(zErr, nErr, "option %s is given more than once", zKey);
    return 1;
  }
  *pSet |= bit;

  uint64_t v;
  switch( bit ){
    case OPTION_ALGORITHM: {
      int a = ring_algorithm_from_name(zValue);
      if( a<0 ){
        snprintf(zErr, nErr, "algorithm: unknown value '%s'; accepted: %s",
                 zValue, ring_algorithm_names());
        return 1;
      }
      cfg->algorithm = a;
      break;
    }
    case OPTION_HASH: {
      int h = hash_from_name(zValue);
      if( h<0 ){
        snprintf(zErr, nErr, "hash: unknown value '%s'; accepted: %s",
                 zValue, hash_names());
        return 1;
      }
      cfg->hash = h;
      break;
    }
    case OPTION_VNODES:
      if( parse_u64(zValue, &v) || v<1 || v>RING_MAX_VNODES ){
        snprintf(zErr, nErr, "vnodes: '%s' is not an integer from 1 to %d",
                 zValue, RING_MAX_VNODES);
        return 1;
      }
      cfg->vnodes = (int)v;
      break;
    case OPTION_SEED:
      if( parse_u64(zValue, &v) ){
        snprintf(zErr, nErr, "seed: '%s' is not an integer from 0 to "
                 "18446744073709551615", zValue);
        return 1;
      }
      cfg->seed = v;
      break;
    case OPTION_TABLE:
      if( parse_u64(zValue, &v) || v<2 || v>RING_MAX_TABLE || !is_prime(v) ){
        snprintf(zErr, nErr, "table: '%s' is not a prime from 2 to %d (maglev "
                 "tables have a prime size, e.g. 65537)", zValue,
                 RING_MAX_TABLE);
        return 1;
      }
      cfg->table = (uint32_t)v;
      break;
  }
  return 0;
}

int options_check(ring_config *cfg, unsigned set, char *zErr, size_t nErr){
  ring_algorithm a = cfg->algorithm;
  const char *zAlgo = ring_algorithm_name(a);
  if( !(set & OPTION_HASH) ){
    if( a==RING_ALGO_KETAMA ) cfg->hash = HASH_MD5;
    if( a==RING_ALGO_MAGLEV ) cfg->hash = HASH_XXH64;
  }
  if( (set & OPTION_VNODES) && a!=RING_ALGO_RING && a!=RING_ALGO_KETAMA ){
    snprintf(zErr, nErr, "vnodes does not apply to algorithm %s "
             "(it has no virtual nodes; only ring and ketama do)", zAlgo);
    return 1;
  }
  if( (set & OPTION_TABLE) && a!=RING_ALGO_MAGLEV ){
    snprintf(zErr, nErr, "table does not apply to algorithm %s "
             "(it is the lookup table size of maglev)", zAlgo);
    return 1;
  }
  if( (set & OPTION_SEED) && !hash_has_seed(cfg->hash) ){
    snprintf(zErr, nErr, "seed does not apply to hash %s (only xxh3 and "
             "xxh64 take a seed)", hash_name(cfg->hash));
    return 1;
  }
  if( a==RING_ALGO_KETAMA && hash_space_bits(cfg->hash)==64 ){
    snprintf(zErr, nErr, "algorithm ketama has 32-bit points, so its hash "
             "must be a 32-bit key hash, not %s: md5 (the default), "
             "fnv1a_64, fnv1_64, fnv1a_32, fnv1_32, one_at_a_time, crc32, "
             "crc32a, murmur, jenkins, hsieh", hash_name(cfg->hash));
    return 1;
  }
  if( a==RING_ALGO_KETAMA && cfg->vnodes%4!=0 ){
    snprintf(zErr, nErr, "vnodes: algorithm ketama needs a multiple of 4 "
             "(each MD5 digest gives 4 points); twemproxy and libmemcached "
             "use 160");
    return 1;
  }
  return 0;
}

static char *trim(char *z){
  while( isspace((unsigned char)*z) ) z++;
  size_t n = strlen(z);
  while( n>0 && isspace((unsigned char)z[n-1]) ) z[--n] = 0;
  return z;
}

/* Remove one level of quotes, SQL style: a doubled quote stands for one. */
static void dequote(char *z){
  char q = z[0];
  size_t n = strlen(z);
  if( (q!='\'' && q!='"' && q!='`') || n<2 || z[n-1]!=q ) return;
  size_t j = 0;
  for(size_t i=1; i<n-1; i++){
    if( z[i]==q && z[i+1]==q ) i++;
    z[j++] = z[i];
  }
  z[j] = 0;
}

int options_split(char *zArg, char **pzKey, char **pzValue){
  char *zEq = strchr(zArg, '=');
  if( zEq==NULL ) return 1;
  *zEq = 0;
  char *zKey = trim(zArg);
  char *zValue = trim(zEq+1);
  dequote(zValue);
  if( *zKey==0 || *zValue==0 ) return 1;
  *pzKey = zKey;
  *pzValue = zValue;
  return 0;
}

void options_seed_text(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%" PRIu64, cfg->seed);
}

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

#include "algo.h"
#include "options.h"

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

/* -------------------------------------------------- each option */

static int set_algorithm(ring_config *cfg, const char *zValue, char *zErr,
                         size_t nErr){
  const ring_algo *a = ring_algorithm_from_name(zValue);
  if( a==NULL ){
    char zList[400];
    snprintf(zErr, nErr, "algorithm: unknown value '%s'; accepted: %s",
             zValue, ring_algorithm_list(zList, sizeof(zList)));
    return 1;
  }
  cfg->algo = a;
  return 0;
}

static void text_algorithm(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%s", cfg->algo->name);
}

static int set_hash(ring_config *cfg, const char *zValue, char *zErr,
                    size_t nErr){
  int h = hash_from_name(zValue);
  if( h<0 ){
    char zList[400];
    snprintf(zErr, nErr, "hash: unknown value '%s'; accepted: %s", zValue,
             hash_names(zList, sizeof(zList)));
    return 1;
  }
  cfg->hash = h;
  return 0;
}

static void text_hash(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%s", hash_name(cfg->hash));
}

static int set_vnodes(ring_config *cfg, const char *zValue, char *zErr,
                      size_t nErr){
  uint64_t v;
  if( parse_u64(zValue, &v) || v<1 || v>RING_MAX_VNODES ){
    snprintf(zErr, nErr, "vnodes: '%s' is not an integer from 1 to %d",
             zValue, RING_MAX_VNODES);
    return 1;
  }
  cfg->vnodes = (int)v;
  return 0;
}

static void text_vnodes(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%d", cfg->vnodes);
}

static int set_seed(ring_config *cfg, const char *zValue, char *zErr,
                    size_t nErr){
  if( parse_u64(zValue, &cfg->seed) ){
    snprintf(zErr, nErr, "seed: '%s' is not an integer from 0 to "
             "18446744073709551615", zValue);
    return 1;
  }
  return 0;
}

/* Text, not an integer: seeds above 2^63 do not fit SQLite's integers. */
static void text_seed(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%" PRIu64, cfg->seed);
}

static int set_table(ring_config *cfg, const char *zValue, char *zErr,
                     size_t nErr){
  uint64_t v;
  if( parse_u64(zValue, &v) || v<2 || v>RING_MAX_TABLE || !is_prime(v) ){
    snprintf(zErr, nErr, "table: '%s' is not a prime from 2 to %d (maglev "
             "tables have a prime size, e.g. 65537)", zValue, RING_MAX_TABLE);
    return 1;
  }
  cfg->table = (uint32_t)v;
  return 0;
}

static void text_table(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%u", cfg->table);
}

static int set_avalanche(ring_config *cfg, const char *zValue, char *zErr,
                         size_t nErr){
  if( strcmp(zValue, "0")!=0 && strcmp(zValue, "1")!=0 ){
    snprintf(zErr, nErr, "avalanche: '%s' is not 0 or 1 (1: each key's "
             "hash goes through HAProxy's full_hash, as hash-type consistent "
             "does by default)", zValue);
    return 1;
  }
  cfg->avalanche = zValue[0]=='1';
  return 0;
}

static void text_avalanche(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%d", cfg->avalanche);
}

/* envoy_ring's ring sizes: Envoy's minimum_ring_size and maximum_ring_size,
** which it limits to 8M. */
static int set_ring_size(const char *zName, const char *zEnvoyName,
                         uint32_t *pOut, const char *zValue, char *zErr,
                         size_t nErr){
  uint64_t v;
  if( parse_u64(zValue, &v) || v<1 || v>RING_MAX_ENVOY_RING ){
    snprintf(zErr, nErr, "%s: '%s' is not an integer from 1 to %d (Envoy's "
             "%s)", zName, zValue, RING_MAX_ENVOY_RING, zEnvoyName);
    return 1;
  }
  *pOut = (uint32_t)v;
  return 0;
}

static int set_min_ring(ring_config *cfg, const char *zValue, char *zErr,
                        size_t nErr){
  return set_ring_size("min_ring", "minimum_ring_size", &cfg->min_ring, zValue,
                       zErr, nErr);
}

static void text_min_ring(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%u", cfg->min_ring);
}

static int set_max_ring(ring_config *cfg, const char *zValue, char *zErr,
                        size_t nErr){
  return set_ring_size("max_ring", "maximum_ring_size", &cfg->max_ring, zValue,
                       zErr, nErr);
}

static void text_max_ring(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%u", cfg->max_ring);
}

static int set_label(ring_config *cfg, const char *zValue, char *zErr,
                     size_t nErr){
  if( ring_label_check(zValue, zErr, nErr) ) return 1;
  snprintf(cfg->label, sizeof(cfg->label), "%s", zValue);
  return 0;
}

static void text_label(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%s", cfg->label);
}

static int set_first(ring_config *cfg, const char *zValue, char *zErr,
                     size_t nErr){
  if( strcmp(zValue, "0")!=0 && strcmp(zValue, "1")!=0 ){
    snprintf(zErr, nErr, "first: '%s' is not 0 or 1 (the index of a node's "
             "first point)", zValue);
    return 1;
  }
  cfg->first = zValue[0]-'0';
  return 0;
}

static void text_first(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%d", cfg->first);
}

static const char *const option_ties_names[] = {
  [RING_TIES_NAME] = "name", [RING_TIES_FIRST] = "first",
  [RING_TIES_LAST] = "last",
};

static int set_ties(ring_config *cfg, const char *zValue, char *zErr,
                    size_t nErr){
  for(int i=0; i<(int)(sizeof(option_ties_names)/sizeof(option_ties_names[0])); i++){
    if( strcasecmp(zValue, option_ties_names[i])==0 ){
      cfg->ties = (ring_ties)i;
      return 0;
    }
  }
  snprintf(zErr, nErr, "ties: unknown value '%s'; accepted: name, first, "
           "last", zValue);
  return 1;
}

static void text_ties(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%s", option_ties_names[cfg->ties]);
}

/* Two ASCII characters, as twemproxy's hash_tag (which takes any two
** bytes; a non-ASCII character would be two bytes on its own). */
static int set_hash_tag(ring_config *cfg, const char *zValue, char *zErr,
                        size_t nErr){
  const unsigned char *z = (const unsigned char *)zValue;
  if( strlen(zValue)!=2 || z[0]<0x20 || z[0]>0x7e || z[1]<0x20 || z[1]>0x7e ){
    snprintf(zErr, nErr, "hash_tag: '%s' is not two ASCII characters (such "
             "as '{}': then a key's bytes between its first '{' and the next "
             "'}' are hashed, when there are any)", zValue);
    return 1;
  }
  memcpy(cfg->hash_tag, zValue, 3);
  return 0;
}

static void text_hash_tag(const ring_config *cfg, char *zOut, size_t nOut){
  snprintf(zOut, nOut, "%s", cfg->hash_tag);
}

/* ------------------------------------------------------ the table */

typedef struct option_def {
  const char *name;
  unsigned bit;
  const char *about;       /* what it is, for "does not apply" messages */
  int (*set)(ring_config *cfg, const char *zValue, char *zErr, size_t nErr);
  void (*text)(const ring_config *cfg, char *zOut, size_t nOut);
  int integer;             /* stored as an INTEGER (else TEXT) */
} option_def;

/* Options that apply to every algorithm. */
#define OPTION_UNIVERSAL (OPTION_ALGORITHM|OPTION_HASH|OPTION_SEED \
                          |OPTION_HASH_TAG)

static const option_def option_defs[] = {
  { "algorithm", OPTION_ALGORITHM, "the placement rule",
    set_algorithm, text_algorithm, 0 },
  { "hash", OPTION_HASH, "the hash of keys and points", set_hash, text_hash,
    0 },
  { "vnodes", OPTION_VNODES, "virtual nodes per unit of weight",
    set_vnodes, text_vnodes, 1 },
  { "seed", OPTION_SEED, "the seed of the hash", set_seed, text_seed, 0 },
  { "table", OPTION_TABLE, "the lookup table size", set_table, text_table,
    1 },
  { "avalanche", OPTION_AVALANCHE, "HAProxy's mixing of key hashes",
    set_avalanche, text_avalanche, 1 },
  { "min_ring", OPTION_MIN_RING, "the smallest ring size",
    set_min_ring, text_min_ring, 1 },
  { "max_ring", OPTION_MAX_RING, "the largest ring size",
    set_max_ring, text_max_ring, 1 },
  { "label", OPTION_LABEL, "the text hashed for a point", set_label,
    text_label, 0 },
  { "first", OPTION_FIRST, "the index of a node's first point", set_first,
    text_first, 1 },
  { "ties", OPTION_TIES, "the rule for two points at one position",
    set_ties, text_ties, 0 },
  { "hash_tag", OPTION_HASH_TAG, "the part of a key that is hashed",
    set_hash_tag, text_hash_tag, 0 },
};

#define N_OPTION ((int)(sizeof(option_defs)/sizeof(option_defs[0])))

const char *options_names(char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; i<N_OPTION && n<nOut; i++){
    int k = snprintf(zOut+n, nOut-n, "%s%s", i ? ", " : "",
                     option_defs[i].name);
    if( k<0 ) break;
    n += (size_t)k;
  }
  return zOut;
}

const char *options_name_at(int i){
  return i>=0 && i<N_OPTION ? option_defs[i].name : NULL;
}

int options_apply(const ring_algo *a, int i){
  return (option_defs[i].bit & (OPTION_UNIVERSAL|a->options))!=0;
}

int options_set(ring_config *cfg, unsigned *pSet, const char *zKey,
                const char *zValue, char *zErr, size_t nErr){
  const option_def *o = NULL;
  for(int i=0; i<N_OPTION; i++){
    if( strcasecmp(zKey, option_defs[i].name)==0 ) o = &option_defs[i];
  }
  if( o==NULL ){
    char zList[400];
    snprintf(zErr, nErr, "unknown option '%s'; accepted: %s", zKey,
             options_names(zList, sizeof(zList)));
    return 1;
  }
  if( *pSet & o->bit ){
    snprintf(zErr, nErr, "option %s is given more than once", o->name);
    return 1;
  }
  *pSet |= o->bit;
  return o->set(cfg, zValue, zErr, nErr);
}

/* "ring, ketama": the algorithms that take option o. */
static void takers(const option_def *o, char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; ring_algos[i] && n<nOut; i++){
    if( (ring_algos[i]->options & o->bit)==0 ) continue;
    int k = snprintf(zOut+n, nOut-n, "%s%s", n ? ", " : "",
                     ring_algos[i]->name);
    if( k<0 ) break;
    n += (size_t)k;
  }
}

int options_check(ring_config *cfg, unsigned set, char *zErr, size_t nErr){
  const ring_algo *a = cfg->algo;
  if( !(set & OPTION_HASH) ) cfg->hash = a->default_hash;
  for(int i=0; i<N_OPTION; i++){
    const option_def *o = &option_defs[i];
    if( !(set & o->bit) || options_apply(a, i) ) continue;
    char zList[400];
    takers(o, zList, sizeof(zList));
    snprintf(zErr, nErr, "%s does not apply to algorithm %s (it is %s; "
             "algorithms that take it: %s)", o->name, a->name, o->about,
             zList);
    return 1;
  }
  if( (set & OPTION_SEED) && !hash_has_seed(cfg->hash) ){
    snprintf(zErr, nErr, "seed does not apply to hash %s (only xxh3 and "
             "xxh64 take a seed)", hash_name(cfg->hash));
    return 1;
  }
  if( cfg->hash==HASH_IDENTITY && !a->integer_keys ){
    size_t n = 0;
    char zList[400];
    zList[0] = 0;
    for(int i=0; ring_algos[i] && n<sizeof(zList); i++){
      if( !ring_algos[i]->integer_keys ) continue;
      int k = snprintf(zList+n, sizeof(zList)-n, "%s%s", n ? ", " : "",
                       ring_algos[i]->name);
      if( k<0 ) break;
      n += (size_t)k;
    }
    snprintf(zErr, nErr, "hash identity does not apply to algorithm %s (it "
             "places integer keys as themselves, for algorithms that hash "
             "keys alone: %s)", a->name, zList);
    return 1;
  }
  if( a->check_options ) return a->check_options(cfg, set, zErr, nErr);
  return 0;
}

int options_stored(const ring_config *cfg, int i, const char **pzKey,
                   char *zValue, size_t nValue, int *pbStore,
                   int *pbInteger){
  if( i<0 || i>=N_OPTION ) return 0;
  const option_def *o = &option_defs[i];
  *pzKey = o->name;
  *pbInteger = o->integer;
  o->text(cfg, zValue, nValue);
  *pbStore = 1;
  if( (o->bit & OPTION_REQUIRED)==0 ){
    ring_config def;
    char zDefault[OPTION_MAX_TEXT];
    ring_config_default(&def);
    o->text(&def, zDefault, sizeof(zDefault));
    *pbStore = strcmp(zValue, zDefault)!=0;
  }
  return 1;
}

int options_same(const ring_config *a, const ring_config *b){
  for(int i=0; i<N_OPTION; i++){
    char zA[OPTION_MAX_TEXT], zB[OPTION_MAX_TEXT];
    option_defs[i].text(a, zA, sizeof(zA));
    option_defs[i].text(b, zB, sizeof(zB));
    if( strcmp(zA, zB)!=0 ) return 0;
  }
  return 1;
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

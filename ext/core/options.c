/*
** options.c: parsing, checking, storing and comparing the options of a
** ring (see options.h): the table of the common options, and the
** machinery that reads, writes and lists the options each algorithm
** declares in its descriptor.
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
  options_set_algorithm(cfg, a);
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

/* ------------------------------------------------ the common options */

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
  { "hash_tag", OPTION_HASH_TAG, "the part of a key that is hashed",
    set_hash_tag, text_hash_tag, 0 },
};

#define N_OPTION ((int)(sizeof(option_defs)/sizeof(option_defs[0])))

const char *const options_required[] = {
  "algorithm", "hash", "vnodes", "seed", "table", NULL
};

static const option_def *common_option(const char *zName){
  for(int i=0; i<N_OPTION; i++){
    if( strcasecmp(zName, option_defs[i].name)==0 ) return &option_defs[i];
  }
  return NULL;
}

static int is_required(const char *zName){
  for(int i=0; options_required[i]; i++){
    if( strcmp(zName, options_required[i])==0 ) return 1;
  }
  return 0;
}

/* ----------------------------------------- an algorithm's own options */

/* Algorithm a's own option named zName (any case), or NULL. */
static const ring_option *own_option(const ring_algo *a, const char *zName){
  for(const ring_option *o=a->own_options; o && o->name; o++){
    if( strcasecmp(zName, o->name)==0 ) return o;
  }
  return NULL;
}

const ring_option *options_own(const ring_algo *a, const char *zName){
  return a ? own_option(a, zName) : NULL;
}

/* The first algorithm's own option named zName, in registry order. */
static const ring_option *any_own_option(const char *zName){
  for(int i=0; ring_algos[i]; i++){
    const ring_option *o = own_option(ring_algos[i], zName);
    if( o ) return o;
  }
  return NULL;
}

void ring_option_bad_value(const ring_option *o, const char *zValue,
                           char *zErr, size_t nErr){
  char zHelp[200] = "";
  if( o->help ) snprintf(zHelp, sizeof(zHelp), " (%s)", o->help);
  switch( o->type ){
    case RING_OPTION_UINT:
      snprintf(zErr, nErr, "%s: '%s' is not %s from %llu to %llu%s", o->name,
               zValue, o->noun ? o->noun : "an integer",
               (unsigned long long)o->lo, (unsigned long long)o->hi, zHelp);
      break;
    case RING_OPTION_BOOL:
      snprintf(zErr, nErr, "%s: '%s' is not 0 or 1%s", o->name, zValue,
               zHelp);
      break;
    case RING_OPTION_CHOICE: {
      char zList[200];
      size_t n = 0;
      zList[0] = 0;
      for(int i=0; o->choices[i] && n<sizeof(zList); i++){
        int k = snprintf(zList+n, sizeof(zList)-n, "%s%s", i ? ", " : "",
                         o->choices[i]);
        if( k<0 ) break;
        n += (size_t)k;
      }
      snprintf(zErr, nErr, "%s: unknown value '%s'; accepted: %s%s", o->name,
               zValue, zList, zHelp);
      break;
    }
    case RING_OPTION_TEXT:
      snprintf(zErr, nErr, "%s: '%s' is longer than %llu bytes%s", o->name,
               zValue, (unsigned long long)o->hi, zHelp);
      break;
  }
}

/* Check zValue for o and, if pBlock is not NULL, store it in pBlock (an
** algorithm's own block). 0, or 1 with a message. */
static int own_parse(const ring_option *o, const char *zValue, void *pBlock,
                     char *zErr, size_t nErr){
  uint64_t v = 0;
  int bad = 0;
  switch( o->type ){
    case RING_OPTION_UINT:
      bad = parse_u64(zValue, &v) || v<o->lo || v>o->hi;
      break;
    case RING_OPTION_BOOL:
      bad = strcmp(zValue, "0")!=0 && strcmp(zValue, "1")!=0;
      v = zValue[0]=='1';
      break;
    case RING_OPTION_CHOICE:
      bad = 1;
      for(int i=0; o->choices[i]; i++){
        if( strcasecmp(zValue, o->choices[i])==0 ){
          v = (uint64_t)i;
          bad = 0;
        }
      }
      break;
    case RING_OPTION_TEXT:
      v = strlen(zValue);
      bad = o->check==NULL && v>o->hi;
      break;
  }
  if( bad ){
    ring_option_bad_value(o, zValue, zErr, nErr);
    return 1;
  }
  if( o->check && o->check(o, zValue, v, zErr, nErr) ) return 1;
  if( o->type==RING_OPTION_TEXT && v>o->hi ){
    ring_option_bad_value(o, zValue, zErr, nErr);
    return 1;
  }
  if( pBlock==NULL ) return 0;
  unsigned char *pAt = (unsigned char *)pBlock + o->offset;
  switch( o->type ){
    case RING_OPTION_UINT:
      memcpy(pAt, &(uint32_t){ (uint32_t)v }, sizeof(uint32_t));
      break;
    case RING_OPTION_BOOL:
    case RING_OPTION_CHOICE:
      memcpy(pAt, &(int){ (int)v }, sizeof(int));
      break;
    case RING_OPTION_TEXT:
      memcpy(pAt, zValue, (size_t)v + 1);
      break;
  }
  return 0;
}

/* o's default as text, into zOut (at least OPTION_MAX_TEXT bytes). */
static const char *own_default(const ring_option *o, char *zOut, size_t nOut){
  if( o->default_text ) snprintf(zOut, nOut, "%s", o->default_text);
  else snprintf(zOut, nOut, "%llu", (unsigned long long)o->hi);
  return zOut;
}

/* o's value in the own block of cfg, as text. */
static void own_text(const ring_option *o, const ring_config *cfg,
                     char *zOut, size_t nOut){
  const unsigned char *pAt = cfg->own.bytes + o->offset;
  uint32_t u;
  int i;
  switch( o->type ){
    case RING_OPTION_UINT:
      memcpy(&u, pAt, sizeof(u));
      snprintf(zOut, nOut, "%u", u);
      break;
    case RING_OPTION_BOOL:
      memcpy(&i, pAt, sizeof(i));
      snprintf(zOut, nOut, "%d", i);
      break;
    case RING_OPTION_CHOICE:
      memcpy(&i, pAt, sizeof(i));
      snprintf(zOut, nOut, "%s", o->choices[i]);
      break;
    case RING_OPTION_TEXT:
      snprintf(zOut, nOut, "%s", (const char *)pAt);
      break;
  }
}

void options_set_algorithm(ring_config *cfg, const ring_algo *a){
  char zErr[8], zDefault[OPTION_MAX_TEXT];
  cfg->algo = a;
  memset(&cfg->own, 0, sizeof(cfg->own));
  for(const ring_option *o=cfg->algo->own_options; o && o->name; o++){
    own_default(o, zDefault, sizeof(zDefault));
    own_parse(o, zDefault, cfg->own.bytes, zErr, sizeof(zErr));
  }
}

/* ------------------------------------------------------- every option */

/* Append ", zName" to the list at zOut (n bytes used so far). */
static size_t list_add(char *zOut, size_t nOut, size_t n, const char *zName){
  if( n>=nOut ) return n;
  int k = snprintf(zOut+n, nOut-n, "%s%s", n ? ", " : "", zName);
  return k<0 ? nOut : n + (size_t)k;
}

const char *options_name_at(int i){
  if( i<0 ) return NULL;
  if( i<N_OPTION ) return option_defs[i].name;
  i -= N_OPTION;
  for(int k=0; ring_algos[k]; k++){
    for(const ring_option *o=ring_algos[k]->own_options; o && o->name; o++){
      if( any_own_option(o->name)==o && i--==0 ) return o->name;
    }
  }
  return NULL;
}

/* Does algorithm a take the option named zName? */
static int option_taken(const ring_algo *a, const char *zName){
  const option_def *d = common_option(zName);
  if( d ) return (d->bit & (OPTION_UNIVERSAL|a->options))!=0;
  return own_option(a, zName)!=NULL;
}

int options_apply(const ring_algo *a, int i){
  const char *zName = options_name_at(i);
  return zName && option_taken(a, zName);
}

const char *options_names(char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; options_name_at(i); i++){
    n = list_add(zOut, nOut, n, options_name_at(i));
  }
  return zOut;
}

const char *options_takers(const char *zName, char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; ring_algos[i]; i++){
    if( option_taken(ring_algos[i], zName) ){
      n = list_add(zOut, nOut, n, ring_algos[i]->name);
    }
  }
  return zOut;
}

int options_given_has(const options_given *g, const char *zName){
  const option_def *d = common_option(zName);
  if( d ) return (g->set & d->bit)!=0;
  for(unsigned i=0; i<g->n_own; i++){
    if( strcasecmp(g->own[i].name, zName)==0 ) return 1;
  }
  return 0;
}

int options_set(ring_config *cfg, options_given *g, const char *zKey,
                const char *zValue, char *zErr, size_t nErr){
  const option_def *d = common_option(zKey);
  if( d ){
    if( g->set & d->bit ){
      snprintf(zErr, nErr, "option %s is given more than once", d->name);
      return 1;
    }
    g->set |= d->bit;
    return d->set(cfg, zValue, zErr, nErr);
  }
  const ring_option *o = NULL;
  if( g->set & OPTION_ALGORITHM ) o = own_option(cfg->algo, zKey);
  if( o==NULL ) o = any_own_option(zKey);
  if( o==NULL ){
    char zList[400];
    snprintf(zErr, nErr, "unknown option '%s'; accepted: %s", zKey,
             options_names(zList, sizeof(zList)));
    return 1;
  }
  if( options_given_has(g, o->name) ){
    snprintf(zErr, nErr, "option %s is given more than once", o->name);
    return 1;
  }
  if( own_parse(o, zValue, NULL, zErr, nErr) ) return 1;
  if( g->n_own>=OPTION_MAX_OWN_GIVEN || strlen(zValue)>=OPTION_MAX_TEXT ){
    snprintf(zErr, nErr, "%s: too many options, or a value too long",
             o->name);
    return 1;
  }
  g->own[g->n_own].name = o->name;
  memcpy(g->own[g->n_own].value, zValue, strlen(zValue) + 1);
  g->n_own++;
  return 0;
}

/* Set the own options of g that cfg's algorithm takes; one it does not
** take is an error unless bStored. */
static int own_apply(ring_config *cfg, const options_given *g, int bStored,
                     char *zErr, size_t nErr){
  const ring_algo *a = cfg->algo;
  for(unsigned i=0; i<g->n_own; i++){
    const ring_option *o = own_option(a, g->own[i].name);
    if( o ){
      if( own_parse(o, g->own[i].value, cfg->own.bytes, zErr, nErr) ){
        return 1;
      }
    }else if( !bStored ){
      char zList[400];
      const ring_option *t = any_own_option(g->own[i].name);
      snprintf(zErr, nErr, "%s does not apply to algorithm %s (it is %s; "
               "algorithms that take it: %s)", t->name, a->name, t->about,
               options_takers(t->name, zList, sizeof(zList)));
      return 1;
    }
  }
  return 0;
}

int options_finish(ring_config *cfg, const options_given *g, char *zErr,
                   size_t nErr){
  if( own_apply(cfg, g, 0, zErr, nErr) ) return 1;
  return options_check(cfg, g->set, zErr, nErr);
}

int options_load(ring_config *cfg, const options_given *g, char *zErr,
                 size_t nErr){
  return own_apply(cfg, g, 1, zErr, nErr);
}

int options_check(ring_config *cfg, unsigned set, char *zErr, size_t nErr){
  const ring_algo *a = cfg->algo;
  if( !(set & OPTION_HASH) ) cfg->hash = a->default_hash;
  for(int i=0; i<N_OPTION; i++){
    const option_def *o = &option_defs[i];
    if( !(set & o->bit) || option_taken(a, o->name) ) continue;
    char zList[400];
    snprintf(zErr, nErr, "%s does not apply to algorithm %s (it is %s; "
             "algorithms that take it: %s)", o->name, a->name, o->about,
             options_takers(o->name, zList, sizeof(zList)));
    return 1;
  }
  /* An explicit seed 0 is the default, which every hash has. */
  if( (set & OPTION_SEED) && cfg->seed!=0 && !hash_has_seed(cfg->hash) ){
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

/* Stored option i: the common ones, then the algorithm's own, then the
** required ones it does not take, with their default. */
int options_stored(const ring_config *cfg, int i, const char **pzKey,
                   char *zValue, size_t nValue, int *pbStore,
                   int *pbInteger){
  if( i<0 ) return 0;
  if( i<N_OPTION ){
    const option_def *d = &option_defs[i];
    *pzKey = d->name;
    *pbInteger = d->integer;
    d->text(cfg, zValue, nValue);
    *pbStore = 1;
    if( !is_required(d->name) ){
      ring_config def;
      char zDefault[OPTION_MAX_TEXT];
      ring_config_default(&def);
      d->text(&def, zDefault, sizeof(zDefault));
      *pbStore = strcmp(zValue, zDefault)!=0;
    }
    return 1;
  }
  i -= N_OPTION;
  for(const ring_option *o=cfg->algo->own_options; o && o->name; o++, i--){
    if( i>0 ) continue;
    *pzKey = o->name;
    *pbInteger = o->type==RING_OPTION_UINT || o->type==RING_OPTION_BOOL;
    char zDefault[OPTION_MAX_TEXT];
    own_text(o, cfg, zValue, nValue);
    own_default(o, zDefault, sizeof(zDefault));
    *pbStore = is_required(o->name) || strcmp(zValue, zDefault)!=0;
    return 1;
  }
  for(int k=0; options_required[k]; k++){
    const char *zName = options_required[k];
    if( common_option(zName) || own_option(cfg->algo, zName) ) continue;
    if( i-- >0 ) continue;
    const ring_option *o = any_own_option(zName);
    *pzKey = o->name;
    *pbInteger = o->type==RING_OPTION_UINT || o->type==RING_OPTION_BOOL;
    own_default(o, zValue, nValue);
    *pbStore = 1;
    return 1;
  }
  return 0;
}

int options_same(const ring_config *a, const ring_config *b){
  char zA[OPTION_MAX_TEXT], zB[OPTION_MAX_TEXT];
  if( a->algo!=b->algo ) return 0;
  for(int i=0; i<N_OPTION; i++){
    option_defs[i].text(a, zA, sizeof(zA));
    option_defs[i].text(b, zB, sizeof(zB));
    if( strcmp(zA, zB)!=0 ) return 0;
  }
  for(const ring_option *o=a->algo->own_options; o && o->name; o++){
    own_text(o, a, zA, sizeof(zA));
    own_text(o, b, zB, sizeof(zB));
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

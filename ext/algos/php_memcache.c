/*
** php_memcache.c: algorithm php_memcache, the consistent hashing of PHP's
** memcache extension (pecl memcache, memcache.hash_strategy=consistent,
** the default), bit for bit as Debian 12's php-memcache (the extension's
** 8.x branch, reporting version 4.0.5.2, on PHP 8.2 and glibc) places
** keys.
**
** Nodes are the servers as MemcachePool::findServer() names them,
** "host:port": the host exactly as given to addServer(), a colon, the
** port in decimal (0 to 65535; a unix socket's is 0). A name that does
** not end so is a host alone, on the default port (addServer('cache1')
** is "cache1:11211"). The servers are added in the nodes' join order. The ring's hash is the extension's
** memcache.hash_function: crc32a (its "crc32", the default: the standard
** CRC-32) or fnv1a_32 (its "fnv": FNV-1a 32 on bytes read as signed
** chars, so a byte from 0x80 up is XORed in as 0xFFFFFF00|b, as chash's
** fnv1a_32 always does).
**
** A server of weight w (a whole number) gets 160*w points: point i (from
** 0) is the hash of "host:port-i", i in decimal. The points are sorted by
** glibc's qsort, a stable merge sort for arrays this size, so of equal
** points the server added first comes first and wins the point. The
** extension does not look a key up on the ring itself: it samples the
** ring into a table of 1,024 buckets, bucket b being the server of the
** first point at or after b * floor(0xffffffff / 1024), wrapping to the
** lowest point; a key goes to bucket hash(key) mod 1024. With one server
** every key is that server's, as here.
**
** The key hashed is the key the extension sends: the prefix option's
** text before it (memcache.prefix_static_key, followed by the host name
** when memcache.prefix_host_key is on), the whole cut to its first 250
** bytes, then every byte at or below ' ' (space and control bytes)
** replaced by '_'. The extension refuses the empty key (findServer
** returns false); here it is placed as any other key.
**
** The core places the points under its table rule (ring_points_place,
** RING_LOOKUP_TABLE), so the ring's units are the 1,024 buckets: ch_points
** lists them, and shares and diffs count buckets.
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "options.h"

#define PHPMC_POINTS_PER_WEIGHT 160
#define PHPMC_BUCKETS           1024
#define PHPMC_MAX_KEY           250   /* bytes the extension sends */
#define PHPMC_MAX_PREFIX        100   /* bytes of the prefix option */
#define PHPMC_MAX_PORT          65535
#define PHPMC_DEFAULT_PORT      ":11211"   /* memcache.default_port */

/* Its own option: prefix ("" for none). */
typedef struct phpmc_config {
  char prefix[PHPMC_MAX_PREFIX + 1];
} phpmc_config;

static int phpmc_check_prefix(const ring_option *o, const char *zValue,
                              uint64_t v, char *zErr, size_t nErr){
  (void)o;
  if( v>=1 && v<=PHPMC_MAX_PREFIX ) return 0;
  snprintf(zErr, nErr, "prefix: '%s' is not 1 to %d bytes (the extension's "
           "memcache.prefix_static_key; leave it out for none)", zValue,
           PHPMC_MAX_PREFIX);
  return 1;
}

static const ring_option phpmc_options[] = {
  { .name = "prefix", .type = RING_OPTION_TEXT,
    .offset = offsetof(phpmc_config, prefix), .default_text = "",
    .about = "the text before every key hashed", .hi = PHPMC_MAX_PREFIX,
    .check = phpmc_check_prefix },
  { .name = NULL }
};

/* ---------------------------------------------------------- servers */

/* Does z[0..n) end as findServer() ends a server's name: a host of one
** byte or more, a colon, and a port of 0 to 65535 in decimal with no
** leading zero? */
static int phpmc_has_port(const char *z, size_t n){
  size_t i = n;
  while( i>0 && z[i-1]>='0' && z[i-1]<='9' ) i--;
  size_t nPort = n - i;
  if( i<2 || z[i-1]!=':' || nPort==0 || nPort>5 ) return 0;
  if( nPort>1 && z[i]=='0' ) return 0;
  unsigned port = 0;
  for(size_t k=i; k<n; k++) port = port*10 + (unsigned)(z[k]-'0');
  return port<=PHPMC_MAX_PORT;
}

/* ---------------------------------------------------------- the ring */

/* Points a server of weight w makes (w is a whole number, checked). */
static uint32_t phpmc_count(double w){
  return (uint32_t)w * PHPMC_POINTS_PER_WEIGHT;
}

/* Every server's points "host:port-i", each server's in the order of i;
** of equal points the server added first keeps its point; the table of
** 1,024 buckets is sampled from them (ring_points_place's table rule). */
static int phpmc_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint64_t total = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    total += phpmc_count(r->nodes[k].weight);
  }
  if( total==0 ) return RING_OK;
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  if( a==NULL ) return RING_NOMEM;
  char zPoint[RING_MAX_NAME + 24];       /* "host:port-i" */
  uint32_t m = 0;
  for(uint32_t k=0; k<r->n_nodes; k++){
    const ring_node *node = &r->nodes[k];
    size_t nBase = node->name_len;
    memcpy(zPoint, node->name, nBase);
    if( !phpmc_has_port(node->name, nBase) ){
      memcpy(zPoint + nBase, PHPMC_DEFAULT_PORT, strlen(PHPMC_DEFAULT_PORT));
      nBase += strlen(PHPMC_DEFAULT_PORT);
    }
    zPoint[nBase++] = '-';
    for(uint32_t i=0; i<phpmc_count(node->weight); i++, m++){
      int nDigits = snprintf(zPoint + nBase, sizeof(zPoint) - nBase, "%u", i);
      a[m].pos = hash_bytes(r->config.hash, 0, zPoint,
                            nBase + (size_t)nDigits);
      a[m].node = k;
    }
  }
  static const ring_points_rule rule = {RING_LOOKUP_TABLE, RING_TIES_FIRST,
                                        PHPMC_BUCKETS};
  int rc = ring_points_place(r, a, m, &rule);
  ring_dealloc(a);
  return rc;
}

/* ---------------------------------------------------------- keys */

/* The key the extension sends: the prefix before it, cut to 250 bytes,
** bytes at or below ' ' as '_'. */
static void phpmc_key_rule(const ring_config *cfg, ring_keys *k){
  const phpmc_config *c = RING_OWN_CONFIG(cfg, phpmc_config);
  size_t n = strlen(c->prefix);
  if( n ) ring_keys_add_step(k, RING_KEY_PREFIX, (uint32_t)n, c->prefix, n);
  ring_keys_add_step(k, RING_KEY_TRUNCATE, PHPMC_MAX_KEY, NULL, 0);
  ring_keys_add_step(k, RING_KEY_REWRITE, ' ', "_", 1);
}

/* ---------------------------------------------------------- checks */

static int64_t phpmc_point_budget(const ring_config *cfg, double w){
  (void)cfg;
  return (int64_t)w * PHPMC_POINTS_PER_WEIGHT;
}

static const char *phpmc_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=floor(w) ){
    return "algorithm php_memcache takes whole weights, as addServer()'s "
           "weight does: 1, 2, 3, ...";
  }
  return NULL;
}

static int phpmc_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  if( (set & OPTION_HASH) && cfg->hash!=HASH_CRC32A
   && cfg->hash!=HASH_FNV1A_32 ){
    snprintf(zErr, nErr, "hash: algorithm php_memcache takes the extension's "
             "memcache.hash_function: crc32a (its crc32, the default) or "
             "fnv1a_32 (its fnv), not %s", hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_php_memcache = {
  .name = "php_memcache",
  .default_hash = HASH_CRC32A,
  .own_options = phpmc_options,
  .units = RING_UNITS_SLOTS,
  .unit_name = "buckets",
  .check_options = phpmc_check_options,
  .check_weight = phpmc_check_weight,
  .point_budget = phpmc_point_budget,
  .build = phpmc_build,
  .key_rule = phpmc_key_rule,
  .doc = {
    .summary = "PHP memcache's consistent hashing "
               "(`memcache.hash_strategy=consistent`)",
    .reproduces = "a PHP `Memcache`/`MemcachePool` (pecl memcache)",
    .cost = "O(1): one of 1,024 buckets",
    .weights = "integers ≥ 1 (160 points each)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "`hash` (`crc32a`, the default, or `fnv1a_32`), `prefix` "
               "(memcache.prefix_static_key; none by default)",
  },
};

/*
** dalli.c: algorithm dalli, the ring of Ruby's Dalli client (Dalli::Ring,
** the ring of Rails' :mem_cache_store), bit for bit as Dalli 3.0 places
** keys (checked against Debian's ruby-dalli 3.0.6 on Ruby 3.1).
**
** Nodes are the servers as given to Dalli::Client, in that order (the
** nodes' join order): "host", "host:port", "[IPv6]:port" or a unix
** socket's path. Dalli hashes a server by its name: host:port, with port
** 11211 when none is given, an IPv6 host without its brackets, and a port
** read as Ruby's Integer() reads it (a leading 0 makes it octal); a unix
** socket by its path. A server string's weight ("host:port:weight") goes
** in the weight column: a node name with one is refused, as is anything
** else Dalli cannot parse.
**
** n servers of total weight W: a server of weight w (a whole number) gets
** floor(n * 160 * w / W) points, the division in double precision; its
** point j (from 0) is the first 4 bytes, big-endian, of the SHA-1 of
** "name:j". Points are sorted stably in server order, so of equal points
** the later server's comes last; a key belongs to the last point at or
** below its position, wrapping to the last point, so the later server
** wins a shared point. (Dalli sorts with Ruby's sort_by, which on glibc is
** the stable merge sort of qsort_r.) With one server Dalli has no ring:
** every key is that server's, as here.
**
** A key's position is the CRC-32 of the key Dalli sends: "namespace:key"
** with the namespace option, and when that is longer than 250 characters,
** its first 212 characters (213 with a namespace), ":md5:" and the MD5 of
** the whole in lower-case hex. Characters are counted as Ruby counts a
** UTF-8 string: a valid UTF-8 sequence is one, any other byte one on its
** own. Dalli refuses the empty key; here it is hashed as any other key.
**
** The core places the points under its predecessor rule (the last point
** at or below a key), so ch_points, arcs, shares and diffs need nothing
** more here. A point that loses a tie is not on the ring, and its
** server's point count leaves it out.
*/
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "dalli.h"
#include "options.h"

#define DALLI_POINTS_PER_SERVER 160
#define DALLI_PREFIX_CHARS      212  /* kept of a long key; +1 with a
                                     ** namespace, as Dalli does */
#define DALLI_MAX_NAMESPACE     100  /* bytes */

/* Its own option: namespace ("" for none). */
typedef struct dalli_config {
  char namespace[DALLI_MAX_NAMESPACE + 1];
} dalli_config;

/* Given, a namespace has 1 to 100 bytes; none is its default. */
static int dalli_check_namespace(const ring_option *o, const char *zValue,
                                 uint64_t v, char *zErr, size_t nErr){
  (void)o;
  if( v>=1 && v<=DALLI_MAX_NAMESPACE ) return 0;
  snprintf(zErr, nErr, "namespace: '%s' is not 1 to %d bytes (Dalli's "
           ":namespace; leave it out for none)", zValue, DALLI_MAX_NAMESPACE);
  return 1;
}

static const ring_option dalli_options[] = {
  { .name = "namespace", .type = RING_OPTION_TEXT,
    .offset = offsetof(dalli_config, namespace), .default_text = "",
    .about = "the prefix of every key hashed", .hi = DALLI_MAX_NAMESPACE,
    .check = dalli_check_namespace },
  { .name = NULL }
};

/* ---------------------------------------------------------- servers */

/* Is z[0..n) one or more decimal digits? */
static int dalli_digits(const char *z, size_t n){
  if( n==0 ) return 0;
  for(size_t i=0; i<n; i++) if( z[i]<'0' || z[i]>'9' ) return 0;
  return 1;
}

/* Is z[0..n) one or more hex digits and colons (an IPv6 host)? */
static int dalli_ipv6(const char *z, size_t n){
  if( n==0 ) return 0;
  for(size_t i=0; i<n; i++){
    char c = z[i];
    if( !(c==':' || (c>='0' && c<='9') || (c>='a' && c<='f')
          || (c>='A' && c<='F')) ) return 0;
  }
  return 1;
}

/* The port's text in decimal, as Ruby's Integer() reads it: a leading 0
** makes it octal. Into zOut; its length, or 0 for an octal port with a
** digit 8 or 9 (Integer() raises). */
static size_t dalli_port(const char *z, size_t n, char *zOut){
  if( n<2 || z[0]!='0' ){
    memcpy(zOut, z, n);
    return n;
  }
  uint64_t v = 0;
  for(size_t i=1; i<n; i++){
    if( z[i]>'7' ) return 0;
    if( v > (UINT64_MAX>>3) ) return 0;   /* no real port: refuse it */
    v = v*8 + (uint64_t)(z[i]-'0');
  }
  return (size_t)snprintf(zOut, 24, "%llu", (unsigned long long)v);
}

/* The rule at the top of this file (dalli.h), which is Dalli's pattern
** `\A(\[([\h:]+)\]|[^:]+)(:port)?` without its weight part. */
size_t dalli_server_name(const char *z, size_t n, char *zOut){
  const char *zHost = NULL, *zRest = NULL;
  size_t nHost = 0, nRest = 0;
  if( z[0]=='[' ){
    const char *zClose = memchr(z, ']', n);
    if( zClose && dalli_ipv6(z+1, (size_t)(zClose-z-1)) ){
      size_t nAfter = n - (size_t)(zClose+1-z);
      if( nAfter==0 || (zClose[1]==':' && dalli_digits(zClose+2, nAfter-1)) ){
        zHost = z+1;
        nHost = (size_t)(zClose-z-1);
        zRest = zClose+1;
        nRest = nAfter;
      }
    }
  }
  if( zHost==NULL ){
    const char *zColon = memchr(z, ':', n);
    nHost = zColon ? (size_t)(zColon-z) : n;
    zHost = z;
    zRest = z + nHost;
    nRest = n - nHost;
    if( nHost==0 || (nRest>0 && !dalli_digits(zRest+1, nRest-1)) ) return 0;
  }
  if( zHost[0]=='/' ){                    /* a unix socket: no port */
    if( nRest>0 ) return 0;
    memcpy(zOut, zHost, nHost);
    return nHost;
  }
  memcpy(zOut, zHost, nHost);
  zOut[nHost] = ':';
  if( nRest==0 ){
    memcpy(zOut+nHost+1, "11211", 5);
    return nHost + 6;
  }
  if( nRest-1 > 20 ) return 0;            /* no real port */
  size_t nPort = dalli_port(zRest+1, nRest-1, zOut+nHost+1);
  return nPort ? nHost + 1 + nPort : 0;
}

/* Points of a server of weight w among n servers of total weight W. */
static uint32_t dalli_count(uint32_t n, double w, double W){
  return (uint32_t)floor((double)n * DALLI_POINTS_PER_SERVER * w / W);
}

/* Point j of the server named zName (nName bytes, zName having room for
** the index after it). */
static uint32_t dalli_point(char *zName, size_t nName, uint32_t j){
  unsigned char d[20];
  int k = snprintf(zName+nName, DALLI_NAME_MAX-nName, ":%u", j);
  hash_sha1(zName, nName + (size_t)k, d);
  return (uint32_t)d[0]<<24 | (uint32_t)d[1]<<16 | (uint32_t)d[2]<<8 | d[3];
}

/* The message for a node Dalli cannot take as a server. */
static void dalli_bad_server(const char *zNode, char *zErr, size_t nErr){
  snprintf(zErr, nErr, "node '%s': algorithm dalli takes a server as "
           "Dalli::Client does: host, host:port, [IPv6]:port or a unix "
           "socket's path (a weight goes in the weight column)", zNode);
}

/* ---------------------------------------------------------- the ring */

/* Node n's points from j = from on (its name is a server, checked). */
static void dalli_make(const ring *r, uint32_t n, uint32_t from,
                       ring_point *a){
  const ring_node *node = &r->nodes[n];
  char zName[DALLI_NAME_MAX];
  size_t nName = dalli_server_name(node->name, node->name_len, zName);
  for(uint32_t j=from; j<node->points; j++){
    a[j-from].pos = dalli_point(zName, nName, j);
  }
}

/* Every server's points, each server's in the order of j; of equal points
** the server that joined later keeps its point, and a key goes to the
** last point at or below it (the points library's predecessor rule). */
static int dalli_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  uint32_t n = r->n_nodes;
  if( n==0 ) return RING_OK;
  double W = 0.0;
  for(uint32_t k=0; k<n; k++) W += r->nodes[k].weight;
  char zName[DALLI_NAME_MAX];
  for(uint32_t k=0; k<n; k++){
    const ring_node *node = &r->nodes[k];
    if( dalli_server_name(node->name, node->name_len, zName)==0 ){
      dalli_bad_server(node->name, zErr, nErr);
      return RING_INVALID;
    }
    r->nodes[k].points = dalli_count(n, node->weight, W);
  }
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_PREDECESSOR, RING_TIES_LAST, 0 },
    .make = dalli_make,
  };
  return ring_points_make(r, prev, &mk);
}

/* ---------------------------------------------------------- keys */

/* The key Dalli sends: "namespace:key", shortened past 250 characters to
** its first 212 (213 with a namespace, as Dalli keeps for its history). */
static void dalli_key_rule(const ring_config *cfg, ring_keys *k){
  const dalli_config *c = RING_OWN_CONFIG(cfg, dalli_config);
  size_t n = strlen(c->namespace);
  if( n ){
    char zPrefix[DALLI_MAX_NAMESPACE + 1];     /* "namespace:" */
    memcpy(zPrefix, c->namespace, n);
    zPrefix[n] = ':';
    ring_keys_add_step(k, RING_KEY_PREFIX, (uint32_t)n + 1, zPrefix, n + 1);
  }
  ring_keys_add_step(k, RING_KEY_SHORTEN,
                     DALLI_PREFIX_CHARS + (n ? 1 : 0), NULL, 0);
}

/* ---------------------------------------------------------- checks */

static int64_t dalli_point_budget(const ring_config *cfg, double w){
  (void)cfg;
  /* n*160*w/W with W >= w + (n-1): at most 160*w. */
  return (int64_t)w * DALLI_POINTS_PER_SERVER;
}

static const char *dalli_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=floor(w) ){
    return "algorithm dalli takes whole weights, as Dalli's "
           "\"host:port:weight\" does: 1, 2, 3, ...";
  }
  return NULL;
}

static int dalli_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  if( (set & OPTION_HASH) && cfg->hash!=HASH_CRC32A ){
    snprintf(zErr, nErr, "hash: algorithm dalli hashes keys with CRC-32 and "
             "points with SHA-1, as Dalli does (crc32a, the default), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

/* A server Dalli cannot parse is refused when it is committed (the only
** way a build fails but for memory). */
static int dalli_check_commit(const ring_config *cfg, const ring_commit *c,
                              char *zErr, size_t nErr){
  (void)cfg;
  char zName[DALLI_NAME_MAX];
  for(uint32_t i=0; i<c->n_nodes; i++){
    const ring_input *in = &c->nodes[i];
    if( dalli_server_name(in->name, in->name_len, zName)==0 ){
      char zNode[RING_MAX_NAME + 1];
      memcpy(zNode, in->name, in->name_len);
      zNode[in->name_len] = 0;
      dalli_bad_server(zNode, zErr, nErr);
      return RING_INVALID;
    }
  }
  return RING_OK;
}

static unsigned dalli_commit_needs(const ring_config *cfg){
  (void)cfg;
  return RING_COMMIT_NODES;
}

const ring_algo algo_dalli = {
  .name = "dalli",
  .default_hash = HASH_CRC32A,
  .own_options = dalli_options,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = dalli_check_options,
  .check_weight = dalli_check_weight,
  .point_budget = dalli_point_budget,
  .build = dalli_build,
  .key_rule = dalli_key_rule,
  .check_commit = dalli_check_commit,
  .commit_needs = dalli_commit_needs,
  .doc = {
    .summary = "Ruby Dalli's `Dalli::Ring` (Rails' `:mem_cache_store`)",
    .reproduces = "a Dalli client (Rails' `:mem_cache_store`)",
    .cost = "O(1) expected (as ketama)",
    .weights = "integers ≥ 1 (Dalli's: floor(n·160·w/Σw) points)",
    .remove = "any node",
    .movement = "onto the new node, and between others where point counts "
                "change with unequal weights",
    .options = "`namespace` (Dalli's `:namespace`; none by default)",
    .points = "points, in the order of their arcs",
    .arcs = "arcs (from a point to the next)",
    .replicas = "points clockwise from the key's (Dalli itself re-hashes "
                "the key past a dead server)",
  },
};

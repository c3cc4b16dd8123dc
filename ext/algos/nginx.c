/*
** nginx.c: algorithm nginx, the ring of nginx's upstream hash module with
** `hash $key consistent` (ngx_http_upstream_hash_module), bit for bit as
** nginx 1.22 on glibc builds it.
**
** Nodes are the upstream's `server` addresses exactly as written, in the
** upstream's order (the nodes' join order). Each address is split into a
** host and a port: `unix:` (any case) and the rest is all host, no port;
** else a ':' followed only by digits to the end splits it (host before the
** last ':', port after); else it is all host, no port. So "10.0.0.1"
** and "10.0.0.1:80" are different rings, as in nginx.
**
** A server of weight w (an integer >= 1) gets 160*w points. With
** base = host, one NUL byte, port, point 0 is CRC-32(base + 4 zero bytes)
** and point j+1 is CRC-32(base + point j as 4 little-endian bytes): a
** chain. Points are sorted, and of equal points nginx keeps only the first
** made (glibc's qsort is a stable merge sort), so the server listed
** earlier wins a tie and the other loses that point (its `points` counts
** what it kept, ch_points numbers what it kept from 0 in chain order, and
** ch_replicas walks servers in the order nginx tries them when one
** fails). A chain that comes back to a value it made repeats itself from
** there on: those repeats are ties the node loses to itself. A key's
** position is the CRC-32 of its bytes
** (hash crc32a); it belongs to the first point at or after it, wrapping to
** the lowest point.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "algo.h"
#include "options.h"

#define NGINX_POINTS_PER_WEIGHT 160

/* A server's points, made one at a time: the label is base (host, NUL,
** port) followed by the previous point as 4 little-endian bytes. */
typedef struct nginx_chain {
  char label[RING_MAX_NAME + 1 + 4];
  size_t nBase;
  uint32_t prev;
} nginx_chain;

/* Start node's chain: split its address into host and port (the rule at
** the top of this file) and lay out the label. */
static void nginx_chain_start(nginx_chain *c, const ring_node *node){
  const char *z = node->name;
  size_t n = node->name_len;
  const char *zHost = z, *zPort = z + n;
  size_t nHost = n, nPort = 0;
  if( n>=5 && strncasecmp(z, "unix:", 5)==0 ){
    zHost = z + 5;
    nHost = n - 5;
  }else{
    size_t i = n;
    while( i>0 && z[i-1]>='0' && z[i-1]<='9' ) i--;
    if( i>0 && z[i-1]==':' ){
      nHost = i - 1;
      zPort = z + i;
      nPort = n - i;
    }
  }
  memcpy(c->label, zHost, nHost);
  c->label[nHost] = 0;
  memcpy(c->label + nHost + 1, zPort, nPort);
  c->nBase = nHost + 1 + nPort;
  c->prev = 0;
}

/* The chain's next point. */
static uint32_t nginx_chain_next(nginx_chain *c){
  unsigned char *b = (unsigned char *)c->label + c->nBase;
  b[0] = (unsigned char)c->prev;
  b[1] = (unsigned char)(c->prev>>8);
  b[2] = (unsigned char)(c->prev>>16);
  b[3] = (unsigned char)(c->prev>>24);
  c->prev = (uint32_t)hash_bytes(HASH_CRC32A, 0, c->label, c->nBase + 4);
  return c->prev;
}

/* Points a server of weight w makes (w is a whole number, checked). */
static uint32_t nginx_count(double w){
  return (uint32_t)w * NGINX_POINTS_PER_WEIGHT;
}

/* Node n's points from chain step from on (the chain is walked from its
** start: each point is the CRC-32 of the one before). */
static void nginx_make(const ring *r, uint32_t n, uint32_t from,
                       ring_point *a){
  nginx_chain chain;
  nginx_chain_start(&chain, &r->nodes[n]);
  for(uint32_t j=0; j<r->nodes[n].points; j++){
    uint32_t pos = nginx_chain_next(&chain);
    if( j>=from ) a[j-from].pos = pos;
  }
}

/* The points of every server, each server's in chain order; of equal
** points the server listed first keeps its point. */
static int nginx_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)zErr; (void)nErr;
  for(uint32_t k=0; k<r->n_nodes; k++){
    r->nodes[k].points = nginx_count(r->nodes[k].weight);
  }
  static const ring_points_maker mk = {
    .rule = { RING_LOOKUP_SUCCESSOR, RING_TIES_FIRST, 0 },
    .make = nginx_make,
  };
  return ring_points_make(r, prev, &mk);
}

static int64_t nginx_point_budget(const ring_config *cfg, double w){
  (void)cfg;
  return (int64_t)w * NGINX_POINTS_PER_WEIGHT;   /* at most 1.6e11 */
}

static const char *nginx_check_weight(const ring_config *cfg, double w){
  (void)cfg;
  if( w!=floor(w) ){
    return "algorithm nginx takes whole weights, as nginx's weight=N does: "
           "1, 2, 3, ...";
  }
  return NULL;
}

static int nginx_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  if( (set & OPTION_HASH) && cfg->hash!=HASH_CRC32A ){
    snprintf(zErr, nErr, "hash: algorithm nginx hashes keys and points with "
             "CRC-32, as nginx does (crc32a, the default), not %s",
             hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_nginx = {
  .name = "nginx",
  .default_hash = HASH_CRC32A,
  .units = RING_UNITS_POINTS,
  .unit_name = "points",
  .check_options = nginx_check_options,
  .check_weight = nginx_check_weight,
  .point_budget = nginx_point_budget,
  .build = nginx_build,
  .doc = {
    .summary = "nginx's `hash $key consistent`",
    .reproduces = "an nginx upstream",
    .cost = "O(log points)",
    .weights = "integers ≥ 1 (160 points each)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "none (CRC-32, as nginx)",
  },
};

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
** what it kept, and ch_replicas then walks servers in the order nginx
** tries them when one fails). A key's position is the CRC-32 of its bytes
** (hash crc32a); it belongs to the first point at or after it, wrapping to
** the lowest point.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A point while the ring is built: position, owner, and its place in the
** order nginx makes points (join order, then chain order). */
typedef struct nginx_point {
  uint64_t pos;
  uint32_t node;
  uint32_t made;
} nginx_point;

static int nginx_point_compare(const void *pa, const void *pb){
  const nginx_point *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  return (a->made>b->made) - (a->made<b->made);
}

static int nginx_join_compare(const void *pa, const void *pb){
  const ring_node *a = *(const ring_node *const *)pa;
  const ring_node *b = *(const ring_node *const *)pb;
  return (a->join>b->join) - (a->join<b->join);
}

static int nginx_build(ring *r, const ring *prev, char *zErr, size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  uint32_t n = r->n_nodes;
  uint64_t total = 0;
  for(uint32_t k=0; k<n; k++){
    total += nginx_count(r->nodes[k].weight);
  }
  if( total==0 ) return RING_OK;

  const ring_node **aOrder = ring_alloc(sizeof(*aOrder) * n);
  nginx_point *aMade = ring_alloc(sizeof(nginx_point) * total);
  ring_point *aPoint = ring_alloc(sizeof(ring_point) * total);
  nginx_chain chain;
  int rc = RING_NOMEM;
  if( aOrder && aMade && aPoint ){
    for(uint32_t k=0; k<n; k++) aOrder[k] = &r->nodes[k];
    qsort(aOrder, n, sizeof(*aOrder), nginx_join_compare);
    uint32_t m = 0;
    for(uint32_t o=0; o<n; o++){
      uint32_t k = (uint32_t)(aOrder[o] - r->nodes);
      uint32_t count = nginx_count(r->nodes[k].weight);
      nginx_chain_start(&chain, &r->nodes[k]);
      for(uint32_t j=0; j<count; j++, m++){
        aMade[m].pos = nginx_chain_next(&chain);
        aMade[m].node = k;
        aMade[m].made = m;
      }
    }
    /* Sort, keep the first made of equal points, count what each kept. */
    qsort(aMade, total, sizeof(nginx_point), nginx_point_compare);
    uint32_t kept = 0;
    for(uint32_t i=0; i<total; i++){
      if( kept>0 && aPoint[kept-1].pos==aMade[i].pos ) continue;
      aPoint[kept].pos = aMade[i].pos;
      aPoint[kept].node = aMade[i].node;
      r->nodes[aMade[i].node].points++;
      kept++;
    }
    rc = ring_points_set(r, aPoint, kept);
  }
  ring_dealloc(aOrder);
  ring_dealloc(aMade);
  ring_dealloc(aPoint);
  return rc;
}

/* Node n's points in chain order, without those it lost to a tie (they
** are not on the ring), numbered from 0 in that order. A chain that came
** back to a value it made before repeats itself from there on, and those
** repeats are not on the ring either: all the node kept comes before, so
** the walk stops when it has them all. */
static uint32_t nginx_node_positions(const ring *r, uint32_t n,
                                     uint64_t *aPos){
  nginx_chain chain;
  uint32_t count = nginx_count(r->nodes[n].weight);
  uint32_t kept = 0;
  nginx_chain_start(&chain, &r->nodes[n]);
  for(uint32_t j=0; j<count && kept<r->nodes[n].points; j++){
    uint32_t pos = nginx_chain_next(&chain);
    uint32_t i = ring_point_at(r, pos);
    if( r->positions[i]==pos && r->owners[i]==n ) aPos[kept++] = pos;
  }
  return 0;
}

static int64_t nginx_max_points(const ring_config *cfg, double w){
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
  .max_points = nginx_max_points,
  .build = nginx_build,
  .node_positions = nginx_node_positions,
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

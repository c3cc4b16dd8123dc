/*
** ketama.c: the ketama ring of twemproxy (nutcracker 0.5) and libmemcached
** (1.1, KETAMA_WEIGHTED), bit for bit (research/compat-spec.md, 1 and 2).
**
** For n nodes of total weight W, node N of weight w gets
**     pts = 4 * floor(w/W * vnodes / 4 * n + 1e-10)
** points, evaluated step by step in single precision exactly as those
** programs do (vnodes is 160 there: KETAMA_POINTS_PER_SERVER). For
** i = 0 .. pts/4-1, the MD5 of the text "N-i" gives four points: digest
** words 0..3, each read little-endian. The key hash is the ring's hash
** option (md5 by default: MD5 word 0); a key belongs to the first point at
** or after it, wrapping to the first point.
**
** Equal points are ordered as twemproxy's stable sort leaves them: by the
** node's rank in twemproxy's server order (shorter names first, then
** bytewise), then in the order they were generated. libmemcached orders
** ties by the order servers were added instead; 32-bit MD5 points rarely
** tie, so the two agree unless two points collide exactly.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"

/* Points of a node of weight w among n nodes of total weight W. The float
** steps are the point: they decide when a group of 4 is lost. */
static uint32_t ketama_points(double w, double W, uint32_t n, int vnodes){
  float pct = (float)w / (float)W;
  /* Weights below float's range (1e-300) make that 0/0 when all nodes have
  ** them; twemproxy's integer weights never do. Then the share in double. */
  if( isnan(pct) ) pct = (float)(w / W);
  float t = pct * (float)vnodes;
  t = t / 4.0f;
  t = t * (float)n;
  t = (float)((double)t + 1e-10);
  return 4 * (uint32_t)floorf(t);
}

void ketama_digest(const ring_node *node, uint32_t i, uint64_t aPos[4]){
  char label[RING_MAX_NAME + 16];
  memcpy(label, node->name, node->name_len);
  int len = (int)node->name_len;
  len += snprintf(label+len, sizeof(label)-len, "-%u", i);
  unsigned char d[16];
  hash_md5(label, (size_t)len, d);
  for(uint32_t w=0; w<4; w++){
    const unsigned char *b = d + 4*w;
    aPos[w] = (uint32_t)b[0] | (uint32_t)b[1]<<8 | (uint32_t)b[2]<<16
            | (uint32_t)b[3]<<24;
  }
}

typedef struct ketama_point {
  uint64_t pos;
  uint32_t node;           /* index in r->nodes (name order) */
  uint32_t rank;           /* twemproxy's server order */
  uint32_t gen;            /* 4*i + word */
} ketama_point;

static int point_compare(const void *pa, const void *pb){
  const ketama_point *a = pa, *b = pb;
  if( a->pos!=b->pos ) return a->pos<b->pos ? -1 : 1;
  if( a->rank!=b->rank ) return a->rank<b->rank ? -1 : 1;
  return (a->gen>b->gen) - (a->gen<b->gen);
}

/* twemproxy's server order: by name length, then bytewise. */
static int rank_compare(const void *pa, const void *pb){
  const ring_node *a = *(const ring_node *const *)pa;
  const ring_node *b = *(const ring_node *const *)pb;
  if( a->name_len!=b->name_len ) return a->name_len<b->name_len ? -1 : 1;
  return memcmp(a->name, b->name, a->name_len);
}

int ketama_build(ring *r){
  uint32_t n = r->n_nodes;
  double W = 0.0;
  uint64_t total = 0;
  for(uint32_t k=0; k<n; k++) W += r->nodes[k].weight;
  for(uint32_t k=0; k<n; k++){
    r->nodes[k].points = ketama_points(r->nodes[k].weight, W, n,
                                       r->config.vnodes);
    total += r->nodes[k].points;
  }
  if( total==0 ) return RING_OK;

  /* Rank the nodes in twemproxy's order (names are distinct, so qsort's
  ** instability does not matter). */
  const ring_node **aOrder = ring_alloc(sizeof(*aOrder) * n);
  uint32_t *aRank = ring_alloc(sizeof(uint32_t) * n);
  ketama_point *aPoint = ring_alloc(sizeof(ketama_point) * total);
  r->positions = ring_alloc(sizeof(uint64_t) * total);
  r->owners = ring_alloc(sizeof(uint32_t) * total);
  if( !aOrder || !aRank || !aPoint || !r->positions || !r->owners ){
    ring_dealloc(aOrder);
    ring_dealloc(aRank);
    ring_dealloc(aPoint);
    return RING_NOMEM;
  }
  for(uint32_t k=0; k<n; k++) aOrder[k] = &r->nodes[k];
  qsort(aOrder, n, sizeof(*aOrder), rank_compare);
  for(uint32_t k=0; k<n; k++) aRank[aOrder[k] - r->nodes] = k;

  uint32_t m = 0;
  for(uint32_t k=0; k<n; k++){
    for(uint32_t i=0; i<r->nodes[k].points/4; i++){
      uint64_t aPos[4];
      ketama_digest(&r->nodes[k], i, aPos);
      for(uint32_t w=0; w<4; w++){
        aPoint[m].pos = aPos[w];
        aPoint[m].node = k;
        aPoint[m].rank = aRank[k];
        aPoint[m].gen = 4*i + w;
        m++;
      }
    }
  }
  qsort(aPoint, total, sizeof(ketama_point), point_compare);
  for(uint32_t i=0; i<total; i++){
    r->positions[i] = aPoint[i].pos;
    r->owners[i] = aPoint[i].node;
  }
  r->n_points = (uint32_t)total;
  ring_dealloc(aOrder);
  ring_dealloc(aRank);
  ring_dealloc(aPoint);
  return RING_OK;
}

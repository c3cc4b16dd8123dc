/*
** ring_points.c: sorted point arrays, the shape most rings have (algo.h).
**
** r->positions and r->owners list every point in ring order: by position,
** and on equal positions in the order the algorithm made them. Two ways
** to fill them:
**
**   ring_points_set    the algorithm made every point: sort them (LSD
**                      radix sort on the position: stable, so ties keep
**                      the order they were made in);
**   ring_points_build  the algorithm hashes each node's points on demand
**                      (the virtual-node ring): a previous ring of the
**                      same config already holds the points of every node
**                      whose name and point count did not change; keep
**                      those (in order, with owners renumbered), hash and
**                      sort only the other nodes' points, and merge the
**                      two sorted lists. Adding a node to a ring of 1,000
**                      costs a copy of the array instead of 160,000
**                      hashes and a sort.
**
** Both end with the lookup index (ring_index.c).
*/
#include <string.h>

#include "algo.h"
#include "options.h"

int ring_format_u32(uint32_t v, char *z){
  char buf[10];
  int n = 0;
  do{ buf[n++] = (char)('0' + v%10); v /= 10; }while( v );
  for(int i=0; i<n; i++) z[i] = buf[n-1-i];
  return n;
}

/*
** Sort a (n points) by position, stably, with tmp as scratch of the same
** size: eight passes of one byte each, skipping bytes that are the same in
** every point.
*/
static int sort_points(ring_point *a, uint32_t n){
  if( n<2 ) return RING_OK;
  ring_point *tmp = ring_alloc(sizeof(ring_point) * n);
  if( tmp==NULL ) return RING_NOMEM;
  uint32_t count[8][256];
  memset(count, 0, sizeof(count));
  for(uint32_t i=0; i<n; i++){
    for(int d=0; d<8; d++) count[d][(a[i].pos >> (8*d)) & 0xff]++;
  }
  ring_point *src = a, *dst = tmp;
  for(int d=0; d<8; d++){
    uint32_t *c = count[d];
    if( c[(src[0].pos >> (8*d)) & 0xff]==n ) continue;   /* one value */
    uint32_t sum = 0;
    for(int v=0; v<256; v++){ uint32_t t = c[v]; c[v] = sum; sum += t; }
    for(uint32_t i=0; i<n; i++) dst[c[(src[i].pos >> (8*d)) & 0xff]++] = src[i];
    ring_point *t = src; src = dst; dst = t;
  }
  if( src!=a ) memcpy(a, src, sizeof(ring_point) * n);
  ring_dealloc(tmp);
  return RING_OK;
}

/* Bytewise name order (SQLite's BINARY), as the nodes are sorted. */
static int node_compare(const ring_node *a, const ring_node *b){
  int c = memcmp(a->name, b->name, a->name_len<b->name_len ? a->name_len
                                                           : b->name_len);
  if( c ) return c;
  return a->name_len<b->name_len ? -1 : a->name_len>b->name_len;
}

int ring_points_set(ring *r, ring_point *a, uint32_t n){
  int rc = sort_points(a, n);
  if( rc!=RING_OK ) return rc;
  r->positions = ring_alloc(sizeof(uint64_t) * (n ? n : 1));
  r->owners = ring_alloc(sizeof(uint32_t) * (n ? n : 1));
  if( r->positions==NULL || r->owners==NULL ) return RING_NOMEM;
  for(uint32_t i=0; i<n; i++){
    r->positions[i] = a[i].pos;
    r->owners[i] = a[i].node;
  }
  r->n_points = n;
  return ring_index_build(r);
}

/* Hash the points of node n of r into a, in replica order. */
static void hash_node_points(const ring *r, uint32_t n, ring_point *a,
                             void (*hash_node)(const ring *, uint32_t,
                                               uint64_t *, size_t)){
  /* a[i].pos is a uint64_t every sizeof(ring_point) bytes */
  _Static_assert(sizeof(ring_point) % sizeof(uint64_t)==0,
                 "ring_point is a whole number of positions");
  hash_node(r, n, &a[0].pos, sizeof(ring_point)/sizeof(uint64_t));
  for(uint32_t i=0; i<r->nodes[n].points; i++) a[i].node = n;
}

int ring_points_build(ring *r, const ring *prev,
                      void (*hash_node)(const ring *r, uint32_t n,
                                        uint64_t *aPos, size_t stride)){
  r->n_points = 0;
  for(uint32_t n=0; n<r->n_nodes; n++) r->n_points += r->nodes[n].points;
  if( r->n_points==0 ) return RING_OK;
  if( prev && (!options_same(&prev->config, &r->config) || prev->n_points==0) ){
    prev = NULL;
  }
  r->positions = ring_alloc(sizeof(uint64_t) * r->n_points);
  r->owners = ring_alloc(sizeof(uint32_t) * r->n_points);
  /* keep[n]: node n's points are in prev; from[o]: new index of prev's
  ** node o, or UINT32_MAX if its points are not kept. */
  uint8_t *keep = ring_alloc(r->n_nodes);
  uint32_t *from = prev ? ring_alloc(sizeof(uint32_t) * prev->n_nodes) : NULL;
  ring_point *aNew = NULL;
  int rc = RING_NOMEM;
  if( r->positions==NULL || r->owners==NULL || keep==NULL
   || (prev && from==NULL) ){
    goto done;
  }

  /* Match nodes by name (both lists are sorted by name). */
  memset(keep, 0, r->n_nodes);
  uint32_t nKept = 0;
  if( prev ){
    uint32_t i = 0, j = 0;
    for(; i<prev->n_nodes; i++){
      from[i] = UINT32_MAX;
      int c = 1;
      while( j<r->n_nodes
          && (c = node_compare(&r->nodes[j], &prev->nodes[i]))<0 ) j++;
      if( j<r->n_nodes && c==0 && r->nodes[j].points==prev->nodes[i].points ){
        from[i] = j;
        keep[j] = 1;
        nKept += r->nodes[j].points;
      }
    }
  }

  /* Hash and sort the points of the other nodes. */
  uint32_t nNew = r->n_points - nKept;
  aNew = ring_alloc(sizeof(ring_point) * (nNew ? nNew : 1));
  if( aNew==NULL ) goto done;
  uint32_t k = 0;
  for(uint32_t n=0; n<r->n_nodes; n++){
    if( keep[n] ) continue;
    hash_node_points(r, n, &aNew[k], hash_node);
    k += r->nodes[n].points;
  }
  rc = sort_points(aNew, nNew);
  if( rc!=RING_OK ) goto done;

  /* Merge prev's kept points with the new ones. Ties: a kept point and a
  ** new one are never of the same node, so the node order decides; kept
  ** points keep their relative order, which node renumbering preserves. */
  uint32_t out = 0, a = 0;
  uint32_t nPrev = prev ? prev->n_points : 0;
  for(uint32_t p=0; p<nPrev; p++){
    uint32_t owner = from[prev->owners[p]];
    if( owner==UINT32_MAX ) continue;
    uint64_t pos = prev->positions[p];
    while( a<nNew && (aNew[a].pos<pos
                      || (aNew[a].pos==pos && aNew[a].node<owner)) ){
      r->positions[out] = aNew[a].pos;
      r->owners[out++] = aNew[a++].node;
    }
    r->positions[out] = pos;
    r->owners[out++] = owner;
  }
  for(; a<nNew; a++){
    r->positions[out] = aNew[a].pos;
    r->owners[out++] = aNew[a].node;
  }
  rc = ring_index_build(r);

done:
  ring_dealloc(aNew);
  ring_dealloc(from);
  ring_dealloc(keep);
  return rc;
}

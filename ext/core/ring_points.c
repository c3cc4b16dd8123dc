/*
** ring_points.c: a ring's point arrays (algorithm ring).
**
** Node N's point i sits at hash("N#i"). The arrays r->positions and
** r->owners list every point in ring order: by position, then (on equal
** positions) by node name, then by i. Two ways to fill them, with the same
** result:
**
**   full build   hash every label, then sort (LSD radix sort on the
**                position: stable, so points generated in (node, i) order
**                keep that order on equal positions, as the model says);
**   from prev    a previous ring of the same config already holds the
**                points of every node whose name and point count did not
**                change: keep those (in order, with owners renumbered),
**                hash and sort only the other nodes' points, and merge the
**                two sorted lists. Adding a node to a ring of 1,000 costs
**                a copy of the array instead of 160,000 hashes and a sort.
*/
#include <string.h>

#include "ring_impl.h"

/* A point while the ring is built. */
typedef struct build_point {
  uint64_t pos;
  uint32_t node;           /* index in the new ring's nodes */
} build_point;

/* Decimal text of v at z (at least 10 bytes); returns its length. */
static int format_u32(uint32_t v, char *z){
  char buf[10];
  int n = 0;
  do{ buf[n++] = (char)('0' + v%10); v /= 10; }while( v );
  for(int i=0; i<n; i++) z[i] = buf[n-1-i];
  return n;
}

void ring_points_hash(const ring *r, uint32_t n, uint64_t *aPos,
                      size_t stride){
  const ring_node *node = &r->nodes[n];
  char label[RING_MAX_NAME + 16];
  memcpy(label, node->name, node->name_len);
  label[node->name_len] = '#';
  char *zNum = label + node->name_len + 1;
  for(uint32_t i=1; i<=node->points; i++){
    size_t len = node->name_len + 1 + format_u32(i, zNum);
    aPos[(i-1)*stride] = hash_bytes(r->config.hash, r->config.seed, label, len);
  }
}

/* Hash the points of node n of r into a, in replica order. */
static void hash_node(const ring *r, uint32_t n, build_point *a){
  /* a[i].pos is a uint64_t every sizeof(build_point) bytes */
  _Static_assert(sizeof(build_point) % sizeof(uint64_t)==0,
                 "build_point is a whole number of positions");
  ring_points_hash(r, n, &a[0].pos, sizeof(build_point)/sizeof(uint64_t));
  for(uint32_t i=0; i<r->nodes[n].points; i++) a[i].node = n;
}

/*
** Sort a (n points) by position, stably, with tmp as scratch of the same
** size: eight passes of one byte each, skipping bytes that are the same in
** every point.
*/
static int sort_points(build_point *a, uint32_t n){
  if( n<2 ) return RING_OK;
  build_point *tmp = ring_alloc(sizeof(build_point) * n);
  if( tmp==NULL ) return RING_NOMEM;
  uint32_t count[8][256];
  memset(count, 0, sizeof(count));
  for(uint32_t i=0; i<n; i++){
    for(int d=0; d<8; d++) count[d][(a[i].pos >> (8*d)) & 0xff]++;
  }
  build_point *src = a, *dst = tmp;
  for(int d=0; d<8; d++){
    uint32_t *c = count[d];
    if( c[(src[0].pos >> (8*d)) & 0xff]==n ) continue;   /* one value */
    uint32_t sum = 0;
    for(int v=0; v<256; v++){ uint32_t t = c[v]; c[v] = sum; sum += t; }
    for(uint32_t i=0; i<n; i++) dst[c[(src[i].pos >> (8*d)) & 0xff]++] = src[i];
    build_point *t = src; src = dst; dst = t;
  }
  if( src!=a ) memcpy(a, src, sizeof(build_point) * n);
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

static int same_config(const ring_config *a, const ring_config *b){
  return a->algorithm==b->algorithm && a->hash==b->hash
      && a->vnodes==b->vnodes && a->seed==b->seed;
}

int ring_points_build(ring *r, const ring *prev){
  if( r->n_points==0 ) return RING_OK;
  if( prev && (!same_config(&prev->config, &r->config) || prev->n_points==0) ){
    prev = NULL;
  }
  r->positions = ring_alloc(sizeof(uint64_t) * r->n_points);
  r->owners = ring_alloc(sizeof(uint32_t) * r->n_points);
  /* keep[n]: node n's points are in prev; from[o]: new index of prev's
  ** node o, or UINT32_MAX if its points are not kept. */
  uint8_t *keep = ring_alloc(r->n_nodes);
  uint32_t *from = prev ? ring_alloc(sizeof(uint32_t) * prev->n_nodes) : NULL;
  build_point *aNew = NULL;
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
  aNew = ring_alloc(sizeof(build_point) * (nNew ? nNew : 1));
  if( aNew==NULL ) goto done;
  uint32_t k = 0;
  for(uint32_t n=0; n<r->n_nodes; n++){
    if( keep[n] ) continue;
    hash_node(r, n, &aNew[k]);
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
  rc = RING_OK;

done:
  ring_dealloc(aNew);
  ring_dealloc(from);
  ring_dealloc(keep);
  return rc;
}

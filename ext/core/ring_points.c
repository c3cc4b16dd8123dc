/*
** ring_points.c: sorted point arrays, the shape most rings have (algo.h).
**
** r->positions and r->owners list every point in ring order: by position,
** and on equal positions in the order of a tie rule. Three ways to fill
** them:
**
**   ring_points_make   every points algorithm's: the build says how a
**                      node's points are made (a function, from a replica
**                      number on) and the rule; a previous ring of the
**                      same config already holds the points of every node
**                      that kept all it made there: keep those (the first
**                      min(old, new count) of each, with owners
**                      renumbered), make only the rest, sort them and
**                      merge the two sorted lists, then settle ties and
**                      the arcs' ends as for a full build. Adding a node
**                      to a ring of 10,000 costs a pass over its points
**                      instead of 1.6M hashes and a sort;
**   ring_points_place  the algorithm made every point: sort them (LSD
**                      radix sort on the position: stable, so ties keep
**                      the order they were made in), keep the winner of
**                      each tie, number each node's points, and turn them
**                      into positions under a lookup rule (where each
**                      point's arc ends) or into a table;
**   ring_points_set    the same sort, every point kept, successor rule
**                      only (redis_cluster).
**
** All end with the lookup index (ring_index.c). Equal positions go in the
** order of a tie rule (ring_ties): node name, or join order either way, or
** the build's own order (ring_points_set: the order made).
**
** Labels (ring_label_*): the text a points ring hashes for point i of a
** node, from a template where %s is the node's name, %d the index i in
** decimal and %% a literal %: "%s#%d" is the ring algorithm's default,
** "%d%s" groupcache's, "%s-%d" a Java TreeMap router's.
*/
#include <assert.h>
#include <math.h>
#include <stdio.h>
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

/* ------------------------------------------------------------ labels */

/* A label template taken apart: the literal text before, between and
** after its two conversions (%% already made %), and their order. */
typedef struct points_label_parts {
  char lit[3][RING_MAX_LABEL];
  size_t nLit[3];
  int name_first;                /* %s comes before %d */
} points_label_parts;

/* The bytes of the character at z (a UTF-8 lead byte, or one byte). */
static int points_label_char_len(const char *z){
  unsigned char c = (unsigned char)z[0];
  int n = c>=0xF0 ? 4 : c>=0xE0 ? 3 : c>=0xC0 ? 2 : 1;
  for(int i=1; i<n; i++){
    if( z[i]==0 ) return i;
  }
  return n;
}

/* Parse template z into *p. 0, or 1 with a message in zErr. */
static int points_label_parse(const char *z, points_label_parts *p,
                              char *zErr, size_t nErr){
  static const char zRule[] = "a label needs one %s (the node name) and one "
                              "%d (the point index), and %% for a literal %";
  size_t n = strlen(z);
  int nName = 0, nIndex = 0, k = 0;
  if( n>RING_MAX_LABEL ){
    snprintf(zErr, nErr, "label: %zu bytes is longer than a label may be "
             "(%d bytes)", n, RING_MAX_LABEL);
    return 1;
  }
  memset(p, 0, sizeof(*p));
  for(size_t i=0; i<n; i++){
    if( z[i]!='%' ){
      p->lit[k][p->nLit[k]++] = z[i];
      continue;
    }
    char c = z[++i];
    if( c=='%' ){
      p->lit[k][p->nLit[k]++] = '%';
    }else if( c=='s' || c=='d' ){
      int *pCount = c=='s' ? &nName : &nIndex;
      if( ++*pCount>1 ){
        snprintf(zErr, nErr, "label: '%s' has %%%c more than once; %s", z, c,
                 zRule);
        return 1;
      }
      if( c=='s' && nIndex==0 ) p->name_first = 1;
      k++;
    }else if( c==0 ){
      snprintf(zErr, nErr, "label: '%s' ends in a lone %%; write %%%% for a "
               "literal %%", z);
      return 1;
    }else{
      snprintf(zErr, nErr, "label: '%s' has %%%.*s; after a %% only s (the "
               "node name), d (the point index) and %% (a literal %%) may "
               "follow", z, points_label_char_len(&z[i]), &z[i]);
      return 1;
    }
  }
  if( nName==0 || nIndex==0 ){
    snprintf(zErr, nErr, "label: '%s' has no %s; %s", z,
             nName==0 ? "%s" : "%d", zRule);
    return 1;
  }
  return 0;
}

int ring_label_check(const char *zLabel, char *zErr, size_t nErr){
  points_label_parts p;
  return points_label_parse(zLabel, &p, zErr, nErr);
}

void ring_label_hash(const ring *r, uint32_t n, const char *zLabel,
                     uint32_t first, uint32_t from, uint64_t *aPos,
                     size_t stride){
  const ring_node *node = &r->nodes[n];
  points_label_parts p;
  char zErr[8];
  if( points_label_parse(zLabel, &p, zErr, sizeof(zErr)) ) return; /* checked */
  /* A label is head, index, tail: the name is in the head when %s comes
  ** first, else in the tail. */
  char text[2*RING_MAX_LABEL + RING_MAX_NAME + 16];
  char tail[RING_MAX_LABEL + RING_MAX_NAME];
  size_t nHead = 0, nTail = 0;
  memcpy(text, p.lit[0], p.nLit[0]);
  nHead = p.nLit[0];
  if( p.name_first ){
    memcpy(text+nHead, node->name, node->name_len);
    nHead += node->name_len;
    memcpy(text+nHead, p.lit[1], p.nLit[1]);
    nHead += p.nLit[1];
  }else{
    memcpy(tail, p.lit[1], p.nLit[1]);
    nTail = p.nLit[1];
    memcpy(tail+nTail, node->name, node->name_len);
    nTail += node->name_len;
  }
  memcpy(tail+nTail, p.lit[2], p.nLit[2]);
  nTail += p.nLit[2];
  for(uint32_t i=from; i<node->points; i++){
    size_t len = nHead + (size_t)ring_format_u32(first + i, text + nHead);
    memcpy(text+len, tail, nTail);
    aPos[(i-from)*stride] = hash_bytes(r->config.hash, r->config.seed, text,
                                       len + nTail);
  }
}

void ring_label_points(const ring *r, uint32_t n, const char *zLabel,
                       uint32_t first, uint32_t from, ring_point *a){
  /* a[i].pos is a uint64_t every sizeof(ring_point) bytes */
  _Static_assert(sizeof(ring_point) % sizeof(uint64_t)==0,
                 "ring_point is a whole number of positions");
  ring_label_hash(r, n, zLabel, first, from, &a[0].pos,
                  sizeof(ring_point)/sizeof(uint64_t));
}

/* ------------------------------------------------------------ points */

/* Bytewise name order (SQLite's BINARY), as the nodes are sorted. */
static int node_compare(const ring_node *a, const ring_node *b){
  int c = memcmp(a->name, b->name, a->name_len<b->name_len ? a->name_len
                                                           : b->name_len);
  if( c ) return c;
  return a->name_len<b->name_len ? -1 : a->name_len>b->name_len;
}

/* The float steps are the point: they decide when a group of 4 is lost. */
uint32_t ring_ketama_count(double w, double W, uint32_t n, int vnodes){
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

size_t ring_label_dash(const ring_node *node, uint32_t i,
                       char label[RING_MAX_NAME + 16]){
  memcpy(label, node->name, node->name_len);
  size_t len = node->name_len;
  label[len++] = '-';
  return len + (size_t)ring_format_u32(i, label + len);
}

void ring_digest_md5_dash(const ring_node *node, uint32_t i, uint64_t aPos[4]){
  char label[RING_MAX_NAME + 16];
  hash_md5_words(label, ring_label_dash(node, i, label), aPos);
}

/* The n sorted points of a as r's points, every one kept, and the index. */
static int points_store(ring *r, const ring_point *a, uint32_t n){
  r->positions = ring_alloc_lookup(sizeof(uint64_t) * (n ? n : 1));
  r->owners = ring_alloc_lookup(sizeof(uint32_t) * (n ? n : 1));
  if( r->positions==NULL || r->owners==NULL ) return RING_NOMEM;
  for(uint32_t i=0; i<n; i++){
    r->positions[i] = a[i].pos;
    r->owners[i] = a[i].node;
  }
  r->n_points = n;
  return ring_index_build(r);
}

int ring_points_set(ring *r, ring_point *a, uint32_t n){
  int rc = sort_points(a, n);
  if( rc!=RING_OK ) return rc;
  return points_store(r, a, n);
}

/* Node n's place in the order of tie rule ties: the lower wins a tie. */
static uint32_t points_tie_rank(const ring *r, ring_ties ties, uint32_t n){
  switch( ties ){
    case RING_TIES_FIRST: return r->nodes[n].join;
    case RING_TIES_LAST:  return r->n_nodes - 1 - r->nodes[n].join;
    default:              return n;              /* name order */
  }
}

/* ------------------------------------------------- ring_points_place */

void ring_digest_make(const ring *r, uint32_t n, uint32_t from,
                      ring_digest_fn digest, ring_point *a){
  const ring_node *node = &r->nodes[n];
  for(uint32_t i=from/4; i<node->points/4; i++){
    uint64_t aPos[4];
    digest(node, i, aPos);
    for(uint32_t w=0; w<4; w++){
      if( 4*i+w>=from ) a[4*i+w-from].pos = aPos[w];
    }
  }
}

/* Does point x come after point p, equal to it, under mk's tie order:
** its node after p's, or the same node's point made later? */
static int tie_after(const ring *r, const ring_points_maker *mk,
                     const ring_point *x, const ring_point *p){
  if( x->node==p->node ) return x->made>p->made;
  if( mk->tie_before ) return mk->tie_before(r, p->node, x->node);
  return points_tie_rank(r, mk->rule.ties, x->node)
       > points_tie_rank(r, mk->rule.ties, p->node);
}

/* Does point x come after point p, of the same position, in a run: by
** their low words where the points have them (lows, by the order made),
** then under mk's tie order? */
static int run_after(const ring *r, const ring_points_maker *mk,
                     const uint64_t *lows, const ring_point *x,
                     const ring_point *p){
  if( lows && lows[x->made]!=lows[p->made] ){
    return lows[x->made]>lows[p->made];
  }
  return tie_after(r, mk, x, p);
}

/* Put each run of equal positions of a (sorted by position) in order: by
** low word (lows, if not NULL), then by mk's order of nodes, and one
** node's points in the order made. Runs are rare and short: an insertion
** sort. */
static void place_order_ties(const ring *r, const ring_points_maker *mk,
                             const uint64_t *lows, ring_point *a,
                             uint32_t n){
  for(uint32_t i=1; i<n; i++){
    if( a[i].pos!=a[i-1].pos ) continue;
    ring_point p = a[i];
    uint32_t j = i;
    while( j>0 && a[j-1].pos==p.pos && run_after(r, mk, lows, &a[j-1], &p) ){
      a[j] = a[j-1];
      j--;
    }
    a[j] = p;
  }
}

/* Are points p and q of a equal: their positions, and their low words
** where the points have them (lows, by the order made)? */
static int place_same(const ring_point *p, const ring_point *q,
                      const uint64_t *lows){
  return p->pos==q->pos && (lows==NULL || lows[p->made]==lows[q->made]);
}

/* Keep the first point of each run of equal points of a: returns how
** many are left. */
static uint32_t place_drop_ties(ring_point *a, uint32_t n,
                                const uint64_t *lows){
  if( n==0 ) return 0;
  uint32_t m = 1;
  while( m<n && !place_same(&a[m], &a[m-1], lows) ) m++;  /* none to move */
  for(uint32_t i=m; i<n; i++){
    if( place_same(&a[m-1], &a[i], lows) ) continue;
    a[m++] = a[i];
  }
  return m;
}

/*
** Each kept point's replica number into aReplica (m entries, in a's
** order): its rank among its node's kept points in the order made. Sets
** each node's `points` and `intact` (0 without aBase). nMade is how many
** points were made; aBase, as for place_sorted, or NULL.
*/
static int place_number(ring *r, const ring_point *a, uint32_t m,
                        uint32_t nMade, const uint32_t *aBase,
                        uint32_t *aReplica){
  uint32_t *aAt = ring_alloc(sizeof(uint32_t) * nMade);  /* made -> kept */
  if( aAt==NULL ) return RING_NOMEM;
  for(uint32_t n=0; n<r->n_nodes; n++) r->nodes[n].points = 0;
  if( aBase ){
    /* A node's points are made in a run from aBase: a node that lost none
    ** numbers them made - aBase, and only the others are counted again
    ** (a few where ties are rare: a pass over a, not a walk through it in
    ** the order made). */
    for(uint32_t k=0; k<m; k++) r->nodes[a[k].node].points++;
    for(uint32_t n=0; n<r->n_nodes; n++){
      const ring_node *node = &r->nodes[n];
      if( node->points==node->made ) continue;
      for(uint32_t i=aBase[n]; i<aBase[n]+node->made; i++){
        aAt[i] = UINT32_MAX;
      }
    }
    for(uint32_t k=0; k<m; k++){
      const ring_node *node = &r->nodes[a[k].node];
      if( node->points==node->made ){
        aReplica[k] = a[k].made - aBase[a[k].node];
      }else{
        aAt[a[k].made] = k;
      }
    }
    /* Each node's points before the first it lost keep their numbers:
    ** `intact` counts them. */
    for(uint32_t n=0; n<r->n_nodes; n++){
      ring_node *node = &r->nodes[n];
      node->intact = node->made;
      if( node->points==node->made ) continue;
      uint32_t replica = 0;
      for(uint32_t i=aBase[n]; i<aBase[n]+node->made; i++){
        if( aAt[i]!=UINT32_MAX ) aReplica[aAt[i]] = replica++;
        else if( node->intact==node->made ) node->intact = i - aBase[n];
      }
    }
  }else{
    for(uint32_t n=0; n<r->n_nodes; n++) r->nodes[n].intact = 0;
    for(uint32_t i=0; i<nMade; i++) aAt[i] = UINT32_MAX;
    for(uint32_t k=0; k<m; k++) aAt[a[k].made] = k;
    for(uint32_t i=0; i<nMade; i++){
      uint32_t k = aAt[i];
      if( k!=UINT32_MAX ) aReplica[k] = r->nodes[a[k].node].points++;
    }
  }
  ring_dealloc(aAt);
  return RING_OK;
}

/* The last position point k of the m sorted, distinct points of a owns
** under rule lookup, in the space [0, top]. */
static uint64_t place_arc_end(const ring_point *a, uint32_t m, uint32_t k,
                              ring_lookup_rule lookup, uint64_t top){
  uint64_t p = a[k].pos;
  uint64_t next = a[k+1<m ? k+1 : 0].pos;
  uint64_t gap = (next - p) & top;       /* 0: the only point */
  switch( lookup ){
    case RING_LOOKUP_ABOVE:          return (p - 1) & top;
    case RING_LOOKUP_PREDECESSOR:    return (next - 1) & top;
    case RING_LOOKUP_NEAREST_BEFORE: return (p + gap/2) & top;
    case RING_LOOKUP_NEAREST_AFTER:  return (p + (gap ? (gap-1)/2 : 0)) & top;
    default:                         return p;
  }
}

/* The table rule: entry i is the owner, under the successor rule, of
** position i*step; a walk over the m sorted points and the entries
** together. Each node's `points` counts its entries. */
static int place_table(ring *r, const ring_point *a, uint32_t m,
                       uint32_t nEntry, uint64_t top){
  int rc = ring_units_alloc(r, nEntry);
  if( rc!=RING_OK ) return rc;
  uint64_t step = top / nEntry;
  uint32_t k = 0;
  for(uint32_t n=0; n<r->n_nodes; n++) r->nodes[n].points = 0;
  for(uint32_t i=0; i<nEntry; i++){
    uint64_t pos = step * i;
    while( k<m && a[k].pos<pos ) k++;
    uint32_t owner = a[k<m ? k : 0].node;
    r->unit_owners[i] = owner;
    r->nodes[owner].points++;
  }
  return RING_OK;
}

/*
** The n points of a, sorted and in tie order (their `made` numbering the
** order they were made, each below n), made r's placement under mk: ties
** settled, points numbered, arcs' ends, tokens, the index. aBase: NULL,
** or where each node's points start in the `made` numbering (each node's
** `points` already what it made), so that with no tie settled a point's
** replica number is made - aBase[node]. lows: NULL, or the points' low
** words by `made` (128-bit points, RING_LOOKUP_ABOVE), kept in r->lows.
*/
static int place_sorted(ring *r, ring_point *a, uint32_t n,
                        const ring_points_maker *mk, const uint32_t *aBase,
                        const uint64_t *lows){
  const ring_points_rule *rule = &mk->rule;
  unsigned bits = ring_space_bits(&r->config);
  uint64_t top = bits==64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  uint32_t m = (mk->flags & RING_POINTS_KEEP_TIES)
               ? n : place_drop_ties(a, n, lows);
  if( m==0 ){
    for(uint32_t k=0; k<r->n_nodes; k++) r->nodes[k].points = 0;
    return RING_OK;
  }
  if( rule->lookup==RING_LOOKUP_TABLE ){
    return place_table(r, a, m, rule->table, top);
  }
  if( mk->flags & RING_POINTS_NO_REPLICAS ){
    for(uint32_t k=0; k<r->n_nodes; k++) r->nodes[k].intact = r->nodes[k].made;
    return points_store(r, a, m);
  }

  /* Replica numbers: from aBase when every point stayed, else counted. */
  uint32_t *aReplica = NULL;
  int rc = RING_OK;
  if( m<n || aBase==NULL ){
    aReplica = ring_alloc(sizeof(uint32_t) * m);
    if( aReplica==NULL ) return RING_NOMEM;
    rc = place_number(r, a, m, n, aBase, aReplica);
  }
  r->positions = ring_alloc_lookup(sizeof(uint64_t) * m);
  r->owners = ring_alloc_lookup(sizeof(uint32_t) * m);
  r->replicas = ring_alloc(sizeof(uint32_t) * m);
  if( rule->lookup!=RING_LOOKUP_SUCCESSOR ){
    r->tokens = ring_alloc(sizeof(uint64_t) * m);
  }
  if( lows ) r->lows = ring_alloc(sizeof(uint64_t) * m);
  if( rc!=RING_OK || r->positions==NULL || r->owners==NULL
   || r->replicas==NULL
   || (rule->lookup!=RING_LOOKUP_SUCCESSOR && r->tokens==NULL)
   || (lows && r->lows==NULL) ){
    ring_dealloc(aReplica);
    return RING_NOMEM;
  }

  /* The ends ascend from point 0 on but for at most one that wraps past
  ** top, and so is the lowest (or the highest): the units start at the
  ** point after the descent. The ends wait in r->tokens, in a's order. */
  uint32_t start = 0;
  if( r->tokens ){
    for(uint32_t k=0; k<m; k++){
      r->tokens[k] = place_arc_end(a, m, k, rule->lookup, top);
      if( start==0 && k>0 && r->tokens[k]<r->tokens[k-1] ) start = k;
    }
    for(uint32_t j=0; j<m; j++){
      uint32_t k = start+j<m ? start+j : start+j-m;
      r->positions[j] = r->tokens[k];
      r->owners[j] = a[k].node;
      if( lows ) r->lows[j] = lows[a[k].made];
    }
    for(uint32_t j=0; j<m; j++){
      r->tokens[j] = a[start+j<m ? start+j : start+j-m].pos;
    }
  }else{
    for(uint32_t j=0; j<m; j++){           /* the successor rule: no ends */
      r->positions[j] = a[j].pos;
      r->owners[j] = a[j].node;
    }
  }
  for(uint32_t j=0; j<m; j++){
    uint32_t k = start+j<m ? start+j : start+j-m;
    r->replicas[j] = aReplica ? aReplica[k] : a[k].made - aBase[a[k].node];
  }
  /* Where no point was lost, every node is intact (else place_number
  ** said how far). */
  for(uint32_t k=0; aReplica==NULL && k<r->n_nodes; k++){
    r->nodes[k].intact = aBase ? r->nodes[k].points : 0;
  }
  ring_dealloc(aReplica);
  r->n_points = m;
  return ring_index_build(r);
}

int ring_points_place(ring *r, ring_point *a, uint32_t n,
                      const ring_points_rule *rule){
  return ring_points_place_low(r, a, NULL, n, rule);
}

int ring_points_place_low(ring *r, ring_point *a, const uint64_t *lows,
                          uint32_t n, const ring_points_rule *rule){
  assert( lows==NULL || rule->lookup==RING_LOOKUP_ABOVE );
  ring_points_maker mk = { .rule = *rule };
  for(uint32_t i=0; i<n; i++) a[i].made = i;
  int rc = sort_points(a, n);
  if( rc!=RING_OK ) return rc;
  place_order_ties(r, &mk, lows, a, n);
  return place_sorted(r, a, n, &mk, NULL, lows);
}

/* ------------------------------------------------- ring_points_make */

/* Can r keep points of prev under mk? prev must be of the same config,
** have points, and number them as mk does. */
static int make_can_reuse(const ring *r, const ring *prev,
                          const ring_points_maker *mk){
  if( prev==NULL || prev->n_points==0 || mk->rule.lookup==RING_LOOKUP_TABLE
   || !options_same(&prev->config, &r->config) ){
    return 0;
  }
  int bNoReplicas = (mk->flags & RING_POINTS_NO_REPLICAS)!=0;
  return bNoReplicas ? prev->replicas==NULL : prev->replicas!=NULL;
}

/*
** Match r's nodes with prev's by name (both are sorted by name): aKeep[j]
** is how many of node j's first points prev holds and r keeps, aFrom[o]
** the index in r of prev's node o when it keeps some (else UINT32_MAX).
** Returns how many points are kept in all.
*/
static uint32_t make_match(const ring *r, const ring *prev,
                           const ring_points_maker *mk, uint32_t *aKeep,
                           uint32_t *aFrom){
  uint32_t nKept = 0, j = 0;
  for(uint32_t o=0; o<prev->n_nodes; o++){
    const ring_node *old = &prev->nodes[o];
    aFrom[o] = UINT32_MAX;
    int c = 1;
    while( j<r->n_nodes && (c = node_compare(&r->nodes[j], old))<0 ) j++;
    if( j>=r->n_nodes || c!=0 ) continue;
    const ring_node *node = &r->nodes[j];
    if( (mk->flags & RING_POINTS_BY_JOIN) && old->join!=node->join ) continue;
    /* Points after the first it lost to a tie there may be numbered
    ** otherwise here, and the lost one may win: made again. */
    uint32_t k = old->intact<node->made ? old->intact : node->made;
    if( (mk->flags & RING_POINTS_NO_REPLICAS) && old->made!=node->made ) k = 0;
    if( k==0 ) continue;
    aFrom[o] = j;
    aKeep[j] = k;
    nKept += k;
  }
  return nKept;
}

/* What make_merge reads, in locals the compiler need not reload after
** each point written (restrict: the arrays do not overlap a). */
typedef struct merge_from {
  const uint64_t *restrict aTok;      /* prev's points */
  const uint32_t *restrict aOwner;    /* prev's owners */
  const uint32_t *restrict aReplica;  /* prev's replica numbers, or NULL */
  const uint32_t *restrict aKeep, *restrict aFrom, *restrict aBase;
} merge_from;

/* Merge prev's points p0..p1-1 that are kept with the new points from
** *ppNew on (up to pEnd) below them, into a from *ppOut on. */
static inline void merge_range(const merge_from *f, uint32_t p0, uint32_t p1,
                               const ring_point **ppNew,
                               const ring_point *pEnd, ring_point **ppOut){
  const ring_point *pNew = *ppNew;
  ring_point *out = *ppOut;
  for(uint32_t p=p0; p<p1; p++){
    uint32_t j = f->aFrom[f->aOwner[p]];
    if( j==UINT32_MAX ) continue;
    uint32_t replica = f->aReplica ? f->aReplica[p] : 0;
    if( replica>=f->aKeep[j] ) continue;
    uint64_t pos = f->aTok[p];
    while( pNew<pEnd && pNew->pos<pos ) *out++ = *pNew++;
    out->pos = pos;
    out->node = j;
    out->made = f->aBase[j] + replica;
    out++;
  }
  *ppNew = pNew;
  *ppOut = out;
}

/*
** Merge prev's kept points (node and `made` in r's terms: aBase[j] +
** replica number) with the nNew sorted points of aNew into a, by position.
*/
static void make_merge(const ring *prev, const uint32_t *aKeep,
                       const uint32_t *aFrom, const uint32_t *aBase,
                       const ring_point *aNew, uint32_t nNew, ring_point *a){
  merge_from f = {
    .aTok = prev->tokens ? prev->tokens : prev->positions,
    .aOwner = prev->owners, .aReplica = prev->replicas,
    .aKeep = aKeep, .aFrom = aFrom, .aBase = aBase,
  };
  uint32_t n = prev->n_points, start = 0;
  /* Tokens are the points in position order but for a rotation (ends that
  ** wrap come first or last): start at the lowest. */
  for(uint32_t k=1; prev->tokens && k<n; k++){
    if( f.aTok[k]<f.aTok[k-1] ){
      start = k;
      break;
    }
  }
  const ring_point *pNew = aNew, *pEnd = aNew + nNew;
  ring_point *out = a;
  merge_range(&f, start, n, &pNew, pEnd, &out);
  merge_range(&f, 0, start, &pNew, pEnd, &out);
  while( pNew<pEnd ) *out++ = *pNew++;
}

int ring_points_make(ring *r, const ring *prev, const ring_points_maker *mk){
  uint32_t nNode = r->n_nodes;
  uint64_t total = 0;
  for(uint32_t j=0; j<nNode; j++){
    r->nodes[j].made = r->nodes[j].points;
    total += r->nodes[j].points;
  }
  if( total==0 ){
    for(uint32_t j=0; j<nNode; j++) r->nodes[j].points = 0;
    return RING_OK;
  }
  int bReuse = make_can_reuse(r, prev, mk);
  uint32_t *aBase = ring_alloc(sizeof(uint32_t) * nNode);  /* first made */
  uint32_t *aKeep = ring_alloc(sizeof(uint32_t) * nNode);
  uint32_t *aFrom = bReuse ? ring_alloc(sizeof(uint32_t) * prev->n_nodes)
                           : NULL;
  ring_point *a = ring_alloc(sizeof(ring_point) * total);
  ring_point *aNew = NULL;
  int rc = RING_NOMEM;
  if( aBase==NULL || aKeep==NULL || (bReuse && aFrom==NULL) || a==NULL ){
    goto done;
  }
  uint32_t sum = 0;
  for(uint32_t j=0; j<nNode; j++){
    aBase[j] = sum;
    sum += r->nodes[j].made;
  }
  memset(aKeep, 0, sizeof(uint32_t) * nNode);
  uint32_t nKept = bReuse ? make_match(r, prev, mk, aKeep, aFrom) : 0;

  /* Make the points not kept, and sort them. */
  uint32_t nNew = (uint32_t)total - nKept;
  aNew = nKept ? ring_alloc(sizeof(ring_point) * (nNew ? nNew : 1)) : a;
  if( aNew==NULL ) goto done;
  uint32_t k = 0;
  for(uint32_t j=0; j<nNode; j++){
    uint32_t from = aKeep[j], nMake = r->nodes[j].made - from;
    if( nMake==0 ) continue;
    mk->make(r, j, from, &aNew[k]);
    for(uint32_t i=0; i<nMake; i++){
      aNew[k+i].node = j;
      aNew[k+i].made = aBase[j] + from + i;
    }
    k += nMake;
  }
  rc = sort_points(aNew, nNew);
  if( rc!=RING_OK ) goto done;

  /* Merge them with the points kept (none: aNew is a). */
  if( nKept ) make_merge(prev, aKeep, aFrom, aBase, aNew, nNew, a);
  place_order_ties(r, mk, NULL, a, (uint32_t)total);
  rc = place_sorted(r, a, (uint32_t)total, mk, aBase, NULL);

done:
  if( aNew!=a ) ring_dealloc(aNew);
  ring_dealloc(a);
  ring_dealloc(aFrom);
  ring_dealloc(aKeep);
  ring_dealloc(aBase);
  return rc;
}

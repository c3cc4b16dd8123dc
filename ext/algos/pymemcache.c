/*
** pymemcache.c: algorithm pymemcache, the placement of Python pymemcache's
** HashClient with its default RendezvousHash (Django's PyMemcacheCache),
** bit for bit as pymemcache 3.5.2 places keys (checked against Debian's
** python3-pymemcache).
**
** Nodes are the servers as pymemcache names them: '%s:%s' % (host, port)
** ("10.0.0.1:11211"), a unix socket by its path. A server's score for a
** key is MurmurHash3 x86_32, seed 0, of the text "<server>-<key>", where
** each character counts as one byte, its code point's low 8 bits
** (pymemcache's murmur3_32 reads ord(c) & 0xff), and the length hashed is
** the number of characters. The server with the highest score owns the
** key; of equal scores, the server whose name sorts last. No weights, no
** points: every server is scored for every key, O(n) per key.
**
** The score hashes server and key as one stream, so a key's owner is not
** a function of one position of the key: the descriptor's key_lookup sees
** the key's bytes. The build keeps each server's MurmurHash3 state after
** "<server>-" (its whole 4-byte blocks, and the bytes left over); a key,
** masked to a byte per character once (the key rule's low_byte step),
** continues each state. ch_replicas ranks servers by score, ties as the
** lookup breaks them, so its first is the owner.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "keyhash.h"

/* MurmurHash3 x86_32 fed in pieces: h after the whole blocks so far, the
** bytes of the block not yet whole, and the bytes fed in all. */
typedef struct murmur3_32_run {
  uint32_t h;
  uint32_t n;                  /* the hash reads the length mod 2^32 */
  unsigned char carry[4];
  unsigned n_carry;
} murmur3_32_run;

static void murmur3_32_run_add(murmur3_32_run *m, const unsigned char *p,
                               size_t n){
  m->n += (uint32_t)n;
  if( m->n_carry ){
    while( m->n_carry<4 && n>0 ){
      m->carry[m->n_carry++] = *p++;
      n--;
    }
    if( m->n_carry<4 ) return;
    m->h = keyhash_murmur3_32_blocks(m->h, m->carry, 4);
    m->n_carry = 0;
  }
  size_t nBody = n - n%4;
  m->h = keyhash_murmur3_32_blocks(m->h, p, nBody);
  memcpy(m->carry, p + nBody, n - nBody);
  m->n_carry = (unsigned)(n - nBody);
}

static void murmur3_32_run_put(void *ctx, const unsigned char *p, size_t n){
  murmur3_32_run_add(ctx, p, n);
}

static uint32_t murmur3_32_run_end(const murmur3_32_run *m){
  return keyhash_murmur3_32_end(m->h, m->carry, m->n_carry, m->n);
}

/* Keys whose masked bytes fit here are masked once per lookup; longer
** ones (pymemcache refuses keys over 250 bytes) once per server. */
#define PYMEMCACHE_KEY_BUFFER 512

/* Collects the first PYMEMCACHE_KEY_BUFFER masked bytes, counting all. */
typedef struct key_buffer {
  unsigned char a[PYMEMCACHE_KEY_BUFFER];
  size_t n;
} key_buffer;

static void key_buffer_put(void *ctx, const unsigned char *p, size_t n){
  key_buffer *b = ctx;
  if( b->n<sizeof(b->a) ){
    size_t k = sizeof(b->a) - b->n;
    memcpy(b->a + b->n, p, n<k ? n : k);
  }
  b->n += n;
}

/* Node n's score, as MurmurHash3 gives it; *pKey is the masked key when
** it fit, else NULL (then the key's own bytes p[0..nKey) are masked). */
static uint32_t pymemcache_hash(const ring *r, uint32_t n,
                                const key_buffer *pKey, const void *p,
                                size_t nKey){
  const murmur3_32_run *aPrefix = r->state;
  murmur3_32_run m = aPrefix[n];
  if( pKey ){
    murmur3_32_run_add(&m, pKey->a, pKey->n);
  }else{
    ring_keys_read(&r->keys, p, nKey, murmur3_32_run_put, &m);
  }
  return murmur3_32_run_end(&m);
}

/* The masked key into *b; 1 if it fit, else 0. */
static int pymemcache_mask(const ring *r, const void *p, size_t n,
                           key_buffer *b){
  b->n = 0;
  ring_keys_read(&r->keys, p, n, key_buffer_put, b);
  return b->n<=sizeof(b->a);
}

static uint32_t pymemcache_key_lookup(const ring *r, const void *p, size_t n){
  key_buffer b;
  const key_buffer *pKey = pymemcache_mask(r, p, n, &b) ? &b : NULL;
  uint32_t best = 0, bestHash = pymemcache_hash(r, 0, pKey, p, n);
  for(uint32_t k=1; k<r->n_nodes; k++){
    uint32_t h = pymemcache_hash(r, k, pKey, p, n);
    /* Nodes are in name order: of equal scores the last, larger name wins. */
    if( h>=bestHash ){
      bestHash = h;
      best = k;
    }
  }
  return best;
}

/* The hash, times 2^20, plus the node's index (below RING_MAX_NODES, 2^20):
** exact in a double, ordered as the lookup orders servers. */
static double pymemcache_key_score(const ring *r, uint32_t n, const void *p,
                                   size_t nKey){
  key_buffer b;
  const key_buffer *pKey = pymemcache_mask(r, p, nKey, &b) ? &b : NULL;
  uint32_t h = pymemcache_hash(r, n, pKey, p, nKey);
  return (double)h * (double)RING_MAX_NODES + (double)n;
}

static_assert(RING_MAX_NODES<=(1u<<20),
              "a score holds the hash and the node index in 52 bits");

/* The low_byte step alone, for node names: no hash tag applies to them. */
static void pymemcache_name_rule(ring_keys *k){
  ring_keys_init(k, HASH_MURMUR3_32, 0);
  ring_keys_add_step(k, RING_KEY_LOW_BYTE, 0, NULL, 0);
}

static int pymemcache_build(ring *r, const ring *prev, char *zErr,
                            size_t nErr){
  (void)prev; (void)zErr; (void)nErr;
  if( r->n_nodes==0 ) return RING_OK;
  murmur3_32_run *aPrefix = ring_alloc(sizeof(murmur3_32_run) * r->n_nodes);
  if( aPrefix==NULL ) return RING_NOMEM;
  ring_keys names;
  pymemcache_name_rule(&names);
  for(uint32_t n=0; n<r->n_nodes; n++){
    murmur3_32_run *m = &aPrefix[n];
    memset(m, 0, sizeof(*m));
    ring_keys_read(&names, r->nodes[n].name, r->nodes[n].name_len,
                   murmur3_32_run_put, m);
    murmur3_32_run_add(m, (const unsigned char *)"-", 1);
  }
  r->state = aPrefix;
  return RING_OK;
}

static void pymemcache_key_rule(const ring_config *cfg, ring_keys *k){
  (void)cfg;
  ring_keys_add_step(k, RING_KEY_LOW_BYTE, 0, NULL, 0);
}

static int pymemcache_check_options(ring_config *cfg, unsigned set,
                                    char *zErr, size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_MURMUR3_32 ){
    snprintf(zErr, nErr, "hash: algorithm pymemcache hashes with "
             "murmur3_32 (MurmurHash3 x86_32, pymemcache's only hash), "
             "not %s", hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_pymemcache = {
  .name = "pymemcache",
  .default_hash = HASH_MURMUR3_32,
  .units = RING_UNITS_NONE,
  .no_units = "a key's owner is the server that scores highest for it, not "
              "a range of positions",
  .no_diff = "a key's owner is the server that scores highest for it, not "
             "a range of positions",
  .check_options = pymemcache_check_options,
  .no_weights = "algorithm pymemcache has no weights (pymemcache's "
                "RendezvousHash has none): every node's weight must be 1",
  .build = pymemcache_build,
  .key_rule = pymemcache_key_rule,
  .key_lookup = pymemcache_key_lookup,
  .key_score = pymemcache_key_score,
  .shares = ring_shares_even,
  .doc = {
    .summary = "Python pymemcache's `HashClient` (rendezvous, Django's "
               "`PyMemcacheCache`)",
    .reproduces = "a pymemcache `HashClient` (Django's `PyMemcacheCache`)",
    .cost = "**O(n)**: every server is scored",
    .weights = "no (all 1)",
    .remove = "any node",
    .movement = "only onto the new node",
    .options = "none (`murmur3_32`, as pymemcache)",
    .replicas = "servers by falling score (pymemcache itself retries "
                "and drops a dead server)",
  },
};

/*
** keys.h: a ring's key rule, the one place that says which bytes of a key
** are hashed and how, to give the key's position. Pure C, no SQLite calls.
**
** A ring's rule (r->keys) is made when the ring is built, from its
** options and the algorithm's key_rule hook (algo.h). A key's position is
**
**   1. the part the hash tag picks (hash_tag_part), when tag is set;
**   2. the steps, in order: each rewrites the bytes the one before gave
**      (a prefix such as a namespace, Dalli's shortening of long keys,
**      PHP memcache's cut at 250 bytes and rewrite of control bytes,
**      UTF-16 code units as Java strings hold them, characters masked to
**      a byte as pymemcache hashes them);
**   3. the hash (with its seed, for the hashes that take one);
**   4. the algorithm's finish of the hash value, when it has one
**      (HAProxy's avalanche, Redis Cluster's slot).
**
** ring_keys_place does it with no allocation, so the per-row path has no
** failure to report: with steps, the key goes through them in pieces
** (bounded buffers on the stack) into a hash stream (hash.h).
** ring_keys_same says whether two rules put every key at the same
** position (ch_moved then hashes a key once; ch_diff can compare
** positions only then), and ring_keys_differ says how they differ.
*/
#ifndef CHASH_KEYS_H
#define CHASH_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define RING_KEY_MAX_STEPS 4       /* steps in one rule */
#define RING_KEY_MAX_TEXT  104     /* bytes of a step's text (a Dalli
                                   ** namespace of 100 and its colon) */
#define RING_KEY_SHORTEN_OVER 250  /* characters: memcached's key limit */

typedef enum ring_key_op {
  RING_KEY_PREFIX = 1,     /* text[0..n) before the key */
  RING_KEY_SHORTEN,        /* Dalli's: a key longer than 250 characters
                           ** (RING_KEY_SHORTEN_OVER) becomes its first n
                           ** characters, ":md5:" and the MD5 of the whole
                           ** key in 32 lower-case hex digits. Characters
                           ** as Ruby counts a UTF-8 string: a valid
                           ** sequence is one, any other byte one */
  RING_KEY_REWRITE,        /* every byte at or below n becomes text[0]
                           ** (PHP memcache: n = ' ', text "_") */
  RING_KEY_UTF16,          /* the UTF-8 key as UTF-16 code units, two
                           ** bytes each, little-endian (n = 0) or
                           ** big-endian (n = 1); a byte that does not
                           ** start a valid sequence is U+FFFD */
  RING_KEY_LOW_BYTE,       /* each character of the UTF-8 key as one
                           ** byte, its code point's low 8 bits, as
                           ** pymemcache hashes a Python string (n = 0);
                           ** invalid bytes are U+FFFD, as for UTF16 */
  RING_KEY_TRUNCATE        /* the first n bytes, the rest dropped (PHP
                           ** memcache: 250, memcached's key limit) */
} ring_key_op;

typedef struct ring_key_step {
  ring_key_op op;
  uint32_t n;
  unsigned char text[RING_KEY_MAX_TEXT];   /* zero past what is used */
} ring_key_step;

typedef struct ring_keys ring_keys;
struct ring_keys {
  hash_id hash;
  uint64_t seed;           /* 0 for hashes without a seed */
  char tag[3];             /* the hash tag: two characters, or "" */
  uint8_t by_steps;        /* 1: keys go through ring_keys_hash_steps (the
                           ** rule has steps, or its hash is md5_128, whose
                           ** low word that gives) */
  uint32_t n_steps;
  /* The algorithm's finish of the hash value (NULL: none), the one value
  ** it reads (finish_arg), and their names for ring_keys_differ: the
  ** algorithm's (finish_by) and the option's (finish_option, NULL when
  ** finish reads nothing). */
  uint64_t (*finish)(const ring_keys *k, uint64_t h);
  uint64_t finish_arg;
  const char *finish_by;
  const char *finish_option;
  /* INTEGER keys as their integer_bytes big-endian two's-complement bytes
  ** (8 or 4: Cassandra's bigint and int), instead of their decimal text;
  ** 0: the text. An integer outside 4 bytes' range then has no position
  ** (the SQLite layer's value_position applies it). */
  uint32_t integer_bytes;
  ring_key_step steps[RING_KEY_MAX_STEPS];
};

/* A rule of hash and seed alone (no tag, steps or finish). */
void ring_keys_init(ring_keys *k, hash_id hash, uint64_t seed);

/* Append a step; 0, or 1 if the rule has RING_KEY_MAX_STEPS already or
** the text is longer than RING_KEY_MAX_TEXT. */
int ring_keys_add_step(ring_keys *k, ring_key_op op, uint32_t n,
                       const void *pText, size_t nText);

/* The hash of the n bytes at p after k's steps (ring_keys_place's step 2
** and 3, for a rule with steps or with md5_128), and md5_128's low 64 bits
** into *pLow. */
uint64_t ring_keys_hash_steps(const ring_keys *k, const void *p, size_t n,
                              uint64_t *pLow);

/*
** Hand the bytes a key's n bytes at p become under k's hash tag and steps
** (the bytes ring_keys_place hashes) to put(ctx, piece, nPiece), in
** pieces, with no allocation: for algorithms that hash the key with
** something of their own (pymemcache's "<server>-<key>").
*/
void ring_keys_read(const ring_keys *k, const void *p, size_t n,
                    void (*put)(void *ctx, const unsigned char *piece,
                                size_t nPiece),
                    void *ctx);

/*
** The position of a key's n bytes at p under k. Under md5_128, whose keys
** are 128 bits, *pLow gets the 64 bits below the position (which break a
** tie with a point's top 64 bits on rings of 128-bit points: ring.h,
** ring_lookup_low); else 0. Inline: it runs per row.
*/
static inline uint64_t ring_keys_place_low(const ring_keys *k, const void *p,
                                           size_t n, uint64_t *pLow){
  if( k->tag[0] ) p = hash_tag_part(k->tag, p, n, &n);
  *pLow = 0;
  uint64_t h = k->by_steps ? ring_keys_hash_steps(k, p, n, pLow)
                           : hash_bytes(k->hash, k->seed, p, n);
  return k->finish ? k->finish(k, h) : h;
}

/* The position alone. */
static inline uint64_t ring_keys_place(const ring_keys *k, const void *p,
                                       size_t n){
  uint64_t low;
  return ring_keys_place_low(k, p, n, &low);
}

/* Do the steps of a and b (of equal counts) differ? */
int ring_keys_steps_differ(const ring_keys *a, const ring_keys *b);

/* Do a and b put every key at the same position? Inline: ch_moved asks
** once per row. */
static inline int ring_keys_same(const ring_keys *a, const ring_keys *b){
  return a->hash==b->hash && a->seed==b->seed
      && a->finish==b->finish && a->finish_arg==b->finish_arg
      && a->integer_bytes==b->integer_bytes
      && a->tag[0]==b->tag[0] && a->tag[1]==b->tag[1]
      && a->n_steps==b->n_steps
      && (a->n_steps==0 || !ring_keys_steps_differ(a, b));
}

/*
** How a and b differ, as a clause for messages, into zOut (nOut bytes):
** "the rings hash keys differently (md5, xxh3 seed 0)", or "algorithm
** haproxy and algorithm ring hash keys differently"; "" if they are the
** same. The first difference of: hash and seed, finish, hash tag, steps,
** integer bytes, the value finish reads. Returns zOut.
*/
const char *ring_keys_differ(const ring_keys *a, const ring_keys *b,
                             char *zOut, size_t nOut);

#endif

/*
** key_value.h: the bytes a key value stands for, its position under a
** ring's key rule, and its owner on a ring. Inline: the per-row functions
** (ch_locate, ch_moved, ch_hash, the aggregates) run them once a row, and
** a call would cost a tenth of the row. (Algorithms that look keys up by
** their bytes take common.c's value_owner_by_bytes.)
*/
#ifndef CHASH_KEY_VALUE_H
#define CHASH_KEY_VALUE_H

#include <string.h>

#include "sqlite_layer.h"
#include "xxhash_inline.h"

/* Decimal text of v, written to end at buf+24; returns where it starts.
** Two digits per division, in 32-bit arithmetic once the rest fits (two
** instructions fewer per pair): integer keys are the common case of a
** scan. */
static inline __attribute__((always_inline))
const char *format_int64(int64_t v, char buf[24]){
  static const char aPair[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";
  char *z = buf + 24;
  uint64_t u = v<0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  while( u>UINT32_MAX ){
    unsigned d = (unsigned)(u % 100);
    u /= 100;
    z -= 2;
    memcpy(z, &aPair[2*d], 2);
  }
  uint32_t w = (uint32_t)u;
  while( w>=100 ){
    uint32_t d = w % 100;
    w /= 100;
    z -= 2;
    memcpy(z, &aPair[2*d], 2);
  }
  if( w>=10 ){
    z -= 2;
    memcpy(z, &aPair[2*w], 2);
  }else{
    *--z = (char)('0' + w);
  }
  if( v<0 ) *--z = '-';
  return z;
}

/*
** The bytes key value v stands for: TEXT and BLOB their bytes, INTEGER its
** decimal text (written into zInt), a REAL with a whole value in the
** 64-bit range as that INTEGER (42.0 as "42"), any other REAL its SQLite
** text form. Returns 0 if v is NULL (no bytes), else 1 with *pp and *pn
** set.
*/
static inline __attribute__((always_inline))
int key_bytes(sqlite3_value *v, char zInt[24], const void **pp, size_t *pn){
  const void *p;
  int n;
  int64_t i = 0;
  int eType = sqlite3_value_type(v);
  if( eType==SQLITE_FLOAT && value_whole_int64(v, &i) ) eType = SQLITE_INTEGER;
  else if( eType==SQLITE_INTEGER ) i = sqlite3_value_int64(v);
  switch( eType ){
    case SQLITE_NULL:
      return 0;
    case SQLITE_INTEGER:
      /* 42 and 42.0 (SQL holds them equal) are the text "42". */
      p = format_int64(i, zInt);
      n = (int)(zInt + 24 - (const char *)p);    /* zInt has 24 bytes */
      break;
    case SQLITE_BLOB:
      p = sqlite3_value_blob(v);
      n = sqlite3_value_bytes(v);
      break;
    default:                     /* TEXT; any other REAL as SQLite's text */
      p = sqlite3_value_text(v);
      n = sqlite3_value_bytes(v);
      break;
  }
  *pp = p ? p : "";
  *pn = (size_t)n;
  return 1;
}

/* An integer key (or 42.0) as k->integer_bytes big-endian bytes into z:
** 1; 0 if v is no integer; -1 if it is out of the range of those bytes. */
static inline int integer_key_bytes(sqlite3_value *v, const ring_keys *k,
                                    unsigned char z[8]){
  int64_t i;
  int eType = sqlite3_value_type(v);
  if( eType==SQLITE_INTEGER ) i = sqlite3_value_int64(v);
  else if( eType!=SQLITE_FLOAT || !value_whole_int64(v, &i) ) return 0;
  if( k->integer_bytes==4 && (i<INT32_MIN || i>INT32_MAX) ) return -1;
  for(uint32_t b=0; b<k->integer_bytes; b++){
    z[b] = (unsigned char)((uint64_t)i >> (8*(k->integer_bytes-1-b)));
  }
  return 1;
}

/*
** The position of key value v under a ring's key rule k (its bytes, as
** key_bytes gives them, placed by ring_keys_place_low; an integer as
** k->integer_bytes big-endian bytes when the rule says so), and into *pLow
** the 64 bits below it under a 128-bit hash (md5_128; else 0): a lookup
** takes both (ring_lookup_low). Returns 0 if v is NULL or has no position
** (an integer out of the range of 4 bytes), else 1.
*/
static inline __attribute__((always_inline))
int value_position(sqlite3_value *v, const ring_keys *k, uint64_t *pPos,
                   uint64_t *pLow){
  char zInt[24];
  const void *p;
  size_t n;
  if( k->integer_bytes ){
    unsigned char zBytes[8];
    int bInt = integer_key_bytes(v, k, zBytes);
    if( bInt<0 ) return 0;               /* no int has that value */
    if( bInt ){
      *pPos = ring_keys_place_low(k, zBytes, k->integer_bytes, pLow);
      return 1;
    }
  }
  if( !key_bytes(v, zInt, &p, &n) ) return 0;
  if( k->hash==HASH_IDENTITY ){
    /* identity places integer keys only; any other key is like NULL. */
    size_t nPart = n;
    const void *pPart = k->tag[0] ? hash_tag_part(k->tag, p, n, &nPart) : p;
    if( !hash_identity_ok(k->hash, pPart, nPart) ) return 0;
  }
  /* The default rule (xxh3, no tag, steps or finish) hashes here, inline:
  ** a tenth of ch_locate's row went to reaching xxh3 through hash_bytes. */
  if( k->hash==HASH_XXH3 && !k->tag[0] && !k->n_steps && !k->finish ){
    *pPos = n<=16 ? XXH3_len_0to16_64b(p, n, XXH3_kSecret, k->seed)
                  : XXH3_64bits_withSeed(p, n, k->seed);
    *pLow = 0;
  }else{
    *pPos = ring_keys_place_low(k, p, n, pLow);
  }
  return 1;
}

/*
** The positions of key value v under two key rules (an old and a new
** ring's), and their low words as value_position gives them, hashed once
** when the rules agree. Returns 0 if v has no position under either (NULL;
** a key that identity does not place), else 1.
*/
static inline __attribute__((always_inline))
int value_positions(sqlite3_value *v, const ring_keys *kOld,
                    const ring_keys *kNew, uint64_t *pOld, uint64_t *pLowOld,
                    uint64_t *pNew, uint64_t *pLowNew){
  if( !value_position(v, kOld, pOld, pLowOld) ) return 0;
  if( ring_keys_same(kOld, kNew) ){
    *pNew = *pOld;
    *pLowNew = *pLowOld;
    return 1;
  }
  return value_position(v, kNew, pNew, pLowNew);
}

/*
** The index of the node that owns key value v on r (r has nodes): by its
** position and ring_lookup_low, or, for an algorithm with key_lookup (algo.h),
** by its bytes (value_owner_by_bytes). Returns 0 if v is NULL (no
** owner), else 1. The rows of every other algorithm pay one test for
** key_lookup.
*/
int value_owner_by_bytes(sqlite3_value *v, const ring *r, uint32_t *pOwner);

static inline __attribute__((always_inline))
int value_owner(sqlite3_value *v, const ring *r,
                              uint32_t *pOwner){
  if( r->config.algo->key_lookup ) return value_owner_by_bytes(v, r, pOwner);
  uint64_t pos, low;
  if( !value_position(v, &r->keys, &pos, &low) ) return 0;
  *pOwner = ring_lookup_low(r, pos, low);
  return 1;
}

/* The owners of key value v on an old and a new ring (both with nodes),
** the key hashed once when their key rules agree. Returns 0 if v has no
** owner on either (as value_positions), else 1. */
int value_owners_by_bytes(sqlite3_value *v, const ring *rOld,
                          const ring *rNew, uint32_t *pOld, uint32_t *pNew);

static inline __attribute__((always_inline))
int value_owners(sqlite3_value *v, const ring *rOld,
                               const ring *rNew, uint32_t *pOld,
                               uint32_t *pNew){
  if( rOld->config.algo->key_lookup || rNew->config.algo->key_lookup ){
    return value_owners_by_bytes(v, rOld, rNew, pOld, pNew);
  }
  uint64_t posOld, posNew, lowOld, lowNew;
  if( !value_positions(v, &rOld->keys, &rNew->keys, &posOld, &lowOld,
                       &posNew, &lowNew) ){
    return 0;
  }
  *pOld = ring_lookup_low(rOld, posOld, lowOld);
  *pNew = ring_lookup_low(rNew, posNew, lowNew);
  return 1;
}

#endif

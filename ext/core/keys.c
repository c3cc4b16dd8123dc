/*
** keys.c: a ring's key rule (see keys.h): its steps, run on a key in
** pieces, and the comparison and description of two rules.
**
** The steps form a chain of byte sources: source 0 is the key, source i
** is step i-1 applied to source i-1. Reading a source hands its bytes, in
** pieces, to a sink; a step that must see all of its input before it
** writes (the shortening, which needs the length and the MD5 of the
** whole) reads its source twice, and the hash reads the last source twice
** (its length first, which murmur, jenkins and hsieh start from). Keys
** are immutable, so every read gives the same bytes; nothing is copied
** but into buffers of a fixed size on the stack.
*/
#include <stdio.h>
#include <string.h>

#include <nettle/md5.h>

#include "keys.h"
#include "utf8.h"

void ring_keys_init(ring_keys *k, hash_id hash, uint64_t seed){
  memset(k, 0, sizeof(*k));
  k->hash = hash;
  k->seed = hash_has_seed(hash) ? seed : 0;
  k->by_steps = hash==HASH_MD5_128;
}

int ring_keys_add_step(ring_keys *k, ring_key_op op, uint32_t n,
                       const void *pText, size_t nText){
  if( k->n_steps>=RING_KEY_MAX_STEPS || nText>RING_KEY_MAX_TEXT ) return 1;
  ring_key_step *s = &k->steps[k->n_steps++];
  k->by_steps = 1;
  memset(s, 0, sizeof(*s));
  s->op = op;
  s->n = n;
  if( nText ) memcpy(s->text, pText, nText);
  return 0;
}

/* ------------------------------------------------------------- sinks */

typedef struct key_sink key_sink;
struct key_sink {
  void (*put)(key_sink *s, const unsigned char *p, size_t n);
};

/* Hand the bytes of source i (the key after steps 0..i-1) to out. */
static void source_read(const ring_keys *k, uint32_t i,
                        const unsigned char *pKey, size_t nKey,
                        key_sink *out);

/* Counts bytes. */
typedef struct measure_sink {
  key_sink base;
  uint64_t n;
} measure_sink;

static void measure_put(key_sink *s, const unsigned char *p, size_t n){
  (void)p;
  ((measure_sink *)s)->n += n;
}

/* Passes on the first `left` bytes, drops the rest. */
typedef struct head_sink {
  key_sink base;
  key_sink *out;
  uint64_t left;
} head_sink;

static void head_put(key_sink *s, const unsigned char *p, size_t n){
  head_sink *h = (head_sink *)s;
  if( n>h->left ) n = (size_t)h->left;
  h->left -= n;
  if( n ) h->out->put(h->out, p, n);
}

/* Bytes that go out in chunks of a buffer on the stack. */
#define CHUNK_BYTES 256

/* RING_KEY_REWRITE: bytes at or below `at_most` become `with`. */
typedef struct rewrite_sink {
  key_sink base;
  key_sink *out;
  unsigned at_most;
  unsigned char with;
} rewrite_sink;

static void rewrite_put(key_sink *s, const unsigned char *p, size_t n){
  rewrite_sink *w = (rewrite_sink *)s;
  unsigned char buf[CHUNK_BYTES];
  while( n>0 ){
    size_t k = n<sizeof(buf) ? n : sizeof(buf);
    for(size_t i=0; i<k; i++) buf[i] = p[i]<=w->at_most ? w->with : p[i];
    w->out->put(w->out, buf, k);
    p += k;
    n -= k;
  }
}

/* RING_KEY_UTF16 and RING_KEY_LOW_BYTE: UTF-8 in, code units (or each
** code point's low byte) out. utf8.h reads the UTF-8; a sequence cut
** between two pieces waits in the reader. */
typedef struct utf16_sink {
  key_sink base;
  key_sink *out;
  int bBig;                /* big-endian units */
  int bLowByte;            /* one byte per code point, its low 8 bits */
  utf8_reader utf8;
  unsigned char buf[CHUNK_BYTES];
  size_t nBuf;
} utf16_sink;

/* Room for n more bytes in buf. */
static void utf16_room(utf16_sink *u, size_t n){
  if( u->nBuf+n>sizeof(u->buf) ){
    u->out->put(u->out, u->buf, u->nBuf);
    u->nBuf = 0;
  }
}

static void utf16_code_points(utf16_sink *u, const uint32_t *aCode,
                              unsigned nCode){
  for(unsigned i=0; i<nCode; i++){
    if( u->bLowByte ){
      utf16_room(u, 1);
      u->buf[u->nBuf++] = (unsigned char)aCode[i];
      continue;
    }
    uint16_t aUnit[2];
    unsigned nUnit = utf16_units(aCode[i], aUnit);
    for(unsigned j=0; j<nUnit; j++){
      uint16_t c = aUnit[j];
      utf16_room(u, 2);
      u->buf[u->nBuf++] = (unsigned char)(u->bBig ? c>>8 : c);
      u->buf[u->nBuf++] = (unsigned char)(u->bBig ? c : c>>8);
    }
  }
}

static void utf16_put(key_sink *s, const unsigned char *p, size_t n){
  utf16_sink *u = (utf16_sink *)s;
  for(size_t i=0; i<n; i++){
    uint32_t aCode[2];
    utf16_code_points(u, aCode, utf8_reader_byte(&u->utf8, p[i], aCode));
  }
}

static void utf16_finish(utf16_sink *u){
  uint32_t c;
  utf16_code_points(u, &c, utf8_reader_end(&u->utf8, &c));
  if( u->nBuf ) u->out->put(u->out, u->buf, u->nBuf);
  u->nBuf = 0;
}

/* -------------------------------------------------------------- steps */

/* Bytes of the character at the start of p (n bytes there), as Ruby
** counts characters: a whole valid UTF-8 sequence, or else its first
** byte alone. 0 when the n bytes begin a valid sequence but do not end
** it and more may come (bMore). */
static unsigned ruby_char_bytes(const unsigned char *p, unsigned n,
                                int bMore){
  unsigned len = utf8_length(p[0]);
  unsigned char lo = 0x80, hi = 0xBF;     /* the range of the 2nd byte */
  if( len<=1 ) return 1;
  if( p[0]==0xE0 ) lo = 0xA0;             /* no overlong form */
  if( p[0]==0xED ) hi = 0x9F;             /* no surrogate */
  if( p[0]==0xF0 ) lo = 0x90;
  if( p[0]==0xF4 ) hi = 0x8F;             /* none above U+10FFFF */
  if( n>=2 && (p[1]<lo || p[1]>hi) ) return 1;
  for(unsigned i=2; i<n && i<len; i++) if( (p[i] & 0xC0)!=0x80 ) return 1;
  if( n<len ) return bMore ? 0 : 1;
  return len;
}

/* Counts the characters of the bytes it is given (a character may be cut
** between two pieces: its first bytes wait in `part`), and the bytes of
** the first `head` of them; and hashes them with MD5. */
typedef struct chars_sink {
  key_sink base;
  uint64_t chars, bytes;   /* counted so far */
  uint64_t head;           /* characters of the head */
  uint64_t head_bytes;     /* their bytes, once counted */
  unsigned char part[4];
  unsigned nPart;
  struct md5_ctx md5;
} chars_sink;

/* Count the characters waiting in part that can be told now (all of
** them, at the end: !bMore). */
static void chars_count(chars_sink *c, int bMore){
  while( c->nPart>0 ){
    unsigned k = ruby_char_bytes(c->part, c->nPart, bMore);
    if( k==0 ) return;
    c->chars++;
    c->bytes += k;
    if( c->chars==c->head ) c->head_bytes = c->bytes;
    c->nPart -= k;
    memmove(c->part, c->part + k, c->nPart);
  }
}

static void chars_put(key_sink *s, const unsigned char *p, size_t n){
  chars_sink *c = (chars_sink *)s;
  md5_update(&c->md5, n, p);
  for(size_t i=0; i<n; i++){
    c->part[c->nPart++] = p[i];
    chars_count(c, 1);
  }
}

/* Dalli's shortening: the form of the tail. */
#define SHORTEN_TAIL_BYTES 37     /* ":md5:" and 32 hex digits */

static void shorten_read(const ring_keys *k, uint32_t i,
                         const unsigned char *pKey, size_t nKey,
                         key_sink *out){
  const ring_key_step *st = &k->steps[i-1];
  chars_sink c;
  memset(&c, 0, sizeof(c));
  c.base.put = chars_put;
  c.head = st->n;
  md5_init(&c.md5);
  source_read(k, i-1, pKey, nKey, &c.base);
  chars_count(&c, 0);
  if( c.chars<=RING_KEY_SHORTEN_OVER ){
    source_read(k, i-1, pKey, nKey, out);
    return;
  }
  unsigned char d[MD5_DIGEST_SIZE];
  char zTail[SHORTEN_TAIL_BYTES + 1];
  md5_digest(&c.md5, sizeof(d), d);
  memcpy(zTail, ":md5:", 5);
  for(int j=0; j<MD5_DIGEST_SIZE; j++){
    snprintf(zTail + 5 + 2*j, 3, "%02x", d[j]);
  }
  head_sink h = { { head_put }, out, c.head_bytes };
  source_read(k, i-1, pKey, nKey, &h.base);
  out->put(out, (const unsigned char *)zTail, SHORTEN_TAIL_BYTES);
}

static void source_read(const ring_keys *k, uint32_t i,
                        const unsigned char *pKey, size_t nKey,
                        key_sink *out){
  if( i==0 ){
    out->put(out, pKey, nKey);
    return;
  }
  const ring_key_step *st = &k->steps[i-1];
  switch( st->op ){
    case RING_KEY_PREFIX:
      out->put(out, st->text, st->n);
      source_read(k, i-1, pKey, nKey, out);
      break;
    case RING_KEY_SHORTEN:
      shorten_read(k, i, pKey, nKey, out);
      break;
    case RING_KEY_REWRITE: {
      rewrite_sink w = { { rewrite_put }, out, st->n, st->text[0] };
      source_read(k, i-1, pKey, nKey, &w.base);
      break;
    }
    case RING_KEY_TRUNCATE: {
      head_sink h = { { head_put }, out, st->n };
      source_read(k, i-1, pKey, nKey, &h.base);
      break;
    }
    case RING_KEY_UTF16:
    case RING_KEY_LOW_BYTE: {
      utf16_sink u;
      memset(&u, 0, sizeof(u));
      u.base.put = utf16_put;
      u.out = out;
      u.bBig = st->op==RING_KEY_UTF16 && st->n!=0;
      u.bLowByte = st->op==RING_KEY_LOW_BYTE;
      source_read(k, i-1, pKey, nKey, &u.base);
      utf16_finish(&u);
      break;
    }
  }
}

/* Feeds a hash stream. */
typedef struct stream_sink {
  key_sink base;
  hash_stream stream;
} stream_sink;

static void stream_put(key_sink *s, const unsigned char *p, size_t n){
  hash_stream_add(&((stream_sink *)s)->stream, p, n);
}

uint64_t ring_keys_hash_steps(const ring_keys *k, const void *p, size_t n,
                              uint64_t *pLow){
  if( k->n_steps==0 ) return hash_md5_128(p, n, pLow);   /* md5_128 */
  measure_sink m = { { measure_put }, 0 };
  source_read(k, k->n_steps, p, n, &m.base);
  stream_sink s;
  s.base.put = stream_put;
  hash_stream_start(&s.stream, k->hash, k->seed, m.n);
  source_read(k, k->n_steps, p, n, &s.base);
  return hash_stream_end_low(&s.stream, pLow);
}

/* Hands the bytes to a caller's function. */
typedef struct call_sink {
  key_sink base;
  void (*put)(void *ctx, const unsigned char *p, size_t n);
  void *ctx;
} call_sink;

static void call_put(key_sink *s, const unsigned char *p, size_t n){
  call_sink *c = (call_sink *)s;
  c->put(c->ctx, p, n);
}

void ring_keys_read(const ring_keys *k, const void *p, size_t n,
                    void (*put)(void *ctx, const unsigned char *piece,
                                size_t nPiece),
                    void *ctx){
  if( k->tag[0] ) p = hash_tag_part(k->tag, p, n, &n);
  call_sink c = { { call_put }, put, ctx };
  source_read(k, k->n_steps, p, n, &c.base);
}

/* --------------------------------------------------------- comparing */

int ring_keys_steps_differ(const ring_keys *a, const ring_keys *b){
  return memcmp(a->steps, b->steps, a->n_steps*sizeof(a->steps[0]))!=0;
}

/* "xxh3 seed 0", "md5": a hash as messages name it. */
static void hash_text(const ring_keys *k, char *z, size_t n){
  if( hash_has_seed(k->hash) ){
    snprintf(z, n, "%s seed %llu", hash_name(k->hash),
             (unsigned long long)k->seed);
  }else{
    snprintf(z, n, "%s", hash_name(k->hash));
  }
}

/* "hash_tag '{}'", or "no hash_tag". */
static void tag_text(const ring_keys *k, char *z, size_t n){
  if( k->tag[0] ) snprintf(z, n, "hash_tag '%s'", k->tag);
  else snprintf(z, n, "no hash_tag");
}

/* "prefix 'ns:', shorten 250", or "no steps". */
static void steps_text(const ring_keys *k, char *z, size_t n){
  static const char *const azOp[] = {
    [RING_KEY_PREFIX] = "prefix", [RING_KEY_SHORTEN] = "shorten",
    [RING_KEY_REWRITE] = "rewrite", [RING_KEY_UTF16] = "utf16",
    [RING_KEY_LOW_BYTE] = "low_byte", [RING_KEY_TRUNCATE] = "truncate",
  };
  size_t used = 0;
  z[0] = 0;
  if( k->n_steps==0 ) snprintf(z, n, "no key steps");
  for(uint32_t i=0; i<k->n_steps && used<n; i++){
    const ring_key_step *s = &k->steps[i];
    int w = s->op==RING_KEY_PREFIX
      ? snprintf(z+used, n-used, "%s%s '%.*s'", i ? ", " : "", azOp[s->op],
                 (int)s->n, (const char *)s->text)
      : snprintf(z+used, n-used, "%s%s %u", i ? ", " : "", azOp[s->op],
                 s->n);
    if( w<0 ) break;
    used += (size_t)w;
  }
}

const char *ring_keys_differ(const ring_keys *a, const ring_keys *b,
                             char *zOut, size_t nOut){
  char zA[200], zB[200];
  zOut[0] = 0;
  if( a->hash!=b->hash || a->seed!=b->seed ){
    hash_text(a, zA, sizeof(zA));
    hash_text(b, zB, sizeof(zB));
  }else if( a->finish!=b->finish ){
    snprintf(zOut, nOut, "algorithm %s and algorithm %s hash keys "
             "differently", a->finish_by, b->finish_by);
    return zOut;
  }else if( a->tag[0]!=b->tag[0] || a->tag[1]!=b->tag[1] ){
    tag_text(a, zA, sizeof(zA));
    tag_text(b, zB, sizeof(zB));
  }else if( a->n_steps!=b->n_steps || ring_keys_steps_differ(a, b) ){
    steps_text(a, zA, sizeof(zA));
    steps_text(b, zB, sizeof(zB));
  }else if( a->integer_bytes!=b->integer_bytes ){
    snprintf(zA, sizeof(zA), "integers as %u bytes", a->integer_bytes);
    snprintf(zB, sizeof(zB), "integers as %u bytes", b->integer_bytes);
  }else if( a->finish_arg!=b->finish_arg ){
    snprintf(zA, sizeof(zA), "%s %llu", a->finish_option,
             (unsigned long long)a->finish_arg);
    snprintf(zB, sizeof(zB), "%s %llu", b->finish_option,
             (unsigned long long)b->finish_arg);
  }else{
    return zOut;
  }
  snprintf(zOut, nOut, "the rings hash keys differently (%s, %s)", zA, zB);
  return zOut;
}

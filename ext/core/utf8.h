/*
** utf8.h: reading UTF-8 a byte at a time into code points, and code
** points into UTF-16 code units, as Java holds a string. Shared by the
** key step that turns a key into UTF-16 (keys.c) and the key hashes that
** run over a Java string's code units (keyhash.c), so both read a key
** alike. Pure C, inline.
**
** A byte that starts no sequence, a sequence cut short by a byte that
** does not continue it or by the end of the key, an overlong form, a
** surrogate and a value above U+10FFFF are one U+FFFD each (a byte that
** cut a sequence short starts anew).
*/
#ifndef CHASH_UTF8_H
#define CHASH_UTF8_H

#include <stdint.h>

typedef struct utf8_reader {
  unsigned char part[4];   /* the sequence read so far, */
  unsigned nPart, nNeed;   /* its bytes, and its length */
} utf8_reader;

/* Bytes in the UTF-8 sequence lead byte b starts (0: b starts none). */
static inline unsigned utf8_length(unsigned char b){
  if( b<0x80 ) return 1;
  if( b>=0xC2 && b<=0xDF ) return 2;
  if( b>=0xE0 && b<=0xEF ) return 3;
  if( b>=0xF0 && b<=0xF4 ) return 4;
  return 0;
}

/* The code point of the n-byte sequence z (its continuation bytes
** checked), or U+FFFD for an overlong form, a surrogate or one above
** U+10FFFF. */
static inline uint32_t utf8_decode(const unsigned char *z, unsigned n){
  static const uint32_t aMin[5] = { 0, 0, 0x80, 0x800, 0x10000 };
  uint32_t c = z[0] & (0x7F >> n);
  for(unsigned i=1; i<n; i++) c = c<<6 | (z[i] & 0x3F);
  if( c<aMin[n] || (c>=0xD800 && c<=0xDFFF) || c>0x10FFFF ) return 0xFFFD;
  return c;
}

/* Read byte b: the code points it completes go to aOut; their count (0,
** 1, or 2 when b cuts a sequence short and is a whole one itself). */
static inline unsigned utf8_reader_byte(utf8_reader *r, unsigned char b,
                                        uint32_t aOut[2]){
  unsigned n = 0;
  if( r->nPart>0 ){
    if( (b & 0xC0)==0x80 ){
      r->part[r->nPart++] = b;
      if( r->nPart<r->nNeed ) return 0;
      r->nPart = 0;
      aOut[0] = utf8_decode(r->part, r->nNeed);
      return 1;
    }
    aOut[n++] = 0xFFFD;
    r->nPart = 0;
  }
  r->nNeed = utf8_length(b);
  if( r->nNeed<=1 ){
    aOut[n++] = r->nNeed ? b : 0xFFFD;
  }else{
    r->part[0] = b;
    r->nPart = 1;
  }
  return n;
}

/* At the end of the key: a sequence cut short is one U+FFFD (into
** *pOut, returning 1); else 0. */
static inline unsigned utf8_reader_end(utf8_reader *r, uint32_t *pOut){
  if( r->nPart==0 ) return 0;
  r->nPart = 0;
  *pOut = 0xFFFD;
  return 1;
}

/* The UTF-16 code units of code point c into aUnit; their count. */
static inline unsigned utf16_units(uint32_t c, uint16_t aUnit[2]){
  if( c<0x10000 ){
    aUnit[0] = (uint16_t)c;
    return 1;
  }
  c -= 0x10000;
  aUnit[0] = (uint16_t)(0xD800 | (c>>10));
  aUnit[1] = (uint16_t)(0xDC00 | (c & 0x3FF));
  return 2;
}

#endif

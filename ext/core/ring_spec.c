/*
** ring_spec.c: parsing ring specs (see ring_spec.h). Pure C, no SQLite.
*/
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "ring_spec.h"

/* Messages quote the spec cut after some 60 bytes (ring_quote_name adds
** the quotes and "..."): a megabyte spec is not repeated whole. */
#define RING_SPEC_ECHO 66

void ring_spec_default(ring_spec *p){
  memset(p, 0, sizeof(*p));
  p->kind = RING_SPEC_DEFAULT;
  p->when = RING_SPEC_CURRENT;
}

void ring_spec_version(int64_t v, ring_spec *p){
  ring_spec_default(p);
  p->when = v<0 ? RING_SPEC_RELATIVE : RING_SPEC_VERSION;
  p->version = v;
}

/* Parse "-?[0-9]{1,18}" (n bytes at z) into *pV. Returns 0 on success. */
static int spec_parse_version(const char *z, size_t n, int64_t *pV){
  int bNeg = n>0 && *z=='-';
  if( bNeg ){ z++; n--; }
  if( n==0 || n>18 ) return 1;
  int64_t v = 0;
  for(size_t i=0; i<n; i++){
    if( !isdigit((unsigned char)z[i]) ) return 1;
    v = v*10 + (z[i]-'0');
  }
  *pV = bNeg ? -v : v;
  return 0;
}

/* The length of the quoted part at z (n bytes, z[0] is '"'), its closing
** quote included; 0 if it has none. */
static size_t quoted_len(const char *z, size_t n){
  for(size_t i=1; i<n; i++){
    if( z[i]!='"' ) continue;
    if( i+1<n && z[i+1]=='"' ){
      i++;                                  /* a doubled quote */
      continue;
    }
    return i+1;
  }
  return 0;
}

size_t ring_spec_unquote(const char *z, size_t n, char *zOut){
  size_t j = 0;
  if( n>=2 && z[0]=='"' ){
    for(size_t i=1; i+1<n; i++){
      zOut[j++] = z[i];
      if( z[i]=='"' ) i++;                  /* "" is one quote */
    }
  }else if( n>0 ){
    memcpy(zOut, z, n);
    j = n;
  }
  zOut[j] = 0;
  return j;
}

/* Put message zFmt into zErr, its %s the spec z (n bytes) quoted and cut
** short; returns 1 (the parse failed). */
static int spec_error(const char *z, size_t n, const char *zFmt,
                      char *zErr, size_t nErr){
  char zSpec[RING_SPEC_ECHO];
  ring_quote_name(zSpec, sizeof(zSpec), z, n);
  snprintf(zErr, nErr, zFmt, zSpec);
  return 1;
}

/*
** The version after a name: the n bytes at z are empty (the current ring)
** or '@' and a version. zSpec (nSpec bytes) is the whole spec, for the
** message.
*/
static int spec_parse_at(const char *z, size_t n, ring_spec *p,
                         const char *zSpec, size_t nSpec, char *zErr,
                         size_t nErr){
  if( n==0 ) return 0;
  if( z[0]!='@' ){
    return spec_error(zSpec, nSpec, "bad ring spec %s: a quoted name ends "
                      "at its closing quote, and then comes '.', '@' or "
                      "the end", zErr, nErr);
  }
  if( spec_parse_version(z+1, n-1, &p->version) ){
    return spec_error(zSpec, nSpec, "bad version in ring spec %s: write "
                      "name@N or name@-N (a name holding '@' is quoted: "
                      "\"a@b\"@2)", zErr, nErr);
  }
  p->when = z[1]=='-' ? RING_SPEC_RELATIVE : RING_SPEC_VERSION;
  return 0;
}

/* The table part of a spec, at z (n bytes: the rest of the spec zSpec),
** quoted or bare, and the version after it. */
static int spec_parse_table(const char *z, size_t n, ring_spec *p,
                            const char *zSpec, size_t nSpec, char *zErr,
                            size_t nErr){
  size_t nTable;
  if( n>0 && z[0]=='"' ){
    nTable = quoted_len(z, n);
    if( nTable==0 ){
      return spec_error(zSpec, nSpec, "bad ring spec %s: a quoted name "
                        "needs its closing quote", zErr, nErr);
    }
  }else{
    /* Unquoted, the last '@' starts the version: a name may hold '@'. */
    nTable = n;
    while( nTable>0 && z[nTable-1]!='@' ) nTable--;
    nTable = nTable>0 ? nTable-1 : n;
  }
  p->table = z;
  p->table_len = nTable;
  p->name_len = (size_t)(z + nTable - p->name);
  return spec_parse_at(z+nTable, n-nTable, p, zSpec, nSpec, zErr, nErr);
}

int ring_spec_parse(const char *z, size_t n, ring_spec *p, char *zErr,
                    size_t nErr){
  ring_spec_default(p);
  size_t lead = 0;
  while( lead<n && isspace((unsigned char)z[lead]) ) lead++;
  if( lead<n && (z[lead]=='[' || z[lead]=='{') ){
    p->kind = RING_SPEC_INLINE;
    p->name = z;
    p->name_len = n;
    return 0;
  }
  if( n==0 || memchr(z, 0, n) ){
    return spec_error(z, n, "no such ring: %s", zErr, nErr);
  }
  p->kind = RING_SPEC_NAMED;
  p->name = z;
  const char *zDot = memchr(z, '.', n);
  size_t nSchema = 0;
  if( z[0]=='"' ){
    /* "schema".name or "name": the quotes say where the part ends. */
    nSchema = quoted_len(z, n);
    if( nSchema==0 ){
      return spec_error(z, n, "bad ring spec %s: a quoted name needs its "
                        "closing quote", zErr, nErr);
    }
    if( nSchema==n || z[nSchema]!='.' ) nSchema = 0;
  }else if( zDot && zDot+1<z+n && zDot[1]=='"' ){
    nSchema = (size_t)(zDot - z);              /* schema."name" */
  }
  if( nSchema>0 ){
    p->schema = z;
    p->schema_len = nSchema;
    return spec_parse_table(z+nSchema+1, n-nSchema-1, p, z, n, zErr, nErr);
  }
  if( spec_parse_table(z, n, p, z, n, zErr, nErr) ) return 1;
  /* Nothing quoted: x.y is schema x and table y if there is schema x. */
  if( z[0]!='"' ){
    zDot = memchr(z, '.', p->name_len);
    if( zDot ){
      p->schema = z;
      p->schema_len = (size_t)(zDot - z);
      p->table = zDot+1;
      p->table_len = p->name_len - p->schema_len - 1;
      p->schema_if_exists = 1;
    }
  }
  return 0;
}

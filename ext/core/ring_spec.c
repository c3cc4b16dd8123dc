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
    char zName[RING_SPEC_ECHO];
    ring_quote_name(zName, sizeof(zName), z, n);
    snprintf(zErr, nErr, "no such ring: %s", zName);
    return 1;
  }
  p->kind = RING_SPEC_NAMED;
  p->name = z;
  p->name_len = n;
  /* The last '@' starts the version: names may hold '@' themselves. */
  const char *zAt = NULL;
  for(size_t i=n; i>0; i--){
    if( z[i-1]=='@' ){ zAt = &z[i-1]; break; }
  }
  if( zAt ){
    size_t nVersion = n - (size_t)(zAt+1 - z);
    p->name_len = (size_t)(zAt - z);
    if( spec_parse_version(zAt+1, nVersion, &p->version) ){
      char zSpec[RING_SPEC_ECHO];
      ring_quote_name(zSpec, sizeof(zSpec), z, n);
      snprintf(zErr, nErr, "bad version in ring spec %s: write name@N "
               "or name@-N", zSpec);
      return 1;
    }
    p->when = zAt[1]=='-' ? RING_SPEC_RELATIVE : RING_SPEC_VERSION;
  }
  const char *zDot = memchr(p->name, '.', p->name_len);
  p->schema_len = zDot ? (size_t)(zDot - p->name) : p->name_len;
  return 0;
}

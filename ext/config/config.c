/*
** config.c: what the configuration formats share: the list of formats,
** pools and nodes as the parsers collect them, the choice of one pool by
** name, the JSON ring spec written for it, and the pool made from a ring
** for the writers. Pure C, no SQLite calls (config.h).
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "config.h"
#include "utf8.h"

extern const config_format config_nginx, config_haproxy, config_nutcracker,
                           config_envoy, config_libmemcached,
                           config_hashring, config_spymemcached,
                           config_nodetool_ring, config_redis_nodes,
                           config_dalli, config_pymemcache,
                           config_redis_cli;

static const config_format *const config_formats[] = {
  &config_nutcracker, &config_nginx, &config_haproxy, &config_envoy,
  &config_libmemcached, &config_spymemcached, &config_hashring,
  &config_nodetool_ring, &config_redis_nodes, &config_dalli,
  &config_pymemcache, &config_redis_cli, NULL
};

const config_format *config_format_find(const char *zName){
  for(int i=0; config_formats[i]; i++){
    if( strcmp(config_formats[i]->name, zName)==0 ) return config_formats[i];
  }
  return NULL;
}

const char *config_format_list(char *zOut, size_t nOut){
  size_t n = 0;
  zOut[0] = 0;
  for(int i=0; config_formats[i] && n<nOut; i++){
    int k = snprintf(zOut+n, nOut-n, "%s%s", i ? ", " : "",
                     config_formats[i]->name);
    if( k<0 ) break;
    n += (size_t)k;
  }
  return zOut;
}

char *config_strndup(const char *z, size_t n){
  char *zCopy = ring_alloc(n+1);
  if( zCopy==NULL ) return NULL;
  memcpy(zCopy, z, n);
  zCopy[n] = 0;
  return zCopy;
}

/* printf into a new string from the ring allocator; NULL on OOM. */
static char *config_vmprintf(const char *zFmt, va_list ap){
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, zFmt, ap2);
  va_end(ap2);
  if( n<0 ) return NULL;
  char *z = ring_alloc((size_t)n+1);
  if( z ) vsnprintf(z, (size_t)n+1, zFmt, ap);
  return z;
}

static char *config_mprintf(const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  char *z = config_vmprintf(zFmt, ap);
  va_end(ap);
  return z;
}

void config_fail(config_file *f, const char *zFmt, ...){
  if( f->error[0] ) return;
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(f->error, sizeof(f->error), zFmt, ap);
  va_end(ap);
}

void config_refuse(config_file *f, config_pool *p, const char *zFmt, ...){
  if( p->refusal ) return;
  va_list ap;
  va_start(ap, zFmt);
  p->refusal = config_vmprintf(zFmt, ap);
  va_end(ap);
  if( p->refusal==NULL ) f->nomem = 1;
}

config_pool *config_pool_add(config_file *f, const char *z, size_t n,
                             int line){
  for(int i=0; i<f->n_pools; i++){
    if( strlen(f->pools[i].name)==n && memcmp(f->pools[i].name, z, n)==0 ){
      config_fail(f, "line %d: a second pool named '%.*s' (the first is at "
                  "line %d)", line, (int)(n>200 ? 200 : n), z,
                  f->pools[i].line);
      return NULL;
    }
  }
  if( f->n_pools>=CONFIG_MAX_POOLS ){
    config_fail(f, "line %d: more than %d pools in one text", line,
                CONFIG_MAX_POOLS);
    return NULL;
  }
  if( f->n_pools==f->n_alloc ){
    int nNew = f->n_alloc ? f->n_alloc*2 : 8;
    config_pool *aNew = ring_alloc(sizeof(config_pool)*(size_t)nNew);
    if( aNew==NULL ){ f->nomem = 1; return NULL; }
    if( f->n_pools ) memcpy(aNew, f->pools, sizeof(config_pool)*f->n_pools);
    ring_dealloc(f->pools);
    f->pools = aNew;
    f->n_alloc = nNew;
  }
  config_pool *p = &f->pools[f->n_pools];
  memset(p, 0, sizeof(*p));
  p->name = config_strndup(z, n);
  if( p->name==NULL ){ f->nomem = 1; return NULL; }
  p->line = line;
  f->n_pools++;
  return p;
}

/* Whether z (n bytes) is UTF-8: every sequence whole, none overlong, no
** surrogate, nothing above U+10FFFF. */
static int config_is_utf8(const char *z, size_t n){
  const unsigned char *u = (const unsigned char *)z;
  for(size_t i=0; i<n; ){
    unsigned len = utf8_length(u[i]);
    if( len==0 || len>n-i ) return 0;
    for(unsigned k=1; k<len; k++) if( (u[i+k]&0xC0)!=0x80 ) return 0;
    if( len>1 && utf8_decode(u+i, len)==0xFFFD
        && memcmp(u+i, "\xEF\xBF\xBD", len)!=0 ) return 0;
    i += len;
  }
  return 1;
}

int config_node_add(config_file *f, config_pool *p, const char *z, size_t n,
                    double weight, int line){
  /* Names are text: a byte that is not UTF-8 would be read as another
  ** character by the spec, and the node named otherwise than the text. */
  if( !config_is_utf8(z, n) ){
    config_refuse(f, p, "line %d: server name is not UTF-8", line);
    return 0;
  }
  for(uint32_t i=0; i<p->n_nodes; i++){
    if( strlen(p->nodes[i].name)==n && memcmp(p->nodes[i].name, z, n)==0 ){
      config_refuse(f, p, "line %d: server '%.*s' is listed twice in %s "
                    "(chash's nodes are unique: give it one line with the "
                    "sum of the weights, which places keys differently, or "
                    "remove one)", line, (int)(n>200 ? 200 : n), z, p->name);
      return 0;
    }
  }
  if( p->n_nodes>=RING_MAX_NODES ){
    config_refuse(f, p, "line %d: more than %d servers in %s", line,
                  RING_MAX_NODES, p->name);
    return 0;
  }
  if( p->n_nodes==p->n_alloc ){
    uint32_t nNew = p->n_alloc ? p->n_alloc*2 : 8;
    config_node *aNew = ring_alloc(sizeof(config_node)*nNew);
    if( aNew==NULL ){ f->nomem = 1; return 1; }
    if( p->n_nodes ) memcpy(aNew, p->nodes, sizeof(config_node)*p->n_nodes);
    ring_dealloc(p->nodes);
    p->nodes = aNew;
    p->n_alloc = nNew;
  }
  char *zName = config_strndup(z, n);
  if( zName==NULL ){ f->nomem = 1; return 1; }
  memset(&p->nodes[p->n_nodes], 0, sizeof(config_node));
  p->nodes[p->n_nodes].name = zName;
  p->nodes[p->n_nodes].weight = weight;
  p->n_nodes++;
  return 0;
}

int config_node_column(config_file *f, config_pool *p, unsigned i,
                       const char *z, size_t n){
  if( p->refusal || p->n_nodes==0 ) return 0;   /* the node was refused */
  config_node *node = &p->nodes[p->n_nodes-1];
  if( !config_is_utf8(z, n) ){
    config_refuse(f, p, "server %.200s: its %s is not UTF-8", node->name,
                  ring_algorithm_from_name(p->algorithm)->columns[i].name);
    return 0;
  }
  char *zCopy = config_strndup(z, n);
  if( zCopy==NULL ){ f->nomem = 1; return 1; }
  ring_dealloc(node->columns[i]);
  node->columns[i] = zCopy;
  return 0;
}

void config_option_set(config_pool *p, const char *zKey, const char *zValue,
                       int bInteger){
  int i = 0;
  while( i<p->n_options && strcmp(p->options[i].key, zKey)!=0 ) i++;
  if( i==CONFIG_MAX_OPTIONS ) return;       /* every format sets fewer */
  if( i==p->n_options ) p->n_options++;
  p->options[i].key = zKey;
  p->options[i].integer = bInteger;
  snprintf(p->options[i].value, sizeof(p->options[i].value), "%s", zValue);
}

const char *config_option_get(const config_pool *p, const char *zKey){
  for(int i=0; i<p->n_options; i++){
    if( strcmp(p->options[i].key, zKey)==0 ) return p->options[i].value;
  }
  return NULL;
}

void config_pool_clear(config_pool *p){
  for(uint32_t i=0; i<p->n_nodes; i++){
    ring_dealloc(p->nodes[i].name);
    for(int c=0; c<RING_MAX_COLUMNS; c++) ring_dealloc(p->nodes[i].columns[c]);
  }
  ring_dealloc(p->nodes);
  ring_dealloc(p->name);
  ring_dealloc(p->refusal);
  memset(p, 0, sizeof(*p));
}

void config_file_clear(config_file *f){
  for(int i=0; i<f->n_pools; i++) config_pool_clear(&f->pools[i]);
  ring_dealloc(f->pools);
  memset(f, 0, sizeof(*f));
}

/* ------------------------------------------------------------- buffers */

void config_buf_append(config_buf *b, const char *z, size_t n){
  if( b->nomem ) return;
  if( b->n+n+1>b->alloc ){
    size_t nNew = b->alloc ? b->alloc*2 : 256;
    while( nNew<b->n+n+1 ) nNew *= 2;
    char *zNew = ring_alloc(nNew);
    if( zNew==NULL ){ b->nomem = 1; return; }
    if( b->n ) memcpy(zNew, b->z, b->n);
    ring_dealloc(b->z);
    b->z = zNew;
    b->alloc = nNew;
  }
  memcpy(b->z+b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}

void config_buf_printf(config_buf *b, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  char *z = config_vmprintf(zFmt, ap);
  va_end(ap);
  if( z==NULL ){ b->nomem = 1; return; }
  config_buf_append(b, z, strlen(z));
  ring_dealloc(z);
}

/* Nonzero if code point c must be escaped for YAML to read it back: it
** is not printable to YAML (DEL, the C1 controls, U+FEFF, U+FFFE, U+FFFF)
** or is a line break, which YAML folds to a space inside quotes (U+0085,
** U+2028, U+2029). */
static int yaml_needs_escape(uint32_t c){
  return c==0x7F || (c>=0x80 && c<=0x9F) || c==0x2028 || c==0x2029
      || c==0xFEFF || c==0xFFFE || c==0xFFFF;
}

size_t config_buf_json_string(config_buf *b, const char *z){
  size_t iStart = b->n;
  config_buf_append(b, "\"", 1);
  const unsigned char *p = (const unsigned char *)z;
  while( *p ){
    /* z is UTF-8 (node names are checked): a character at a time; those
    ** to escape are all in the two- and three-byte forms. */
    uint32_t c = *p;
    int n = 1;
    if( (p[0]&0xF8)==0xF0 && p[1] && p[2] && p[3] ){
      c = 0x10000;                   /* any character above U+FFFF */
      n = 4;
    }else if( (p[0]&0xE0)==0xC0 && p[1] ){
      c = (uint32_t)(p[0]&0x1F)<<6 | (p[1]&0x3F);
      n = 2;
    }else if( (p[0]&0xF0)==0xE0 && p[1] && p[2] ){
      c = (uint32_t)(p[0]&0x0F)<<12 | (uint32_t)(p[1]&0x3F)<<6 | (p[2]&0x3F);
      n = 3;
    }
    if( c=='"' || c=='\\' ){
      char esc[2] = { '\\', (char)c };
      config_buf_append(b, esc, 2);
    }else if( c<0x20 || yaml_needs_escape(c) ){
      config_buf_printf(b, "\\u%04x", (unsigned)c);
    }else{
      config_buf_append(b, (const char *)p, (size_t)n);
    }
    p += n;
  }
  config_buf_append(b, "\"", 1);
  size_t nChar = 0;
  for(size_t k=iStart; k<b->n && !b->nomem; k++){
    nChar += ((unsigned char)b->z[k] & 0xC0)!=0x80;
  }
  return nChar;
}

int config_buf_finish(config_buf *b, char **pzOut){
  if( b->nomem ){
    ring_dealloc(b->z);
    return CONFIG_NOMEM;
  }
  *pzOut = b->z;
  return CONFIG_OK;
}

long config_number(const char *z, size_t n){
  long v = 0;
  if( n==0 ) return -1;
  for(size_t i=0; i<n; i++){
    if( z[i]<'0' || z[i]>'9' || v>100000000 ) return -1;
    v = v*10 + (z[i]-'0');
  }
  return v;
}

int config_whole_weight(double w, long long *pOut){
  if( !(w>=1.0 && w<=9007199254740992.0) || w!=floor(w) ) return 0;
  *pOut = (long long)w;
  return 1;
}

static void config_buf_weight(config_buf *b, double w){
  long long i;
  if( config_whole_weight(w, &i) ) config_buf_printf(b, "%lld", i);
  else config_buf_printf(b, "%.17g", w);
}

/* -------------------------------------------------------------- reading */

/* "a, b, c": the names of f's pools. */
static char *pool_names(const config_file *f){
  config_buf b = {0};
  for(int i=0; i<f->n_pools; i++){
    if( i ) config_buf_append(&b, ", ", 2);
    config_buf_append(&b, f->pools[i].name, strlen(f->pools[i].name));
  }
  if( b.nomem ){ ring_dealloc(b.z); return NULL; }
  return b.z ? b.z : config_strndup("", 0);
}

/* The pool to read, or NULL with *pzErr set (NULL too on OOM). */
static const config_pool *pick_pool(const config_format *fmt,
                                    const config_file *f, const char *zName,
                                    char **pzErr){
  const char *zNoun = fmt->pool_noun;
  if( f->n_pools==0 ){
    *pzErr = config_mprintf("%s: the text holds no %s", fmt->name, zNoun);
    return NULL;
  }
  for(int i=0; zName && i<f->n_pools; i++){
    if( strcmp(f->pools[i].name, zName)==0 ) return &f->pools[i];
  }
  if( zName==NULL && f->n_pools==1 ) return &f->pools[0];
  char *zList = pool_names(f);
  if( zList==NULL ) return NULL;
  if( zName ){
    *pzErr = config_mprintf("%s: no %s named '%s'; the text holds: %s",
                            fmt->name, zNoun, zName, zList);
  }else{
    *pzErr = config_mprintf("%s: the text holds %d %ss (%s): name one as "
                            "the third argument", fmt->name, f->n_pools,
                            zNoun, zList);
  }
  ring_dealloc(zList);
  return NULL;
}

/* The JSON ring spec of pool p. */
static char *pool_spec(const config_pool *p){
  config_buf b = {0};
  config_buf_append(&b, "{\"algorithm\":", 13);
  config_buf_json_string(&b, p->algorithm);
  for(int i=0; i<p->n_options; i++){
    config_buf_append(&b, ",", 1);
    config_buf_json_string(&b, p->options[i].key);
    config_buf_append(&b, ":", 1);
    if( p->options[i].integer ){
      config_buf_append(&b, p->options[i].value, strlen(p->options[i].value));
    }else{
      config_buf_json_string(&b, p->options[i].value);
    }
  }
  /* A node with column values is an object: {"weight": w, "tokens": ...}. */
  const ring_algo *algo = ring_algorithm_from_name(p->algorithm);
  config_buf_append(&b, ",\"nodes\":{", 10);
  for(uint32_t i=0; i<p->n_nodes; i++){
    const config_node *node = &p->nodes[i];
    int bObject = 0;
    for(int c=0; c<RING_MAX_COLUMNS; c++) bObject |= node->columns[c]!=NULL;
    if( i ) config_buf_append(&b, ",", 1);
    config_buf_json_string(&b, node->name);
    config_buf_append(&b, bObject ? ":{\"weight\":" : ":", bObject ? 11 : 1);
    config_buf_weight(&b, node->weight);
    for(int c=0; bObject && c<RING_MAX_COLUMNS; c++){
      if( node->columns[c]==NULL ) continue;
      config_buf_append(&b, ",", 1);
      config_buf_json_string(&b, algo->columns[c].name);
      config_buf_append(&b, ":", 1);
      config_buf_json_string(&b, node->columns[c]);
    }
    if( bObject ) config_buf_append(&b, "}", 1);
  }
  config_buf_append(&b, "}}", 2);
  if( b.nomem ){ ring_dealloc(b.z); return NULL; }
  return b.z;
}

int config_read_spec(const char *zFormat, const char *z, size_t n,
                     const char *zName, char **pzSpec, char **pzErr){
  *pzSpec = NULL;
  *pzErr = NULL;
  const config_format *fmt = config_format_find(zFormat);
  if( fmt==NULL ){
    char zList[200];
    *pzErr = config_mprintf("unknown format '%s'; accepted: %s", zFormat,
                            config_format_list(zList, sizeof(zList)));
    return *pzErr ? CONFIG_ERROR : CONFIG_NOMEM;
  }
  if( n>CONFIG_MAX_TEXT ){
    *pzErr = config_mprintf("%s: the text is %zu bytes; at most %d are read",
                            fmt->name, n, CONFIG_MAX_TEXT);
    return *pzErr ? CONFIG_ERROR : CONFIG_NOMEM;
  }
  if( memchr(z, 0, n) ){
    *pzErr = config_mprintf("%s: the text holds a NUL byte", fmt->name);
    return *pzErr ? CONFIG_ERROR : CONFIG_NOMEM;
  }
  config_file f;
  memset(&f, 0, sizeof(f));
  fmt->read(z, n, &f);
  int rc = CONFIG_OK;
  if( f.nomem ){
    rc = CONFIG_NOMEM;
  }else if( f.error[0] ){
    *pzErr = config_mprintf("%s: %s", fmt->name, f.error);
  }else{
    const config_pool *p = pick_pool(fmt, &f, zName, pzErr);
    if( p && p->refusal ){
      *pzErr = config_mprintf("%s: %s", fmt->name, p->refusal);
    }else if( p && p->n_nodes==0 ){
      *pzErr = config_mprintf("%s: line %d: %s %s has no server", fmt->name,
                              p->line, fmt->pool_noun, p->name);
    }else if( p ){
      *pzSpec = pool_spec(p);
      if( *pzSpec==NULL ) rc = CONFIG_NOMEM;
    }else if( *pzErr==NULL ){
      rc = CONFIG_NOMEM;
    }
  }
  if( rc==CONFIG_OK && *pzSpec==NULL ) rc = *pzErr ? CONFIG_ERROR : CONFIG_NOMEM;
  config_file_clear(&f);
  return rc;
}

/* -------------------------------------------------------------- writing */

/* Nonzero if pool p is of another algorithm than fmt writes, or has an
** option other than those it writes; then zErr says which. */
static int config_not_writable(const config_format *fmt, const config_pool *p,
                               char *zErr, size_t nErr){
  if( strcmp(p->algorithm, fmt->algorithm)!=0 ){
    snprintf(zErr, nErr, "the ring is algorithm %s; %s places keys as "
             "algorithm %s", p->algorithm, fmt->writes, fmt->algorithm);
    return 1;
  }
  const char *const *azAllowed = fmt->write_options;
  for(int i=0; i<p->n_options; i++){
    int j = 0;
    while( azAllowed[j] && strcmp(azAllowed[j], p->options[i].key)!=0 ) j++;
    if( azAllowed[j]==NULL ){
      snprintf(zErr, nErr, "the ring has %s=%s, which %s cannot write",
               p->options[i].key, p->options[i].value, fmt->writes);
      return 1;
    }
  }
  return 0;
}

void config_options_of(const ring_config *cfg, config_pool *p){
  p->algorithm = ring_algorithm_name(cfg->algo);
  ring_config def;
  char zErr[200];
  ring_config_default(&def);
  options_set_algorithm(&def, cfg->algo);
  options_check(&def, OPTION_ALGORITHM, zErr, sizeof(zErr));
  const char *zKey;
  char zValue[OPTION_MAX_TEXT], zDefault[OPTION_MAX_TEXT];
  int bStore, bInteger;
  for(int i=0; options_stored(cfg, i, &zKey, zValue, sizeof(zValue), &bStore,
                              &bInteger); i++){
    options_stored(&def, i, &zKey, zDefault, sizeof(zDefault), &bStore,
                   &bInteger);
    if( strcmp(zKey, "algorithm")!=0 && strcmp(zValue, zDefault)!=0 ){
      config_option_set(p, zKey, zValue, bInteger);
    }
  }
}

/* Join order of two nodes of a ring, for qsort. */
static int by_join(const void *a, const void *b){
  uint32_t x = (*(const ring_node *const *)a)->join;
  uint32_t y = (*(const ring_node *const *)b)->join;
  return (x>y) - (x<y);
}

int config_write_ring(const char *zFormat, const ring *r, const char *zName,
                      char **pzText, char **pzErr){
  char zErr[400];
  *pzText = NULL;
  *pzErr = NULL;
  const config_format *fmt = config_format_find(zFormat);
  if( fmt==NULL ){
    char zList[200];
    *pzErr = config_mprintf("unknown format '%s'; accepted: %s", zFormat,
                            config_format_list(zList, sizeof(zList)));
    return *pzErr ? CONFIG_ERROR : CONFIG_NOMEM;
  }
  config_pool p;
  memset(&p, 0, sizeof(p));
  config_options_of(&r->config, &p);
  /* The nodes in join order. */
  const ring_node **aNode = ring_alloc(sizeof(ring_node *)*(r->n_nodes+1));
  p.name = config_strndup(zName, strlen(zName));
  p.nodes = ring_alloc(sizeof(config_node)*(r->n_nodes+1));
  int rc = CONFIG_NOMEM;
  if( aNode && p.name && p.nodes ){
    for(uint32_t i=0; i<r->n_nodes; i++) aNode[i] = &r->nodes[i];
    qsort(aNode, r->n_nodes, sizeof(aNode[0]), by_join);
    for(uint32_t i=0; i<r->n_nodes; i++){
      memset(&p.nodes[i], 0, sizeof(config_node));
      p.nodes[i].name = (char *)aNode[i]->name;
      p.nodes[i].weight = aNode[i]->weight;
      for(int c=0; c<RING_MAX_COLUMNS; c++){
        p.nodes[i].columns[c] = (char *)aNode[i]->columns[c];
      }
    }
    p.n_nodes = r->n_nodes;
    zErr[0] = 0;
    rc = config_not_writable(fmt, &p, zErr, sizeof(zErr)) ? CONFIG_ERROR
         : fmt->write(&p, pzText, zErr, sizeof(zErr));
    if( rc==CONFIG_ERROR ){
      *pzErr = config_mprintf("%s: %s", fmt->name, zErr);
      if( *pzErr==NULL ) rc = CONFIG_NOMEM;
    }
    p.n_nodes = 0;               /* the names and values are the ring's */
  }
  ring_dealloc(aNode);
  config_pool_clear(&p);
  return rc;
}

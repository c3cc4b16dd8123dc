/*
** npm_hashring.c: format hashring, the server argument of the npm package
** hashring (3.2.0), `new HashRing(servers)`, written as JSON, read as one
** pool (named "servers") of algorithm hashring, and written as one.
**
** The package takes (through connection-parse):
**   ["a:11211", "b:11211"]          servers of weight 1, in that order
**   {"a:11211": 1, "b:11211": 3}    servers and their weights, in the
**                                   order of Object.keys
**   {"a:11211": {"weight": 3}}      the same, a weight in an object
**   "a:11211"                       one server
** A node is the server string as written (the package hashes it so).
** Weights are JSON numbers above 0, kept exactly (the package's weights
** are doubles). Refused, naming the line: what the package reads otherwise
** than a demanding reader would expect: a weight of 0, a negative weight
** or one that is not a number (the package makes 0 and non-numbers 1), a
** server whose name is an array index such as "7" (JavaScript lists those
** keys first, in numeric order), a per-server "vnodes" (a fixed count the
** weights no longer decide), other keys in a server's object, servers
** given as objects in an array, and text that is not JSON (libyaml reads
** it: names must be double-quoted, the brackets flow style).
**
** Written: an array of the server strings when every weight is 1, else an
** object {"server": weight} in join order.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_yaml.h"

/* Nonzero if z (n bytes) is an array index to JavaScript: the canonical
** decimal text of a whole number below 2^32 - 1. */
static int npm_array_index(const char *z, size_t n){
  if( n==0 || n>10 || (z[0]=='0' && n>1) ) return 0;
  unsigned long long v = 0;
  for(size_t i=0; i<n; i++){
    if( z[i]<'0' || z[i]>'9' ) return 0;
    v = v*10 + (unsigned long long)(z[i]-'0');
  }
  return v<4294967295ULL;
}

/* Nonzero if z (n bytes) is a JSON number. */
static int npm_json_number(const char *z, size_t n){
  size_t i = 0;
  if( i<n && z[i]=='-' ) i++;
  if( i<n && z[i]=='0' ) i++;
  else if( i<n && z[i]>='1' && z[i]<='9' ){
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
  }else return 0;
  if( i<n && z[i]=='.' ){
    size_t s = ++i;
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
    if( i==s ) return 0;
  }
  if( i<n && (z[i]=='e' || z[i]=='E') ){
    i++;
    if( i<n && (z[i]=='+' || z[i]=='-') ) i++;
    size_t s = i;
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
    if( i==s ) return 0;
  }
  return i==n;
}

/* What npm_read reads: the text, its document, and the pool. */
typedef struct npm_reader {
  const char *z;                 /* the text */
  size_t n;
  config_yaml_cursor cursor;     /* for the offsets of its strings */
  yaml_document_t *d;
  config_file *f;
  config_pool *p;
} npm_reader;

/* Why the JSON string at z[i] (its opening quote) might be read otherwise
** by YAML than by JavaScript, or NULL if it cannot: YAML has escapes JSON
** lacks (\N is U+0085, \x41 is "A"), folds line breaks and knows U+0085,
** U+2028 and U+2029 as line breaks. Within JSON's escapes and without raw
** control characters or breaks, both read the same string. */
static const char *npm_not_json(const char *z, size_t n, size_t i){
  const unsigned char *u = (const unsigned char *)z;
  for(i++; i<n && u[i]!='"'; i++){
    if( u[i]=='\\' ){
      if( i+1>=n || strchr("\"\\/bfnrtu", u[i+1])==NULL ){
        return "has an escape that JSON does not have";
      }
      i++;
    }else if( u[i]<0x20 ){
      return "has a raw control character or line break (write it as an "
             "escape such as \\n)";
    }else if( (u[i]==0xC2 && i+1<n && u[i+1]==0x85)
              || (u[i]==0xE2 && i+2<n && u[i+1]==0x80
                  && (u[i+2]==0xA8 || u[i+2]==0xA9)) ){
      return "has a raw U+0085, U+2028 or U+2029, which the YAML reader "
             "folds (write it as \\u0085, \\u2028 or \\u2029)";
    }
  }
  return NULL;
}

/* The text of node if it is a JSON string (a double-quoted scalar that
** reads as JavaScript reads it); NULL, with *pzWhy set when it is quoted
** but not JSON. */
static const char *npm_string(npm_reader *r, const yaml_node_t *node,
                              size_t *pn, const char **pzWhy){
  *pzWhy = NULL;
  if( node==NULL || node->type!=YAML_SCALAR_NODE
      || node->data.scalar.style!=YAML_DOUBLE_QUOTED_SCALAR_STYLE ){
    return NULL;
  }
  *pzWhy = npm_not_json(r->z, r->n,
                        config_yaml_offset(r->z, r->n, &r->cursor, node));
  return *pzWhy ? NULL : config_yaml_scalar(node, pn);
}

/* Server node (a JSON string) of weight value (NULL: 1) into r's pool. */
static void npm_server(npm_reader *r, const yaml_node_t *node,
                       const yaml_node_t *value){
  config_file *f = r->f;
  config_pool *p = r->p;
  int line = config_yaml_line(node);
  size_t n;
  const char *zWhy;
  const char *z = npm_string(r, node, &n, &zWhy);
  if( z==NULL ){
    if( zWhy ){
      config_refuse(f, p, "line %d: a server string %s", line, zWhy);
    }else{
      config_refuse(f, p, "line %d: a server is not a JSON string "
                    "\"host:port\" (objects in an array are not read)", line);
    }
    return;
  }
  int nShow = (int)(n>100 ? 100 : n);
  if( n==0 || n>RING_MAX_NAME || memchr(z, 0, n) ){
    config_refuse(f, p, "line %d: a server name of %zu bytes", line, n);
    return;
  }
  if( value && npm_array_index(z, n) ){
    config_refuse(f, p, "line %d: server '%.*s' is an array index, which "
                  "JavaScript's Object.keys lists before the other servers "
                  "(in numeric order): give it a name", line, nShow, z);
    return;
  }
  double w = 1.0;
  if( value && value->type==YAML_MAPPING_NODE ){
    const yaml_node_t *weight = NULL;
    for(yaml_node_pair_t *pr=value->data.mapping.pairs.start;
        pr<value->data.mapping.pairs.top; pr++){
      const yaml_node_t *k = yaml_document_get_node(r->d, pr->key);
      size_t nk;
      const char *zk = npm_string(r, k, &nk, &zWhy);
      if( zk && nk==6 && memcmp(zk, "weight", 6)==0 ){
        weight = yaml_document_get_node(r->d, pr->value);
      }else if( zWhy ){
        config_refuse(f, p, "line %d: server '%.*s': a key %s",
                      config_yaml_line(k), nShow, z, zWhy);
        return;
      }else{
        config_refuse(f, p, "line %d: server '%.*s': only \"weight\" is "
                      "read from its object (a \"vnodes\" count replaces "
                      "what the weights give it, which chash does not "
                      "model)", config_yaml_line(k), nShow, z);
        return;
      }
    }
    value = weight;
  }
  if( value ){
    size_t nw = 0;
    const char *zw = value->type==YAML_SCALAR_NODE
                     && value->data.scalar.style==YAML_PLAIN_SCALAR_STYLE
                     ? config_yaml_scalar(value, &nw) : NULL;
    char zNum[64];
    if( zw && npm_json_number(zw, nw) && nw<sizeof(zNum) ){
      memcpy(zNum, zw, nw);
      zNum[nw] = 0;
      w = strtod(zNum, NULL);
    }else{
      w = -1.0;
    }
    if( !(w>0.0 && w<=1e15) ){
      config_refuse(f, p, "line %d: server '%.*s': the weight is not a "
                    "number above 0 and at most 1e15 (hashring would make "
                    "0 and what is not a number weight 1: write 1, or "
                    "remove the server)", config_yaml_line(value), nShow, z);
      return;
    }
  }
  config_node_add(f, p, z, n, w, line);
}

static void npm_read(const char *z, size_t n, config_file *f){
  yaml_document_t d;
  if( config_yaml_load(z, n, &d, f) ) return;
  yaml_node_t *root = yaml_document_get_root_node(&d);
  config_pool *p = config_pool_add(f, "servers", 7,
                                   root ? config_yaml_line(root) : 1);
  if( p==NULL || root==NULL ){
    yaml_document_delete(&d);
    return;
  }
  p->algorithm = "hashring";
  npm_reader r = { .z = z, .n = n, .d = &d, .f = f, .p = p };
  if( root->type==YAML_SEQUENCE_NODE
      && root->data.sequence.style==YAML_FLOW_SEQUENCE_STYLE ){
    for(yaml_node_item_t *it=root->data.sequence.items.start;
        it<root->data.sequence.items.top && !p->refusal && !f->nomem; it++){
      npm_server(&r, yaml_document_get_node(&d, *it), NULL);
    }
  }else if( root->type==YAML_MAPPING_NODE
            && root->data.mapping.style==YAML_FLOW_MAPPING_STYLE ){
    for(yaml_node_pair_t *pr=root->data.mapping.pairs.start;
        pr<root->data.mapping.pairs.top && !p->refusal && !f->nomem; pr++){
      npm_server(&r, yaml_document_get_node(&d, pr->key),
                 yaml_document_get_node(&d, pr->value));
    }
  }else if( root->type==YAML_SCALAR_NODE ){
    npm_server(&r, root, NULL);
  }else{
    config_refuse(f, p, "line %d: the text is not a JSON array of servers, "
                  "an object {server: weight} or one server string",
                  config_yaml_line(root));
  }
  yaml_document_delete(&d);
}

static int npm_write(const config_pool *p, char **pzOut, char *zErr,
                     size_t nErr){
  int bWeights = 0;
  for(uint32_t k=0; k<p->n_nodes; k++){
    const char *zNode = p->nodes[k].name;
    if( p->nodes[k].weight!=1.0 ) bWeights = 1;
    if( npm_array_index(zNode, strlen(zNode)) ){
      snprintf(zErr, nErr, "node '%.100s' is an array index, which "
               "JavaScript would list before the other servers", zNode);
      return CONFIG_ERROR;
    }
    if( !(p->nodes[k].weight<=1e15) ){
      snprintf(zErr, nErr, "node %.100s has weight %g: at most 1e15 is "
               "written", zNode, p->nodes[k].weight);
      return CONFIG_ERROR;
    }
  }
  config_buf b = {0};
  config_buf_append(&b, bWeights ? "{" : "[", 1);
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    if( k ) config_buf_append(&b, ", ", 2);
    size_t nKey = config_buf_json_string(&b, p->nodes[k].name);
    if( bWeights && nKey>CONFIG_YAML_MAX_KEY ){
      snprintf(zErr, nErr, "node %.100s is written as a key of %zu "
               "characters (escapes included); this format is read as "
               "YAML, whose keys are at most %d", p->nodes[k].name, nKey,
               CONFIG_YAML_MAX_KEY);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    if( bWeights ){
      long long w;
      if( config_whole_weight(p->nodes[k].weight, &w) ){
        config_buf_printf(&b, ": %lld", w);
      }else{
        config_buf_printf(&b, ": %.17g", p->nodes[k].weight);
      }
    }
  }
  config_buf_append(&b, bWeights ? "}\n" : "]\n", 2);
  return config_buf_finish(&b, pzOut);
}

static const char *const npm_hashring_write_options[] = { NULL };

const config_format config_hashring = {
  .name = "hashring",
  .algorithm = "hashring",
  .writes = "an npm hashring server list",
  .write_options = npm_hashring_write_options,
  .pool_noun = "server list",
  .read = npm_read,
  .write = npm_write,
};

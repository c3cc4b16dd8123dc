/*
** haproxy.c: format haproxy, HAProxy's configuration, read for its
** `backend` and `listen` sections and written as one backend.
**
** A line is words separated by blanks; `#` starts a comment; a word may
** be quoted, "..." or '...', and `\` escapes the next character outside
** single quotes (as HAProxy's parse_line). A line whose first word is a
** section keyword (global, defaults, frontend, backend, listen, ...) starts
** that section. A `$` outside single quotes (an environment variable) is
** refused where it matters: chash cannot know its value.
**
** Each `backend NAME` and `listen NAME` is a pool of algorithm haproxy: its
** `server NAME ADDRESS [weight N] ...` lines are the nodes, named by the
** server's name, in their order (HAProxy numbers them 1, 2, ... in that
** order, and the numbers place them). `balance` and `hash-type` come from
** the section, else from the last `defaults` before it, and so does
** `default-server weight`. `hash-type consistent [FUNCTION] [avalanche]`
** gives the options: no function is hash=sdbm, avalanche=1; a function
** (sdbm, djb2, wt6, crc32 = chash's crc32a) is avalanche=0 unless the word
** avalanche follows. Refused, naming the line: a `balance` that does not
** hash (roundrobin, static-rr, leastconn, first, random) or none at all,
** `hash-type map-based` or none at all (HAProxy's default is map-based), a
** server marked `backup` or `disabled`, a server `id` (chash numbers
** servers by their order only), weight 0, `server-template`,
** `hash-balance-factor`, `hash-key` other than id, `defaults` by name.
**
** Written: `backend NAME`, `balance uri`, the hash-type line, and a
** `server NAME NAME weight W init-addr none` line per node: the
** ring holds no addresses, so each server's address is its name, left
** unresolved (init-addr none: HAProxy starts, and the server takes no
** traffic until it has an address); put yours in.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define HAPROXY_MAX_ARGS 64

typedef struct haproxy_line {
  char *args[HAPROXY_MAX_ARGS];
  int n_args;
  int has_var;                          /* a $ outside single quotes */
  int line;
} haproxy_line;

/* What a section or a defaults section sets. */
typedef struct haproxy_settings {
  char balance[64];
  int balance_line;
  char hash_type[128];                  /* the hash-type line's words */
  int hash_type_line;
  long weight;                          /* default-server weight, or -1 */
  int weight_line;
} haproxy_settings;

static void haproxy_line_clear(haproxy_line *l){
  for(int i=0; i<l->n_args; i++) ring_dealloc(l->args[i]);
  l->n_args = 0;
  l->has_var = 0;
}

/* Split the line z (n bytes, without its newline) into words. Returns 0,
** or 1 on a fault (set on f). */
static int haproxy_split(const char *z, size_t n, int line, haproxy_line *l,
                         config_file *f){
  size_t i = 0;
  l->line = line;
  for(;;){
    while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\r') ) i++;
    if( i>=n || z[i]=='#' ) return 0;
    config_buf b = {0};
    char q = 0;
    while( i<n ){
      char c = z[i];
      if( q==0 && (c==' ' || c=='\t' || c=='\r' || c=='#') ) break;
      i++;
      if( c==q ){ q = 0; continue; }
      if( q==0 && (c=='"' || c=='\'') ){ q = c; continue; }
      if( c=='$' && q!='\'' ) l->has_var = 1;
      if( c=='\\' && q!='\'' && i<n ){
        c = z[i++];
        if( c=='t' ) c = '\t';
        else if( c=='n' ) c = '\n';
        else if( c=='r' ) c = '\r';
      }
      config_buf_append(&b, &c, 1);
      if( b.n>CONFIG_MAX_WORD ){
        ring_dealloc(b.z);
        config_fail(f, "line %d: a word longer than %d bytes", line,
                    CONFIG_MAX_WORD);
        return 1;
      }
    }
    if( q ){
      ring_dealloc(b.z);
      config_fail(f, "line %d: a quoted word that does not end", line);
      return 1;
    }
    if( b.z==NULL ) b.z = config_strndup("", 0);
    if( b.nomem || b.z==NULL ){
      ring_dealloc(b.z);
      f->nomem = 1;
      return 1;
    }
    if( l->n_args>=HAPROXY_MAX_ARGS ){
      ring_dealloc(b.z);
      config_fail(f, "line %d: more than %d words", line, HAPROXY_MAX_ARGS);
      return 1;
    }
    l->args[l->n_args++] = b.z;
  }
}

static int haproxy_is_section(const char *z){
  static const char *const azSection[] = {
    "global", "defaults", "frontend", "backend", "listen", "userlist",
    "peers", "resolvers", "mailers", "program", "http-errors", "ring",
    "cache", "traces", "log-forward", "crt-store", NULL
  };
  for(int i=0; azSection[i]; i++){
    if( strcmp(z, azSection[i])==0 ) return 1;
  }
  return 0;
}

/* The words of l from i on, joined by spaces, into z (n bytes). */
static void haproxy_join(const haproxy_line *l, int i, char *z, size_t n){
  size_t k = 0;
  z[0] = 0;
  for(; i<l->n_args && k<n; i++){
    int w = snprintf(z+k, n-k, "%s%s", k ? " " : "", l->args[i]);
    if( w<0 ) break;
    k += (size_t)w;
  }
}

/* A line of a defaults, backend or listen section that sets one of s. */
static int haproxy_setting(const haproxy_line *l, haproxy_settings *s){
  const char *zKey = l->args[0];
  if( strcmp(zKey, "balance")==0 ){
    haproxy_join(l, 1, s->balance, sizeof(s->balance));
    s->balance_line = l->line;
    return 1;
  }
  if( strcmp(zKey, "hash-type")==0 ){
    haproxy_join(l, 1, s->hash_type, sizeof(s->hash_type));
    s->hash_type_line = l->line;
    return 1;
  }
  if( strcmp(zKey, "default-server")==0 ){
    for(int i=1; i+1<l->n_args; i++){
      if( strcmp(l->args[i], "weight")==0 ){
        s->weight = config_number(l->args[i+1], strlen(l->args[i+1]));
        s->weight_line = l->line;
      }
    }
    return 1;
  }
  return 0;
}

/* A server line of pool p; zero weight means the default one. */
static void haproxy_server(const haproxy_line *l, const haproxy_settings *s,
                           config_pool *p, config_file *f){
  if( l->n_args<3 ){
    config_refuse(f, p, "line %d: backend %s: a server line needs a name "
                  "and an address", l->line, p->name);
    return;
  }
  const char *zName = l->args[1];
  if( l->has_var ){
    config_refuse(f, p, "line %d: backend %s: server %s uses an environment "
                  "variable ($), whose value chash cannot know", l->line,
                  p->name, zName);
    return;
  }
  long weight = s->weight>=0 ? s->weight : 1;
  int weightLine = s->weight>=0 ? s->weight_line : l->line;
  for(int i=3; i<l->n_args; i++){
    const char *zArg = l->args[i];
    if( strcmp(zArg, "weight")==0 && i+1<l->n_args ){
      weight = config_number(l->args[i+1], strlen(l->args[i+1]));
      i++;
      weightLine = l->line;
    }else if( strcmp(zArg, "backup")==0 || strcmp(zArg, "disabled")==0 ){
      config_refuse(f, p, "line %d: backend %s: server %s is marked %s, "
                    "which chash does not reproduce (HAProxy keeps it off "
                    "the ring while others are up); remove the line to "
                    "place keys as HAProxy does", l->line, p->name, zName,
                    zArg);
      return;
    }else if( strcmp(zArg, "id")==0 ){
      config_refuse(f, p, "line %d: backend %s: server %s has an explicit "
                    "id, which chash does not model (it numbers servers 1, "
                    "2, ... in the order of their lines); remove the id "
                    "keywords", l->line, p->name, zName);
      return;
    }
  }
  if( weight==0 ){
    config_refuse(f, p, "line %d: backend %s: server %s has weight 0 (no "
                  "traffic), which chash does not model; remove the line "
                  "for the ring HAProxy then has (the servers after it are "
                  "numbered one lower, which moves their keys)", weightLine,
                  p->name, zName);
    return;
  }
  if( weight<1 || weight>256 ){
    config_refuse(f, p, "line %d: backend %s: server %s: the weight is a "
                  "whole number from 0 to 256", weightLine, p->name, zName);
    return;
  }
  size_t nName = strlen(zName);
  if( nName==0 || nName>RING_MAX_NAME ){
    config_refuse(f, p, "line %d: backend %s: a server name of %zu bytes",
                  l->line, p->name, nName);
    return;
  }
  config_node_add(f, p, zName, nName, (double)weight, l->line);
}

/* The options of pool p from its balance and hash-type, or its refusal. */
static void haproxy_finish(config_file *f, config_pool *p,
                           const haproxy_settings *s){
  static const char *const azNoHash[] = {
    "roundrobin", "static-rr", "leastconn", "first", "random", NULL
  };
  char zFirst[64];
  sscanf(s->balance, "%63s", zFirst);
  if( s->balance[0]==0 ){
    config_refuse(f, p, "line %d: backend %s has no balance line (so it "
                  "balances round robin, which places no key)", p->line,
                  p->name);
    return;
  }
  for(int i=0; azNoHash[i]; i++){
    if( strncmp(zFirst, azNoHash[i], strlen(azNoHash[i]))==0 ){
      config_refuse(f, p, "line %d: backend %s: balance %s does not hash "
                    "keys; chash reproduces hash-type consistent with "
                    "balance uri, url_param, hdr(), source, hash, ...",
                    s->balance_line, p->name, s->balance);
      return;
    }
  }
  char zMethod[32] = "", zFunc[32] = "", zMod[32] = "", zMore[32] = "";
  int n = sscanf(s->hash_type, "%31s %31s %31s %31s", zMethod, zFunc, zMod,
                 zMore);
  int line = s->hash_type_line ? s->hash_type_line : p->line;
  if( n<1 || strcmp(zMethod, "map-based")==0 ){
    config_refuse(f, p, "line %d: backend %s hashes map-based%s, which chash "
                  "does not reproduce: write hash-type consistent (which "
                  "moves most keys once)", line, p->name,
                  n<1 ? " (HAProxy's default without a hash-type line)" : "");
    return;
  }
  if( strcmp(zMethod, "consistent")!=0 || n>3 ){
    config_refuse(f, p, "line %d: backend %s: hash-type %s: chash reads "
                  "hash-type consistent [sdbm|djb2|wt6|crc32] [avalanche]",
                  line, p->name, s->hash_type);
    return;
  }
  static const char *const azFunc[][2] = {
    { "sdbm", "sdbm" }, { "djb2", "djb2" }, { "wt6", "wt6" },
    { "crc32", "crc32a" }, { NULL, NULL }
  };
  const char *zHash = "sdbm";
  int avalanche = 1;
  if( n>=2 ){
    int i = 0;
    while( azFunc[i][0] && strcmp(azFunc[i][0], zFunc)!=0 ) i++;
    if( azFunc[i][0]==NULL ){
      config_refuse(f, p, "line %d: backend %s: hash function %s: chash "
                    "reproduces sdbm, djb2, wt6 and crc32", line, p->name,
                    zFunc);
      return;
    }
    zHash = azFunc[i][1];
    avalanche = 0;
    if( n==3 ){
      if( strcmp(zMod, "avalanche")!=0 ){
        config_refuse(f, p, "line %d: backend %s: unknown hash-type "
                      "modifier %s (HAProxy has avalanche)", line, p->name,
                      zMod);
        return;
      }
      avalanche = 1;
    }
  }
  config_option_set(p, "hash", zHash, 0);
  config_option_set(p, "avalanche", avalanche ? "1" : "0", 1);
}

static void haproxy_read(const char *z, size_t n, config_file *f){
  haproxy_line l;
  memset(&l, 0, sizeof(l));
  haproxy_settings defaults = { .weight = -1 }, section = { .weight = -1 };
  config_pool *p = NULL;                 /* the backend being read */
  size_t i = 0;
  for(int line=1; i<n && !f->error[0] && !f->nomem; line++){
    size_t e = i;
    while( e<n && z[e]!='\n' ) e++;
    haproxy_line_clear(&l);
    if( haproxy_split(z+i, e-i, line, &l, f) ) break;
    i = e+1;
    if( l.n_args==0 ) continue;
    const char *zKey = l.args[0];
    if( haproxy_is_section(zKey) ){
      if( p ) haproxy_finish(f, p, &section);
      p = NULL;
      int bDefaults = strcmp(zKey, "defaults")==0;
      if( bDefaults ){
        if( l.n_args>1 ){
          config_fail(f, "line %d: defaults %s: named defaults sections are "
                      "not read by chash", line, l.args[1]);
          break;
        }
        memset(&defaults, 0, sizeof(defaults));
        defaults.weight = -1;
      }
      if( strcmp(zKey, "backend")==0 || strcmp(zKey, "listen")==0 ){
        if( l.n_args<2 ){
          config_fail(f, "line %d: %s without a name", line, zKey);
          break;
        }
        p = config_pool_add(f, l.args[1], strlen(l.args[1]), line);
        if( p==NULL ) break;
        p->algorithm = "haproxy";
        section = defaults;
        if( l.n_args>2 ){
          config_refuse(f, p, "line %d: %s %s takes its defaults from a "
                        "named section, which chash does not read", line,
                        zKey, p->name);
        }
      }
      continue;
    }
    if( p ){
      if( haproxy_setting(&l, &section) ) continue;
      if( strcmp(zKey, "server")==0 ){
        haproxy_server(&l, &section, p, f);
      }else if( strcmp(zKey, "server-template")==0 ){
        config_refuse(f, p, "line %d: backend %s: server-template makes "
                      "servers chash cannot list; write them one per line",
                      line, p->name);
      }else if( strcmp(zKey, "hash-balance-factor")==0
             && !(l.n_args==2 && strcmp(l.args[1], "0")==0) ){
        config_refuse(f, p, "line %d: backend %s: hash-balance-factor "
                      "(bounded loads) depends on live connection counts, "
                      "which chash does not model", line, p->name);
      }else if( strcmp(zKey, "hash-key")==0
             && !(l.n_args==2 && strcmp(l.args[1], "id")==0) ){
        config_refuse(f, p, "line %d: backend %s: hash-key %s: chash places "
                      "servers by id (HAProxy's default)", line, p->name,
                      l.n_args>1 ? l.args[1] : "");
      }
    }else if( strcmp(l.args[0], "include")==0 ){
      config_fail(f, "line %d: include: chash reads one text", line);
    }else{
      /* a defaults line, or one of a section chash does not read */
      haproxy_setting(&l, &defaults);
    }
  }
  if( p && !f->error[0] && !f->nomem ) haproxy_finish(f, p, &section);
  haproxy_line_clear(&l);
}

/* ------------------------------------------------------------ writing */

/* HAProxy's characters of a server or backend name. */
static int haproxy_name_ok(const char *z){
  if( *z==0 ) return 0;
  for(; *z; z++){
    char c = *z;
    if( !((c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
          || c=='-' || c=='_' || c=='.' || c==':') ) return 0;
  }
  return 1;
}

static int haproxy_write(const config_pool *p, char **pzOut, char *zErr,
                         size_t nErr){
  if( !haproxy_name_ok(p->name) ){
    snprintf(zErr, nErr, "'%.100s' is not a HAProxy backend name (letters, "
             "digits, - _ . :)", p->name);
    return CONFIG_ERROR;
  }
  const char *zHash = config_option_get(p, "hash");
  const char *zAvalanche = config_option_get(p, "avalanche");
  if( zHash==NULL ) zHash = "sdbm";
  if( strcmp(zHash, "crc32a")==0 ) zHash = "crc32";
  int avalanche = zAvalanche==NULL || strcmp(zAvalanche, "1")==0;
  config_buf b = {0};
  config_buf_printf(&b, "backend %s\n    balance uri\n    hash-type "
                    "consistent %s%s\n", p->name, zHash,
                    avalanche ? " avalanche" : "");
  for(uint32_t i=0; i<p->n_nodes && !b.nomem; i++){
    long long w = 0;
    config_whole_weight(p->nodes[i].weight, &w);
    if( !haproxy_name_ok(p->nodes[i].name) ){
      snprintf(zErr, nErr, "'%.100s' is not a HAProxy server name (letters, "
               "digits, - _ . :)", p->nodes[i].name);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    config_buf_printf(&b, "    server %s %s weight %lld init-addr none\n",
                      p->nodes[i].name, p->nodes[i].name, w);
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const haproxy_write_options[] = { "hash", "avalanche", NULL };

const config_format config_haproxy = {
  .name = "haproxy",
  .algorithm = "haproxy",
  .writes = "a HAProxy backend",
  .write_options = haproxy_write_options,
  .pool_noun = "backend",
  .read = haproxy_read,
  .write = haproxy_write,
};

/*
** nginx.c: format nginx, nginx's configuration grammar, read for its
** `upstream` blocks and written as one.
**
** The grammar is nginx's own (ngx_conf_file.c): a directive is words up
** to `;`, or up to `{` and then a block that `}` ends; words are separated
** by blanks; a word that starts with `"` or `'` runs to the same quote;
** in any word `\` escapes the next character (nginx_unescape); `#` at the
** start of a word comments out the rest of the line; `${name}` is one
** word.
**
** Each `upstream NAME { ... }` block, at any depth (http or stream), is a
** pool of algorithm nginx: its `server ADDRESS [weight=N] ...;` lines are
** the nodes, named by the address exactly as written, in their order. A
** pool is refused (with the line) unless it has `hash KEY consistent;`
** (without `consistent` nginx hashes modulo the servers), and for a server
** marked `backup` or `down`, `weight=0` or a weight that is not a whole
** number, a `resolve` or `service=` server (its addresses come from DNS),
** and another balancing directive (`ip_hash`, `least_conn`, `random`,
** ...). An `include` anywhere is a fault of the whole text: chash reads one
** text. The key expression (`$request_uri`) is not part of the ring: give
** ch_locate the value nginx hashes.
**
** Written: `upstream NAME { hash $request_uri consistent; server ADDRESS
** weight=W; ... }`, which nginx takes inside an http (or stream) block.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define NGINX_MAX_ARGS 64               /* words of one directive */

typedef struct nginx_word {
  char *z;                              /* unquoted, NUL-terminated */
  size_t n;
  int line;
} nginx_word;

typedef struct nginx_reader {
  const char *z;
  size_t n, i;
  int line;
  config_file *f;
  nginx_word args[NGINX_MAX_ARGS];
  int n_args;
  char end;                             /* what ended the directive: ; { }
                                        ** or 0 at the end of the text */
} nginx_reader;

static void nginx_args_clear(nginx_reader *r){
  for(int i=0; i<r->n_args; i++) ring_dealloc(r->args[i].z);
  r->n_args = 0;
}

static int nginx_blank(char c){
  return c==' ' || c=='\t' || c=='\r' || c=='\n';
}

/* nginx's escapes, in quoted and bare words alike: \" \' \\ stand for
** the character, \t \r \n for those controls; any other \ stays. */
static void nginx_unescape(config_buf *b, char e){
  switch( e ){
    case '"': case '\'': case '\\': config_buf_append(b, &e, 1); break;
    case 't': config_buf_append(b, "\t", 1); break;
    case 'r': config_buf_append(b, "\r", 1); break;
    case 'n': config_buf_append(b, "\n", 1); break;
    default: config_buf_append(b, "\\", 1); config_buf_append(b, &e, 1);
  }
}

/* Read one word starting at r->i into r->args. Returns 0, or 1 on a fault
** (set on r->f). A bare word ends at a blank, ';' or a '{' that does not
** follow '$' (so ${name} is one word); '}' and '#' inside it are its own. */
static int nginx_word_read(nginx_reader *r){
  config_buf b = {0};
  int line = r->line;
  char q = r->z[r->i];
  int bQuoted = q=='"' || q=='\'';
  if( bQuoted ) r->i++;
  for(;;){
    if( r->i>=r->n ){
      if( !bQuoted ) break;
      config_fail(r->f, "line %d: a quoted word that does not end", line);
      goto fail;
    }
    char c = r->z[r->i];
    if( bQuoted && c==q ){ r->i++; break; }
    if( !bQuoted && (nginx_blank(c) || c==';'
                     || (c=='{' && !(b.n>0 && b.z[b.n-1]=='$'))) ) break;
    r->i++;
    if( c=='\n' ) r->line++;
    if( c=='\\' && r->i<r->n ){
      char e = r->z[r->i++];
      if( e=='\n' ) r->line++;
      nginx_unescape(&b, e);
    }else{
      config_buf_append(&b, &c, 1);
    }
    if( b.n>CONFIG_MAX_WORD ){
      config_fail(r->f, "line %d: a word longer than %d bytes", line,
                  CONFIG_MAX_WORD);
      goto fail;
    }
  }
  if( bQuoted && r->i<r->n && !nginx_blank(r->z[r->i]) && r->z[r->i]!=';'
   && r->z[r->i]!='{' ){
    config_fail(r->f, "line %d: unexpected '%c' after a quoted word",
                r->line, r->z[r->i]);
    goto fail;
  }
  if( b.nomem ){ r->f->nomem = 1; goto fail; }
  if( r->n_args>=NGINX_MAX_ARGS ){
    config_fail(r->f, "line %d: a directive of more than %d words", line,
                NGINX_MAX_ARGS);
    goto fail;
  }
  if( b.z==NULL && (b.z = config_strndup("", 0))==NULL ){
    r->f->nomem = 1;
    return 1;
  }
  r->args[r->n_args].z = b.z;
  r->args[r->n_args].n = b.n;
  r->args[r->n_args].line = line;
  r->n_args++;
  return 0;
fail:
  ring_dealloc(b.z);
  return 1;
}

/* Read the next directive's words into r->args and what ends it into
** r->end. Returns 0, or 1 on a fault. */
static int nginx_directive_read(nginx_reader *r){
  nginx_args_clear(r);
  r->end = 0;
  while( r->i<r->n ){
    char c = r->z[r->i];
    if( nginx_blank(c) ){
      if( c=='\n' ) r->line++;
      r->i++;
    }else if( c=='#' ){
      while( r->i<r->n && r->z[r->i]!='\n' ) r->i++;
    }else if( c==';' || c=='{' || c=='}' ){
      r->i++;
      r->end = c;
      return 0;
    }else if( nginx_word_read(r) ){
      return 1;
    }
  }
  return 0;
}

/* Does word w equal z? */
static int nginx_is(const nginx_word *w, const char *z){
  return w->n==strlen(z) && memcmp(w->z, z, w->n)==0;
}

/* A server line of upstream p: `server ADDRESS [parameters]`. */
static void nginx_server(nginx_reader *r, config_pool *p){
  config_file *f = r->f;
  int line = r->args[0].line;
  if( r->n_args<2 ){
    config_refuse(f, p, "line %d: upstream %s: a server line without an "
                  "address", line, p->name);
    return;
  }
  const char *zAddr = r->args[1].z;
  long weight = 1;
  for(int i=2; i<r->n_args; i++){
    const char *zArg = r->args[i].z;
    if( strncmp(zArg, "weight=", 7)==0 ){
      weight = config_number(zArg+7, strlen(zArg+7));
      if( weight<1 ){
        config_refuse(f, p, "line %d: upstream %s: server %s has %s: nginx "
                      "takes a whole weight from 1", line, p->name, zAddr,
                      zArg);
        return;
      }
    }else if( strcmp(zArg, "backup")==0 ){
      config_refuse(f, p, "line %d: upstream %s: server %s is marked backup: "
                    "nginx's hash takes no backup servers; remove the line "
                    "(or the word backup, to place keys as if it were a "
                    "server like the others)", line, p->name, zAddr);
      return;
    }else if( strcmp(zArg, "down")==0 ){
      config_refuse(f, p, "line %d: upstream %s: server %s is marked down, "
                    "which chash does not reproduce (nginx keeps its points "
                    "and passes its keys on to the next server); remove the "
                    "word down to place keys as nginx does while it is up, "
                    "or the line for a ring without it", line, p->name,
                    zAddr);
      return;
    }else if( strcmp(zArg, "resolve")==0 || strncmp(zArg, "service=", 8)==0 ){
      config_refuse(f, p, "line %d: upstream %s: server %s takes its "
                    "addresses from DNS (%s), which chash cannot read; list "
                    "the servers one per line", line, p->name, zAddr, zArg);
      return;
    }else if( strncmp(zArg, "max_fails=", 10)!=0
           && strncmp(zArg, "fail_timeout=", 13)!=0
           && strncmp(zArg, "max_conns=", 10)!=0
           && strncmp(zArg, "slow_start=", 11)!=0 ){
      config_refuse(f, p, "line %d: upstream %s: server %s: unknown "
                    "parameter %s", line, p->name, zAddr, zArg);
      return;
    }
  }
  if( r->args[1].n>RING_MAX_NAME ){
    config_refuse(f, p, "line %d: upstream %s: a server address longer than "
                  "%d bytes", line, p->name, RING_MAX_NAME);
    return;
  }
  config_node_add(f, p, zAddr, r->args[1].n, (double)weight, line);
}

/* The directives of `upstream NAME { ... }`, up to its `}`. */
static void nginx_upstream(nginx_reader *r, config_pool *p){
  config_file *f = r->f;
  int hashLine = 0;
  for(;;){
    if( nginx_directive_read(r) ) return;
    if( r->end=='}' && r->n_args==0 ) break;
    if( r->end==0 ){
      config_fail(f, "line %d: upstream %s: no '}' ends the block that "
                  "starts at line %d", r->line, p->name, p->line);
      return;
    }
    if( r->n_args==0 ){
      config_fail(f, "line %d: unexpected '%c'", r->line, r->end);
      return;
    }
    const nginx_word *d = &r->args[0];
    if( r->end!=';' ){
      config_fail(f, "line %d: directive %s in upstream %s is not ended by "
                  "';'", d->line, d->z, p->name);
      return;
    }
    if( nginx_is(d, "include") ){
      config_fail(f, "line %d: include: chash reads one text; give it the "
                  "included file's text in its place", d->line);
      return;
    }
    if( nginx_is(d, "server") ){
      nginx_server(r, p);
    }else if( nginx_is(d, "hash") ){
      if( hashLine ){
        config_refuse(f, p, "line %d: upstream %s: a second hash directive "
                      "(the first is at line %d)", d->line, p->name,
                      hashLine);
      }else if( r->n_args==3 && nginx_is(&r->args[2], "consistent") ){
        hashLine = d->line;
      }else if( r->n_args==2 ){
        hashLine = d->line;
        config_refuse(f, p, "line %d: upstream %s: hash %s; without "
                      "consistent is nginx's modulo hash, which chash does "
                      "not reproduce (write hash %s consistent; to use the "
                      "ring, which moves most keys once)", d->line, p->name,
                      r->args[1].z, r->args[1].z);
      }else{
        config_refuse(f, p, "line %d: upstream %s: hash takes a key and "
                      "the word consistent", d->line, p->name);
      }
    }else if( nginx_is(d, "ip_hash") || nginx_is(d, "least_conn")
           || nginx_is(d, "least_time") || nginx_is(d, "random")
           || nginx_is(d, "sticky") ){
      config_refuse(f, p, "line %d: upstream %s balances with %s, not with "
                    "hash ... consistent, which is what chash reproduces",
                    d->line, p->name, d->z);
    }
    /* keepalive, zone, ntlm, queue, ...: no part in placement */
  }
  if( !hashLine ){
    config_refuse(f, p, "line %d: upstream %s has no hash KEY consistent; "
                  "(it balances round robin, which places no key)",
                  p->line, p->name);
  }
}

/* Directives up to the end of a block (depth > 0) or of the text. */
static void nginx_block(nginx_reader *r, int depth){
  config_file *f = r->f;
  if( depth>CONFIG_MAX_DEPTH ){
    config_fail(f, "line %d: blocks nested more than %d deep", r->line,
                CONFIG_MAX_DEPTH);
    return;
  }
  for(;;){
    if( nginx_directive_read(r) || f->error[0] || f->nomem ) return;
    if( r->end==0 ){
      if( r->n_args ){
        config_fail(f, "line %d: directive %s is not ended by ';'",
                    r->args[0].line, r->args[0].z);
      }else if( depth>0 ){
        config_fail(f, "line %d: a block is not closed by '}'", r->line);
      }
      return;
    }
    if( r->end=='}' ){
      if( r->n_args ){
        config_fail(f, "line %d: directive %s is not ended by ';'",
                    r->args[0].line, r->args[0].z);
      }else if( depth==0 ){
        config_fail(f, "line %d: unexpected '}'", r->line);
      }
      return;
    }
    if( r->n_args==0 ){
      config_fail(f, "line %d: unexpected '%c'", r->line, r->end);
      return;
    }
    const nginx_word *d = &r->args[0];
    if( nginx_is(d, "include") ){
      config_fail(f, "line %d: include: chash reads one text; give it the "
                  "included file's text in its place", d->line);
      return;
    }
    if( r->end=='{' && nginx_is(d, "upstream") ){
      if( r->n_args!=2 ){
        config_fail(f, "line %d: upstream takes one name", d->line);
        return;
      }
      config_pool *p = config_pool_add(f, r->args[1].z, r->args[1].n,
                                       d->line);
      if( p==NULL ) return;
      p->algorithm = "nginx";
      nginx_upstream(r, p);
    }else if( r->end=='{' ){
      nginx_block(r, depth+1);
    }
    if( f->error[0] || f->nomem ) return;
  }
}

static void nginx_read(const char *z, size_t n, config_file *f){
  nginx_reader r;
  memset(&r, 0, sizeof(r));
  r.z = z;
  r.n = n;
  r.line = 1;
  r.f = f;
  nginx_block(&r, 0);
  nginx_args_clear(&r);
}

/* ------------------------------------------------------------ writing */

/* A word as nginx reads it back: bare when it can be, else "quoted". */
static void nginx_word_write(config_buf *b, const char *z){
  int bare = *z!=0 && *z!='"' && *z!='\'' && *z!='#';
  for(const char *p=z; *p && bare; p++){
    if( nginx_blank(*p) || strchr(";{}\\$", *p) ) bare = 0;
  }
  if( bare ){
    config_buf_append(b, z, strlen(z));
    return;
  }
  config_buf_append(b, "\"", 1);
  for(const char *p=z; *p; p++){
    if( *p=='"' || *p=='\\' ) config_buf_append(b, "\\", 1);
    config_buf_append(b, p, 1);
  }
  config_buf_append(b, "\"", 1);
}

static int nginx_write(const config_pool *p, char **pzOut, char *zErr,
                       size_t nErr){
  (void)zErr;
  (void)nErr;
  config_buf b = {0};
  config_buf_append(&b, "upstream ", 9);
  nginx_word_write(&b, p->name);
  config_buf_printf(&b, " {\n    hash $request_uri consistent;\n");
  for(uint32_t i=0; i<p->n_nodes; i++){
    long long w = 0;
    config_whole_weight(p->nodes[i].weight, &w);
    config_buf_append(&b, "    server ", 11);
    nginx_word_write(&b, p->nodes[i].name);
    config_buf_printf(&b, " weight=%lld;\n", w);
  }
  config_buf_append(&b, "}\n", 2);
  return config_buf_finish(&b, pzOut);
}

static const char *const nginx_write_options[] = { NULL };

const config_format config_nginx = {
  .name = "nginx",
  .algorithm = "nginx",
  .writes = "an nginx upstream",
  .write_options = nginx_write_options,
  .pool_noun = "upstream",
  .read = nginx_read,
  .write = nginx_write,
};

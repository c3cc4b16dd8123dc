/*
** redis_cli.c: format redis_cli, a `redis-cli --cluster create` command
** line, read as one pool named "cluster" of algorithm redis_cluster (the
** fresh layout: no slots) whose nodes are the masters redis-cli picks, in
** its order, and written as such a command line (Redis 7.0's redis-cli,
** clusterManagerCommandCreate).
**
** The text is one command, split into words as a shell splits plain
** words: blanks between words, `\` before a line break continues the
** line, `\` quotes the next character, '...' and "..." quote (in "...",
** `\` quotes only $ ` " \ and a line break), `#` at the start of a word
** comments to the end of the line; blank and comment lines are skipped.
** What needs a real shell is refused, naming it: $ and ` (variables,
** substitutions), * ? [ (globs), { (braces), ~ at the start of a word,
** | & ; < > ( ) (operators), a second command.
**
** The words: `redis-cli` (optional, any path), then in any order
** `--cluster create` with the nodes (host:port[@cport], the run of words
** after it that do not start with '-', or the first such run after
** `--cluster create` when an option comes first, as redis-cli takes them),
** `--cluster-replicas N` (the last one counts) and options that change no
** placement (`--cluster-yes`, authentication, TLS, timeouts), which are
** skipped. Anything else is refused, naming its line: another option or
** subcommand, a word redis-cli would ignore or send as a command, a node
** that is not host:port, a port outside 1..65535, a node listed twice,
** fewer than 3 masters (redis-cli's own refusal).
**
** Masters: redis-cli groups the nodes by host (the text before the last
** ':', compared as text) and takes them round robin: the first node of
** every host, hosts in order of first appearance, then the second node of
** every host that has two, and so on. The first nodes/(N+1) of that order
** are the masters, master 0 first; the others become replicas, which own
** no slot and are not in the ring. A node is named `host:port`, the port
** as a number (no leading zeros), without the bus port.
**
** Written: `redis-cli --cluster create A B C ... --cluster-replicas 0` on
** one line, the nodes in join order. Refused: a ring with slots (a live
** map: format redis_nodes writes it), a node that is not host:port, fewer
** than 3 nodes, and a join order redis-cli's round robin would reorder.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define CLI_MIN_MASTERS 3                    /* redis-cli refuses fewer */
#define CLI_MAX_HOST 255
#define CLI_SLOTS_COLUMN 0                   /* redis_cluster's column slots */

/* One word of the command line, unquoted. */
typedef struct cli_word {
  const char *z;                             /* in the reader's word space */
  size_t n;
  int line;                                  /* where it starts, from 1 */
} cli_word;

/* A node: its name host:port and the length of its host. */
typedef struct cli_node {
  const char *zName;
  size_t nHost;
  uint32_t idx;                              /* in the text's order */
  uint32_t rank;                             /* among its host's nodes */
  uint32_t host_first;                       /* idx of its host's first */
  int line;
} cli_node;

/* Options that change no placement: those taking a value, then flags. */
static const char *const cli_inert_value[] = {
  "-a", "--user", "--pass", "--cacert", "--cacertdir", "--cert", "--key",
  "--sni", "--tls-ciphers", "--tls-ciphersuites", "--cluster-timeout",
  "--cluster-pipeline", NULL
};
static const char *const cli_inert_flag[] = {
  "--cluster-yes", "--askpass", "--no-auth-warning", "--tls", "--insecure",
  NULL
};

static int cli_is(const cli_word *w, const char *z){
  return w->n==strlen(z) && memcmp(w->z, z, w->n)==0;
}

static int cli_in(const cli_word *w, const char *const *az){
  for(int i=0; az[i]; i++) if( cli_is(w, az[i]) ) return 1;
  return 0;
}

static int cli_host_char(char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
         || c=='.' || c=='-' || c=='_' || c==':';
}

/*
** Node z (n bytes), host:port[@cport], as its name host:port into zName
** (port as a number) and its host's length into *pnHost. NULL, or what is
** wrong with it.
*/
static const char *cli_node_name(const char *z, size_t n, char *zName,
                                 size_t nName, size_t *pnHost){
  const char *zAt = memchr(z, '@', n);
  if( zAt ){
    size_t nBus = n-(size_t)(zAt-z)-1;
    if( config_number(zAt+1, nBus)<0 ) return "not host:port[@cport]";
    n = (size_t)(zAt-z);
  }
  size_t colon = n;
  while( colon>0 && z[colon-1]!=':' ) colon--;
  if( colon<2 || colon-1>CLI_MAX_HOST ) return "not host:port";
  size_t nHost = colon-1;
  for(size_t i=0; i<nHost; i++){
    if( !cli_host_char(z[i]) ) return "not host:port";
  }
  long port = config_number(z+colon, n-colon);
  if( port<0 ) return "not host:port";
  if( port<1 || port>65535 ) return "a port outside 1..65535";
  snprintf(zName, nName, "%.*s:%ld", (int)nHost, z, port);
  *pnHost = nHost;
  return NULL;
}

/* ------------------------------------------------- the master order */

static int cli_by_name(const void *a, const void *b){
  const cli_node *x = a, *y = b;
  int c = strcmp(x->zName, y->zName);
  return c ? c : (x->idx>y->idx) - (x->idx<y->idx);
}

/* Whether x and y are on the same host. */
static int cli_same_host(const cli_node *x, const cli_node *y){
  return x->nHost==y->nHost && memcmp(x->zName, y->zName, x->nHost)==0;
}

static int cli_by_host(const void *a, const void *b){
  const cli_node *x = a, *y = b;
  size_t n = x->nHost<y->nHost ? x->nHost : y->nHost;
  int c = memcmp(x->zName, y->zName, n);
  if( c==0 ) c = (x->nHost>y->nHost) - (x->nHost<y->nHost);
  return c ? c : (x->idx>y->idx) - (x->idx<y->idx);
}

/* Round robin over the hosts: by rank, then by the host's first node. */
static int cli_by_round(const void *a, const void *b){
  const cli_node *x = a, *y = b;
  if( x->rank!=y->rank ) return (x->rank>y->rank) - (x->rank<y->rank);
  return (x->host_first>y->host_first) - (x->host_first<y->host_first);
}

/*
** Sort a (n nodes in the text's order, idx 0..n-1) into redis-cli's
** order. Before that, *pDup is the idx of the first node whose name an
** earlier node has (*pFirst that earlier one), or n for none.
*/
static void cli_interleave(cli_node *a, uint32_t n, uint32_t *pDup,
                           uint32_t *pFirst){
  *pDup = n;
  qsort(a, n, sizeof(a[0]), cli_by_name);
  for(uint32_t i=1; i<n; i++){
    if( strcmp(a[i].zName, a[i-1].zName)==0 && a[i].idx<*pDup ){
      *pDup = a[i].idx;
      *pFirst = a[i-1].idx;
    }
  }
  qsort(a, n, sizeof(a[0]), cli_by_host);
  for(uint32_t i=0; i<n; i++){
    int bSame = i>0 && cli_same_host(&a[i], &a[i-1]);
    a[i].rank = bSame ? a[i-1].rank+1 : 0;
    a[i].host_first = bSame ? a[i-1].host_first : a[i].idx;
  }
  qsort(a, n, sizeof(a[0]), cli_by_round);
}

/* ------------------------------------------------------------ reading */

typedef struct cli_reader {
  config_file *f;
  config_pool *p;
  char *zSpace;                              /* the words' bytes */
  size_t nSpace;
  cli_word *aWord;
  int nWord, nWordAlloc;
} cli_reader;

/* Refuse, naming the line; always returns 1. */
static int cli_refuse_char(cli_reader *r, int line, char c){
  const char *zWhat = c=='$' || c=='`' ? "a variable or substitution"
                    : c=='*' || c=='?' || c=='[' ? "a glob"
                    : c=='{' ? "a brace expansion"
                    : c=='~' ? "a home directory"
                    : "a shell operator";
  config_refuse(r->f, r->p, "line %d: '%c' (%s) needs a shell: chash "
                "reads plain words, quoted or not", line, c, zWhat);
  return 1;
}

static int cli_word_add(cli_reader *r, size_t start, int line){
  if( r->nWord==r->nWordAlloc ){
    int nNew = r->nWordAlloc ? r->nWordAlloc*2 : 32;
    cli_word *aNew = ring_alloc(sizeof(cli_word)*(size_t)nNew);
    if( aNew==NULL ){ r->f->nomem = 1; return 1; }
    if( r->nWord ) memcpy(aNew, r->aWord, sizeof(cli_word)*(size_t)r->nWord);
    ring_dealloc(r->aWord);
    r->aWord = aNew;
    r->nWordAlloc = nNew;
  }
  if( r->nSpace-start>CONFIG_MAX_WORD ){
    config_refuse(r->f, r->p, "line %d: a word of more than %d bytes", line,
                  CONFIG_MAX_WORD);
    return 1;
  }
  cli_word *w = &r->aWord[r->nWord++];
  w->z = r->zSpace+start;
  w->n = r->nSpace-start;
  w->line = line;
  return 0;
}

/* The length of a line break at z[i] ("\n" or "\r\n"), or 0. */
static size_t cli_break(const char *z, size_t n, size_t i){
  if( i<n && z[i]=='\n' ) return 1;
  if( i+1<n && z[i]=='\r' && z[i+1]=='\n' ) return 2;
  return 0;
}

/* Split the text into r->aWord as a shell would: 0, or 1 when refused. */
static int cli_split(cli_reader *r, const char *z, size_t n){
  int line = 1;
  int bEnded = 0;                            /* a command line ended */
  size_t i = 0;
  while( i<n ){
    size_t nBreak = cli_break(z, n, i);
    if( nBreak ){
      i += nBreak;
      line++;
      bEnded = r->nWord>0;
      continue;
    }
    if( z[i]==' ' || z[i]=='\t' ){ i++; continue; }
    if( z[i]=='\\' && cli_break(z, n, i+1) ){
      i += 1+cli_break(z, n, i+1);
      line++;
      continue;
    }
    if( z[i]=='#' ){
      while( i<n && z[i]!='\n' ) i++;
      continue;
    }
    if( bEnded ){
      config_refuse(r->f, r->p, "line %d: a second command: chash reads "
                    "one redis-cli command (join its lines with \\)", line);
      return 1;
    }
    if( z[i]=='~' ) return cli_refuse_char(r, line, '~');
    /* One word, up to a blank or a line break outside quotes. */
    size_t start = r->nSpace;
    int lineAt = line;
    while( i<n && z[i]!=' ' && z[i]!='\t' && !cli_break(z, n, i) ){
      char c = z[i];
      if( c=='\\' ){
        size_t nb = cli_break(z, n, i+1);
        if( nb ){ i += 1+nb; line++; continue; }
        if( i+1==n ){
          config_refuse(r->f, r->p, "line %d: the text ends in a \\", line);
          return 1;
        }
        r->zSpace[r->nSpace++] = z[i+1];
        i += 2;
      }else if( c=='\'' || c=='"' ){
        int lineQuote = line;
        i++;
        while( i<n && z[i]!=c ){
          if( z[i]=='\n' ) line++;
          if( c=='"' && (z[i]=='$' || z[i]=='`') ){
            return cli_refuse_char(r, line, z[i]);
          }
          if( c=='"' && z[i]=='\\' && cli_break(z, n, i+1) ){
            i += 1+cli_break(z, n, i+1);
            line++;
            continue;
          }
          if( c=='"' && z[i]=='\\' && i+1<n && strchr("$`\"\\", z[i+1]) ){
            i++;
          }
          r->zSpace[r->nSpace++] = z[i++];
        }
        if( i==n ){
          config_refuse(r->f, r->p, "line %d: the quote %c is not closed",
                        lineQuote, c);
          return 1;
        }
        i++;
      }else if( strchr("$`*?[{|&;<>()", c) ){
        return cli_refuse_char(r, line, c);
      }else{
        r->zSpace[r->nSpace++] = c;
        i++;
      }
    }
    if( cli_word_add(r, start, lineAt) ) return 1;
  }
  return 0;
}

/* The nodes' words aNode[0..nNode-1] and the replicas per master into the
** pool: the masters in redis-cli's order. */
static void cli_masters(cli_reader *r, const cli_word *aNode, uint32_t nNode,
                        long replicas, const cli_word *create){
  /* A name is no longer than its word: "host:port" of "host:0port@cport". */
  size_t nSpace = 0;
  for(uint32_t i=0; i<nNode; i++) nSpace += aNode[i].n+1;
  char *zSpace = ring_alloc(nSpace);
  cli_node *a = ring_alloc(sizeof(cli_node)*nNode);
  if( zSpace==NULL || a==NULL ){
    r->f->nomem = 1;
    goto done;
  }
  char *zName = zSpace;
  for(uint32_t i=0; i<nNode; i++){
    const cli_word *w = &aNode[i];
    const char *zWrong = cli_node_name(w->z, w->n, zName, w->n+1,
                                       &a[i].nHost);
    if( zWrong ){
      config_refuse(r->f, r->p, "line %d: node '%.*s' is %s", w->line,
                    (int)(w->n>100 ? 100 : w->n), w->z, zWrong);
      goto done;
    }
    a[i].zName = zName;
    a[i].idx = i;
    a[i].line = w->line;
    zName += strlen(zName)+1;
  }
  uint32_t dup, first = 0;
  cli_interleave(a, nNode, &dup, &first);
  if( dup<nNode ){
    uint32_t d = 0;
    while( a[d].idx!=dup ) d++;
    config_refuse(r->f, r->p, "line %d: node %s is listed twice (the "
                  "first time at line %d)", aNode[dup].line,
                  a[d].zName, aNode[first].line);
    goto done;
  }
  long long nMaster = (long long)nNode/((long long)replicas+1);
  if( nMaster<CLI_MIN_MASTERS ){
    config_refuse(r->f, r->p, "line %d: redis-cli --cluster create needs "
                  "at least %d masters: %u nodes with %ld replicas per "
                  "master make %lld (at least %lld nodes are needed)",
                  create->line, CLI_MIN_MASTERS, nNode, replicas, nMaster,
                  (long long)CLI_MIN_MASTERS*((long long)replicas+1));
    goto done;
  }
  for(long long k=0; k<nMaster && !r->p->refusal; k++){
    if( config_node_add(r->f, r->p, a[k].zName, strlen(a[k].zName), 1.0,
                        a[k].line) ) break;
  }
done:
  ring_dealloc(zSpace);
  ring_dealloc(a);
}

/* The words after the first, as redis-cli reads its arguments. */
static void cli_arguments(cli_reader *r){
  const cli_word *aw = r->aWord;
  int k = 0;
  /* redis-cli, or a path to it */
  size_t base = aw[0].n;
  while( base>0 && aw[0].z[base-1]!='/' ) base--;
  if( aw[0].n-base==9 && memcmp(aw[0].z+base, "redis-cli", 9)==0 ){
    k = 1;
  }else if( aw[0].n==0 || aw[0].z[0]!='-' ){
    config_refuse(r->f, r->p, "line %d: '%.*s' is not redis-cli: the text "
                  "is a command line `redis-cli --cluster create host:port "
                  "...`", aw[0].line, (int)(aw[0].n>100 ? 100 : aw[0].n),
                  aw[0].z);
    return;
  }
  const cli_word *create = NULL;             /* the word create */
  int iNode = -1, nNode = 0;                 /* the nodes' run */
  long replicas = 0;
  for(; k<r->nWord; k++){
    const cli_word *w = &aw[k];
    int nw = (int)(w->n>100 ? 100 : w->n);
    int bLast = k+1==r->nWord;
    if( cli_is(w, "--cluster") ){
      if( create ){
        config_refuse(r->f, r->p, "line %d: --cluster a second time",
                      w->line);
        return;
      }
      if( bLast ){
        config_refuse(r->f, r->p, "line %d: --cluster without a "
                      "subcommand", w->line);
        return;
      }
      create = &aw[++k];
      if( !cli_is(create, "create") ){
        config_refuse(r->f, r->p, "line %d: --cluster %.*s is not read: "
                      "chash reads --cluster create", create->line,
                      (int)(create->n>100 ? 100 : create->n), create->z);
        return;
      }
    }else if( cli_is(w, "--cluster-replicas") ){
      const cli_word *v = bLast ? NULL : &aw[++k];
      replicas = v ? config_number(v->z, v->n) : -1;
      if( v==NULL ){
        config_refuse(r->f, r->p, "line %d: --cluster-replicas takes a "
                      "number", w->line);
        return;
      }
      if( replicas<0 ){
        config_refuse(r->f, r->p, "line %d: --cluster-replicas takes a "
                      "whole number, not '%.*s'", v->line,
                      (int)(v->n>100 ? 100 : v->n), v->z);
        return;
      }
    }else if( cli_in(w, cli_inert_flag) ){
      continue;
    }else if( cli_in(w, cli_inert_value) ){
      if( bLast ){
        config_refuse(r->f, r->p, "line %d: %.*s takes a value", w->line, nw,
                      w->z);
        return;
      }
      k++;
    }else if( w->n>0 && w->z[0]=='-' ){
      config_refuse(r->f, r->p, "line %d: option %.*s is not read: chash "
                    "reads --cluster create, its nodes, --cluster-replicas "
                    "and options that change no placement (--cluster-yes, "
                    "-a, --user, --pass, --tls, ...)", w->line, nw, w->z);
      return;
    }else if( create==NULL ){
      config_refuse(r->f, r->p, "line %d: '%.*s' before --cluster create: "
                    "redis-cli would send it as a command", w->line, nw,
                    w->z);
      return;
    }else if( iNode>=0 ){
      config_refuse(r->f, r->p, "line %d: '%.*s' after an option: "
                    "redis-cli takes the nodes from one run of words after "
                    "--cluster create and would ignore it", w->line, nw,
                    w->z);
      return;
    }else{
      iNode = k;
      while( k+1<r->nWord && !(aw[k+1].n>0 && aw[k+1].z[0]=='-') ) k++;
      nNode = k+1-iNode;
    }
  }
  if( create==NULL ){
    config_refuse(r->f, r->p, "line %d: not a --cluster create command "
                  "(`redis-cli --cluster create host:port ...`)", aw[0].line);
  }else if( iNode<0 ){
    config_refuse(r->f, r->p, "line %d: --cluster create lists no node",
                  create->line);
  }else{
    cli_masters(r, &aw[iNode], (uint32_t)nNode, replicas, create);
  }
}

static void redis_cli_read(const char *z, size_t n, config_file *f){
  cli_reader r;
  memset(&r, 0, sizeof(r));
  r.f = f;
  r.p = config_pool_add(f, "cluster", 7, 1);
  if( r.p==NULL ) return;
  r.p->algorithm = "redis_cluster";
  r.zSpace = ring_alloc(n+1);
  if( r.zSpace==NULL ){
    f->nomem = 1;
    return;
  }
  if( cli_split(&r, z, n)==0 && !f->nomem ){
    if( r.nWord==0 ){
      config_fail(f, "the text holds no command (`redis-cli --cluster "
                  "create host:port ...`)");
    }else{
      cli_arguments(&r);
    }
  }
  ring_dealloc(r.zSpace);
  ring_dealloc(r.aWord);
}

/* ------------------------------------------------------------ writing */

static int redis_cli_write(const config_pool *p, char **pzOut, char *zErr,
                           size_t nErr){
  if( p->n_nodes<CLI_MIN_MASTERS ){
    snprintf(zErr, nErr, "redis-cli --cluster create needs at least %d "
             "masters; the ring has %u", CLI_MIN_MASTERS, p->n_nodes);
    return CONFIG_ERROR;
  }
  cli_node *a = ring_alloc(sizeof(cli_node)*p->n_nodes);
  if( a==NULL ) return CONFIG_NOMEM;
  int rc = CONFIG_ERROR;
  for(uint32_t k=0; k<p->n_nodes; k++){
    const char *zNode = p->nodes[k].name;
    char zName[CLI_MAX_HOST+8];
    if( cli_node_name(zNode, strlen(zNode), zName, sizeof(zName),
                      &a[k].nHost) || strcmp(zName, zNode)!=0 ){
      snprintf(zErr, nErr, "node '%.100s' is not host:port (a port from 1 "
               "to 65535 without leading zeros)", zNode);
      goto done;
    }
    if( p->nodes[k].columns[CLI_SLOTS_COLUMN] ){
      snprintf(zErr, nErr, "node %.100s has slots: the ring is a live "
               "map, which redis-cli --cluster create does not make; "
               "write it with format redis_nodes", zNode);
      goto done;
    }
    a[k].zName = zNode;
    a[k].idx = k;
  }
  uint32_t dup, first;
  cli_interleave(a, p->n_nodes, &dup, &first);
  for(uint32_t k=0; k<p->n_nodes; k++){
    if( a[k].idx!=k ){
      snprintf(zErr, nErr, "redis-cli takes the nodes round robin across "
               "hosts (the first node of each host, then the second of "
               "each, ...): it would make %.100s master %u, not %.100s, so "
               "no command line makes this join order", a[k].zName, k,
               p->nodes[k].name);
      goto done;
    }
  }
  config_buf b = {0};
  config_buf_append(&b, "redis-cli --cluster create", 26);
  for(uint32_t k=0; k<p->n_nodes; k++){
    config_buf_printf(&b, " %s", p->nodes[k].name);
  }
  config_buf_append(&b, " --cluster-replicas 0\n", 22);
  rc = config_buf_finish(&b, pzOut);
done:
  ring_dealloc(a);
  return rc;
}

static const char *const redis_cli_write_options[] = { NULL };

const config_format config_redis_cli = {
  .name = "redis_cli",
  .algorithm = "redis_cluster",
  .writes = "a redis-cli --cluster create command",
  .write_options = redis_cli_write_options,
  .pool_noun = "cluster",
  .read = redis_cli_read,
  .write = redis_cli_write,
};

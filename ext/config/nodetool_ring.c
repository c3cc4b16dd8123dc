/*
** nodetool_ring.c: format nodetool_ring, the listing `nodetool ring`
** prints, read as one pool (named "ring") of algorithm cassandra: every
** node with its tokens, DC and rack; and written as such a listing.
**
**   Datacenter: dc1
**   ==========
**   Address    Rack   Status State   Load       Owns     Token
**                                                        3074457345618258602
**   10.0.0.1   rack1  Up     Normal  105.3 KiB  33.33%   -9223372036854775808
**   10.0.0.2   rack2  Up     Normal  98.1 KiB   33.33%   -3074457345618258603
**
** A row is the address, the rack, then what nodetool says of the node,
** and the token last; a node is listed once per token, and its DC is the
** section's ("Datacenter: dc1"). The line holding only a token (the last
** token, repeated above the first row), the headings, and nodetool's
** notes ("Warning: ..." up to a blank line) are skipped. A
** node that is not Normal (Joining, Leaving, Moving) is refused, naming
** its line: its tokens are not (or no longer) the ones the ring places
** keys by. The listing holds no keyspace, so the spec has no replication:
** the user gives it (docs/reference.md, ch_config).
*/
#include <stdio.h>
#include <string.h>

#include "config.h"

enum { NT_TOKENS, NT_DC, NT_RACK };   /* cassandra's columns */

#define NODETOOL_MAX_WORDS 16

typedef struct word { const char *z; size_t n; } word;

/* The words of line z (n bytes), at most NODETOOL_MAX_WORDS; their count
** (one more than that if the line has more). */
static int split_words(const char *z, size_t n, word *a){
  int k = 0;
  for(size_t i=0; i<n; ){
    if( z[i]==' ' || z[i]=='\t' || z[i]=='\r' ){ i++; continue; }
    size_t j = i;
    while( j<n && z[j]!=' ' && z[j]!='\t' && z[j]!='\r' ) j++;
    if( k==NODETOOL_MAX_WORDS ) return k+1;
    a[k].z = z+i;
    a[k].n = j-i;
    k++;
    i = j;
  }
  return k;
}

/* Is w a signed 64-bit integer's decimal text? */
static int is_token(const word *w){
  size_t d = w->n>0 && w->z[0]=='-';
  if( d==w->n || w->n-d>19 ) return 0;
  for(size_t i=d; i<w->n; i++){
    if( w->z[i]<'0' || w->z[i]>'9' ) return 0;
  }
  if( w->n-d<19 ) return 1;
  const char *zMax = d ? "9223372036854775808" : "9223372036854775807";
  return memcmp(w->z+d, zMax, 19)<=0;
}

static int word_is(const word *w, const char *z){
  return w->n==strlen(z) && memcmp(w->z, z, w->n)==0;
}

/* Append token t to node x's tokens. 0, or 1 on OOM or a list too long
** (then the pool's refusal or f->nomem says so). */
static int add_token(config_file *f, config_pool *p, config_node *x,
                     const word *t, int line){
  size_t nOld = x->columns[NT_TOKENS] ? strlen(x->columns[NT_TOKENS]) : 0;
  if( nOld + 1 + t->n > RING_MAX_COLUMN_TEXT ){
    config_refuse(f, p, "line %d: node %s has more tokens than chash holds "
                  "(%d bytes of them)", line, x->name, RING_MAX_COLUMN_TEXT);
    return 1;
  }
  char *z = ring_alloc(nOld + 1 + t->n + 1);
  if( z==NULL ){ f->nomem = 1; return 1; }
  if( nOld ){
    memcpy(z, x->columns[NT_TOKENS], nOld);
    z[nOld++] = ' ';
  }
  memcpy(z+nOld, t->z, t->n);
  z[nOld + t->n] = 0;
  ring_dealloc(x->columns[NT_TOKENS]);
  x->columns[NT_TOKENS] = z;
  return 0;
}

/* One row: address, rack, ..., token, in DC zDc (nDc bytes). */
static void read_row(config_file *f, config_pool *p, const word *a, int nWord,
                     const char *zDc, size_t nDc, int line){
  const word *addr = &a[0], *rack = &a[1], *tok = &a[nWord-1];
  if( !is_token(tok) ){
    config_fail(f, "line %d: '%.*s' is not a row of nodetool ring (address, "
                "rack, status, state, load, owns, token): its last word is "
                "not a token", line, (int)(tok->n>40 ? 40 : tok->n), tok->z);
    return;
  }
  if( nWord>=4 && !word_is(&a[3], "Normal") ){
    config_refuse(f, p, "line %d: node %.*s is %.*s: only a Normal node "
                  "holds the tokens listed (run nodetool ring again once "
                  "it is Normal, or leave its lines out)", line,
                  (int)addr->n, addr->z, (int)(a[3].n>20 ? 20 : a[3].n),
                  a[3].z);
    return;
  }
  if( zDc==NULL ){
    config_fail(f, "line %d: a row before any 'Datacenter:' line", line);
    return;
  }
  config_node *x = NULL;
  for(uint32_t i=0; i<p->n_nodes && x==NULL; i++){
    if( strlen(p->nodes[i].name)==addr->n
     && memcmp(p->nodes[i].name, addr->z, addr->n)==0 ){
      x = &p->nodes[i];
    }
  }
  if( x==NULL ){
    if( config_node_add(f, p, addr->z, addr->n, 1.0, line) || p->refusal ){
      return;
    }
    x = &p->nodes[p->n_nodes-1];
    if( config_node_column(f, p, NT_DC, zDc, nDc)
     || config_node_column(f, p, NT_RACK, rack->z, rack->n) ){
      return;
    }
  }else if( strlen(x->columns[NT_DC])!=nDc
         || memcmp(x->columns[NT_DC], zDc, nDc)!=0
         || strlen(x->columns[NT_RACK])!=rack->n
         || memcmp(x->columns[NT_RACK], rack->z, rack->n)!=0 ){
    config_refuse(f, p, "line %d: node %s is listed in DC %s rack %s "
                  "before, here in DC %.*s rack %.*s", line, x->name,
                  x->columns[NT_DC], x->columns[NT_RACK], (int)nDc, zDc,
                  (int)rack->n, rack->z);
    return;
  }
  add_token(f, p, x, tok, line);
}

static void nodetool_ring_read(const char *z, size_t n, config_file *f){
  config_pool *p = config_pool_add(f, "ring", 4, 1);
  if( p==NULL ) return;
  p->algorithm = "cassandra";
  const char *zDc = NULL;
  size_t nDc = 0;
  int line = 0;
  int bNote = 0;                        /* in a note, up to a blank line */
  for(size_t i=0; i<n && !f->nomem && !f->error[0] && !p->refusal; ){
    const char *zLine = z+i;
    const char *zEnd = memchr(zLine, '\n', n-i);
    size_t nLine = zEnd ? (size_t)(zEnd - zLine) : n-i;
    i += nLine + 1;
    line++;
    word a[NODETOOL_MAX_WORDS];
    int nWord = split_words(zLine, nLine, a);
    if( nWord==0 ) bNote = 0;
    if( nWord==0 || bNote || a[0].z[0]=='=' ) continue;
    if( word_is(&a[0], "Datacenter:") ){
      if( nWord!=2 ){
        config_fail(f, "line %d: 'Datacenter:' takes one name", line);
        return;
      }
      int bSame = zDc && nDc==a[1].n && memcmp(zDc, a[1].z, nDc)==0;
      for(uint32_t k=0; k<p->n_nodes && !bSame; k++){
        const char *zSeen = p->nodes[k].columns[NT_DC];
        if( zSeen && strlen(zSeen)==a[1].n
            && memcmp(zSeen, a[1].z, a[1].n)==0 ){
          /* Its nodes would join out of the order the text gives. */
          config_fail(f, "line %d: datacenter '%.*s' is listed a second "
                      "time (nodetool ring lists each datacenter once)",
                      line, (int)a[1].n, a[1].z);
          return;
        }
      }
      zDc = a[1].z;
      nDc = a[1].n;
      continue;
    }
    if( word_is(&a[0], "Note:") || word_is(&a[0], "Warning:") ){
      bNote = 1;                       /* nodetool's notes */
      continue;
    }
    if( word_is(&a[0], "Address") ) continue;     /* the heading */
    if( nWord==1 && is_token(&a[0]) ) continue;   /* the last token again */
    if( nWord<3 || nWord>NODETOOL_MAX_WORDS ){
      config_fail(f, "line %d: '%.*s' is not a row of nodetool ring "
                  "(address, rack, status, state, load, owns, token)", line,
                  (int)(nLine>60 ? 60 : nLine), zLine);
      return;
    }
    read_row(f, p, a, nWord, zDc, nDc, line);
  }
}

/* Written: a section per DC in the order the DCs first come, each node
** once per token (in node order, then the node's token order: the order
** of the rows is not read back), Up Normal with no load or ownership (? ?).
** The replication is not written: a listing has none. */
static int nodetool_ring_write(const config_pool *p, char **pzOut, char *zErr,
                               size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes; k++){
    const config_node *x = &p->nodes[k];
    const char *zBad = strpbrk(x->name, " \t\r\n") ? x->name
                     : strpbrk(x->columns[NT_RACK], " \t\r\n") ? x->columns[NT_RACK]
                     : strpbrk(x->columns[NT_DC], " \t\r\n") ? x->columns[NT_DC]
                     : NULL;
    if( zBad ){
      snprintf(zErr, nErr, "'%.100s' holds a space, which a nodetool ring "
               "listing cannot carry", zBad);
      return CONFIG_ERROR;
    }
  }
  for(uint32_t d=0; d<p->n_nodes; d++){
    const char *zDc = p->nodes[d].columns[NT_DC];
    int bFirst = 1;
    for(uint32_t e=0; e<d && bFirst; e++){
      bFirst = strcmp(p->nodes[e].columns[NT_DC], zDc)!=0;
    }
    if( !bFirst ) continue;
    config_buf_printf(&b, "Datacenter: %s\n==========\n"
                      "Address  Rack  Status State   Load  Owns  Token\n", zDc);
    for(uint32_t k=d; k<p->n_nodes; k++){
      const config_node *x = &p->nodes[k];
      if( strcmp(x->columns[NT_DC], zDc)!=0 ) continue;
      const char *zTok = x->columns[NT_TOKENS];
      while( *zTok ){
        size_t nSep = strspn(zTok, ", \t\r\n");
        zTok += nSep;
        size_t nTok = strcspn(zTok, ", \t\r\n");
        if( nTok ){
          config_buf_printf(&b, "%s  %s  Up     Normal  ?  ?  %.*s\n",
                            x->name, x->columns[NT_RACK], (int)nTok, zTok);
        }
        zTok += nTok;
      }
    }
    config_buf_append(&b, "\n", 1);
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const nodetool_ring_write_options[] = {
  "replication", "integer_key", NULL
};

const config_format config_nodetool_ring = {
  .name = "nodetool_ring",
  .algorithm = "cassandra",
  .writes = "a nodetool ring listing",
  .write_options = nodetool_ring_write_options,
  .pool_noun = "ring",
  .read = nodetool_ring_read,
  .write = nodetool_ring_write,
};

/*
** dalli_servers.c: format dalli, the server string Ruby's Dalli (3.0)
** takes, `Dalli::Client.new("a:11211,b:11211:2")` or
** ENV['MEMCACHE_SERVERS'], read as one pool (named "servers") of
** algorithm dalli, and written as one.
**
** Dalli splits the string on commas only and drops empty items; each
** server is "host", "host:port", "host:port:weight", "[IPv6]:port[:weight]",
** or a unix socket's path with an optional ":weight". The node is the
** server string without its weight (algorithm dalli hashes it as Dalli
** does: the default port, the brackets, an octal port); the weight is read
** as Ruby's Integer() reads it (a leading 0 makes it octal), 1 by default.
** Line breaks at the end of the text (a file's last line) are not part of
** the list. Refused, naming the server: what Dalli would read otherwise
** than a demanding reader expects or cannot read at all: a space, tab or
** line break inside the list (Dalli keeps it in the host: "a, b" is host
** " b"), a memcached:// URI (its credentials are not modelled), weight 0
** (a server Dalli counts but gives no point), a string Dalli cannot parse,
** and a server listed twice.
**
** Written: the servers in join order, commas between, "name:W" for a
** weight W other than 1, with no line break (Dalli would keep it in the
** last host).
*/
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "dalli.h"

/* A weight's digits as Ruby's Integer() reads them (a leading 0 makes
** them octal), or -1 if it raises or the weight passes RING_MAX_WEIGHT. */
static double dalli_list_weight(const char *z, size_t n){
  int base = n>1 && z[0]=='0' ? 8 : 10;
  double w = 0.0;
  for(size_t i=0; i<n; i++){
    if( z[i]-'0'>=base ) return -1.0;
    w = w*base + (z[i]-'0');
    if( w>RING_MAX_WEIGHT ) return -1.0;
  }
  return w;
}

/* Does z[nHost..n) read as up to two ":digits"? Their ends into aEnd. */
static int dalli_list_tail(const char *z, size_t n, size_t nHost,
                           size_t aEnd[2], size_t *pnPart){
  size_t i = nHost;
  *pnPart = 0;
  while( i<n && *pnPart<2 && z[i]==':' ){
    size_t s = ++i;
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
    if( i==s ) return 0;
    aEnd[(*pnPart)++] = i;
  }
  return i==n;
}

/*
** Server string z (n bytes, no comma) as Dalli's pattern
** `\A(\[([\h:]+)\]|[^:]+)(?::(\d+))?(?::(\d+))?\z` splits it: *pnNode, the
** bytes of the node name (the string without its weight) and *pW its
** weight. NULL, or why it is not taken.
*/
static const char *dalli_list_parse(const char *z, size_t n, size_t *pnNode,
                                    double *pW){
  for(size_t i=0; i<n; i++){
    if( (unsigned char)z[i]<=' ' || z[i]==0x7F ){
      return "holds a space, tab or line break, which Dalli keeps in the "
             "host (Dalli splits on commas only: write a,b)";
    }
  }
  if( n>=12 && memcmp(z, "memcached://", 12)==0 ){
    return "is a memcached:// URI, whose credentials chash does not model "
           "(write host:port)";
  }
  /* The host: [IPv6] when the rest fits, else up to the first ':'. */
  size_t aEnd[2], nPart = 0, nHost = 0;
  if( z[0]=='[' ){
    const char *zClose = memchr(z, ']', n);
    size_t k = 1;
    while( zClose && z+k<zClose && strchr(":0123456789abcdefABCDEF", z[k])
           && z[k] ) k++;
    if( zClose && k>1 && z+k==zClose ) nHost = k+1;
    if( nHost && !dalli_list_tail(z, n, nHost, aEnd, &nPart) ) nHost = 0;
  }
  if( nHost==0 ){
    const char *zColon = memchr(z, ':', n);
    nHost = zColon ? (size_t)(zColon-z) : n;
    if( !dalli_list_tail(z, n, nHost, aEnd, &nPart) ) nHost = 0;
  }
  int bUnix = z[0]=='/';
  if( nHost==0 || (nHost==2 && z[0]=='[') || (bUnix && nPart==2) ){
    return "is not what Dalli parses: host, host:port, host:port:weight, "
           "[IPv6]:port:weight or a unix socket's path[:weight]";
  }
  /* A unix socket's one number is its weight; a host's, its port. */
  size_t nNode = bUnix || nPart==0 ? nHost : aEnd[0];
  size_t sWeight = bUnix && nPart==1 ? nHost+1 : nPart==2 ? aEnd[0]+1 : 0;
  *pW = 1.0;
  if( sWeight ){
    *pW = dalli_list_weight(z+sWeight, n-sWeight);
    if( *pW<0.0 ){
      return "has a weight Ruby's Integer() does not read (a leading 0 is "
             "octal) or above 1e9";
    }
    if( *pW==0.0 ){
      return "has weight 0: Dalli counts it among the servers but gives it "
             "no point, which chash does not model (remove it)";
    }
  }
  char zName[DALLI_NAME_MAX];
  if( nNode>RING_MAX_NAME || dalli_server_name(z, nNode, zName)==0 ){
    return "is not what Dalli parses (its port is not a number Ruby's "
           "Integer() reads: a leading 0 is octal)";
  }
  *pnNode = nNode;
  return NULL;
}

static void dalli_list_read(const char *z, size_t n, config_file *f){
  config_pool *p = config_pool_add(f, "servers", 7, 1);
  if( p==NULL ) return;
  p->algorithm = "dalli";
  while( n>0 && (z[n-1]=='\n' || z[n-1]=='\r') ) n--;
  int iServer = 0;
  for(size_t i=0; i<=n && !p->refusal && !f->nomem; i++){
    size_t s = i;
    while( i<n && z[i]!=',' ) i++;
    if( i==s ) continue;                      /* Dalli drops empty items */
    iServer++;
    size_t nNode;
    double w;
    const char *zWhy = dalli_list_parse(z+s, i-s, &nNode, &w);
    if( zWhy ){
      config_refuse(f, p, "server %d '%.*s' %s", iServer,
                    (int)(i-s>200 ? 200 : i-s), z+s, zWhy);
    }else{
      config_node_add(f, p, z+s, nNode, w, 1);
    }
  }
}

static int dalli_list_write(const config_pool *p, char **pzOut, char *zErr,
                            size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    long long w = 0;
    size_t s = b.n + (k ? 1 : 0);
    if( !config_whole_weight(p->nodes[k].weight, &w) ) w = -1;
    config_buf_printf(&b, w==1 ? "%s%s" : "%s%s:%lld", k ? "," : "", zNode,
                      w);
    /* What Dalli reads back must be this node and weight. */
    size_t nNode = 0;
    double wBack = 0.0;
    if( !b.nomem && (strchr(zNode, ',')
        || dalli_list_parse(b.z+s, b.n-s, &nNode, &wBack)
        || nNode!=strlen(zNode) || wBack!=(double)w) ){
      snprintf(zErr, nErr, "node '%.100s' of weight %g is not written so "
               "that Dalli reads it back (a weight needs a port: name it "
               "host:11211; no commas or spaces)", zNode,
               p->nodes[k].weight);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const dalli_list_write_options[] = { NULL };

const config_format config_dalli = {
  .name = "dalli",
  .algorithm = "dalli",
  .writes = "a Dalli server string",
  .write_options = dalli_list_write_options,
  .pool_noun = "server list",
  .read = dalli_list_read,
  .write = dalli_list_write,
};

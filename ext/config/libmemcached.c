/*
** libmemcached.c: format libmemcached, the server list libmemcached
** takes, read as one pool (named "servers") of algorithm ketama, as
** libmemcached places keys with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (MD5
** keys, the weighted continuum), and written as one.
**
** Two forms, told apart by the first word:
**   --SERVER=host[:port][/?weight] ...   memcached(3)'s configuration
**                                        string, options separated by
**                                        spaces (or newlines)
**   host[:port][ weight|:weight], ...    memcached_servers_parse's list
** The port defaults to 11211 (so does port 0) and the weight to 1. A node
** is named as libmemcached's weighted ketama hashes the server: the host
** alone on port 11211, else "host:port". Options that play no part in
** placement (timeouts, protocols, buffering) are skipped; any other option
** (--HASH, --DISTRIBUTION, --NAMESPACE, --SOCKET, ...) is refused, naming
** its line, as are weight 0, IPv6 and quoted hosts, and duplicate nodes.
**
** Written: the configuration string, one --SERVER=host:port/?W per node
** in join order, on one line (libmemcached reads no newlines).
*/
#include <stdio.h>
#include <string.h>

#include "config.h"

/* Options of the configuration string that do not change placement. */
static const char *const libmemcached_inert[] = {
  "--BINARY-PROTOCOL", "--BUFFER-REQUESTS", "--CONNECT-TIMEOUT=",
  "--IO-BYTES-WATERMARK=", "--IO-KEY-PREFETCH=", "--IO-MSG-WATERMARK=",
  "--NOREPLY", "--NUMBER-OF-REPLICAS=", "--POLL-TIMEOUT=",
  "--RCV-TIMEOUT=", "--RETRY-TIMEOUT=", "--SND-TIMEOUT=",
  "--SOCKET-RECV-SIZE=", "--SOCKET-SEND-SIZE=", "--TCP-KEEPALIVE",
  "--TCP-KEEPIDLE", "--TCP-NODELAY", "--USE-UDP", "--VERIFY-KEY",
  "--SERVER-FAILURE-LIMIT=", NULL
};

static int libmemcached_host_char(char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
         || c=='.' || c=='-' || c=='_';
}

/* One server z (n bytes): host[:port] then "/?W" in the configuration
** string (bString), or " W" or ":W" after the port in the plain list. */
static void libmemcached_server(config_file *f, config_pool *p, const char *z,
                                size_t n, int bString, int line){
  size_t nHost = 0;
  while( nHost<n && libmemcached_host_char(z[nHost]) ) nHost++;
  long port = 11211, weight = 1;
  size_t i = nHost;
  if( nHost==0 || nHost>255 ) goto bad;
  if( i<n && z[i]==':' ){
    size_t s = ++i;
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
    port = config_number(z+s, i-s);
    if( port<0 || port>65535 ) goto bad;
    if( port==0 ) port = 11211;
  }
  if( i<n ){
    size_t s;
    if( bString && n-i>2 && z[i]=='/' && z[i+1]=='?' ) s = i+2;
    else if( !bString && i>nHost && (z[i]==' ' || z[i]==':') ) s = i+1;
    else goto bad;
    while( !bString && s<n && z[s]==' ' ) s++;
    weight = config_number(z+s, n-s);
    if( weight<0 ) goto bad;
  }
  if( weight==0 ){
    config_refuse(f, p, "line %d: server '%.*s' has weight 0, which chash "
                  "does not model; remove it", line, (int)n, z);
    return;
  }
  char zName[300];
  if( port==11211 ){
    snprintf(zName, sizeof(zName), "%.*s", (int)nHost, z);
  }else{
    snprintf(zName, sizeof(zName), "%.*s:%ld", (int)nHost, z, port);
  }
  config_node_add(f, p, zName, strlen(zName), (double)weight, line);
  return;
bad:
  config_refuse(f, p, "line %d: server '%.*s' is not %s (IPv6 addresses, "
                "quoted hosts and unix sockets are not read)", line,
                (int)(n>200 ? 200 : n), z,
                bString ? "--SERVER=host[:port][/?weight]"
                        : "host[:port][ weight]");
}

/* The configuration string: --SERVER=... and other options. */
static void libmemcached_string(const char *z, size_t n, config_file *f,
                                config_pool *p){
  int line = 1;
  size_t i = 0;
  while( i<n && !p->refusal && !f->nomem ){
    if( z[i]=='\n' ){ line++; i++; continue; }
    if( z[i]==' ' || z[i]=='\t' || z[i]=='\r' ){ i++; continue; }
    size_t s = i;
    while( i<n && z[i]!=' ' && z[i]!='\t' && z[i]!='\r' && z[i]!='\n' ) i++;
    const char *zWord = z+s;
    size_t nWord = i-s;
    if( nWord>9 && memcmp(zWord, "--SERVER=", 9)==0 ){
      libmemcached_server(f, p, zWord+9, nWord-9, 1, line);
      continue;
    }
    int k = 0;
    while( libmemcached_inert[k] ){
      size_t m = strlen(libmemcached_inert[k]);
      int bValue = libmemcached_inert[k][m-1]=='=';
      if( bValue ? (nWord>m && memcmp(zWord, libmemcached_inert[k], m)==0)
                 : (nWord==m && memcmp(zWord, libmemcached_inert[k], m)==0) ){
        break;
      }
      k++;
    }
    if( libmemcached_inert[k]==NULL ){
      config_refuse(f, p, "line %d: '%.*s' is not read: chash reads the "
                    "--SERVER options of a weighted ketama ring (MD5 keys); "
                    "options that change placement (--HASH, --DISTRIBUTION, "
                    "--NAMESPACE, --SOCKET, ...) are not modelled", line,
                    (int)(nWord>100 ? 100 : nWord), zWord);
    }
  }
}

/* memcached_servers_parse's list: servers separated by commas. */
static void libmemcached_list(const char *z, size_t n, config_file *f,
                              config_pool *p){
  int line = 1;
  size_t i = 0;
  while( i<=n && !p->refusal && !f->nomem ){
    size_t s = i;
    int lineAt = line;
    while( i<n && z[i]!=',' ){
      if( z[i]=='\n' ) line++;
      i++;
    }
    size_t e = i++;
    while( s<e && (z[s]==' ' || z[s]=='\t' || z[s]=='\r' || z[s]=='\n') ){
      if( z[s]=='\n' ) lineAt++;
      s++;
    }
    while( e>s && (z[e-1]==' ' || z[e-1]=='\t' || z[e-1]=='\r'
                   || z[e-1]=='\n') ) e--;
    if( e>s ) libmemcached_server(f, p, z+s, e-s, 0, lineAt);
  }
}

static void libmemcached_read(const char *z, size_t n, config_file *f){
  config_pool *p = config_pool_add(f, "servers", 7, 1);
  if( p==NULL ) return;
  p->algorithm = "ketama";
  size_t i = 0;
  while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\r' || z[i]=='\n') ) i++;
  if( n-i>=2 && z[i]=='-' && z[i+1]=='-' ) libmemcached_string(z, n, f, p);
  else libmemcached_list(z, n, f, p);
}

static int libmemcached_write(const config_pool *p, char **pzOut, char *zErr,
                              size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    long long w = 0;
    size_t nHost = 0;
    while( libmemcached_host_char(zNode[nHost]) ) nHost++;
    /* "host" is port 11211; "host:port" any other port */
    int bPort = zNode[nHost]==':';
    long port = bPort ? config_number(zNode+nHost+1, strlen(zNode+nHost+1))
                      : 11211;
    if( nHost==0 || nHost>255 || (zNode[nHost] && !bPort) || port<1
        || port>65535 || (bPort && port==11211) ){
      snprintf(zErr, nErr, "node '%.100s' is neither host nor host:port "
               "(a port other than 11211)", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    if( !config_whole_weight(p->nodes[k].weight, &w) || w>1000000000 ){
      snprintf(zErr, nErr, "node %.100s has weight %g: libmemcached's "
               "weights are whole numbers", zNode, p->nodes[k].weight);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    config_buf_printf(&b, "%s--SERVER=%.*s:%ld/?%lld", k ? " " : "",
                      (int)nHost, zNode, port, w);
  }
  config_buf_append(&b, "\n", 1);
  return config_buf_finish(&b, pzOut);
}

static const char *const libmemcached_write_options[] = { NULL };

const config_format config_libmemcached = {
  .name = "libmemcached",
  .algorithm = "ketama",
  .writes = "a libmemcached server list",
  .write_options = libmemcached_write_options,
  .pool_noun = "server list",
  .read = libmemcached_read,
  .write = libmemcached_write,
};

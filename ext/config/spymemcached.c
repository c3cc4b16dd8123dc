/*
** spymemcached.c: format spymemcached, the address list spymemcached's
** AddrUtil.getAddresses takes ("host:port host:port", or separated by
** commas), read as one pool (named "servers") of algorithm spymemcached
** with its defaults (KETAMA_HASH, no weights map: KetamaConnectionFactory),
** and written as one.
**
** Addresses are separated by runs of white space and commas, as AddrUtil
** splits them; each is split at its last colon into host and port. A node
** is the string spymemcached hashes for the server: for an IPv4 address,
** "a.b.c.d:port". A host name is refused, naming its line: spymemcached
** hashes it with the address DNS gives it ("cache1/10.0.0.1:11211"), which
** the text does not hold; so is an IPv6 address (Java writes it in a form
** of its own), a port that is not 0 to 65535, and anything AddrUtil
** refuses.
**
** Written: the addresses of the nodes in join order, separated by spaces,
** on one line; a node that is not "a.b.c.d:port" cannot be written.
*/
#include <stdio.h>
#include <string.h>

#include "config.h"

/* The separators of AddrUtil's split: Java's \s and the comma. */
static int spy_separator(char c){
  return c==' ' || c=='\t' || c=='\n' || c=='\v' || c=='\f' || c=='\r'
         || c==',';
}

/* Is z (n bytes) an IPv4 address as Java reads one: four decimal numbers
** 0 to 255 separated by dots, none with a leading zero? */
static int spy_ipv4(const char *z, size_t n){
  int nPart = 0;
  size_t i = 0;
  while( nPart<4 ){
    size_t s = i;
    while( i<n && z[i]>='0' && z[i]<='9' ) i++;
    if( i==s || i-s>3 || (i-s>1 && z[s]=='0') ) return 0;
    if( config_number(z+s, i-s)>255 ) return 0;
    nPart++;
    if( nPart<4 ){
      if( i>=n || z[i]!='.' ) return 0;
      i++;
    }
  }
  return i==n;
}

/* Is z (n bytes) "a.b.c.d:port", a node this format writes? The length
** of its host, or 0. */
static size_t spy_address(const char *z, size_t n){
  const char *zColon = NULL;
  for(size_t i=0; i<n; i++) if( z[i]==':' ) zColon = z+i;
  if( zColon==NULL ) return 0;
  size_t nHost = (size_t)(zColon - z), nPort = n - nHost - 1;
  if( !spy_ipv4(z, nHost) || nPort==0 || nPort>5 ) return 0;   /* 65535 */
  if( nPort>1 && zColon[1]=='0' ) return 0;    /* Java writes no 0 first */
  long port = config_number(zColon+1, nPort);
  return port>=0 && port<=65535 ? nHost : 0;
}

/* One address z (n bytes), at line. */
static void spy_server(config_file *f, config_pool *p, const char *z,
                       size_t n, int line){
  int nShow = (int)(n>200 ? 200 : n);
  const char *zColon = NULL;
  for(size_t i=0; i<n; i++) if( z[i]==':' ) zColon = z+i;
  if( zColon==NULL || zColon==z ){
    config_refuse(f, p, "line %d: '%.*s' is not host:port (AddrUtil "
                  "refuses it)", line, nShow, z);
    return;
  }
  size_t nHost = (size_t)(zColon - z);
  long port = config_number(zColon+1, n - nHost - 1);
  if( port<0 || port>65535 ){
    config_refuse(f, p, "line %d: '%.*s' has no port from 0 to 65535",
                  line, nShow, z);
    return;
  }
  if( !spy_ipv4(z, nHost) ){
    config_refuse(f, p, "line %d: '%.*s' is not an IPv4 address: "
                  "spymemcached hashes a host name with the address DNS "
                  "gives it (host/address:port) and an IPv6 address in "
                  "Java's own form, which this text does not hold; give "
                  "the ring its nodes as the client prints them "
                  "(docs/algorithms.md, spymemcached)", line, nShow, z);
    return;
  }
  /* Java drops leading zeros of the port: 011211 is 11211. */
  char zName[40];
  snprintf(zName, sizeof(zName), "%.*s:%ld", (int)nHost, z, port);
  config_node_add(f, p, zName, strlen(zName), 1.0, line);
}

static void spy_read(const char *z, size_t n, config_file *f){
  config_pool *p = config_pool_add(f, "servers", 7, 1);
  if( p==NULL ) return;
  p->algorithm = "spymemcached";
  int line = 1;
  size_t i = 0;
  while( i<n && !p->refusal && !f->nomem ){
    if( spy_separator(z[i]) ){
      if( z[i]=='\n' ) line++;
      i++;
      continue;
    }
    size_t s = i;
    while( i<n && !spy_separator(z[i]) ) i++;
    spy_server(f, p, z+s, i-s, line);
  }
  if( p->n_nodes==0 && !p->refusal && !f->nomem ){
    config_refuse(f, p, "line %d: no addresses (AddrUtil refuses an empty "
                  "list)", line);
  }
}

static int spy_write(const config_pool *p, char **pzOut, char *zErr,
                     size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    if( spy_address(zNode, strlen(zNode))==0 ){
      snprintf(zErr, nErr, "node '%.100s' is not an address AddrUtil reads "
               "back as that string (a.b.c.d:port)", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    config_buf_printf(&b, "%s%s", k ? " " : "", zNode);
  }
  config_buf_append(&b, "\n", 1);
  return config_buf_finish(&b, pzOut);
}

static const char *const spy_write_options[] = { NULL };

const config_format config_spymemcached = {
  .name = "spymemcached",
  .algorithm = "spymemcached",
  .writes = "a spymemcached address list",
  .write_options = spy_write_options,
  .pool_noun = "address list",
  .read = spy_read,
  .write = spy_write,
};

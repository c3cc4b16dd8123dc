/*
** pymemcache_servers.c: format pymemcache, the server list Python
** pymemcache's HashClient takes (3.5; Django's PyMemcacheCache passes its
** LOCATION to it), read as one pool (named "servers") of algorithm
** pymemcache, and written as one.
**
** The text is Django's LOCATION string, servers separated by ',' or ';'
** (as Django splits it), or a server per line, or both. Each server is
** read as pymemcache's normalize_server_spec reads it, and the node named
** as HashClient names it:
**   unix:/path, /path        "/path"      (a unix socket)
**   host, [host]             "host:11211"
**   host:port, [v6]:port     "host:port"  (brackets stripped, the port
**                                          a number: 011211 is 11211)
** Refused, naming the server: what pymemcache would read otherwise than a
** demanding reader expects: a weight (pymemcache has none; "a:11211:2" is
** host "a:11211", port 2), a host with ':' that is not an IPv6 address, a
** space or tab (kept in the host), an empty server between ',' or ';'
** (Django makes it ":11211"), a port that is not 0 to 65535, a relative
** unix socket path, and a server listed twice (as HashClient names it:
** "a" and "a:11211" are one).
**
** Written: the servers in join order, commas between (a LOCATION string),
** "[v6]:port" for an IPv6 host, a unix socket by its path; a node must be
** host:port or /path.
*/
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

/*
** Server z (n bytes, no separator) as HashClient names it, into zOut
** (RING_MAX_NAME + 1 bytes) with its length in *pnOut. NULL, or why it is
** not taken.
*/
static const char *pymemcache_list_parse(const char *z, size_t n, char *zOut,
                                         size_t *pnOut){
  for(size_t i=0; i<n; i++){
    if( (unsigned char)z[i]<=' ' || z[i]==0x7F ){
      return "holds a space or tab, which pymemcache keeps in the host";
    }
  }
  int bUnix = n>=5 && memcmp(z, "unix:", 5)==0;
  if( bUnix ){ z += 5; n -= 5; }
  if( bUnix && (n==0 || z[0]!='/') ){
    return "is a unix socket whose path does not start with / (chash reads "
           "whole paths only)";
  }
  if( n>0 && z[0]=='/' ){
    if( n>RING_MAX_NAME ) return "is a unix socket path too long";
    memcpy(zOut, z, n);
    *pnOut = n;
    return NULL;
  }
  const char *zColon = NULL;
  for(size_t i=0; i<n; i++) if( z[i]==':' ) zColon = z+i;
  size_t nHost = n;
  long port = 11211;
  if( zColon && z[n-1]!=']' ){
    nHost = (size_t)(zColon-z);
    size_t nPort = n-nHost-1;
    port = nPort<=9 ? config_number(zColon+1, nPort) : -1;
    if( port<0 || port>65535 ){
      return "has a port that is not a number from 0 to 65535";
    }
  }
  /* A host that starts with '[' loses every '[' and ']' at its ends. */
  const char *zHost = z;
  if( nHost>0 && zHost[0]=='[' ){
    while( nHost>0 && (zHost[0]=='[' || zHost[0]==']') ){ zHost++; nHost--; }
    while( nHost>0 && (zHost[nHost-1]=='[' || zHost[nHost-1]==']') ) nHost--;
  }
  if( nHost==0 || nHost>RING_MAX_NAME-6 ){
    return "has an empty or too long host (a unix socket path starts "
           "with /)";
  }
  if( memchr(zHost, ':', nHost) ){
    char zAddr[64];
    unsigned char aBin[16];
    snprintf(zAddr, sizeof(zAddr), "%.*s", (int)(nHost<63 ? nHost : 63),
             zHost);
    if( nHost>=63 || inet_pton(AF_INET6, zAddr, aBin)!=1 ){
      return "has a host with ':' that is not an IPv6 address "
             "(pymemcache has no weights: it reads the last ':' as the "
             "port's)";
    }
  }
  *pnOut = (size_t)snprintf(zOut, RING_MAX_NAME+1, "%.*s:%ld", (int)nHost,
                            zHost, port);
  return NULL;
}

static void pymemcache_list_read(const char *z, size_t n, config_file *f){
  config_pool *p = config_pool_add(f, "servers", 7, 1);
  if( p==NULL ) return;
  p->algorithm = "pymemcache";
  int line = 1, iServer = 0;
  char cBefore = '\n';                /* the separator before this server */
  for(size_t i=0; i<=n && !p->refusal && !f->nomem; i++){
    size_t s = i;
    while( i<n && !strchr(",;\r\n", z[i]) ) i++;
    char cAfter = i<n ? z[i] : '\n';
    if( i==s ){
      if( cBefore==',' || cBefore==';' || cAfter==',' || cAfter==';' ){
        config_refuse(f, p, "line %d: an empty server next to '%c' (Django "
                      "would read it as host '' on port 11211)", line,
                      cBefore==',' || cBefore==';' ? cBefore : cAfter);
      }
    }else{
      char zName[RING_MAX_NAME+1];
      size_t nName = 0;
      const char *zWhy = pymemcache_list_parse(z+s, i-s, zName, &nName);
      iServer++;
      if( zWhy ){
        config_refuse(f, p, "line %d: server %d '%.*s' %s", line, iServer,
                      (int)(i-s>200 ? 200 : i-s), z+s, zWhy);
      }else{
        config_node_add(f, p, zName, nName, 1.0, line);
      }
    }
    if( cAfter=='\n' ) line++;
    cBefore = cAfter=='\r' ? '\n' : cAfter;    /* \r\n: one line break */
  }
}

static int pymemcache_list_write(const config_pool *p, char **pzOut,
                                 char *zErr, size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    const char *zColon = strrchr(zNode, ':');
    size_t s = b.n + (k ? 1 : 0);
    if( k ) config_buf_append(&b, ",", 1);
    if( zNode[0]!='/' && zColon && memchr(zNode, ':', (size_t)(zColon-zNode)) ){
      config_buf_printf(&b, "[%.*s]%s", (int)(zColon-zNode), zNode, zColon);
    }else{
      config_buf_append(&b, zNode, strlen(zNode));
    }
    /* What pymemcache reads back must be this node. */
    char zBack[RING_MAX_NAME+1];
    size_t nBack = 0;
    if( !b.nomem && (strpbrk(zNode, ",;") || (zNode[0]!='/' && zColon==NULL)
        || pymemcache_list_parse(b.z+s, b.n-s, zBack, &nBack)
        || nBack!=strlen(zNode) || memcmp(zBack, zNode, nBack)!=0) ){
      snprintf(zErr, nErr, "node '%.100s' is not a server pymemcache names "
               "so: host:port (the port a number from 0 to 65535, without "
               "a leading 0) or a unix socket's /path", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const pymemcache_list_write_options[] = { NULL };

const config_format config_pymemcache = {
  .name = "pymemcache",
  .algorithm = "pymemcache",
  .writes = "a pymemcache server list",
  .write_options = pymemcache_list_write_options,
  .pool_noun = "server list",
  .read = pymemcache_list_read,
  .write = pymemcache_list_write,
};

/*
** nutcracker.c: format nutcracker, twemproxy's YAML configuration (read
** with libyaml), read for its pools and written as one.
**
** The document is a mapping of pool names to pools; each pool is a pool
** of algorithm ketama with:
**   hash          the key hash (default fnv1a_64, twemproxy's); chash's
**                 hash of the same name, each checked against nutcracker
**   hash_tag      two characters, chash's hash_tag
**   distribution  ketama (the default); modula and random are refused
**   servers       a list of "host:port:weight [name]"
** A server is split as twemproxy splits it, from the end: the name after
** the last space, then the weight after the last ':', then the port. Its
** node is named as twemproxy's ketama hashes it: by its name where it has
** one, else "host:port", or the host alone when the port is 11211. Refused,
** naming the line: modula or random, hash crc16 and hashes chash does not
** have, weight 0, unix-socket servers (their naming is not checked),
** duplicate nodes. Other keys (listen, timeout, auto_eject_hosts, redis,
** ...) play no part in placement.
**
** Written: the pool with listen 127.0.0.1:22121 (put your own), its hash,
** distribution ketama, hash_tag, and a server per node: "host:port:W" for
** a node named host:port, "host:11211:W host:11211" for one on port 11211
** (unnamed, twemproxy would hash the host alone), "NAME:11211:W" for any
** other (twemproxy hashes it as NAME), in join order.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_yaml.h"

/* twemproxy's hash names that are chash's hash of the same name. */
static const char *const nutcracker_hashes[] = {
  "fnv1a_64", "md5", "fnv1_64", "fnv1a_32", "fnv1_32", "one_at_a_time",
  "crc32a", "crc32", "murmur", "jenkins", "hsieh", NULL
};

/* The last c in z[0..n), or NULL. */
static const char *nutcracker_rchr(const char *z, size_t n, char c){
  for(size_t i=n; i>0; i--){
    if( z[i-1]==c ) return z+i-1;
  }
  return NULL;
}

/* One server "host:port:weight [name]" of pool p. */
static void nutcracker_server(config_file *f, config_pool *p,
                              const yaml_node_t *node){
  int line = config_yaml_line(node);
  size_t n;
  const char *z = config_yaml_scalar(node, &n);
  if( z==NULL ){
    config_refuse(f, p, "line %d: pool %s: a server is not a string "
                  "host:port:weight [name]", line, p->name);
    return;
  }
  const char *zName = NULL;
  size_t nName = 0, nAddr = n;
  const char *zSpace = nutcracker_rchr(z, n, ' ');
  if( zSpace ){
    zName = zSpace+1;
    nName = n-(size_t)(zName-z);
    nAddr = (size_t)(zSpace-z);
  }
  const char *zW = nutcracker_rchr(z, nAddr, ':');
  const char *zPort = zW ? nutcracker_rchr(z, (size_t)(zW-z), ':') : NULL;
  if( z[0]=='/' ){
    config_refuse(f, p, "line %d: pool %s: server %.*s is a unix socket, "
                  "whose name in twemproxy's ketama chash has not checked",
                  line, p->name, (int)n, z);
    return;
  }
  if( zPort==NULL || zPort==z ){
    config_refuse(f, p, "line %d: pool %s: server '%.*s' is not "
                  "host:port:weight [name]", line, p->name, (int)n, z);
    return;
  }
  long weight = config_number(zW+1, nAddr-(size_t)(zW+1-z));
  long port = config_number(zPort+1, (size_t)(zW-zPort-1));
  if( port<1 || port>65535 || weight<0 ){
    config_refuse(f, p, "line %d: pool %s: server '%.*s': the port is a "
                  "number from 1 to 65535 and the weight a whole number",
                  line, p->name, (int)n, z);
    return;
  }
  if( weight==0 ){
    config_refuse(f, p, "line %d: pool %s: server '%.*s' has weight 0 (no "
                  "points), which chash does not model; remove the line",
                  line, p->name, (int)n, z);
    return;
  }
  if( zName==NULL ){
    zName = z;
    nName = port==11211 ? (size_t)(zPort-z) : (size_t)(zW-z);
  }
  if( nName==0 || nName>RING_MAX_NAME ){
    config_refuse(f, p, "line %d: pool %s: server '%.*s': a name of %zu "
                  "bytes", line, p->name, (int)n, z, nName);
    return;
  }
  config_node_add(f, p, zName, nName, (double)weight, line);
}

/* Pool p from its YAML mapping. */
static void nutcracker_pool(config_file *f, config_pool *p,
                            yaml_document_t *d, yaml_node_t *map){
  if( map->type!=YAML_MAPPING_NODE ){
    config_refuse(f, p, "line %d: pool %s is not a mapping of keys (hash, "
                  "servers, ...)", p->line, p->name);
    return;
  }
  yaml_node_t *dist = config_yaml_get(d, map, "distribution");
  if( dist && !config_yaml_is(dist, "ketama") ){
    size_t n = 0;
    const char *z = config_yaml_scalar(dist, &n);
    config_refuse(f, p, "line %d: pool %s: distribution %.*s is not a ring "
                  "chash reproduces (twemproxy's ketama is; modula is not "
                  "chash's modn: another server order); write distribution: "
                  "ketama to use the ring, which moves most keys once",
                  config_yaml_line(dist), p->name, (int)(z ? n : 1),
                  z ? z : "?");
    return;
  }
  yaml_node_t *hash = config_yaml_get(d, map, "hash");
  const char *zHash = "fnv1a_64";
  if( hash ){
    int i = 0;
    while( nutcracker_hashes[i] && !config_yaml_is(hash, nutcracker_hashes[i]) ){
      i++;
    }
    if( nutcracker_hashes[i]==NULL ){
      size_t n = 0;
      const char *z = config_yaml_scalar(hash, &n);
      config_refuse(f, p, "line %d: pool %s: hash %.*s is not one chash "
                    "reproduces for twemproxy: fnv1a_64, md5, fnv1_64, "
                    "fnv1a_32, fnv1_32, one_at_a_time, crc32a, crc32, murmur, "
                    "jenkins, hsieh", config_yaml_line(hash), p->name,
                    (int)(z ? (n>40 ? 40 : n) : 1), z ? z : "?");
      return;
    }
    zHash = nutcracker_hashes[i];
  }
  config_option_set(p, "hash", zHash, 0);
  yaml_node_t *tag = config_yaml_get(d, map, "hash_tag");
  if( tag ){
    size_t n;
    const char *z = config_yaml_scalar(tag, &n);
    if( z==NULL || n!=2 ){
      config_refuse(f, p, "line %d: pool %s: hash_tag is two characters, "
                    "such as \"{}\"", config_yaml_line(tag), p->name);
      return;
    }
    char zTag[3] = { z[0], z[1], 0 };
    config_option_set(p, "hash_tag", zTag, 0);
  }
  yaml_node_t *servers = config_yaml_get(d, map, "servers");
  if( servers==NULL ) return;
  if( servers->type!=YAML_SEQUENCE_NODE ){
    config_refuse(f, p, "line %d: pool %s: servers is a list",
                  config_yaml_line(servers), p->name);
    return;
  }
  for(yaml_node_item_t *it=servers->data.sequence.items.start;
      it<servers->data.sequence.items.top && !p->refusal && !f->nomem; it++){
    nutcracker_server(f, p, yaml_document_get_node(d, *it));
  }
}

static void nutcracker_read(const char *z, size_t n, config_file *f){
  yaml_document_t d;
  if( config_yaml_load(z, n, &d, f) ) return;
  yaml_node_t *root = yaml_document_get_root_node(&d);
  if( root && root->type!=YAML_MAPPING_NODE ){
    config_fail(f, "line %d: the document is not a mapping of pool names "
                "to pools", config_yaml_line(root));
  }
  for(yaml_node_pair_t *pr=root ? root->data.mapping.pairs.start : NULL;
      root && !f->error[0] && !f->nomem && pr<root->data.mapping.pairs.top;
      pr++){
    yaml_node_t *key = yaml_document_get_node(&d, pr->key);
    size_t nName;
    const char *zName = config_yaml_scalar(key, &nName);
    if( zName==NULL ){
      config_fail(f, "line %d: a pool name is not a string",
                  config_yaml_line(key));
      break;
    }
    config_pool *p = config_pool_add(f, zName, nName, config_yaml_line(key));
    if( p==NULL ) break;
    p->algorithm = "ketama";
    nutcracker_pool(f, p, &d, yaml_document_get_node(&d, pr->value));
  }
  yaml_document_delete(&d);
}

/* ------------------------------------------------------------ writing */

/* Is z (n bytes) all digits? */
static int nutcracker_digits(const char *z, size_t n){
  if( n==0 ) return 0;
  for(size_t i=0; i<n; i++) if( z[i]<'0' || z[i]>'9' ) return 0;
  return 1;
}

/* Can z be written bare in a YAML plain scalar and split back as twemproxy
** splits a server line? */
static int nutcracker_plain(const char *z){
  if( *z==0 || strchr("-?:,[]{}#&*!|>'\"%@`/ ", *z) ) return 0;
  for(; *z; z++){
    if( (unsigned char)*z<=' ' || strchr("#,[]{}", *z) ) return 0;
  }
  return 1;
}

static int nutcracker_write(const config_pool *p, char **pzOut, char *zErr,
                            size_t nErr){
  const char *zHash = config_option_get(p, "hash");
  if( zHash==NULL ) zHash = "md5";         /* chash's ketama default */
  int i = 0;
  while( nutcracker_hashes[i] && strcmp(nutcracker_hashes[i], zHash)!=0 ) i++;
  if( nutcracker_hashes[i]==NULL ){
    snprintf(zErr, nErr, "the ring's hash %s is not one of twemproxy's",
             zHash);
    return CONFIG_ERROR;
  }
  if( !nutcracker_plain(p->name) || strlen(p->name)>CONFIG_YAML_MAX_KEY ){
    snprintf(zErr, nErr, "'%.100s' cannot be written as a pool name (a "
             "plain YAML key of at most %d bytes)", p->name,
             CONFIG_YAML_MAX_KEY);
    return CONFIG_ERROR;
  }
  config_buf b = {0};
  config_buf_printf(&b, "%s:\n  listen: 127.0.0.1:22121\n  hash: %s\n"
                    "  distribution: ketama\n", p->name, zHash);
  const char *zTag = config_option_get(p, "hash_tag");
  if( zTag ){
    config_buf_append(&b, "  hash_tag: ", 12);
    config_buf_json_string(&b, zTag);
    config_buf_append(&b, "\n", 1);
  }
  config_buf_append(&b, "  servers:\n", 11);
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    long long w = 0;
    if( !config_whole_weight(p->nodes[k].weight, &w) ){
      snprintf(zErr, nErr, "node %.100s has weight %g: twemproxy's weights "
               "are whole numbers", zNode, p->nodes[k].weight);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    const char *zColon = strrchr(zNode, ':');
    if( !nutcracker_plain(zNode) || (zColon && (strchr(zNode, ':')!=zColon
        || !nutcracker_digits(zColon+1, strlen(zColon+1)))) ){
      snprintf(zErr, nErr, "node '%.100s' is neither host:port nor a name "
               "twemproxy can hash", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    long port = zColon ? config_number(zColon+1, strlen(zColon+1)) : 0;
    if( zColon && (port<1 || port>65535) ){
      snprintf(zErr, nErr, "node '%.100s': the port is from 1 to 65535",
               zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    if( port==11211 ){
      /* unnamed, twemproxy would hash the host alone */
      config_buf_printf(&b, "   - %s:%lld %s\n", zNode, w, zNode);
    }else if( zColon ){
      config_buf_printf(&b, "   - %s:%lld\n", zNode, w);
    }else{
      config_buf_printf(&b, "   - %s:11211:%lld\n", zNode, w);
    }
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const nutcracker_write_options[] = { "hash", "hash_tag", NULL };

const config_format config_nutcracker = {
  .name = "nutcracker",
  .algorithm = "ketama",
  .writes = "a twemproxy pool",
  .write_options = nutcracker_write_options,
  .pool_noun = "pool",
  .read = nutcracker_read,
  .write = nutcracker_write,
};

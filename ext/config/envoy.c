/*
** envoy.c: format envoy, Envoy's clusters in YAML or JSON (read with
** libyaml, which reads JSON as YAML), read for their ring hash and written
** as one cluster.
**
** The clusters are found where Envoy's files hold them: a bootstrap's
** static_resources.clusters, a top-level clusters or resources list (a CDS
** response), a list of clusters, or one cluster (a mapping with a name).
** Each is a pool of algorithm envoy_ring named by its `name`:
**   lb_policy             RING_HASH (anything else is refused)
**   ring_hash_lb_config   minimum_ring_size (chash's min_ring) and
**                         maximum_ring_size (max_ring), numbers or strings;
**                         hash_function XX_HASH (MURMUR_HASH_2 is refused)
**   load_assignment       endpoints[].lb_endpoints[], in their order across
**                         localities: the nodes, named as Envoy hashes a
**                         host, by the endpoint's `envoy.lb` hash_key
**                         metadata, else its socket address "ip:port"
**                         ("[ip6]:port"), with load_balancing_weight (1 by
**                         default; 0 is refused, as Envoy refuses it)
** Refused, naming the line: a cluster of type STRICT_DNS or LOGICAL_DNS
** (its hosts are what DNS answers), use_hostname_for_hashing, endpoints
** of a priority other than 0, a health_status other than HEALTHY or
** UNKNOWN, locality weights, pipe addresses, load_balancing_policy.
**
** Written: one static cluster in YAML with lb_policy RING_HASH, its ring
** sizes where they are not Envoy's defaults, and an endpoint per node; a
** node must be "ip:port" or "[ip6]:port".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_yaml.h"

/* A node's scalar as a NUL-terminated copy in z (n bytes), or "". */
static const char *envoy_text(const yaml_node_t *node, char *z, size_t n){
  size_t len;
  const char *zValue = config_yaml_scalar(node, &len);
  if( zValue==NULL || len>=n ) len = 0;
  if( len ) memcpy(z, zValue, len);
  z[len] = 0;
  return z;
}

/* A whole number from 1 to max in node (a number or a string), or -1. */
static long long envoy_number(const yaml_node_t *node, long long max){
  char z[32];
  envoy_text(node, z, sizeof(z));
  long long v = 0;
  if( z[0]==0 ) return -1;
  for(const char *p=z; *p; p++){
    if( *p<'0' || *p>'9' || v>max ) return -1;
    v = v*10 + (*p-'0');
  }
  return v>=1 && v<=max ? v : -1;
}

/* The value at a path of keys (NULL-ended) from map. */
static yaml_node_t *envoy_path(yaml_document_t *d, yaml_node_t *map,
                               const char *const *azKey){
  for(int i=0; map && azKey[i]; i++) map = config_yaml_get(d, map, azKey[i]);
  return map;
}

/* One lb_endpoint of pool p. */
static void envoy_endpoint(config_file *f, config_pool *p, yaml_document_t *d,
                           yaml_node_t *ep){
  static const char *const azSocket[] = {
    "endpoint", "address", "socket_address", NULL
  };
  static const char *const azHashKey[] = {
    "metadata", "filter_metadata", "envoy.lb", "hash_key", NULL
  };
  int line = config_yaml_line(ep);
  yaml_node_t *health = config_yaml_get(d, ep, "health_status");
  if( health && !config_yaml_is(health, "HEALTHY")
   && !config_yaml_is(health, "UNKNOWN") ){
    char z[64];
    config_refuse(f, p, "line %d: cluster %s: an endpoint with health_status "
                  "%s, which Envoy keeps off the ring and chash does not "
                  "model; remove it", config_yaml_line(health), p->name,
                  envoy_text(health, z, sizeof(z)));
    return;
  }
  long long weight = 1;
  yaml_node_t *w = config_yaml_get(d, ep, "load_balancing_weight");
  if( w && (weight = envoy_number(w, 1000000000))<1 ){
    config_refuse(f, p, "line %d: cluster %s: load_balancing_weight is a "
                  "whole number from 1 (Envoy refuses 0)",
                  config_yaml_line(w), p->name);
    return;
  }
  char zName[RING_MAX_NAME+1];
  yaml_node_t *key = envoy_path(d, ep, azHashKey);
  if( key ){
    envoy_text(key, zName, sizeof(zName));
  }else{
    yaml_node_t *sa = envoy_path(d, ep, azSocket);
    char zAddr[RING_MAX_NAME-16];
    long long port = envoy_number(config_yaml_get(d, sa, "port_value"), 65535);
    envoy_text(config_yaml_get(d, sa, "address"), zAddr, sizeof(zAddr));
    if( sa==NULL || zAddr[0]==0 || port<1 ){
      config_refuse(f, p, "line %d: cluster %s: an endpoint without a "
                    "socket_address (address and port_value)", line, p->name);
      return;
    }
    snprintf(zName, sizeof(zName), strchr(zAddr, ':') ? "[%s]:%lld"
             : "%s:%lld", zAddr, port);
  }
  if( zName[0]==0 ){
    config_refuse(f, p, "line %d: cluster %s: an empty hash_key", line,
                  p->name);
    return;
  }
  config_node_add(f, p, zName, strlen(zName), (double)weight, line);
}

/* Cluster map as pool p. */
static void envoy_cluster(config_file *f, config_pool *p, yaml_document_t *d,
                          yaml_node_t *map){
  static const char *const azHostname[] = {
    "common_lb_config", "consistent_hashing_lb_config",
    "use_hostname_for_hashing", NULL
  };
  static const char *const azLocality[] = {
    "common_lb_config", "locality_weighted_lb_config", NULL
  };
  char z[64];
  yaml_node_t *policy = config_yaml_get(d, map, "lb_policy");
  yaml_node_t *type = config_yaml_get(d, map, "type");
  yaml_node_t *hostname = envoy_path(d, map, azHostname);
  if( config_yaml_get(d, map, "load_balancing_policy") ){
    config_refuse(f, p, "line %d: cluster %s: load_balancing_policy is not "
                  "read by chash; write lb_policy: RING_HASH and "
                  "ring_hash_lb_config", p->line, p->name);
  }else if( !config_yaml_is(policy, "RING_HASH") ){
    config_refuse(f, p, "line %d: cluster %s: lb_policy %s; chash reproduces "
                  "RING_HASH", policy ? config_yaml_line(policy) : p->line,
                  p->name, policy ? envoy_text(policy, z, sizeof(z))
                  : "ROUND_ROBIN (the default)");
  }else if( config_yaml_is(type, "STRICT_DNS")
         || config_yaml_is(type, "LOGICAL_DNS") ){
    config_refuse(f, p, "line %d: cluster %s: type %s: its hosts are the "
                  "addresses DNS answers, which chash cannot know; list them "
                  "in a STATIC cluster", config_yaml_line(type), p->name,
                  envoy_text(type, z, sizeof(z)));
  }else if( hostname && !config_yaml_is(hostname, "false") ){
    config_refuse(f, p, "line %d: cluster %s: use_hostname_for_hashing is "
                  "not read by chash; name the hosts with hash_key metadata",
                  config_yaml_line(hostname), p->name);
  }else if( envoy_path(d, map, azLocality) ){
    config_refuse(f, p, "line %d: cluster %s: locality weights are not "
                  "modelled by chash", p->line, p->name);
  }
  if( p->refusal ) return;
  yaml_node_t *rh = config_yaml_get(d, map, "ring_hash_lb_config");
  yaml_node_t *fn = config_yaml_get(d, rh, "hash_function");
  if( fn && !config_yaml_is(fn, "XX_HASH") ){
    config_refuse(f, p, "line %d: cluster %s: hash_function %s; chash "
                  "reproduces XX_HASH", config_yaml_line(fn), p->name,
                  envoy_text(fn, z, sizeof(z)));
    return;
  }
  static const char *const azSize[][2] = {
    { "minimum_ring_size", "min_ring" }, { "maximum_ring_size", "max_ring" }
  };
  for(int i=0; i<2; i++){
    yaml_node_t *size = config_yaml_get(d, rh, azSize[i][0]);
    if( size==NULL ) continue;
    /* The range algorithm envoy_ring declares for the option. */
    const ring_option *o = options_own(ring_algorithm_from_name("envoy_ring"),
                                       azSize[i][1]);
    long long v = envoy_number(size, (long long)o->hi);
    if( v<1 ){
      config_refuse(f, p, "line %d: cluster %s: %s is a whole number from 1 "
                    "to %lld", config_yaml_line(size), p->name, azSize[i][0],
                    (long long)o->hi);
      return;
    }
    /* A size equal to the default is left out, as ch_export leaves it. */
    long long vDefault = o->default_text ? atoll(o->default_text)
                                         : (long long)o->hi;
    if( v==vDefault ) continue;
    snprintf(z, sizeof(z), "%lld", v);
    config_option_set(p, azSize[i][1], z, 1);
  }
  yaml_node_t *eps = envoy_path(d, map, (const char *const[]){
                                  "load_assignment", "endpoints", NULL });
  if( eps==NULL || eps->type!=YAML_SEQUENCE_NODE ) return;
  for(yaml_node_item_t *it=eps->data.sequence.items.start;
      it<eps->data.sequence.items.top && !p->refusal && !f->nomem; it++){
    yaml_node_t *loc = yaml_document_get_node(d, *it);
    yaml_node_t *prio = config_yaml_get(d, loc, "priority");
    if( prio && !config_yaml_is(prio, "0") ){
      config_refuse(f, p, "line %d: cluster %s: endpoints of priority %s, "
                    "which Envoy uses only when priority 0 fails and chash "
                    "does not model", config_yaml_line(prio), p->name,
                    envoy_text(prio, z, sizeof(z)));
      return;
    }
    yaml_node_t *lbs = config_yaml_get(d, loc, "lb_endpoints");
    if( lbs==NULL || lbs->type!=YAML_SEQUENCE_NODE ) continue;
    for(yaml_node_item_t *e=lbs->data.sequence.items.start;
        e<lbs->data.sequence.items.top && !p->refusal && !f->nomem; e++){
      envoy_endpoint(f, p, d, yaml_document_get_node(d, *e));
    }
  }
}

static void envoy_read(const char *z, size_t n, config_file *f){
  yaml_document_t d;
  if( config_yaml_load(z, n, &d, f) ) return;
  yaml_node_t *root = yaml_document_get_root_node(&d);
  yaml_node_t *list = root;
  static const char *const azStatic[] = {
    "static_resources", "clusters", NULL
  };
  if( root && root->type==YAML_MAPPING_NODE ){
    list = envoy_path(&d, root, azStatic);
    if( list==NULL ) list = config_yaml_get(&d, root, "clusters");
    if( list==NULL ) list = config_yaml_get(&d, root, "resources");
    if( list==NULL ) list = root;          /* one cluster */
  }
  int nItem = 0;
  yaml_node_item_t *aItem = NULL;
  yaml_node_item_t one = 0;
  if( list && list->type==YAML_SEQUENCE_NODE ){
    aItem = list->data.sequence.items.start;
    nItem = (int)(list->data.sequence.items.top - aItem);
  }else if( list && list->type==YAML_MAPPING_NODE ){
    one = (yaml_node_item_t)(list - d.nodes.start) + 1;
    aItem = &one;
    nItem = 1;
  }
  for(int i=0; i<nItem && !f->error[0] && !f->nomem; i++){
    yaml_node_t *c = yaml_document_get_node(&d, aItem[i]);
    size_t nName;
    const char *zName = config_yaml_scalar(config_yaml_get(&d, c, "name"),
                                           &nName);
    if( zName==NULL ){
      config_fail(f, "line %d: a cluster without a name",
                  config_yaml_line(c));
      break;
    }
    config_pool *p = config_pool_add(f, zName, nName, config_yaml_line(c));
    if( p==NULL ) break;
    p->algorithm = "envoy_ring";
    envoy_cluster(f, p, &d, c);
  }
  yaml_document_delete(&d);
}

/* ------------------------------------------------------------ writing */

/* Split node "ip:port" or "[ip6]:port" into zHost and the port; 0 if it
** is neither. */
static int envoy_split(const char *zNode, char *zHost, size_t nHost,
                       long *pPort){
  const char *zColon = strrchr(zNode, ':');
  if( zColon==NULL || zColon==zNode ) return 0;
  long port = 0;
  for(const char *q=zColon+1; *q; q++){
    if( *q<'0' || *q>'9' || port>65535 ) return 0;
    port = port*10 + (*q-'0');
  }
  if( zColon[1]==0 || port<1 || port>65535 ) return 0;
  size_t n = (size_t)(zColon-zNode);
  const char *zStart = zNode;
  if( zNode[0]=='[' ){
    if( zColon[-1]!=']' ) return 0;
    zStart++;
    n -= 2;
  }
  if( n==0 || n>=nHost ) return 0;
  for(size_t i=0; i<n; i++){
    char c = zStart[i];
    if( !((c>='0' && c<='9') || (c>='a' && c<='f') || (c>='A' && c<='F')
          || c=='.' || c==':') ) return 0;
  }
  memcpy(zHost, zStart, n);
  zHost[n] = 0;
  if( (zNode[0]=='[')!=(strchr(zHost, ':')!=NULL) ) return 0;
  *pPort = port;
  return 1;
}

static int envoy_write(const config_pool *p, char **pzOut, char *zErr,
                       size_t nErr){
  config_buf b = {0};
  config_buf_append(&b, "name: ", 6);
  config_buf_json_string(&b, p->name);
  config_buf_printf(&b, "\ntype: STATIC\nlb_policy: RING_HASH\n");
  const char *zMin = config_option_get(p, "min_ring");
  const char *zMax = config_option_get(p, "max_ring");
  if( zMin || zMax ){
    config_buf_printf(&b, "ring_hash_lb_config:\n");
    if( zMin ) config_buf_printf(&b, "  minimum_ring_size: %s\n", zMin);
    if( zMax ) config_buf_printf(&b, "  maximum_ring_size: %s\n", zMax);
  }
  config_buf_append(&b, "load_assignment:\n  cluster_name: ", 33);
  config_buf_json_string(&b, p->name);
  config_buf_printf(&b, "\n  endpoints:\n  - lb_endpoints:\n");
  for(uint32_t i=0; i<p->n_nodes && !b.nomem; i++){
    char zHost[RING_MAX_NAME+1];
    long port;
    long long w = 0;
    if( !envoy_split(p->nodes[i].name, zHost, sizeof(zHost), &port) ){
      snprintf(zErr, nErr, "node '%.100s' is not ip:port or [ip6]:port, as "
               "a static endpoint is", p->nodes[i].name);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    config_whole_weight(p->nodes[i].weight, &w);
    config_buf_printf(&b, "    - endpoint: {address: {socket_address: "
                      "{address: \"%s\", port_value: %ld}}}\n"
                      "      load_balancing_weight: %lld\n", zHost, port, w);
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const envoy_write_options[] = {
  "min_ring", "max_ring", NULL
};

const config_format config_envoy = {
  .name = "envoy",
  .algorithm = "envoy_ring",
  .writes = "an Envoy RING_HASH cluster",
  .write_options = envoy_write_options,
  .pool_noun = "cluster",
  .read = envoy_read,
  .write = envoy_write,
};

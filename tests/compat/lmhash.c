/*
** tests/compat/lmhash.c: ask the real libmemcached where keys go, with no
** network I/O (memcached_generate_hash only consults the continuum).
**
** Usage: lmhash weighted|ketama [HASH] < input
**        lmhash string|list TEXT < input
**   weighted  MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (MD5 keys, weighted ring)
**   ketama    MEMCACHED_BEHAVIOR_KETAMA, then servers with weights > 1:
**             the weighted ring, keeping the one_at_a_time key hash
**   HASH      then MEMCACHED_BEHAVIOR_HASH: md5, one_at_a_time, fnv1_64,
**             fnv1a_64, fnv1_32, fnv1a_32, crc32, murmur, jenkins
**   string    memcached(TEXT): TEXT is a configuration string
**             (--SERVER=host:port/?weight ...), then KETAMA_WEIGHTED
**   list      memcached_servers_parse(TEXT) pushed, then KETAMA_WEIGHTED
** Input lines: "S host port weight" adds a server; "K hex" prints the
** index (in add order) of the server that owns the key given in hex.
*/
#include <libmemcached-1.0/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; memcached_hash_t h; } hashes[] = {
  { "md5", MEMCACHED_HASH_MD5 },         { "one_at_a_time", MEMCACHED_HASH_DEFAULT },
  { "fnv1_64", MEMCACHED_HASH_FNV1_64 }, { "fnv1a_64", MEMCACHED_HASH_FNV1A_64 },
  { "fnv1_32", MEMCACHED_HASH_FNV1_32 }, { "fnv1a_32", MEMCACHED_HASH_FNV1A_32 },
  { "crc32", MEMCACHED_HASH_CRC },       { "murmur", MEMCACHED_HASH_MURMUR },
  { "jenkins", MEMCACHED_HASH_JENKINS },
};

int main(int argc, char **argv){
  if( argc<2 ) return 2;
  memcached_st *memc;
  if( argc==3 && strcmp(argv[1], "string")==0 ){
    memc = memcached(argv[2], strlen(argv[2]));
    if( memc==NULL ) return 1;
  }else if( argc==3 && strcmp(argv[1], "list")==0 ){
    memc = memcached_create(NULL);
    memcached_server_list_st list = memcached_servers_parse(argv[2]);
    if( list==NULL || memcached_server_push(memc, list)!=MEMCACHED_SUCCESS ){
      return 1;
    }
    memcached_server_list_free(list);
  }else{
    memc = memcached_create(NULL);
  }
  if( argc==3 && (strcmp(argv[1], "string")==0 || strcmp(argv[1], "list")==0) ){
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
  }else if( strcmp(argv[1], "weighted")==0 ){
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
  }else{
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA, 1);
  }
  if( argc>2 && strcmp(argv[1], "string")!=0 && strcmp(argv[1], "list")!=0 ){
    size_t i;
    for(i=0; i<sizeof(hashes)/sizeof(hashes[0]); i++){
      if( strcmp(argv[2], hashes[i].name)==0 ) break;
    }
    if( i==sizeof(hashes)/sizeof(hashes[0]) ) return 2;
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, hashes[i].h);
  }
  static char line[4096];
  static char key[2048];
  while( fgets(line, sizeof(line), stdin) ){
    char host[256];
    unsigned port, weight;
    if( line[0]=='S' && sscanf(line, "S %255s %u %u", host, &port, &weight)==3 ){
      if( memcached_server_add_with_weight(memc, host, port, weight)
          !=MEMCACHED_SUCCESS ) return 1;
    }else if( line[0]=='K' ){
      size_t n = 0;
      for(const char *p=line+2; p[0] && p[1] && p[0]!='\n'; p+=2){
        unsigned b;
        if( sscanf(p, "%2x", &b)!=1 ) return 1;
        key[n++] = (char)b;
      }
      printf("%u\n", memcached_generate_hash(memc, key, n));
    }
  }
  memcached_free(memc);
  return 0;
}

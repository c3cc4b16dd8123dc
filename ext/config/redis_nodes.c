/*
** redis_nodes.c: format redis_nodes, a Redis Cluster's `CLUSTER NODES`
** output (also the lines of a node's nodes.conf), read as one pool named
** "cluster" of algorithm redis_cluster whose masters carry their slots,
** and written as such a listing (Redis 7.0's clusterGenNodeDescription).
**
** A line is `id addr flags master ping-sent pong-recv config-epoch
** link-state slot...`: id 40 hex digits; addr `ip:port@cport[,hostname]`;
** flags a comma list of myself, master, slave, fail?, fail, handshake,
** noaddr, nofailover, noflags; master `-` or its master's id; then three
** numbers and connected or disconnected; each slot a number or
** `first-last`, and `[slot->-id]` (migrating) or `[slot-<-id]` (importing).
**
** The nodes are the masters, in the text's order, named `ip:port` (what
** -MOVED answers name), each with its slots as CLUSTER NODES writes them
** ("0-5460 10923", in order, runs joined; '' for a master serving none).
** A migrating or importing entry changes nothing: the slot is its owner's
** (the master whose ranges hold it) until the migration ends, and -MOVED
** names that owner. A failed master (`fail`, `fail?`) still serving slots
** is kept: the cluster sends its keys there until a replica takes over.
** Left out: replicas, nodes in `handshake`, masters with no address
** (`noaddr`) serving no slot, blank lines and nodes.conf's `vars` line.
** Refused, naming the line: a line that is not a node, a node id or
** address listed twice, an unknown flag, a slot outside 0..16383 or a
** range that runs backwards, a slot that two masters serve (naming both)
** or one lists twice, a replica listing slots, a master with no address
** serving slots, a text with no master.
**
** Written: one line per node in join order, `ID ip:port@cport master - 0 0
** EPOCH connected SLOTS`, the id the SHA-1 of the node's name in hex, the
** bus port the port + 10000 (Redis's default), the epochs 1, 2, ...
*/
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "hash.h"

#define NODES_SLOT_COUNT 16384
#define REDIS_ID 40                          /* hex digits of a node id */
#define NODES_SLOTS_COLUMN 0                 /* redis_cluster's column slots */

/* The words of one line. */
#define REDIS_MAX_WORDS (8 + NODES_SLOT_COUNT)

typedef struct redis_word {
  const char *z;
  size_t n;
} redis_word;

/* What the reader keeps of each node line. */
typedef struct redis_master {
  char zName[300];                           /* ip:port */
  int line;
} redis_master;

/* A node id seen, and its line. */
typedef struct redis_id {
  char z[REDIS_ID];
  int line;
} redis_id;

typedef struct redis_reader {
  config_file *f;
  config_pool *p;
  redis_word *aWord;
  int nWord;
  redis_id *aId;                             /* every node's, in order */
  int nId, nIdAlloc;
  redis_master *aMaster;
  int nMaster, nMasterAlloc;
  uint32_t *aOwner;                          /* slot -> master+1, 0: none */
} redis_reader;

static int redis_hex(const redis_word *w){
  if( w->n!=REDIS_ID ) return 0;
  for(size_t i=0; i<w->n; i++){
    char c = w->z[i];
    if( !((c>='0' && c<='9') || (c>='a' && c<='f')) ) return 0;
  }
  return 1;
}

static int redis_digits(const redis_word *w){
  if( w->n==0 || w->n>20 ) return 0;
  for(size_t i=0; i<w->n; i++) if( w->z[i]<'0' || w->z[i]>'9' ) return 0;
  return 1;
}

static int redis_is(const redis_word *w, const char *z){
  return w->n==strlen(z) && memcmp(w->z, z, w->n)==0;
}

/* Grow *pa (of *pnAlloc items of size sz) to hold n+1; 0 or 1 on OOM. */
static int redis_grow(config_file *f, void **pa, int *pnAlloc, int n,
                      size_t sz){
  if( n<*pnAlloc ) return 0;
  int nNew = *pnAlloc ? *pnAlloc*2 : 16;
  void *aNew = ring_alloc(sz*(size_t)nNew);
  if( aNew==NULL ){ f->nomem = 1; return 1; }
  if( n ) memcpy(aNew, *pa, sz*(size_t)n);
  ring_dealloc(*pa);
  *pa = aNew;
  *pnAlloc = nNew;
  return 0;
}

/* The flags word: sets *pMaster, *pSlave, *pHandshake, *pNoaddr; 1 (and
** the pool's refusal) for an unknown flag. */
static int redis_flags(redis_reader *r, const redis_word *w, int line,
                       int *pMaster, int *pSlave, int *pHandshake,
                       int *pNoaddr){
  static const char *const azKnown[] = {
    "myself", "master", "slave", "fail?", "fail", "handshake", "noaddr",
    "nofailover", "noflags", NULL
  };
  size_t i = 0;
  while( i<=w->n ){
    size_t s = i;
    while( i<w->n && w->z[i]!=',' ) i++;
    redis_word flag = { w->z+s, i-s };
    int k = 0;
    while( azKnown[k] && !redis_is(&flag, azKnown[k]) ) k++;
    if( azKnown[k]==NULL ){
      config_refuse(r->f, r->p, "line %d: flag '%.*s' is not one of "
                    "CLUSTER NODES' (myself, master, slave, fail?, fail, "
                    "handshake, noaddr, nofailover, noflags)", line,
                    (int)(flag.n>100 ? 100 : flag.n), flag.z);
      return 1;
    }
    if( k==1 ) *pMaster = 1;
    if( k==2 ) *pSlave = 1;
    if( k==5 ) *pHandshake = 1;
    if( k==6 ) *pNoaddr = 1;
    i++;
  }
  return 0;
}

/* A slot word "N" or "A-B" into *pFirst, *pLast: NULL, or what is wrong
** with it. */
static const char *redis_slot_range(const redis_word *w, long *pFirst,
                                    long *pLast){
  size_t dash = 0;
  while( dash<w->n && w->z[dash]!='-' ) dash++;
  *pFirst = config_number(w->z, dash);
  *pLast = dash<w->n ? config_number(w->z+dash+1, w->n-dash-1) : *pFirst;
  if( *pFirst<0 || *pLast<0 ){
    return "not a slot, a range first-last or a migration";
  }
  if( *pLast>=NODES_SLOT_COUNT ) return "outside slots 0..16383";
  if( *pFirst>*pLast ) return "a range that runs backwards";
  return NULL;
}

/* [slot->-id] or [slot-<-id]. */
static int redis_migration(const redis_word *w){
  if( w->n<2 || w->z[0]!='[' || w->z[w->n-1]!=']' ) return 0;
  size_t i = 1;
  while( i<w->n && w->z[i]>='0' && w->z[i]<='9' ) i++;
  if( i==1 || w->n-i!=3+REDIS_ID+1 ) return 0;
  if( memcmp(w->z+i, "->-", 3)!=0 && memcmp(w->z+i, "-<-", 3)!=0 ) return 0;
  redis_word id = { w->z+i+3, REDIS_ID };
  return redis_hex(&id);
}

/* The slots of the master now last in r->aMaster, from its words. */
static void nodes_master_slots(redis_reader *r, int line){
  uint32_t me = (uint32_t)r->nMaster;
  for(int i=8; i<r->nWord && !r->p->refusal; i++){
    const redis_word *w = &r->aWord[i];
    if( redis_migration(w) ) continue;
    long first, last;
    const char *zWrong = redis_slot_range(w, &first, &last);
    if( zWrong ){
      config_refuse(r->f, r->p, "line %d: '%.*s' is %s", line,
                    (int)(w->n>100 ? 100 : w->n), w->z, zWrong);
      return;
    }
    for(long s=first; s<=last; s++){
      uint32_t other = r->aOwner[s];
      if( other==me ){
        config_refuse(r->f, r->p, "line %d: master %s lists slot %ld "
                      "twice", line, r->aMaster[me-1].zName, s);
        return;
      }
      if( other ){
        config_refuse(r->f, r->p, "line %d: slot %ld is served by master "
                      "%s and by master %s (line %d): a slot has one "
                      "master", line, s, r->aMaster[me-1].zName,
                      r->aMaster[other-1].zName, r->aMaster[other-1].line);
        return;
      }
      r->aOwner[s] = me;
    }
  }
}

/* One line of words (r->aWord). */
static void redis_line(redis_reader *r, int line){
  redis_word *w = r->aWord;
  if( r->nWord<8 || !redis_hex(&w[0]) || !(redis_is(&w[3], "-")
      || redis_hex(&w[3])) || !redis_digits(&w[4]) || !redis_digits(&w[5])
      || !redis_digits(&w[6]) || !(redis_is(&w[7], "connected")
      || redis_is(&w[7], "disconnected")) ){
    config_refuse(r->f, r->p, "line %d: not a CLUSTER NODES line (id "
                  "ip:port@cport flags master ping-sent pong-recv "
                  "config-epoch link-state slot...)", line);
    return;
  }
  for(int i=0; i<r->nId; i++){
    if( memcmp(r->aId[i].z, w[0].z, REDIS_ID)==0 ){
      config_refuse(r->f, r->p, "line %d: node %.40s is listed twice (the "
                    "first time at line %d)", line, w[0].z, r->aId[i].line);
      return;
    }
  }
  if( redis_grow(r->f, (void **)&r->aId, &r->nIdAlloc, r->nId,
                 sizeof(redis_id)) ) return;
  memcpy(r->aId[r->nId].z, w[0].z, REDIS_ID);
  r->aId[r->nId++].line = line;

  /* ip:port@cport[,hostname]: the name is ip:port */
  const redis_word *a = &w[1];
  size_t at = 0, colon = 0;
  while( at<a->n && a->z[at]!='@' ) at++;
  for(size_t i=0; i<at; i++) if( a->z[i]==':' ) colon = i+1;
  redis_word port = { a->z+colon, at-colon };
  long nPort = colon ? config_number(port.z, port.n) : -1;
  if( at==a->n || colon==0 || nPort<0 || nPort>65535 || at>255 ){
    config_refuse(r->f, r->p, "line %d: '%.*s' is not an address "
                  "ip:port@cport", line, (int)(a->n>100 ? 100 : a->n), a->z);
    return;
  }
  int bMaster = 0, bSlave = 0, bHandshake = 0, bNoaddr = 0;
  if( redis_flags(r, &w[2], line, &bMaster, &bSlave, &bHandshake,
                  &bNoaddr) ) return;
  int bSlots = 0;
  for(int i=8; i<r->nWord; i++) bSlots |= !redis_migration(&w[i]);
  if( bHandshake ) return;                   /* not yet a member */
  if( bSlave || !bMaster ){
    if( bSlots ){
      config_refuse(r->f, r->p, "line %d: node %.*s is %s but lists slots",
                    line, (int)at, a->z, bSlave ? "a replica" : "no master");
    }else if( !bSlave ){
      config_refuse(r->f, r->p, "line %d: node %.*s is neither master nor "
                    "slave", line, (int)at, a->z);
    }
    return;
  }
  if( bNoaddr || colon==1 || nPort==0 ){
    if( bSlots ){
      config_refuse(r->f, r->p, "line %d: master %.40s serves slots but "
                    "its address is unknown (%.*s): read CLUSTER NODES "
                    "again once the cluster knows it", line, w[0].z,
                    (int)at, a->z);
    }
    return;
  }
  for(int i=0; i<r->nMaster; i++){
    const char *zOther = r->aMaster[i].zName;
    if( strlen(zOther)==at && memcmp(zOther, a->z, at)==0 ){
      config_refuse(r->f, r->p, "line %d: address %s is listed twice (the "
                    "first time at line %d)", line, zOther,
                    r->aMaster[i].line);
      return;
    }
  }
  if( redis_grow(r->f, (void **)&r->aMaster, &r->nMasterAlloc, r->nMaster,
                 sizeof(redis_master)) ) return;
  redis_master *m = &r->aMaster[r->nMaster++];
  snprintf(m->zName, sizeof(m->zName), "%.*s", (int)at, a->z);
  m->line = line;
  nodes_master_slots(r, line);
}

/* Each master's slots as CLUSTER NODES writes them, then the nodes. */
static void redis_nodes_add(redis_reader *r){
  config_buf *aBuf = ring_alloc(sizeof(config_buf)*(size_t)r->nMaster);
  if( aBuf==NULL ){ r->f->nomem = 1; return; }
  memset(aBuf, 0, sizeof(config_buf)*(size_t)r->nMaster);
  for(long s=0; s<NODES_SLOT_COUNT; ){
    uint32_t k = r->aOwner[s];
    long e = s;
    while( e+1<NODES_SLOT_COUNT && r->aOwner[e+1]==k ) e++;
    if( k ){
      config_buf *b = &aBuf[k-1];
      if( s==e ) config_buf_printf(b, "%s%ld", b->n ? " " : "", s);
      else config_buf_printf(b, "%s%ld-%ld", b->n ? " " : "", s, e);
    }
    s = e+1;
  }
  for(int k=0; k<r->nMaster && !r->f->nomem; k++){
    if( aBuf[k].nomem ){ r->f->nomem = 1; break; }
    const redis_master *m = &r->aMaster[k];
    if( config_node_add(r->f, r->p, m->zName, strlen(m->zName), 1.0,
                        m->line) ) break;
    if( config_node_column(r->f, r->p, NODES_SLOTS_COLUMN,
                           aBuf[k].z ? aBuf[k].z : "", aBuf[k].n) ) break;
  }
  for(int k=0; k<r->nMaster; k++) ring_dealloc(aBuf[k].z);
  ring_dealloc(aBuf);
}

static void redis_nodes_read(const char *z, size_t n, config_file *f){
  redis_reader r;
  memset(&r, 0, sizeof(r));
  r.f = f;
  r.p = config_pool_add(f, "cluster", 7, 1);
  if( r.p==NULL ) return;
  r.p->algorithm = "redis_cluster";
  r.aWord = ring_alloc(sizeof(redis_word)*REDIS_MAX_WORDS);
  r.aOwner = ring_alloc(sizeof(uint32_t)*NODES_SLOT_COUNT);
  if( r.aWord==NULL || r.aOwner==NULL ){
    f->nomem = 1;
    goto done;
  }
  memset(r.aOwner, 0, sizeof(uint32_t)*NODES_SLOT_COUNT);
  int line = 0;
  size_t i = 0;
  while( i<n && !r.p->refusal && !f->nomem ){
    size_t s = i;
    while( i<n && z[i]!='\n' ) i++;
    size_t e = i++;
    line++;
    if( e>s && z[e-1]=='\r' ) e--;
    r.nWord = 0;
    for(size_t k=s; k<e; ){
      while( k<e && (z[k]==' ' || z[k]=='\t') ) k++;
      size_t ws = k;
      while( k<e && z[k]!=' ' && z[k]!='\t' ) k++;
      if( k==ws ) break;
      if( r.nWord==REDIS_MAX_WORDS ){
        config_refuse(f, r.p, "line %d: more than %d words", line,
                      REDIS_MAX_WORDS);
        break;
      }
      r.aWord[r.nWord].z = z+ws;
      r.aWord[r.nWord++].n = k-ws;
    }
    if( r.p->refusal || r.nWord==0 ) continue;
    if( redis_is(&r.aWord[0], "vars") ) continue;   /* nodes.conf */
    redis_line(&r, line);
  }
  if( !r.p->refusal && !f->nomem ){
    if( r.nMaster==0 ) config_fail(f, "the text lists no master (CLUSTER "
                                   "NODES output: a line per node)");
    else redis_nodes_add(&r);
  }
done:
  ring_dealloc(r.aWord);
  ring_dealloc(r.aOwner);
  ring_dealloc(r.aId);
  ring_dealloc(r.aMaster);
}

/* The hex SHA-1 of z: a node id that is the same for the same name. */
static void redis_node_id(const char *z, char zId[REDIS_ID+1]){
  unsigned char digest[20];
  hash_sha1(z, strlen(z), digest);
  for(int i=0; i<20; i++) snprintf(zId+2*i, 3, "%02x", digest[i]);
}

static int redis_nodes_write(const config_pool *p, char **pzOut, char *zErr,
                             size_t nErr){
  config_buf b = {0};
  for(uint32_t k=0; k<p->n_nodes && !b.nomem; k++){
    const char *zNode = p->nodes[k].name;
    const char *zSlots = p->nodes[k].columns[NODES_SLOTS_COLUMN];
    const char *zColon = strrchr(zNode, ':');
    long port = zColon ? config_number(zColon+1, strlen(zColon+1)) : -1;
    if( zColon==NULL || zColon==zNode || port<1 || port>65535
        || strpbrk(zNode, " \t\r\n@,") ){
      snprintf(zErr, nErr, "node '%.100s' is not ip:port", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    if( zSlots==NULL ){
      snprintf(zErr, nErr, "node %.100s has no slots: CLUSTER NODES lists "
               "a map, and this ring is the layout `redis-cli --cluster "
               "create` makes of its masters in join order", zNode);
      ring_dealloc(b.z);
      return CONFIG_ERROR;
    }
    char zId[REDIS_ID+1];
    redis_node_id(zNode, zId);
    /* The bus port is the port + 10000 unless set otherwise; 0 where that
    ** is no port. */
    long bus = port+10000<=65535 ? port+10000 : 0;
    config_buf_printf(&b, "%s %s@%ld master - 0 0 %u connected%s%s\n", zId,
                      zNode, bus, k+1, zSlots[0] ? " " : "", zSlots);
  }
  return config_buf_finish(&b, pzOut);
}

static const char *const redis_nodes_write_options[] = { NULL };

const config_format config_redis_nodes = {
  .name = "redis_nodes",
  .algorithm = "redis_cluster",
  .writes = "a CLUSTER NODES listing",
  .write_options = redis_nodes_write_options,
  .pool_noun = "cluster",
  .read = redis_nodes_read,
  .write = redis_nodes_write,
};

/*
** ring_cache.c: a small least-recently-used cache of built rings, keyed by
** bytes. The connection keeps two (spec.c): built rings by table and
** version, and specs resolved to rings. Each entry holds one reference to
** its ring (and a statement of the caller's, finalized with it); what makes
** an entry still valid (a tag, a table's stamp) is for the caller to check.
*/
#include <string.h>

#include "sqlite_layer.h"

void ring_cache_entry_clear(ring_cache_entry *e){
  sqlite3_finalize(e->pCheck);
  sqlite3_free(e->zKey);
  spec_table_free(&e->where);
  ring_release(e->ring);
  memset(e, 0, sizeof(*e));
}

void ring_cache_clear(ring_cache *c){
  for(int i=0; i<c->n; i++) ring_cache_entry_clear(&c->a[i]);
}

ring_cache_entry *ring_cache_find(ring_cache *c, const char *zKey, int nKey){
  for(int i=0; i<c->n; i++){
    ring_cache_entry *e = &c->a[i];
    if( e->zKey && e->nKey==nKey && memcmp(e->zKey, zKey, nKey)==0 ){
      e->last_use = ++c->clock;
      return e;
    }
  }
  return NULL;
}

ring_cache_entry *ring_cache_find_tagged(ring_cache *c, char cTag,
                                         const char *z, int n){
  for(int i=0; i<c->n; i++){
    ring_cache_entry *e = &c->a[i];
    if( e->zKey && e->nKey==n+1 && e->zKey[0]==cTag
     && memcmp(e->zKey+1, z, n)==0 ){
      e->last_use = ++c->clock;
      return e;
    }
  }
  return NULL;
}

void ring_cache_put(ring_cache *c, ring_cache_entry *pNew){
  ring_cache_entry *pSlot = &c->a[0];
  for(int i=0; i<c->n; i++){
    ring_cache_entry *e = &c->a[i];
    if( e->zKey==NULL
     || (e->nKey==pNew->nKey && memcmp(e->zKey, pNew->zKey, e->nKey)==0) ){
      pSlot = e;
      break;
    }
    if( e->last_use<pSlot->last_use ) pSlot = e;
  }
  ring_cache_entry_clear(pSlot);
  *pSlot = *pNew;
  pSlot->born = pSlot->last_use = ++c->clock;
  memset(pNew, 0, sizeof(*pNew));
}

int ring_cache_entry_init(ring_cache_entry *e, const char *zKey, int nKey,
                          ring *r){
  memset(e, 0, sizeof(*e));
  e->zKey = sqlite3_malloc64(nKey ? nKey : 1);
  if( e->zKey==NULL ) return SQLITE_NOMEM;
  memcpy(e->zKey, zKey, nKey);
  e->nKey = nKey;
  e->ring = r;
  ring_retain(r);
  return SQLITE_OK;
}

/*
** json_spec.c: inline JSON ring specs, read with SQLite's own JSON
** functions:
**
**   '["a", "b", "c"]'                          nodes of weight 1
**   '{"nodes": {"a": 1, "b": 2}, "vnodes": 300}' nodes with weights, and
**                                              any table option
**   '{"algorithm": "cassandra", "nodes": {"a": {"tokens": "-9 0 9",
**     "dc": "dc1"}}}'                          a node as an object: its
**                                              weight and the algorithm's
**                                              columns (algo.h)
**
** Options are strings or integers, checked as in CREATE VIRTUAL TABLE.
** Column values are strings (or integers, as their text), checked as the
** ring table checks them, when the ring is built.
*/
#include <stdio.h>
#include <string.h>

#include "sqlite_layer.h"

/* Run a one-row query on the JSON text z; NULL on error, in *pzErr
** unless out of memory (SQLite's JSON functions can be missing: a build
** without them, or sqlite3_drop_modules taking json_each). */
static sqlite3_stmt *json_query(sqlite3 *db, const char *zSql, const char *z,
                                int n, int *pRc, char **pzErr){
  sqlite3_stmt *pStmt = NULL;
  *pRc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  if( *pRc!=SQLITE_OK ){
    if( *pRc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("JSON ring spec: SQLite cannot read JSON "
                               "here: %s", sqlite3_errmsg(db));
    }
    return NULL;
  }
  sqlite3_bind_text(pStmt, 1, z, n, SQLITE_STATIC);
  return pStmt;
}

/* A node's name and column values, copied into one allocation that
** x->name points to. */
static int json_node_copy(ring_input *x, const char *zName, int nName,
                          unsigned nColumns){
  size_t nText = (size_t)nName + 1;
  for(unsigned i=0; i<nColumns; i++){
    if( x->columns[i] ) nText += x->column_len[i] + 1;
  }
  char *z = sqlite3_malloc64(nText);
  if( z==NULL ) return SQLITE_NOMEM;
  memcpy(z, zName, (size_t)nName);
  z[nName] = 0;
  x->name = z;
  x->name_len = (uint32_t)nName;
  z += nName + 1;
  for(unsigned i=0; i<nColumns; i++){
    if( x->columns[i]==NULL ) continue;
    memcpy(z, x->columns[i], x->column_len[i]);
    z[x->column_len[i]] = 0;
    x->columns[i] = z;
    z += x->column_len[i] + 1;
  }
  return SQLITE_OK;
}

/* Free the column values json_node_object copied into x. */
static void json_node_values_free(ring_input *x){
  for(int i=0; i<RING_MAX_COLUMNS; i++){
    sqlite3_free((char *)x->columns[i]);
    x->columns[i] = NULL;
  }
}

/*
** A node given as an object, {"weight": 2, "tokens": "..."}: its weight
** and column values into x (the values copied: json_node_values_free).
** zNode names it in messages.
*/
static int json_node_object(sqlite3 *db, const ring_config *cfg,
                            const char *zObject, const char *zNode,
                            ring_input *x, char **pzErr){
  int rc;
  sqlite3_stmt *pStmt = json_query(db,
      "SELECT key, type, value FROM json_each(?1)", zObject, -1, &rc, pzErr);
  if( pStmt==NULL ) return rc;
  x->weight = 1.0;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 1);
    if( zKey==NULL || zType==NULL ){ rc = SQLITE_NOMEM; break; }
    int bNumber = strcmp(zType, "integer")==0 || strcmp(zType, "real")==0;
    int iCol = ring_column_find(cfg, zKey);
    if( strcmp(zKey, "weight")==0 ){
      if( !bNumber ){
        *pzErr = sqlite3_mprintf("JSON ring spec: the weight of node "
                                 CHASH_ECHO " is not a number", zNode,
                                 chash_cut_mark(zNode));
        rc = SQLITE_ERROR;
        break;
      }
      x->weight = sqlite3_column_double(pStmt, 2);
    }else if( iCol<0 ){
      char zList[100];
      *pzErr = sqlite3_mprintf("JSON ring spec: node " CHASH_ECHO ": "
                               "algorithm %s has no column %!.40Q; a node "
                               "object holds weight and the algorithm's "
                               "columns (%s)", zNode, chash_cut_mark(zNode),
                               cfg->algo->name, zKey,
                               ring_column_list(cfg, zList, sizeof(zList)));
      rc = SQLITE_ERROR;
      break;
    }else if( strcmp(zType, "null")==0 ){
      /* as if not given */
    }else if( strcmp(zType, "text")!=0 && strcmp(zType, "integer")!=0 ){
      *pzErr = sqlite3_mprintf("JSON ring spec: node " CHASH_ECHO ": %s "
                               "must be a string", zNode,
                               chash_cut_mark(zNode), zKey);
      rc = SQLITE_ERROR;
      break;
    }else{
      /* Copied now: the next step frees this row's text. */
      const char *z = (const char *)sqlite3_column_text(pStmt, 2);
      int n = sqlite3_column_bytes(pStmt, 2);
      sqlite3_free((char *)x->columns[iCol]);
      x->columns[iCol] = z ? sqlite3_mprintf("%.*s", n, z) : NULL;
      x->column_len[iCol] = (uint32_t)n;
      if( x->columns[iCol]==NULL ){ rc = SQLITE_NOMEM; break; }
    }
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Read the "nodes" of a JSON spec (zPath: "$" or "$.nodes") into a node
** list, for a ring of cfg. */
static int json_nodes(sqlite3 *db, const char *z, int n, const char *zPath,
                      const ring_config *cfg, ring_input **paInput,
                      uint32_t *pnInput, char **pzErr){
  int rc;
  char *zSql = sqlite3_mprintf("SELECT key, type, value, json_type(?1, %Q)"
                               " FROM json_each(?1, %Q)", zPath, zPath);
  if( zSql==NULL ) return SQLITE_NOMEM;
  sqlite3_stmt *pStmt = json_query(db, zSql, z, n, &rc, pzErr);
  sqlite3_free(zSql);
  if( pStmt==NULL ) return rc;
  ring_input *aInput = NULL;
  uint32_t nInput = 0;
  unsigned nColumns = ring_columns(cfg);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zContainer = (const char *)sqlite3_column_text(pStmt, 3);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 1);
    int bArray = zContainer && strcmp(zContainer, "array")==0;
    int iName = bArray ? 2 : 0;
    if( zType==NULL ){ rc = SQLITE_NOMEM; break; }
    if( nInput>=RING_MAX_NODES ){
      *pzErr = sqlite3_mprintf("too many nodes: at most %d", RING_MAX_NODES);
      rc = SQLITE_ERROR;
      break;
    }
    if( bArray && strcmp(zType, "text")!=0 ){
      /* [["a", 2]] is the likely mistake: weights go in the object form. */
      const char *zValue = (const char *)sqlite3_column_text(pStmt, 2);
      if( zValue==NULL && strcmp(zType, "null")!=0 ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("JSON ring spec: nodes[%d] is not a string: "
                               "%.40s; nodes is an array of names, or an "
                               "object {name: weight} to give weights, e.g. "
                               "{\"nodes\": {\"a\": 2, \"b\": 1}}",
                               (int)nInput, zValue ? zValue : "null");
      rc = SQLITE_ERROR;
      break;
    }
    int bObject = !bArray && strcmp(zType, "object")==0;
    if( !bArray && !bObject && strcmp(zType, "integer")!=0
     && strcmp(zType, "real")!=0 ){
      const char *zNode = (const char *)sqlite3_column_text(pStmt, 0);
      if( zNode==NULL ){ rc = SQLITE_NOMEM; break; }
      *pzErr = sqlite3_mprintf("JSON ring spec: the weight of node "
                               CHASH_ECHO " is not a number", zNode,
                               chash_cut_mark(zNode));
      rc = SQLITE_ERROR;
      break;
    }
    const char *zName = (const char *)sqlite3_column_text(pStmt, iName);
    int nName = sqlite3_column_bytes(pStmt, iName);
    ring_input *aNew = sqlite3_realloc64(aInput, sizeof(ring_input)*(nInput+1));
    if( aNew ) aInput = aNew;
    if( zName==NULL || aNew==NULL ){ rc = SQLITE_NOMEM; break; }
    ring_input *x = &aInput[nInput];
    memset(x, 0, sizeof(*x));
    ring_input values;
    memset(&values, 0, sizeof(values));
    if( bObject ){
      const char *zObject = (const char *)sqlite3_column_text(pStmt, 2);
      rc = zObject ? json_node_object(db, cfg, zObject, zName, &values, pzErr)
                   : SQLITE_NOMEM;
    }else{
      values.weight = bArray ? 1.0 : sqlite3_column_double(pStmt, 2);
    }
    if( rc==SQLITE_ROW || rc==SQLITE_OK ){
      *x = values;
      rc = json_node_copy(x, zName, nName, nColumns);
      if( rc!=SQLITE_OK ) x->name = NULL;
    }
    json_node_values_free(&values);
    if( rc!=SQLITE_OK ) break;
    rc = SQLITE_ROW;
    nInput++;
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  *paInput = aInput;
  *pnInput = nInput;
  return rc;
}

void json_spec_free(ring_input *aInput, uint32_t n){
  for(uint32_t i=0; i<n; i++) sqlite3_free((char *)aInput[i].name);
  sqlite3_free(aInput);
}

/* Apply the options of a JSON object spec (every key but "nodes"). */
static int json_options(sqlite3 *db, const char *z, int n, ring_config *cfg,
                        int *pbNodes, char **pzErr){
  int rc;
  sqlite3_stmt *pStmt = json_query(db,
      "SELECT key, type, value FROM json_each(?1)", z, n, &rc, pzErr);
  if( pStmt==NULL ) return rc;
  options_given given;
  char zMsg[512];
  memset(&given, 0, sizeof(given));
  *pbNodes = 0;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    /* The value's type first: reading it as text converts it. */
    int eValue = sqlite3_column_type(pStmt, 2);
    const char *zKey = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 1);
    const char *zValue = (const char *)sqlite3_column_text(pStmt, 2);
    if( zKey==NULL || zType==NULL ){ rc = SQLITE_NOMEM; break; }
    if( strcmp(zKey, "nodes")==0 ){
      if( strcmp(zType, "array")!=0 && strcmp(zType, "object")!=0 ){
        *pzErr = sqlite3_mprintf("JSON ring spec: nodes must be an array of "
                                 "names or an object {name: weight} (or "
                                 "{name: {\"weight\": w, column: value}})");
        rc = SQLITE_ERROR;
        break;
      }
      /* json_extract would read the first and drop the rest unseen. */
      if( *pbNodes ){
        *pzErr = sqlite3_mprintf("JSON ring spec: \"nodes\" is given more "
                                 "than once");
        rc = SQLITE_ERROR;
        break;
      }
      *pbNodes = 1;
      continue;
    }
    if( strcmp(zType, "integer")==0 && eValue==SQLITE_FLOAT ){
      /* SQLite's JSON reads an integer above 2^63-1 as a REAL, which has
      ** lost its last digits. */
      *pzErr = sqlite3_mprintf("JSON ring spec: option %!.60s%s is a number "
                               "above 9223372036854775807, which a JSON "
                               "number cannot carry exactly: write it as a "
                               "string, e.g. \"%!.60s\": "
                               "\"18446744073709551615\"",
                               zKey, chash_cut_mark(zKey), zKey);
      rc = SQLITE_ERROR;
      break;
    }
    if( strcmp(zType, "text")!=0 && strcmp(zType, "integer")!=0 ){
      *pzErr = sqlite3_mprintf("JSON ring spec: option %!.60s%s must be a "
                               "string or an integer", zKey,
                               chash_cut_mark(zKey));
      rc = SQLITE_ERROR;
      break;
    }
    if( zValue==NULL ){ rc = SQLITE_NOMEM; break; }
    if( options_set(cfg, &given, zKey, zValue, zMsg, sizeof(zMsg)) ){
      *pzErr = sqlite3_mprintf("JSON ring spec: %s", zMsg);
      rc = SQLITE_ERROR;
      break;
    }
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
    if( options_finish(cfg, &given, zMsg, sizeof(zMsg)) ){
      *pzErr = sqlite3_mprintf("JSON ring spec: %s", zMsg);
      rc = SQLITE_ERROR;
    }
  }
  return rc;
}

/* Does JSON text z hold the escape \u0000? SQLite's JSON functions end a
** string there, which would cut a node name short without a word. */
static int json_has_nul_escape(const char *z, int n){
  for(int i=0; i+1<n; i++){
    if( z[i]!='\\' ) continue;
    if( z[i+1]=='u' && i+5<n && memcmp(&z[i+2], "0000", 4)==0 ) return 1;
    i++;                                  /* skip the escaped character */
  }
  return 0;
}

int json_spec_read(sqlite3 *db, const char *z, int n, ring_config *cfg,
                   ring_input **paInput, uint32_t *pnInput, char **pzErr){
  *paInput = NULL;
  *pnInput = 0;
  ring_config_default(cfg);
  if( json_has_nul_escape(z, n) ){
    *pzErr = sqlite3_mprintf("JSON ring spec: node names cannot contain NUL "
                             "(\\u0000)");
    return SQLITE_ERROR;
  }
  int rc;
  /* json_type() fails with SQLITE_ERROR on malformed JSON, and with
  ** SQLITE_NOMEM when memory runs out (json_valid() would say 0 for both). */
  sqlite3_stmt *pStmt = json_query(db, "SELECT json_type(?1)", z, n, &rc,
                                   pzErr);
  if( pStmt==NULL ) return rc;
  char zType[8] = "";                 /* stays empty: malformed */
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    const char *zJsonType = (const char *)sqlite3_column_text(pStmt, 0);
    if( zJsonType ) snprintf(zType, sizeof(zType), "%s", zJsonType);
    rc = zJsonType ? SQLITE_OK : SQLITE_NOMEM;
  }else if( rc==SQLITE_ERROR ){
    rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( strcmp(zType, "array")==0 ){
    return json_nodes(db, z, n, "$", cfg, paInput, pnInput, pzErr);
  }
  if( strcmp(zType, "object")==0 ){
    int bNodes = 0;
    rc = json_options(db, z, n, cfg, &bNodes, pzErr);
    if( rc==SQLITE_OK && !bNodes ){
      *pzErr = sqlite3_mprintf("JSON ring spec has no \"nodes\"");
      rc = SQLITE_ERROR;
    }
    if( rc==SQLITE_OK ){
      rc = json_nodes(db, z, n, "$.nodes", cfg, paInput, pnInput, pzErr);
    }
    return rc;
  }
  *pzErr = sqlite3_mprintf("malformed JSON ring spec: %.*s%s",
                           n>60 ? 60 : n, z, n>60 ? "..." : "");
  return SQLITE_ERROR;
}

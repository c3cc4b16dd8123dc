/*
** catalog.c: which tables of a connection are chash rings. A table is a
** ring when its schema row is a CREATE VIRTUAL TABLE ... USING chash
** statement (read token by token: names may be quoted); schemas are
** searched in SQLite's order, temp, main, then the attached ones.
*/
#include <ctype.h>
#include <string.h>

#include "sqlite_layer.h"

/* Skip one SQL token of a name: "quoted", [quoted], `quoted`, 'quoted' or
** a bare identifier. */
static const char *skip_name(const char *z){
  char q = *z;
  if( q=='"' || q=='`' || q=='\'' || q=='[' ){
    char end = q=='[' ? ']' : q;
    for(z++; *z; z++){
      if( *z==end ){
        if( end!=']' && z[1]==end ){ z++; continue; }
        return z+1;
      }
    }
    return z;
  }
  while( *z && (isalnum((unsigned char)*z) || *z=='_' || *z=='$'
                || (unsigned char)*z>=0x80) ) z++;
  return z;
}

/* Does the CREATE statement zSql create a chash virtual table? */
static int is_chash_sql(const char *zSql){
  static const char zPrefix[] = "CREATE VIRTUAL TABLE";
  if( sqlite3_strnicmp(zSql, zPrefix, sizeof(zPrefix)-1) ) return 0;
  const char *z = zSql + sizeof(zPrefix)-1;
  while( isspace((unsigned char)*z) ) z++;
  z = skip_name(z);                                 /* [schema.]name */
  while( isspace((unsigned char)*z) ) z++;
  if( *z=='.' ){
    z++;
    while( isspace((unsigned char)*z) ) z++;
    z = skip_name(z);
    while( isspace((unsigned char)*z) ) z++;
  }
  if( sqlite3_strnicmp(z, "USING", 5) || !isspace((unsigned char)z[5]) ) return 0;
  z += 5;
  while( isspace((unsigned char)*z) ) z++;
  if( sqlite3_strnicmp(z, "chash", 5) ) return 0;
  z += 5;
  return *z==0 || *z=='(' || isspace((unsigned char)*z);
}

int catalog_find_ring(sqlite3 *db, const char *zSchema, const char *zName,
                          char **pzName){
  sqlite3_stmt *pStmt = NULL;
  *pzName = NULL;
  int rc = chash_prepare_fmt(db, &pStmt, 0,
      "SELECT name, sql FROM \"%w\".sqlite_schema WHERE type='table'"
      " AND name=?1 COLLATE NOCASE", zSchema);
  if( rc!=SQLITE_OK ) return -rc;
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  int found = 0;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    const char *zSql = (const char *)sqlite3_column_text(pStmt, 1);
    found = zSql && is_chash_sql(zSql) ? 1 : 2;
    *pzName = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
    rc = *pzName ? SQLITE_OK : SQLITE_NOMEM;
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_OK ? found : -rc;
}

void catalog_free_schemas(char **azSchema, int n){
  for(int i=0; i<n; i++) sqlite3_free(azSchema[i]);
  sqlite3_free(azSchema);
}

int catalog_list_schemas(sqlite3 *db, char ***pazSchema, int *pn){
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &pStmt, NULL);
  if( rc!=SQLITE_OK ) return rc;
  char **az = NULL;
  int n = 0;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *z = (const char *)sqlite3_column_text(pStmt, 1);
    char **azNew = sqlite3_realloc64(az, sizeof(char *)*(n+1));
    char *zCopy = z ? sqlite3_mprintf("%s", z) : NULL;
    if( azNew==NULL || zCopy==NULL ){
      sqlite3_free(zCopy);
      if( azNew ) az = azNew;
      rc = SQLITE_NOMEM;
      break;
    }
    az = azNew;
    /* temp goes first */
    if( sqlite3_stricmp(zCopy, "temp")==0 ){
      memmove(&az[1], &az[0], sizeof(char *)*n);
      az[0] = zCopy;
    }else{
      az[n] = zCopy;
    }
    n++;
  }
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_DONE ){
    catalog_free_schemas(az, n);
    return rc==SQLITE_ROW ? SQLITE_ERROR : rc;
  }
  *pazSchema = az;
  *pn = n;
  return SQLITE_OK;
}

/* Append part z of a ring spec inside a message's single quotes (a quote
** doubled), as an identifier in double quotes if bQuote (a double quote
** doubled too). */
static void append_spec_part(sqlite3_str *pOut, const char *z, int bQuote){
  if( bQuote ) sqlite3_str_appendchar(pOut, 1, '"');
  for(; *z; z++){
    if( *z=='\'' || (bQuote && *z=='"') ) sqlite3_str_appendchar(pOut, 1, *z);
    sqlite3_str_appendchar(pOut, 1, *z);
  }
  if( bQuote ) sqlite3_str_appendchar(pOut, 1, '"');
}

/* Append ring zSchema.zName as a message names it: the spec that names
** it, in single quotes ('main.shards'), with a part quoted where the spec
** needs it to name the ring (a '@', a leading '"'; in the schema a '.'
** too): 'main."a@b"'. */
static void append_ring_spec(sqlite3_str *pOut, const char *zSchema,
                             const char *zName){
  sqlite3_str_appendchar(pOut, 1, '\'');
  append_spec_part(pOut, zSchema, zSchema[0]=='"' || strchr(zSchema, '@')
                                  || strchr(zSchema, '.'));
  sqlite3_str_appendchar(pOut, 1, '.');
  append_spec_part(pOut, zName, zName[0]=='"' || strchr(zName, '@'));
  sqlite3_str_appendchar(pOut, 1, '\'');
}

/*
** The chash tables of schema zOnly (NULL: of every schema, in SQLite's
** search order) into pList, comma-separated, the first nMax of them (all if
** nMax<0); *pnRing counts all. *pzSchema and *pzName (if pzSchema is not
** NULL) get the first one's.
*/
static int list_rings(sqlite3 *db, const char *zOnly, int nMax,
                      sqlite3_str *pList, int *pnRing, char **pzSchema,
                      char **pzName){
  char **azSchema = NULL;
  int nSchema = 0;
  int rc = catalog_list_schemas(db, &azSchema, &nSchema);
  if( rc!=SQLITE_OK ) return rc;
  *pnRing = 0;
  for(int i=0; rc==SQLITE_OK && i<nSchema; i++){
    if( zOnly && sqlite3_stricmp(zOnly, azSchema[i])!=0 ) continue;
    sqlite3_stmt *pStmt = NULL;
    rc = chash_prepare_fmt(db, &pStmt, 0,
        "SELECT name, sql FROM \"%w\".sqlite_schema WHERE type='table'"
        " AND sql LIKE 'CREATE VIRTUAL TABLE%%' ORDER BY name", azSchema[i]);
    if( rc!=SQLITE_OK ) break;
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
      const char *zSql = (const char *)sqlite3_column_text(pStmt, 1);
      if( zName==NULL || zSql==NULL || !is_chash_sql(zSql) ) continue;
      if( *pnRing==0 && pzSchema ){
        *pzSchema = sqlite3_mprintf("%s", azSchema[i]);
        *pzName = sqlite3_mprintf("%s", zName);
      }
      if( nMax<0 || *pnRing<nMax ){
        if( *pnRing ) sqlite3_str_appendall(pList, ", ");
        append_ring_spec(pList, azSchema[i], zName);
      }
      (*pnRing)++;
    }
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  catalog_free_schemas(azSchema, nSchema);
  return rc;
}

int catalog_list_rings(sqlite3 *db, char **pzList, int *pnRing,
                       char **pzSchema, char **pzName){
  sqlite3_str *pList = sqlite3_str_new(db);
  *pzSchema = *pzName = NULL;
  int rc = list_rings(db, NULL, -1, pList, pnRing, pzSchema, pzName);
  /* sqlite3_str_finish() gives NULL for an empty list too (no rings), so
  ** out-of-memory is told by the error code, not by NULL. */
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pList);
  char *zList = sqlite3_str_finish(pList);
  if( rc==SQLITE_OK && *pnRing>0 && (*pzSchema==NULL || *pzName==NULL) ){
    rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(zList);
    sqlite3_free(*pzSchema);
    sqlite3_free(*pzName);
    *pzSchema = *pzName = NULL;
    return rc;
  }
  *pzList = zList;
  return SQLITE_OK;
}

/* A "no such ring" message lists at most this many rings. */
#define CATALOG_HINT_RINGS 10

int catalog_ring_hint(sqlite3 *db, const char *zSchema, char **pzHint){
  int nRing = 0;
  *pzHint = NULL;
  sqlite3_str *pList = sqlite3_str_new(db);
  int rc = list_rings(db, zSchema, CATALOG_HINT_RINGS, pList, &nRing, NULL,
                      NULL);
  if( nRing>CATALOG_HINT_RINGS ){
    sqlite3_str_appendf(pList, ", ... (%d in all)", nRing);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pList);
  char *zList = sqlite3_str_finish(pList);
  if( rc==SQLITE_OK ){
    if( nRing==0 ){
      *pzHint = zSchema ? sqlite3_mprintf("schema %Q has no ring", zSchema)
                        : sqlite3_mprintf("there is no ring");
    }else{
      *pzHint = zSchema ? sqlite3_mprintf("rings in %Q: %s", zSchema, zList)
                        : sqlite3_mprintf("rings: %s", zList);
    }
    if( *pzHint==NULL ) rc = SQLITE_NOMEM;
  }
  sqlite3_free(zList);
  return rc;
}

/*
** ring_spec.h: a ring spec, parsed into a value. Pure C, no SQLite calls.
**
** A ring spec is the `ring` argument of every chash function:
**
**   omitted            the default ring: the only ring of the connection
**   an integer N       version N of the default ring (N < 0: relative)
**   'name'             ring table `name` as the connection sees it now
**   'name@N'           its version N;  'name@-N': N versions before now
**   'schema.name'      a ring in that schema (may carry @N too)
**   '[...]', '{...}'   an inline ring, JSON (leading blanks allowed)
**
** A schema or a name may be quoted as an SQL identifier, "..." with a quote
** inside doubled, so that any name can be written: '"a@b"', '"a@b"@2',
** '"[x]"', 'main."odd.name"', '"my db".r'. Unquoted, the last '@' starts
** the version, and in 'x.y' x is the schema if there is one by that name,
** else 'x.y' is the whole name; quoted parts end where their quotes do.
**
** Parsing finds which form a spec has and its parts; whether `schema.` is a
** schema, and whether the ring exists, is for the layer that can look
** (ext/sqlite/spec.c).
*/
#ifndef CHASH_RING_SPEC_H
#define CHASH_RING_SPEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum ring_spec_kind {
  RING_SPEC_DEFAULT,       /* the only ring */
  RING_SPEC_NAMED,         /* a ring table by name */
  RING_SPEC_INLINE         /* inline JSON */
} ring_spec_kind;

typedef enum ring_spec_when {
  RING_SPEC_CURRENT,       /* as the connection sees it now */
  RING_SPEC_VERSION,       /* version `version` */
  RING_SPEC_RELATIVE       /* `version` (< 0 or 0) versions from now */
} ring_spec_when;

typedef struct ring_spec {
  ring_spec_kind kind;
  ring_spec_when when;
  int64_t version;
  /* NAMED: [schema.]name as written, before any '@'; INLINE: the JSON
  ** text. Points into the parsed text, as the parts below do. */
  const char *name;
  size_t name_len;
  /* NAMED: the schema as written (quotes included), or NULL if none is,
  ** and the table's name as written; ring_spec_unquote reads either. */
  const char *schema;
  size_t schema_len;
  const char *table;
  size_t table_len;
  /* NAMED, nothing quoted, a dot ('x.y'): schema x only if there is one by
  ** that name; otherwise name is the table's whole name. */
  int schema_if_exists;
} ring_spec;

/* The spec of an omitted argument. */
void ring_spec_default(ring_spec *p);

/* The spec of an integer argument: version v of the default ring. */
void ring_spec_version(int64_t v, ring_spec *p);

/*
** Parse the n bytes of text z (not NUL-terminated; p points into it).
** 0, or 1 with a message in zErr: an empty name or one with a NUL byte
** ("no such ring"), a version that is not -?[0-9]{1,18}, a quoted part
** without its closing quote or followed by anything but '.', '@' or the
** end.
*/
int ring_spec_parse(const char *z, size_t n, ring_spec *p, char *zErr,
                    size_t nErr);

/* The name that part z (n bytes, a spec's schema or table as written)
** stands for, into zOut (n+1 bytes, NUL-terminated): without its quotes if
** it is quoted, a doubled quote inside read as one. Returns its length. */
size_t ring_spec_unquote(const char *z, size_t n, char *zOut);

#endif

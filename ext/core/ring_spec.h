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
  /* NAMED: the name before any '@' (schema.name or name); INLINE: the
  ** JSON text. Points into the parsed text. */
  const char *name;
  size_t name_len;
  /* NAMED: bytes before the first '.' of name (a schema, if one has that
  ** name), or name_len if there is no dot. */
  size_t schema_len;
} ring_spec;

/* The spec of an omitted argument. */
void ring_spec_default(ring_spec *p);

/* The spec of an integer argument: version v of the default ring. */
void ring_spec_version(int64_t v, ring_spec *p);

/*
** Parse the n bytes of text z (not NUL-terminated; p points into it).
** 0, or 1 with a message in zErr: an empty name or one with a NUL byte
** ("no such ring"), a version that is not -?[0-9]{1,18}.
*/
int ring_spec_parse(const char *z, size_t n, ring_spec *p, char *zErr,
                    size_t nErr);

#endif

/*
** options.h: the options of a ring, as written in CREATE VIRTUAL TABLE ...
** USING chash(...) and in inline JSON ring specs, and as stored in a ring
** table's %_config rows. Pure C, no SQLite calls.
**
** Options are a table (options.c): adding one is a row there, a field of
** ring_config and an OPTION_ bit here. algorithm, hash and seed apply to
** every algorithm; the others to the algorithms whose descriptor lists
** them (algo.h, `options`). hash_tag applies to every algorithm too.
*/
#ifndef CHASH_OPTIONS_H
#define CHASH_OPTIONS_H

#include <stddef.h>

#include "ring.h"

/* Which options were given, so repeats and misplaced ones are errors. */
#define OPTION_ALGORITHM 0x01
#define OPTION_HASH      0x02
#define OPTION_VNODES    0x04
#define OPTION_SEED      0x08
#define OPTION_TABLE     0x10
#define OPTION_AVALANCHE 0x20
#define OPTION_LABEL     0x40
#define OPTION_FIRST     0x80
#define OPTION_TIES      0x100
#define OPTION_MIN_RING  0x200
#define OPTION_MAX_RING  0x400
#define OPTION_HASH_TAG  0x800

/* "algorithm, hash, ...": every option's name, for error messages, into
** zOut (nOut bytes). Returns zOut. */
const char *options_names(char *zOut, size_t nOut);

/* The option table, for listings (tests/gen/catalog.c): option i's name
** for i = 0, 1, ... in the order messages list them, NULL past the last;
** and whether algorithm a takes option i. */
const char *options_name_at(int i);
int options_apply(const ring_algo *a, int i);

/*
** Set option zKey to zValue in *cfg; *pSet records the options given.
** Returns 0, or 1 with a message in zErr naming the option and what it
** accepts (unknown option, bad value, repeated option).
*/
int options_set(ring_config *cfg, unsigned *pSet, const char *zKey,
                const char *zValue, char *zErr, size_t nErr);

/*
** After all options are set: fill in the defaults that depend on the
** algorithm (hash md5 for ketama, xxh64 for maglev, as their peers), then
** check the options fit together (e.g. vnodes only where there are virtual
** nodes). Returns 0, or 1 with a message.
*/
int options_check(ring_config *cfg, unsigned set, char *zErr, size_t nErr);

/*
** Split a CREATE VIRTUAL TABLE argument "key = value" in place: trims
** blanks, dequotes a value in '...', "..." or `...`. Returns 0, or 1 if
** there is no '=' or the key or value is empty.
*/
int options_split(char *zArg, char **pzKey, char **pzValue);

/*
** The options to store for cfg, one at a time: for i = 0, 1, ... while it
** returns 1, option i's name in *pzKey and its value as text in zValue
** (nValue bytes, at least OPTION_MAX_TEXT). *pbStore is 0 for an option
** that has its default and that older chash versions do not know, so
** that rings which do not use it stay readable by them. *pbInteger: the
** value is stored as an INTEGER, else as TEXT.
*/
int options_stored(const ring_config *cfg, int i, const char **pzKey,
                   char *zValue, size_t nValue, int *pbStore,
                   int *pbInteger);

/* Bytes the text of any option value takes, with its NUL. */
#define OPTION_MAX_TEXT 128

/* The options every ring table has stored since format 1 (a %_config
** without one of them is corrupt). */
#define OPTION_REQUIRED (OPTION_ALGORITHM|OPTION_HASH|OPTION_VNODES \
                         |OPTION_SEED|OPTION_TABLE)

/* Do two configs place every key and point alike (every option equal)? */
int options_same(const ring_config *a, const ring_config *b);

#endif

/*
** options.h: the options of a ring (algorithm, hash, vnodes, seed, table), as
** written in CREATE VIRTUAL TABLE ... USING chash(...) and in inline JSON
** ring specs. Pure C, no SQLite calls.
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
#define OPTION_ALL       0x1F

/* "algorithm, hash, vnodes, seed, table": the accepted option names. */
const char *options_names(void);

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

/* The value of the seed option as text, to store it. */
void options_seed_text(const ring_config *cfg, char *zOut, size_t nOut);

#endif

/*
** options.h: the options of a ring, as written in CREATE VIRTUAL TABLE ...
** USING chash(...) and in inline JSON ring specs, and as stored in a ring
** table's %_config rows. Pure C, no SQLite calls.
**
** Two kinds:
**   the common options, a table in options.c and fields of ring_config:
**     algorithm, hash, vnodes, seed, hash_tag. algorithm, hash, seed and
**     hash_tag apply to every algorithm; vnodes to those whose descriptor
**     lists OPTION_VNODES (algo.h, `options`);
**   an algorithm's own options, declared by its descriptor as a table of
**     ring_option (name, type, default, checks; algo.h, `own_options`)
**     and kept in its own block of the config (ring_config.own, read with
**     RING_OWN_CONFIG). Adding one edits only the algorithm's file.
** Options are given in any order (an algorithm's own before algorithm=):
** options_set checks each value as it comes, and options_finish applies
** the algorithm's own ones once the algorithm is known.
*/
#ifndef CHASH_OPTIONS_H
#define CHASH_OPTIONS_H

#include <stddef.h>

#include "ring.h"

/* Which common options were given, so repeats and misplaced ones are
** errors, and algorithms can tell a default from a choice. */
#define OPTION_ALGORITHM 0x01
#define OPTION_HASH      0x02
#define OPTION_VNODES    0x04
#define OPTION_SEED      0x08
#define OPTION_HASH_TAG  0x10

/* Bytes the text of any option value takes, with its NUL. */
#define OPTION_MAX_TEXT 128

/* ------------------------------------------- an algorithm's own options */

typedef enum ring_option_type {
  RING_OPTION_UINT = 1,    /* an integer from lo to hi, in a uint32_t */
  RING_OPTION_BOOL,        /* 0 or 1, in an int */
  RING_OPTION_CHOICE,      /* one of `choices` (any case): its index, in
                           ** an int */
  RING_OPTION_TEXT         /* text of at most hi bytes (hi below
                           ** OPTION_MAX_TEXT), in a char[hi + 1] */
} ring_option_type;

struct ring_option {
  const char *name;
  ring_option_type type;
  size_t offset;           /* where it lives in the algorithm's block */
  const char *default_text;      /* its default, as it is written; UINT
                                 ** NULL: hi */
  const char *about;       /* what it is: "the lookup table size" */
  /* For messages about bad values, in parentheses after them (NULL:
  ** none): "Envoy's minimum_ring_size". */
  const char *help;
  uint64_t lo, hi;         /* UINT: the range; TEXT: hi, the longest */
  const char *noun;        /* UINT: "a prime" for "is not a prime from lo
                           ** to hi"; NULL: "an integer" */
  const char *const *choices;    /* CHOICE: the values, then NULL */
  /* A further check of a value of the right type (v: a number's value):
  ** 0, or 1 with a message in zErr (ring_option_bad_value writes the
  ** usual one). NULL: none. */
  int (*check)(const ring_option *o, const char *zValue, uint64_t v,
               char *zErr, size_t nErr);
};

/* The message for a bad value of o: "table: '4' is not a prime from 2 to
** 16777213 (maglev tables have a prime size, e.g. 65537)". */
void ring_option_bad_value(const ring_option *o, const char *zValue,
                           char *zErr, size_t nErr);

/* The algorithm's own block of cfg, as its type T. */
#define RING_OWN_CONFIG(cfg, T) ((const T *)(const void *)(cfg)->own.bytes)

/* Make a cfg's algorithm, with its own options at their defaults. */
void options_set_algorithm(ring_config *cfg, const ring_algo *a);

/* ---------------------------------------------------- giving options */

/* Most own options in one list of options given. */
#define OPTION_MAX_OWN_GIVEN 32

/* The options given so far: common ones by bit, own ones by name and
** value until the algorithm is known. Start with memset 0. */
typedef struct options_given {
  unsigned set;                  /* OPTION_* bits */
  unsigned n_own;
  struct {
    const char *name;            /* the ring_option's */
    char value[OPTION_MAX_TEXT];
  } own[OPTION_MAX_OWN_GIVEN];
} options_given;

/* "algorithm, hash, ...": every option's name (the common ones, then each
** algorithm's own in registry order), for error messages, into zOut (nOut
** bytes). Returns zOut. */
const char *options_names(char *zOut, size_t nOut);

/* Every option, for listings (tests/gen/catalog.c): option i's name for i
** = 0, 1, ... in the order messages list them, NULL past the last; and
** whether algorithm a takes option i. */
const char *options_name_at(int i);
int options_apply(const ring_algo *a, int i);

/* Algorithm a's own option named zName (any case), or NULL: what it
** declares, for readers of other formats that need its range. */
const ring_option *options_own(const ring_algo *a, const char *zName);

/* "ring, ketama": the algorithms that take the option named zName, into
** zOut (nOut bytes). Returns zOut. */
const char *options_takers(const char *zName, char *zOut, size_t nOut);

/*
** Set option zKey to zValue in *cfg; *g records the options given.
** Returns 0, or 1 with a message in zErr naming the option and what it
** accepts (unknown option, bad value, repeated option). An algorithm's
** own option is checked now, by its algorithm's declaration (or, before
** algorithm is given, by the first that declares it), and set by
** options_finish or options_load.
*/
int options_set(ring_config *cfg, options_given *g, const char *zKey,
                const char *zValue, char *zErr, size_t nErr);

/*
** After all options of a CREATE or a JSON spec are set: set the
** algorithm's own options (one it does not take is an error), fill in
** the defaults that depend on the algorithm (hash md5 for ketama, xxh64
** for maglev, as their peers), then check the options fit (options_check).
** Returns 0, or 1 with a message.
*/
int options_finish(ring_config *cfg, const options_given *g, char *zErr,
                   size_t nErr);

/*
** After all options of a %_config are set: set the algorithm's own ones.
** An option it does not take was stored by a chash that stored every
** option (checked by options_set, and not used). Returns 0, or 1 with a
** message. The fit is not checked (ch_check does, with options_check).
*/
int options_load(ring_config *cfg, const options_given *g, char *zErr,
                 size_t nErr);

/*
** Check the options fit the algorithm: common options given (set) that do
** not apply to it, a seed for a hash without one, then the descriptor's
** check_options. Fills in the hash's default first. 0, or 1 with a
** message.
*/
int options_check(ring_config *cfg, unsigned set, char *zErr, size_t nErr);

/* Was the option named zName given? */
int options_given_has(const options_given *g, const char *zName);

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

/* The options every ring table has stored since format 1, then NULL (a
** %_config without one of them is corrupt). table is maglev's; rings of
** the other algorithms store its default. */
extern const char *const options_required[];

/* Do two configs have every option equal (so place keys and points
** alike)? */
int options_same(const ring_config *a, const ring_config *b);

#endif

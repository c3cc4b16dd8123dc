/*
** config.h: the configuration files of the programs chash reproduces, read
** into ring specs and written back from rings. Pure C, no SQLite calls.
**
** A parser (one file per format: nginx.c, haproxy.c, nutcracker.c, envoy.c,
** libmemcached.c, spymemcached.c, npm_hashring.c, nodetool_ring.c,
** redis_nodes.c, redis_cli.c, dalli_servers.c, pymemcache_servers.c) reads
** a text into a config_file: every pool the text holds (an nginx upstream,
** a HAProxy backend, a twemproxy pool), each with its algorithm, options
** and nodes in the text's order. What chash would place differently than
** the program is never a pool that looks right: a fault of the whole text
** (a syntax error, an include) is the file's error, and a fault of one
** pool (a server marked backup, a hash without consistent) is that pool's
** refusal, given when that pool is asked for. Both name the line.
**
** A writer takes a config_pool made from a ring and writes the program's
** text for it, which its parser reads back as the same pool.
**
** Texts are untrusted: at most CONFIG_MAX_TEXT bytes, blocks nested at most
** CONFIG_MAX_DEPTH deep, words at most CONFIG_MAX_WORD bytes. Memory comes
** from the ring core's allocator (ring_set_allocator).
*/
#ifndef CHASH_CONFIG_H
#define CHASH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "algo.h"                /* ring_alloc, ring_dealloc */
#include "options.h"

#define CONFIG_MAX_TEXT  (4 * 1024 * 1024)   /* bytes in a text */
#define CONFIG_MAX_DEPTH 32                  /* nesting of blocks */
#define CONFIG_MAX_WORD  4096                /* bytes in one word */
#define CONFIG_MAX_POOLS 10000               /* pools in one text */
#define CONFIG_MAX_OPTIONS 16                /* options of one pool */

/* Result codes. */
#define CONFIG_OK     0
#define CONFIG_NOMEM  1
#define CONFIG_ERROR  2                      /* the message says why */

#define CONFIG_MAX_COLUMNS 3                 /* columns of one node */

typedef struct config_node {
  char *name;
  double weight;
  /* The values of the algorithm's columns (algo.h: cassandra's tokens, dc,
  ** rack), in its order; NULL: not given. Owned like the name
  ** (config_node_column). */
  char *columns[RING_MAX_COLUMNS];
} config_node;

typedef struct config_option {
  const char *key;                           /* an option's name, static */
  char value[OPTION_MAX_TEXT];
  int integer;                               /* written as a JSON number */
} config_option;

typedef struct config_pool {
  char *name;                                /* as the text names it */
  int line;                                  /* where it starts, from 1 */
  const char *algorithm;                     /* static */
  config_option options[CONFIG_MAX_OPTIONS];
  int n_options;
  config_node *nodes;                        /* in the text's order */
  uint32_t n_nodes, n_alloc;
  char *refusal;                             /* why chash cannot place its
                                             ** keys as the program does */
} config_pool;

typedef struct config_file {
  config_pool *pools;
  int n_pools, n_alloc;
  int nomem;                                 /* an allocation failed */
  char error[400];                           /* a fault of the whole text */
} config_file;

/* ---------------------------------------------------- for the parsers */

/* A new pool named z (n bytes) starting at line; NULL on OOM, or when the
** text holds too many pools or two of that name (the file's error). */
config_pool *config_pool_add(config_file *f, const char *z, size_t n,
                             int line);

/* Append a node; a second node of the same name is the pool's refusal
** (chash's nodes are unique). Returns 0, or 1 on OOM (f->nomem is set). */
int config_node_add(config_file *f, config_pool *p, const char *z, size_t n,
                    double weight, int line);

/* Set column i of the last node added to p to z (n bytes): 0, or 1 on
** OOM (f->nomem is set). */
int config_node_column(config_file *f, config_pool *p, unsigned i,
                       const char *z, size_t n);

/* Set option zKey (static) of p to zValue. */
void config_option_set(config_pool *p, const char *zKey, const char *zValue,
                       int bInteger);

/* The value of option zKey of p, or NULL. */
const char *config_option_get(const config_pool *p, const char *zKey);

/* The pool's refusal (only the first one given is kept) and the file's
** error, printf-style. */
void config_refuse(config_file *f, config_pool *p, const char *zFmt, ...);
void config_fail(config_file *f, const char *zFmt, ...);

/* A copy of z (n bytes) with a NUL, from the ring allocator; NULL on OOM. */
char *config_strndup(const char *z, size_t n);

/* ------------------------------------------------------------ formats */

typedef struct config_format {
  const char *name;
  const char *pool_noun;                     /* "upstream", "backend", ... */
  const char *algorithm;                     /* the algorithm it writes */
  const char *writes;                        /* "an nginx upstream", ... */
  const char *const *write_options;          /* the options it writes, a
                                             ** NULL-ended list */
  /* Read text (n bytes, no NUL byte: config_read_spec refuses one) into
  ** f. On return f->error or f->nomem tells of a fault of the whole
  ** text. */
  void (*read)(const char *z, size_t n, config_file *f);
  /* Write p (of the format's algorithm, with only write_options) as the
  ** program's text into *pzOut (ring allocator). Returns
  ** CONFIG_OK, CONFIG_NOMEM, or CONFIG_ERROR with a message in zErr. */
  int (*write)(const config_pool *p, char **pzOut, char *zErr, size_t nErr);
} config_format;

/* The format named zName, or NULL; config_format_list: "nginx, ...". */
const config_format *config_format_find(const char *zName);
const char *config_format_list(char *zOut, size_t nOut);

/*
** Read text z (n bytes) in format zFormat and write the JSON ring spec of
** the pool named zName (NULL: the only pool) into *pzSpec. Returns
** CONFIG_OK, CONFIG_NOMEM, or CONFIG_ERROR with *pzErr set (both from the
** ring allocator, freed with ring_dealloc).
*/
int config_read_spec(const char *zFormat, const char *z, size_t n,
                     const char *zName, char **pzSpec, char **pzErr);

/*
** Write ring r as the text of format zFormat, its pool named zName. The
** ring's options that differ from its algorithm's defaults are the pool's
** options. Returns as config_read_spec.
*/
int config_write_ring(const char *zFormat, const ring *r, const char *zName,
                      char **pzText, char **pzErr);

/* The algorithm of cfg, and its options that differ from the algorithm's
** defaults, into p->algorithm and p->options. */
void config_options_of(const ring_config *cfg, config_pool *p);

/* Free what a pool and a file hold (not the structs themselves). */
void config_pool_clear(config_pool *p);
void config_file_clear(config_file *f);

/* ------------------------------------------------------ text builders */

/* A growing text: a writer appends, then takes z. */
typedef struct config_buf {
  char *z;
  size_t n, alloc;
  int nomem;
} config_buf;

void config_buf_append(config_buf *b, const char *z, size_t n);
void config_buf_printf(config_buf *b, const char *zFmt, ...);

/* Hand b's text to *pzOut: CONFIG_OK, or CONFIG_NOMEM (b freed). */
int config_buf_finish(config_buf *b, char **pzOut);

/* Append z as a JSON string (quoted and escaped), which YAML reads back
** as the same string; the characters written. */
size_t config_buf_json_string(config_buf *b, const char *z);

/* The longest mapping key libyaml reads, in characters from its first to
** the ':' (an implicit key, in a block or in {...}). */
#define CONFIG_YAML_MAX_KEY 1024

/* The whole number written in z (n bytes, digits only), at most 1e9, or
** -1. */
long config_number(const char *z, size_t n);

/* Nonzero if w is a whole number from 1 to 2^53 (then *pOut holds it). */
int config_whole_weight(double w, long long *pOut);

#endif

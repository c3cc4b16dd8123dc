/*
** algo.h: what an algorithm is, and the machinery algorithm files share.
** Pure C, no SQLite calls.
**
** An algorithm is one file in ext/algos/ that defines one `const ring_algo`
** descriptor, listed once in ext/algos/registry.c. Everything chash does
** with a ring (build it, place keys, list its points or slots, compute
** shares and diffs, check options, weights and commits) asks the
** descriptor; nothing outside the algorithm file names an algorithm.
**
** The ring core (ring.c) gives every build a ring whose nodes are set up:
** sorted by name (bytewise), with name, weight and join rank, points 0,
** and r->by_join listing them in the order they joined. The build fills
** in the placement in one of three shapes (`units`):
**
**   RING_UNITS_POINTS   a sorted array of points: r->positions (ascending)
**                       and r->owners. Fill them with ring_points_make,
**                       which makes each node's points through the build's
**                       function (or keeps them from the previous ring),
**                       and a rule: where a key goes among them (the first
**                       point at or after it, the last at or below, the
**                       nearest, ...) and which of equal points wins. A key
**                       belongs to the first position at or after its own,
**                       wrapping to position 0, unless the descriptor has
**                       a lookup. (ring_points_place takes points already
**                       made; ring_points_set is the older, narrower way:
**                       see below.)
**   RING_UNITS_SLOTS    a table: r->unit_owners[s] for s < r->n_units; a
**                       key belongs to slot position mod n_units, unless
**                       the descriptor has a unit_of. ring_points_place
**                       with the table rule samples points into one.
**   RING_UNITS_BUCKETS  r->unit_owners[b] for b < r->n_units, and a
**                       unit_of that picks the bucket of a position.
**   RING_UNITS_NONE     no units: the descriptor's lookup (and score, for
**                       ch_replicas) place keys, or its key_lookup (and
**                       key_score), which see the key's bytes.
**
** State an algorithm needs beyond that (per-node hashes, say) goes in
** r->state: one block from ring_alloc, freed with the ring. Every hook
** gets the ring, so every hook reaches it: keep there what a hook would
** otherwise recompute (per node, index it by node index). What the points
** library keeps (tokens, replica numbers, join order) is in the ring
** itself and needs no state.
*/
#ifndef CHASH_ALGO_H
#define CHASH_ALGO_H

#include "ring.h"

typedef enum ring_units_kind {
  RING_UNITS_NONE = 0,
  RING_UNITS_POINTS,
  RING_UNITS_SLOTS,
  RING_UNITS_BUCKETS
} ring_units_kind;

/*
** What the docs say of an algorithm, in Markdown, one line each: `make gen`
** writes it into the lists of algorithms in docs/ and tests/ (through
** tests/gen/catalog.c, which prints the registry). The table-valued
** function fields say what ch_points, ch_arcs, ch_diff and ch_replicas
** give; NULL there: what the units give ("points", "table slots", ...),
** or "error" when no_units or no_diff says why not.
*/
typedef struct ring_algo_doc {
  const char *summary;      /* what it is: "Maglev's lookup table" */
  const char *reproduces;   /* the setups it reproduces bit for bit ("an
                            ** nginx upstream"), or NULL */
  const char *cost;         /* the cost of a lookup: "O(log points)" */
  const char *weights;      /* what a weight does, or "no (all 1)" */
  const char *remove;       /* which nodes can leave */
  const char *movement;     /* where keys go when a node joins */
  const char *options;      /* its options and their defaults, each name
                            ** in `...` (make gen checks them against
                            ** `options`) */
  const char *points, *arcs, *diff, *replicas;
} ring_algo_doc;

/*
** A column its nodes carry beyond node and weight (cassandra's tokens):
** the ring table gets it at CREATE, the shadow tables store it, JSON
** specs, ch_history and config files carry it. Its value is text; the
** build reads it from r->nodes[n].columns[i] (the default filled in), and
** check_column says whether a value is one the algorithm takes.
*/
typedef struct ring_column {
  const char *name;            /* lower case: "tokens" */
  const char *default_text;    /* a node's value when none is given; NULL:
                               ** none (the value stays NULL) */
  int required;                /* 1: every node must have a value */
  const char *about;           /* what it holds, for the docs */
  const char *example;         /* a valid value for node number %d (1, 2,
                               ** ...) of a ring, "%d00" say, for the
                               ** generated tests of every algorithm; NULL
                               ** for a column with a default */
} ring_column;

struct ring_algo {
  const char *name;            /* algorithm=NAME (lower case) */
  ring_algo_doc doc;
  hash_id default_hash;        /* when the hash option is not given */
  unsigned options;            /* the common OPTION_* bits that apply to it
                               ** (OPTION_VNODES), beyond algorithm, hash,
                               ** seed and hash_tag */
  /* Its own options (options.h), then one with a NULL name; NULL: none.
  ** Their values live in its block of the config (RING_OWN_CONFIG). */
  const ring_option *own_options;
  /* Its columns beyond node and weight (at most RING_MAX_COLUMNS), then
  ** one with a NULL name; NULL: none (the table has only node, weight,
  ** points and share). */
  const ring_column *columns;

  /* Is z (n bytes, UTF-8 without NUL) a value of column i it takes? NULL,
  ** or a message in zErr (it parses the text: "token 'x' is not a 64-bit
  ** integer"). NULL function: every value. Values that conflict across
  ** nodes (a token two nodes share) are the build's and check_commit's. */
  const char *(*check_column)(const ring_config *cfg, unsigned i,
                              const char *z, size_t n, char *zErr,
                              size_t nErr);

  int integer_keys;            /* 1: no node name is hashed, only keys, so
                               ** hash identity (integer keys as their own
                               ** positions) applies */
  ring_units_kind units;
  const char *unit_name;       /* what a unit is, plural: "points", "slots" */

  /* Why ch_points and ch_arcs have nothing to list (NULL: they work, for
  ** POINTS and SLOTS), and why ch_diff is not exact (NULL: it is, by
  ** merging points or comparing slot residues, which needs the default
  ** lookup and unit_of: an algorithm with its own must say why here).
  ** Each completes "...: algorithm X has no points (WHY)". */
  const char *no_units;
  const char *no_diff;

  /*
  ** After every option is set: fill in defaults that depend on the
  ** algorithm and check the options fit it (beyond which apply, which the
  ** core checks from `options`). 0, or 1 with a message in zErr. NULL:
  ** nothing to check.
  */
  int (*check_options)(ring_config *cfg, unsigned set, char *zErr,
                       size_t nErr);

  /* A weight it cannot use (w is already a positive finite number no
  ** larger than RING_MAX_WEIGHT): a static message, else NULL. NULL
  ** function: every such weight. */
  const char *(*check_weight)(const ring_config *cfg, double w);

  /* For an algorithm without weights, the message a weight other than 1
  ** gets (in place of check_weight), naming the algorithm. */
  const char *no_weights;

  /* What a node of weight w counts against RING_MAX_POINTS, when a node
  ** is written and when a ring is built: a budget, not what the node gets
  ** (ketama's count depends on the other nodes; envoy_ring's ring size is
  ** bounded by max_ring, so each node counts 1). The budgets of a ring's
  ** nodes, summed, must bound the points its build allocates. NULL: 0
  ** (no points). */
  int64_t (*point_budget)(const ring_config *cfg, double w);

  /* Can it hold n nodes? NULL, or a message in zErr. NULL function: yes. */
  const char *(*check_count)(const ring_config *cfg, uint64_t n, char *zErr,
                             size_t nErr);

  /*
  ** Fill in r's placement (see the top of this file). prev is the ring
  ** this one replaces, of any config, or NULL: a build may reuse its work
  ** when prev->config matches. RING_OK, RING_NOMEM, or RING_INVALID with a
  ** message in zErr (a ring it cannot place keys on).
  */
  int (*build)(ring *r, const ring *prev, char *zErr, size_t nErr);

  /* The index in r->nodes of the owner of position pos (r has nodes).
  ** NULL: the owner of the unit pos falls in. */
  uint32_t (*lookup)(const ring *r, uint64_t pos);

  /* The unit position pos falls in. NULL: for POINTS the first point at or
  ** after pos (wrapping), for SLOTS pos mod n_units. */
  uint32_t (*unit_of)(const ring *r, uint64_t pos);

  /* Add the algorithm's part to the key rule k of a ring of cfg (keys.h),
  ** which holds cfg's hash, seed and hash tag: a finish of the hash value
  ** (with the one option value it reads), steps, a tag of its own. NULL:
  ** nothing to add. */
  void (*key_rule)(const ring_config *cfg, ring_keys *k);

  /* Bits of the positions its key rule makes, when they are not the
  ** hash's (redis_cluster: 14, its slots): positions, shares, arcs and
  ** diffs then live in [0, 2^key_bits). 0: hash_space_bits of the hash. */
  unsigned key_bits;

  /* POINTS, for rings built without r->replicas (ring_points_set, or
  ** ring_points_make with RING_POINTS_NO_REPLICAS): node n's point positions in
  ** the order it makes them, into aPos (r->nodes[n].points entries);
  ** returns the replica number of aPos[0] (ch_points' replica column). */
  uint32_t (*node_positions)(const ring *r, uint32_t n, uint64_t *aPos);

  /* SLOTS: a number ch_points shows in the replica column for slot s (the
  ** step of its owner's preference list that took it). NULL: none. */
  uint64_t (*slot_replica)(const ring *r, uint32_t s);

  /* Each node's share of the hash space, into r->nodes[].share. NULL:
  ** exact, from the points' arcs or the slots' residue classes. */
  int (*shares)(ring *r);

  /* NONE: node n's score for position pos; ch_replicas ranks nodes by it,
  ** highest first, ties to the lower index. */
  double (*score)(const ring *r, uint32_t n, uint64_t pos);

  /* The replicas of position pos, in order, as indexes in r->nodes into
  ** aOut (room for r->n_nodes), their number into *pn: a placement that
  ** is not the first distinct owners on from the key's unit (cassandra's
  ** replication strategies). RING_OK or RING_NOMEM. NULL: that walk (or
  ** the scores). */
  int (*replicas)(const ring *r, uint64_t pos, uint32_t *aOut, uint32_t *pn);

  /*
  ** NONE, for algorithms whose owner depends on the key's bytes and not
  ** on one position of the key (pymemcache scores each node by a hash of
  ** "<node>-<key>"): the owner of the key whose bytes, as the caller has
  ** them, are p[0..n) (the hook applies the key rule, with
  ** ring_keys_read), and node n's score for it. When key_lookup is set,
  ** ch_locate, ch_moved, ch_tally and ch_flows place keys with it, and
  ** ch_replicas ranks nodes by key_score, in place of lookup and score.
  ** Neither may allocate.
  */
  uint32_t (*key_lookup)(const ring *r, const void *p, size_t n);
  double (*key_score)(const ring *r, uint32_t n, const void *p, size_t nKey);

  /*
  ** Checked when a transaction that changed a ring table commits (and by
  ** ch_check for every committed version): c says what the transaction
  ** changed (ring.h, ring_commit). RING_OK; RING_INVALID with a message in
  ** zErr, and the commit fails; RING_NOMEM. NULL function: every change
  ** commits. ch_check does not build every version: for a version whose
  ** nodes pass the core's checks (names, weights, limits), this check is
  ** what tells whether it builds, so it fails wherever build would.
  */
  int (*check_commit)(const ring_config *cfg, const ring_commit *c,
                      char *zErr, size_t nErr);

  /* What check_commit reads of its ring_commit beyond gone and last_kept
  ** under cfg: RING_COMMIT_* bits. NULL function: nothing more. */
  unsigned (*commit_needs)(const ring_config *cfg);

  /*
  ** What ch_check says of the ring's last version, built, beyond whether
  ** it builds: a state the ring allows but its user should hear of (a
  ** live Redis map's slots that no master serves). 0, or 1 with the line
  ** in zMsg (cut short with a count of what it leaves out, never
  ** silently). NULL function: nothing to say.
  */
  int (*describe_gaps)(const ring *r, char *zMsg, size_t nMsg);
};

/* The registry (ext/algos/registry.c): every algorithm, then NULL. */
extern const ring_algo *const ring_algos[];

/* The allocator installed with ring_set_allocator. */
void *ring_alloc(size_t n);
void ring_dealloc(void *p);

/* The same for an array every lookup reads (positions, owners, the
** index): one of several megabytes is asked to be backed by huge pages,
** so that a lookup in a big ring does not also miss the TLB. */
void *ring_alloc_lookup(size_t n);

/* ---------------------------------------------------------- points */

/* A point while a ring is built. */
typedef struct ring_point {
  uint64_t pos;
  uint32_t node;           /* index in r->nodes */
  uint32_t made;           /* ring_points_place's and ring_points_make's
                           ** scratch: its place in the order the points
                           ** were made */
} ring_point;

/*
** Where a key goes among a ring's points (ring_points_place). Positions
** and distances are taken in the ring's space [0, top], wrapping.
*/
typedef enum ring_lookup_rule {
  RING_LOOKUP_SUCCESSOR = 0,   /* the first point at or after the key,
                               ** wrapping to the lowest point */
  RING_LOOKUP_ABOVE,           /* the first point strictly above the key,
                               ** wrapping to the lowest (Python's
                               ** bisect_right) */
  RING_LOOKUP_PREDECESSOR,     /* the last point at or below the key,
                               ** wrapping to the highest point */
  RING_LOOKUP_NEAREST_BEFORE,  /* the nearer of the point at or after the
                               ** key and the one before it; a key exactly
                               ** half-way goes to the one before (HAProxy) */
  RING_LOOKUP_NEAREST_AFTER,   /* the same, half-way to the one after */
  RING_LOOKUP_TABLE            /* a table of `table` entries: entry i is the
                               ** owner, under SUCCESSOR, of position
                               ** i * floor(top / table); a key goes to entry
                               ** position mod table (PHP memcache: 1,024) */
} ring_lookup_rule;

/* How ring_points_place makes a placement of points. */
typedef struct ring_points_rule {
  ring_lookup_rule lookup;
  ring_ties ties;          /* which of equal points stays: the node first
                           ** by name, or that joined first or last; one
                           ** node's own equal points: the first made */
  uint32_t table;          /* RING_LOOKUP_TABLE: the entries, >= 1 */
} ring_points_rule;

/*
** Make the n points of a r's placement under rule. The build makes the
** points in any order of nodes, each node's in the order of its replica
** numbers (0, 1, ...), and leaves `points` and `made` to this.
**
** Of equal points, the one rule->ties picks stays and the others leave
** the ring; each node's `points` is set to the number it kept, and
** ch_points numbers them 0, 1, ... in the order they were made
** (r->replicas).
**
** POINTS rings: a key belongs to the first of r->positions at or after
** it, so each position is where a point's arc ends: the point itself
** under SUCCESSOR, else the last position the rule gives point p (ABOVE:
** p - 1; PREDECESSOR: the next point - 1; NEAREST_BEFORE: p + floor(g/2)
** and NEAREST_AFTER: p + floor((g-1)/2), g the distance to the next
** point; all wrapping in [0, top]). The points are then r->tokens, in the
** same order, which is the order of the ends: where an end wraps past top
** (the highest point's under PREDECESSOR and NEAREST, a point at 0 under
** ABOVE), that point comes first (or last). ch_points lists the tokens,
** ch_arcs the arcs (end of the unit before, own end], an arc across the
** drop of signed values as two rows, and lookups, shares, ch_diff and
** ch_replicas follow from the ends.
**
** ring_points_place_low places points of 128 bits, under
** RING_LOOKUP_ABOVE only: a[i].pos is point i's top 64 bits and lows[i]
** its low 64; points are equal only when both words are, equal top words
** go in the order of their low words, which r->lows keeps beside the
** tokens, and ring_lookup_low (ring.h) consults them where a key's top
** word equals a point's. Arcs, shares and ch_diff are taken over the top
** 64 bits (a key there owns as if its low word were all ones).
**
** SLOTS rings (RING_LOOKUP_TABLE): r->unit_owners holds the table,
** r->n_units = rule->table, each node's `points` counts its entries, and
** the points are not kept.
**
** RING_OK or RING_NOMEM; a is scratch afterwards.
*/
int ring_points_place(ring *r, ring_point *a, uint32_t n,
                      const ring_points_rule *rule);
int ring_points_place_low(ring *r, ring_point *a, const uint64_t *lows,
                          uint32_t n, const ring_points_rule *rule);

/*
** Sort the n points of a by position, stably (so points that tie keep the
** order they were made in: make the winner of a tie first), and make them
** r's points: r->positions, r->owners, r->n_points, the lookup index.
** Equal points all stay (the later ones own nothing). Each node's
** `points` is left as the build set it, and ch_points numbers points by
** node_positions. RING_OK or RING_NOMEM; a is scratch afterwards.
*/
int ring_points_set(ring *r, ring_point *a, uint32_t n);

/*
** ring_points_make: the points of a build made node by node, from the
** previous ring where it can (every points algorithm builds through it).
** The build sets each node's `points` to the number of points it makes
** and describes how they are made:
*/
typedef struct ring_points_maker {
  ring_points_rule rule;   /* where keys go, which of equal points stays */
  /* Node n's points from replica number `from` on (up to its `points`),
  ** their positions into a[0].pos, a[1].pos, ...: a node's points are the
  ** same whatever the other nodes, and a node of more points makes the
  ** same ones first (so a node whose count changed keeps a prefix). */
  void (*make)(const ring *r, uint32_t n, uint32_t from, ring_point *a);
  /* Of equal points of nodes a and b, does a's come first? NULL: the
  ** order of rule.ties. */
  int (*tie_before)(const ring *r, uint32_t a, uint32_t b);
  unsigned flags;          /* RING_POINTS_* */
} ring_points_maker;

#define RING_POINTS_KEEP_TIES   0x01  /* equal points all stay, in tie
                                      ** order (the later own nothing);
                                      ** successor rule only */
#define RING_POINTS_BY_JOIN     0x02  /* a node's points depend on its
                                      ** rank in join order (haproxy's
                                      ** server ids) */
#define RING_POINTS_NO_REPLICAS 0x04  /* with KEEP_TIES: no r->replicas
                                      ** (ch_points numbers points by the
                                      ** descriptor's node_positions),
                                      ** 4 bytes a point less; a node is
                                      ** then kept whole or made again */

/*
** Make r's points as ring_points_place does, with each node's points made
** by mk->make, and equal points ordered by tie rule then replica number.
** When prev (any ring, or NULL) is a ring of the same config, each node
** of the same name that lost no point to a tie there keeps its points
** from prev (the first min(old, new count) of them; under BY_JOIN only if
** its join rank is the same), only the others are made, sorted and merged
** in: the result is the full build's, point for point. Sets each node's
** `made` (what it made) and `points` (what it kept). RING_OK or
** RING_NOMEM.
*/
int ring_points_make(ring *r, const ring *prev, const ring_points_maker *mk);

/*
** Labels: is zLabel a label template (one %s, the node name; one %d, the
** point index; %% a literal %; nothing else after a %; at most
** RING_MAX_LABEL bytes)? 0, or 1 with a message in zErr.
*/
int ring_label_check(const char *zLabel, char *zErr, size_t nErr);

/*
** Node n's points from replica from on (indexes first+from ..
** first+points-1), at the hash (r's hash and seed) of their labels under
** template zLabel (checked), into aPos[0], aPos[stride], ...
*/
void ring_label_hash(const ring *r, uint32_t n, const char *zLabel,
                     uint32_t first, uint32_t from, uint64_t *aPos,
                     size_t stride);

/* The same into a[0].pos, a[1].pos, ...: a ring_points_maker's make. */
void ring_label_points(const ring *r, uint32_t n, const char *zLabel,
                       uint32_t first, uint32_t from, ring_point *a);

/*
** Points made 4 per digest (ketama, hashring, dubbo): digest(node, i,
** aPos) gives node's points 4i .. 4i+3. ring_digest_make makes node n's
** points from replica from on into a, as a ring_points_maker's make does.
*/
typedef void (*ring_digest_fn)(const ring_node *node, uint32_t i,
                               uint64_t aPos[4]);
void ring_digest_make(const ring *r, uint32_t n, uint32_t from,
                      ring_digest_fn digest, ring_point *a);

/* The label "name-i" of a node into label; its length. */
size_t ring_label_dash(const ring_node *node, uint32_t i,
                       char label[RING_MAX_NAME + 16]);

/* ketama's and hashring's digest i of a node: MD5 of "name-i". */
void ring_digest_md5_dash(const ring_node *node, uint32_t i, uint64_t aPos[4]);

/* The points of a node of weight w among n nodes of total weight W under
** the ketama rule of twemproxy, libmemcached and spymemcached,
**     4 * floor(w/W * vnodes / 4 * n + 1e-10),
** evaluated step by step in single precision exactly as they do. */
uint32_t ring_ketama_count(double w, double W, uint32_t n, int vnodes);

/* Build r->index over r->positions (ring_points_* call it). */
int ring_index_build(ring *r);

/*
** A check_commit for algorithms whose point counts are whole groups that a
** small vnodes can round down to 0 for every node (ketama's and
** hashring's 4 points per digest: vnodes 4 with 41 or 49 nodes of equal
** weight gives a ring without a point, which could place nothing). With
** vnodes under 8 it builds the ring of the nodes after the commit (a
** digest per node at most; ring_counts_round_needs asks for them) and fails
** the commit as the build does; from 8 on the counts cannot all be 0.
*/
unsigned ring_counts_round_needs(const ring_config *cfg);
int ring_check_counts_round(const ring_config *cfg, const ring_commit *c,
                            char *zErr, size_t nErr);

/*
** Algorithms that number nodes in the order they joined (jump, guava,
** kafka): ring_units_join_order makes node k unit r->nodes[k].join (for
** BUCKETS or SLOTS); ring_shares_even gives every node 1/n (the
** expectation, where exact counts over every position cannot be had);
** ring_check_commit_last_only is the check_commit that lets only the last
** nodes to join leave.
*/
int ring_units_join_order(ring *r, const ring *prev, char *zErr, size_t nErr);
int ring_shares_even(ring *r);
int ring_check_commit_last_only(const ring_config *cfg, const ring_commit *c,
                                char *zErr, size_t nErr);

/* Allocate r->unit_owners for n units (SLOTS and BUCKETS); r->n_units = n.
** RING_OK or RING_NOMEM. */
int ring_units_alloc(ring *r, uint32_t n);

/* Decimal text of v at z (at least 10 bytes); returns its length. */
int ring_format_u32(uint32_t v, char *z);

#endif

"""tests/gen/uhashring_gen.py: writes tests/gen/uhashring_ketama.test and
tests/gen/uhashring.test, algorithms uhashring_ketama and uhashring, with
every expected value computed by the independent model in
tests/gen/uhashring_model.py (which tests/compat/pyclients.py checks
against the real uhashring). Keys that land exactly on a point are the
labels the points were made of ("S-i": its MD5 word 0 is point 4i of S in
ketama mode, its whole MD5 point i of S in the default ring), and go to
the point after it (strictly above); keys past the last point wrap to the
lowest point.

Run: /usr/bin/python3 tests/gen/uhashring_gen.py --write  (or --check)
"""

import bisect

import genfiles
from testkit import (LOCATE_KEYS as KEYS, arc_widths, insert, keys,
                     md5_form, shown, sql_text)
import uhashring_model as m

SERVERS = [('10.0.0.1:11211', 1), ('cache-b', 2), ('кэш-c', 3), ('10.0.0.4:22122', 1)]

ERRORS = """
# Options and weights uhashring's ketama ring does not have.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=uhashring_ketama, hash=xxh3)
----
algorithm uhashring_ketama takes only hash md5 (uhashring's ketama ring hashes with MD5), not xxh3

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=uhashring_ketama, seed=1)
----
seed does not apply to hash md5

statement ok
CREATE VIRTUAL TABLE w USING chash(algorithm=uhashring_ketama)

statement error
INSERT INTO w(node, weight) VALUES ('a', 1.5)
----
algorithm uhashring_ketama takes whole weights, as uhashring does: 1, 2, 3, ...

# vnodes counts labels of 4 points: vnodes=1 gives an equal node 4 points.
statement ok
CREATE VIRTUAL TABLE v1 USING chash(algorithm=uhashring_ketama, vnodes=1)

statement ok
INSERT INTO v1(node) VALUES ('a'), ('b')

query TI
SELECT node, points FROM v1 ORDER BY node
----
a\t4
b\t4
"""


def owned(ring, s):
    return sum(1 for p in ring.keys if ring.owners[p] == s)


def arcs(ring):
    """{server: positions it owns}: a point owns the positions from the
    point before it up to one below itself (strictly above)."""
    return arc_widths([((p - 1) % (1 << 32), ring.owners[p]) for p in ring.keys])


def labels(servers, vnodes=40):
    W = sum(w for _, w in servers)
    return {s: vnodes * len(servers) * w // W for s, w in servers}


def values(ks):
    return ', '.join('(%s)' % sql_text(k) for k in ks)


def gen():
    r = m.Ring(SERVERS, ketama=True)
    n_labels = labels(SERVERS)
    by_name = sorted(SERVERS, key=lambda x: x[0].encode())
    out = ["""# algorithm uhashring_ketama: Python uhashring's HashRing(nodes,
# hash_fn='ketama'). Written by tests/gen/uhashring_gen.py from its
# independent model (tests/gen/uhashring_model.py, checked against the real
# uhashring by tests/compat/pyclients.py). Nodes are the names given to
# HashRing, in the order given (join order); weights are the dict's values.
%s
statement ok
CREATE VIRTUAL TABLE uk USING chash(algorithm=uhashring_ketama)

statement ok
%s

# floor(40 * 4 * w / 7) labels of 4 points each.
query TI
SELECT node, points FROM uk ORDER BY node
----
%s

# Exact shares, as counts of the 2^32 positions.
query TI
SELECT node, CAST(round(share * 4294967296) AS INTEGER) FROM uk ORDER BY node
----
%s

# ch_points lists the points themselves.
query IT
SELECT token, node FROM ch_points('uk') ORDER BY token LIMIT 3
----
%s

query T
%s
----
%s

query T
%s
----
%s
""" % (ERRORS, insert('uk', SERVERS),
       '\n'.join('%s\t%d' % (shown(s), 4 * n_labels[s]) for s, _ in by_name),
       '\n'.join('%s\t%d' % (shown(s), v) for s, v in
                 sorted(arcs(r).items(), key=lambda x: x[0].encode())),
       '\n'.join('%d\t%s' % (p, shown(r.owners[p])) for p in r.keys[:3]),
       KEYS % (12, 'uk'), '\n'.join(shown(r.owner(k)) for k in keys(12)),
       KEYS % (1000, 'uk'), md5_form([r.owner(k) for k in keys(1000)]))]

    exact = ['%s-%d' % (s, i) for s, _ in SERVERS for i in (0, 5)]
    last = r.keys[-1]
    wrap, i = [], 0
    while len(wrap) < 3:
        k = 'wrap-%d' % i
        if m.md5_words(k)[0] > last:
            wrap.append(k)
        i += 1
    out.append("""
# The label of digest i of server S ("S-i") lands exactly on point 4i of S,
# and goes to the next point (strictly above): its owner, not S's.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5'), ch_locate(k, 'uk') FROM v
----
%s

# Past the highest point (%d): wraps to the lowest point's server.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5'), ch_locate(k, 'uk') FROM v
----
%s
""" % (values(exact),
       '\n'.join('%d\t%s' % (r.key_position(k), shown(r.owner(k))) for k in exact),
       last, values(wrap),
       '\n'.join('%d\t%s' % (r.key_position(k), shown(r.owner(k))) for k in wrap)))

    # A server whose label count floors to 0.
    zero = [('big', 200), ('none', 1), ('mid', 7)]
    z = m.Ring(zero, ketama=True)
    out.append("""
# floor(40 * 3 * 1 / 208) = 0: server none gets no point, no share, no key.
statement ok
CREATE VIRTUAL TABLE uz USING chash(algorithm=uhashring_ketama)

statement ok
%s

query TI
SELECT node, points FROM uz ORDER BY node
----
%s

query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*) FROM n WHERE ch_locate('key' || i, 'uz') = 'none'
----
0
""" % (insert('uz', zero),
       '\n'.join('%s\t%d' % (s, owned(z, s)) for s, _ in sorted(zero))))

    # Ties: two servers with an equal point; the one that joined last owns it.
    a, b, point = m.ketama_collision()
    out.append("""
# %s and %s share the point %d: the server that joined last owns it
# (uhashring places servers in the order given, a later point replacing an
# equal one in its map). uhashring's sorted list keeps both copies, but a
# key only ever reaches the map's owner, so ch_points lists the point once,
# under its owner, and the other server's count leaves it out. Keys just
# below it, in both join orders.""" % (a, b, point))
    for t, order in (('tab', [(a, 1), (b, 1)]), ('tba', [(b, 1), (a, 1)])):
        ring = m.Ring(order, ketama=True)
        lo = ring.keys[ring.keys.index(point) - 1]
        arc, j = [], 0
        while len(arc) < 3:
            k = 'arc-%d' % j
            if lo <= m.md5_words(k)[0] < point:
                arc.append(k)
            j += 1
        out.append("""
statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=uhashring_ketama)

statement ok
%s

query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5'), ch_locate(k, '%s') FROM v
----
%s

query T
SELECT node FROM ch_points('%s') WHERE token = %d
----
%s

query TI
SELECT node, points FROM %s ORDER BY node
----
%s
""" % (t, insert(t, order), values(arc), t,
       '\n'.join('%d\t%s' % (m.md5_words(k)[0], ring.owner(k)) for k in arc),
       t, point, ring.owners[point], t,
       '\n'.join('%s\t%d' % (s, owned(ring, s)) for s in sorted((a, b)))))
    return ''.join(out)


DEFAULT_ERRORS = """
# Options and weights uhashring's default ring does not have.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=uhashring, hash=md5)
----
algorithm uhashring takes only hash md5_128 (uhashring's default ring hashes with the whole 128-bit MD5), not md5

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=uhashring, seed=1)
----
seed does not apply to hash md5_128

statement ok
CREATE VIRTUAL TABLE w USING chash(algorithm=uhashring)

statement error
INSERT INTO w(node, weight) VALUES ('a', 1.5)
----
algorithm uhashring takes whole weights, as uhashring does: 1, 2, 3, ...
"""


def signed(v):
    """A 64-bit position as SQLite's INTEGER shows it."""
    return v - (1 << 64) if v >= 1 << 63 else v


def top(v):
    """The top 64 bits of a 128-bit position: ch_hash(k, 'md5_128')."""
    return signed(v >> 64)


def shares_128(ring):
    """{server: exact share} of a default ring: a point owns the 128-bit
    positions from the point before it up to one below itself."""
    out, prev = {}, ring.keys[-1] - (1 << 128)
    for p in ring.keys:
        out[ring.owners[p]] = out.get(ring.owners[p], 0) + p - prev
        prev = p
    return {s: v / float(1 << 128) for s, v in out.items()}


def replicas(ring, key, n):
    """The first n distinct servers from the key's point on."""
    i = bisect.bisect_right(ring.keys, m.md5_int(key))
    out = []
    for j in range(len(ring.keys)):
        s = ring.owners[ring.keys[(i + j) % len(ring.keys)]]
        if s not in out:
            out.append(s)
        if len(out) == n:
            break
    return out


def gen_default():
    r = m.Ring(SERVERS)
    by_name = sorted(SERVERS, key=lambda x: x[0].encode())
    exact = ['%s-%d' % (s, i) for s, _ in SERVERS for i in (0, 7)]
    wrap, i = [], 0
    while len(wrap) < 3:
        k = 'wrap-%d' % i
        if m.md5_int(k) > r.keys[-1]:
            wrap.append(k)
        i += 1
    odd = ['', '€', 'кэш:42', '\U0001F600', 'a b']
    added = SERVERS + [('cache-e', 2)]
    r2 = m.Ring(added)
    moved = [k for k in keys(1000) if r.owner(k) != r2.owner(k)]
    v7 = [('a', 1), ('b', 3)]
    r7 = m.Ring(v7, vnodes=7)
    return """# algorithm uhashring: Python uhashring's default ring, HashRing(nodes).
# Written by tests/gen/uhashring_gen.py from its independent model
# (tests/gen/uhashring_model.py, checked against the real uhashring by
# tests/compat/pyclients.py). Nodes are the names given to HashRing, in the
# order given (join order); weights are the dict's values. Points and keys
# are 128-bit MD5 values; ch_hash(k, 'md5_128') and ch_points' tokens show
# their top 64 bits (the low 64 break ties there: tests/unit/
# lookup_rules_test.c feeds such ties directly, as no MD5 input with a
# given top 64 bits can be written here).
%s
statement ok
CREATE VIRTUAL TABLE ud USING chash(algorithm=uhashring)

statement ok
%s

# vnodes * w points: 160 per unit of weight, not normalised.
query TI
SELECT node, points FROM ud ORDER BY node
----
%s

# Shares, in billionths (the model's exact 128-bit arcs).
query TI
SELECT node, CAST(round(share * 1e9) AS INTEGER) FROM ud ORDER BY node
----
%s

# ch_points lists the points' top 64 bits.
query IT
SELECT token, node FROM ch_points('ud') ORDER BY token LIMIT 3
----
%s

query T
%s
----
%s

query T
%s
----
%s

# The label "S-i" is exactly point i of S, and goes to the next point
# (strictly above): its owner, not S's.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5_128'), ch_locate(k, 'ud') FROM v
----
%s

# Past the highest point: wraps to the lowest point's server.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5_128'), ch_locate(k, 'ud') FROM v
----
%s

# The empty key, characters beyond ASCII and beyond the BMP, an INTEGER key
# (hashed as its decimal text, as str(key) is).
query T
WITH v(k) AS (VALUES %s, (42))
SELECT ch_locate(k, 'ud') FROM v
----
%s

# ch_replicas: the key's server, then the next distinct one on the ring.
query T
SELECT node FROM ch_replicas('key7', 2, 'ud') ORDER BY rank
----
%s

# Adding a server moves keys only onto it.
statement ok
CREATE VIRTUAL TABLE ud2 USING chash(algorithm=uhashring)

statement ok
%s

query II
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*), sum(ch_locate('key' || i, 'ud2') <> 'cache-e')
  FROM n WHERE ch_moved('key' || i, 'ud', 'ud2')
----
%d	0

# vnodes sets the points per unit of weight.
statement ok
CREATE VIRTUAL TABLE u7 USING chash(algorithm=uhashring, vnodes=7)

statement ok
%s

query TI
SELECT node, points FROM u7 ORDER BY node
----
a	7
b	21

query T
%s
----
%s
""" % (DEFAULT_ERRORS, insert('ud', SERVERS),
       '\n'.join('%s\t%d' % (shown(s), 160 * w) for s, w in by_name),
       '\n'.join('%s\t%d' % (shown(s), round(v * 1e9)) for s, v in
                 sorted(shares_128(r).items(), key=lambda x: x[0].encode())),
       '\n'.join('%d\t%s' % (t, shown(o)) for t, o in
                 sorted((signed(p >> 64), r.owners[p]) for p in r.keys)[:3]),
       KEYS % (12, 'ud'), '\n'.join(shown(r.owner(k)) for k in keys(12)),
       KEYS % (1000, 'ud'), md5_form([r.owner(k) for k in keys(1000)]),
       values(exact),
       '\n'.join('%d\t%s' % (top(m.md5_int(k)), shown(r.owner(k))) for k in exact),
       values(wrap),
       '\n'.join('%d\t%s' % (top(m.md5_int(k)), shown(r.owner(k))) for k in wrap),
       values(odd), '\n'.join(shown(r.owner(k)) for k in odd + ['42']),
       '\n'.join(shown(s) for s in replicas(r, 'key7', 2)),
       insert('ud2', added), len(moved),
       insert('u7', v7), KEYS % (12, 'u7'), '\n'.join(r7.owner(k) for k in keys(12)))


if __name__ == '__main__':
    genfiles.main('uhashring_gen.py', [('uhashring_ketama.test', gen),
                                       ('uhashring.test', gen_default)])

"""tests/gen/uhashring_gen.py: writes tests/gen/uhashring_ketama.test,
algorithm uhashring_ketama, with every expected value computed by the
independent model in tests/gen/uhashring_model.py (which
tests/compat/pyclients.py checks against the real uhashring). Keys that
land exactly on a point are the labels the points were made of ("S-i": its
MD5 word 0 is point 4i of S), and go to the point after it (strictly
above); keys past the last point wrap to the lowest point.

Run: /usr/bin/python3 tests/gen/uhashring_gen.py --write  (or --check)
"""

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


if __name__ == '__main__':
    genfiles.main('uhashring_gen.py', [('uhashring_ketama.test', gen)])

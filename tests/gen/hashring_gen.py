"""tests/gen/hashring_gen.py: writes tests/gen/hashring.test, algorithm
hashring, with every expected value computed by the independent model in
tests/gen/hashring_model.py (which tests/compat/hashring.py checks against
the real npm packages). Keys that land exactly on a point are the texts the
points were made of ("S-i": its MD5 word 0 is point 4i of S); keys past
the last point (the wrap-around) are found by search.

Run: /usr/bin/python3 tests/gen/hashring_gen.py --write  (or --check)
"""

import genfiles
from testkit import (LOCATE_KEYS as KEYS, arc_widths as shares, insert, keys,
                     md5_form, moved_positions, shown, sql_text)
import hashring_model as m

SERVERS = [('10.0.0.1', 1), ('cache-b:11212', 2), ('кэш-c', 1.5), ('10.0.0.4:22122', 1)]


ERRORS = """
# Options hashring does not have.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=hashring, vnodes=161)
----
vnodes: algorithm hashring needs a multiple of 4 (4 x hashring's vnode count: each MD5 digest gives 4 points); its default is 160

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=hashring, hash=xxh3)
----
hash: algorithm hashring hashes keys and points with MD5, as hashring and the memcached client do by default (md5, the default), not xxh3

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=hashring, seed=1)
----
seed does not apply to hash md5

# vnodes=4 (a vnode count of 1): 49 equal servers each get
# floor(1/49*1*49) = floor(0.9999999999999999) = 0 digests, a ring that could
# place nothing, refused at commit; 48 get one digest each.
statement ok
CREATE VIRTUAL TABLE v4 USING chash(algorithm=hashring, vnodes=4)

statement error
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<49)
INSERT INTO v4(node) SELECT 'n' || i FROM n
----
v4: algorithm hashring gives none of the 49 nodes a point: vnodes 4 rounds each node's count down to 0

statement ok
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<48)
INSERT INTO v4(node) SELECT 'n' || i FROM n

query II
SELECT count(*), sum(points) FROM v4
----
48\t192

# Weights are any positive numbers, as JavaScript's.
statement ok
CREATE VIRTUAL TABLE w USING chash(algorithm=hashring)

statement ok
INSERT INTO w(node, weight) VALUES ('a', 0.25), ('b', 0.75)

query TI
SELECT node, points FROM w ORDER BY node
----
a\t80
b\t240
"""


def points_rows(ring, servers):
    return '\n'.join('%s\t%d' % (shown(s), sum(1 for e in ring.entries if e[1] == s))
                     for s, _ in sorted(servers, key=lambda x: x[0].encode()))


def gen():
    r = m.Ring(SERVERS)
    out = ["""# algorithm hashring: the npm packages hashring and memcached. Written by
# tests/gen/hashring_gen.py from its independent model
# (tests/gen/hashring_model.py, checked against the real packages by
# tests/compat/hashring.py). Nodes are the server strings, in the order given
# (join order); a memcached server on port 11211 is named by its host alone.

statement ok
CREATE VIRTUAL TABLE hr USING chash(algorithm=hashring)

statement ok
%s

# floor(w / W * 40 * n) digests of 4 points each.
query TI
SELECT node, points FROM hr ORDER BY node
----
%s

# Exact shares, as counts of the 2^32 positions.
query TI
SELECT node, CAST(round(share * 4294967296) AS INTEGER) FROM hr ORDER BY node
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
""" % (insert('hr', SERVERS), points_rows(r, SERVERS),
       '\n'.join('%s\t%d' % (shown(s), v) for s, v in
                 sorted(shares(r.entries).items(), key=lambda x: x[0].encode())),
       KEYS % (12, 'hr'), '\n'.join(shown(r.locate(k)) for k in keys(12)),
       KEYS % (1000, 'hr'), md5_form([r.locate(k) for k in keys(1000)]))]

    # Keys on points and around the wrap-around.
    exact = ['%s-%d' % (s, i) for s, _ in SERVERS for i in (0, 5)]
    last, first = r.entries[-1][0], r.entries[0][0]
    wrap, i = [], 0
    while len(wrap) < 3:
        k = 'wrap-%d' % i
        if m.key_position(k) > last:
            wrap.append(k)
        i += 1
    out.append("""
# The text of digest i of server S ("S-i") lands exactly on point 4i of S.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5'), ch_locate(k, 'hr') FROM v
----
%s

# Past the highest point (%d): wraps to the lowest point's server.
query IT
WITH v(k) AS (VALUES %s)
SELECT ch_hash(k, 'md5'), ch_locate(k, 'hr') FROM v
----
%s
""" % (', '.join('(%s)' % sql_text(k) for k in exact),
       '\n'.join('%d\t%s' % (m.key_position(k), shown(r.locate(k))) for k in exact),
       last, ', '.join('(%s)' % sql_text(k) for k in wrap),
       '\n'.join('%d\t%s' % (m.key_position(k), shown(r.locate(k))) for k in wrap)))

    # Seven equal servers: 39 digests each.
    seven = [('node%d.example:6379' % i, 1) for i in range(1, 8)]
    s7 = m.Ring(seven)
    out.append("""
# Seven equal servers: 1/7*40*7 is 39.99999999999999 in double precision,
# so each gets 39 digests (156 points), not 40.
statement ok
CREATE VIRTUAL TABLE h7 USING chash(algorithm=hashring)

statement ok
%s

query TI
SELECT node, points FROM h7 ORDER BY node
----
%s

query T
%s
----
%s
""" % (insert('h7', seven), points_rows(s7, seven),
       KEYS % (1000, 'h7'), md5_form([s7.locate(k) for k in keys(1000)])))

    # A server whose count floors to 0.
    zero = [('big:1', 200), ('none:2', 1), ('mid:3', 7)]
    z = m.Ring(zero)
    out.append("""
# 1/208*40*3 = 0.58: server none:2 gets no digest, no share and no key.
statement ok
CREATE VIRTUAL TABLE hz USING chash(algorithm=hashring)

statement ok
%s

query TIR
SELECT node, points, share FROM hz ORDER BY node
----
%s

query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*) FROM n WHERE ch_locate('key' || i, 'hz') = 'none:2'
----
0
""" % (insert('hz', zero),
       '\n'.join('%s\t%d\t%.3f' % (s, sum(1 for e in z.entries if e[1] == s),
                                  shares(z.entries).get(s, 0) / float(1 << 32))
                 for s, _ in sorted(zero))))

    # Ties.
    a, b, point = m.collision_pair()
    ab, ba = m.Ring([(a, 1), (b, 1)]), m.Ring([(b, 1), (a, 1)])
    arc, j = [], 0
    pts = [e[0] for e in ab.entries]
    lo = pts[pts.index(point) - 1]
    while len(arc) < 3:
        k = 'arc-%d' % j
        if lo < m.key_position(k) <= point:
            arc.append(k)
        j += 1
    out.append("""
# Two servers with an equal point (%d): the server given first wins it
# (both keep the point in their count). Keys in the arc that ends there.
statement ok
CREATE VIRTUAL TABLE tab USING chash(algorithm=hashring)

statement ok
%s

statement ok
CREATE VIRTUAL TABLE tba USING chash(algorithm=hashring)

statement ok
%s

query TT
WITH v(k) AS (VALUES %s)
SELECT ch_locate(k, 'tab'), ch_locate(k, 'tba') FROM v
----
%s
""" % (point, insert('tab', [(a, 1), (b, 1)]), insert('tba', [(b, 1), (a, 1)]),
       ', '.join('(%s)' % sql_text(k) for k in arc),
       '\n'.join('%s\t%s' % (ab.locate(k), ba.locate(k)) for k in arc)))

    # The table-valued functions.
    first = r.entries[:4]
    def replica_of(entry):
        srv = entry[1]
        count = sum(1 for e in r.entries if e[1] == srv) // 4
        for i in range(count):
            words = m.md5_words('%s-%d' % (srv, i))
            if entry[0] in words:
                return 4 * i + words.index(entry[0])
    out.append("""
# ch_points: tokens ascending; replica 4i+w is word w of digest i.
query ITI
SELECT token, node, replica FROM ch_points('hr') LIMIT 4
----
%s

# The tie ring keeps both equal points (hashring does), the winner first.
query II
SELECT count(*), count(DISTINCT token) FROM ch_points('tab')
----
%d\t%d

query T
SELECT group_concat(node, ' ') FROM ch_points('tab') WHERE token = %d
----
%s

query I
SELECT CAST(round(sum(share) * 4294967296) AS INTEGER) FROM ch_arcs('hr')
----
4294967296

query IT
SELECT rank, node FROM ch_replicas('key1', 4, 'hr')
----
%s
""" % ('\n'.join('%d\t%s\t%d' % (p, shown(srv), replica_of((p, srv))) for p, srv in first),
       len(ab.entries), len(set(e[0] for e in ab.entries)), point,
       ' '.join(e[1] for e in ab.entries if e[0] == point),
       '\n'.join('%d\t%s' % (i + 1, shown(srv)) for i, srv in enumerate(m.replicas(r, 'key1', 4)))))

    # Adding a server: the others' counts may change (here they do not,
    # weights being what they are), keys move.
    grown = SERVERS + [('10.0.0.5', 2)]
    g = m.Ring(grown)
    moved = [k for k in keys(1000) if r.locate(k) != g.locate(k)]
    onto = sum(1 for k in moved if g.locate(k) == '10.0.0.5')
    out.append("""
# Adding a server changes every server's digest count (the floor of
# w / W * 40 * n): keys move onto the new server and, a few, between others.
statement ok
INSERT INTO hr(node, weight) VALUES ('10.0.0.5', 2)

query TI
SELECT node, points FROM hr ORDER BY node
----
%s

query II
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*), sum(ch_locate('key' || i, 'hr') = '10.0.0.5')
  FROM n WHERE ch_moved('key' || i, 'hr@1', 'hr')
----
%d\t%d

query T
%s
----
%s

# ch_diff: exactly the positions that change owner.
query I
SELECT CAST(round(sum(share) * 4294967296) AS INTEGER) FROM ch_diff('hr@1', 'hr')
----
%d
""" % (points_rows(g, grown), len(moved), onto,
       KEYS % (1000, 'hr'), md5_form([g.locate(k) for k in keys(1000)]),
       moved_positions(r, g)))

    # vnodes: 4 x hashring's vnode count.
    v = m.Ring(SERVERS, vnode_count=10)
    out.append("""
# vnodes=40 is hashring's 'vnode count' 10.
query T
%s
----
%s
""" % (KEYS % (1000, '{"algorithm":"hashring","vnodes":40,"nodes":{%s}}' % ','.join(
        '"%s":%s' % (s, repr(w)) for s, w in SERVERS)),
       md5_form([v.locate(k) for k in keys(1000)])))
    out.append(ERRORS)
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('hashring_gen.py', [('hashring.test', gen)])

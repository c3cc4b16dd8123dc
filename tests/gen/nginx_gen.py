"""tests/gen/nginx_gen.py: writes tests/gen/nginx.test, algorithm nginx,
with every expected value computed by the independent model in
tests/gen/nginx_model.py (which tests/compat/nginx.py checks against the
real nginx). Keys that land exactly on a point, just past one and on the
wrap-around are forged from the rule (CRC-32 is affine, so a key's
suffix can be solved for any position).

Run: /usr/bin/python3 tests/gen/nginx_gen.py --write  (or --check)
"""

import genfiles
from testkit import (LOCATE_KEYS as KEYS, arc_widths, byte_keys as keys, forge_crc32, insert,
                     md5_form, moved_positions, sql_key, tie_queries)
import nginx_model as m

SERVERS = [(b'10.0.0.1:8080', 1), (b'10.0.0.2', 2), (b'backend', 1),
           (b'unix:/run/app.sock', 1), (b'[::1]:8080', 3)]


ERRORS = """
# Options and weights nginx cannot express.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=nginx, vnodes=160)
----
vnodes does not apply to algorithm nginx

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=nginx, hash=md5)
----
hash: algorithm nginx hashes keys and points with CRC-32, as nginx does (crc32a, the default), not md5

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=nginx, seed=7)
----
seed does not apply to hash crc32a

statement ok
CREATE VIRTUAL TABLE explicit USING chash(algorithm=nginx, hash=crc32a)

statement error
INSERT INTO explicit(node, weight) VALUES ('10.0.0.1:80', 1.5)
----
explicit: algorithm nginx takes whole weights, as nginx's weight=N does: 1, 2, 3, ...

statement error
INSERT INTO explicit(node, weight) VALUES ('10.0.0.1:80', 0.5)
----
algorithm nginx takes whole weights

statement ok
INSERT INTO explicit(node, weight) VALUES ('10.0.0.1:80', 3)

statement error
UPDATE explicit SET weight = 2.25
----
algorithm nginx takes whole weights

# 160 points per unit of weight: 2^24 points hold a total weight of 104857.
statement error
UPDATE explicit SET weight = 104858
----
too many points

query I
SELECT points FROM explicit
----
480

statement error
SELECT ch_locate('k', '{"algorithm":"nginx","nodes":{"a":2.5}}')
----
node 'a': algorithm nginx takes whole weights

statement error
SELECT ch_locate('k', '{"algorithm":"nginx","vnodes":100,"nodes":["a"]}')
----
vnodes does not apply to algorithm nginx

# The empty key is CRC-32 0: the lowest point's server (nginx itself sends
# requests with an empty key round-robin); NULL places nothing.
query TT
SELECT ch_locate('', 'explicit'), ch_locate(NULL, 'explicit')
----
10.0.0.1:80\tNULL
"""


def shares(ring):
    """Each server's exact share of the 2^32 positions."""
    return {s: v / float(1 << 32) for s, v in arc_widths(ring).items()}


def gen():
    r = m.Ring(SERVERS)
    ring = r.entries
    out = ["""# algorithm nginx: nginx's `hash $key consistent` upstreams. Written by
# tests/gen/nginx_gen.py from its independent model (tests/gen/nginx_model.py,
# checked against the real nginx by tests/compat/nginx.py). Nodes are the
# server addresses as written, in the upstream's order (join order).

statement ok
CREATE VIRTUAL TABLE ng USING chash(algorithm=nginx)

statement ok
%s

# 160 points per unit of weight; weights are integers.
query TRI rowsort
SELECT node, weight, points FROM ng
----
%s
""" % (insert('ng', SERVERS),
       '\n'.join('%s\t%d.000\t%d' % (s.decode(), w, sum(1 for e in ring if e[1] == s))
                 for s, w in sorted(SERVERS)))]

    sh = shares(ring)
    out.append("""
# Exact shares, as counts of the 2^32 positions.
query TI rowsort
SELECT node, CAST(round(share * 4294967296) AS INTEGER) FROM ng
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
""" % ('\n'.join('%s\t%d' % (s.decode(), round(sh[s] * (1 << 32))) for s, _ in sorted(SERVERS)),
       KEYS % (12, 'ng'), '\n'.join(r.locate(k).decode() for k in keys(12)),
       KEYS % (1000, 'ng'), md5_form([r.locate(k).decode() for k in keys(1000)])))

    # Keys on the edges of the ring, forged from the rule.
    pts = [e[0] for e in ring]
    edges = [('the lowest point', pts[0]), ('one past the lowest point', pts[0] + 1),
             ('the second point', pts[1]), ('a point in the middle', pts[len(pts) // 2]),
             ('one past it', pts[len(pts) // 2] + 1),
             ('the highest point', pts[-1]),
             ('one past the highest point: wraps to the lowest', pts[-1] + 1),
             ('position 2^32-1: wraps', 0xffffffff), ('position 0', 0)]
    lines = []
    for what, pos in edges:
        k = forge_crc32(b'edge-', pos)
        lines.append((what, pos, k, r.locate(k)))
    out.append("""
# Keys forged to land exactly on points, just past them and on the
# wrap-around (position = CRC-32 of the key, as ch_hash(key, 'crc32a')).
""")
    for what, pos, k, owner in lines:
        out.append("""
# %s (position %d)
query IT
SELECT ch_hash(%s, 'crc32a'), ch_locate(%s, 'ng')
----
%d\t%s
""" % (what, pos, sql_key(k), sql_key(k), pos, owner.decode()))

    # The point texts themselves: point 1 of a server is the CRC-32 of
    # host NUL port and four zero bytes, so that text, as a key, lands on it.
    out.append("""
# A point's own text as a key lands on that point: point 1 of each server
# is the CRC-32 of host, NUL, port and four zero bytes (unix: dropped).
query T
WITH v(k) AS (VALUES %s)
SELECT ch_locate(k, 'ng') FROM v
----
%s
""" % (', '.join('(%s)' % sql_key(b'\0'.join(m.split_server(s)) + b'\0\0\0\0')
                 for s, _ in SERVERS),
       '\n'.join(r.locate(b'\0'.join(m.split_server(s)) + b'\0\0\0\0').decode()
                 for s, _ in SERVERS)))

    # Host-only and host:port are different names.
    variants = [(b'10.0.0.9', 1), (b'10.0.0.9:80', 1), (b'10.0.0.9:0080', 1)]
    others = [(b'10.0.0.7:80', 1), (b'10.0.0.8:80', 1)]
    rings = [m.Ring(others + [v]) for v in variants]
    places = [[x.locate(k) for k in keys(1000)] for x in rings]
    out.append("""
# A server hashed without a port (10.0.0.9), with one (10.0.0.9:80) and with
# the same port written otherwise (10.0.0.9:0080) has three different sets of
# points: the number of keys (of 1000) each of them gets next to two others.
statement ok
CREATE VIRTUAL TABLE h1 USING chash(algorithm=nginx)

statement ok
CREATE VIRTUAL TABLE h2 USING chash(algorithm=nginx)

statement ok
CREATE VIRTUAL TABLE h3 USING chash(algorithm=nginx)

statement ok
%s

statement ok
%s

statement ok
%s

query III
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT sum(ch_locate('key' || i, 'h1') = '10.0.0.9'),
       sum(ch_locate('key' || i, 'h2') = '10.0.0.9:80'),
       sum(ch_locate('key' || i, 'h3') = '10.0.0.9:0080') FROM n
----
%d\t%d\t%d
""" % (insert('h1', others + [variants[0]]), insert('h2', others + [variants[1]]),
       insert('h3', others + [variants[2]]),
       *[sum(1 for p in pl if p == v[0]) for pl, v in zip(places, variants)]))

    # Ties: two servers with an equal point; the first listed keeps it.
    a, b, point = m.collision_pair(b'127.0.0')
    ab, ba = m.Ring([(a, 1), (b, 1)]), m.Ring([(b, 1), (a, 1)])
    k = forge_crc32(b'tie-', point)
    out.append("""
# Two servers with an equal point (%d): nginx keeps the point of the
# server listed first; the other has 159 points. In both orders.
statement ok
CREATE VIRTUAL TABLE tab USING chash(algorithm=nginx)

statement ok
%s

statement ok
CREATE VIRTUAL TABLE tba USING chash(algorithm=nginx)

statement ok
%s

%s
query I
SELECT ch_hash(%s, 'crc32a')
----
%d
""" % (point, insert('tab', [(a, 1), (b, 1)]), insert('tba', [(b, 1), (a, 1)]),
       tie_queries(*[{s: sum(1 for e in r.entries if e[1] == s) for s in (a, b)}
                     for r in (ab, ba)], k, ab.locate(k), ba.locate(k)),
       sql_key(k), point))

    # The table-valued functions over the same rings.
    def chain_rank(ring_obj, servers):
        """(point -> its rank among its server's kept points, chain order)."""
        owned = {e[0]: e[1] for e in ring_obj.entries}
        rank = {}
        for srv, w in servers:
            j = 0
            for p in m.server_points(srv, w):
                if owned.get(p) == srv:
                    rank[p] = j
                    j += 1
        return rank
    rk = chain_rank(r, SERVERS)
    out.append("""
# ch_points lists nginx's ring: tokens ascending, replica = the point's rank
# in its server's chain (from 0, points lost to a tie not counted).
query ITI
SELECT token, node, replica FROM ch_points('ng') LIMIT 4
----
%s

query II
SELECT count(*), count(DISTINCT token) FROM ch_points('tab')
----
%d\t%d

# The tie ring's replica numbers skip the lost point: they still run 0..158.
query TII
SELECT node, min(replica), max(replica) FROM ch_points('tab') GROUP BY node ORDER BY node
----
%s

query I
SELECT CAST(round(sum(share) * 4294967296) AS INTEGER) FROM ch_arcs('ng')
----
4294967296

# ch_replicas: distinct servers clockwise from the key, the order in which
# nginx tries them when one fails.
query IT
SELECT rank, node FROM ch_replicas('key1', 5, 'ng')
----
%s
""" % ('\n'.join('%d\t%s\t%d' % (p, srv.decode(), rk[p]) for p, srv in ring[:4]),
       len(ab.entries), len(set(e[0] for e in ab.entries)),
       '\n'.join('%s\t0\t%d' % (srv.decode(), sum(1 for e in ab.entries if e[1] == srv) - 1)
                  for srv in sorted([a, b])),
       '\n'.join('%d\t%s' % (i + 1, srv.decode())
                  for i, srv in enumerate(m.replicas(r, b'key1', 5)))))

    # Adding a server moves keys only onto it.
    grown = SERVERS + [(b'10.0.0.3:8080', 2)]
    g = m.Ring(grown)
    moved = sum(1 for k in keys(1000) if r.locate(k) != g.locate(k))
    onto = sum(1 for k in keys(1000) if r.locate(k) != g.locate(k) and g.locate(k) == b'10.0.0.3:8080')
    out.append("""
# Adding a server: keys move only onto it.
statement ok
INSERT INTO ng(node, weight) VALUES ('10.0.0.3:8080', 2)

query II
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*), sum(ch_locate('key' || i, 'ng') = '10.0.0.3:8080')
  FROM n WHERE ch_moved('key' || i, 'ng@1', 'ng')
----
%d\t%d

query T
%s
----
%s

# ch_diff: exactly the positions that change owner (all onto the new server).
query IT
SELECT CAST(round(sum(share) * 4294967296) AS INTEGER), group_concat(DISTINCT dst)
  FROM ch_diff('ng@1', 'ng')
----
%d\t10.0.0.3:8080
""" % (moved, onto, KEYS % (1000, 'ng'), md5_form([g.locate(k).decode() for k in keys(1000)]),
       moved_positions(r, g)))

    # An inline ring: a JSON object's order is the server order.
    js = '{"algorithm":"nginx","nodes":{"%s":1,"%s":1}}' % (b.decode(), a.decode())
    out.append("""
# An inline JSON ring keeps the object's order (here the tie goes to %s).
query T
SELECT ch_locate(%s, '%s')
----
%s
""" % (b.decode(), sql_key(k), js, ba.locate(k).decode()))
    out.append(ERRORS)
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('nginx_gen.py', [('nginx.test', gen)])

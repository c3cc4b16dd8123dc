"""tests/gen/dalli_gen.py: writes tests/gen/dalli.test, algorithm dalli,
with every expected value computed by the independent model in
tests/gen/dalli_model.py (which tests/compat/dalli.py checks against the
real Dalli). Keys that land exactly on a point, just below one and on the
wrap-around are forged from the rule (CRC-32 is affine, so a key's suffix
can be solved for any position).

Run: /usr/bin/python3 tests/gen/dalli_gen.py --write  (or --check)
"""
import hashlib

import genfiles
from testkit import (LOCATE_KEYS as KEYS, byte_keys as keys, first_shared_point, forge_crc32,
                     insert, md5_form, sql_key, tie_queries)
import dalli_model as m

SERVERS = [(b'10.0.0.1:11211', 1), (b'10.0.0.2', 2), (b'cache-3', 1),
           (b'[::1]:11212', 3), (b'/run/memcached.sock', 1)]

ERRORS = """
# Options, weights and servers Dalli cannot express.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=dalli, vnodes=160)
----
vnodes does not apply to algorithm dalli

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=dalli, hash=md5)
----
hash: algorithm dalli hashes keys with CRC-32 and points with SHA-1, as Dalli does (crc32a, the default), not md5

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=ketama, namespace=app)
----
namespace does not apply to algorithm ketama (it is the prefix of every key hashed; algorithms that take it: dalli)

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=dalli, namespace='%s')
----
namespace: '%s' is not 1 to 100 bytes (Dalli's :namespace; leave it out for none)

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=dalli, namespace=a, namespace=b)
----
option namespace is given more than once

statement ok
CREATE VIRTUAL TABLE explicit USING chash(algorithm=dalli, hash=crc32a)

statement error
INSERT INTO explicit(node, weight) VALUES ('a:11211', 1.5)
----
explicit: algorithm dalli takes whole weights, as Dalli's "host:port:weight" does: 1, 2, 3, ...

# A weight goes in the weight column, not in the server string; a port is
# digits (one with a leading 0 is octal to Dalli, so 8 and 9 make it fail);
# a unix socket has no port.
statement error
INSERT INTO explicit(node, weight) VALUES ('a:11211:3', 1)
----
explicit: node 'a:11211:3': algorithm dalli takes a server as Dalli::Client does: host, host:port, [IPv6]:port or a unix socket's path (a weight goes in the weight column)

statement error
INSERT INTO explicit(node, weight) VALUES ('a:http', 1)
----
node 'a:http': algorithm dalli takes a server

statement error
INSERT INTO explicit(node, weight) VALUES ('a:089', 1)
----
node 'a:089': algorithm dalli takes a server

statement error
INSERT INTO explicit(node, weight) VALUES ('/run/mc.sock:2', 1)
----
node '/run/mc.sock:2': algorithm dalli takes a server

statement error
INSERT INTO explicit(node, weight) VALUES (':11211', 1)
----
node ':11211': algorithm dalli takes a server

statement error
SELECT ch_locate('k', '{"algorithm":"dalli","nodes":{"a":2.5}}')
----
node 'a': algorithm dalli takes whole weights

statement error
SELECT ch_locate('k', '{"algorithm":"dalli","nodes":["a:b"]}')
----
ch_locate: JSON ring spec: node 'a:b': algorithm dalli takes a server

query I
SELECT count(*) FROM explicit
----
0
""" % ('n' * 101, 'n' * 101)


def kept(r):
    """The points on the ring: of equal points the last (the later
    server's), as [(point, server name)]."""
    out = []
    for p, i in r.entries:
        if out and out[-1][0] == p:
            out.pop()
        out.append((p, r.servers[i][0]))
    return out


def counts(r):
    c = {s: 0 for s, _ in r.servers}
    for _, s in kept(r):
        c[s] += 1
    return c


def shares(r):
    """Positions each server owns: from its point up to the next one."""
    pts = kept(r)
    out = {s: 0 for s, _ in r.servers}
    for k, (p, s) in enumerate(pts):
        nxt = pts[k + 1][0] if k + 1 < len(pts) else pts[0][0] + (1 << 32)
        out[s] += nxt - p
    return out


def node_rows(r):
    c = counts(r)
    return '\n'.join('%s\t%d.000\t%d' % (s.decode(), w, c[s]) for s, w in sorted(r.servers))


def create(table, servers, options=''):
    return """statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=dalli%s)

statement ok
%s
""" % (table, options, insert(table, servers))


def gen():
    r = m.Ring(SERVERS)
    out = ["""# algorithm dalli: Ruby Dalli's ring (Rails' :mem_cache_store). Written by
# tests/gen/dalli_gen.py from its independent model (tests/gen/dalli_model.py,
# checked against the real Dalli by tests/compat/dalli.py). Nodes are the
# servers as given to Dalli::Client, in the client's order (join order).

%s
# floor(n * 160 * w / total weight) points each: 5 servers of total weight
# 8 get 100, 200, 100, 300 and 100.
query TRI rowsort
SELECT node, weight, points FROM dl
----
%s

# Exact shares, as counts of the 2^32 positions: a point owns the
# positions from itself up to the next point.
query TI rowsort
SELECT node, CAST(round(share * 4294967296) AS INTEGER) FROM dl
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
""" % (create('dl', SERVERS), node_rows(r),
       '\n'.join('%s\t%d' % (s.decode(), n) for s, n in sorted(shares(r).items())),
       KEYS % (12, 'dl'), '\n'.join(r.locate(k).decode() for k in keys(12)),
       KEYS % (1000, 'dl'), md5_form([r.locate(k).decode() for k in keys(1000)]))]

    # Keys on the edges of the ring, forged from the rule.
    pts = [p for p, _ in kept(r)]
    mid = pts[len(pts) // 2]
    edges = [('the lowest point', pts[0]),
             ('one below the lowest point: wraps to the highest', pts[0] - 1),
             ('a point in the middle', mid), ('one below it', mid - 1),
             ('the highest point', pts[-1]), ('one below the highest point', pts[-1] - 1),
             ('position 2^32-1', 0xffffffff), ('position 0: wraps', 0)]
    out.append("""
# Keys forged to land exactly on points, just below them and on the
# wrap-around (position = CRC-32 of the key, as ch_hash(key, 'crc32a')):
# a key goes to the last point at or below it.
""")
    for what, pos in edges:
        k = forge_crc32(b'edge-', pos)
        out.append("""
# %s (position %d)
query IT
SELECT ch_hash(%s, 'crc32a'), ch_locate(%s, 'dl')
----
%d\t%s
""" % (what, pos, sql_key(k), sql_key(k), pos, r.locate(k).decode()))

    # The empty key is CRC-32 0.
    out.append("""
# The empty key (which Dalli itself refuses) is hashed: CRC-32 0, the last
# point at or below 0, so the highest point's server. NULL places nothing.
query TT
SELECT ch_locate('', 'dl'), ch_locate(NULL, 'dl') IS NULL
----
%s\t1
""" % r.locate(b'').decode())

    # Non-ASCII keys and keys around Dalli's 250-character limit.
    long_keys = [b'k' * 250, b'k' * 251, 'é'.encode() * 250, 'é'.encode() * 251,
                 b'x' * 212 + '日本語'.encode() * 20, b'\xff' * 251, b'\xe3\x81' * 130,
                 'café'.encode(), '日本'.encode(), b'\xed\xa0\x80', b'\xc0\x80']
    out.append("""
# Keys over 250 characters (characters as Ruby counts UTF-8: a valid
# sequence is one, any other byte one) are hashed as Dalli sends them: the
# first 212 characters, ':md5:' and the MD5 of the whole in hex. 250 and
# 251 ASCII characters, 250 and 251 two-byte characters, three-byte ones
# past the cut, 251 bytes 0xff, 130 broken sequences, short non-ASCII keys.
query T
WITH v(i, k) AS (VALUES %s)
SELECT ch_locate(k, 'dl') FROM v ORDER BY i
----
%s

# The position of the shortened key is the CRC-32 of that text.
query I
SELECT ch_hash(%s, 'crc32a') = ch_hash(%s, 'crc32a')
----
1
""" % (', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(long_keys)),
       '\n'.join(r.locate(k).decode() for k in long_keys),
       sql_key(m.dalli_key(b'k' * 251)), sql_key(b'k' * 212 + b':md5:' + hashlib.md5(b'k' * 251).hexdigest().encode())))

    # Namespace.
    rn = m.Ring(SERVERS, namespace=b'app')
    nskeys = [b'k' * 245, b'k' * 246, b'k' * 300, 'é'.encode() * 250]
    out.append("""
# namespace=app: keys are hashed as 'app:key', and the 250-character limit
# counts the namespace; a shortened key keeps 213 characters.
%s
query T
%s
----
%s

query T
WITH v(i, k) AS (VALUES %s)
SELECT ch_locate(k, 'dn') FROM v ORDER BY i
----
%s

query T
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<200)
SELECT DISTINCT ch_locate('key' || value, 'dn') = ch_locate('app:key' || value, 'dl')
FROM n
----
1
""" % (create('dn', SERVERS, ', namespace=app'),
       KEYS % (1000, 'dn'), md5_form([rn.locate(k).decode() for k in keys(1000)]),
       ', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(nskeys)),
       '\n'.join(rn.locate(k).decode() for k in nskeys)))

    # Weights: unequal, and a server whose count rounds down to 0.
    wservers = [(b'w1', 1), (b'w2', 1), (b'w3', 100)]
    zservers = [(b'small', 1), (b'big', 500)]
    rw, rz = m.Ring(wservers), m.Ring(zservers)
    out.append("""
# Unequal weights: 3 servers of weights 1, 1, 100 get floor(480/102) = 4,
# 4 and floor(48000/102) = 470 points; of weights 1 and 500, floor(320/501)
# = 0 points for the small one, which then gets no key.
%s
query TRI rowsort
SELECT node, weight, points FROM w
----
%s

query T
%s
----
%s

%s
query TRI rowsort
SELECT node, weight, points FROM z
----
%s

query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<1000)
SELECT count(*) FROM n WHERE ch_locate('key' || value, 'z') = 'small'
----
0
""" % (create('w', wservers), node_rows(rw), KEYS % (1000, 'w'),
       md5_form([rw.locate(k).decode() for k in keys(1000)]),
       create('z', zservers), node_rows(rz)))

    # Ties.
    names = [b'10.0.%d.%d:11211' % (i // 250, i % 250 + 1) for i in range(3000)]
    a, b, point = first_shared_point(
        names, lambda n: [p for p, _ in m.ring([(n, 1)], later_wins=True)])
    ab, ba = m.Ring([(a, 1), (b, 1)]), m.Ring([(b, 1), (a, 1)])
    k = forge_crc32(b'tie-', point)
    out.append("""
# Two servers with an equal point (%d): the server listed later wins it
# (Dalli's stable sort puts its point last, and the last point at or below
# a key is taken); the other keeps 159 points. In both orders.
%s
%s
%s
# ch_points lists the points themselves, the one lost to the tie left out.
query I
SELECT count(*) FROM ch_points('tab') WHERE token = %d
----
1
""" % (point, create('tab', [(a, 1), (b, 1)]), create('tba', [(b, 1), (a, 1)]),
       tie_queries(counts(ab), counts(ba), k, ab.locate(k), ba.locate(k)), point))

    # Names Dalli rewrites: no port, IPv6 brackets, octal ports.
    vs = [(b'10.0.0.9', 1), (b'10.0.0.9:11211', 1), (b'10.0.0.9:025713', 1)]
    others = [(b'10.0.0.7', 1), (b'10.0.0.8', 1)]
    places = [[m.Ring(others + [v]).locate(kk) for kk in keys(1000)] for v in vs]
    out.append("""
# A server without a port is host:11211 to Dalli, and 025713 is octal for
# 11211: the three names place keys alike (the number of keys of 1000 each
# gets next to two others).
%s
%s
%s
query III
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<1000)
SELECT sum(ch_locate('key' || value, 'h1') = '10.0.0.9'),
       sum(ch_locate('key' || value, 'h2') = '10.0.0.9:11211'),
       sum(ch_locate('key' || value, 'h3') = '10.0.0.9:025713')
FROM n
----
%d\t%d\t%d

# One server: Dalli has no ring and sends every key to it.
%s
query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<100)
SELECT count(DISTINCT ch_locate('key' || value, 'one')) FROM n
----
1
""" % (create('h1', others + [vs[0]]), create('h2', others + [vs[1]]), create('h3', others + [vs[2]]),
       *[sum(1 for p in pl if p == v[0]) for pl, v in zip(places, vs)],
       create('one', [(b'only', 1)])))

    out.append(ERRORS)
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('dalli_gen.py', [('dalli.test', gen)])

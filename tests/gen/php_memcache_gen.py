"""tests/gen/php_memcache_gen.py: writes tests/gen/php_memcache.test,
algorithm php_memcache, with every expected value computed by the
independent model in tests/gen/php_memcache_model.py (which
tests/compat/php_memcache.py checks against the real extension). Keys
that land on a chosen bucket are found by search; keys exactly on a point
are forged (CRC-32 is affine, so a key's suffix can be solved for any
position).

Run: /usr/bin/python3 tests/gen/php_memcache_gen.py --write  (or --check)
"""
import genfiles
from testkit import (LOCATE_KEYS as KEYS, byte_keys as keys, comment, forge_crc32, insert,
                     md5_form, sql_key, tie_queries)
import php_memcache_model as m

SERVERS = [(b'10.0.0.1:11211', 1), (b'10.0.0.2:11211', 2), (b'cache-3', 1),
           (b'cache-4:11212', 3), (b'unix:///run/memcached.sock:0', 1)]

ERRORS = """
# Options and weights the extension cannot express.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, vnodes=160)
----
vnodes does not apply to algorithm php_memcache

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, hash=md5)
----
hash: algorithm php_memcache takes the extension's memcache.hash_function: crc32a (its crc32, the default) or fnv1a_32 (its fnv), not md5

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, hash=fnv1a_64)
----
not fnv1a_64

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, hash=nosuch)
----
nosuch

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=ketama, prefix=app)
----
prefix does not apply to algorithm ketama (it is the text before every key hashed; algorithms that take it: php_memcache)

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, prefix='%s')
----
prefix: '%s' is not 1 to 100 bytes (the extension's memcache.prefix_static_key; leave it out for none)

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=php_memcache, prefix=a, prefix=b)
----
option prefix is given more than once

statement ok
CREATE VIRTUAL TABLE explicit USING chash(algorithm=php_memcache, hash=crc32a)

statement error
INSERT INTO explicit(node, weight) VALUES ('a:11211', 1.5)
----
explicit: algorithm php_memcache takes whole weights, as addServer()'s weight does: 1, 2, 3, ...

statement error
SELECT ch_locate('k', '{"algorithm":"php_memcache","nodes":{"a:1":2.5}}')
----
node 'a:1': algorithm php_memcache takes whole weights

query I
SELECT count(*) FROM explicit
----
0
""" % ('p' * 101, 'p' * 101)


def bucket_counts(r):
    c = {s: 0 for s, _ in r.servers}
    for owner in r.buckets:
        c[r.servers[owner][0]] += 1
    return c


def node_rows(r):
    """node, weight, buckets and share (buckets / 1024, exact in binary)."""
    c = bucket_counts(r)
    return '\n'.join('%s\t%d.000\t%d\t%.3f' % (s.decode(), w, c[s], c[s] / 1024.0)
                     for s, w in sorted(r.servers))


def create(table, servers, options=''):
    return """statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=php_memcache%s)

statement ok
%s
""" % (table, options, insert(table, servers))


def section_ring(hash, table):
    r = m.Ring(SERVERS, hash)
    return """
# hash=%s: 160 points per unit of weight, sampled into 1,024 buckets;
# the points column counts each server's buckets, and its share is
# buckets / 1024 (a key's bucket is its hash mod 1024).
%s
query TRIR rowsort
SELECT node, weight, points, share FROM %s
----
%s

# The bucket table itself: ch_points lists bucket b and its server.
query IT
SELECT count(*), min(token) || '..' || max(token) FROM ch_points('%s')
----
1024\t0..1023

query T
SELECT node FROM ch_points('%s') ORDER BY token
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
""" % (hash, create(table, SERVERS, ', hash=%s' % hash), table, node_rows(r),
       table, table, md5_form([r.servers[o][0].decode() for o in r.buckets]),
       KEYS % (12, table), '\n'.join(r.locate(k).decode() for k in keys(12)),
       KEYS % (1000, table), md5_form([r.locate(k).decode() for k in keys(1000)]))


def gen():
    r = m.Ring(SERVERS)
    out = ["""# algorithm php_memcache: PHP's memcache extension with
# memcache.hash_strategy=consistent. Written by tests/gen/php_memcache_gen.py
# from its independent model (tests/gen/php_memcache_model.py, checked
# against the real extension by tests/compat/php_memcache.py). Nodes are
# the servers as findServer() names them, host:port, in addServer() order
# (join order); a node without :port is a host on port 11211.
"""]
    out.append(section_ring('crc32a', 'pc'))
    out.append(section_ring('fnv1a_32', 'pf'))

    # The wrap-around: buckets whose sample lies above the highest point
    # belong to the lowest point's server (a ring of two servers, whose
    # highest point is below bucket 1023's sample).
    n = 1
    while True:
        two = [(b'10.0.1.%d:11211' % n, 1), (b'10.0.1.%d:11211' % (n + 1), 1)]
        rt = m.Ring(two)
        wrap = [b for b in range(m.BUCKETS) if m.STEP * b > rt.points[-1]]
        if wrap:
            break
        n += 2
    low = [b for b in range(m.BUCKETS) if m.STEP * b <= rt.points[0]]
    chosen = [0, low[-1], low[-1] + 1, wrap[0] - 1, wrap[0], 1023]
    ks = [m.key_for_bucket(b) for b in chosen]
    lowest, highest = (rt.servers[rt.owners[i]][0].decode() for i in (0, -1))
    out.append("""
%s
%s
query IT
WITH v(i, k) AS (VALUES %s)
SELECT ch_hash(k, 'crc32a') %% 1024, ch_locate(k, 'wrap') FROM v ORDER BY i
----
%s
""" % (comment('The wrap-around, in a ring of two servers (lowest point %d, %s\'s; '
               'highest %d, %s\'s). Keys found to fall in chosen buckets (CRC-32 mod '
               '1024): bucket 0 (sample 0), the last bucket whose sample is at or below '
               'the lowest point and the next, the last bucket whose sample is at or '
               'below the highest point, the next (its sample is above every point: it '
               'wraps to the lowest point\'s server), and bucket 1023.'
               % (rt.points[0], lowest, rt.points[-1], highest)), create('wrap', two),
       ', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(ks)),
       '\n'.join('%d\t%s' % (b, rt.locate(k).decode()) for b, k in zip(chosen, ks))))

    # A key exactly on a point goes to its bucket, not to that point.
    for p in r.points:
        owner_of_point = r.owners[r.points.index(p)]
        if r.buckets[p % m.BUCKETS] != owner_of_point:
            break
    k = forge_crc32(b'point-', p)
    out.append("""
# A key whose CRC-32 is exactly a point (%d, of %s) goes to its bucket
# (%d), which is another server's: the extension never looks a key up on
# the ring itself.
query IT
SELECT ch_hash(%s, 'crc32a'), ch_locate(%s, 'pc')
----
%d\t%s
""" % (p, r.servers[owner_of_point][0].decode(), p % m.BUCKETS, sql_key(k), sql_key(k),
       p, r.locate(k).decode()))

    # Key rewriting.
    rewritten = [(b'a b', b'a_b'), (b'\x00\x01\x1f\x20', b'____'), (b'tab\tkey\n', b'tab_key_'),
                 (b'k' * 251, b'k' * 250), (b'k' * 250 + b'anything', b'k' * 250),
                 (b'x' * 249 + b' tail', b'x' * 249 + b'_')]
    out.append("""
# The key the extension sends: bytes at or below ' ' become '_', and only
# the first 250 bytes count. Each pair is placed alike (and its hash is
# that of the rewritten key).
query II
WITH v(i, a, b) AS (VALUES %s)
SELECT ch_locate(a, 'pc') = ch_locate(b, 'pc'), ch_locate(a, 'pf') = ch_locate(b, 'pf')
FROM v ORDER BY i
----
%s
""" % (', '.join('(%d, %s, %s)' % (i, sql_key(a), sql_key(b)) for i, (a, b) in enumerate(rewritten)),
       '\n'.join('1\t1' for _ in rewritten)))

    rf = m.Ring(SERVERS, 'fnv1a_32')
    odd = [b'caf\xc3\xa9', '\u65e5\u672c\u8a9e'.encode(), b'\x80', b'\xff\xfe\xfd', b'\x7f\x80\x81',
           b'\xe9' * 300, b' \xa0\x00\xc0', b'k' * 249 + b'\xc3\xa9', b'']
    out.append("""
# Non-ASCII and control bytes, long keys and the empty key, under both
# hashes (fnv: bytes from 0x80 up XORed in sign-extended, as PHP's C reads
# a char). The extension refuses the empty key; here it is placed as any
# key: crc32a's 0 is bucket 0.
query TT
WITH v(i, k) AS (VALUES %s)
SELECT ch_locate(k, 'pc'), ch_locate(k, 'pf') FROM v ORDER BY i
----
%s

query I
SELECT ch_locate(NULL, 'pc') IS NULL
----
1
""" % (', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(odd)),
       '\n'.join('%s\t%s' % (r.locate(k).decode(), rf.locate(k).decode()) for k in odd)))

    # The prefix option.
    rp = m.Ring(SERVERS, prefix=b'app.')
    pkeys = [b'k' * 245, b'k' * 246, b'k' * 300, b'a b']
    out.append("""
# prefix='app.' (memcache.prefix_static_key): keys are hashed as
# 'app.' || key, and the 250-byte limit counts the prefix.
%s
query T
%s
----
%s

query T
WITH v(i, k) AS (VALUES %s)
SELECT ch_locate(k, 'pp') FROM v ORDER BY i
----
%s

query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<200)
SELECT DISTINCT ch_locate('key' || value, 'pp') = ch_locate('app.key' || value, 'pc')
FROM n
----
1

# A prefix's own spaces and control bytes are rewritten too.
%s
query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<200)
SELECT DISTINCT ch_locate('key' || value, 'ps') = ch_locate('a_b_key' || value, 'pc')
FROM n
----
1
""" % (create('pp', SERVERS, ", prefix='app.'"),
       KEYS % (1000, 'pp'), md5_form([rp.locate(k).decode() for k in keys(1000)]),
       ', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(pkeys)),
       '\n'.join(rp.locate(k).decode() for k in pkeys),
       create('ps', SERVERS, ", prefix='a b '")))

    # Ties, for each hash: tables tab and tba, dropped after each.
    for hash in ('crc32a', 'fnv1a_32'):
        a, b, p, bucket = m.shared_point_pair(hash)
        ab, ba = m.Ring([(a, 1), (b, 1)], hash), m.Ring([(b, 1), (a, 1)], hash)
        k = m.key_for_bucket(bucket, hash)
        shared = len(set(m.Ring([(a, 1)], hash).points) & set(m.Ring([(b, 1)], hash).points))
        out.append("""
%s
%s
%s
%s
statement ok
DROP TABLE tab

statement ok
DROP TABLE tba
""" % (comment('hash=%s: %s and %s share %d points, among them %d, which '
               'bucket %d\'s sample lands on: the server added first keeps each '
               '(glibc\'s qsort is stable, and the first equal point is found), '
               'in both orders.' % (hash, a.decode(), b.decode(), shared, p, bucket)),
       create('tab', [(a, 1), (b, 1)], ', hash=' + hash), create('tba', [(b, 1), (a, 1)], ', hash=' + hash),
       tie_queries(bucket_counts(ab), bucket_counts(ba), k, ab.locate(k), ba.locate(k))))

    # Default port, weights, one server.
    others = [(b'10.0.0.7:11211', 1), (b'10.0.0.8:11211', 1)]
    rw = m.Ring([(b'w1:11211', 1), (b'w2:11211', 1), (b'w3:11211', 10)])
    out.append("""
# A node without :port is a host on port 11211, as addServer('h') is
# 'h:11211': the two rings place every key alike.
%s
%s
query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<1000)
SELECT sum(replace(ch_locate('key' || value, 'd1'), 'cache-9', 'cache-9:11211')
           = ch_locate('key' || value, 'd2'))
FROM n
----
1000

# Unequal weights: 160, 160 and 1,600 points, sampled.
%s
query TRIR rowsort
SELECT node, weight, points, share FROM w
----
%s

query T
%s
----
%s

# One server: every key is its.
%s
query I
WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value<100)
SELECT count(DISTINCT ch_locate('key' || value, 'one')) FROM n
----
1
""" % (create('d1', others + [(b'cache-9', 1)]), create('d2', others + [(b'cache-9:11211', 1)]),
       create('w', rw.servers), node_rows(rw), KEYS % (1000, 'w'),
       md5_form([rw.locate(k).decode() for k in keys(1000)]),
       create('one', [(b'only:11211', 1)])))

    out.append(ERRORS)
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('php_memcache_gen.py', [('php_memcache.test', gen)])

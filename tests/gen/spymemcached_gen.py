"""tests/gen/spymemcached_gen.py: writes tests/gen/spymemcached.test,
algorithm spymemcached and the hash java_hashcode, with every expected
value computed by the independent model in tests/gen/spymemcached_model.py
(which tests/compat/spymemcached.py checks against the real spymemcached).
Keys that land exactly on points are the points' own labels ("name-i" is
hashed for a point, so as a key it lands on it); keys just above a point
and past the highest point (the wrap-around) are found by search.

Run: /usr/bin/python3 tests/gen/spymemcached_gen.py --write  (or --check)
"""
import random

import genfiles
from testkit import (LOCATE_KEYS as KEYS, arc_widths, byte_keys as keys, comment, insert, md5_form,
                     moved_positions, sql_key, tie_queries)
import spymemcached_model as m

# The strings spymemcached hashes for five servers, in list order: an
# address, a resolved name, an unresolved one, IPv6 (Java's text of it),
# and a LIBMEMCACHED-format host.
SERVERS = [(b'10.0.0.1:11211', 1), (b'cache1/10.0.0.2:11211', 1),
           (b'cache3/<unresolved>:11212', 1), (b'[0:0:0:0:0:0:0:1]:11211', 1),
           (b'mc5.example', 1)]
WEIGHTS = [1, 2, 3, 5, 8]

HASH_KEYS = [b'hello', b'', b'a', 'caf\u00e9'.encode(), '\u65e5\u672c'.encode(),
             '\U0001f600'.encode(), 'x\u00e9\u20ac\U0001f600y'.encode(), b'key:12345']


def space(hash_name):
    return 1 << 15 if hash_name == 'crc32' else 1 << 32


def create(table, servers, options=''):
    return """statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=spymemcached%s)

statement ok
%s
""" % (table, options, insert(table, servers))


def node_rows(r):
    c = r.point_counts()
    return '\n'.join('%s\t%d' % (s.decode(), c[i])
                     for i, (s, _) in sorted(enumerate(r.servers), key=lambda x: x[1]))


def share_rows(r, hash_name):
    widths = arc_widths([(p, r.servers[i][0]) for p, i in r.entries], space(hash_name))
    return '\n'.join('%s\t%d' % (s.decode(), widths.get(s, 0)) for s, _ in sorted(r.servers))


def search(r, want, tag):
    """A key whose position satisfies want, found by trying tag-0, tag-1..."""
    for i in range(1000000):
        k = b'%s-%d' % (tag, i)
        if want(r.position(k)):
            return k
    raise SystemExit('spymemcached_gen: no key found for %s' % tag.decode())


def forge_hashcode(target, tag):
    """A key whose String.hashCode() is target: a prefix and three
    characters with prefix*31^3 + c0*961 + c1*31 + c2 = target (mod 2^32),
    each character in U+0041..U+D7FF."""
    lo, hi = 0x41, 0xd7ff
    for i in range(1000000):
        prefix = b'%s-%d' % (tag, i)
        v = (target - m.key_hash('java_hashcode')(prefix) * 29791) % (1 << 32)
        c0 = min(hi, (v - lo * 32) // 961)
        c1 = min(hi, (v - c0 * 961 - lo) // 31)
        c2 = v - c0 * 961 - c1 * 31
        if min(c0, c1, c2) >= lo and c2 <= hi:
            key = prefix + (chr(c0) + chr(c1) + chr(c2)).encode()
            assert m.key_hash('java_hashcode')(key) == target
            return key
    raise SystemExit('spymemcached_gen: no key forged for %d' % target)


def above(r, hash_name, p, width):
    """A key just above position p: exactly p + 1 where the hash can be
    forged (java_hashcode) or searched (crc32's 15 bits), else within
    width above it."""
    if hash_name == 'java_hashcode':
        return forge_hashcode(p + 1, b'above')
    if hash_name == 'crc32':
        return search(r, lambda q: q == p + 1, b'above')
    return search(r, lambda q: p < q <= p + width, b'above')


def hash_records():
    return """
# ch_hash(key, 'java_hashcode') is Java's String.hashCode() of the key's
# UTF-16 code units, as a non-negative 32-bit value ("hello": 99162322;
# U+1F600 is two units, d83d de00).
query I
WITH v(i, k) AS (VALUES %s)
SELECT ch_hash(k, 'java_hashcode') FROM v ORDER BY i
----
%s
""" % (', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(HASH_KEYS)),
       '\n'.join(str(m.key_hash('java_hashcode')(k)) for k in HASH_KEYS))


def hash_section(hash_name, table):
    """A 5-server ring of hash_name without weights: point counts, exact
    shares, 1,000 keys, keys on points, just above them and past the
    highest point."""
    r = m.Ring(SERVERS, hash_name)
    same = hash_name in ('md5', 'crc32', 'java_hashcode')   # ch_hash's hash
    opts = '' if hash_name == 'md5' else ', hash=%s' % hash_name
    labels = (0, 20, 39) if hash_name == 'md5' else (0, 80, 159)   # md5: digest i, word 0
    on = [s + b'-' + str(i).encode() for s, _ in SERVERS for i in labels]
    top = r.keys[-1]
    mid = r.keys[len(r.keys) // 2]
    edges = [('just above a middle point', above(r, hash_name, mid, 1 << 20)),
             ('past the highest point: wraps to the lowest',
              above(r, hash_name, top, space(hash_name))) if top < space(hash_name) - 1
             else ('the highest position is a point, where no key wraps',
                   search(r, lambda p: p == top, b'top')),
             ('the empty key', b''),
             ('non-ASCII keys', 'caf\u00e9'.encode()), ('', '\U0001f600!'.encode()),
             ('', '\u65e5\u672c\u8a9e'.encode())]
    return """
%s
%s
query TI rowsort
SELECT node, points FROM %s
----
%s

query TI rowsort
SELECT node, CAST(round(share * %d) AS INTEGER) FROM %s
----
%s

query T
%s
----
%s

# The labels of points as keys land exactly on them: the point's own
# server (or the later one, where two share it).
query T
WITH v(i, k) AS (VALUES %s)
SELECT ch_locate(k, '%s') FROM v ORDER BY i
----
%s

%s
query %s
WITH v(i, k) AS (VALUES %s)
SELECT %sch_locate(k, '%s') FROM v ORDER BY i
----
%s
""" % (comment('hash=%s (%s), no weights map: %s; of equal points the server listed '
               'later keeps it (a TreeMap put), and the other\'s count leaves it out. '
               'Shares are counts of the %d positions.'
               % (hash_name, m.JAVA_NAMES[hash_name],
                  '40 MD5 digests of "name-i", 4 points each (a digest\'s word 0 is the '
                  'md5 of its label)' if hash_name == 'md5'
                  else '160 points, the key hash of "name-i"', space(hash_name))),
       create(table, SERVERS, opts), table, node_rows(r),
       space(hash_name), table, share_rows(r, hash_name),
       KEYS % (1000, table), md5_form([r.locate(k).decode() for k in keys(1000)]),
       ', '.join('(%d, %s)' % (i, sql_key(k)) for i, k in enumerate(on)), table,
       '\n'.join(r.locate(k).decode() for k in on),
       comment('Keys one above a point, past the highest point (the first point at or '
               'after a key, wrapping to the lowest), the empty key and non-ASCII keys%s.'
               % ('' if same else " (positions not shown: ch_hash's %s is twemproxy's, "
                  "over bytes, where spymemcached's runs over UTF-16 code units)"
                  % hash_name)),
       'IT' if same else 'T',
       ', '.join('(%d, %s)' % (i, sql_key(k)) for i, (_, k) in enumerate(edges)),
       "ch_hash(k, '%s'), " % hash_name if same else '', table,
       '\n'.join(('%d\t' % r.position(k) if same else '') + r.locate(k).decode()
                 for _, k in edges))


def weighted_section():
    servers = [(s, w) for (s, _), w in zip(SERVERS, WEIGHTS)]
    out = []
    for hash_name, table in (('md5', 'ww'), ('fnv1a_32', 'wf')):
        r = m.Ring(servers, hash_name, weighted=True)
        opts = ', weighted=1' + ('' if hash_name == 'md5' else ', hash=%s' % hash_name)
        out.append("""
# weighted=1 (a weights map), hash=%s: weights 1, 2, 3, 5, 8 give
# 4 * floor(w/19 * 160 / 4 * 5 + 1e-10) points, in single precision, all
# from MD5 digests whatever the key hash.
%s
query TI rowsort
SELECT node, points FROM %s
----
%s

query TI rowsort
SELECT node, CAST(round(share * 4294967296) AS INTEGER) FROM %s
----
%s

query T
%s
----
%s
""" % (hash_name, create(table, servers, opts), table, node_rows(r), table,
       share_rows(r, hash_name), KEYS % (1000, table),
       md5_form([r.locate(k).decode() for k in keys(1000)])))
    return ''.join(out)


def counts_by_name(r):
    return dict(zip([n for n, _ in r.servers], r.point_counts()))


def ties_section():
    # "Aa" and "BB" have one String.hashCode, and so every label of one is
    # a label of the other.
    pair = [(b'Aa', 1), (b'BB', 1)]
    ab, ba = m.Ring(pair, 'java_hashcode'), m.Ring(pair[::-1], 'java_hashcode')
    names = [b'10.0.%d.%d:11211' % (i // 250, i % 250 + 1) for i in range(3000)]
    a, b, point = m.md5_collision(names)
    mab, mba = m.Ring([(a, 1), (b, 1)]), m.Ring([(b, 1), (a, 1)])
    below = max(p for p in mab.keys if p < point)
    k = search(mab, lambda p: below < p <= point, b'tie')
    return """
# Ties: "Aa" and "BB" have one hashCode, so with hash=java_hashcode all 160
# points of the one are points of the other, and the server listed later
# keeps every one (a TreeMap put replaces the value): every key is its.
%s
%s
%s
query TT
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<500)
SELECT DISTINCT ch_locate('key' || i, 'tab'), ch_locate('key' || i, 'tba') FROM n
----
%s\t%s

statement ok
DROP TABLE tab

statement ok
DROP TABLE tba

# Two addresses with one MD5 point (%d): the later keeps it, in both
# orders; the key %s (md5 %d), between the point before and it,
# goes to the later server.
%s
%s
%s""" % (create('tab', pair, ', hash=java_hashcode'), create('tba', pair[::-1], ', hash=java_hashcode'),
       tie_queries(counts_by_name(ab), counts_by_name(ba), b'key:1', ab.locate(b'key:1'),
                   ba.locate(b'key:1')),
       ab.servers[1][0].decode(), ba.servers[1][0].decode(), point, sql_key(k), mab.position(k), create('tab', [(a, 1), (b, 1)]),
       create('tba', [(b, 1), (a, 1)]),
       tie_queries(counts_by_name(mab), counts_by_name(mba), k, mab.locate(k), mba.locate(k)))


def add_section():
    """Adding a sixth server: the moved positions, exactly, and where to."""
    out = []
    six = SERVERS + [(b'10.0.0.6:11211', 1)]
    for hash_name, table in (('md5', 'add0'), ('crc32', 'add2'), ('fnv1a_32', 'add6')):
        before, after = m.Ring(SERVERS, hash_name), m.Ring(six, hash_name)
        opts = '' if hash_name == 'md5' else ', hash=%s' % hash_name
        moved = moved_positions(before, after, space(hash_name))
        out.append("""
%s
%s
statement ok
INSERT INTO %s(node) VALUES ('10.0.0.6:11211')

query IT
SELECT CAST(round(sum(share) * %d) AS INTEGER), group_concat(DISTINCT dst)
FROM ch_diff('%s@1', '%s')
----
%d	10.0.0.6:11211
""" % (comment('hash=%s: adding a sixth server moves %d of the %d positions, all onto '
               'it (ch_diff, exactly as the model counts them).'
               % (hash_name, moved, space(hash_name))),
       create(table, SERVERS, opts), table, space(hash_name), table, table, moved))
    return ''.join(out)


def gen():
    out = ["""# algorithm spymemcached: Java spymemcached's KetamaNodeLocator, and the
# hash java_hashcode. Written by tests/gen/spymemcached_gen.py from its
# independent model (tests/gen/spymemcached_model.py, checked against the
# real spymemcached by tests/compat/spymemcached.py). Nodes are the strings
# spymemcached hashes for its servers, in its list order (join order).
# Options and errors: tests/sql/spymemcached.test.
""", hash_records()]
    for i, hash_name in enumerate(m.JAVA_NAMES):
        out.append(hash_section(hash_name, 'h%d' % i))
    out.append(weighted_section())
    out.append(add_section())
    out.append(ties_section())
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('spymemcached_gen.py', [('spymemcached.test', gen)])

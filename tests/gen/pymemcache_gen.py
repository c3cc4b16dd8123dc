"""tests/gen/pymemcache_gen.py: writes tests/gen/pymemcache.test, algorithm
pymemcache, with every expected value computed by the independent model in
tests/gen/pymemcache_model.py (which tests/compat/pymemcache_compat.py
checks against the real pymemcache). The tie is a key crafted from the
rule (pymemcache_model.tie_key) on which two servers score the same.

Run: /usr/bin/python3 tests/gen/pymemcache_gen.py --write  (or --check)
"""
import genfiles
from testkit import LOCATE_KEYS, keys, md5_form, shown, sql_text
import pymemcache_model as m

ADDRESSES = ['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211']
NAMES = ['cache%d' % i for i in range(1, 6)]
TEN = ['10.0.1.%d:11211' % i for i in range(1, 11)]
MIXED = ['/run/memcached/memcached.sock', '10.0.0.1:11211', 'café:11211']
TIE = ('10.0.0.1:11211', '10.0.100.100:11211')

ERRORS = """
# Options and weights pymemcache has not: no vnodes, one hash, no weights.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=pymemcache, vnodes=160)
----
vnodes does not apply to algorithm pymemcache

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=pymemcache, hash=md5)
----
hash: algorithm pymemcache hashes with murmur3_32 (MurmurHash3 x86_32, pymemcache's only hash), not md5

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=pymemcache, seed=1)
----
seed does not apply to hash murmur3_32 (only xxh3 and xxh64 take a seed)

statement ok
CREATE VIRTUAL TABLE explicit USING chash(algorithm=pymemcache, hash=murmur3_32)

statement error
INSERT INTO explicit(node, weight) VALUES ('a:11211', 2)
----
explicit: algorithm pymemcache has no weights (pymemcache's RendezvousHash has none): every node's weight must be 1

statement error
SELECT ch_locate('k', '{"algorithm":"pymemcache","nodes":{"a":3}}')
----
algorithm pymemcache has no weights

# No points, arcs or diffs: a key's owner is a score, not a range.
statement ok
INSERT INTO explicit(node) VALUES ('a:11211'), ('b:11211')

statement error
SELECT * FROM ch_points('explicit')
----
algorithm pymemcache has no points (a key's owner is the server that scores highest for it, not a range of positions)

statement error
SELECT * FROM ch_arcs('explicit')
----
a key's owner is the server that scores highest for it

statement error
SELECT * FROM ch_diff('explicit', '{"algorithm":"pymemcache","nodes":["a:11211"]}')
----
a key's owner is the server that scores highest for it
"""


def create(table, servers):
    return """statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=pymemcache)

statement ok
INSERT INTO %s(node) VALUES %s
""" % (table, table, ', '.join('(%s)' % sql_text(s) for s in servers))


def values(ks):
    return ', '.join('(%d, %s)' % (i, sql_text(k)) for i, k in enumerate(ks))


def gen():
    out = ["""# algorithm pymemcache: Python pymemcache's HashClient with its default
# RendezvousHash (Django's PyMemcacheCache). Written by
# tests/gen/pymemcache_gen.py from its independent model
# (tests/gen/pymemcache_model.py, checked against the real pymemcache by
# tests/compat/pymemcache_compat.py). A server's score for a key is
# MurmurHash3 x86_32 of "<server>-<key>", each character one byte (its
# code point's low 8 bits); the highest wins, a tie the larger name.
%s""" % ERRORS]

    for table, servers, what in (('pa', ADDRESSES, '3 servers by address'),
                                 ('pn', NAMES, '5 servers by name'),
                                 ('pt', TEN, '10 servers'),
                                 ('pm', MIXED, 'a unix socket, an address and a non-ASCII name')):
        out.append("""
# %s
%s
query T
%s
----
%s
""" % (what, create(table, servers), LOCATE_KEYS % (1000, table),
            md5_form([m.owner(servers, k) for k in keys(1000)])))

    out.append("""
# The first keys one by one, and ch_hash's murmur3_32 of a key's bytes
# (no server, no masking): 'hello' as pymemcache's murmur3_32('hello').
query T
%s
----
%s

query I
SELECT ch_hash('hello', 'murmur3_32')
----
%d
""" % (LOCATE_KEYS % (12, 'pa'), '\n'.join(m.owner(ADDRESSES, k) for k in keys(12)),
       m.murmur3_32(b'hello')))

    text_keys = ['', 'é', '€', 'café', '日本語', '😀', 'Ā', ':1:views.decorators.cache',
                 'é' * 300, '€' * 200, 'x' * 600, 'k€' * 300]
    out.append("""
# Characters, not UTF-8 bytes: 'é' (U+00E9) is hashed as the byte 0xe9,
# '€' (U+20AC) as 0xac, '😀' (U+1F600) as 0x00, 'Ā' (U+0100) as 0x00; the
# empty key; Django's key form; long keys (300 'é' are 600 bytes and 300
# characters; 600 'x' and 300 'k€' are masked once per server, past the
# 512 bytes masked once per key).
query IT
WITH v(i, k) AS (VALUES %s)
SELECT i, ch_locate(k, 'pm') FROM v ORDER BY i
----
%s

query IT
WITH v(i, k) AS (VALUES %s)
SELECT i, ch_locate(k, 'pt') FROM v ORDER BY i
----
%s

# A blob key is read as UTF-8 text; bytes that are not UTF-8 are U+FFFD
# each, so the byte 0xfd: x'ff' places as the character U+00FD.
query I
SELECT ch_locate(x'ff', 'pt') = ch_locate('ý', 'pt')
   AND ch_locate(x'c341', 'pt') = ch_locate('ýA', 'pt')
   AND ch_locate(CAST('café' AS BLOB), 'pt') = ch_locate('café', 'pt')
----
1

# An INTEGER key is its decimal text; NULL has no owner.
query TI
SELECT ch_locate(42, 'pt') = ch_locate('42', 'pt'), ch_locate(NULL, 'pt') IS NULL
----
1\t1
""" % (values(text_keys), '\n'.join('%d\t%s' % (i, shown(m.owner(MIXED, k)))
                                    for i, k in enumerate(text_keys)),
       values(text_keys), '\n'.join('%d\t%s' % (i, m.owner(TEN, k))
                                    for i, k in enumerate(text_keys))))

    a, b = TIE
    tk = m.tie_key(a, b)
    bytes_a = m.char_bytes('%s-%s' % (a, tk))
    bytes_b = m.char_bytes('%s-%s' % (b, tk))
    out.append("""
# A tie, crafted from the rule: on key %s both servers score %d (the
# murmur3_32 of each server's masked "<server>-<key>", below); the larger
# name wins, whichever joined first, and ch_replicas ranks it first.
query II
SELECT ch_hash(x'%s', 'murmur3_32'), ch_hash(x'%s', 'murmur3_32')
----
%d\t%d

%s
statement ok
CREATE VIRTUAL TABLE tie_ba USING chash(algorithm=pymemcache)

statement ok
INSERT INTO tie_ba(node) VALUES (%s), (%s)

query TT
SELECT ch_locate(%s, 'tie_ab'), ch_locate(%s, 'tie_ba')
----
%s\t%s

query IT
SELECT rank, node FROM ch_replicas(%s, 2, 'tie_ab')
----
1\t%s
2\t%s
""" % (sql_text(tk), m.score(a, tk), bytes_a.hex(), bytes_b.hex(),
       m.murmur3_32(bytes_a), m.murmur3_32(bytes_b),
       create('tie_ab', [a, b]), sql_text(b), sql_text(a),
       sql_text(tk), sql_text(tk), m.owner([a, b], tk), m.owner([b, a], tk),
       sql_text(tk), m.ranked([a, b], tk)[0], m.ranked([a, b], tk)[1]))

    ranked_keys = ['key%d' % i for i in range(1, 6)]
    out.append("""
# ch_replicas: the servers by falling score; the first is the owner.
query TIT
WITH v(k) AS (VALUES %s)
SELECT k, rank, node FROM v, ch_replicas(v.k, 4, 'pn') ORDER BY k, rank
----
%s
""" % (', '.join('(%s)' % sql_text(k) for k in ranked_keys),
       '\n'.join('%s\t%d\t%s' % (k, i + 1, s) for k in ranked_keys
                 for i, s in enumerate(m.ranked(NAMES, k)[:4]))))

    grown = NAMES + ['cache6']
    moved = [k for k in keys(2000) if m.owner(NAMES, k) != m.owner(grown, k)]
    out.append("""
# I add a server: only keys the new server wins move, all onto it (%d of
# 2,000 here); removing it moves them back.
query IT
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)
SELECT count(*), group_concat(DISTINCT ch_locate('key' || i, '{"algorithm":"pymemcache","nodes":%s}'))
FROM n WHERE ch_moved('key' || i, 'pn', '{"algorithm":"pymemcache","nodes":%s}')
----
%d\tcache6

query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)
SELECT count(*) FROM n
WHERE ch_moved('key' || i, '{"algorithm":"pymemcache","nodes":%s}', 'pn')
----
%d

# Shares: 1/n each (the expectation; scores are not ranges to measure).
query TR rowsort
SELECT node, share FROM pa
----
%s
""" % (len(moved), str(grown).replace("'", '"'), str(grown).replace("'", '"'),
       len(moved), str(grown).replace("'", '"'), len(moved),
       '\n'.join('%s\t0.333' % s for s in ADDRESSES)))
    oom_servers = ['10.0.0.1:11211', 'cache-é:1', '/run/m.sock']
    spec = '{"algorithm":"pymemcache","nodes":%s}' % str(oom_servers).replace("'", '"')
    out.append("""
# Every allocation failing in turn (the runner's oom records): a ring built
# from an inline spec, a key placed and ranked, or an out-of-memory error.
oom
query T
SELECT ch_locate('k€y', '%s')
----
%s

oom
query T
SELECT group_concat(node, ' ') FROM ch_replicas('k€y', 3, '%s')
----
%s
""" % (spec, shown(m.owner(oom_servers, 'k€y')), spec,
       shown(' '.join(m.ranked(oom_servers, 'k€y')))))
    return ''.join(out)


if __name__ == '__main__':
    genfiles.main('pymemcache_gen.py', [('pymemcache.test', gen)])

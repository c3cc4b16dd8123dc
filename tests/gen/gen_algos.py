"""tests/gen/gen_algos.py: writes tests/gen/jump.test, tests/gen/rendezvous.test and
tests/gen/maglev.test from independent models, with Debian's python3 and
python3-xxhash (no chash code involved):

  jump        Lamping & Veach's function, checked here first against the
              published vectors (go-jump, Guava)
  rendezvous  the definition in ext/algos/rendezvous.c's header, in Python
  maglev      Envoy's own test tables (its maglev unit tests), reached through
              keys whose XXH64 falls in each slot

Run: /usr/bin/python3 tests/gen/gen_algos.py --write  (or --check)
"""
import math, os, xxhash

import genfiles
from testkit import byte_keys as keys, md5_form

HERE = os.path.dirname(os.path.abspath(__file__))
M64 = (1 << 64) - 1


def jump(key, n):
    b, j = -1, 0
    while j < n:
        b = j
        key = (key * 2862933555777941757 + 1) & M64
        j = int(float(b + 1) * (2147483648.0 / float((key >> 33) + 1)))
    return b


def check_jump():
    rows = {0: [0] * 20,
            1: [0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17, 17],
            0xdeadbeef: [0, 1, 2, 3, 3] + [5] * 11 + [16] * 4,
            0x0ddc0ffeebadf00d: [0, 1] + [2] * 13 + [15] * 5}
    for key, want in rows.items():
        assert [jump(key, n) for n in range(1, 21)] == want, key
    assert jump(42, 57) == 43 and jump(0xDEAD10CC, 666) == 361
    assert jump(256, 1024) == 520
    assert [jump(i, 100) for i in range(20)] == [0, 55, 62, 8, 45, 59, 86, 97, 82, 59,
                                                 73, 37, 17, 56, 86, 21, 90, 37, 38, 83]
    assert jump(10863919174838991, 11) == 6 and jump(2016238256797177309, 11) == 3
    assert jump(1673758223894951030, 11) == 5 and jump(2, 100001) == 80343
    assert jump(2201, 100001) == 22152 and jump(2202, 100001) == 15018
    assert [jump(0xecdfbf4e666313ab, n) for n in range(1, 6)] == [0, 1, 2, 3, 3]
    assert jump(0xecdfbf4e666313ab, 1000) == 534


def hash128to64(high, low):
    mul = 0x9ddfea08eb382d69
    a = ((low ^ high) * mul) & M64
    a ^= a >> 47
    b = ((high ^ a) * mul) & M64
    b ^= b >> 47
    return (b * mul) & M64


def rendezvous(pos, nodes, seed=0, h=xxhash.xxh3_64_intdigest):
    """nodes: {name: weight}; names tie-break in bytewise order."""
    best, best_score = None, -1.0
    for name in sorted(nodes, key=lambda s: s.encode()):
        c = hash128to64(h(name.encode(), seed=seed), pos)
        u = ((c >> 12) + 0.5) / 2.0 ** 52
        score = -nodes[name] / math.log(u)
        if score > best_score:
            best, best_score = name, score
    return best


KEYS_CTE = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)\n"
            "SELECT ch_locate('key' || i, '%s') FROM n ORDER BY i")




def gen_jump():
    check_jump()
    names = ['zeta', 'alpha', 'mu', 'db-10', 'db-9', 'beta', 'omega', 'kappa', 'eta', 'chi']
    pos = [xxhash.xxh3_64_intdigest(k) for k in keys(1000)]
    out = ["""# algorithm jump. Expected placements come from tests/gen/gen_algos.py (which
# wrote this file): Lamping & Veach's function, checked there against the
# published vectors, over the key's xxh3 position. Nodes are buckets in the
# order they joined, not in name order.

statement ok
CREATE VIRTUAL TABLE j USING chash(algorithm=jump)

statement ok
INSERT INTO j(node) VALUES %s
""" % ', '.join("('%s')" % s for s in names[:3])]
    out.append("""
# 3 buckets: zeta=0, alpha=1, mu=2. The first 12 keys, then 1000.
query T
%s
----
%s
""" % (KEYS_CTE % (12, 'j'), '\n'.join(names[jump(p, 3)] for p in pos[:12])))
    out.append("""statement ok
INSERT INTO j(node) VALUES %s

query T
%s
----
%s

# Growing moves keys only onto the new buckets.
query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*) FROM n WHERE ch_moved('key' || i, 'j@1', 'j')
  AND ch_locate('key' || i, 'j@1') = ch_locate('key' || i, 'j')
----
0

query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*) FROM n WHERE ch_moved('key' || i, 'j@1', 'j')
  AND ch_locate('key' || i, 'j') IN ('zeta', 'alpha', 'mu')
----
0

# A JSON spec keeps its array order.
query T
%s
----
%s
""" % (', '.join("('%s')" % s for s in names[3:]),
       KEYS_CTE % (1000, 'j'), md5_form([names[jump(p, 10)] for p in pos]),
       KEYS_CTE % (8, '{"algorithm":"jump","nodes":["mu","zeta","alpha"]}'),
       '\n'.join(['mu', 'zeta', 'alpha'][jump(p, 3)] for p in pos[:8])))
    out.append("""# Shares are the expectation 1/n (exact counts over 2^64 keys cannot be
# computed); jump has no points.
query TRR
SELECT node, share, points FROM j WHERE node='zeta'
----
zeta	0.100	NULL

# Only the last node can be removed; a rename keeps the bucket.
statement error
DELETE FROM j WHERE node='alpha'
----
j: cannot remove node 'alpha': algorithm jump numbers nodes as buckets in the order they joined, so only the last one ('chi') can be removed

statement ok
DELETE FROM j WHERE node='chi'

# One statement that removes the last node and an earlier one fails whole.
statement error
DELETE FROM j WHERE node='alpha' OR rowid=(SELECT max(rowid) FROM j)
----
j: cannot remove node 'alpha'

statement ok
UPDATE j SET node='zeta-2' WHERE node='zeta'

query T
%s
----
%s

# No weights but 1; options that do not apply.
statement error
INSERT INTO j(node, weight) VALUES ('heavy', 2)
----
j: algorithm jump has no weights: every node's weight must be 1

statement error
UPDATE j SET weight=3 WHERE node='mu'
----
algorithm jump has no weights

statement ok
INSERT INTO j(node, weight) VALUES ('one', 1.0)

statement error
SELECT ch_locate('k', '{"algorithm":"jump","nodes":{"a":1,"b":2}}')
----
ch_locate: JSON ring spec: node 'b': algorithm jump has no weights

statement error
CREATE VIRTUAL TABLE bad1 USING chash(algorithm=jump, vnodes=100)
----
vnodes does not apply to algorithm jump (it is virtual nodes per unit of weight; algorithms that take it:

statement error
CREATE VIRTUAL TABLE bad2 USING chash(algorithm=jump, table=7)
----
table does not apply to algorithm jump

# The hash and seed options still apply to keys; the order survives reopen.
statement ok
CREATE VIRTUAL TABLE j2 USING chash(algorithm=jump, hash=xxh64, seed=7)

statement ok
INSERT INTO j2(node) VALUES ('c'), ('b'), ('a')

reopen

query T
%s
----
%s
""" % (KEYS_CTE % (6, 'j'),
       '\n'.join((['zeta-2'] + names[1:9])[jump(p, 9)] for p in pos[:6]),
       KEYS_CTE % (10, 'j2'),
       '\n'.join(['c', 'b', 'a'][jump(xxhash.xxh64_intdigest(k, seed=7), 3)]
                 for k in keys(10))))
    return '\n'.join(out)


def gen_rendezvous():
    nodes = {'db-a': 1.0, 'db-b': 2.0, 'db-c': 0.5, 'db-d': 3.0}
    pos = [xxhash.xxh3_64_intdigest(k) for k in keys(1000)]
    less = dict(nodes)
    del less['db-b']
    n2 = {'x': 1.0, 'y': 1.0, 'z': 1.0}
    text = """# algorithm rendezvous. Expected placements come from tests/gen/gen_algos.py
# (which wrote this file), a Python model of the definition in the header
# of ext/algos/rendezvous.c: score = -weight / ln(u), u from Hash128to64 of the
# node's hash and the key's position.

statement ok
CREATE VIRTUAL TABLE rv USING chash(algorithm=rendezvous)

statement ok
INSERT INTO rv(node, weight) VALUES %s

query T
%s
----
%s

query T
%s
----
%s

# Shares are the weight-proportional win probabilities; no points.
query TRR rowsort
SELECT node, share, points FROM rv
----
db-a	0.154	NULL
db-b	0.308	NULL
db-c	0.077	NULL
db-d	0.462	NULL

# Removing a node moves only its own keys.
statement ok
DELETE FROM rv WHERE node='db-b'

query T
%s
----
%s

query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
SELECT count(*) FROM n WHERE ch_moved('key' || i, 'rv@1', 'rv')
  AND ch_locate('key' || i, 'rv@1') <> 'db-b'
----
0

# Another hash and seed: both the node hashes and the key positions change.
query T
%s
----
%s

statement error
CREATE VIRTUAL TABLE bad1 USING chash(algorithm=rendezvous, vnodes=10)
----
vnodes does not apply to algorithm rendezvous

statement error
CREATE VIRTUAL TABLE bad2 USING chash(algorithm=rendezvous, hash=md5, seed=1)
----
seed does not apply to hash md5 (only xxh3 and xxh64 take a seed)
""" % (', '.join("('%s', %g)" % kv for kv in nodes.items()),
       KEYS_CTE % (12, 'rv'), '\n'.join(rendezvous(p, nodes) for p in pos[:12]),
       KEYS_CTE % (1000, 'rv'), md5_form([rendezvous(p, nodes) for p in pos]),
       KEYS_CTE % (1000, 'rv'), md5_form([rendezvous(p, less) for p in pos]),
       KEYS_CTE % (10, '{"algorithm":"rendezvous","hash":"xxh64","seed":9,'
                        '"nodes":["x","y","z"]}'),
       '\n'.join(rendezvous(xxhash.xxh64_intdigest(k, seed=9), n2, seed=9,
                            h=xxhash.xxh64_intdigest) for k in keys(10)))
    return text


def slot_keys(m):
    """For each slot s of a table of size m, a key whose XXH64 is s mod m."""
    found, i = {}, 0
    while len(found) < m:
        k = 'k%d' % i
        found.setdefault(xxhash.xxh64_intdigest(k.encode()) % m, k)
        i += 1
    return [found[s] for s in range(m)]


def gen_maglev():
    def table_query(spec, m, names, table):
        sk = slot_keys(m)
        sql = ("SELECT ch_locate(value, '%s') FROM json_each('[%s]') ORDER BY key"
               % (spec, ', '.join('"%s"' % k for k in sk)))
        return 'query T\n%s\n----\n%s\n\n' % (sql, '\n'.join(names[i] for i in table))
    addr = ['127.0.0.1:%d' % p for p in range(90, 96)]
    hostnames = ['%d' % p for p in range(90, 96)]
    text = """# algorithm maglev: Envoy's own test tables (from its maglev load
# balancer's unit tests). Slot s is reached through a key whose XXH64 is s mod the
# table size; tests/gen/gen_algos.py (which wrote this file) chose the keys.
# Envoy's host index is the position in its sorted host list, so
# table [2, 4, 0, ...] means hosts :92, :94, :90, ...

# M = 7, hosts 127.0.0.1:90 .. :95: [2, 4, 0, 1, 5, 0, 3].
%s
# The same with hostnames "90" .. "95": [2, 5, 0, 3, 4, 1, 0].
%s
# M = 17, :90 weight 1 and :91 weight 2.
%s
# The default table, 65537 slots: 10923 for hosts 0-4, 10922 for host 5;
# points are the slots a node owns, shares exact over 2^64 positions.
statement ok
CREATE VIRTUAL TABLE mg USING chash(algorithm=maglev)

statement ok
INSERT INTO mg(node) VALUES %s

query TI rowsort
SELECT node, points FROM mg
----
%s

query R
SELECT sum(share) FROM mg
----
1.000

# Slots 0..9 of that table: hosts 5 4 4 0 5 5 3 1 5 5.
query T
SELECT ch_locate(value, 'mg') FROM json_each('[%s]') ORDER BY key
----
%s

query T
SELECT value FROM mg_config WHERE key='hash'
----
xxh64

# The table option: a prime, at least the node count.
statement error
CREATE VIRTUAL TABLE bad1 USING chash(algorithm=maglev, table=65536)
----
table: '65536' is not a prime from 2 to 16777213

statement error
CREATE VIRTUAL TABLE bad2 USING chash(algorithm=maglev, vnodes=100)
----
vnodes does not apply to algorithm maglev

statement ok
CREATE VIRTUAL TABLE small USING chash(algorithm=maglev, table=3)

statement ok
INSERT INTO small(node) VALUES ('a'), ('b'), ('c')

statement error
INSERT INTO small(node) VALUES ('d')
----
small: a maglev table of 3 slots holds at most 3 nodes (4 given)

statement error
SELECT ch_locate('k', '{"algorithm":"maglev","table":2,"nodes":["a","b","c"]}')
----
ch_locate: JSON ring spec: a maglev table of 2 slots holds at most 2 nodes

query I
SELECT sum(points) FROM small
----
3
""" % (table_query('{"algorithm":"maglev","table":7,"nodes":[%s]}'
                   % ','.join('"%s"' % a for a in addr), 7, addr, [2, 4, 0, 1, 5, 0, 3]),
       table_query('{"algorithm":"maglev","table":7,"nodes":[%s]}'
                   % ','.join('"%s"' % a for a in hostnames), 7, hostnames,
                   [2, 5, 0, 3, 4, 1, 0]),
       table_query('{"algorithm":"maglev","table":17,"nodes":{"127.0.0.1:90":1,'
                   '"127.0.0.1:91":2}}', 17, addr,
                   [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]),
       ', '.join("('%s')" % a for a in addr),
       '\n'.join('%s\t%d' % (a, 10923 if i < 5 else 10922) for i, a in enumerate(addr)),
       ', '.join('"%s"' % k for k in slot_keys(65537)[:10]),
       '\n'.join(addr[i] for i in [5, 4, 4, 0, 5, 5, 3, 1, 5, 5]))
    return text


if __name__ == '__main__':
    genfiles.main('gen_algos.py', [('jump.test', gen_jump), ('rendezvous.test', gen_rendezvous),
                                   ('maglev.test', gen_maglev)])

"""tests/gen/envoy_ring_gen.py: writes tests/gen/envoy_ring.test from an
independent model of Envoy's ring hash load balancer (RING_HASH, default
xxHash), written from the rule as Envoy states it, with Debian's python3 and
python3-xxhash (no chash code involved):

  weights  each host's weight divided by the sum of the weights, in double
           precision; w_min the smallest quotient.
  scale    min(ceil(w_min * min_ring) / w_min, max_ring), in double.
  points   two running sums, current and target, both 0.0; for each host in
           host-set order: target += scale * w; while current < target:
           a point at XXH64(address + "_" + i, seed 0) for i = 0, 1, ...,
           current += 1. A host's count thus depends on the hosts before it.
  lookup   the first point whose value is >= the key's XXH64, else the
           first point (the ring wraps).

The model is checked first against the expected values of Envoy's own
ring-hash unit tests (rings, lookups, per-host counts and the 6000- and
1023-probe histograms), and every configuration is also computed with wrong
variants (points numbered from 1; per-host counts rounded on their own;
keys hashed with xxh3) that the generator asserts disagree.

Run: /usr/bin/python3 tests/gen/envoy_ring_gen.py --write  (or --check)
"""
import bisect
import math

import xxhash

import genfiles
from testkit import comment, keys, md5_form

M64 = (1 << 64) - 1
MAX_RING = 8388608


class EnvoyRing:
    """hosts: (address, weight) in host-set (join) order. Variants for the
    failing checks: first=1 (points numbered from 1), rounded=True (each
    host's count rounded on its own, without the running sums), separator=''
    (labels without the underscore)."""

    def __init__(self, hosts, min_ring=1024, max_ring=MAX_RING, first=0, rounded=False,
                 separator='_'):
        total = sum(w for _, w in hosts)
        norm = [(a, float(w) * 1.0 / float(total)) for a, w in hosts]
        w_min = min(w for _, w in norm)
        scale = min(math.ceil(w_min * min_ring) / w_min, float(max_ring))
        current, target = 0.0, 0.0
        points = []
        for address, w in norm:
            target += scale * w
            count = 0
            if rounded:
                count = int(round(scale * w))
            else:
                while current < target:
                    count += 1
                    current += 1
            for i in range(first, first + count):
                label = (address + separator + str(i)).encode()
                points.append((xxhash.xxh64_intdigest(label), address, i))
        points.sort(key=lambda p: p[0])
        self.points = points
        self.tokens = [p[0] for p in points]

    def owner(self, position):
        j = bisect.bisect_left(self.tokens, position)
        return self.points[j % len(self.points)][1]

    def locate(self, key, key_hash=xxhash.xxh64_intdigest):
        return self.owner(key_hash(key.encode()))

    def shares(self):
        """Exact fraction of the 2^64 key positions each host owns."""
        s = {}
        prev = self.tokens[-1] - (1 << 64)
        for t, address, _ in self.points:
            s[address] = s.get(address, 0) + (t - prev)
            prev = t
        return {a: n / float(1 << 64) for a, n in s.items()}

    def counts(self):
        c = {}
        for _, address, _ in self.points:
            c[address] = c.get(address, 0) + 1
        return c


def signed(u):
    return u - (1 << 64) if u >= 1 << 63 else u


def probe_histogram(ring, n):
    """Envoy's probes i * (2^64-1)/n, i = 0..n-1: the hits per host."""
    hist = {}
    for i in range(n):
        a = ring.owner(i * (M64 // n))
        hist[a] = hist.get(a, 0) + 1
    return hist


def check_envoy_vectors():
    """The expected values in Envoy's ring_hash_lb_test.cc."""
    m = ['127.0.0.1:%d' % p for p in range(96)]
    basic = EnvoyRing([(m[p], 1) for p in range(90, 96)], 12)
    want = [(94, 833437586790550860), (92, 928266305478181108), (90, 1033482794131418490),
            (95, 3551244743356806947), (93, 3851675632748031481), (91, 5583722120771150861),
            (91, 6311230543546372928), (93, 7700377290971790572), (95, 13144177310400110813),
            (92, 13444792449719432967), (94, 15516499411664133160), (90, 16117243373044804889)]
    assert [(p[1], p[0]) for p in basic.points] == [(m[h], t) for h, t in want]
    for pos, port in ((0, 94), (M64, 94), (3551244743356806947, 95),
                      (3551244743356806948, 93)):
        assert basic.owner(pos) == m[port]
    names = EnvoyRing([('%d' % p, 1) for p in range(90, 96)], 12)
    assert names.points[0][:2] == (1975508444536362413, '95')
    assert names.owner(7225015537174310577) == '92' and names.owner(6803900775736438537) == '93'
    uneven = EnvoyRing([(m[80], 1), (m[81], 1)], 3)
    assert [(p[1], p[0]) for p in uneven.points] == [
        (m[80], 5454692015285649509), (m[81], 7859399908942313493),
        (m[80], 13838424394637650569), (m[81], 16064866803292627174)]
    tiny = EnvoyRing([(m[90], 1), (m[91], 2), (m[92], 3)], 6, 6)
    for pos, port in ((928266305478181108, 92), (4443673547860492590, 92),
                      (5583722120771150861, 91), (6311230543546372928, 91),
                      (13444792449719432967, 92), (16117243373044804889, 90)):
        assert tiny.owner(pos) == m[port]
    large = EnvoyRing([(m[90], 1), (m[91], 2), (m[92], 3)], 6144)
    assert large.counts() == {m[90]: 1024, m[91]: 2048, m[92]: 3072}
    assert probe_histogram(large, 6000) == {m[90]: 987, m[91]: 1932, m[92]: 3081}
    frac = EnvoyRing([(m[90], 1), (m[91], 1)], 1023, 1023)
    assert frac.counts() == {m[90]: 512, m[91]: 511}
    assert probe_histogram(frac, 1023) == {m[90]: 526, m[91]: 497}
    small = EnvoyRing([(m[p], 1) for p in range(90, 94)], 2, 2)
    assert len(small.points) == 2 and len(small.counts()) == 2
    # The wrong variants fail these vectors.
    assert EnvoyRing([(m[p], 1) for p in range(90, 96)], 12, first=1).tokens != basic.tokens
    assert EnvoyRing([(m[90], 1), (m[91], 1)], 1023, 1023, rounded=True).counts() != frac.counts()


NKEYS = 2000
KEYS_CTE = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)\n"
            "SELECT ch_locate('key' || i, '%s') FROM n ORDER BY i")


def create(name, hosts, min_ring=None, max_ring=None):
    opts = ''.join(', %s=%d' % (o, v) for o, v in (('min_ring', min_ring),
                                                   ('max_ring', max_ring)) if v is not None)
    if all(w == 1 for _, w in hosts):
        values = ', '.join("('%s')" % a for a, _ in hosts)
        insert = "INSERT INTO %s(node) VALUES %s" % (name, values)
    else:
        values = ', '.join("('%s', %d)" % h for h in hosts)
        insert = "INSERT INTO %s(node, weight) VALUES %s" % (name, values)
    return """statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=envoy_ring%s)

statement ok
%s

""" % (name, opts, insert)


def points_query(name, ring):
    return """query ITI nosort
SELECT token, node, replica FROM ch_points('%s')
----
%s
""" % (name, '\n'.join('%d\t%s\t%d' % (signed(t), a, i) for t, a, i in ring.points))


def arcs_table(name):
    """The ring's arcs, indexed, so that a position finds its owner fast."""
    return """statement ok
CREATE TABLE %s_arcs(start INTEGER PRIMARY KEY, node TEXT)

statement ok
INSERT INTO %s_arcs SELECT start, node FROM ch_arcs('%s')
""" % (name, name, name)


def probes_query(name, n):
    """Envoy's probes i * ((2^64-1)/n) for i = 0..n-1, as signed positions
    (a sum that passes 2^63-1 continues from -2^63), counted per host."""
    step = M64 // n
    return """query TI
WITH RECURSIVE p(i, pos) AS (
  SELECT 0, 0 UNION ALL
  SELECT i + 1, CASE WHEN pos >= 0 AND pos > 9223372036854775807 - %d
                     THEN pos + (%d) - 9223372036854775807 - 1
                     ELSE pos + %d END
  FROM p WHERE i < %d)
SELECT (SELECT node FROM %s_arcs WHERE start <= pos ORDER BY start DESC LIMIT 1) AS host,
  count(*) FROM p GROUP BY host ORDER BY host
""" % (step, step - (1 << 63), step, n - 1, name)


def envoy_tests():
    m = ['127.0.0.1:%d' % p for p in range(96)]
    basic = EnvoyRing([(m[p], 1) for p in range(90, 96)], 12)
    out = ["""
# ---- Envoy's own test vectors (its ring-hash unit tests). Hosts
# 127.0.0.1:90 .. :95, minimum_ring_size 12: 2 points each. Host :94's
# first point is XXH64("127.0.0.1:94_0") = 15516499411664133160, shown as
# the signed %d; the ring in Envoy's order (unsigned):
%s
""" % (signed(15516499411664133160),
       '\n'.join('#   %s  %d' % (a, t) for t, a, _ in basic.points))]
    alice = xxhash.xxh64_intdigest(b'alice')
    assert alice == 8332761332120969289 and basic.owner(alice) == m[95]
    out.append(create('e6', [(m[p], 1) for p in range(90, 96)], min_ring=12))
    out.append(points_query('e6', basic))
    out.append("""
# Envoy's lookups: position 0 and 2^64-1 (the signed -1) go to :94 (the
# ring wraps); 3551244743356806947, a point of :95, to :95 (>=);
# one past it to :93.
query T nosort
SELECT (SELECT node FROM ch_arcs('e6') WHERE start <= pos AND pos <= "end")
FROM (SELECT 1 AS o, 0 AS pos UNION ALL SELECT 2, -1
      UNION ALL SELECT 3, 3551244743356806947 UNION ALL SELECT 4, 3551244743356806948)
ORDER BY o
----
127.0.0.1:94
127.0.0.1:94
127.0.0.1:95
127.0.0.1:93

query TI
SELECT node, points FROM e6 ORDER BY node
----
%s

# A key worked by hand: "alice" is at XXH64("alice", 0) =
# %d; the first point at or after it is
# %d, of %s.
query IT
SELECT ch_hash('alice', 'xxh64'), ch_locate('alice', 'e6')
----
%d
%s
""" % ('\n'.join('%s\t2' % m[p] for p in range(90, 96)), alice,
       basic.tokens[bisect.bisect_left(basic.tokens, alice)], basic.owner(alice),
       alice, basic.owner(alice)))
    names = EnvoyRing([('%d' % p, 1) for p in range(90, 96)], 12)
    out.append("""
# use_hostname_for_hashing: the hostnames 90 .. 95 are the nodes.
%s%s""" % (create('eh', [('%d' % p, 1) for p in range(90, 96)], min_ring=12),
           points_query('eh', names)))
    uneven = EnvoyRing([(m[80], 1), (m[81], 1)], 3)
    after = EnvoyRing([(m[81], 1), (m[82], 1)], 3)
    out.append("""
# Two hosts and minimum_ring_size 3: ceil(0.5 * 3) / 0.5 = 4 points. Then
# :80 leaves and :82 joins.
%s%s
statement ok
DELETE FROM e2 WHERE node = '%s'

statement ok
INSERT INTO e2(node) VALUES ('%s')

%s""" % (create('e2', [(m[80], 1), (m[81], 1)], min_ring=3), points_query('e2', uneven),
         m[80], m[82], points_query('e2', after)))
    tiny = EnvoyRing([(m[90], 1), (m[91], 2), (m[92], 3)], 6, 6)
    out.append("""
# Weights 1, 2, 3 on a ring of exactly 6 (minimum and maximum 6): 1, 2 and 3
# points; Envoy's lookups.
%s
query TI
SELECT node, points FROM ew ORDER BY node
----
%s

query T nosort
SELECT (SELECT node FROM ch_arcs('ew') WHERE start <= pos AND pos <= "end")
FROM (%s)
ORDER BY o
----
%s
""" % (create('ew', [(m[90], 1), (m[91], 2), (m[92], 3)], min_ring=6, max_ring=6),
       '\n'.join('%s\t%d' % (a, c) for a, c in sorted(tiny.counts().items())),
       ' UNION ALL '.join('SELECT %d AS o, %d AS pos' % (o, signed(u)) for o, u in enumerate(
           [928266305478181108, 4443673547860492590, 5583722120771150861,
            6311230543546372928, 13444792449719432967, 16117243373044804889])),
       '\n'.join(m[p] for p in (92, 92, 91, 91, 92, 90))))
    large = EnvoyRing([(m[90], 1), (m[91], 2), (m[92], 3)], 6144)
    out.append("""
# Weights 1, 2, 3 and minimum_ring_size 6144: 1024, 2048, 3072 points, and
# Envoy's 6000 probes i * ((2^64-1)/6000) land 987, 1932, 3081 times.
%s
query TI
SELECT node, points FROM el ORDER BY node
----
%s

%s
%s----
%s
""" % (create('el', [(m[90], 1), (m[91], 2), (m[92], 3)], min_ring=6144),
       '\n'.join('%s\t%d' % (a, c) for a, c in sorted(large.counts().items())),
       arcs_table('el'), probes_query('el', 6000),
       '\n'.join('%s\t%d' % (a, c) for a, c in sorted(probe_histogram(large, 6000).items()))))
    frac = EnvoyRing([(m[90], 1), (m[91], 1)], 1023, 1023)
    out.append("""
# A ring of exactly 1023 for two hosts: 511.5 each, so the running sums give
# :90 512 points and :91 511 (rounding each host on its own would give 512
# and 512); Envoy's 1023 probes land 526 and 497 times.
%s
query TI
SELECT node, points FROM ef ORDER BY node
----
%s

%s
%s----
%s
""" % (create('ef', [(m[90], 1), (m[91], 1)], min_ring=1023, max_ring=1023),
       '\n'.join('%s\t%d' % (a, c) for a, c in sorted(frac.counts().items())),
       arcs_table('ef'), probes_query('ef', 1023),
       '\n'.join('%s\t%d' % (a, c) for a, c in sorted(probe_histogram(frac, 1023).items()))))
    small = EnvoyRing([(m[p], 1) for p in range(90, 94)], 2, 2)
    counts, shares = small.counts(), small.shares()
    out.append("""
# A ring of exactly 2 for four hosts: two hosts get no point and no share.
%s
query TIT
SELECT node, points, printf('%%.9f', share) FROM es ORDER BY node
----
%s
""" % (create('es', [(m[p], 1) for p in range(90, 94)], min_ring=2, max_ring=2),
       '\n'.join('%s\t%d\t%.9f' % (m[p], counts.get(m[p], 0), shares.get(m[p], 0.0))
                 for p in range(90, 94))))
    return ''.join(out)


def placement_block(name, hosts, min_ring=None, note=''):
    ring = EnvoyRing(hosts, min_ring or 1024)
    ks = keys(NKEYS)
    answers = [ring.locate(k) for k in ks]
    from_one = EnvoyRing(hosts, min_ring or 1024, first=1)
    from_one = sum(1 for k, a in zip(ks, answers) if from_one.locate(k) != a)
    no_sep = EnvoyRing(hosts, min_ring or 1024, separator='')
    no_sep = sum(1 for k, a in zip(ks, answers) if no_sep.locate(k) != a)
    xxh3 = sum(1 for k, a in zip(ks, answers)
               if ring.locate(k, xxhash.xxh3_64_intdigest) != a)
    assert from_one > 0 and no_sep > 0 and xxh3 > 0
    return """
%s
%s
query T
%s
----
%s

query TI
SELECT node, points FROM %s ORDER BY node
----
%s
""" % (comment('%s Of these %d keys, points numbered from 1 would place %d elsewhere, '
               'labels without "_" %d, keys hashed with xxh3 %d.'
               % (note, NKEYS, from_one, no_sep, xxh3)),
       create(name, hosts, min_ring=min_ring), KEYS_CTE % (NKEYS, name), md5_form(answers),
       name, '\n'.join('%s\t%d' % (a, c) for a, c in sorted(ring.counts().items())))


def order_block():
    """Host order changes the counts: weights 2, 3, 5 against 5, 3, 2."""
    fwd = [('10.0.1.1:8080', 2), ('10.0.1.2:8080', 3), ('10.0.1.3:8080', 5)]
    rev = list(reversed(fwd))
    a, b = EnvoyRing(fwd), EnvoyRing(rev)
    assert a.counts() != b.counts()
    out = ["""
# ---- Join order matters: weights 2, 3, 5 (scale 1025) give 205, 307.5 and
# 512.5 points before rounding; the running sums hand the halves on, so the
# host of weight 3 gets %d points after weight 2 and %d after weight 5.
""" % (a.counts()['10.0.1.2:8080'], b.counts()['10.0.1.2:8080'])]
    for name, hosts, ring in (('eo1', fwd, a), ('eo2', rev, b)):
        out.append("""%s
query TI
SELECT node, points FROM %s ORDER BY node
----
%s

query T
%s
----
%s

""" % (create(name, hosts), name,
       '\n'.join('%s\t%d' % (x, c) for x, c in sorted(ring.counts().items())),
       KEYS_CTE % (NKEYS, name), md5_form([ring.locate(k) for k in keys(NKEYS)])))
    spec = ('{"algorithm":"envoy_ring","nodes":{%s}}'
            % ','.join('"%s":%d' % h for h in rev))
    out.append("""# An inline JSON spec: its object's order is the join order.
query T
%s
----
%s

""" % (KEYS_CTE % (NKEYS, spec), md5_form([b.locate(k) for k in keys(NKEYS)])))
    return ''.join(out)


def gen_envoy_ring():
    check_envoy_vectors()
    text = ["""# algorithm envoy_ring: Envoy's ring hash load balancer (RING_HASH), xxHash.
# GENERATED by tests/gen/envoy_ring_gen.py (edit that, not this): the
# expected values come from its Python model of Envoy's rule (checked there
# against Envoy's own unit-test vectors), not from chash.
"""]
    text.append(envoy_tests())
    text.append("\n# ---- %d keys per configuration (a key's position is its XXH64, seed 0).\n"
                % NKEYS)
    three = [('10.0.0.%d:8080' % i, 1) for i in range(1, 4)]
    five = [('10.0.0.%d:8080' % i, w) for i, w in zip(range(1, 6), (1, 2, 3, 1, 1))]
    ten = [('10.0.0.%d:8080' % i, 1) for i in range(1, 11)]
    text.append(placement_block('k3', three, None, 'Three hosts, default minimum 1024 (1026 points).'))
    text.append(placement_block('k3s', three, 64, 'Three hosts, min_ring=64.'))
    text.append(placement_block('k5', five, None, 'Five hosts, weights 1, 2, 3, 1, 1.'))
    text.append(placement_block('k10', ten, None, 'Ten hosts.'))
    text.append(placement_block('k10b', ten, 4096, 'Ten hosts, min_ring=4096.'))
    text.append(order_block())
    return ''.join(text)


if __name__ == '__main__':
    genfiles.main('envoy_ring_gen.py', [('envoy_ring.test', gen_envoy_ring)])

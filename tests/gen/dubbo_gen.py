"""tests/gen/dubbo_gen.py: writes tests/gen/dubbo.test from an independent
model of Apache Dubbo's ConsistentHashLoadBalance (the stateless ring of
Dubbo 2.6 - 2.7.14 and 3.0 - 3.3), written from the rule as Dubbo states
it, with Debian's python3 (no chash code involved):

  points  for each provider address A, in the order the providers are
          listed, and for i = 0 .. hash.nodes/4 - 1 (Java's int division,
          rounding down: hash.nodes=50 makes 12 digests): the MD5 of the text
          A followed by the decimal i, with no separator; its bytes
          4h .. 4h+3 (h = 0..3) read little-endian are 4 points, unsigned
          32-bit. Each point is put into a sorted map, so a point equal to
          an earlier one replaces it: the provider listed last wins.
  key     MD5 of the key's bytes, bytes 0..3 little-endian.
  lookup  the first point at or after the key's value, else the first.

Each configuration is also computed with two wrong variants (points read
big-endian; the first provider keeping a tie) and the generator asserts
that they disagree with the model, so every expected value can fail.

Run: /usr/bin/python3 tests/gen/dubbo_gen.py --write  (or --check)
"""
import bisect
import hashlib

import genfiles
from testkit import comment, keys as text_keys, md5_form


def md5_words(text, byteorder="little"):
    digest = hashlib.md5(text.encode()).digest()
    return [int.from_bytes(digest[4 * h:4 * h + 4], byteorder) for h in range(4)]


class DubboRing:
    """providers: addresses in the order they joined. Variants for the
    failing checks: byteorder="big", ties="first"."""

    def __init__(self, providers, hash_nodes=160, byteorder="little", ties="last"):
        self.byteorder = byteorder
        owner = {}      # point -> (provider, replica)
        for address in providers:
            for i in range(hash_nodes // 4):
                for h, point in enumerate(md5_words(address + str(i), byteorder)):
                    if ties == "first" and point in owner:
                        continue
                    owner[point] = (address, 4 * i + h)
        self.tokens = sorted(owner)
        self.owner = [owner[t] for t in self.tokens]

    def key_position(self, key):
        return md5_words(key, self.byteorder)[0]

    def locate(self, key):
        j = bisect.bisect_left(self.tokens, self.key_position(key))
        return self.owner[j % len(self.tokens)][0]

    def counts(self):
        c = {}
        for address, _ in self.owner:
            c[address] = c.get(address, 0) + 1
        return c

    def shares(self):
        """Exact fraction of the 2^32 key positions each provider owns."""
        s = {}
        prev = self.tokens[-1] - (1 << 32)
        for t, (address, _) in zip(self.tokens, self.owner):
            s[address] = s.get(address, 0) + (t - prev)
            prev = t
        return {a: n / float(1 << 32) for a, n in s.items()}


KEYS_CTE = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)\n"
            "SELECT ch_locate(%s, '%s') FROM n ORDER BY i")

NKEYS = 2000


def disagreements(ring, variant, keys):
    return sum(1 for k in keys if ring.locate(k) != variant.locate(k))


def check_variants(providers, hash_nodes, keys, need_ties):
    """The model's answers differ from the wrong variants' on these keys."""
    good = DubboRing(providers, hash_nodes)
    big = disagreements(good, DubboRing(providers, hash_nodes, byteorder="big"), keys)
    first = disagreements(good, DubboRing(providers, hash_nodes, ties="first"), keys)
    assert big > 0, providers
    assert first > 0 or not need_ties, providers
    return big, first


def values_clause(providers):
    return ', '.join("('%s')" % p for p in providers)


def ring_block(name, providers, hash_nodes, keys_sql, keys, note):
    """CREATE + INSERT + the 2,000 placements + the points per provider."""
    ring = DubboRing(providers, hash_nodes)
    big, first = check_variants(providers, hash_nodes, keys, need_ties=False)
    option = "" if hash_nodes == 160 else ", vnodes=%d" % hash_nodes
    counts = ring.counts()
    shares = ring.shares()
    rows = '\n'.join('%s\t%d\t%.9f' % (p, counts.get(p, 0), shares.get(p, 0.0))
                     for p in sorted(providers))
    return """
%s
statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=dubbo%s)

statement ok
INSERT INTO %s(node) VALUES %s

query T
%s
----
%s

query TIT
SELECT node, points, printf('%%.9f', share) FROM %s ORDER BY node
----
%s
""" % (comment('%s: %d providers, hash.nodes=%d. Points and keys read big-endian would '
               'place %d of these %d keys elsewhere.'
               % (note, len(providers), hash_nodes, big, len(keys))), name, option, name,
       values_clause(providers), KEYS_CTE % (len(keys), keys_sql, name),
       md5_form([ring.locate(k) for k in keys]), name, rows)


def hand_worked():
    """One key worked by hand: the MD5 bytes and the points they give."""
    providers = ['192.168.0.1:20880', '192.168.0.2:20880', '192.168.0.3:20880']
    ring = DubboRing(providers)
    label = providers[0] + '0'
    digest = hashlib.md5(label.encode()).digest()
    words = md5_words(label)
    key_digest = hashlib.md5(b'hello').digest()
    key_pos = md5_words('hello')[0]
    assert key_pos == 708854109
    j = bisect.bisect_left(ring.tokens, key_pos)
    at, (owner, replica) = ring.tokens[j], ring.owner[j]
    assert owner == '192.168.0.1:20880'
    # Published by an earlier reading of Dubbo (same three providers).
    vectors = [('1', 943901380, '192.168.0.2:20880'), ('2', 2373066440, '192.168.0.3:20880'),
               ('3', 2127088620, '192.168.0.3:20880'), ('hello', 708854109, '192.168.0.1:20880'),
               ('', 3649838548, '192.168.0.1:20880')]
    for key, pos, want in vectors:
        assert ring.key_position(key) == pos and ring.locate(key) == want, key
    hexes = ' '.join('%02x' % b for b in digest)
    return """
# ---- Worked by hand: providers 192.168.0.1:20880, .2, .3 (default 160).
# Provider 192.168.0.1:20880, digest 0: MD5("%s") =
#   %s
# Words 0..3, each 4 bytes read little-endian, are the points 0..3:
#   %s
statement ok
CREATE VIRTUAL TABLE d3 USING chash(algorithm=dubbo)

statement ok
INSERT INTO d3(node) VALUES %s

query II
SELECT replica, token FROM ch_points('d3')
WHERE node = '192.168.0.1:20880' AND replica < 4 ORDER BY replica
----
%s

# The key "hello" (a call whose first argument is "hello"):
# MD5("hello") = %s; bytes 0..3 little-endian: 0x%08x = %d.
# The first point at or after it is %d, point %d of %s.
query II
SELECT ch_hash('hello', 'md5'), min(token) FROM ch_points('d3') WHERE token >= %d
----
%d
%d

query T
SELECT ch_locate('hello', 'd3')
----
%s

# Four more keys: their positions and owners.
query IT
SELECT ch_hash(k, 'md5'), ch_locate(k, 'd3') FROM (%s)
----
%s
""" % (label, hexes,
       '  '.join('%s = %d' % (' '.join('%02x' % b for b in digest[4 * h:4 * h + 4]), w)
                 for h, w in enumerate(words)),
       values_clause(providers),
       '\n'.join('%d\t%d' % (h, w) for h, w in enumerate(words)),
       key_digest.hex(), key_pos, key_pos, at, replica, owner, key_pos, key_pos, at, owner,
       ' UNION ALL '.join("SELECT '%s' AS k" % k for k, _, _ in vectors if k != 'hello'),
       '\n'.join('%d\t%s' % (pos, want) for k, pos, want in vectors if k != 'hello'))


def md5_words_of(address, hash_nodes=160):
    """Every point a provider makes, ties or not."""
    return [w for i in range(hash_nodes // 4) for w in md5_words(address + str(i))]


def collision_pair():
    """"10.0.0.1:2088" + "10" is "10.0.0.1:20881" + "0": 40 shared points."""
    a, b, c = '10.0.0.1:2088', '10.0.0.1:20881', '10.0.0.2:20880'
    shared = set((a + str(i)) for i in range(40)) & set((b + str(i)) for i in range(40))
    assert len(shared) == 10
    keys = text_keys(NKEYS)
    out = ["""
# ---- A label collision: "10.0.0.1:2088" + "10" is "10.0.0.1:20881" + "0", so
# digests 10..19 of the first are digests 0..9 of the second: 40 equal
# points. Dubbo's sorted map keeps the provider listed last, whatever its
# name; chash gives them to the one that joined last.
"""]
    answers = {}
    for name, order in (('ab', [a, b, c]), ('ba', [b, a, c])):
        ring = DubboRing(order)
        wrong = DubboRing(order, ties="first")
        answers[name] = [ring.locate(k) for k in keys]
        moved = disagreements(ring, wrong, keys)
        assert moved > 0
        shares, counts = ring.shares(), ring.counts()
        tied = set(md5_words_of(order[0])) & set(md5_words_of(order[1]))
        assert len(tied) == 40 and len(ring.tokens) == 3 * 160 - 40
        assert counts[order[0]] == 120 and counts[order[1]] == 160
        out.append("""
statement ok
CREATE VIRTUAL TABLE %s USING chash(algorithm=dubbo)

statement ok
INSERT INTO %s(node) VALUES %s

# The ring holds one point per position, as Dubbo's TreeMap: %s,
# which joined last, keeps all its 160 points, the 40 shared ones among
# them, and %s keeps 120. Word 0 of the shared digests is
# ch_hash('10.0.0.1:2088' || d, 'md5') for d = 10 .. 19.
query II
SELECT count(*), count(DISTINCT token) FROM ch_points('%s')
----
%d
%d

query TI
SELECT node, count(*) FROM ch_points('%s') WHERE token IN
  (WITH RECURSIVE s(d) AS (SELECT 10 UNION ALL SELECT d+1 FROM s WHERE d<19)
   SELECT ch_hash('10.0.0.1:2088' || d, 'md5') FROM s)
GROUP BY node
----
%s	%d

query TIT
SELECT node, points, printf('%%.9f', share) FROM %s ORDER BY node
----
%s

query T
%s
----
%s

# Had the first to join kept the shared points, %d of these %d keys would
# land elsewhere.
""" % (name, name, values_clause(order), order[1], order[0], name, len(ring.tokens),
       len(ring.tokens), name, order[1], 10,
       name, '\n'.join('%s\t%d\t%.9f' % (p, counts[p], shares[p]) for p in sorted(order)),
       KEYS_CTE % (NKEYS, "'key' || i", name), md5_form(answers[name]), moved, NKEYS))
    differ = sum(1 for x, y in zip(answers['ab'], answers['ba']) if x != y)
    assert differ > 0
    out.append("""# The two join orders place %d of the %d keys differently.
query I
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)
SELECT count(*) FROM n WHERE ch_locate('key' || i, 'ab') != ch_locate('key' || i, 'ba')
----
%d

# An inline JSON spec: its array's order is the join order.
query T
%s
----
%s

# Leaving and joining again makes a provider the last to join.
statement ok
DELETE FROM ab WHERE node = '%s'

statement ok
INSERT INTO ab(node) VALUES ('%s')

query T
%s
----
%s
""" % (differ, NKEYS, NKEYS, differ,
       KEYS_CTE % (NKEYS, "'key' || i",
                   '{"algorithm":"dubbo","nodes":["%s","%s","%s"]}' % (b, a, c)),
       md5_form(answers['ba']), a, a, KEYS_CTE % (NKEYS, "'key' || i", 'ab'),
       md5_form([DubboRing([b, c, a]).locate(k) for k in keys])))
    return ''.join(out)


def gen_dubbo():
    keys = text_keys(NKEYS)
    three = ['192.168.0.1:20880', '192.168.0.2:20880', '192.168.0.3:20880']
    five = ['10.0.0.%d:20880' % i for i in range(1, 6)]
    ten = ['10.0.0.%d:20880' % i for i in range(1, 11)]
    int_keys = [str(i) for i in range(1, NKEYS + 1)]
    text = ["""# algorithm dubbo: Apache Dubbo's ConsistentHashLoadBalance.
# GENERATED by tests/gen/dubbo_gen.py (edit that, not this): the expected
# values come from its Python model of Dubbo's rule, not from chash.
"""]
    text.append(hand_worked())
    text.append("""
query T
%s
----
%s
""" % (KEYS_CTE % (NKEYS, "'key' || i", 'd3'), md5_form([DubboRing(three).locate(k) for k in keys])))
    text.append(ring_block('d5', five, 160, "'key' || i", keys, "Five"))
    text.append(ring_block('d5s', five, 40, "'key' || i", keys, "Five, fewer points"))
    text.append(ring_block('d10', ten, 160, "'key' || i", keys, "Ten"))
    text.append(ring_block('d10b', ten, 320, "'key' || i", keys, "Ten, more points"))
    text.append(ring_block('d5h', five, 50, "'key' || i", keys,
                           "Five, hash.nodes not a multiple of 4 (12 digests: 48 points each)"))
    text.append(ring_block('d3q', three, 7, "'key' || i", keys,
                           "Three, hash.nodes=7 (1 digest: 4 points each)"))
    text.append(ring_block('d10i', ten, 160, "i", int_keys,
                           "Integer keys (a long argument; Dubbo hashes its decimal text)"))
    text.append(collision_pair())
    return ''.join(text)


if __name__ == '__main__':
    genfiles.main('dubbo_gen.py', [('dubbo.test', gen_dubbo)])

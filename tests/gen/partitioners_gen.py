"""tests/gen/partitioners_gen.py: writes tests/gen/partitioners.test,
algorithms kafka and guava and the hashes murmur2_kafka,
murmur2_kafkajs_legacy, murmur3_128 and identity, with every expected
value computed by the independent model in tests/gen/partitioners_model.py
(which tests/compat/partitioners.py checks against kafkajs, librdkafka and
Guava). Nodes are named in another order than they joined, so a join-order
slip shows. Longs crafted to hit Guava's int overflow and saturating cast
are placed too.

Run: /usr/bin/python3 tests/gen/partitioners_gen.py --write  (or --check)
"""
import genfiles
from testkit import comment, keys, md5_form, sql_key
import partitioners_model as pm

# Join order differs from name order.
PARTITIONS = ['orders-%d' % i for i in range(12)]
JOIN = ['zeta', 'alpha', 'mu', 'beta', 'omega', 'kappa']
HASH_KEYS = [b'', b'a', b'ab', b'abc', b'abcd', b'abcde', b'hello', b'user:42',
             'ключ-é'.encode(), '鍵キー🙂'.encode(), bytes(range(0x80, 0x8b)),
             bytes(range(256))[:33]]
KEY_QUERY = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)\n"
             "SELECT %s FROM n ORDER BY i")


def hashes():
    out = [comment('The hashes through ch_hash: Kafka\'s murmur2 and kafkajs\' legacy '
                   'murmur2 as unsigned 32-bit values, murmur3_128 as the signed long '
                   'Guava\'s padToLong() gives, identity as the integer itself. '
                   'Lengths 0 to 5 cover every tail of the 4-byte blocks (and '
                   'kafkajs\' extra zero-padded block); bytes >= 0x80 are unsigned.')]
    for k in HASH_KEYS:
        out.append('query III\nSELECT ch_hash(%s, \'murmur2_kafka\'), '
                   'ch_hash(%s, \'murmur2_kafkajs_legacy\'), ch_hash(%s, \'murmur3_128\')\n----\n'
                   '%d\n%d\n%d\n' % (sql_key(k), sql_key(k), sql_key(k), pm.murmur2_kafka(k),
                                     pm.murmur2_kafkajs_legacy(k),
                                     pm.signed64(pm.murmur3_128_low(k))))
    long_key = b'0123456789abcdef' * 4 + b'xyz'
    out.append('query I\nSELECT ch_hash(%s, \'murmur3_128\')\n----\n%d\n'
               % (sql_key(long_key), pm.signed64(pm.murmur3_128_low(long_key))))
    out.append(comment('identity: an integer key, or its decimal text exactly as SQLite '
                       'writes it, is itself; anything else gives NULL (no position).'))
    out.append("query IIIII\nSELECT ch_hash(42, 'identity'), ch_hash(-9223372036854775808, "
               "'identity'), ch_hash('9223372036854775807', 'identity'), ch_hash(7.0, 'identity'), "
               "ch_hash('-0', 'identity') IS NULL\n----\n42\n-9223372036854775808\n"
               "9223372036854775807\n7\n1\n")
    out.append("query IIIIII\nSELECT ch_hash('abc', 'identity') IS NULL, ch_hash('', 'identity') IS NULL, "
               "ch_hash('042', 'identity') IS NULL, ch_hash('9223372036854775808', 'identity') IS NULL, "
               "ch_hash(' 1', 'identity') IS NULL, ch_hash(1.5, 'identity') IS NULL\n----\n"
               "1\n1\n1\n1\n1\n1\n")
    return '\n'.join(out)


def kafka():
    out = [comment('algorithm kafka: partition toPositive(murmur2(key)) % n, the '
                   'partitions in join order (orders-0 joined first).')]
    out.append('statement ok\nCREATE VIRTUAL TABLE topic USING chash(algorithm=kafka)\n')
    out.append('statement ok\nINSERT INTO topic(node) VALUES %s\n'
               % ', '.join("('%s')" % p for p in PARTITIONS[:6]))
    ks = [k.encode() for k in keys(1000)]
    for hash_name, fn, table in (('murmur2_kafka', pm.murmur2_kafka, 'topic'),
                                 ('murmur2_kafkajs_legacy', pm.murmur2_kafkajs_legacy, 'legacy')):
        if table == 'legacy':
            out.append('statement ok\nCREATE VIRTUAL TABLE legacy USING '
                       'chash(algorithm=kafka, hash=murmur2_kafkajs_legacy)\n')
            out.append('statement ok\nINSERT INTO legacy(node) VALUES %s\n'
                       % ', '.join("('%s')" % p for p in PARTITIONS[:6]))
        first = ['orders-%d' % pm.kafka_partition(k, 6, fn) for k in ks[:12]]
        out.append('# %s, 6 partitions: the first 12 keys, then 1000.\nquery T\n%s\n----\n%s\n'
                   % (hash_name, KEY_QUERY % (12, "ch_locate('key' || i, '%s')" % table),
                      '\n'.join(first)))
        out.append('query T\n%s\n----\n%s\n'
                   % (KEY_QUERY % (1000, "ch_locate('key' || i, '%s')" % table),
                      md5_form(['orders-%d' % pm.kafka_partition(k, 6, fn) for k in ks])))
        odd = [b'', 'ключ-é'.encode(), bytes(range(0x80, 0x8b))]
        out.append('# The empty key is hashed; bytes beyond ASCII as they are.\nquery TTT\n'
                   'SELECT %s\n----\n%s\n'
                   % (', '.join("ch_locate(%s, '%s')" % (sql_key(k), table) for k in odd),
                      '\n'.join('orders-%d' % pm.kafka_partition(k, 6, fn) for k in odd)))
        out.append('query I\nSELECT ch_locate(NULL, \'%s\') IS NULL\n----\n1\n' % table)
        out.append('statement ok\nINSERT INTO %s(node) VALUES (\'orders-6\'), (\'orders-7\')\n'
                   % table)
        moved = sum(1 for k in ks if pm.kafka_partition(k, 6, fn) != pm.kafka_partition(k, 8, fn))
        out.append('# 6 -> 8 partitions: the keys that change partition.\nquery I\n'
                   'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)\n'
                   "SELECT count(*) FROM n WHERE ch_moved('key' || i, '%s@1', '%s')\n----\n%d\n"
                   % (table, table, moved))
    both = sum(1 for k in ks if pm.kafka_partition(k, 8) != pm.kafka_partition(k, 8, pm.murmur2_kafkajs_legacy))
    out.append(comment('From kafkajs 1.x (the legacy partitioner) to 2.x, at 8 partitions: '
                       'the keys that change partition.'))
    out.append("query I\nWITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)\n"
               "SELECT count(*) FROM n WHERE ch_moved('key' || i, 'legacy', 'topic')\n----\n%d\n" % both)
    return '\n'.join(out)


def guava():
    out = [comment('algorithm guava: consistentHash over murmur3_128 padToLong (the '
                   'default) or over the integer key (identity), buckets in join order.')]
    out.append('statement ok\nCREATE VIRTUAL TABLE g USING chash(algorithm=guava)\n')
    out.append('statement ok\nINSERT INTO g(node) VALUES %s\n' % ', '.join("('%s')" % n for n in JOIN[:3]))
    ks = [k.encode() for k in keys(1000)]
    place = lambda k, n: JOIN[pm.guava_bucket(pm.murmur3_128_low(k), n)]
    out.append('query T\n%s\n----\n%s\n' % (KEY_QUERY % (12, "ch_locate('key' || i, 'g')"),
                                            '\n'.join(place(k, 3) for k in ks[:12])))
    out.append('statement ok\nINSERT INTO g(node) VALUES %s\n' % ', '.join("('%s')" % n for n in JOIN[3:]))
    out.append('query T\n%s\n----\n%s\n' % (KEY_QUERY % (1000, "ch_locate('key' || i, 'g')"),
                                            md5_form([place(k, 6) for k in ks])))
    out.append('# Growing moves keys only onto the new buckets.\nquery I\n'
               'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)\n'
               "SELECT count(*) FROM n WHERE ch_moved('key' || i, 'g@1', 'g')\n  AND "
               "ch_locate('key' || i, 'g') IN ('zeta', 'alpha', 'mu')\n----\n0\n")
    moved = sum(1 for k in ks if place(k, 3) != place(k, 6))
    out.append('query I\nWITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)\n'
               "SELECT count(*) FROM n WHERE ch_moved('key' || i, 'g@1', 'g')\n----\n%d\n" % moved)
    # identity, with longs that hit the overflow and the saturating cast.
    longs = [0, 1, -1, 42, 2 ** 63 - 1, -2 ** 63] + pm.guava_extreme_longs()
    names = ['b%d' % i for i in range(50)]
    out.append(comment('identity over 50 buckets: longs whose generator state has its top '
                       '31 bits all ones (Java\'s int + 1 overflows) or all zeros (the '
                       'quotient passes the int range and Java\'s cast saturates) within '
                       'four steps.'))
    out.append('statement ok\nCREATE VIRTUAL TABLE ids USING chash(algorithm=guava, hash=identity)\n')
    out.append('statement ok\nWITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<49)\n'
               'INSERT INTO ids(node) SELECT \'b\' || i FROM n ORDER BY i\n')
    out.append('query T\nSELECT ch_locate(column1, \'ids\') FROM (VALUES %s)\n----\n%s\n'
               % (', '.join('(%d)' % x for x in longs), md5_form([names[pm.guava_bucket(x, 50)] for x in longs])))
    out.append('query TTT\nSELECT %s\n----\n%s\n'
               % (', '.join("ch_locate(%d, 'ids')" % x for x in longs[:3]),
                  '\n'.join(names[pm.guava_bucket(x, 50)] for x in longs[:3])))
    out.append("# A key identity cannot place has no bucket, as NULL.\nquery II\n"
               "SELECT ch_locate('abc', 'ids') IS NULL, ch_locate('42', 'ids') = ch_locate(42, 'ids')\n"
               "----\n1\n1\n")
    return '\n'.join(out)


ERRORS = """
# Options, weights and changes the libraries cannot express.
statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=kafka, hash=xxh3)
----
bad: algorithm kafka takes hash murmur2_kafka (the default: Kafka's partitioner) or murmur2_kafkajs_legacy (kafkajs' LegacyPartitioner), not xxh3

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=guava, hash=murmur2_kafka)
----
algorithm guava takes hash murmur3_128 (the default: Hashing.murmur3_128().hashString(key, UTF_8)) or identity (consistentHash(long, n) on an integer key), not murmur2_kafka

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=kafka, vnodes=10)
----
vnodes does not apply to algorithm kafka

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=guava, seed=7)
----
seed does not apply to hash murmur3_128 (only xxh3 and xxh64 take a seed)

statement error
CREATE VIRTUAL TABLE bad USING chash(algorithm=ring, hash=identity)
----
hash identity does not apply to algorithm ring (it places integer keys as themselves, for algorithms that hash keys alone: jump, modn, guava)

statement error
INSERT INTO topic(node, weight) VALUES ('orders-8', 2)
----
algorithm kafka has no weights

statement error
SELECT ch_locate('k', '{"algorithm":"guava","nodes":{"a":2}}')
----
node 'a': algorithm guava has no weights

statement error
DELETE FROM topic WHERE node = 'orders-0'
----
topic: cannot remove node 'orders-0': algorithm kafka numbers nodes as partitions in the order they joined, so only the last one ('orders-7') can be removed

statement ok
DELETE FROM topic WHERE node IN ('orders-6', 'orders-7')

query I
SELECT count(*) FROM topic
----
6

statement error
DELETE FROM g WHERE node = 'alpha'
----
g: cannot remove node 'alpha': algorithm guava numbers nodes as buckets in the order they joined, so only the last one ('kappa') can be removed

statement error
SELECT * FROM ch_points('topic')
----
algorithm kafka has no points

statement error
SELECT * FROM ch_diff('g@1', 'g')
----
algorithm guava
"""


def test_file():
    head = comment('algorithms kafka and guava, and their hashes. Expected values come from '
                   'tests/gen/partitioners_model.py (through tests/gen/partitioners_gen.py, '
                   'which wrote this file), a model of the libraries checked against '
                   'kafkajs, librdkafka and Guava by tests/compat/partitioners.py.')
    return '\n\n'.join([head, hashes(), kafka(), guava(), ERRORS.strip() + '\n'])


if __name__ == '__main__':
    genfiles.main('partitioners_gen.py', [('partitioners.test', test_file)])

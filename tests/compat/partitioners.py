"""tests/compat/partitioners.py: algorithms kafka and guava, and the hashes
murmur2_kafka, murmur2_kafkajs_legacy, murmur3_128 and identity, against
the real libraries and the Python model of tests/gen/partitioners_model.py:

  kafka  npm kafkajs 2.x (DefaultPartitioner, LegacyPartitioner, called
         with a topic's partition metadata, no broker:
         tests/compat/kafkajs_partition.js) and Debian's librdkafka
         (rd_kafka_msg_partitioner_murmur2: tests/compat/rdkafka_partition.c)
  guava  Debian's libguava-java 31 (Hashing.murmur3_128().hashString and
         Hashing.consistentHash: tests/compat/GuavaHash.java)

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  partitioners.py CHASH_SO NODE_MODULES RDKAFKA_PROG JAVA_CLASSPATH

Every configuration places 2,000+ keys (ASCII, UTF-8 beyond ASCII, bytes
that are not UTF-8 for Kafka, the empty key) and needs 100% agreement of
the library, the model and ch_locate (or ch_moved, for the keys that move
when a topic grows from 6 to 8 and 12 to 16 partitions). Then wrong
variants (abs() for toPositive, Kafka's murmur2 for kafkajs' legacy one,
Guava without the int overflow of its + 1 or with a wrapping cast, the
high 64 bits of murmur3_128) must disagree with the library, which shows
each check can fail. Exit 1 on any failure.
"""
import json
import os
import random
import subprocess
import sys

from compatkit import chash_db, make_keys
import partitioners_model as pm

NKEYS = 2400


def keys_with_empty(seed, n, text_only):
    """n keys of compatkit's shapes, the empty key among them."""
    return sorted(set(make_keys(seed, n - 1, text_only)) | {b''})


def sql_key(b):
    """A key as SQLite gets it: TEXT when it is UTF-8, else a BLOB (chash
    hashes the same bytes either way)."""
    try:
        return b.decode('utf-8')
    except UnicodeDecodeError:
        return b


def run(cmd, text_in, who):
    out = subprocess.run(cmd, input=text_in, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit('compat partitioners: %s failed:\n%s' % (who, out.stderr))
    return out.stdout


def report(label, got_lists, total_agree):
    """got_lists: the lists that must be equal element by element."""
    n = len(got_lists[0])
    ok = sum(1 for vals in zip(*got_lists) if all(v == vals[0] for v in vals))
    print('%-58s %d/%d keys agree' % (label, ok, n))
    total_agree[0] += ok
    total_agree[1] += n


def kafka_table(db, name, n, hash_name):
    db.execute("CREATE VIRTUAL TABLE %s USING chash(algorithm=kafka, hash=%s)"
               % (name, hash_name))
    db.executemany('INSERT INTO %s(node) VALUES (?)' % name,
                   [('p%d' % i,) for i in range(n)])
    db.commit()                    # version 1: the n partitions


def check_kafka(db, node_modules, rdkafka, tally):
    keys = keys_with_empty(19, NKEYS, text_only=False)
    counts = [3, 6, 8, 12, 16, 50]
    js = json.loads(run(['node', os.path.join(os.path.dirname(__file__), 'kafkajs_partition.js'),
                         node_modules],
                        json.dumps({'counts': counts, 'keys': [k.hex() for k in keys]}),
                        'kafkajs'))
    rd_out = run([rdkafka], ' '.join(map(str, counts)) + '\n'
                 + ''.join((k.hex() or '-') + '\n' for k in keys), 'librdkafka')
    rd = list(zip(*[list(map(int, line.split())) for line in rd_out.splitlines()]))
    ok = True
    for hash_name, js_name, fn in (('murmur2_kafka', 'default', pm.murmur2_kafka),
                                   ('murmur2_kafkajs_legacy', 'legacy',
                                    pm.murmur2_kafkajs_legacy)):
        for ci, n in enumerate(counts):
            t = 'k_%s_%d' % (js_name, n)
            kafka_table(db, t, n, hash_name)
            ours = [int(db.execute('SELECT ch_locate(?, ?)', (sql_key(k), t)).fetchone()[0][1:])
                    for k in keys]
            model = [pm.kafka_partition(k, n, fn) for k in keys]
            lists = [js[js_name][ci], model, ours]
            who = 'kafkajs %sPartitioner, model, chash' % js_name.capitalize()
            if hash_name == 'murmur2_kafka':
                lists.append(list(rd[ci]))
                who += ', librdkafka'
            before = tally[0]
            report('kafka %s %2d partitions (%s)' % (hash_name, n, who), lists, tally)
            ok &= tally[0] - before == len(keys)
        # A topic that grows: the keys ch_moved names are those whose
        # partition the library changes.
        for a, b in ((6, 8), (12, 16)):
            t = 'g_%s_%d' % (js_name, a)
            kafka_table(db, t, a, hash_name)
            db.executemany('INSERT INTO %s(node) VALUES (?)' % t,
                           [('p%d' % i,) for i in range(a, b)])
            db.commit()
            lib = [int(js[js_name][counts.index(a)][i] != js[js_name][counts.index(b)][i])
                   for i in range(len(keys))]
            ours = [db.execute("SELECT ch_moved(?, ?, ?)", (sql_key(k), t + '@1', t)).fetchone()[0]
                    for k in keys]
            before = tally[0]
            report('kafka %s %d -> %d partitions: keys that move (%d)'
                   % (hash_name, a, b, sum(lib)), [lib, ours], tally)
            ok &= tally[0] - before == len(keys)
    # Variants that must disagree with the libraries.
    n = 12
    ci = counts.index(n)
    wrong_abs = [abs(pm.murmur2_kafka(k) - (1 << 32) if pm.murmur2_kafka(k) >> 31 else
                     pm.murmur2_kafka(k)) % n for k in keys]
    wrong_legacy = [pm.kafka_partition(k, n) for k in keys]
    for label, wrong, right in (('abs() for toPositive', wrong_abs, js['default'][ci]),
                                ("Kafka's murmur2 for kafkajs' legacy", wrong_legacy,
                                 js['legacy'][ci])):
        bad = sum(1 for w, r in zip(wrong, right) if w != r)
        print('  variant %-40s disagrees on %d/%d keys' % (label, bad, len(keys)))
        ok &= bad > 0
    return ok


def check_guava(db, classpath, tally):
    keys = keys_with_empty(23, NKEYS, text_only=True)
    rnd = random.Random(29)
    longs = ([0, 1, -1, 42, 2 ** 63 - 1, -2 ** 63] + pm.guava_extreme_longs()
             + [rnd.randint(-2 ** 63, 2 ** 63 - 1) for _ in range(NKEYS)])
    counts = [3, 6, 12, 50, 1000]
    big = [65536, 10 ** 9, 2 ** 31 - 1]
    lines = ['T ' + k.hex() for k in keys] + ['L %d' % x for x in longs]
    out = run(['java', '-cp', classpath, 'GuavaHash'],
              ' '.join(map(str, counts + big)) + '\n' + '\n'.join(lines) + '\n', 'Guava')
    rows = [list(map(int, line.split())) for line in out.splitlines()]
    text_rows, long_rows = rows[:len(keys)], rows[len(keys):]
    ok = True
    # The hashes, through ch_hash.
    before = tally[0]
    report('murmur3_128: Guava padToLong, model, ch_hash (text keys)',
           [[r[0] for r in text_rows], [pm.signed64(pm.murmur3_128_low(k)) for k in keys],
            [db.execute("SELECT ch_hash(?, 'murmur3_128')", (k.decode(),)).fetchone()[0]
             for k in keys]], tally)
    report('identity: the long, ch_hash (integer keys)',
           [longs, [db.execute("SELECT ch_hash(?, 'identity')", (x,)).fetchone()[0]
                    for x in longs]], tally)
    ok &= tally[0] - before == len(keys) + len(longs)
    for hash_name, rows_of, items, as_sql in (
            ('murmur3_128', text_rows, keys, lambda k: k.decode()),
            ('identity', long_rows, longs, lambda x: x)):
        for ci, n in enumerate(counts):
            t = 'gu_%s_%d' % (hash_name, n)
            db.execute('CREATE VIRTUAL TABLE %s USING chash(algorithm=guava, hash=%s)'
                       % (t, hash_name))
            db.executemany('INSERT INTO %s(node) VALUES (?)' % t, [('b%d' % i,) for i in range(n)])
            ours = [int(db.execute('SELECT ch_locate(?, ?)', (as_sql(x), t)).fetchone()[0][1:])
                    for x in items]
            inputs = [r[0] for r in rows_of]
            model = [pm.guava_bucket(x, n) for x in inputs]
            before = tally[0]
            report('guava %s %4d buckets (Guava, model, chash)' % (hash_name, n),
                   [[r[1 + ci] for r in rows_of], model, ours], tally)
            ok &= tally[0] - before == len(items)
    # Bucket counts beyond what a ring holds: Guava against the model (the
    # C function is checked against the model at these counts in
    # tests/unit/algos_test.c).
    for bi, n in enumerate(big):
        inputs = [r[0] for r in rows]
        before = tally[0]
        report('guava consistentHash at %d buckets (Guava, model)' % n,
               [[r[1 + len(counts) + bi] for r in rows], [pm.guava_bucket(x, n) for x in inputs]],
               tally)
        ok &= tally[0] - before == len(rows)
    # Variants that must disagree with Guava.
    ext = pm.guava_extreme_longs()
    ext_rows = long_rows[6:6 + len(ext)]
    for label, fn in (('no int overflow of the + 1', lambda x, n: pm.guava_bucket(x, n, overflow=False)),
                      ('a wrapping (int) cast', lambda x, n: pm.guava_bucket(x, n, saturate=False))):
        bad = sum(1 for x, r in zip(ext, ext_rows) for ci, n in enumerate(counts)
                  if fn(x, n) != r[1 + ci])
        print('  variant %-40s disagrees on %d/%d crafted placements' % (label, bad, len(ext) * len(counts)))
        ok &= bad > 0
    bad = sum(1 for k, r in zip(keys, text_rows)
              if pm.guava_bucket(pm.murmur3_128(k)[1], 50) != r[1 + counts.index(50)])
    print('  variant %-40s disagrees on %d/%d keys' % ('the high 64 bits of murmur3_128', bad, len(keys)))
    ok &= bad > 0
    return ok


def main(so, node_modules, rdkafka, classpath):
    db = chash_db(so)
    tally = [0, 0]
    ok = check_kafka(db, node_modules, rdkafka, tally)
    ok &= check_guava(db, classpath, tally)
    print('partitioners: %d/%d placements agree (%.2f%%)'
          % (tally[0], tally[1], 100.0 * tally[0] / tally[1]))
    return ok and tally[0] == tally[1]


if __name__ == '__main__':
    sys.exit(0 if main(*sys.argv[1:5]) else 1)

"""tests/compat/dubbo_check.py: chash's algorithm dubbo against a Java
program that builds Dubbo's ring with Java's own TreeMap, MessageDigest and
String concatenation (tests/compat/DubboRing.java), and against the Python
model of tests/gen/dubbo_gen.py.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  dubbo_check.py CLASSDIR CHASH_SO

For each configuration (3, 5 and 10 providers named like 10.0.0.1:20880,
hash.nodes 40, 160 and 320, values that are not multiples of 4 (50, 7,
4), and a pair of providers whose labels collide, in both join orders) it
places a few thousand keys (ASCII, UTF-8 beyond ASCII, decimal numbers)
three ways and exits 1 unless all three agree on every key. hash.nodes 1, 2
and 3 give Java's ring no point (its lookup throws), and chash must refuse
them.
"""
import os, random, sqlite3, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'gen'))
from dubbo_gen import DubboRing    # noqa: E402  (the Python model)

NKEYS = 3000


def make_keys(seed, n):
    rnd = random.Random(seed)
    shapes = [
        lambda i: 'user:%d' % i,
        lambda i: '%d' % rnd.getrandbits(40),
        lambda i: 'order-%08x' % rnd.getrandbits(32),
        lambda i: 'ключ-%d-é-🙂' % i,
        lambda i: '鍵%dキー' % i,
        lambda i: ''.join(chr(rnd.randint(0x20, 0x7e)) for _ in range(rnd.randint(0, 30))),
    ]
    keys = set()
    while len(keys) < n:
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)


def java_places(classdir, hash_nodes, providers, keys):
    inp = 'N %d\n' % hash_nodes
    inp += ''.join('P %s\n' % p for p in providers)
    inp += ''.join('K %s\n' % k.encode().hex() for k in keys)
    out = subprocess.run(['java', '-cp', classdir, 'DubboRing'], input=inp.encode(),
                         capture_output=True, timeout=120, check=True).stdout
    return out.decode().split('\n')[:len(keys)]


def chash_places(db, table, hash_nodes, providers, keys):
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(algorithm=dubbo, vnodes=%d)'
               % (table, hash_nodes))
    db.executemany('INSERT INTO "%s"(node) VALUES (?)' % table, [(p,) for p in providers])
    return [db.execute('SELECT ch_locate(?, ?)', (k, table)).fetchone()[0] for k in keys]


def main(classdir, so):
    db = sqlite3.connect(':memory:')
    db.enable_load_extension(True)
    db.load_extension(so)
    keys = make_keys(13, NKEYS)
    addr = lambda n: ['10.0.0.%d:20880' % i for i in range(1, n + 1)]
    pair = ['10.0.0.1:2088', '10.0.0.1:20881', '10.0.0.2:20880']
    configs = [(3, 160, addr(3)), (5, 160, addr(5)), (10, 160, addr(10)),
               (5, 40, addr(5)), (10, 320, addr(10)),
               (5, 50, addr(5)), (3, 7, addr(3)), (4, 4, addr(4)),
               ('pair', 160, pair), ('pair reversed', 160, [pair[1], pair[0], pair[2]])]
    total = agree = 0
    for n, (label, hash_nodes, providers) in enumerate(configs):
        java = java_places(classdir, hash_nodes, providers, keys)
        model = DubboRing(providers, hash_nodes)
        ours = chash_places(db, 'd%d' % n, hash_nodes, providers, keys)
        ok = sum(1 for k, j, c in zip(keys, java, ours) if j == c == model.locate(k))
        print('dubbo %-14s hash.nodes=%-3d: %d/%d keys agree (Java TreeMap, Python model, chash)'
              % (label, hash_nodes, ok, len(keys)))
        total += len(keys)
        agree += ok
    print('dubbo: %d/%d keys agree (%.2f%%)' % (agree, total, 100.0 * agree / total))
    refused = 0
    for hash_nodes in (1, 2, 3):
        java = subprocess.run(['java', '-cp', classdir, 'DubboRing'],
                              input=('N %d\nP %s\nK 6b\n' % (hash_nodes, addr(1)[0])).encode(),
                              capture_output=True, timeout=120)
        try:
            chash_places(db, 'small%d' % hash_nodes, hash_nodes, addr(1), ['k'])
            ours = 'placed'
        except sqlite3.Error:
            ours = 'refused'
        refused += java.returncode != 0 and ours == 'refused'
        print('dubbo hash.nodes=%d: Java %s, chash %s'
              % (hash_nodes, 'fails' if java.returncode else 'places keys', ours))
    return agree == total and refused == 3


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1], sys.argv[2]) else 1)

"""tests/compat/spymemcached.py: algorithm spymemcached against the real
spymemcached (Debian's libspymemcached-java 2.12, its KetamaNodeLocator run
by tests/compat/SpyRing.java under OpenJDK 17) and the independent model
tests/gen/spymemcached_model.py. Both node key formats, every
DefaultHashAlgorithm, with and without a weights map, over 3, 5 and 10
servers and pairs of servers whose points collide (in both orders): every
configuration must agree on 100% of its keys (the string SpyRing prints
for a server is its node name in chash, and must be the one the
documented rule gives). Wrong variants of the rule (the earlier server
keeping a shared point, the last point at or below a key, FNV and hashCode
over UTF-8 bytes instead of UTF-16 code units) must each disagree.

Run: /usr/bin/python3 tests/compat/spymemcached.py ./chash.so CLASSPATH
(CLASSPATH: spymemcached's jar and the directory SpyRing.class is in)
"""
import os
import random
import subprocess
import sys

import compatkit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'gen'))
import spymemcached_model as m  # noqa: E402

FORMATS = ('SPYMEMCACHED', 'LIBMEMCACHED')

# A server: (kind, host, ip, port, weight); kinds as SpyRing takes them.
SETS = [
    ('3 addresses', [('ip', '-', '10.0.0.%d' % i, 11211, i) for i in (1, 2, 3)]),
    ('5 named, unresolved, one address',
     [('named', 'cache1', '10.0.1.1', 11211, 1), ('named', 'cache2', '10.0.1.2', 11212, 1),
      ('unresolved', 'cache3', '-', 11211, 2), ('unresolved', 'cache4.example', '-', 11213, 3),
      ('ip', '-', '10.0.1.5', 11211, 5)]),
    ('10 mixed, IPv6, non-ASCII host',
     [('ip', '-', '192.168.0.%d' % i, 11211 + i, i) for i in range(1, 5)] +
     [('ip', '-', '::1', 11211, 5), ('ip', '-', 'fe80::1:2', 11300, 6),
      ('named', 'mc-7.internal', '10.9.0.7', 11211, 7),
      ('unresolved', 'h\u00e9te-\u65e5\u672c', '-', 11211, 8),
      ('unresolved', 'cache-9', '-', 11211, 9), ('named', 'c10', '10.9.0.10', 22122, 10)]),
    # "Aa" and "BB" have one String.hashCode, so with java_hashcode every
    # point of the one is a point of the other.
    ('hashCode pair Aa, BB', [('unresolved', 'Aa', '-', 11211, 1),
                              ('unresolved', 'BB', '-', 11211, 1)]),
]


def libmemcached_kind(server):
    """Under LIBMEMCACHED the host name is hashed: an address without one
    gets its own text attached, so that no reverse lookup happens."""
    kind, host, ip, port, w = server
    return ('named', ip, ip, port, w) if kind == 'ip' else server


def expected_name(fmt, server):
    """The string the formatter hashes, by the documented rule."""
    kind, host, ip, port, _ = server
    if fmt == 'LIBMEMCACHED':
        return host if port == 11211 else '%s:%d' % (host, port)
    if kind == 'unresolved':
        return '%s/<unresolved>:%d' % (host, port)
    text = ('[%s]' % java_ipv6(ip)) if ':' in ip else ip
    return ('%s/%s:%d' if kind == 'named' else '%s%s:%d') % (
        host if kind == 'named' else '', text, port)


def java_ipv6(ip):
    """Java's text of an IPv6 address: eight groups, no '::', no leading 0s."""
    import ipaddress
    return ':'.join('%x' % int(g, 16) for g in ipaddress.IPv6Address(ip).exploded.split(':'))


def collision_set(fmt):
    """A pair of servers whose MD5 points collide under fmt's names."""
    if fmt == 'SPYMEMCACHED':
        cands = [('ip', '-', '10.%d.%d.%d' % (a, b, c), 11211, 1)
                 for a in range(4) for b in range(40) for c in range(1, 40)]
    else:
        cands = [('unresolved', 'mc%d' % i, '-', 11211, 1) for i in range(20000)]
    by_name = {expected_name(fmt, s).encode(): s for s in cands}
    a, b, point = m.md5_collision(list(by_name))
    return 'MD5 pair sharing point %d' % point, [by_name[a], by_name[b]]


def test_keys(ring_names, hash_name, weighted):
    """2,400 keys of mixed shapes (ASCII, UTF-8 beyond ASCII, characters
    outside the BMP), the empty key, the labels of points (which land
    exactly on them), and keys past the highest point (the wrap-around)."""
    ks = compatkit.make_keys(21, 2400, True) + [b'', 'caf\u00e9'.encode(), '\U0001f642'.encode()]
    ks += [name + b'-' + str(i).encode() for name in ring_names for i in (0, 1, 77, 159)]
    ring = m.Ring([(n, 1) for n in ring_names], hash_name, weighted)
    top = ring.keys[-1]
    rnd = random.Random(7)
    wrap = []
    for _ in range(200000):
        k = b'wrap-%d' % rnd.getrandbits(40)
        if ring.position(k) > top:
            wrap.append(k)
            if len(wrap) == 5:
                break
    return ks + wrap


def run_java(classpath, jobs):
    """jobs: [(format, hash, weighted, servers, keys)], servers a list, or
    the text of an AddrUtil address list; for each, the names and the index
    of the server of each key."""
    lines = []
    for fmt, hash_name, weighted, servers, ks in jobs:
        lines.append('C %s %s %d' % (fmt, m.JAVA_NAMES[hash_name], weighted))
        if isinstance(servers, str):
            lines.append('A ' + servers.encode().hex())
        else:
            lines += ['S %s %s %s %d %d' % s for s in servers]
        lines += ['K ' + k.hex() for k in ks]
        lines.append('E')
    out = subprocess.run(['java', '-cp', classpath, 'SpyRing'], input='\n'.join(lines) + '\n',
                         capture_output=True, text=True, timeout=240, check=True).stdout
    it = iter(out.splitlines())
    results = []
    for fmt, hash_name, weighted, servers, ks in jobs:
        count = len(servers) if not isinstance(servers, str) else len(
            [w for w in servers.replace(',', ' ').split() if w])
        names = [next(it)[2:] for _ in range(count)]
        results.append((names, [int(next(it)) for _ in ks]))
    return results


# Address lists as a program holds them, read by ch_config('spymemcached')
# and written back by ch_export: each must place every key as the real
# client given the same text does.
ADDRESS_LISTS = [
    '10.0.0.1:11211 10.0.0.2:11211 10.0.0.3:11211',
    '192.168.1.10:11211,192.168.1.11:11212, 192.168.1.12:011213\n\t10.1.1.1:22122',
]


def check_config(db, classpath):
    """ch_config of each list, and the list ch_export writes of its ring,
    given to AddrUtil: 100% agreement or the count of failures."""
    failed = 0
    ks = compatkit.make_keys(23, 2400, True) + [b'']
    specs = [db.execute("SELECT ch_config('spymemcached', ?)", (t,)).fetchone()[0]
             for t in ADDRESS_LISTS]
    exported = [db.execute("SELECT ch_export(?, 'spymemcached')", (s,)).fetchone()[0]
                for s in specs]
    texts = ADDRESS_LISTS + exported
    results = run_java(classpath, [('SPYMEMCACHED', 'md5', 0, t, ks) for t in texts])
    for text, spec, (names, real) in zip(texts, specs + specs, results):
        index = {n: i for i, n in enumerate(names)}
        got = [index.get(db.execute('SELECT ch_locate(?, ?)', (k.decode(), spec)).fetchone()[0])
               for k in ks]
        ok = compatkit.agreement(ks, got, real, 'chash')
        print('spymemcached config %-70r %d keys: chash %d agree' % (text, len(ks), ok))
        failed += ok != len(ks)
    return failed


def run_chash(db, names, weights, hash_name, weighted, ks):
    db.execute('DROP TABLE IF EXISTS r')
    db.execute('CREATE VIRTUAL TABLE r USING chash(algorithm=spymemcached, hash=%s, weighted=%d)'
               % (hash_name, weighted))
    for n, w in zip(names, weights):
        db.execute('INSERT INTO r(node, weight) VALUES (?, ?)', (n, w if weighted else 1))
    index = {n: i for i, n in enumerate(names)}
    return [index[db.execute("SELECT ch_locate(?, 'r')", (k.decode(),)).fetchone()[0]]
            for k in ks]


def main():
    so, classpath = sys.argv[1], sys.argv[2]
    db = compatkit.chash_db(so)
    jobs, labels = [], []
    for fmt in FORMATS:
        sets = SETS + [collision_set(fmt)]
        sets += [(label + ', later first', servers[::-1]) for label, servers in sets[-2:]]
        for label, servers in sets:
            if fmt == 'LIBMEMCACHED':
                servers = [libmemcached_kind(s) for s in servers]
            names = [expected_name(fmt, s).encode() for s in servers]
            for hash_name in m.JAVA_NAMES:
                for weighted in (0, 1):
                    if weighted and hash_name == 'crc32':
                        continue       # refused: 32-bit points, 15-bit keys
                    ks = test_keys(names, hash_name, weighted)
                    jobs.append((fmt, hash_name, weighted, servers, ks))
                    labels.append((label, names))
    results = run_java(classpath, jobs)
    failed = 0
    total_keys = 0
    wrong = {'earlier server keeps a shared point': 0, 'last point at or below': 0,
             'UTF-8 bytes for UTF-16 code units': 0}
    for (fmt, hash_name, weighted, servers, ks), (label, names), (java_names, real) in zip(
            jobs, labels, results):
        if [n.encode() for n in java_names] != names:
            print('spymemcached %s %s: Java hashes %r, the rule says %r'
                  % (fmt, label, java_names, names))
            failed += 1
            continue
        weights = [s[4] for s in servers]
        pairs = list(zip(names, weights))
        ring = m.Ring(pairs, hash_name, weighted)
        model = [ring.locate_index(k) for k in ks]
        chash = run_chash(db, java_names, weights, hash_name, weighted, ks)
        ok_model = compatkit.agreement(ks, model, real, 'the model')
        ok_chash = compatkit.agreement(ks, chash, real, 'chash')
        total_keys += len(ks)
        print('spymemcached %-12s %-8s %-13s w=%d %-40s %d keys: model %d, chash %d agree'
              % (fmt, m.JAVA_NAMES[hash_name], hash_name, weighted, label, len(ks),
                 ok_model, ok_chash))
        if ok_model != len(ks) or ok_chash != len(ks):
            failed += 1
        variants = {'earlier server keeps a shared point': dict(later_wins=False),
                    'last point at or below': dict(at_or_before=True),
                    'UTF-8 bytes for UTF-16 code units': dict(utf8_units=True)}
        for name, kw in variants.items():
            ring = m.Ring(pairs, hash_name, weighted, **kw)
            wrong[name] += sum(1 for k, r in zip(ks, real) if ring.locate_index(k) != r)
    print('spymemcached: %d configurations, %d keys' % (len(jobs), total_keys))
    failed += check_config(db, classpath)
    failed += compatkit.report_variants('spymemcached', 'spymemcached', wrong)
    if failed:
        raise SystemExit('spymemcached: %d checks failed' % failed)


if __name__ == '__main__':
    main()

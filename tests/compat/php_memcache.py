"""tests/compat/php_memcache.py: algorithm php_memcache against the real
PHP memcache extension (Debian's php-memcache with php-cli, asked through
MemcachePool::findServer(), which needs no connection: run by
tests/compat/php_memcache_find.php) and the independent model
tests/gen/php_memcache_model.py. Every configuration must agree on 100%
of its keys, and wrong variants of the rule (FNV on unsigned bytes, no
bucket table, the later server keeping a shared point, no 250-byte cut,
no rewrite of control bytes) must each disagree somewhere they should.

Run: /usr/bin/python3 tests/compat/php_memcache.py ./chash.so
"""
import json
import os
import random
import subprocess
import sys

import compatkit
import php_memcache_model as m

HERE = os.path.dirname(os.path.abspath(__file__))

PAIR_CRC = m.shared_point_pair('crc32a')
PAIR_FNV = m.shared_point_pair('fnv1a_32')


def pair(p):
    return [(p[0], 1), (p[1], 1)]


CONFIGS = [
    ('3 servers', 'crc32a', (b'', b''),
     [(b'10.0.0.1:11211', 1), (b'10.0.0.2:11211', 1), (b'10.0.0.3:11212', 1)]),
    ('3 servers, fnv', 'fnv1a_32', (b'', b''),
     [(b'10.0.0.1:11211', 1), (b'10.0.0.2:11211', 1), (b'10.0.0.3:11212', 1)]),
    ('5 names, default port', 'crc32a', (b'', b''),
     [(b'cache-%d' % i, 1) for i in range(1, 6)]),
    ('5 names, fnv', 'fnv1a_32', (b'', b''),
     [(b'cache-%d.example:11211' % i, 1) for i in range(1, 6)]),
    ('10 names and addresses', 'crc32a', (b'', b''),
     [(b'cache-%d.example:11211' % i, 1) for i in range(5)] +
     [(b'192.168.1.%d:%d' % (i, 11211 + i), 1) for i in range(5)]),
    ('10 names and addresses, fnv', 'fnv1a_32', (b'', b''),
     [(b'm%d' % i, 1) for i in range(5)] +
     [(b'192.168.1.%d:%d' % (i, 11211 + i), 1) for i in range(5)]),
    ('5 servers, weights 1 2 3 5 8', 'crc32a', (b'', b''),
     [(b'10.1.0.%d:11211' % i, w) for i, w in enumerate([1, 2, 3, 5, 8], 1)]),
    ('10 servers, weights 1..10, fnv', 'fnv1a_32', (b'', b''),
     [(b'w%d:11211' % i, i) for i in range(1, 11)]),
    ('prefix app_, 3 servers', 'crc32a', (b'app_', b''),
     [(b'a:11211', 1), (b'b:11212', 2), (b'c', 1)]),
    ('prefix with a space, fnv', 'fnv1a_32', (b'my app ', b''),
     [(b'a:11211', 1), (b'b:11212', 2), (b'c', 1)]),
    ('prefix app_ and host www.shop.example', 'crc32a', (b'app_', b'www.shop.example'),
     [(b'a:11211', 1), (b'b:11212', 2), (b'c', 1)]),
    ('unix socket, non-ASCII host', 'fnv1a_32', (b'', b''),
     [(b'unix:///run/memcached.sock:0', 1), (b'h\xc3\xa9te:11211', 2),
      (b'\xe6\x97\xa5\xe6\x9c\xac:1', 1)]),
    ('one server', 'crc32a', (b'', b''), [(b'only:11211', 1)]),
    ('shared points, crc32, earlier first', 'crc32a', (b'', b''), pair(PAIR_CRC)),
    ('shared points, crc32, later first', 'crc32a', (b'', b''), pair(PAIR_CRC)[::-1]),
    ('shared points, fnv, earlier first', 'fnv1a_32', (b'', b''), pair(PAIR_FNV)),
    ('shared points, fnv, later first', 'fnv1a_32', (b'', b''), pair(PAIR_FNV)[::-1]),
]

FUNCTION = {'crc32a': 'crc32', 'fnv1a_32': 'fnv'}


def key_prefix(static, host):
    """The prefix the extension puts before every key: the static key,
    then the host name without a leading "www." (any case)."""
    if host[:4].lower() == b'www.':
        host = host[4:]
    return static + host


def keys(hash, prefix, tie_bucket):
    """2,300 keys and more: short ASCII, non-ASCII UTF-8, random bytes
    (control bytes and bytes from 0x80 up among them), keys around the
    250-byte cut, a key found for every bucket, keys for the shared
    point's bucket, and the empty key."""
    rnd = random.Random(19)
    out = [b'', b'a', b'a b', b'user:1', 'caf\u00e9'.encode(), '\u65e5\u672c'.encode(),
           b'\x00', b'\x1f\x20\x21', b'\x7f\x80', b'\xff\xfe']
    out += [b'key:%d' % i for i in range(800)]
    for i in range(300):
        out.append(''.join(rnd.choice(['a', ' ', '\u00e9', '\u20ac', '\t', 'z'])
                           for _ in range(rnd.randint(1, 30))).encode())
    for i in range(300):
        out.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 20))))
    for n in (240, 245, 246, 249, 250, 251, 300, 1000):
        out.append(b'k' * n)
        out.append(b'k' * n + b' x')
        out.append(b'\xe9' * n)
    for i in range(100):
        out.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(240, 400))))
    out += m.keys_for_every_bucket(hash, prefix)
    if tie_bucket is not None:
        out += [m.key_for_bucket(tie_bucket, hash, prefix, start=s) for s in (0, 5000)]
    return out


def run_php(hash, static, server_name, servers, ks):
    spec = []
    for name, weight in servers:
        if m.server_name(name) == name:
            host, port = name.rsplit(b':', 1)
            spec.append([host.decode(), int(port), weight])
        else:
            spec.append([name.decode(), None, weight])
    args = ['php', os.path.join(HERE, 'php_memcache_find.php'), FUNCTION[hash],
            static.decode() or '-', server_name.decode() or '-', json.dumps(spec)]
    out = subprocess.run(args, input=''.join(k.hex() + '\n' for k in ks),
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return [line.encode() for line in out.splitlines()]


def run_chash(db, hash, prefix, servers, ks):
    db.execute('DROP TABLE IF EXISTS r')
    opts = 'algorithm=php_memcache, hash=%s' % hash
    if prefix:
        opts += ", prefix='%s'" % prefix.decode()
    db.execute('CREATE VIRTUAL TABLE r USING chash(%s)' % opts)
    for s, w in servers:
        db.execute('INSERT INTO r(node, weight) VALUES (?, ?)', (s.decode(), w))
    return [m.server_name(db.execute("SELECT ch_locate(?, 'r')", (k,)).fetchone()[0].encode())
            for k in ks]


def names(ring, ks):
    return [m.server_name(ring.locate(k)) for k in ks]


def main():
    so = sys.argv[1]
    db = compatkit.chash_db(so)
    failed = 0
    total = 0
    wrong = {'FNV on unsigned bytes': 0, 'no bucket table': 0,
             'the later server keeps a shared point': 0, 'no 250-byte cut': 0,
             'no rewrite of control bytes': 0}
    for label, hash, (static, host), servers in CONFIGS:
        prefix = key_prefix(static, host)
        tie = PAIR_CRC if hash == 'crc32a' else PAIR_FNV
        tie_bucket = tie[3] if servers in (pair(tie), pair(tie)[::-1]) else None
        ks = keys(hash, prefix, tie_bucket)
        real = run_php(hash, static, host, servers, ks)
        # The extension refuses the empty key (findServer() is false); chash
        # places it as any key. Every other key is compared.
        if real[0] != b'-':
            print('php_memcache %s: findServer() placed the empty key' % label)
            failed += 1
        ks, real = ks[1:], real[1:]
        model = names(m.Ring(servers, hash, prefix), ks)
        chash = run_chash(db, hash, prefix, servers, ks)
        ok_model = compatkit.agreement(ks, model, real, 'the model')
        ok_chash = compatkit.agreement(ks, chash, real, 'chash')
        total += len(ks)
        print('php_memcache %-38s %d keys: model %d, chash %d agree with the extension'
              % (label, len(ks), ok_model, ok_chash))
        if ok_model != len(ks) or ok_chash != len(ks):
            failed += 1
        variants = {
            'no bucket table': m.Ring(servers, hash, prefix, table=False),
            'the later server keeps a shared point': m.Ring(servers, hash, prefix, first_wins=False),
            'no 250-byte cut': m.Ring(servers, hash, prefix, truncate=False),
            'no rewrite of control bytes': m.Ring(servers, hash, prefix, rewrite=False),
        }
        if hash == 'fnv1a_32':
            variants['FNV on unsigned bytes'] = m.Ring(servers, hash, prefix, sign_extend=False)
        for name, ring in variants.items():
            wrong[name] += sum(1 for a, b in zip(names(ring, ks), real) if a != b)
    print('php_memcache: %d keys in %d configurations' % (total, len(CONFIGS)))
    failed += compatkit.report_variants('php_memcache', 'the extension', wrong)
    if failed:
        raise SystemExit('php_memcache: %d checks failed' % failed)


if __name__ == '__main__':
    main()

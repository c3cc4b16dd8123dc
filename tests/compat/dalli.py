"""tests/compat/dalli.py: algorithm dalli against the real Dalli (Debian's
ruby-dalli 3.0, run by tests/compat/dalli_ring.rb) and the independent
model tests/gen/dalli_model.py. Every configuration must agree on 100% of
its keys, and wrong variants of the rule (the earlier server winning a
shared point, the first point at or above the key, no default port, no
shortening of long keys) must each disagree somewhere they should.

The server strings of the configurations without a namespace are also
given as the one comma-separated text Dalli takes (Dalli::Client.new's
string, ENV['MEMCACHE_SERVERS']) to Dalli and to ch_config('dalli', ...),
with an empty item Dalli drops; ch_locate over that spec must agree with
Dalli on every key, and so must Dalli given ch_export's text of the spec.

Run: /usr/bin/python3 tests/compat/dalli.py ./chash.so
"""
import os
import random
import re
import subprocess
import sys

import compatkit
import dalli_model as m
from testkit import forge_crc32

HERE = os.path.dirname(os.path.abspath(__file__))

# Two pairs of servers with a shared point each (found by a search over
# SHA-1 of "name:j"): 10.0.0.30:11211 point 91 = 10.0.3.38:11211 point 37
# (0x4a8e7ceb), 10.0.0.222:11211 point 137 = 10.0.4.43:11211 point 66.
PAIR1 = [(b'10.0.0.30', 1), (b'10.0.3.38:11211', 1)]
PAIR2 = [(b'10.0.0.222:11211', 1), (b'10.0.4.43', 1)]

CONFIGS = [
    ('3 servers with ports', None,
     [(b'10.0.0.1:11211', 1), (b'10.0.0.2:11211', 1), (b'10.0.0.3:11212', 1)]),
    ('5 names without ports', None,
     [(b'cache-%d' % i, 1) for i in range(1, 6)]),
    ('10 names and addresses', None,
     [(b'cache-%d.example' % i, 1) for i in range(5)] +
     [(b'192.168.1.%d:%d' % (i, 11211 + i), 1) for i in range(5)] ),
    ('5 servers, weights 1 2 3 5 8', None,
     [(b'10.1.0.%d' % i, w) for i, w in enumerate([1, 2, 3, 5, 8], 1)]),
    ('10 servers, weights 1..10', None,
     [(b'm%d:11211' % i, i) for i in range(1, 11)]),
    ('3 servers, namespace app', b'app',
     [(b'a', 1), (b'b:11212', 2), (b'c', 1)]),
    ('IPv6 and a unix socket', None,
     [(b'[::1]:11211', 1), (b'[fe80::1]', 1), (b'/run/memcached.sock', 2)]),
    ('one server', None, [(b'only', 1)]),
    ('octal port, odd hosts', None,
     [(b'a:011211', 1), (b'[zz]:1', 1), (b'b:0', 2), (b'h\xc3\xa9te', 1)]),
    ('shared point, earlier first', None, PAIR1),
    ('shared point, later first', None, PAIR1[::-1]),
    ('shared point 2, earlier first', b'ns', PAIR2 + [(b'x', 1)]),
    ('shared point 2, later first', b'ns', PAIR2[::-1] + [(b'x', 1)]),
]


SHARED_POINTS = (0x4a8e7ceb, 0x2505806e)


def forged(namespace, ring):
    """Keys whose (namespaced) CRC-32 is exactly on the shared points, on
    the ring's lowest and highest points, one below each, and at 0 and
    2^32-1 (the wrap-around)."""
    prefix = b'' if namespace is None else namespace + b':'
    targets = {0, 0xffffffff}
    for p in list(SHARED_POINTS) + ring.points[:1] + ring.points[-1:]:
        targets |= {p, (p - 1) % (1 << 32), (p + 1) % (1 << 32)}
    return [forge_crc32(prefix, t)[len(prefix):] for t in sorted(targets)]


def keys():
    """2,359 keys with the forged ones: short ASCII, non-ASCII UTF-8, bytes that are not UTF-8,
    keys over Dalli's 250-character limit (in characters, some multi-byte)
    and the empty key."""
    rnd = random.Random(19)
    out = [b'', b'a', b'user:1', 'caf\u00e9'.encode(), '\u65e5\u672c'.encode(),
           b'\xe3\x81a', b'\xff\xfe', b'\xed\xa0\x80x', b'\xc0\x80']
    out += [b'key:%d' % i for i in range(1200)]
    for i in range(300):
        chars = [rnd.choice(['a', '\u00e9', '\u20ac', '\U0001f600', 'z'])
                 for _ in range(rnd.randint(1, 30))]
        out.append(''.join(chars).encode())
    for i in range(300):
        out.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 20))))
    for n in (210, 211, 212, 213, 237, 245, 249, 250, 251, 252, 300, 1000):
        out.append(b'k' * n)
        out.append(('\u00e9' * n).encode())
        out.append(('x' * (n - 3) + '\u20ac\u20ac\u20ac').encode())
    for i in range(200):
        out.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(240, 600))))
    for i in range(300):
        n = rnd.randint(240, 400)
        out.append(''.join(rnd.choice('ab\u00e9\u4e2d') for _ in range(n)).encode())
    return out


def dalli_string(server, weight):
    """The string given to Dalli::Client for a server of that weight:
    host:port:weight (a unix socket's path:weight)."""
    if weight == 1:
        return server
    if server.startswith(b'/') or re.search(rb':\d+\Z', server):
        return server + b':%d' % weight
    return server + b':11211:%d' % weight


def run_dalli(servers, namespace, ks):
    args = ['ruby', os.path.join(HERE, 'dalli_ring.rb'), '-' if namespace is None else namespace.decode()]
    args += [dalli_string(s, w).decode() for s, w in servers]
    out = subprocess.run(args, input=''.join(k.hex() + '\n' for k in ks),
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return [line.encode() for line in out.splitlines()]


def run_chash(db, servers, namespace, ks):
    db.execute('DROP TABLE IF EXISTS r')
    opts = 'algorithm=dalli' + ('' if namespace is None else ", namespace='%s'" % namespace.decode())
    db.execute('CREATE VIRTUAL TABLE r USING chash(%s)' % opts)
    for s, w in servers:
        db.execute('INSERT INTO r(node, weight) VALUES (?, ?)', (s.decode(), w))
    return [m.server_name(db.execute("SELECT ch_locate(?, 'r')", (k,)).fetchone()[0].encode())
            for k in ks]


def run_chash_text(db, text, ks):
    """ch_locate over ch_config('dalli', text), and ch_export's text of
    that spec."""
    spec = db.execute("SELECT ch_config('dalli', ?)", (text,)).fetchone()[0]
    names = [m.server_name(db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0].encode())
             for k in ks]
    return names, db.execute("SELECT ch_export(?, 'dalli')", (spec,)).fetchone()[0]


def check_texts(db):
    """The configurations as one server string, read by Dalli and by
    ch_config; the exported string read by Dalli. The number of failures."""
    failed = 0
    ks = keys()
    for label, namespace, servers in CONFIGS:
        if namespace is not None:
            continue
        text = b','.join(dalli_string(s, w) for s, w in servers).decode()
        text = text.replace(',', ',,', 1) + '\n'    # an empty item; a file's line end
        real = run_dalli([(text.rstrip('\n').encode(), 1)], None, ks)
        chash, exported = run_chash_text(db, text, ks)
        real_exported = run_dalli([(exported.encode(), 1)], None, ks)
        ok = compatkit.agreement(ks, chash, real, 'ch_config')
        ok_exported = compatkit.agreement(ks, chash, real_exported, 'ch_export')
        print('dalli text %-27s %d keys: ch_config %d, Dalli on ch_export %d agree'
              % (label, len(ks), ok, ok_exported))
        if ok != len(ks) or ok_exported != len(ks):
            failed += 1
    return failed


def model_names(ring, ks):
    return [m.server_name(ring.locate(k)) for k in ks]


def main():
    so = sys.argv[1]
    db = compatkit.chash_db(so)
    failed = 0
    wrong = {'earlier server wins a shared point': 0, 'first point at or above': 0,
             'no default port': 0, 'long keys not shortened': 0}
    for label, namespace, servers in CONFIGS:
        ks = keys() + forged(namespace, m.Ring(servers, namespace))
        real = run_dalli(servers, namespace, ks)
        model = model_names(m.Ring(servers, namespace), ks)
        chash = run_chash(db, servers, namespace, ks)
        ok_model = compatkit.agreement(ks, model, real, 'the model')
        ok_chash = compatkit.agreement(ks, chash, real, 'chash')
        print('dalli %-32s %d keys: model %d, chash %d agree with Dalli'
              % (label, len(ks), ok_model, ok_chash))
        if ok_model != len(ks) or ok_chash != len(ks):
            failed += 1
        variants = {
            'earlier server wins a shared point': m.Ring(servers, namespace, later_wins=False),
            'first point at or above': m.Ring(servers, namespace, below=False),
            'no default port': m.Ring(servers, namespace, name=lambda s: s),
            'long keys not shortened': m.Ring(servers, namespace, shorten=False),
        }
        for name, ring in variants.items():
            wrong[name] += sum(1 for a, b in zip(model_names(ring, ks), real) if a != b)
    failed += check_texts(db)
    failed += compatkit.report_variants('dalli', 'Dalli', wrong)
    if failed:
        raise SystemExit('dalli: %d checks failed' % failed)


if __name__ == '__main__':
    main()

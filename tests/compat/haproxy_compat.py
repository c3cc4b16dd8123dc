"""tests/compat/haproxy_compat.py: chash's `haproxy` algorithm against the
real HAProxy (Debian's haproxy package), on 127.0.0.1.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  haproxy_compat.py CHASH_SO        compare haproxy, the model and chash
  haproxy_compat.py --model-only    compare haproxy and the model only

One haproxy process, started here with its config and pid file in a temp
dir, holds one frontend that sends each request to the backend named in
its X-Be header. Each backend is one configuration: `balance hdr(X-Key)` or
`balance url_param k` with `hash-type consistent` and a hash function,
with or without avalanche, and a server list (names, weights). Every
server points at one more frontend of the same process that answers 200;
the backend writes the server it chose into the response (X-Srv), so a
key's server is read straight off the answer. Every configuration gets at
least 2,000 keys; each must land where tests/gen/haproxy_gen.py and
ch_locate say, and each wrong variant of the rule (first point clockwise,
avalanche flipped, server ids from 0, full_hash without its final
multiplication) must disagree somewhere, so the check can fail. The empty
key is checked as HAProxy treats it: url_param hashes the empty value,
hdr() with an empty header falls back to round robin. haproxy is stopped
by its PID; it listens on loopback only.

With chash: the config file given to haproxy is also read by ch_config,
backend by backend, and ch_locate over those specs must agree with
haproxy on every key; and each spec's ch_export text, its `balance` and
server addresses filled in (the ring holds neither), is a backend x_NAME of
the same haproxy, which must place every key where ch_locate says. The
exported text as written is checked with haproxy -c.
"""
import os, random, shutil, socket, subprocess, sys, tempfile, time

from compatkit import chash_db, free_port, stop
import haproxy_gen as hm

DEADLINE = time.monotonic() + 240          # the whole run, in seconds

# (backend, balance, hash-type line, chash hash, avalanche, servers)
W12 = [('app-%02d' % i, w) for i, w in enumerate([1, 2, 3, 1, 5, 1, 8, 1, 1, 16, 2, 1], 1)]
CONFIGS = []
for _h, _word in (('sdbm', 'sdbm'), ('djb2', 'djb2'), ('wt6', 'wt6'), ('crc32a', 'crc32')):
    for _aval in (False, True):
        CONFIGS.append(('%s_%s' % (_h, 'aval' if _aval else 'plain'), 'hdr(X-Key)',
                        'consistent %s%s' % (_word, ' avalanche' if _aval else ''),
                        _h, _aval, W12))
CONFIGS += [
    # A bare "hash-type consistent" is sdbm with avalanche.
    ('bare', 'url_param k', 'consistent', 'sdbm', True,
     [('alpha', 1), ('beta', 1), ('gamma', 1)]),
    ('eleven', 'url_param k', 'consistent djb2', 'djb2', False,
     [('n%d' % i, 1) for i in range(1, 12)]),
    ('extremes', 'url_param k', 'consistent wt6 avalanche', 'wt6', True,
     [('big', 256), ('small', 1), ('mid', 100), ('tiny', 1)]),
    ('crc_url', 'url_param k', 'consistent crc32 avalanche', 'crc32a', True,
     [('s%d' % i, 1 + i % 4) for i in range(1, 15)]),
]
# Keys crafted to land exactly on points, half-way between points (ties)
# and around the wrap-around, for every hash that can be crafted.
CRAFTED = []
for _h, _word in (('sdbm', 'sdbm'), ('djb2', 'djb2'), ('crc32a', 'crc32')):
    for _aval in (False, True):
        CRAFTED.append(('craft_%s_%s' % (_h, 'aval' if _aval else 'plain'),
                        'url_param k' if _aval else 'hdr(X-Key)',
                        'consistent %s%s' % (_word, ' avalanche' if _aval else ''),
                        _h, _aval, hm.CRAFT_SERVERS))
KEYS_PER_CONFIG = 2000
# Bytes a key may hold: a header value keeps everything but CR, LF, NUL and
# commas (hdr() takes the first comma-separated value) and loses leading and
# trailing blanks; a url_param value ends at '&' and must be a valid URI.
HEADER_BYTES = bytes(b for b in range(0x20, 0x7f) if b != 0x2c) + bytes(range(0x80, 0x100))
URI_BYTES = (b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
             b"-._~!$'()*+,;=:@/?")


def make_keys(seed, n, alphabet):
    rnd = random.Random(seed)
    keys = set()
    shapes = [
        lambda i: b'user:%d' % i,
        lambda i: b'session-%08x' % rnd.getrandbits(32),
        lambda i: bytes(rnd.choice(alphabet) for _ in range(rnd.randint(1, 40))),
        lambda i: (b'long/%d/' % i + b'x' * 300)[:rnd.randint(60, 300)],
        lambda i: b'%d' % rnd.getrandbits(rnd.randint(1, 64)),
    ]
    while len(keys) < n:
        k = shapes[len(keys) % len(shapes)](len(keys)).strip(b' ')
        if k:
            keys.add(k)
    return sorted(keys)


# The frontend answers X-Be: hashes with HAProxy's own hash converters of
# the X-Key header, plain then with avalanche.
HASH_CONVERTERS = ('sdbm', 'djb2', 'wt6', 'crc32')
HASH_LINE = ' '.join('%%[req.fhdr(X-Key),%s%s]' % (c, a)
                     for a in ('', '(1)') for c in HASH_CONVERTERS)


def write_config(path, front, echo):
    lines = ['global', '  maxconn 200', 'defaults', '  mode http',
             '  timeout connect 5s', '  timeout client 30s', '  timeout server 30s',
             'frontend front', '  bind 127.0.0.1:%d' % front,
             '  http-request return status 200 content-type text/plain lf-string "%s"'
             ' if { req.hdr(X-Be) -m str hashes }' % HASH_LINE,
             '  use_backend %[req.hdr(X-Be)]',
             'frontend echo', '  bind 127.0.0.1:%d' % echo,
             '  http-request return status 200 content-type text/plain string ok']
    for name, balance, hash_type, _h, _a, servers in CONFIGS + CRAFTED:
        lines += ['backend %s' % name, '  balance %s' % balance,
                  '  hash-type %s' % hash_type,
                  '  http-response set-header X-Srv %[srv_name]']
        lines += ['  server %s 127.0.0.1:%d weight %d' % (s, echo, w) for s, w in servers]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


class Client:
    """HTTP/1.1 over one kept-alive connection, requests pipelined."""

    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=30)
        self.buf = b''

    def response(self):
        while b'\r\n\r\n' not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise SystemExit('haproxy compat: connection closed by haproxy')
            self.buf += chunk
        head, self.buf = self.buf.split(b'\r\n\r\n', 1)
        headers = {}
        for line in head.split(b'\r\n')[1:]:
            k, _, v = line.partition(b':')
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get(b'content-length', b'0'))
        while len(self.buf) < n:
            self.buf += self.s.recv(65536)
        body, self.buf = self.buf[:n], self.buf[n:]
        status = int(head.split(b' ')[1])
        if status != 200:
            raise SystemExit('haproxy compat: status %d: %r' % (status, head))
        return headers.get(b'x-srv', b'').decode(), body.decode()

    def answers(self, requests):
        out = []
        for i in range(0, len(requests), 100):
            batch = requests[i:i + 100]
            self.s.sendall(b''.join(batch))
            out += [self.response() for _ in batch]
        return out

    def servers(self, requests):
        return [srv for srv, _ in self.answers(requests)]


def request(backend, balance, key):
    if balance.startswith('hdr'):
        return (b'GET / HTTP/1.1\r\nHost: t\r\nX-Be: %s\r\nX-Key: %s\r\n\r\n'
                % (backend.encode(), key))
    return b'GET /p?a=1&k=%s&z=2 HTTP/1.1\r\nHost: t\r\nX-Be: %s\r\n\r\n' % (key, backend.encode())


def chash_places(db, table, hash_name, avalanche, servers, keys):
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(algorithm=haproxy, hash=%s, avalanche=%d)'
               % (table, hash_name, int(avalanche)))
    db.executemany('INSERT INTO "%s"(node, weight) VALUES (?, ?)' % table, servers)
    return [db.execute('SELECT ch_locate(?, ?)', (k, table)).fetchone()[0] for k in keys]


def variants(hash_name, avalanche, servers):
    """Wrong rules, each of which must misplace some keys."""
    ring = hm.Ring(servers, hash_name, avalanche)
    others = [('avalanche flipped', hm.Ring(servers, hash_name, not avalanche)),
              ('server ids from 0', hm.Ring(servers, hash_name, avalanche, first_id=0)),
              ('full_hash without its multiplication',
               hm.Ring(servers, hash_name, avalanche, mix=hm.jenkins_mix))]
    out = {'first point clockwise':
           lambda k: ring.first_clockwise(hm.key_position(k, hash_name, avalanche))}
    out.update((name, r.locate) for name, r in others)
    return out


def export_backends(db, cfg, echo):
    """The specs ch_config reads from the config file, per backend, and the
    config with each spec's ch_export text appended as backend x_NAME."""
    text = open(cfg).read()
    specs, exported, raw = {}, [], []
    for name, balance, _t, _h, _a, servers in CONFIGS:
        spec = db.execute("SELECT ch_config('haproxy', ?, ?)", (text, name)).fetchone()[0]
        specs[name] = spec
        out = db.execute("SELECT ch_export(?, 'haproxy', ?)", (spec, 'x_' + name)).fetchone()[0]
        raw.append(out)
        lines = []
        for line in out.splitlines():
            words = line.split()
            if words[:1] == ['balance']:
                line = '  balance %s' % balance
            elif words[:1] == ['server']:
                line = '  server %s 127.0.0.1:%d %s' % (words[1], echo, ' '.join(words[3:]))
            lines.append(line)
            if words[:1] == ['backend']:
                lines.append('  http-response set-header X-Srv %[srv_name]')
        exported += lines
    with open(cfg, 'a') as f:
        f.write('\n'.join(exported) + '\n')
    alone = cfg + '.exported'
    with open(alone, 'w') as f:
        f.write('defaults\n  mode http\n  timeout connect 5s\n  timeout client 5s\n'
                '  timeout server 5s\nfrontend f\n  bind 127.0.0.1:%d\n'
                '  default_backend x_%s\n' % (free_port(), CONFIGS[0][0]) + ''.join(raw))
    check = subprocess.run(['haproxy', '-c', '-q', '-f', alone],
                           capture_output=True, text=True, timeout=30)
    if check.returncode != 0:
        raise SystemExit('haproxy compat: haproxy rejects the exported text:\n' + check.stderr)
    print('haproxy -c accepts the %d exported backends as written' % len(raw))
    return specs


def main(argv):
    model_only = argv[1:] == ['--model-only']
    so = None if model_only else argv[1]
    tmp = tempfile.mkdtemp(prefix='chash-haproxy-')
    proc = None
    try:
        front, echo = free_port(), free_port()
        cfg = os.path.join(tmp, 'haproxy.cfg')
        write_config(cfg, front, echo)
        db = None
        specs = {}
        if so:
            db = chash_db(so)
            specs = export_backends(db, cfg, echo)
        check = subprocess.run(['haproxy', '-c', '-q', '-f', cfg],
                               capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise SystemExit('haproxy compat: haproxy rejects the config:\n' + check.stderr)
        proc = subprocess.Popen(['haproxy', '-db', '-f', cfg, '-p', os.path.join(tmp, 'pid')],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            try:
                socket.create_connection(('127.0.0.1', front), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > DEADLINE or proc.poll() is not None:
                    raise SystemExit('haproxy compat: haproxy never started listening')
                time.sleep(0.05)
        client = Client(front)
        total = agree = 0
        file_total = file_agree = 0
        ok = True
        version = subprocess.run(['haproxy', '-v'], capture_output=True, text=True).stdout.split()[2]
        print('haproxy %s' % version)
        for n, (name, balance, hash_type, h, aval, servers) in enumerate(CONFIGS):
            alphabet = HEADER_BYTES if balance.startswith('hdr') else URI_BYTES
            keys = make_keys(n, KEYS_PER_CONFIG, alphabet)
            if not balance.startswith('hdr'):
                keys = [b''] + keys          # url_param hashes an empty value
            got = client.servers([request(name, balance, k) for k in keys])
            model = hm.Ring(servers, h, aval)
            want = [model.locate(k) for k in keys]
            m_ok = sum(g == w for g, w in zip(got, want))
            line = '%-9s %-12s hash-type %-26s %2d servers: model %d/%d' % (
                name, balance, hash_type, len(servers), m_ok, len(keys))
            if db is not None:
                mine = chash_places(db, 'r%d' % n, h, aval, servers, keys)
                c_ok = sum(g == c for g, c in zip(got, mine))
                line += ', ch_locate %d/%d' % (c_ok, len(keys))
                ok &= c_ok == len(keys)
                agree += c_ok
                # The spec ch_config read from the file, and the exported
                # backend given to haproxy.
                spec = specs[name]
                mine = [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0] for k in keys]
                f_ok = sum(g == c for g, c in zip(got, mine))
                xgot = client.servers([request('x_' + name, balance, k) for k in keys])
                x_ok = sum(g == c for g, c in zip(xgot, mine))
                line += ', ch_config %d/%d, exported backend %d/%d' % (f_ok, len(keys), x_ok, len(keys))
                ok &= f_ok == len(keys) and x_ok == len(keys)
                file_total += 2 * len(keys)
                file_agree += f_ok + x_ok
            else:
                agree += m_ok
            total += len(keys)
            ok &= m_ok == len(keys)
            wrong = {v: sum(g != f(k) for g, k in zip(got, keys))
                     for v, f in variants(h, aval, servers).items()}
            line += '; variants disagree on ' + ', '.join('%s %d' % (v, c) for v, c in wrong.items())
            print(line)
            if not all(wrong.values()):
                print('  a wrong variant agrees everywhere: the check could not fail')
                ok = False
            for g, w, k in zip(got, want, keys):
                if g != w:
                    print('  mismatch: key %r: haproxy chose %s, the model %s' % (k, g, w))
                    break
        for n, (name, balance, hash_type, h, aval, servers) in enumerate(CRAFTED):
            model = hm.Ring(servers, h, aval)
            cases = hm.crafted_positions(model)
            keys = [hm.craft_key(h, hm.inverse_full_hash(p) if aval else p) for _, p in cases]
            got = client.servers([request(name, balance, k) for k in keys])
            want = [model.owner_of_position(p) for _, p in cases]
            m_ok = sum(g == w for g, w in zip(got, want))
            line = '%-18s %-12s crafted keys: model %d/%d' % (name, balance, m_ok, len(keys))
            ok &= m_ok == len(keys)
            if db is not None:
                mine = chash_places(db, 'c%d' % n, h, aval, servers, keys)
                c_ok = sum(g == c for g, c in zip(got, mine))
                line += ', ch_locate %d/%d' % (c_ok, len(keys))
                ok &= c_ok == len(keys)
            clockwise = sum(g != model.first_clockwise(p) for g, (_, p) in zip(got, cases))
            after = sum(g != model.owner_of_position(p, ties_to_next=True)
                        for g, (_, p) in zip(got, cases))
            line += ('; first point clockwise disagrees on %d, ties to the point after on %d'
                     % (clockwise, after))
            ok &= clockwise > 0 and after > 0
            print(line)
            for (why, p), g, w, k in zip(cases, got, want, keys):
                if g != w:
                    print('  mismatch: %s (%d), key %r: haproxy chose %s, the model %s'
                          % (why, p, k, g, w))
        # The hashes themselves, from HAProxy's converters.
        keys = make_keys(1000, KEYS_PER_CONFIG, HEADER_BYTES)
        got = [body for _, body in client.answers(
            [b'GET / HTTP/1.1\r\nHost: t\r\nX-Be: hashes\r\nX-Key: %s\r\n\r\n' % k
             for k in keys])]
        names = ('sdbm', 'djb2', 'wt6', 'crc32a')
        want = [' '.join('%d' % f(hm.KEY_HASH[h](k)) for f in (lambda x: x, hm.full_hash)
                         for h in names) for k in keys]
        h_ok = sum(g == w for g, w in zip(got, want))
        line = 'hash converters sdbm djb2 wt6 crc32, plain and avalanche: model %d/%d' % (
            h_ok, len(keys))
        ok &= h_ok == len(keys)
        if db is not None:
            mine = [' '.join('%d' % db.execute('SELECT ch_hash(?, ?)', (k, h)).fetchone()[0]
                             for h in names) for k in keys]
            c_ok = sum(g.split()[:4] == m.split() for g, m in zip(got, mine))
            line += ', ch_hash %d/%d' % (c_ok, len(keys))
            ok &= c_ok == len(keys)
        print(line)
        for g, w, k in zip(got, want, keys):
            if g != w:
                print('  mismatch: key %r: haproxy %s, the model %s' % (k, g, w))
                break
        # hdr() with an empty (or absent) header: round robin, no hash.
        rr = client.servers([b'GET / HTTP/1.1\r\nHost: t\r\nX-Be: sdbm_aval\r\nX-Key:\r\n\r\n'] * 24)
        print('empty X-Key header, 24 requests: %d distinct servers (round robin)' % len(set(rr)))
        ok &= len(set(rr)) > 1
        print('haproxy: %d/%d keys agree (%.2f%%) over %d configurations'
              % (agree, total, 100.0 * agree / total, len(CONFIGS)))
        if db is not None:
            print('haproxy ch_config and ch_export: %d/%d keys agree (%.2f%%)'
                  % (file_agree, file_total, 100.0 * file_agree / file_total))
        return ok
    finally:
        stop([proc])                    # by PID, then reap
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv) else 1)

"""tests/compat/compat.py: chash's ketama against the real routers.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  compat.py twemproxy CHASH_SO      memcached + nutcracker on loopback
  compat.py libmemcached CHASH_SO LMHASH   libmemcached, no network

twemproxy: starts 4 memcached (one on port 11211 of 127.0.0.2, so the
"host only" naming rule is exercised) and one nutcracker with a pool per
hash option, with named and unnamed servers and unequal weights. Stores a
few thousand keys through each pool, finds on which memcached each key
landed (multi-get on each), and compares with ch_locate on the equivalent
chash ring; the same nutcracker.yml is read by ch_config, pool by pool,
and ch_locate over those specs must agree too; each spec's ch_export text
passes nutcracker -t, and those of the unnamed pools (whose servers are
addresses), their listen port put in, are pools x0, x2, ... of the same
nutcracker, which must place every key where ch_locate says.
libmemcached: the same keys through lmhash (lmhash.c); the same servers
as a configuration string and as memcached_servers_parse lists, read by
ch_config, and the text ch_export writes, given to libmemcached. Both
print their counts and exit 1 unless every key agrees. Every process
started is stopped by its PID; everything listens on loopback only.
"""
import os, random, shutil, socket, subprocess, sys, tempfile, time

from compatkit import chash_db, free_port, port_is_free, stop, wait_listening

HASHES = ['fnv1a_64', 'md5', 'fnv1_64', 'fnv1a_32', 'fnv1_32', 'one_at_a_time',
          'crc32a', 'crc32', 'murmur', 'jenkins', 'hsieh']
DEADLINE = time.monotonic() + 240          # the whole run, in seconds


def make_keys(seed, n):
    """Mixed key shapes, as memcached's text protocol allows them: no
    space or control bytes, at most 250 bytes with the pool prefix."""
    rnd = random.Random(seed)
    keys = set()
    shapes = [
        lambda i: b'user:%d' % i,
        lambda i: b'session:%08x' % rnd.getrandbits(32),
        lambda i: ('ключ-%d-émoji-🙂' % i).encode(),
        lambda i: ('鍵%dキー' % i).encode(),
        lambda i: bytes(rnd.choice(list(range(0x21, 0x7f)) + list(range(0x80, 0x100)))
                        for _ in range(rnd.randint(1, 40))),
        lambda i: (b'long/%d/' % i + b'x' * 250)[:rnd.randint(100, 240)],
        lambda i: bytes(rnd.randint(0x80, 0xff) for _ in range(rnd.randint(1, 8))),
    ]
    while len(keys) < n:
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)


def chash_places(db, table, hash_name, nodes, keys):
    """nodes: [(name, weight)]; the name of the owner of every key."""
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(algorithm=ketama, hash=%s)'
               % (table, hash_name))
    db.executemany('INSERT INTO "%s"(node, weight) VALUES (?, ?)' % table, nodes)
    return [db.execute('SELECT ch_locate(?, ?)', (k, table)).fetchone()[0]
            for k in keys]


class Conn:
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=10)
        self.buf = b''

    def line(self):
        while b'\r\n' not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise SystemExit('compat: connection closed')
            self.buf += chunk
        line, self.buf = self.buf.split(b'\r\n', 1)
        return line

    def exact(self, n):
        while len(self.buf) < n:
            self.buf += self.s.recv(65536)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def set_many(self, keys):
        for i in range(0, len(keys), 100):
            batch = keys[i:i + 100]
            self.s.sendall(b''.join(b'set %s 0 0 1\r\nx\r\n' % k for k in batch))
            for k in batch:
                reply = self.line()
                if reply != b'STORED':
                    raise SystemExit('compat: set %r: %r' % (k, reply))

    def have(self, keys):
        """The subset of keys this server holds."""
        found = set()
        for i in range(0, len(keys), 100):
            self.s.sendall(b'get ' + b' '.join(keys[i:i + 100]) + b'\r\n')
            while True:
                line = self.line()
                if line == b'END':
                    break
                parts = line.split(b' ')
                if parts[0] != b'VALUE':
                    raise SystemExit('compat: get: %r' % line)
                found.add(parts[1])
                self.exact(int(parts[3]) + 2)
        return found


def landed(direct, keys, nodes):
    """{key: [the node of each memcached that holds it]}."""
    where = {}
    for b, conn in enumerate(direct):
        for k in conn.have(keys):
            where.setdefault(k, []).append(nodes[b][0])
    return where


def twemproxy(so):
    # Backends: (host, port); the first on 11211, named by host alone.
    host11211 = next(h for h in ('127.0.0.2', '127.0.0.3', '127.0.0.4')
                     if port_is_free(h, 11211))
    backends = [(host11211, 11211)] + [('127.0.0.1', free_port()) for _ in range(3)]
    weights = [1, 2, 3, 1]
    labels = ['alpha', 'bb', 'mu', 'zeta-cache']
    procs = []
    tmp = tempfile.mkdtemp(prefix='chash-compat-')
    try:
        for host, port in backends:
            procs.append(subprocess.Popen(
                ['memcached', '-l', host, '-p', str(port), '-U', '0', '-m', '64',
                 '-u', 'nobody' if os.geteuid() == 0 else str(os.geteuid())],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        pools = []
        conf = []
        for i, h in enumerate(HASHES):
            named = i % 2 == 1
            listen = free_port()
            lines = ['p%d:' % i, '  listen: 127.0.0.1:%d' % listen,
                     '  distribution: ketama', '  timeout: 5000',
                     '  auto_eject_hosts: false', '  servers:']
            if h != 'fnv1a_64':          # fnv1a_64 is the default: leave it out
                lines.insert(2, '  hash: %s' % h)
            nodes = []
            for (host, port), w, label in zip(backends, weights, labels):
                w = w + i % 3            # vary the weights between pools
                if named:
                    lines.append('   - %s:%d:%d %s' % (host, port, w, label))
                    nodes.append((label, w))
                else:
                    lines.append('   - %s:%d:%d' % (host, port, w))
                    nodes.append((host if port == 11211 else '%s:%d' % (host, port), w))
            conf += lines
            pools.append((i, h, named, listen, nodes))
        conf_path = os.path.join(tmp, 'nutcracker.yml')
        with open(conf_path, 'w') as f:
            f.write('\n'.join(conf) + '\n')
        # ch_config reads the file; the exported pools pass nutcracker -t,
        # and the unnamed ones join the file on a port of their own.
        db = chash_db(so)
        text = open(conf_path).read()
        specs, exported = {}, []
        for i, h, named, listen, nodes in pools:
            specs[i] = db.execute("SELECT ch_config('nutcracker', ?, ?)", (text, 'p%d' % i)).fetchone()[0]
            out = db.execute("SELECT ch_export(?, 'nutcracker', ?)", (specs[i], 'x%d' % i)).fetchone()[0]
            alone = os.path.join(tmp, 'x%d.yml' % i)
            with open(alone, 'w') as f:
                f.write(out)
            check = subprocess.run(['nutcracker', '-t', '-c', alone],
                                   capture_output=True, text=True, timeout=30)
            if check.returncode != 0:
                raise SystemExit('compat: nutcracker rejects the exported pool:\n' + check.stderr)
            if not named:
                port = free_port()
                exported.append((i, port))
                conf.append(out.replace('127.0.0.1:22121', '127.0.0.1:%d' % port).rstrip('\n'))
        print('twemproxy: nutcracker -t accepts the %d exported pools as written' % len(pools))
        with open(conf_path, 'w') as f:
            f.write('\n'.join(conf) + '\n')
        check = subprocess.run(['nutcracker', '-t', '-c', conf_path],
                               capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise SystemExit('compat: nutcracker rejects the config:\n' + check.stderr)
        procs.append(subprocess.Popen(
            ['nutcracker', '-c', conf_path, '-a', '127.0.0.1', '-s', str(free_port()),
             '-o', os.path.join(tmp, 'nutcracker.log'),
             '-p', os.path.join(tmp, 'nutcracker.pid')],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for host, port in backends:
            wait_listening(host, port, DEADLINE, 'compat')
        for p in pools:
            wait_listening('127.0.0.1', p[3], DEADLINE, 'compat')
        for _, port in exported:
            wait_listening('127.0.0.1', port, DEADLINE, 'compat')

        direct = [Conn(h, p) for h, p in backends]
        total = agree = control = 0
        file_total = file_agree = 0
        for i, h, named, listen, nodes in pools:
            keys = [b'p%d/' % i + k for k in make_keys(i, 2000)]
            Conn('127.0.0.1', listen).set_many(keys)
            where = landed(direct, keys, nodes)
            expect = chash_places(db, 'p%d' % i, h, nodes, keys)
            ok = sum(1 for k, e in zip(keys, expect) if where.get(k) == [e])
            print('twemproxy pool p%-2d hash %-13s %-7s servers: %d/%d keys agree'
                  % (i, h, 'named' if named else 'unnamed', ok, len(keys)))
            for k, e in zip(keys, expect):
                if where.get(k) != [e]:
                    print('  mismatch: key %r: nutcracker put it on %s, chash says %s'
                          % (k, where.get(k), e))
                    break
            total += len(keys)
            agree += ok
            mine = [db.execute('SELECT ch_locate(?, ?)', (k, specs[i])).fetchone()[0] for k in keys]
            f_ok = sum(1 for k, e in zip(keys, mine) if where.get(k) == [e])
            print('twemproxy pool p%-2d from nutcracker.yml with ch_config: %d/%d keys agree'
                  % (i, f_ok, len(keys)))
            file_total += len(keys)
            file_agree += f_ok
            for j, port in exported:
                if j != i:
                    continue
                xkeys = [b'x%d/' % i + k for k in make_keys(i, 2000)]
                Conn('127.0.0.1', port).set_many(xkeys)
                xwhere = landed(direct, xkeys, nodes)
                mine = [db.execute('SELECT ch_locate(?, ?)', (k, specs[i])).fetchone()[0]
                        for k in xkeys]
                x_ok = sum(1 for k, e in zip(xkeys, mine) if xwhere.get(k) == [e])
                print('twemproxy pool x%-2d exported by ch_export: %d/%d keys agree'
                      % (i, x_ok, len(xkeys)))
                file_total += len(xkeys)
                file_agree += x_ok
            if i == 0:
                # Control: the check can fail. Naming the 11211 server
                # host:11211 (as twemproxy does not) misplaces keys.
                wrong = [('%s:11211' % n if n == host11211 else n, w) for n, w in nodes]
                fix = {'%s:11211' % host11211: host11211}
                guess = chash_places(db, 'control', h, wrong, keys)
                control = sum(1 for k, g in zip(keys, guess)
                              if where.get(k) != [fix.get(g, g)])
        print('twemproxy control (11211 kept in the name): %d/%d keys disagree'
              % (control, 2000))
        print('twemproxy: %d/%d keys agree (%.2f%%)' % (agree, total, 100.0 * agree / total))
        print('twemproxy ch_config and ch_export: %d/%d keys agree (%.2f%%)'
              % (file_agree, file_total, 100.0 * file_agree / file_total))
        return agree == total and control > 0 and file_agree == file_total
    finally:
        stop(procs)                     # by PID, then reap
        shutil.rmtree(tmp, ignore_errors=True)


def libmemcached(so, lmhash):
    servers = [('10.0.0.1', 11211, 1), ('cache-b.example', 11211, 2),
               ('10.0.0.3', 11212, 3), ('10.0.0.4', 22122, 5), ('localhost', 11211, 1)]
    nodes = [(h if p == 11211 else '%s:%d' % (h, p), w) for h, p, w in servers]
    keys = [b''] + make_keys(99, 3000)
    configs = [('weighted', None, 'md5')] + \
              [('weighted', h, h) for h in ('one_at_a_time', 'fnv1_64', 'fnv1a_64',
                                            'fnv1_32', 'fnv1a_32', 'crc32', 'murmur',
                                            'jenkins')] + \
              [('ketama', None, 'one_at_a_time')]
    db = chash_db(so)
    total = agree = 0
    for n, (mode, behavior_hash, chash_hash) in enumerate(configs):
        inp = ''.join('S %s %d %d\n' % s for s in servers)
        inp += ''.join('K %s\n' % k.hex() for k in keys)
        args = [lmhash, mode] + ([behavior_hash] if behavior_hash else [])
        out = subprocess.run(args, input=inp, capture_output=True, text=True,
                             timeout=60, check=True).stdout.split()
        got = [nodes[int(i)][0] for i in out]
        expect = chash_places(db, 'lm%d' % n, chash_hash, nodes, keys)
        ok = sum(1 for g, e in zip(got, expect) if g == e)
        print('libmemcached %-8s %-22s: %d/%d keys agree'
              % (mode, 'HASH=' + behavior_hash if behavior_hash else '', ok, len(keys)))
        total += len(keys)
        agree += ok
    # The same servers as libmemcached's own texts, read by ch_config; the
    # text ch_export writes for each spec, given back to libmemcached.
    texts = [('string', ' '.join('--SERVER=%s:%d/?%d' % s for s in servers)
              + ' --BINARY-PROTOCOL'),
             ('list', ', '.join('%s:%d %d' % s for s in servers)),
             ('list', ','.join('%s:%d:%d' % s for s in servers))]
    keys_in = ''.join('K %s\n' % k.hex() for k in keys)
    for mode, text in texts:
        spec = db.execute("SELECT ch_config('libmemcached', ?)", (text,)).fetchone()[0]
        exported = db.execute("SELECT ch_export(?, 'libmemcached')", (spec,)).fetchone()[0]
        for how, t in ((mode, text), ('string', exported.strip())):
            out = subprocess.run([lmhash, how, t], input=keys_in, capture_output=True,
                                 text=True, timeout=60, check=True).stdout.split()
            got = [nodes[int(i)][0] for i in out]
            expect = [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0]
                      for k in keys]
            ok = sum(1 for g, e in zip(got, expect) if g == e)
            print('libmemcached %-6s %s: %d/%d keys agree'
                  % (how, 'ch_config' if t is text else 'ch_export', ok, len(keys)))
            total += len(keys)
            agree += ok
    print('libmemcached: %d/%d keys agree (%.2f%%)' % (agree, total, 100.0 * agree / total))
    return agree == total


if __name__ == '__main__':
    what, so = sys.argv[1], sys.argv[2]
    ok = twemproxy(so) if what == 'twemproxy' else libmemcached(so, sys.argv[3])
    sys.exit(0 if ok else 1)

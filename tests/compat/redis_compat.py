"""tests/compat/redis_compat.py: ch_keyslot, algorithm redis_cluster and the
hash_tag option against the real programs, with Debian's python3:

  redis_compat.py CHASH_SO

- Starts 103 redis-server processes with cluster support on loopback (100
  on 127.0.0.1, 3 on 127.0.0.2), each with its own directory, port, cluster
  config and pid file in a temp dir.
- Slot split: runs `redis-cli --cluster create` over the first n of them
  for every n from 3 to 100, answers "no" to its question, and compares the
  ranges it proposes ("Master[i] -> Slots a - b") with the model and with
  chash's redis_cluster ranges (ch_arcs); once over two hosts, where
  redis-cli interleaves the masters by host.
- Real clusters of 3, 5 and 7 masters (created with --cluster-yes, no
  replicas): CLUSTER KEYSLOT of every key, and the owner of every key from
  the -MOVED answers of the first master, against the model, ch_keyslot
  and ch_locate.
- hash_tag: nutcracker pools (ketama, several hashes and tags) in front of
  memcached, and one in front of plain redis-servers (binary keys): where
  each key lands against the model's rule and against ch_locate with
  hash_tag.

Each check also runs a wrong variant (the split in double precision, the
split by integer division, a wrong tag rule, no tag rule) and requires it
to disagree, so the check is shown able to fail. Prints the counts; exits
1 unless every key agrees. Every process started is stopped by its pid.
"""
import os, random, re, shutil, socket, subprocess, sys, tempfile, time

from compatkit import chash_db, free_port, port_is_free, stop, wait_listening
import redis_model as model

DEADLINE = time.monotonic() + 280          # the whole run, in seconds
KEYS_PER_CHECK = 2500


def make_keys(seed, n, tag=b'{}', binary=True):
    """Keys of every hash-tag shape (o, c: the tag's two bytes): no tag,
    a tag at the start, at the end, empty, empty then a real one, nested,
    two tags, unclosed, closed before opened, the same character twice;
    UTF-8; random bytes with tag bytes sprinkled in. binary=False keeps
    to what memcached's text protocol allows (no space or control bytes)."""
    rnd = random.Random(seed)
    o, c = tag[0:1], tag[1:2]
    low = 0 if binary else 0x21

    def noise(k):
        alphabet = [b for b in range(low, 256) if binary or b != 0x7f]
        out = bytearray(rnd.choice(alphabet) for _ in range(k))
        for _ in range(rnd.randint(0, 3)):
            out.insert(rnd.randint(0, len(out)), rnd.choice(tag))
        return bytes(out)

    shapes = [
        lambda i: b'user:%d' % i,
        lambda i: o + b'user%d' % i + c + b'.following',
        lambda i: b'obj:%d:' % i + o + b't%d' % (i % 97) + c,
        lambda i: o + c + b'key%d' % i,
        lambda i: b'key%d' % i + o + c,
        lambda i: o + c + o + b't%d' % (i % 89) + c + b'x%d' % i,
        lambda i: o + o + b'a%d' % (i % 83) + c + c,
        lambda i: b'a%d' % i + o + b'b%d' % (i % 79) + c + o + b'c%d' % i + c,
        lambda i: o + b'open%d' % i,
        lambda i: b'close%d' % i + c + b'x' + o,
        lambda i: c + b'%d' % i + o + b'y' + c,
        lambda i: o + o + c + b'%d' % i,
        lambda i: ('ключ-%d-' % i).encode() + o + 'émoji-🙂'.encode() + c,
        lambda i: noise(rnd.randint(1, 30)),
        lambda i: o + noise(rnd.randint(1, 6)) + c + noise(rnd.randint(0, 6)),
    ]
    keys = {b''} if binary else set()
    i = 0
    while len(keys) < n:
        k = shapes[i % len(shapes)](i)
        i += 1
        if binary or (0 < len(k) <= 200 and all(b > 0x20 and b != 0x7f for b in k)):
            keys.add(k)
    return sorted(keys)


# ----------------------------------------------------------------- processes

def port_pair_free(host, port):
    """A cluster node listens on port and on its bus port, port + 10000."""
    return port_is_free(host, port) and port_is_free(host, port + 10000)


def pick_ports(host, count, taken):
    rnd = random.Random()
    out = []
    while len(out) < count:
        p = rnd.randint(20000, 55000)
        if p not in taken and p + 10000 not in taken and port_pair_free(host, p):
            taken.update((p, p + 10000))
            out.append(p)
    return out


class Procs:
    """Every process this script starts, stopped by pid at the end."""
    def __init__(self):
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix='chash-redis-')

    def start(self, args, log):
        with open(os.path.join(self.tmp, log), 'wb') as out:
            self.procs.append(subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT))

    def redis(self, host, port, cluster, extra=()):
        d = os.path.join(self.tmp, '%s-%d' % (host, port))
        os.mkdir(d)
        args = ['redis-server', '--bind', host, '--port', str(port),
                '--dir', d, '--pidfile', os.path.join(d, 'redis.pid'),
                '--daemonize', 'no', '--save', '', '--appendonly', 'no',
                '--logfile', os.path.join(d, 'redis.log')]
        if cluster:
            args += ['--cluster-enabled', 'yes',
                     '--cluster-config-file', os.path.join(d, 'nodes.conf'),
                     '--cluster-node-timeout', '15000']
        self.start(args + list(extra), '%s-%d.out' % (host, port))

    def stop(self):
        stop(self.procs, timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)


# ----------------------------------------------------------------- RESP

class Resp:
    """A minimal Redis client: commands as RESP arrays, replies parsed."""
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=30)
        self.buf = b''

    def _fill(self):
        chunk = self.s.recv(1 << 16)
        if not chunk:
            raise SystemExit('redis compat: connection closed')
        self.buf += chunk

    def _line(self):
        while b'\r\n' not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b'\r\n', 1)
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b'+', b'-'):
            return (kind, rest)
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise SystemExit('redis compat: unexpected reply %r' % line)

    def pipeline(self, commands):
        out = []
        for i in range(0, len(commands), 200):
            batch = commands[i:i + 200]
            self.s.sendall(b''.join(
                b'*%d\r\n' % len(cmd) + b''.join(b'$%d\r\n%s\r\n' % (len(a), a) for a in cmd)
                for cmd in batch))
            out += [self.reply() for _ in batch]
        return out

    def call(self, *args):
        return self.pipeline([[a if isinstance(a, bytes) else str(a).encode() for a in args]])[0]


# ----------------------------------------------------------------- chash

def chash_ring(db, name, nodes, **opts):
    args = ', '.join('%s=%s' % kv for kv in opts.items())
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(%s)' % (name, args))
    db.executemany('INSERT INTO "%s"(node, weight) VALUES (?, ?)' % name, nodes)


def chash_locate(db, ring, keys):
    return [db.execute('SELECT ch_locate(?, ?)', (k, ring)).fetchone()[0] for k in keys]


def chash_ranges(db, nodes):
    """redis_cluster's slot ranges for these masters, from ch_arcs over an
    inline ring: [(first, last)] in master order."""
    spec = '{"algorithm":"redis_cluster","nodes":[%s]}' % ','.join('"%s"' % n for n in nodes)
    rows = db.execute('SELECT start, "end", node FROM ch_arcs(?) ORDER BY start',
                      (spec,)).fetchall()
    return [(a, b) for a, b, _ in rows], [n for _, _, n in rows]


def report(label, ok, total, failing=None):
    tail = '' if failing is None else '; wrong variant (%s): %d disagree' % failing
    print('%-58s %d/%d agree%s' % (label, ok, total, tail))
    return ok == total and (failing is None or failing[1] > 0)


# ----------------------------------------------------------------- checks

MASTER_LINE = re.compile(rb'Master\[(\d+)\] -> Slots (\d+) - (\d+)$', re.M)
NODE_LINE = re.compile(rb'^M: [0-9a-f]+ (\S+)\n\s+slots:\[(\d+)-(\d+)\]', re.M)


def dry_create(addrs):
    """What redis-cli --cluster create proposes for addrs (answered "no"):
    [(first, last)] per Master[i], and the (addr, first, last) it shows."""
    out = subprocess.run(['redis-cli', '--cluster', 'create'] + addrs,
                         input=b'no\n', capture_output=True, timeout=60).stdout
    masters = sorted((int(i), int(a), int(b)) for i, a, b in MASTER_LINE.findall(out))
    shown = [(addr.decode(), int(a), int(b)) for addr, a, b in NODE_LINE.findall(out)]
    if not masters:
        raise SystemExit('redis compat: redis-cli proposed nothing:\n' + out.decode())
    return [(a, b) for _, a, b in masters], shown


def check_split(db, addrs):
    ok = total = wrong_double = wrong_division = 0
    for n in range(3, len(addrs) + 1):
        got, _ = dry_create(addrs[:n])
        want = model.create_ranges(n)
        mine, owners = chash_ranges(db, addrs[:n])
        total += 1
        ok += got == want == mine and owners == addrs[:n]
        wrong_double += got != model.create_ranges(n, single=False)
        wrong_division += got != [(i * 16384 // n, (i + 1) * 16384 // n - 1) for i in range(n)]
    a = report('redis-cli slot split, 3..%d masters: layouts' % len(addrs), ok, total,
               ('double precision', wrong_double))
    b = report('redis-cli slot split, integer-division variant', ok, total,
               ('16384*i/n', wrong_division))
    return a and b


def check_interleave(db, addrs):
    """Masters on two hosts: redis-cli orders them by host, interleaved."""
    got, shown = dry_create(addrs)
    order = model.interleave(addrs)
    ranges = model.create_ranges(len(addrs))
    want = sorted((order[i], a, b) for i, (a, b) in enumerate(ranges))
    mine_r, mine_o = chash_ranges(db, order)
    mine = sorted((o, a, b) for o, (a, b) in zip(mine_o, mine_r))
    as_given = sorted((addrs[i], a, b) for i, (a, b) in enumerate(ranges))
    return report('redis-cli masters on two hosts (interleaved order)',
                  int(sorted(shown) == want == mine and got == ranges), 1,
                  ('argument order', int(sorted(shown) != as_given)))


def wait_cluster(conn, n):
    while time.monotonic() < DEADLINE:
        info = conn.call('CLUSTER', 'INFO')
        slots = conn.call('CLUSTER', 'SLOTS')
        if b'cluster_state:ok' in info and len(slots) == n:
            return
        time.sleep(0.2)
    raise SystemExit('redis compat: the cluster never became ready')


def check_cluster(db, addrs, seed):
    n = len(addrs)
    out = subprocess.run(['redis-cli', '--cluster', 'create'] + addrs +
                         ['--cluster-replicas', '0', '--cluster-yes'],
                         capture_output=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit('redis compat: cluster create failed:\n' + out.stdout.decode())
    host, port = addrs[0].rsplit(':', 1)
    conn = Resp(host, int(port))
    wait_cluster(conn, n)
    # Generated keys, and keys crafted to land on the first and last slot
    # of every master (where a wrong split shows).
    ranges = model.create_ranges(n)
    edges = model.keys_for_slots({s for a, b in ranges for s in (a, b)})
    keys = make_keys(seed, KEYS_PER_CHECK) + sorted(k.encode() for k in edges.values())

    slots = conn.pipeline([[b'CLUSTER', b'KEYSLOT', k] for k in keys])
    mine = [db.execute('SELECT ch_keyslot(?)', (k,)).fetchone()[0] for k in keys]
    ok = sum(1 for k, s, m in zip(keys, slots, mine) if s == m == model.keyslot(k))
    whole = sum(1 for k, s in zip(keys, slots) if s != model.crc16(k) % 16384)
    last = sum(1 for k, s in zip(keys, slots)
               if s != model.crc16(tagged_last(k)) % 16384)
    good = report('CLUSTER KEYSLOT (%d masters)' % n, ok, len(keys), ('no tag rule', whole))
    good &= report('CLUSTER KEYSLOT (%d masters), last-} variant' % n, ok, len(keys),
                   ('tag up to the last }', last))

    owner = []
    for k, r in zip(keys, conn.pipeline([[b'GET', k] for k in keys])):
        if r is None:
            owner.append(addrs[0])
        elif isinstance(r, tuple) and r[1].startswith(b'MOVED '):
            owner.append(r[1].split()[2].decode())
        else:
            raise SystemExit('redis compat: GET %r: %r' % (k, r))
    by_slot = model.slot_owner(ranges)
    ring = 'rc%d' % n
    chash_ring(db, ring, [(a, 1) for a in addrs], algorithm='redis_cluster')
    mine = chash_locate(db, ring, keys)
    ok = sum(1 for k, o, m in zip(keys, owner, mine) if o == m == addrs[by_slot[model.keyslot(k)]])
    naive = [(i * 16384 // n, (i + 1) * 16384 // n - 1) for i in range(n)]
    wrong = model.slot_owner(naive)
    bad = sum(1 for k, o in zip(keys, owner) if o != addrs[wrong[model.keyslot(k)]])
    good &= report('cluster of %d masters: owner from -MOVED' % n, ok, len(keys),
                   ('split 16384*i/n', bad))
    return good


def tagged_last(key, tag=b'{}'):
    """A wrong tag rule: up to the LAST closing byte after the first
    opening one."""
    s = key.find(tag[0:1])
    e = key.rfind(tag[1:2])
    return key[s + 1:e] if 0 <= s < e - 1 else key


# ----------------------------------------------------------------- nutcracker

def nutcracker_pools(procs, db):
    """Pools with hash_tag in front of 3 memcached and 3 plain redis-servers;
    returns True if every key lands where chash says."""
    taken = set()
    mc = [('127.0.0.1', p) for p in pick_ports('127.0.0.1', 3, taken)]
    rd = [('127.0.0.1', p) for p in pick_ports('127.0.0.1', 3, taken)]
    user = ['-u', 'nobody'] if os.geteuid() == 0 else []
    for host, port in mc:
        procs.start(['memcached', '-l', host, '-p', str(port), '-U', '0', '-m', '64'] + user,
                    'mc-%d.out' % port)
    for host, port in rd:
        procs.redis(host, port, cluster=False)
    pools = [  # name, backends, protocol, hash, tag, weights
        ('t0', mc, 'memcache', 'fnv1a_64', b'{}', [1, 1, 1]),
        ('t1', mc, 'memcache', 'md5', b'<>', [1, 2, 3]),
        ('t2', mc, 'memcache', 'murmur', b'::', [2, 1, 1]),
        ('t3', mc, 'memcache', 'crc32a', b'}{', [1, 1, 2]),
        ('t4', rd, 'redis', 'fnv1a_64', b'{}', [1, 1, 1]),
        ('t5', rd, 'redis', 'one_at_a_time', b'[]', [3, 1, 2]),
    ]
    conf, listen = [], {}
    for name, backends, proto, h, tag, weights in pools:
        listen[name] = free_port()
        conf += ['%s:' % name, '  listen: 127.0.0.1:%d' % listen[name],
                 '  hash: %s' % h, '  hash_tag: "%s"' % tag.decode(),
                 '  distribution: ketama', '  timeout: 5000',
                 '  auto_eject_hosts: false', '  redis: %s' % str(proto == 'redis').lower(),
                 '  servers:']
        conf += ['   - %s:%d:%d' % (hst, p, w) for (hst, p), w in zip(backends, weights)]
    path = os.path.join(procs.tmp, 'nutcracker.yml')
    with open(path, 'w') as f:
        f.write('\n'.join(conf) + '\n')
    check = subprocess.run(['nutcracker', '-t', '-c', path], capture_output=True, text=True,
                           timeout=30)
    if check.returncode != 0:
        raise SystemExit('redis compat: nutcracker rejects the config:\n' + check.stderr)
    procs.start(['nutcracker', '-c', path, '-a', '127.0.0.1', '-s', str(free_port()),
                 '-o', os.path.join(procs.tmp, 'nutcracker.log'),
                 '-p', os.path.join(procs.tmp, 'nutcracker.pid')], 'nutcracker.out')
    for host, port in mc + rd:
        wait_listening(host, port, DEADLINE, 'redis compat')
    for port in listen.values():
        wait_listening('127.0.0.1', port, DEADLINE, 'redis compat')

    good = True
    for n, (name, backends, proto, h, tag, weights) in enumerate(pools):
        binary = proto == 'redis'
        keys = [k for k in make_keys(100 + n, KEYS_PER_CHECK, tag, binary) if k]
        where = locate_through(proto, listen[name], backends, keys)
        nodes = [('%s:%d' % b, w) for b, w in zip(backends, weights)]
        chash_ring(db, name, nodes, algorithm='ketama', hash=h,
                   hash_tag="'%s'" % tag.decode().replace("'", "''"))
        mine = chash_locate(db, name, keys)
        ok = sum(1 for k, m in zip(keys, mine) if where[k] == [m])
        # Model-only check of the rule: a key lands where its tag alone does.
        alone = locate_through(proto, listen[name], backends,
                               sorted({model.tagged(k, tag) for k in keys}))
        rule = sum(1 for k in keys if where[k] == alone[model.tagged(k, tag)])
        last = [tagged_last(k, tag) for k in keys]
        alone_last = locate_through(proto, listen[name], backends, sorted(set(last)))
        rule_bad = sum(1 for k, t in zip(keys, last) if where[k] != alone_last[t])
        chash_ring(db, name + 'x', nodes, algorithm='ketama', hash=h)
        untagged = chash_locate(db, name + 'x', keys)
        bad = sum(1 for k, u in zip(keys, untagged) if where[k] != [u])
        good &= report('nutcracker %s %-8s hash %-13s hash_tag "%s"'
                       % (name, proto, h, tag.decode()), ok, len(keys), ('no hash_tag', bad))
        good &= report('  the same pool: a key lands with its tag alone', rule, len(keys),
                       ('tag up to the last closing byte', rule_bad))
    return good


def locate_through(proto, listen, backends, keys):
    """Store keys through nutcracker, then ask each backend which it holds:
    {key: [backend "host:port", ...]}."""
    where = {k: [] for k in keys}
    if proto == 'redis':
        front = Resp('127.0.0.1', listen)
        for r in front.pipeline([[b'SET', k, b'1'] for k in keys]):
            if r != (b'+', b'OK'):
                raise SystemExit('redis compat: SET through nutcracker: %r' % (r,))
        for host, port in backends:
            conn = Resp(host, port)
            for k, r in zip(keys, conn.pipeline([[b'EXISTS', k] for k in keys])):
                if r == 1:
                    where[k].append('%s:%d' % (host, port))
            conn.call('FLUSHALL')
        return where
    front = socket.create_connection(('127.0.0.1', listen), timeout=30)
    buf = b''
    for i in range(0, len(keys), 100):
        batch = keys[i:i + 100]
        front.sendall(b''.join(b'set %s 0 0 1\r\nx\r\n' % k for k in batch))
        for k in batch:
            while b'\r\n' not in buf:
                buf += front.recv(65536)
            line, buf = buf.split(b'\r\n', 1)
            if line != b'STORED':
                raise SystemExit('redis compat: set %r: %r' % (k, line))
    for host, port in backends:
        conn = socket.create_connection((host, port), timeout=30)
        for k in keys:
            conn.sendall(b'get %s\r\n' % k)
            reply = b''
            while not reply.endswith(b'END\r\n'):
                reply += conn.recv(65536)
            if reply.startswith(b'VALUE'):
                where[k].append('%s:%d' % (host, port))
        conn.sendall(b'flush_all\r\n')
        conn.recv(100)
    return where


def main(so):
    procs = Procs()
    try:
        taken = set()
        local = ['127.0.0.1:%d' % p for p in pick_ports('127.0.0.1', 100, taken)]
        other = ['127.0.0.2:%d' % p for p in pick_ports('127.0.0.2', 3, taken)]
        for a in local + other:
            h, p = a.rsplit(':', 1)
            procs.redis(h, int(p), cluster=True)
        for a in local + other:
            h, p = a.rsplit(':', 1)
            wait_listening(h, int(p), DEADLINE, 'redis compat')
        db = chash_db(so)
        good = check_split(db, local)
        good &= check_interleave(db, [local[90], local[91], other[0], other[1],
                                      local[92], other[2]])
        for n, first in ((3, 0), (5, 3), (7, 8)):
            good &= check_cluster(db, local[first:first + n], n)
        good &= nutcracker_pools(procs, db)
        print('redis compat: %s' % ('every key agrees' if good else 'DISAGREEMENT'))
        return good
    finally:
        procs.stop()


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1]) else 1)

"""tests/compat/nginx.py: chash's nginx algorithm against the real nginx.

Run by tests/compat/run.sh (make test-compat) with Debian's python3 and
Debian's nginx:

  nginx.py CHASH_SO

Starts one nginx (foreground, one process, config, pid and logs in a temp
dir, listening on 127.0.0.1 only) with an upstream per configuration, each
`hash $http_x_key consistent`. The backends are addresses where nothing
listens (127.77.x.y, unix sockets that do not exist): nginx picks a
server, fails to connect, does not try another (`proxy_next_upstream
off`, `max_fails=0` so no server is ever marked down) and answers 502
with the address it picked in a header. Each key is sent as the X-Key
header; the address is mapped back to the `server` line and compared with
ch_locate on the equivalent chash ring (nodes = server lines as written,
in the same order). Also compared: the independent Python model
(tests/gen/nginx_model.py), and wrong variants of the rule, which must
disagree. With chash, the nginx.conf given to nginx is also read by
ch_config, upstream by upstream, and ch_locate over those specs must agree
with nginx on every key; each spec's ch_export text (its key expression
set to $http_x_key, and max_fails=0 on its servers, as on the others)
is an upstream x_NAME of the same nginx, which must
place every key where ch_locate says; and the exported text as written
passes nginx -t. Exit 1 unless every key agrees.
"""
import http.client, os, random, re, shutil, socket, subprocess, sys, tempfile, time

from compatkit import agreement, chash_db, free_port, stop
import nginx_model
import testkit

DEADLINE = time.monotonic() + 240


def make_keys(seed, n):
    """Keys an HTTP header can carry as they are: no CR, LF or NUL, no
    leading or trailing blanks (nginx strips those); ASCII, UTF-8 and other
    bytes >= 0x80."""
    rnd = random.Random(seed)
    keys = set()
    shapes = [
        lambda i: b'user:%d' % i,
        lambda i: b'/static/img/%08x.png' % rnd.getrandbits(32),
        lambda i: ('ключ-%d-émoji-🙂' % i).encode(),
        lambda i: bytes(rnd.choice(list(range(0x21, 0x7f)) + list(range(0x80, 0x100)))
                        for _ in range(rnd.randint(1, 40))),
        lambda i: b'k %d x' % rnd.getrandbits(40),
    ]
    while len(keys) < n:
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)


def arc_keys(ring_entries, point, n, rnd):
    """n keys whose CRC-32 falls in the arc that ends at point."""
    keys_sorted = [e[0] for e in ring_entries]
    i = keys_sorted.index(point)
    lo = keys_sorted[i - 1] + 1 if i > 0 else 0
    return [testkit.forge_crc32(b'arc-%d-' % j, rnd.randint(lo, point))
            for j in range(n)]


def edge_keys(entries):
    """Keys on the ring's edges, forged from the rule: exactly on the first,
    second and last points, one past the last (the wrap-around), 0 and
    2^32-1, and one past each of a few points."""
    pts = [e[0] for e in entries]
    targets = {0, 0xffffffff, pts[0], pts[1], pts[-1], (pts[-1] + 1) & 0xffffffff}
    targets |= {pts[i] for i in range(0, len(pts), max(1, len(pts) // 50))}
    targets |= {pts[i] + 1 for i in range(0, len(pts), max(1, len(pts) // 50))}
    return [testkit.forge_crc32(b'edge-%08x-' % t, t & 0xffffffff) for t in sorted(targets)]


def configurations(tmp):
    """(upstream name, [(server address, weight)] in upstream order)."""
    a, b, _ = nginx_model.collision_pair(b'127.77.5')
    unix = lambda n: ('unix:' + os.path.join(tmp, n)).encode()
    configs = [
        ('equal', [(b'127.77.1.%d:8080' % i, 1) for i in range(1, 5)]),
        ('weights', [(b'127.77.2.%d:9000' % i, w) for i, w in
                     zip(range(1, 6), (1, 2, 3, 1, 5))]),
        ('many', [(b'127.77.3.%d:%d' % (i, 7000 + i), 1 + i % 3) for i in range(1, 14)]),
        ('hostport', [(b'127.77.4.1', 1), (b'127.77.4.2:80', 1), (b'127.77.4.3:0080', 1),
                      (b'127.77.4.4:81', 2), (unix('backend'), 1),
                      (unix('cache:11211'), 1), (b'localhost:%d' % free_port(), 1),
                      (b'[::1]:%d' % free_port(), 1),
                      (b'UNIX:' + os.path.join(tmp, 'upper').encode(), 1)]),
        ('collide-ab', [(a, 1), (b, 1)]),
        ('collide-ba', [(b, 1), (a, 1)]),
    ]
    return configs


def addresses(server):
    """The $upstream_addr values nginx may report for a server line."""
    if server[:5].lower() == b'unix:':
        return [server.decode()]
    host, port = nginx_model.split_server(server)
    port = int(port) if port else 80
    out = []
    for fam, _, _, _, sa in socket.getaddrinfo(host.decode().strip('[]'), port,
                                               type=socket.SOCK_STREAM):
        out.append('[%s]:%d' % (sa[0], sa[1]) if fam == socket.AF_INET6 else '%s:%d' % sa[:2])
    return out


def write_conf(tmp, port, configs, exported=()):
    lines = ['daemon off;', 'master_process off;', 'worker_processes 1;',
             'pid %s/nginx.pid;' % tmp, 'error_log %s/error.log crit;' % tmp,
             'events { worker_connections 64; }', 'http {', '  access_log off;']
    for d in ('client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'):
        lines.append('  %s_temp_path %s/%s;' % (d, tmp, d))
    for name, servers in configs:
        lines.append('  upstream %s {' % name)
        lines.append('    hash $http_x_key consistent;')
        for s, w in servers:
            lines.append('    server %s weight=%d max_fails=0;' % (s.decode(), w))
        lines.append('  }')
    for name, text in exported:
        text = text.replace('$request_uri', '$http_x_key')
        lines.append(re.sub(r'(weight=\d+);', r'\1 max_fails=0;', text))
    lines += ['  server {', '    listen 127.0.0.1:%d;' % port,
              '    proxy_next_upstream off;', '    proxy_connect_timeout 2s;',
              '    proxy_read_timeout 2s;',
              '    add_header X-Upstream $upstream_addr always;']
    for name in [c[0] for c in configs] + [e[0] for e in exported]:
        lines.append('    location = /%s { proxy_pass http://%s; }' % (name, name))
    lines += ['  }', '}']
    path = os.path.join(tmp, 'nginx.conf')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def upstream(self, path, key):
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
            try:
                self.conn.putrequest('GET', path, skip_accept_encoding=True)
                self.conn.putheader('X-Key', key)
                self.conn.endheaders()
                r = self.conn.getresponse()
                r.read()
                if r.will_close:
                    self.conn.close()
                    self.conn = None
                return r.getheader('X-Upstream')
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
        raise SystemExit('compat nginx: no answer for key %r' % key)


def chash_places(db, table, servers, keys):
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(algorithm=nginx)' % table)
    db.executemany('INSERT INTO "%s"(node, weight) VALUES (?, ?)' % table,
                   [(s.decode(), w) for s, w in servers])
    return [db.execute('SELECT ch_locate(?, ?)', (k, table)).fetchone()[0].encode()
            for k in keys]


# Wrong variants of the rule: each must disagree with nginx somewhere.
def split_never(server):
    """The whole address hashed as host, never split at the port."""
    if server[:5].lower() == b'unix:':
        return server[5:], b''
    return server, b''


def split_default_port(server):
    """A host-only address hashed as if written host:80."""
    host, port = nginx_model.split_server(server)
    if not port and server[:5].lower() != b'unix:':
        port = b'80'
    return host, port


def variant_no_split(servers):
    return nginx_model.Ring(servers, split_never)


def variant_default_port(servers):
    return nginx_model.Ring(servers, split_default_port)


def variant_last_wins(servers):
    """Of two equal points, the later server's stays."""
    return nginx_model.Ring(list(reversed(servers)))


def nginx_test(tmp, conf):
    test = subprocess.run(['nginx', '-t', '-q', '-p', tmp, '-e', tmp + '/error.log',
                           '-c', conf], capture_output=True, text=True, timeout=30)
    if test.returncode != 0:
        raise SystemExit('compat nginx: nginx rejects the config:\n' + test.stderr)


def export_upstreams(db, tmp, conf, configs):
    """The specs ch_config reads from nginx.conf, and their ch_export texts
    as upstreams x_NAME; the texts as written must pass nginx -t."""
    text = open(conf).read()
    specs, exported = {}, []
    for name, _ in configs:
        specs[name] = db.execute("SELECT ch_config('nginx', ?, ?)", (text, name)).fetchone()[0]
        exported.append(('x_' + name, db.execute("SELECT ch_export(?, 'nginx', ?)",
                                                 (specs[name], 'x_' + name)).fetchone()[0]))
    alone = os.path.join(tmp, 'exported.conf')
    with open(alone, 'w') as f:
        f.write('pid %s/nginx.pid;\nevents { }\nhttp {\n%s}\n'
                % (tmp, ''.join(t for _, t in exported)))
    nginx_test(tmp, alone)
    print('compat nginx: nginx -t accepts the %d exported upstreams as written' % len(exported))
    return specs, exported


def main(so):
    tmp = tempfile.mkdtemp(prefix='chash-nginx-')
    proc = None
    try:
        port = free_port()
        configs = configurations(tmp)
        conf = write_conf(tmp, port, configs)
        db = None
        specs = {}
        if so != '-':
            db = chash_db(so)
            specs, exported = export_upstreams(db, tmp, conf, configs)
            conf = write_conf(tmp, port, configs, exported)
        nginx_test(tmp, conf)
        proc = subprocess.Popen(['nginx', '-p', tmp, '-e', tmp + '/error.log', '-c', conf],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > DEADLINE or proc.poll() is not None:
                    raise SystemExit('compat nginx: nginx never started listening')
                time.sleep(0.05)
        version = subprocess.run(['nginx', '-v'], capture_output=True, text=True).stderr.strip()
        print('compat nginx: %s' % version)

        client = Client(port)
        rnd = random.Random(12)
        total = agree = 0
        file_total = file_agree = 0
        ok_all = True
        for n, (name, servers) in enumerate(configs):
            model = nginx_model.Ring(servers)
            keys = make_keys(n, 2000) + edge_keys(model.entries)
            if name.startswith('collide'):
                a, b, point = nginx_model.collision_pair(b'127.77.5')
                keys += arc_keys(model.entries, point, 200, rnd)
            where = {}
            for s, _ in servers:
                for addr in addresses(s):
                    where[addr] = s
            got = [where.get(client.upstream('/' + name, k)) for k in keys]
            expect_model = [model.locate(k) for k in keys]
            bad_model = sum(1 for g, e in zip(got, expect_model) if g != e)
            line = 'compat nginx %-10s %2d servers: model %d/%d' % (
                name, len(servers), len(keys) - bad_model, len(keys))
            if db is not None:
                expect = chash_places(db, 'u_' + name.replace('-', '_'), servers, keys)
                ok = agreement(keys, got, expect, 'nginx')
                line += ', chash %d/%d keys agree' % (ok, len(keys))
                total += len(keys)
                agree += ok
                ok_all &= ok == len(keys)
                spec = specs[name]
                mine = [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0].encode()
                        for k in keys]
                f_ok = agreement(keys, got, mine, 'nginx')
                xgot = [where.get(client.upstream('/x_' + name, k)) for k in keys]
                x_ok = agreement(keys, xgot, mine, 'nginx (exported upstream)')
                line += ', ch_config %d/%d, exported upstream %d/%d' % (
                    f_ok, len(keys), x_ok, len(keys))
                file_total += 2 * len(keys)
                file_agree += f_ok + x_ok
                ok_all &= f_ok == len(keys) and x_ok == len(keys)
            if bad_model:
                ok_all = False
            # Controls: wrong variants of the rule must disagree.
            for vname, variant, applies in (
                    ('no host/port split', variant_no_split, name in ('equal', 'weights', 'many', 'hostport')),
                    ('host-only as :80', variant_default_port, name == 'hostport'),
                    ('later server wins a tie', variant_last_wins, name.startswith('collide'))):
                if not applies:
                    continue
                wrong = variant(servers)
                diff = sum(1 for k, g in zip(keys, got) if wrong.locate(k) != g)
                line += '; variant "%s" disagrees on %d' % (vname, diff)
                if diff == 0:
                    ok_all = False
            print(line)
        # The empty key: nginx does not hash it, it balances round-robin.
        empty = [client.upstream('/equal', b'') for _ in range(8)]
        print('compat nginx: the empty key went to %d different servers in 8 requests'
              % len(set(empty)))
        if db is not None:
            print('compat nginx: %d/%d keys agree (%.2f%%)' % (agree, total, 100.0 * agree / total))
            print('compat nginx ch_config and ch_export: %d/%d keys agree (%.2f%%)'
                  % (file_agree, file_total, 100.0 * file_agree / file_total))
        return ok_all
    finally:
        stop([proc])
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1]) else 1)

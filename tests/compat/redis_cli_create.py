"""tests/compat/redis_cli_create.py: format redis_cli (a `redis-cli --cluster
create` command line) against the real redis-cli and redis-server 7.0, with
Debian's python3:

  redis_cli_create.py CHASH_SO

- Starts 12 redis-server processes with cluster support on 127.0.0.1,
  127.0.0.2 and 127.0.0.3 (Linux answers on all of 127.0.0.0/8, so they are
  three hosts to redis-cli), each with its own directory, port, cluster
  config and pid file in a temp dir; every process started is stopped by
  its pid at the end.
- Read: a command line of 8 nodes over the three hosts in an order that
  redis-cli's round robin changes, with --cluster-replicas 1, quotes and
  line continuations, is run by a real shell (`sh -c TEXT`) and given to
  ch_config('redis_cli', TEXT). The cluster's masters (from CLUSTER NODES,
  in the order of their slots) must be the spec's nodes in order, and
  ch_locate over the spec must give each of 2,500 keys the master that a
  real GET's -MOVED answer names.
- Write: ch_export(ring, 'redis_cli') of a ring of 4 masters over the three
  hosts is run the same way (answering its question "yes"); the cluster it
  makes must have the ring's nodes as masters in join order, and ch_locate
  over the ring must agree with the cluster for 2,500 keys.

Wrong variants show each check able to fail: the masters in argument
order (the read) and the ring's nodes in another order (the write) must
disagree with the cluster. Prints the counts; exits 1 unless every key
agrees.
"""
import subprocess
import sys
import time

from compatkit import chash_db, report_variants, wait_listening
from redis_compat import Procs, Resp, make_keys, pick_ports
from redis_live import moved_owner

DEADLINE = time.monotonic() + 120          # the whole run, in seconds
KEYS = 2500
HOSTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3']


def run_shell(text, what):
    """Runs text as a shell command line, as its user would; answers "yes"
    to redis-cli's question."""
    out = subprocess.run(['sh', '-c', text], input=b'yes\n', capture_output=True,
                         timeout=max(5, DEADLINE - time.monotonic()))
    if out.returncode != 0:
        raise SystemExit('redis_cli compat: %s failed:\n%s%s' % (
            what, out.stdout.decode(errors='replace'), out.stderr.decode(errors='replace')))


def cluster_masters(members):
    """The masters CLUSTER NODES lists, in the order of their first slot
    (master 0 of the create first), once every member says cluster_state:ok
    and lists every other."""
    conns = [Resp(*m.rsplit(':', 1)) for m in members]
    while time.monotonic() < DEADLINE:
        listings = [c.call('CLUSTER', 'NODES').decode().splitlines() for c in conns]
        if all(b'cluster_state:ok' in c.call('CLUSTER', 'INFO') for c in conns) and all(
                len(l) == len(members) and 'handshake' not in ' '.join(l) for l in listings):
            masters = []
            for line in listings[0]:
                w = line.split()
                if 'master' in w[2].split(',') and len(w) > 8:
                    masters.append((int(w[8].split('-')[0]), w[1].split('@')[0]))
            return [name for _, name in sorted(masters)]
        time.sleep(0.1)
    raise SystemExit('redis_cli compat: the cluster never settled')


def locate(db, spec, keys):
    return [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0] for k in keys]


def check(db, label, spec, masters, addr, keys, wrong_spec):
    """The spec's nodes must be the cluster's masters in order and place
    every key as the cluster's -MOVED answers; the wrong spec must not."""
    told = moved_owner(Resp(*addr.rsplit(':', 1)), addr, keys)
    nodes = list(db.execute('SELECT key FROM json_each(?, \'$.nodes\')', (spec,)))
    same = [n for (n,) in nodes] == masters
    print('%s: spec nodes = the cluster\'s masters in order: %s' % (label, 'yes' if same else 'NO'))
    mine = locate(db, spec, keys)
    ok = sum(1 for m, t in zip(mine, told) if m == t)
    print('%s: %d/%d keys agree with the -MOVED answers of %s' % (label, ok, len(keys), addr))
    wrong = sum(1 for m, t in zip(locate(db, wrong_spec[1], keys), told) if m != t)
    failing = report_variants(label + ':', 'the cluster', {wrong_spec[0]: wrong})
    return same and ok == len(keys) and failing == 0


def json_ring(nodes):
    return '{"algorithm":"redis_cluster","nodes":{%s}}' % ','.join('"%s":1' % n for n in nodes)


def main(so):
    procs = Procs()
    try:
        taken = set()
        ports = {h: pick_ports(h, 4, taken) for h in HOSTS}
        for h in HOSTS:
            for p in ports[h]:
                # The bus connects from 127.0.0.1 whatever the bind: each
                # node announces its own address.
                procs.redis(h, p, cluster=True, extra=['--cluster-announce-ip', h])
        for h in HOSTS:
            for p in ports[h]:
                wait_listening(h, p, DEADLINE, 'redis_cli compat')
        a, b, c = ([('%s:%d' % (h, p)) for p in ports[h]] for h in HOSTS)
        db = chash_db(so)
        keys = make_keys(11, KEYS)
        good = True

        # Read: 8 nodes, argument order b1 a1 a2 a3 c1 b2 a4 c2; redis-cli's
        # round robin gives b1 a1 c1 b2 a2 c2 a3 a4, masters the first 4.
        order = [b[0], a[0], a[1], a[2], c[0], b[1], a[3], c[1]]
        text = ("redis-cli --cluster create '%s' %s \\\n  \"%s\" %s \\\n  %s %s %s %s \\\n"
                "  --cluster-replicas 1 --cluster-yes\n" % tuple(order))
        spec = db.execute("SELECT ch_config('redis_cli', ?)", (text,)).fetchone()[0]
        run_shell(text, 'the command line')
        masters = cluster_masters(order)
        as_given = json_ring(order[:4])
        print('read: %d nodes, %d masters: %s' % (len(order), len(masters), ' '.join(masters)))
        good &= check(db, 'read', spec, masters, c[1], keys,
                      ('masters in argument order', as_given))

        # Write: a ring of 4 masters on two hosts, joined in an order
        # redis-cli's round robin keeps (c3 b3 c4 b4).
        ring = [c[2], b[2], c[3], b[3]]
        db.execute('CREATE VIRTUAL TABLE w USING chash(algorithm=redis_cluster)')
        for n in ring:
            db.execute('INSERT INTO w(node) VALUES (?)', (n,))
        db.commit()
        exported = db.execute("SELECT ch_export('w', 'redis_cli')").fetchone()[0]
        print('write: %s' % exported.strip())
        back = db.execute("SELECT count(*) FROM ch_diff('w', ch_config('redis_cli', ?))",
                          (exported,)).fetchone()[0]
        print('write: ch_config of the export = the ring: %s' % ('yes' if back == 0 else 'NO'))
        good &= back == 0
        run_shell(exported, 'the exported command line')
        masters = cluster_masters(ring)
        good &= check(db, 'write', json_ring(ring), masters, b[3], keys,
                      ('the ring\'s nodes sorted', json_ring(sorted(ring))))
        db.close()
        print('redis_cli compat: %s' % ('every key agrees' if good else 'DISAGREEMENT'))
        return good
    finally:
        procs.stop()


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1]) else 1)

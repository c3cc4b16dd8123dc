"""tests/compat/redis_live.py: a live Redis Cluster's slot map, read from
`CLUSTER NODES`, against real redis-server 7.0 clusters changed as
operators change them, with Debian's python3:

  redis_live.py CHASH_SO

- Starts 7 redis-server processes with cluster support on 127.0.0.1, each
  with its own directory, port, cluster config and pid file in a temp dir;
  every process started is stopped by its pid at the end.
- Makes a cluster of 3 masters with a replica each (`redis-cli --cluster
  create ... --cluster-replicas 1`), then changes it: a `redis-cli
  --cluster reshard` of 1,000 slots from one master to another; a slot
  half-way through a migration (CLUSTER SETSLOT MIGRATING / IMPORTING);
  `add-node` of an empty master; `rebalance --cluster-use-empty-masters`;
  a failover that makes a replica a master (CLUSTER FAILOVER on it).
- After each change, waits until every node lists the same map, then reads
  `CLUSTER NODES` from one node into the independent model
  (tests/gen/redis_nodes_model.py), which must equal that node's own
  `CLUSTER SLOTS`, and finds where the cluster says each of 2,500 keys
  lives: its CLUSTER KEYSLOT and the map, and the -MOVED answer of a real
  GET sent to a node that does not own the key (every key, to another node
  each state).

chash: each state's listing is read by ch_config('redis_nodes', ...) and
loaded into one ring table as a new version (INSERT INTO live(live));
ch_locate must give every key the cluster's answer, and ch_moved across the
reshard must be exactly the keys whose master changed.

Wrong variants show each check able to fail: the layout a fresh `redis-cli
--cluster create` gives (the map before, and chash's redis_cluster ring
without slots) must disagree once the cluster was resharded, as must the
create's masters in another order, and the map with the migrating slot
given to its importing node.
Prints the counts; exits 1 unless every key agrees.
"""
import json
import os
import subprocess
import sys
import time

from compatkit import chash_db, wait_listening
from redis_compat import Procs, Resp, make_keys, pick_ports
import redis_model
import redis_nodes_model as model

DEADLINE = time.monotonic() + 240          # the whole run, in seconds
KEYS = 2500
RESHARD = 1000


def cli(*args):
    out = subprocess.run(['redis-cli', '--cluster'] + list(args), capture_output=True,
                         timeout=max(5, DEADLINE - time.monotonic()))
    if out.returncode != 0:
        raise SystemExit('redis live: redis-cli --cluster %s failed:\n%s'
                         % (' '.join(args), out.stdout.decode(errors='replace')))
    return out.stdout.decode(errors='replace')


class Cluster:
    def __init__(self, addrs):
        self.addrs = addrs
        self.conn = {a: Resp(a.rsplit(':', 1)[0], int(a.rsplit(':', 1)[1])) for a in addrs}
        self.members = []                   # the nodes that joined so far
        self.ids = {}

    def nodes_text(self, addr):
        return self.conn[addr].call('CLUSTER', 'NODES').decode()

    def myid(self, addr):
        if addr not in self.ids:
            self.ids[addr] = self.conn[addr].call('CLUSTER', 'MYID').decode()
        return self.ids[addr]

    def settle(self, what):
        """Until every member lists the same map and says cluster_state:ok."""
        while time.monotonic() < DEADLINE:
            maps = set()
            for a in self.members:
                info = self.conn[a].call('CLUSTER', 'INFO')
                if b'cluster_state:ok' not in info:
                    break
                masters = model.parse(self.nodes_text(a))
                if any(('noaddr' in line or 'handshake' in line)
                       for line in self.nodes_text(a).splitlines()):
                    break
                maps.add(tuple(sorted((n, tuple(r)) for n, r in masters)))
            else:
                if len(maps) == 1:
                    return
            time.sleep(0.1)
        raise SystemExit('redis live: the cluster never settled after %s' % what)


def slots_map(reply):
    """CLUSTER SLOTS' reply as slot -> "ip:port" of the master."""
    owner = [None] * model.SLOTS
    for first, last, master, *replicas in reply:
        for s in range(first, last + 1):
            owner[s] = '%s:%d' % (master[0].decode(), master[1])
    return owner


def moved_owner(conn, addr, keys):
    """Where the node at addr says each key lives: itself for an answer,
    the address of -MOVED, or ('ASK', address) for -ASK."""
    out = []
    for k, r in zip(keys, conn.pipeline([[b'GET', k] for k in keys])):
        if r is None:
            out.append(addr)
        elif isinstance(r, tuple) and r[1].startswith(b'MOVED '):
            out.append(r[1].split()[2].decode())
        elif isinstance(r, tuple) and r[1].startswith(b'ASK '):
            out.append(('ASK', r[1].split()[2].decode()))
        else:
            raise SystemExit('redis live: GET %r: %r' % (k, r))
    return out


def report(label, ok, total, failing=None):
    tail = '' if failing is None else '; wrong variant (%s): %d disagree' % failing
    print('%-52s %d/%d agree%s' % (label, ok, total, tail))
    return ok == total and (failing is None or failing[1] > 0)


class Run:
    def __init__(self, cluster, keys, slots, db):
        self.c, self.keys, self.slots, self.db = cluster, keys, slots, db
        self.versions = {}
        db.execute('CREATE VIRTUAL TABLE live USING chash(algorithm=redis_cluster)')
        self.states = {}
        self.good = True
        self.asked = 0

    def check(self, state, ask_from=None, wrong=None):
        """Read the map at this state and check every key's answer. ask_from:
        the address whose GETs are sent (default: the next member in turn).
        wrong: (label, slot -> address) of a variant that must disagree."""
        c = self.c
        reader = c.members[len(self.states) % len(c.members)]
        text = c.nodes_text(reader)
        masters = model.parse(text)
        owner = model.owner_map(masters)
        self.states[state] = (text, masters)
        same = slots_map(c.conn[reader].call('CLUSTER', 'SLOTS')) == owner
        self.good &= report('%s: CLUSTER NODES map = CLUSTER SLOTS' % state, int(same), 1)
        want = [owner[s] for s in self.slots]
        if ask_from is None:
            ask_from = c.members[self.asked % len(c.members)]
            self.asked += 1
        told = moved_owner(c.conn[ask_from], ask_from, self.keys)
        ok = sum(1 for w, t in zip(want, told) if w == t)
        failing = None
        if wrong is not None:
            failing = (wrong[0], sum(1 for s, t in zip(self.slots, told) if wrong[1][s] != t))
        self.good &= report('%s: %d keys, -MOVED of %s' % (state, len(self.keys), ask_from),
                            ok, len(self.keys), failing)
        # chash: the listing read by ch_config, loaded into the ring table
        # as a new version; ch_locate must give the cluster's answer.
        spec = self.db.execute("SELECT ch_config('redis_nodes', ?)", (text,)).fetchone()[0]
        self.db.execute('INSERT INTO live(live) VALUES (?)', (spec,))
        self.db.commit()                    # one version per state
        self.versions[state] = self.db.execute("SELECT ch_epoch('live')").fetchone()[0]
        mine = [self.db.execute("SELECT ch_locate(?, 'live')", (k,)).fetchone()[0]
                for k in self.keys]
        self.good &= report('%s: ch_locate over ch_config(CLUSTER NODES)' % state,
                            sum(1 for m, t in zip(mine, told) if m == t), len(self.keys))
        return masters, told


def fresh_layout(masters_in_order):
    """slot -> master of a fresh `redis-cli --cluster create` of these."""
    owner = [None] * model.SLOTS
    for name, (a, b) in zip(masters_in_order, redis_model.create_ranges(len(masters_in_order))):
        for s in range(a, b + 1):
            owner[s] = name
    return owner


def main(so):
    procs = Procs()
    try:
        addrs = ['127.0.0.1:%d' % p for p in pick_ports('127.0.0.1', 7, set())]
        for a in addrs:
            procs.redis('127.0.0.1', int(a.rsplit(':', 1)[1]), cluster=True)
        for a in addrs:
            wait_listening('127.0.0.1', int(a.rsplit(':', 1)[1]), DEADLINE, 'redis live')
        db = chash_db(so)
        c = Cluster(addrs)
        cli('create', *addrs[:6], '--cluster-replicas', '1', '--cluster-yes')
        c.members = addrs[:6]
        c.settle('create')
        keys = make_keys(7, KEYS)
        first = c.conn[addrs[0]]
        slots = first.pipeline([[b'CLUSTER', b'KEYSLOT', k] for k in keys])
        model_slots = [redis_model.keyslot(k) for k in keys]
        run = Run(c, keys, slots, db)
        run.good &= report('CLUSTER KEYSLOT = the model\'s slot', sum(
            1 for a, b in zip(slots, model_slots) if a == b), len(keys))

        # 1. The cluster as created: 3 masters, one replica each.
        created, _ = run.check('create')
        names = [n for n, _ in created]
        run.good &= report('create: the masters are the first 3 arguments',
                           int(sorted(names) == sorted(addrs[:3])), 1)
        fresh = fresh_layout(addrs[:3])
        run.good &= report('create: the map = redis-cli\'s fresh layout',
                           int(model.owner_map(created) == fresh), 1)

        # 2. A reshard of 1,000 slots from the first master to the third.
        src, dst = addrs[0], addrs[2]
        cli('reshard', addrs[1], '--cluster-from', c.myid(src), '--cluster-to', c.myid(dst),
            '--cluster-slots', str(RESHARD), '--cluster-yes')
        c.settle('reshard')
        resharded, _ = run.check('reshard', wrong=('the fresh layout', fresh))
        gone = model.moved(created, resharded)
        owner_before, owner_after = model.owner_map(created), model.owner_map(resharded)
        run.good &= report('reshard: slots moved, all from %s to %s' % (src, dst), int(
            len(gone) == RESHARD and all(owner_before[s] == src and owner_after[s] == dst
                                         for s in gone)), 1)
        # ch_moved across the reshard (two versions of the ring table) is
        # the set of keys whose master changed; the fresh layout after the
        # reshard, and the create's masters in another order, disagree.
        before, after = ('live@%d' % run.versions[v] for v in ('create', 'reshard'))
        moved = {k for k, s in zip(keys, slots) if owner_before[s] != owner_after[s]}
        mine = {k for k in keys if db.execute('SELECT ch_moved(?, ?, ?)',
                                              (k, before, after)).fetchone()[0]}
        run.good &= report('reshard: ch_moved = the keys whose master changed (%d)'
                           % len(moved), len(mine & moved), len(mine | moved))
        told = dict(zip(keys, moved_owner(c.conn[addrs[3]], addrs[3], keys)))
        for label, order in (('the fresh layout of create', addrs[:3]),
                             ('create\'s masters in another order', addrs[2::-1])):
            spec = json.dumps({'algorithm': 'redis_cluster', 'nodes': order})
            wrong = sum(1 for k in keys if db.execute('SELECT ch_locate(?, ?)', (k, spec))
                        .fetchone()[0] != told[k])
            run.good &= report('reshard: wrong variant: %s' % label, 0, 0,
                               ('ch_locate', wrong))

        # 3. A slot half-way through a migration: still its owner's in the
        # map; the owner sends -ASK for keys it does not hold.
        served = [s for s in slots if owner_after[s] == addrs[1]]
        slot = max(sorted(set(served)), key=served.count)
        mover = [k for k, s in zip(keys, slots) if s == slot]
        c.conn[addrs[2]].call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', c.myid(addrs[1]))
        c.conn[addrs[1]].call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', c.myid(addrs[2]))
        text = c.nodes_text(addrs[1]) + c.nodes_text(addrs[2])
        marks = text.count('[%d->-' % slot) + text.count('[%d-<-' % slot)
        run.good &= report('migrating: CLUSTER NODES shows [slot->-id] and [slot-<-id]',
                           int(marks == 2), 1)
        wrong = list(owner_after)
        wrong[slot] = addrs[2]
        run.check('migrating', ask_from=addrs[0], wrong=('slot to the importer', wrong))
        asks = moved_owner(c.conn[addrs[1]], addrs[1], mover)
        run.good &= report('migrating: the owner answers -ASK to the importer',
                           sum(1 for a in asks if a == ('ASK', addrs[2])), len(mover))
        for a in (addrs[1], addrs[2]):
            c.conn[a].call('CLUSTER', 'SETSLOT', slot, 'STABLE')

        # 4. add-node: an empty master joins; then rebalance onto it.
        cli('add-node', addrs[6], addrs[0])
        c.members = addrs
        c.settle('add-node')
        added, _ = run.check('add-node')
        run.good &= report('add-node: the new master serves no slot', int(
            dict(added).get(addrs[6]) == []), 1)
        cli('rebalance', addrs[0], '--cluster-use-empty-masters', '--cluster-yes')
        c.settle('rebalance')
        balanced, _ = run.check('rebalance', wrong=('the map before', model.owner_map(added)))
        got = sorted(sum(b - a + 1 for a, b in r) for _, r in balanced)
        run.good &= report('rebalance: 4 masters of 4096 slots each',
                           int(got == [4096] * 4), 1)

        # 5. A failover: the replica of the first master takes its slots.
        replica = next(a for a in addrs[:6] if c.conn[a].call('ROLE')[0] == b'slave'
                       and c.conn[a].call('ROLE')[2] == int(src.rsplit(':', 1)[1]))
        reply = c.conn[replica].call('CLUSTER', 'FAILOVER')
        if reply != (b'+', b'OK'):
            raise SystemExit('redis live: CLUSTER FAILOVER: %r' % (reply,))
        while time.monotonic() < DEADLINE and c.conn[replica].call('ROLE')[0] != b'master':
            time.sleep(0.1)
        c.settle('failover')
        failed_over, _ = run.check('failover', wrong=('the map before', model.owner_map(balanced)))
        before = dict(balanced)[src]
        run.good &= report('failover: the replica serves its master\'s slots', int(
            dict(failed_over).get(replica) == before and src not in dict(failed_over)), 1)
        db.close()
        print('redis live: %s' % ('every key agrees' if run.good else 'DISAGREEMENT'))
        return run.good
    finally:
        procs.stop()


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1]) else 1)

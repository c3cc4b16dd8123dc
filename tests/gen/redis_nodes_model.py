"""tests/gen/redis_nodes_model.py: an independent model, in Python, of a live
Redis Cluster's slot map as `CLUSTER NODES` lists it (Redis 7.0's
clusterGenNodeDescription; the format of the cluster tutorial's "CLUSTER
NODES" page), written from the rules in docs/config.md's `redis_nodes`
section (no chash code involved). Imported by tests/gen/redis_nodes_gen.py
(which writes redis_nodes.test from it) and by tests/compat/redis_live.py
(which checks it, and chash, against real clusters).

A line is `id addr flags master ping-sent pong-recv config-epoch link-state
slot...`: addr is `ip:port@cport[,hostname]`, flags a comma list (myself,
master, slave, fail?, fail, handshake, noaddr, nofailover, noflags), master
`-` or the id of the node's master, each slot a number or `first-last`, and
`[slot->-id]` (migrating) or `[slot-<-id]` (importing) entries.

  parse(text)          -> [(addr, [(first, last), ...])]: the masters, in
                          the text's order, each with its slot ranges as
                          listed (migrating and importing entries left out:
                          the slot stays its owner's until the migration
                          ends, and the owner is the one whose ranges hold
                          it); raises NodesError naming the line otherwise
  canonical(ranges)    the same slots as CLUSTER NODES writes them: in
                          order, adjacent runs joined
  slots_text(ranges)   ranges as text: "0-5460 10923", a single slot alone,
                          '' for none
  owner_map(masters)   slot -> address of its master, or None (unserved)
  moved(before, after) the slots whose master differs between two maps

Refused, naming the line: a line that is not a node, a node id or address
listed twice, a slot or range outside 0..16383 or backwards, a slot two
masters both list (naming both) or one lists twice, an unknown flag, a
replica that lists slots, a node neither master nor replica, a master whose
address is unknown (noaddr, or no ip) that serves slots, a text without a
master. Left out: replicas
(`slave`), nodes still in `handshake`, masters without an address serving
no slot, a nodes.conf file's `vars` line and blank lines. A failed master
(`fail`, `fail?`) that still lists slots is in the map: the cluster answers
-MOVED to it until a replica takes over.
"""
import re

SLOTS = 16384
FIELDS = re.compile(r'^([0-9a-f]{40}) (\S+) (\S+) (-|[0-9a-f]{40}) (\d+) (\d+) (\d+) '
                    r'(connected|disconnected)((?: \S+)*)$')
ADDRESS = re.compile(r'^(.*):(\d+)@(\d+)(?:,.*)?$')
SLOT = re.compile(r'^(\d+)(?:-(\d+))?$')
MIGRATION = re.compile(r'^\[\d+-(?:<|>)-[0-9a-f]{40}\]$')
FLAGS = {'myself', 'master', 'slave', 'fail?', 'fail', 'handshake', 'noaddr', 'nofailover',
         'noflags'}


class NodesError(ValueError):
    pass


def parse(text):
    masters, ids, addrs, owner = [], {}, {}, {}
    for number, line in enumerate(text.split('\n'), 1):
        line = line.rstrip('\r')
        if line.strip() == '' or line.startswith('vars '):
            continue
        m = FIELDS.match(line)
        if not m:
            raise NodesError('line %d: not a CLUSTER NODES line' % number)
        node_id, addr, flags, master = m.group(1), m.group(2), m.group(3).split(','), m.group(4)
        if node_id in ids:
            raise NodesError('line %d: node %s listed twice' % (number, node_id))
        ids[node_id] = number
        a = ADDRESS.match(addr)
        if not a:
            raise NodesError('line %d: bad address' % number)
        if not set(flags) <= FLAGS:
            raise NodesError('line %d: unknown flag' % number)
        ip, port = a.group(1), int(a.group(2))
        ranges = []
        for word in m.group(9).split():
            if MIGRATION.match(word):
                continue
            s = SLOT.match(word)
            if not s:
                raise NodesError('line %d: bad slot' % number)
            first = int(s.group(1))
            last = int(s.group(2)) if s.group(2) is not None else first
            if first > last or last >= SLOTS:
                raise NodesError('line %d: slot out of range' % number)
            ranges.append((first, last))
        if 'handshake' in flags:
            continue
        if 'slave' in flags:
            if ranges:
                raise NodesError('line %d: a replica with slots' % number)
            continue
        if 'master' not in flags:
            raise NodesError('line %d: neither master nor replica' % number)
        if 'noaddr' in flags or ip == '' or port == 0:
            if ranges:
                raise NodesError('line %d: a master without address serves slots' % number)
            continue
        name = '%s:%d' % (ip, port)
        if name in addrs:
            raise NodesError('line %d: address %s listed twice' % (number, name))
        addrs[name] = number
        for first, last in ranges:
            for slot in range(first, last + 1):
                if owner.get(slot) == name:
                    raise NodesError('line %d: slot %d listed twice' % (number, slot))
                if slot in owner:
                    raise NodesError('line %d: slot %d also served by %s'
                                     % (number, slot, owner[slot]))
                owner[slot] = name
        masters.append((name, ranges))
    if not masters:
        raise NodesError('no master')
    return masters


def canonical(ranges):
    out = []
    for a, b in sorted(ranges):
        if out and out[-1][1] + 1 == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def slots_text(ranges):
    return ' '.join('%d' % a if a == b else '%d-%d' % (a, b) for a, b in ranges)


def owner_map(masters):
    owner = [None] * SLOTS
    for name, ranges in masters:
        for first, last in ranges:
            for slot in range(first, last + 1):
                owner[slot] = name
    return owner


def moved(before, after):
    a, b = owner_map(before), owner_map(after)
    return {s for s in range(SLOTS) if a[s] != b[s]}


def self_check():
    ida, idb, idc = 'a' * 40, 'b' * 40, 'c' * 40
    text = ('%s 10.0.0.1:6379@16379 myself,master - 0 0 1 connected 0-5460 [5460->-%s]\n'
            '%s 10.0.0.2:6379@16379,h2 master - 0 1 2 connected 5461-10922 [5460-<-%s]\n'
            '%s 10.0.0.3:6379@16379 slave %s 0 1 2 connected\n'
            'vars currentEpoch 2 lastVoteEpoch 0\n' % (ida, idb, idb, ida, idc, ida))
    got = parse(text)
    assert got == [('10.0.0.1:6379', [(0, 5460)]), ('10.0.0.2:6379', [(5461, 10922)])], got
    assert slots_text([(0, 5460), (10923, 10923)]) == '0-5460 10923'
    assert canonical([(10923, 10923), (5461, 10922), (0, 9)]) == [(0, 9), (5461, 10923)]
    owner = owner_map(got)
    assert owner[5460] == '10.0.0.1:6379' and owner[10923] is None
    for bad in ('%s 10.0.0.1:6379@16379 master - 0 0 1 connected 0-16384\n' % ida,
                '%s 10.0.0.1:6379@16379 master - 0 0 1 connected 5-4\n' % ida,
                '%s 10.0.0.1:6379@16379 master - 0 0 1 connected 0-9\n'
                '%s 10.0.0.2:6379@16379 master - 0 0 1 connected 9\n' % (ida, idb),
                '%s 10.0.0.1:6379@16379 master - 0 0 1 connected 0-9 5\n' % ida,
                '%s 10.0.0.1:6379@16379 master,odd - 0 0 1 connected\n' % ida,
                '%s 10.0.0.1:6379@16379 slave %s 0 0 1 connected\n' % (ida, idb),
                'not a node\n'):
        try:
            parse(bad)
        except NodesError:
            continue
        raise AssertionError('accepted: %r' % bad)
    assert moved(got, [('10.0.0.1:6379', [(0, 5459)]), ('10.0.0.2:6379', [(5460, 10922)])]) \
        == {5460}


if __name__ == '__main__':
    self_check()
    print('redis_nodes_model.py: self-check passed')

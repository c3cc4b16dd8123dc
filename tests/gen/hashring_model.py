"""tests/gen/hashring_model.py: an independent model, in Python, of how the
npm package `hashring` (3.2.0, as the npm `memcached` client 2.2.2 uses
it) places a key. Written from the rule in docs/algorithms.md; no chash
code involved. Used by tests/gen/hashring_gen.py (expected rows) and
tests/compat/hashring.py (the real packages under Node).

Servers are (name, weight) in the order given to `new HashRing(...)`;
names and keys are str (hashed as UTF-8), weights are numbers.
"""
import bisect
import hashlib
import math

from testkit import first_shared_point, replicas_at

VNODE_COUNT = 40        # hashring's 'vnode count'
REPLICAS = 4            # points per MD5 digest ('ketama' compatibility)


def groups(servers, vnode_count=VNODE_COUNT, rounding=math.floor):
    """How many digests each server gets: floor(weight / total * vnode_count
    * n) in double precision, evaluated left to right as JavaScript does,
    total summed in list order."""
    total = 0.0
    for _, w in servers:
        total += w
    n = len(servers)
    return [rounding(w / total * vnode_count * n) for _, w in servers]


def md5_words(text):
    d = hashlib.md5(text.encode('utf-8')).digest()
    return [int.from_bytes(d[4 * j:4 * j + 4], 'little') for j in range(4)]


def ring(servers, vnode_count=VNODE_COUNT, rounding=math.floor):
    """Sorted (point, server): digest i of server S is MD5("S-i"), its four
    little-endian words are points. Equal points keep list order (a stable
    sort), so the earlier server is found first."""
    entries = []
    for (name, _), count in zip(servers, groups(servers, vnode_count, rounding)):
        for i in range(count):
            entries += [(p, name) for p in md5_words('%s-%d' % (name, i))[:REPLICAS]]
    entries.sort(key=lambda e: e[0])
    return entries


def key_position(key):
    return md5_words(key)[0]


class Ring:
    def __init__(self, servers, vnode_count=VNODE_COUNT, rounding=math.floor):
        """rounding: how a digest count is made whole (tests pass wrong ones)."""
        self.entries = ring(servers, vnode_count, rounding)
        self.keys = [e[0] for e in self.entries]

    def locate(self, key):
        """The server of the first point >= the key's position, wrapping
        to the first point; None for a ring without points."""
        if not self.entries:
            return None
        i = bisect.bisect_left(self.keys, key_position(key))
        return self.entries[i % len(self.entries)][1]


def memcached_name(server):
    """The name the npm memcached client hashes for a server string: its
    part before the first ':' when the part after it reads as the number
    11211 ('ketama' compatibility's default port), else all of it."""
    parts = server.split(':')
    if len(parts) > 1 and js_number(parts[1]) == 11211:
        return parts[0]
    return server


def js_number(text):
    """JavaScript's unary + on a string, for what a port can look like:
    blanks around a decimal number or a 0x/0o/0b integer; None for what
    JavaScript reads as NaN."""
    t = text.strip(' \t\n\r\v\f')
    if t == '':
        return 0
    try:
        if t[:2].lower() in ('0x', '0o', '0b'):
            return int(t, 0)
        return float(t) if all(c in '0123456789.eE+-' for c in t) else None
    except ValueError:
        return None


def replicas(r, key, n):
    """The first n distinct servers clockwise from the key's point."""
    return replicas_at(r, key_position(key), n)


def collision_pair():
    """Two servers 10.2.A.B:11211 that share a point, and the point: found
    by a search over names with the model."""
    names = ('10.2.%d.%d:11211' % (a // 256, a % 256) for a in range(1, 65536))
    return first_shared_point(names, lambda name: [
        p for i in range(VNODE_COUNT) for p in md5_words('%s-%d' % (name, i))])

"""tests/gen/php_memcache_model.py: an independent model, in Python, of how
PHP's memcache extension (pecl memcache with
memcache.hash_strategy=consistent; checked against Debian 12's
php-memcache on PHP 8.2) places a key. Written from the rule in
docs/algorithms.md; no chash code involved. Used by
tests/gen/php_memcache_gen.py (expected rows) and
tests/compat/php_memcache.py (the real extension).

Servers are (node name as bytes, integer weight) in addServer() order:
"host:port" as findServer() names a server, or a host alone on the
default port 11211. Keys are bytes.
"""
import bisect
import random
import re
import zlib

POINTS_PER_WEIGHT = 160
BUCKETS = 1024
STEP = 0xffffffff // BUCKETS
MAX_KEY = 250


def server_name(node):
    """The name findServer() gives the node's server: the node when it
    ends in ':port' (0 to 65535, no leading zero, after a host of one byte
    or more), else the node as a host on port 11211."""
    m = re.match(rb'(?s)\A.+:(0|[1-9][0-9]{0,4})\Z', node)
    if m and int(m.group(1)) <= 65535:
        return node
    return node + b':11211'


def crc32a(data):
    return zlib.crc32(data)


def fnv1a_32(data, sign_extend=True):
    """FNV-1a 32 over bytes read as C's signed char: a byte from 0x80 up
    is XORed in as 0xFFFFFF00|b (sign_extend=False: as unsigned, the
    textbook FNV-1a; a wrong variant)."""
    h = 0x811c9dc5
    for b in data:
        h ^= (0xffffff00 | b) if (b >= 0x80 and sign_extend) else b
        h = (h * 0x01000193) & 0xffffffff
    return h


HASHES = {'crc32a': crc32a, 'fnv1a_32': fnv1a_32}


def sent_key(key, prefix=b'', truncate=True, rewrite=True):
    """The key the extension sends: prefix + key, its first 250 bytes,
    every byte at or below b' ' as b'_'."""
    key = prefix + key
    if truncate:
        key = key[:MAX_KEY]
    if rewrite:
        key = bytes(b if b > 0x20 else 0x5f for b in key)
    return key


class Ring:
    """The extension's consistent state; the keyword arguments other than
    hash and prefix make the wrong variants the checks must tell apart:
    first_wins=False (the later server keeps a shared point), table=False
    (the first point at or after the key's hash, no bucket table),
    sign_extend=False (FNV on unsigned bytes), truncate=False,
    rewrite=False."""
    def __init__(self, servers, hash='crc32a', prefix=b'', first_wins=True,
                 table=True, sign_extend=True, truncate=True, rewrite=True):
        if hash == 'fnv1a_32':
            self.h = lambda d: fnv1a_32(d, sign_extend)
        else:
            self.h = HASHES[hash]
        self.servers = servers
        self.prefix = prefix
        self.table = table
        self.truncate = truncate
        self.rewrite = rewrite
        entries = []
        for i, (name, weight) in enumerate(servers):
            for j in range(POINTS_PER_WEIGHT * weight):
                order = i if first_wins else -i
                label = server_name(name) + b'-' + str(j).encode()
                entries.append((self.h(label), order, j))
        entries.sort()          # equal points: the server added first first
        self.points = [p for p, _, _ in entries]
        self.owners = [abs(o) for _, o, _ in entries]
        self.buckets = [self.successor(STEP * b) for b in range(BUCKETS)]

    def successor(self, h):
        """The server index of the first point at or after h, wrapping to
        the lowest point."""
        i = bisect.bisect_left(self.points, h)
        return self.owners[i % len(self.points)]

    def index_of_position(self, h):
        if len(self.servers) == 1:
            return 0
        return self.buckets[h % BUCKETS] if self.table else self.successor(h)

    def position(self, key):
        return self.h(sent_key(key, self.prefix, self.truncate, self.rewrite))

    def locate(self, key):
        """The name of the key's server."""
        return self.servers[self.index_of_position(self.position(key))][0]


def key_for_bucket(bucket, hash='crc32a', prefix=b'', start=0):
    """A short printable key whose position falls in bucket (hash mod
    1024), searching key names "b<bucket>-<n>" from n = start."""
    h = HASHES[hash]
    n = start
    while True:
        key = b'b%d-%d' % (bucket, n)
        if h(sent_key(key, prefix)) % BUCKETS == bucket:
            return key
        n += 1


def keys_for_every_bucket(hash='crc32a', prefix=b''):
    """A short printable key for each bucket, in bucket order: keys
    "all-<n>" for n = 0, 1, ..., the first to fall in each bucket."""
    h = HASHES[hash]
    found = {}
    n = 0
    while len(found) < BUCKETS:
        key = b'all-%d' % n
        found.setdefault(h(sent_key(key, prefix)) % BUCKETS, key)
        n += 1
    return [found[b] for b in range(BUCKETS)]


def shared_point_pair(hash):
    """Two server names with an equal point p that some bucket's sample
    lands on in a ring of just the two (so which one keeps p shows), and
    that bucket: (earlier name, later name, p, bucket). The names are
    random hex hosts (a fixed seed): names that differ in a few bytes only
    never share a CRC-32 point."""
    rnd = random.Random(19)
    h = HASHES[hash]
    seen = {}
    for _ in range(20000):
        name = b'h%08x:11211' % rnd.getrandbits(32)
        for j in range(POINTS_PER_WEIGHT):
            p = h(name + b'-%d' % j)
            other = seen.get(p)
            if other is not None and other != name:
                r = Ring([(other, 1), (name, 1)], hash)
                before = r.points[r.points.index(p) - 1]
                for b in range(BUCKETS):
                    if before < STEP * b <= p:
                        return other, name, p, b
            seen[p] = name
    raise SystemExit('php_memcache_model: no shared point a bucket lands on')

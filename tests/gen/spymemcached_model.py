"""tests/gen/spymemcached_model.py: an independent model, in Python, of how
Java's spymemcached 2.12 (`KetamaNodeLocator`, checked against Debian's
libspymemcached-java 2.12.3) places a key. Written from the rule in
docs/algorithms.md; no chash code involved. Used by
tests/gen/spymemcached_gen.py (expected rows) and tests/compat/spymemcached.py
(the real spymemcached).

Servers are (the string the node key formatter hashes, integer weight), in
the client's order. Keys and names are bytes of UTF-8 (a Java String holds
what they decode to).
"""
import bisect
import hashlib
import struct
import zlib

REPETITIONS = 160          # points per server, 40 MD5 digests of 4
MASK32 = 0xffffffff

# The hash names chash gives DefaultHashAlgorithm's members.
JAVA_NAMES = {
    'md5': 'KETAMA_HASH', 'java_hashcode': 'NATIVE_HASH', 'crc32': 'CRC_HASH',
    'fnv1_64': 'FNV1_64_HASH', 'fnv1a_64': 'FNV1A_64_HASH',
    'fnv1_32': 'FNV1_32_HASH', 'fnv1a_32': 'FNV1A_32_HASH',
}


def units(b):
    """The UTF-16 code units of the text b encodes (bytes of UTF-8)."""
    u = b.decode('utf-8').encode('utf-16-le')
    return struct.unpack('<%dH' % (len(u) // 2), u)


def fnv(us, offset, prime, xor_first):
    h = offset
    for c in us:
        if xor_first:
            h = ((h ^ c) * prime) & 0xffffffffffffffff
        else:
            h = ((h * prime) & 0xffffffffffffffff) ^ c
    return h & MASK32


def hashcode(us):
    h = 0
    for c in us:
        h = (31 * h + c) & MASK32
    return h


def md5_words(b):
    return struct.unpack('<4I', hashlib.md5(b).digest())


# The hashes of a Java string's code units.
UNIT_HASHES = {
    'java_hashcode': hashcode,
    'fnv1_64': lambda us: fnv(us, 0xcbf29ce484222325, 0x100000001b3, False),
    'fnv1a_64': lambda us: fnv(us, 0xcbf29ce484222325, 0x100000001b3, True),
    'fnv1_32': lambda us: fnv(us, 2166136261, 16777619, False),
    'fnv1a_32': lambda us: fnv(us, 2166136261, 16777619, True),
}


def key_hash(hash_name, utf8_units=False):
    """The hash of a key's bytes: MD5 and CRC-32 of the UTF-8 bytes, the
    others of the UTF-16 code units (utf8_units: of the bytes, a wrong
    variant)."""
    if hash_name == 'md5':
        return lambda b: md5_words(b)[0]
    if hash_name == 'crc32':
        return lambda b: (zlib.crc32(b) >> 16) & 0x7fff
    f = UNIT_HASHES[hash_name]
    return (lambda b: f(list(b))) if utf8_units else (lambda b: f(units(b)))


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def weighted_count(w, total, n):
    """(int)(Math.floor((float)(percent * (float)160 / 4 * (float)n +
    0.0000000001)) * 4), percent = (float)w / (float)total: each step in
    single precision but the addition, which Java does in double."""
    percent = f32(f32(w) / f32(total))
    t = f32(f32(f32(percent * 160.0) / 4.0) * f32(n))
    return int(f32(t + 0.0000000001) // 1) * 4


def server_points(name, hash_name, weighted, count, utf8_units=False):
    """The points of one server, in the order spymemcached puts them."""
    label = lambda i: name + b'-' + str(i).encode()
    if weighted or hash_name == 'md5':
        return [w for i in range(count // 4) for w in md5_words(label(i))]
    h = key_hash(hash_name, utf8_units)
    return [h(label(i)) for i in range(count)]


class Ring:
    """servers: [(name, weight)] in list order. later_wins=False,
    at_or_before=True and utf8_units=True are the wrong variants the compat
    check shows disagreeing: the earlier server keeping a shared point, the
    last point at or below a key (wrapping to the highest), FNV and
    hashCode over UTF-8 bytes."""

    def __init__(self, servers, hash_name='md5', weighted=False,
                 later_wins=True, at_or_before=False, utf8_units=False):
        self.servers = servers
        self.hash_name = hash_name
        self.at_or_before = at_or_before
        self.key_hash = key_hash(hash_name, utf8_units)
        n = len(servers)
        total = sum(w for _, w in servers)
        owner = {}
        self.counts = []
        for i, (name, w) in enumerate(servers):
            count = weighted_count(w, total, n) if weighted else REPETITIONS
            pts = server_points(name, hash_name, weighted, count, utf8_units)
            for p in pts:                  # a TreeMap put: the later one stays
                if later_wins or p not in owner:
                    owner[p] = i
        self.keys = sorted(owner)
        self.entries = [(p, owner[p]) for p in self.keys]

    def position(self, key):
        return self.key_hash(key)

    def locate_index(self, key):
        h = self.position(key)
        if self.at_or_before:
            i = bisect.bisect_right(self.keys, h) - 1
            return self.entries[i][1]
        i = bisect.bisect_left(self.keys, h)
        return self.entries[i % len(self.entries)][1]

    def locate(self, key):
        return self.servers[self.locate_index(key)][0]

    def point_counts(self):
        c = [0] * len(self.servers)
        for _, i in self.entries:
            c[i] += 1
        return c


def md5_collision(names):
    """The first two of names whose 160 MD5 points share one: (earlier,
    later, point)."""
    seen = {}
    for name in names:
        for p in server_points(name, 'md5', False, REPETITIONS):
            other = seen.get(p)
            if other is not None and other != name:
                return other, name, p
            seen[p] = name
    raise SystemExit('spymemcached_model: no two names share a point')

"""tests/gen/haproxy_model.py: an independent Python model of HAProxy's
consistent hashing (`hash-type consistent`), written from HAProxy's rules as
docs/algorithms.md states them (checked against HAProxy 2.6.12), not from
chash's C code. tests/gen/haproxy_gen.py writes sqllogictest records from
it; tests/compat/haproxy_compat.py checks it, and chash, against the real
haproxy.

The rules:
  - Key hashes (32-bit): sdbm, djb2, wt6 and crc32 (the IEEE CRC-32, which
    chash names crc32a). With `avalanche` the key's hash goes through
    full_hash, Bob Jenkins' 32-bit integer mix followed by a multiplication
    by 3221225473 (mod 2^32).
  - Server number s (its id: 1, 2, ... in the order of the server lines)
    with weight w (1..256) has 16*w points, i = 0 .. 16*w-1, at
    full_hash(s*4096 + i).
  - Lookup: take the first point at or after the key (wrapping to the
    lowest) and the point just before it (wrapping to the highest); the
    key goes to the nearer of the two by unsigned 32-bit distance, and to
    the one before it when both are as near.
"""
import bisect
import zlib

M32 = 0xFFFFFFFF
WEIGHT_SCALE = 16          # points per unit of weight (HAProxy's BE_WEIGHT_SCALE)
ID_STRIDE = 4096           # 256 * 16: server s's points start at s*4096
HASHES = ('sdbm', 'djb2', 'wt6', 'crc32a')


def sdbm(data):
    h = 0
    for c in data:
        h = (c + (h << 6) + (h << 16) - h) & M32
    return h


def djb2(data):
    h = 5381
    for c in data:
        h = (h * 33 + c) & M32
    return h


def rotl32(x, n):
    n &= 31
    return ((x << n) | (x >> (32 - n))) & M32 if n else x


def wt6(data):
    h0, h1, step0, step1 = 0xa53c965a, 0x5ca6953a, 6, 18
    for c in data:
        h0 = ~(h0 ^ c) & M32
        h1 = ~(h1 + c) & M32
        h0, h1 = rotl32(h1, step0), rotl32(h0, step1)
        t = ((h0 >> 16) ^ h1) & 0xffff
        step0 = t & 0x1f
        step1 = t >> 11
    return h0 ^ h1


def crc32a(data):
    return zlib.crc32(data) & M32


KEY_HASH = {'sdbm': sdbm, 'djb2': djb2, 'wt6': wt6, 'crc32a': crc32a}


def jenkins_mix(a):
    """Bob Jenkins' 32-bit integer hash: the first part of full_hash."""
    a &= M32
    a = (a + 0x7ed55d16 + (a << 12)) & M32
    a = (a ^ 0xc761c23c ^ (a >> 19)) & M32
    a = (a + 0x165667b1 + (a << 5)) & M32
    a = ((a + 0xd3a2646c) ^ (a << 9)) & M32
    a = (a + 0xfd7046c5 + (a << 3)) & M32
    return (a ^ 0xb55a4f09 ^ (a >> 16)) & M32


def full_hash(a):
    """HAProxy's avalanche: the mix, then times 3221225473 (mod 2^32)."""
    return (jenkins_mix(a) * 3221225473) & M32


def key_position(data, hash_name='sdbm', avalanche=True, mix=full_hash):
    h = KEY_HASH[hash_name](data)
    return mix(h) if avalanche else h


class Ring:
    """servers: [(name, weight)] in join order; the first has id 1."""

    def __init__(self, servers, hash_name='sdbm', avalanche=True, mix=full_hash,
                 first_id=1):
        """mix and first_id other than the defaults make wrong variants."""
        self.hash_name, self.avalanche, self.mix = hash_name, avalanche, mix
        pts = []
        for sid, (name, weight) in enumerate(servers, first_id):
            assert isinstance(weight, int) and 1 <= weight <= 256
            for i in range(WEIGHT_SCALE * weight):
                pts.append((mix(sid * ID_STRIDE + i), name, i))
        pts.sort(key=lambda p: p[0])
        # full_hash is a bijection of 32-bit integers and the inputs differ,
        # so two points never share a position.
        assert all(a[0] != b[0] for a, b in zip(pts, pts[1:]))
        self.points = pts
        self.pos = [p[0] for p in pts]

    def owner_of_position(self, h):
        """HAProxy's rule: the nearer of the point at-or-after and the one
        before; the one before on a tie."""
        k = bisect.bisect_left(self.pos, h)
        nxt = self.points[k % len(self.points)]
        prv = self.points[k - 1]           # k == 0: the last point (wrap)
        dp = (h - prv[0]) & M32
        dn = (nxt[0] - h) & M32
        return prv[1] if dp <= dn else nxt[1]

    def first_clockwise(self, h):
        """A wrong variant, for the checks that must be able to fail."""
        k = bisect.bisect_left(self.pos, h)
        return self.points[k % len(self.points)][1]

    def locate(self, data):
        return self.owner_of_position(
            key_position(data, self.hash_name, self.avalanche, self.mix))

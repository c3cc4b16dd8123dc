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

    def owner_of_position(self, h, ties_to_next=False):
        """HAProxy's rule: the nearer of the point at-or-after and the one
        before; the one before on a tie (ties_to_next: a wrong variant)."""
        k = bisect.bisect_left(self.pos, h)
        nxt = self.points[k % len(self.points)]
        prv = self.points[k - 1]           # k == 0: the last point (wrap)
        dp = (h - prv[0]) & M32
        dn = (nxt[0] - h) & M32
        if ties_to_next:
            return prv[1] if dp < dn else nxt[1]
        return prv[1] if dp <= dn else nxt[1]

    def first_clockwise(self, h):
        """A wrong variant, for the checks that must be able to fail."""
        k = bisect.bisect_left(self.pos, h)
        return self.points[k % len(self.points)][1]

    def locate(self, data):
        return self.owner_of_position(
            key_position(data, self.hash_name, self.avalanche, self.mix))


# ------------------------------------------------- keys crafted from the rule
#
# To test the lookup where it matters (a key exactly on a point, a key
# exactly half-way between two points of different servers, keys around the
# wrap-around) we need keys whose position is a chosen 32-bit value. With
# avalanche the key's hash must be the inverse full_hash of it. A key with a
# chosen sdbm, djb2 or crc32 is found by meeting in the middle: these hashes
# keep a 32-bit state that bytes update linearly (sdbm and djb2: h*M + c
# mod 2^32; crc32: over GF(2)), so the state after a 3-byte suffix is
# "what zeros would give" combined (+ or xor) with "what the suffix alone
# gives". The suffix parts are tabulated once; 4-byte middles after a fixed
# prefix are tried until target minus the zeros part is in the table.
# wt6 keeps 64 bits of state and is not crafted.

CRC_POLY = 0xedb88320


def inverse_full_hash(h):
    a = (h * pow(3221225473, -1, 1 << 32)) & M32
    y = a ^ 0xb55a4f09
    a = y ^ (y >> 16)
    a = ((a - 0xfd7046c5) * pow(9, -1, 1 << 32)) & M32
    x = 0                       # a = (x + c) ^ (x << 9): bit i needs bits <= i
    for i in range(32):
        t = x | (1 << i)
        if (((t + 0xd3a2646c) ^ (t << 9)) >> i) & 1 == (a >> i) & 1:
            x = t
    a = ((x - 0x165667b1) * pow(33, -1, 1 << 32)) & M32
    y = a ^ 0xc761c23c
    a = y ^ (y >> 19)
    return ((a - 0x7ed55d16) * pow(4097, -1, 1 << 32)) & M32


def _crc_step(reg, c):
    reg ^= c
    for _ in range(8):
        reg = (reg >> 1) ^ (CRC_POLY if reg & 1 else 0)
    return reg


# name: (initial state, byte step, combine, uncombine, final state -> hash)
_STATE = {
    'sdbm': (0, lambda h, c: (c + h * 65599) & M32,
             lambda a, b: (a + b) & M32, lambda a, b: (a - b) & M32, lambda h: h),
    'djb2': (5381, lambda h, c: (h * 33 + c) & M32,
             lambda a, b: (a + b) & M32, lambda a, b: (a - b) & M32, lambda h: h),
    'crc32a': (M32, _crc_step, lambda a, b: a ^ b, lambda a, b: a ^ b,
               lambda r: r ^ M32),
}
CRAFTABLE = tuple(_STATE)
# Safe in an HTTP header value and in a URL query value alike.
CRAFT_BYTES = (b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
               b"-._~!$'()*+;=:@/")
_suffixes = {}


def _run(step, state, data):
    for c in data:
        state = step(state, c)
    return state


def craft_key(hash_name, want_hash, prefix=b'k-'):
    """A key (prefix + 4 + 3 bytes of CRAFT_BYTES) whose hash is want_hash."""
    init, step, combine, uncombine, final = _STATE[hash_name]
    if hash_name not in _suffixes:
        _suffixes[hash_name] = {_run(step, 0, bytes((a, b, c))): bytes((a, b, c))
                                for a in CRAFT_BYTES for b in CRAFT_BYTES
                                for c in CRAFT_BYTES}
    table = _suffixes[hash_name]
    target = final(want_hash)           # final() is its own inverse here
    s0 = _run(step, init, prefix)
    for w in CRAFT_BYTES:
        s1 = step(s0, w)
        for x in CRAFT_BYTES:
            s2 = step(s1, x)
            for y in CRAFT_BYTES:
                s3 = step(s2, y)
                for z in CRAFT_BYTES:
                    s4 = step(s3, z)
                    sfx = table.get(uncombine(target, _run(step, s4, b'\0\0\0')))
                    if sfx is not None:
                        key = prefix + bytes((w, x, y, z)) + sfx
                        assert KEY_HASH[hash_name](key) == want_hash
                        return key
    raise ValueError('no key found')


def crafted_positions(ring):
    """[(why, position)]: where the lookup rule is put to the test. Best on
    a ring whose lowest and highest points belong to different servers an
    even distance apart across the wrap-around (servers weighted 1, 2, 3)."""
    pts, n = ring.points, len(ring.points)
    out = [('on the lowest point', pts[0][0]),
           ('on a middle point', pts[n // 2][0]),
           ('on the highest point', pts[-1][0]),
           ('at position 0', 0),
           ('at position 2^32-1', M32),
           ('one past the highest point', (pts[-1][0] + 1) & M32),
           ('one before the lowest point', (pts[0][0] - 1) & M32)]
    pairs = [n - 1] + list(range(n - 1))     # the wrap-around first
    ties = 0
    for k in pairs:
        a, b = pts[k], pts[(k + 1) % n]
        gap = (b[0] - a[0]) & M32
        if a[1] != b[1] and gap % 2 == 0 and gap > 2:
            where = 'across the wrap-around' if k == n - 1 else 'between two points'
            mid = (a[0] + gap // 2) & M32
            out.append(('half-way %s: a tie, the point before wins' % where, mid))
            out.append(('one past half-way %s: the point after wins' % where,
                        (mid + 1) & M32))
            ties += 1
            if ties == 3:
                break
    return out

#!/usr/bin/python3
"""tests/gen/haproxy_gen.py: an independent Python model of HAProxy's
consistent hashing (`hash-type consistent`), written from HAProxy's rules as
docs/algorithms.md states them (checked against HAProxy 2.6.12), not from
chash's C code, and the generator of tests/gen/haproxy.test from it.
tests/compat/haproxy_compat.py checks the model, and chash, against the
real haproxy.

    /usr/bin/python3 tests/gen/haproxy_gen.py --write   rewrite haproxy.test
    /usr/bin/python3 tests/gen/haproxy_gen.py --check   fail if it differs

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
# avalanche the key's hash must be the inverse full_hash of it.
#   djb2: 'k-' and nine letters a..z. The letters add sum(d_i * 33^(8-i))
#     to a known value (d_i = letter - 'a', 0..25), so the key exists when
#     some V = wanted - known + j*2^32 below 33^9 has only base-33 digits up
#     to 25: try j = 0, 1, ... (about one V in nine qualifies).
#   sdbm, crc32: meet in the middle. These hashes keep a 32-bit state that
#     bytes update linearly (sdbm: h*65599 + c mod 2^32; crc32: over
#     GF(2)), so the state after a 3-byte suffix is "what zeros would give"
#     combined (+ or xor) with "what the suffix alone gives". The suffix
#     parts are tabulated once; 4-byte middles after a fixed prefix are
#     tried until the target minus the zeros part is in the table.
# wt6 keeps 64 bits of state and is not crafted.

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


def _sdbm_run(h, data):
    for c in data:
        h = (c + h * 65599) & M32
    return h


def _crc_run(reg, data):
    """The CRC-32 register after data (zlib inverts it before and after)."""
    return zlib.crc32(data, reg ^ M32) ^ M32


# name: (initial state, run bytes, take away the zeros part, state <-> hash)
_STATE = {
    'sdbm': (0, _sdbm_run, lambda a, b: (a - b) & M32, lambda h: h),
    'crc32a': (M32, _crc_run, lambda a, b: a ^ b, lambda r: r ^ M32),
}
CRAFTABLE = ('sdbm', 'djb2', 'crc32a')
# Safe in an HTTP header value and in a URL query value alike.
CRAFT_BYTES = (b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
               b"-._~!$'()*+;=:@/")
_suffixes = {}


def craft_djb2(want_hash, prefix=b'k-'):
    known = (djb2(prefix) * 33 ** 9 + ord('a') * (33 ** 9 - 1) // 32) & M32
    v = (want_hash - known) & M32
    while v < 33 ** 9:
        digits = [v // 33 ** (8 - i) % 33 for i in range(9)]
        if max(digits) <= 25:
            key = prefix + bytes(ord('a') + d for d in digits)
            assert djb2(key) == want_hash
            return key
        v += 1 << 32
    raise ValueError('no key found')


def craft_key(hash_name, want_hash, prefix=b'k-'):
    """A key of printable bytes, safe in a header and a URL, whose hash is
    want_hash."""
    if hash_name == 'djb2':
        return craft_djb2(want_hash, prefix)
    init, run, uncombine, final = _STATE[hash_name]
    if hash_name not in _suffixes:
        _suffixes[hash_name] = {run(0, bytes((a, b, c))): bytes((a, b, c))
                                for a in CRAFT_BYTES for b in CRAFT_BYTES
                                for c in CRAFT_BYTES}
    table = _suffixes[hash_name]
    target = final(want_hash)           # final() is its own inverse here
    s0 = run(init, prefix)
    for w in CRAFT_BYTES:
        s1 = run(s0, bytes((w,)))
        for x in CRAFT_BYTES:
            s2 = run(s1, bytes((x,)))
            for y in CRAFT_BYTES:
                s3 = run(s2, bytes((y,)))
                for z in CRAFT_BYTES:
                    s4 = run(s3, bytes((z,)))
                    sfx = table.get(uncombine(target, run(s4, b'\0\0\0')))
                    if sfx is not None:
                        key = prefix + bytes((w, x, y, z)) + sfx
                        assert KEY_HASH[hash_name](key) == want_hash
                        return key
    raise ValueError('no key found')


# The ring the crafted keys are made for: its lowest and highest points
# belong to different servers, an even distance apart across the wrap.
CRAFT_SERVERS = [('s1', 1), ('s2', 2), ('s3', 3)]


def crafted_positions(ring):
    """[(why, position)]: where the lookup rule is put to the test (best on
    the ring of CRAFT_SERVERS)."""
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


# ------------------------------------------------------ arcs and shares

def arc_ends(ring):
    """[(end, point position, owner, replica)] in chash's unit order: point
    k owns the positions (end of k-1, end of k], end = p + floor(gap to the
    next point / 2); the last end may wrap past 2^32 and then comes first."""
    pts, n = ring.points, len(ring.points)
    out = [((p + (((pts[(k + 1) % n][0] - p) & M32) // 2)) & M32, p, owner, i)
           for k, (p, owner, i) in enumerate(pts)]
    return sorted(out)


def arcs(ring):
    """ch_arcs' rows: (start, end, node), a wrapping arc cut at 2^32-1."""
    ends = arc_ends(ring)
    rows = []
    for k, (end, _, owner, _) in enumerate(ends):
        start = (ends[k - 1][0] + 1) & M32
        if start > end:
            rows += [(start, M32, owner), (0, end, owner)]
        else:
            rows.append((start, end, owner))
    return rows


def owned(ring):
    """{node: positions owned}, exact integers (summing to 2^32)."""
    out = {}
    for start, end, owner in arcs(ring):
        out[owner] = out.get(owner, 0) + end - start + 1
    return out


def moved_positions(old, new):
    """Positions whose owner differs between two rings (same key hash)."""
    cuts = sorted({a[0] for a in arc_ends(old)} | {a[0] for a in arc_ends(new)})
    moved = 0
    for k, end in enumerate(cuts):
        start = (cuts[k - 1] + 1) & M32
        if old.owner_of_position(end) != new.owner_of_position(end):
            moved += (end - start) & M32 if start > end else end - start
            moved += 1
    return moved


# ---------------------------------------------------------- haproxy.test

if __name__ == '__main__':
    import json

    import genfiles
    from reference import KEYS, TestFile, key_bytes, series, sql_str

    # Generated keys: 8 hex digits of i times a large odd number, so that
    # even djb2 and sdbm without avalanche (which keep similar keys close)
    # spread them over every server.
    GEN_KEY = "printf('%08x', i * 2654435761 % 4294967296)"

    def gen_key(i):
        return b'%08x' % (i * 2654435761 % 4294967296)

    W12 = [('app-%02d' % i, w) for i, w in enumerate([1, 2, 3, 1, 5, 1, 8, 1, 1, 16, 2, 1], 1)]
    N_GEN = 1000

    def header(tf):
        tf.out[2:5] = ['# GENERATED by tests/gen/haproxy_gen.py, an independent Python model of',
                       "# HAProxy's consistent hashing: do not edit. Regenerate with",
                       '#   /usr/bin/python3 tests/gen/haproxy_gen.py --write']

    def create(tf, table, servers, opts):
        tf.statement('CREATE VIRTUAL TABLE %s USING chash(algorithm=haproxy%s)'
                     % (table, ''.join(', %s=%s' % kv for kv in opts)))
        tf.statement('INSERT INTO %s(node, weight) VALUES %s' % (
            table, ', '.join('(%s, %d)' % (sql_str(n), w) for n, w in servers)))

    def locate_keys(tf, ring, spec):
        values = ', '.join('(%d, %s)' % (i, k) for i, k in enumerate(KEYS))
        tf.query('T', 'SELECT ch_locate(column2, %s) FROM (VALUES %s) ORDER BY column1'
                 % (spec, values),
                 [(None if key_bytes(k) is None else ring.locate(key_bytes(k)),) for k in KEYS])
        tf.query('T', "%s SELECT ch_locate(%s, %s) FROM s ORDER BY i"
                 % (series(N_GEN), GEN_KEY, spec),
                 [(ring.locate(gen_key(i)),) for i in range(1, N_GEN + 1)])

    def gen():
        tf = TestFile('haproxy.test', "algorithm haproxy and HAProxy's hashes, against the model")
        header(tf)
        tf.comment("ch_hash(key, name) for HAProxy's key hashes: 32-bit, unsigned bytes.\n"
                   "sdbm: h = c + h*65599 from 0; djb2: h = h*33 + c from 5381; wt6:\n"
                   "HAProxy's two-word hash. ch_hash gives the hash itself: avalanche is\n"
                   "an option of algorithm haproxy, not part of the hash.")
        tf.out.append('')
        values = ', '.join('(%d, %s)' % (i, k) for i, k in enumerate(KEYS))
        for h in ('sdbm', 'djb2', 'wt6'):
            tf.query('TI', "SELECT quote(column2), ch_hash(column2, '%s') FROM (VALUES %s) "
                     "ORDER BY column1" % (h, values),
                     [(_sql_quote(k), None if key_bytes(k) is None else KEY_HASH[h](key_bytes(k)))
                      for k in KEYS])
            tf.query('I', "%s SELECT ch_hash('k' || i, '%s') FROM s ORDER BY i"
                     % (series(300), h), [(KEY_HASH[h](b'k%d' % i),) for i in range(1, 301)])
        tf.comment("The hash names are case-insensitive.")
        tf.query('I', "SELECT ch_hash('x', 'SDBM') = ch_hash('x', 'sdbm') "
                 "AND ch_hash('x', 'Wt6') = ch_hash('x', 'wt6')", [(1,)])

        tf.comment("Placement: 12 servers of weights 1 to 16, every hash with and without\n"
                   "avalanche. A server's id is its rank in join order (1, 2, ...): its\n"
                   "16*weight points are at full_hash(id*4096 + i); a key goes to the\n"
                   "nearer of the point at or after it and the point before, the one\n"
                   "before on a tie.")
        tf.out.append('')
        for h in HASHES:
            for aval in (0, 1):
                table = 'hp_%s_%d' % (h, aval)
                create(tf, table, W12, [('hash', h), ('avalanche', aval)])
                locate_keys(tf, Ring(W12, h, bool(aval)), sql_str(table))

        tf.comment("The defaults are hash-type consistent's: sdbm with avalanche.")
        create(tf, 'hp_default', W12, [])
        tf.query('I', "%s SELECT count(*) FROM s WHERE ch_locate(%s, 'hp_default') "
                 "= ch_locate(%s, 'hp_sdbm_1')" % (series(N_GEN), GEN_KEY, GEN_KEY), [(N_GEN,)])

        tf.comment("Inline JSON rings: the order of the nodes object is the join order.")
        nodes = [('web-c', 2), ('web-a', 1), ('web-b', 3)]
        spec = sql_str(json.dumps({'algorithm': 'haproxy', 'hash': 'wt6', 'avalanche': 0,
                                   'nodes': dict(nodes)}))
        locate_keys(tf, Ring(nodes, 'wt6', False), spec)
        spec = sql_str(json.dumps({'algorithm': 'haproxy', 'hash': 'djb2',
                                   'nodes': ['x', 'y', 'z', 'w']}))
        locate_keys(tf, Ring([(n, 1) for n in 'xyzw'], 'djb2', True), spec)

        tf.comment("points is 16 per unit of weight; share is exact: each point owns the\n"
                   "positions from just past half-way to the point before it up to\n"
                   "half-way (rounded down) to the point after it.")
        ring = Ring(W12, 'sdbm', True)
        own = owned(ring)
        assert sum(own.values()) == 1 << 32
        tf.query('TIIR', 'SELECT node, weight, points, share FROM hp_sdbm_1 ORDER BY node',
                 [(n, w, 16 * w, own[n] / 2.0 ** 32) for n, w in sorted(W12)])
        tf.query('T', 'WITH x(n, s) AS (VALUES %s) SELECT n FROM x LEFT JOIN hp_sdbm_1 '
                 'ON n = node WHERE share IS NULL OR abs(share - s) >= 1e-12'
                 % ', '.join('(%s, %r)' % (sql_str(n), own[n] / 2.0 ** 32) for n, _ in W12), [])

        tf.comment("Keys crafted from the rule (servers s1, s2, s3 of weights 1, 2, 3): keys\n"
                   "exactly on a point, half-way between points of two servers (a tie: the\n"
                   "point before wins) and one past it, and around the wrap-around. The\n"
                   "comment gives the position and what \"first point clockwise\" would say.")
        tf.out.append('')
        for h in CRAFTABLE:
            for aval in (0, 1):
                table = 'c_%s_%d' % (h, aval)
                ring = Ring(CRAFT_SERVERS, h, bool(aval))
                create(tf, table, CRAFT_SERVERS, [('hash', h), ('avalanche', aval)])
                for why, p in crafted_positions(ring):
                    key = craft_key(h, inverse_full_hash(p) if aval else p)
                    tf.comment('%s: position %d; first point clockwise: %s'
                               % (why, p, ring.first_clockwise(p)))
                    tf.query('T', 'SELECT ch_locate(%s, %s)' % (sql_str(key.decode()),
                                                               sql_str(table)),
                             [(ring.owner_of_position(p),)])

        ring = Ring(CRAFT_SERVERS, 'sdbm', False)
        tf.comment("ch_points lists HAProxy's points (replica i is full_hash(id*4096 + i));\n"
                   "ch_arcs the arcs the nearer-point rule gives them, in position order.")
        tf.query('ITI', 'SELECT token, node, replica FROM ch_points(%s)' % sql_str('c_sdbm_0'),
                 [(p, n, i) for _, p, n, i in arc_ends(ring)])
        tf.query('IIT', 'SELECT start, "end", node FROM ch_arcs(%s)' % sql_str('c_sdbm_0'),
                 arcs(ring))
        pair = Ring([('a', 1), ('b', 1)])
        spec = sql_str(json.dumps({'algorithm': 'haproxy', 'nodes': ['a', 'b']}))
        tf.comment("Units go in the order of the arcs' ends. Here the highest point's arc\n"
                   "reaches past 2^32-1 and ends at a low position, so that point (b's\n"
                   "replica 15) comes first and its arc is cut in two rows.")
        tf.query('ITI', 'SELECT token, node, replica FROM ch_points(%s) LIMIT 3' % spec,
                 [(p, n, i) for _, p, n, i in arc_ends(pair)[:3]])
        tf.query('IIT', 'SELECT start, "end", node FROM ch_arcs(%s) LIMIT 3' % spec,
                 arcs(pair)[:3])
        tf.query('I', 'SELECT count(*) FROM ch_points(%s)' % sql_str('hp_djb2_0'),
                 [(16 * sum(w for _, w in W12),)])

        tf.comment("A server joins: keys move only onto it (the nearer point is new or\n"
                   "unchanged). ch_diff's total share is the exact moved fraction.")
        old = Ring(W12, 'sdbm', True)
        new = Ring(W12 + [('app-13', 4)], 'sdbm', True)
        tf.statement("INSERT INTO hp_sdbm_1(node, weight) VALUES ('app-13', 4)")
        keys = [gen_key(i) for i in range(1, 2001)]
        moved = [k for k in keys if old.locate(k) != new.locate(k)]
        assert moved and all(new.locate(k) == 'app-13' for k in moved)
        tf.query('II', "%s SELECT count(*), sum(ch_locate(%s, 'hp_sdbm_1') = 'app-13') "
                 "FROM s WHERE ch_moved(%s, 'hp_sdbm_1@1', 'hp_sdbm_1')"
                 % (series(2000), GEN_KEY, GEN_KEY), [(len(moved), len(moved))])
        frac = moved_positions(old, new) / 2.0 ** 32
        tf.query('I', "SELECT abs(sum(share) - %r) < 1e-12 FROM ch_diff('hp_sdbm_1@1', "
                 "'hp_sdbm_1')" % frac, [(1,)])

        tf.comment("A server leaves: the servers that joined after it are renumbered, as\n"
                   "when its server line is deleted from haproxy.cfg, so their points move\n"
                   "too and keys move between servers that stayed.")
        gone = Ring([s for s in W12 + [('app-13', 4)] if s[0] != 'app-03'], 'sdbm', True)
        tf.statement("DELETE FROM hp_sdbm_1 WHERE node = 'app-03'")
        moved = [k for k in keys if new.locate(k) != gone.locate(k)]
        between = [k for k in moved if new.locate(k) != 'app-03']
        assert between
        tf.query('II', "%s SELECT count(*), sum(ch_locate(%s, 'hp_sdbm_1@2') <> 'app-03') "
                 "FROM s WHERE ch_moved(%s, 'hp_sdbm_1@2', 'hp_sdbm_1')"
                 % (series(2000), GEN_KEY, GEN_KEY), [(len(moved), len(between))])
        return tf.text()

    def _sql_quote(literal):
        from reference import sql_value
        return sql_value('quote(%s)' % literal)

    genfiles.main('haproxy_gen.py', [('haproxy.test', gen)])

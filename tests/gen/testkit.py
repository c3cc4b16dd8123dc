"""tests/gen/testkit.py: what the generators of tests/gen/ and the models
the compat checks import share. No chash code involved.

  sql_text, sql_key     SQL literals of names and keys
  shown, md5_form       values as the runner shows them, and its "N values
                        hashing to MD5" form of long results
  comment               prose as a wrapped '# ' comment of a .test file
  keys, byte_keys, LOCATE_KEYS
                        the keys 'key1' .. 'keyN', and the query that
                        places them
  insert                INSERT INTO t(node, weight) of (name, weight) pairs
  arc_widths            the positions each server of a points ring owns
  first_shared_point    a search for two names whose points collide
  forge_crc32           a key whose CRC-32 is a given value
  tie_queries           the records of two servers sharing a point, in
                        both join orders
  owner_at, replicas_at, moved_positions
                        a points ring with .entries [(position, server)]
                        and .keys [position], sorted: the first point at
                        or after a position owns it, wrapping to point 0
"""
import bisect
import hashlib
import textwrap
import zlib


def sql_text(s):
    """s (str, or bytes of UTF-8) as an SQL text literal."""
    if isinstance(s, bytes):
        s = s.decode()
    return "'" + s.replace("'", "''") + "'"


def sql_key(b):
    """A key's bytes as an SQL literal: text when it is printable ASCII,
    else a blob."""
    if all(0x20 <= c < 0x7f for c in b):
        return sql_text(b)
    return "x'%s'" % b.hex()


def shown(text):
    """A text value as the runner shows it: each UTF-8 byte outside
    0x20..0x7e as '@'."""
    return ''.join(chr(b) if 0x20 <= b <= 0x7e else '@' for b in text.encode())


def md5_form(values):
    """The runner's "N values hashing to MD5" line."""
    text = ''.join(shown(v) + '\n' for v in values)
    return '%d values hashing to %s' % (len(values), hashlib.md5(text.encode()).hexdigest())


def comment(text):
    return '\n'.join('# ' + line for line in textwrap.wrap(text, 74))


LOCATE_KEYS = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<%d)\n"
               "SELECT ch_locate('key' || i, '%s') FROM n ORDER BY i")


def keys(n):
    return ['key%d' % i for i in range(1, n + 1)]


def byte_keys(n):
    return [k.encode() for k in keys(n)]


def insert(table, servers):
    """servers: [(name, weight)], weights as Python writes them."""
    return ('INSERT INTO %s(node, weight) VALUES %s'
            % (table, ', '.join('(%s, %r)' % (sql_text(s), w) for s, w in servers)))


def arc_widths(points, space=1 << 32):
    """{server: positions it owns} of points [(position, server)], sorted: a
    point owns the positions after the previous point up to itself; the
    lowest point also owns those after the highest (the wrap-around)."""
    out = {}
    prev = points[-1][0] - space
    for p, s in points:
        out[s] = out.get(s, 0) + p - prev
        prev = p
    return out


def first_shared_point(names, points_of):
    """The first two of names (in their order) with a point in common, and
    the point: (earlier name, later name, point)."""
    seen = {}
    for name in names:
        for p in points_of(name):
            other = seen.get(p)
            if other is not None and other != name:
                return other, name, p
            seen[p] = name
    raise SystemExit('testkit: no two of the names share a point')



def forge_crc32(prefix, target, length=48):
    """A printable key prefix + s (s of `length` letters 'a'/'c') whose
    CRC-32 is target. CRC-32 is affine over GF(2): flipping bit 1 of byte
    k of s xors a fixed vector into the CRC, so choosing which letters are
    'c' is a linear system of 32 equations, solved by elimination."""
    base = bytearray(b'a' * length)
    c0 = zlib.crc32(prefix + bytes(base))
    basis = []                              # (pivot vector, set of positions)
    for k in range(length):
        flip = bytearray(base)
        flip[k] = ord('c')
        v, used = zlib.crc32(prefix + bytes(flip)) ^ c0, {k}
        for bv, bused in basis:
            if v ^ bv < v:
                v, used = v ^ bv, used ^ bused
        if v:
            basis.append((v, used))
            basis.sort(reverse=True)
    want, used = target ^ c0, set()
    for bv, bused in basis:
        if want ^ bv < want:
            want, used = want ^ bv, used ^ bused
    if want:
        raise ValueError('no %d-letter suffix reaches %#x' % (length, target))
    for k in used:
        base[k] = ord('c')
    key = prefix + bytes(base)
    assert zlib.crc32(key) == target
    return key

def tie_queries(counts_ab, counts_ba, key, owner_ab, owner_ba):
    """The records over tables tab and tba (the same two servers with a
    shared point, joined in both orders): the points each server has in
    each ({name: count}), and the owner of key (on the shared point)."""
    def rows(counts):
        return '\n'.join('%s\t%d' % (s.decode(), n) for s, n in sorted(counts.items()))
    return """query TI
SELECT node, points FROM tab ORDER BY node
----
%s

query TI
SELECT node, points FROM tba ORDER BY node
----
%s

query TT
SELECT ch_locate(%s, 'tab'), ch_locate(%s, 'tba')
----
%s\t%s
""" % (rows(counts_ab), rows(counts_ba), sql_key(key), sql_key(key),
       owner_ab.decode(), owner_ba.decode())

def owner_at(r, pos):
    return r.entries[bisect.bisect_left(r.keys, pos) % len(r.entries)][1]


def replicas_at(r, pos, n):
    """The first n distinct servers clockwise from position pos."""
    i = bisect.bisect_left(r.keys, pos)
    out = []
    for j in range(len(r.entries)):
        s = r.entries[(i + j) % len(r.entries)][1]
        if s not in out:
            out.append(s)
        if len(out) == n:
            break
    return out


def moved_positions(a, b, space=1 << 32):
    """How many of the positions change owner between rings a and b: the
    owner is constant between consecutive points of either ring, so each
    piece is checked once."""
    cuts = sorted(set(a.keys) | set(b.keys))
    moved, prev = 0, -1
    for c in cuts:
        if owner_at(a, c) != owner_at(b, c):
            moved += c - prev
        prev = c
    if owner_at(a, space - 1) != owner_at(b, space - 1):
        moved += space - 1 - prev
    return moved

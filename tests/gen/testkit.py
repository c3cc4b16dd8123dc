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
  owner_at, replicas_at, moved_positions
                        a points ring with .entries [(position, server)]
                        and .keys [position], sorted: the first point at
                        or after a position owns it, wrapping to point 0
"""
import bisect
import hashlib
import textwrap


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

"""tests/gen/nginx_model.py: an independent model, in Python, of how nginx's
`hash $key consistent` (ngx_http_upstream_hash_module, checked against
nginx 1.22 on glibc) places a key. Written from the rule in
docs/algorithms.md; no chash code involved. Used by tests/gen/nginx_gen.py
(expected rows) and tests/compat/nginx.py (the real nginx).

Servers are (address as written in the `server` line, integer weight) in
the upstream's order. Everything is bytes.
"""
import bisect
import zlib

from testkit import first_shared_point, replicas_at

POINTS_PER_WEIGHT = 160


def split_server(server):
    """The (host, port) nginx hashes for a `server` address: `unix:` (any
    case) drops the prefix and has no port; otherwise a trailing run of
    digits preceded by ':' is the port; anything else is all host."""
    if server[:5].lower() == b'unix:':
        return server[5:], b''
    end = len(server)
    i = end
    while i > 0 and 0x30 <= server[i - 1] <= 0x39:
        i -= 1
    if i > 0 and server[i - 1] == 0x3a:
        return server[:i - 1], server[i:]
    return server, b''


def server_points(server, weight, split=split_server):
    """160 * weight points: each is the CRC-32 of host, a NUL byte, port
    and the previous point as 4 little-endian bytes (0 before the first).
    split: how the address becomes (host, port) (tests pass wrong ones)."""
    host, port = split(server)
    base = host + b'\0' + port
    points, prev = [], 0
    for _ in range(POINTS_PER_WEIGHT * weight):
        prev = zlib.crc32(base + prev.to_bytes(4, 'little'))
        points.append(prev)
    return points


def ring(servers, split=split_server):
    """Sorted (point, server) with one entry per distinct point: of equal
    points the one generated first (earlier server in the list) stays."""
    entries = []
    for server, weight in servers:
        entries += [(p, server) for p in server_points(server, weight, split)]
    entries.sort(key=lambda e: e[0])          # stable, as glibc's qsort
    out = []
    for e in entries:
        if not out or out[-1][0] != e[0]:
            out.append(e)
    return out


class Ring:
    def __init__(self, servers, split=split_server):
        self.entries = ring(servers, split)
        self.keys = [e[0] for e in self.entries]

    def locate(self, key):
        """The server of the first point >= crc32(key), wrapping to the
        first point."""
        i = bisect.bisect_left(self.keys, zlib.crc32(key))
        return self.entries[i % len(self.entries)][1]


def replicas(r, key, n):
    """The first n distinct servers clockwise from the key's point."""
    return replicas_at(r, zlib.crc32(key), n)


def collision_pair(prefix):
    """Two servers PREFIX.A:PORT (prefix bytes such as b'127.0.0') that
    share a point, and the point: found by a search over names."""
    names = (b'%s.%d:%d' % (prefix, a, port) for a in range(1, 255)
             for port in range(8000, 8010))
    return first_shared_point(names, lambda name: server_points(name, 1))

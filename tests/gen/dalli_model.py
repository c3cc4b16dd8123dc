"""tests/gen/dalli_model.py: an independent model, in Python, of how Ruby's
Dalli 3.0 (`Dalli::Ring`, Rails' :mem_cache_store; checked against Debian's
ruby-dalli 3.0.6) places a key. Written from the rule in
docs/algorithms.md; no chash code involved. Used by tests/gen/dalli_gen.py
(expected rows) and tests/compat/dalli.py (the real Dalli).

Servers are (server string as given to Dalli::Client, integer weight) in
the client's order. Keys and names are bytes.
"""
import bisect
import hashlib
import re
import zlib

POINTS_PER_SERVER = 160
DEFAULT_PORT = b'11211'
MAX_KEY_LENGTH = 250          # characters
SHORT_PREFIX = 212            # characters kept of a shortened key (213 with a namespace)

SERVER_RE = re.compile(rb'\A(\[([0-9A-Fa-f:]+)\]|[^:]+)(?::(\d+))?\Z')


def server_name(server):
    """The name Dalli hashes: host:port (port 11211 when not given; an
    IPv6 host loses its brackets; the port read as Ruby's Integer() reads
    it: a leading 0 makes it octal), or a unix socket's path as it is.
    None for a string Dalli does not parse."""
    m = SERVER_RE.match(server)
    if m is None or m.group(1) == b'[]':
        return None
    host = m.group(2) or m.group(1)
    if host.startswith(b'/'):
        return None if m.group(3) else host
    port = m.group(3) or DEFAULT_PORT
    if len(port) > 1 and port.startswith(b'0'):
        if re.search(rb'[89]', port):
            return None
        port = str(int(port, 8)).encode()
    return host + b':' + port


def point_counts(weights):
    """floor(n * 160 * w / total), the division in doubles."""
    n, total = len(weights), sum(weights)
    return [int((n * POINTS_PER_SERVER * w) / float(total)) for w in weights]


def ring(servers, later_wins=True, name=server_name):
    """Sorted (point, index in servers): server i's point j is the first 4
    bytes, big-endian, of SHA-1("name:j"). Of equal points the later server
    in the list comes last and so wins (later_wins=False: the earlier;
    tests use it as a wrong variant; name: what is hashed for a server
    string, another wrong variant)."""
    entries = []
    counts = point_counts([w for _, w in servers])
    for i, ((server, _), count) in enumerate(zip(servers, counts)):
        label = name(server)
        for j in range(count):
            digest = hashlib.sha1(label + b':' + str(j).encode()).digest()
            entries.append((int.from_bytes(digest[:4], 'big'),
                            i if later_wins else -i))
    entries.sort()
    return [(p, abs(i)) for p, i in entries]


def char_spans(key):
    """The key's characters as Ruby counts a UTF-8 string: a valid UTF-8
    sequence is one character, any other byte is one on its own."""
    spans, i = [], 0
    while i < len(key):
        for size in (1, 2, 3, 4):
            try:
                key[i:i + size].decode('utf-8')
                break
            except UnicodeDecodeError:
                size = None
        step = size or 1
        spans.append(i + step)
        i += step
    return spans


def dalli_key(key, namespace=None, shorten=True):
    """The key Dalli sends: namespace:key, and when that is longer than
    250 characters its first 212 characters (213 with a namespace),
    ':md5:' and the MD5 of the whole in hex."""
    if namespace is not None:
        key = namespace + b':' + key
    try:
        text = key.decode('utf-8')           # the common case, quicker
        count, cut = len(text), lambda n: len(text[:n].encode())
    except UnicodeDecodeError:
        ends = char_spans(key)
        count, cut = len(ends), lambda n: ends[n - 1]
    if count <= MAX_KEY_LENGTH or not shorten:
        return key
    keep = SHORT_PREFIX + (1 if namespace is not None else 0)
    return key[:cut(keep)] + b':md5:' + hashlib.md5(key).hexdigest().encode()


class Ring:
    """Dalli's ring; the keyword arguments other than namespace make the
    wrong variants the checks must tell apart."""
    def __init__(self, servers, namespace=None, later_wins=True, below=True,
                 name=server_name, shorten=True):
        self.servers = servers
        self.namespace = namespace
        self.below = below
        self.shorten = shorten
        self.entries = ring(servers, later_wins, name) if len(servers) > 1 else []
        self.points = [p for p, _ in self.entries]

    def locate_position(self, h):
        """The server of CRC-32 value h: the last point at or below it,
        wrapping to the last point (below=False: the first at or above,
        a wrong variant)."""
        if not self.entries:
            return self.servers[0][0]
        if self.below:
            i = bisect.bisect_right(self.points, h) - 1
        else:
            i = bisect.bisect_left(self.points, h) % len(self.points)
        return self.servers[self.entries[i][1]][0]

    def locate(self, key):
        return self.locate_position(zlib.crc32(dalli_key(key, self.namespace, self.shorten)))

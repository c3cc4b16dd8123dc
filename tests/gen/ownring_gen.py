"""tests/gen/ownring_gen.py: an independent model of rings people write
themselves, and of Go's groupcache ring, in plain Python; it writes
tests/gen/ownring.test.

    /usr/bin/python3 tests/gen/ownring_gen.py --write  write tests/gen/ownring.test
    /usr/bin/python3 tests/gen/ownring_gen.py --check  fail if it is out of date

Written from the rules in docs/algorithms.md ("your own ring", groupcache),
not from chash's C code or output. tests/compat/ownring.py imports the
model and checks it, and chash, against the real groupcache package and a
Java TreeMap ring.

A ring of this kind is "hash these labels, first point at or after the
key":
  - label: a template where %s is the node name, %d the point index in
    decimal, %% a literal %;
  - a node of weight w has p = round(vnodes*w) points (half away from zero,
    at least 1), indexes first .. first+p-1;
  - the point's position is hash(label) and a key's is hash(key bytes);
    the key belongs to the first point at or after it, wrapping around;
  - equal positions: the tie rule says which node's point comes first,
    and so wins: 'name' (node names bytewise), 'first' (the node that
    joined first), 'last' (the node that joined last: a map overwrite).
    Within one node, lower index first.
"""
import bisect
import hashlib
import json
import zlib

import xxhash

import genfiles
import reference
from reference import KEYS, key_bytes, node_points, series, sql_str

BITS = {"md5be": 32, "md5": 32, "crc32a": 32, "xxh3": 64, "xxh64": 64}


def hash_bytes(name, data, seed=0):
    """The unsigned position of bytes data under hash name."""
    if name == "md5be":                  # MD5 bytes 0..3, big-endian
        return int.from_bytes(hashlib.md5(data).digest()[:4], "big")
    if name == "md5":                    # MD5 bytes 0..3, little-endian
        return int.from_bytes(hashlib.md5(data).digest()[:4], "little")
    if name == "crc32a":                 # the full IEEE CRC-32
        return zlib.crc32(data)
    if name == "xxh3":
        return xxhash.xxh3_64_intdigest(data, seed)
    if name == "xxh64":
        return xxhash.xxh64_intdigest(data, seed)
    raise ValueError(name)


def label_text(template, name, index):
    """The label of point index of node name, by the template's rules."""
    out, k = [], 0
    while k < len(template):
        c = template[k]
        if c != "%":
            out.append(c)
            k += 1
            continue
        conv = template[k + 1]
        out.append({"s": name, "d": str(index), "%": "%"}[conv])
        k += 2
    return "".join(out)


class OwnRing:
    """nodes: [(name, weight)] in join order."""

    def __init__(self, nodes, label="%s#%d", first=1, ties="name",
                 hash="xxh3", vnodes=160, seed=0):
        self.hash, self.seed, self.vnodes = hash, seed, vnodes
        self.bits = BITS[hash]
        pts = []
        for join, (name, weight) in enumerate(nodes):
            rank = {"name": name.encode(), "first": join, "last": -join}[ties]
            for i in range(first, first + node_points(vnodes, weight)):
                data = label_text(label, name, i).encode()
                pts.append((hash_bytes(hash, data, seed), rank, i, name))
        pts.sort()
        self.points = [(p, name, i) for p, _, i, name in pts]
        self.positions = [p for p, _, _ in self.points]

    def key_position(self, key):
        return hash_bytes(self.hash, key, self.seed)

    def locate(self, key):
        """The owner of key (bytes)."""
        k = bisect.bisect_left(self.positions, self.key_position(key))
        return self.points[k % len(self.points)][1]


def groupcache(nodes, replicas=50):
    """Go's groupcache consistenthash: peers in the order given to Add."""
    return OwnRing([(n, 1) for n in nodes], label="%d%s", first=0,
                   ties="last", hash="crc32a", vnodes=replicas)


def java_router(nodes, vnodes, separator=":"):
    """The Java TreeMap ring of tests/compat/TreeMapRing.java."""
    return OwnRing([(n, 1) for n in nodes], label="%s" + separator + "%d",
                   first=0, ties="last", hash="md5be", vnodes=vnodes)


# ------------------------------------------------------------ ownring.test
#
# Everything below writes the expected values of the model into
# tests/gen/ownring.test.

def point_rows(ring):
    """ch_points rows: tokens as ch_hash gives them (64-bit ones signed)."""
    if ring.bits < 64:
        return ring.points
    return [(p - (1 << 64) if p >= 1 << 63 else p, n, i) for p, n, i in ring.points]


def owner_of(ring, literal):
    data = key_bytes(literal)
    return None if data is None else ring.locate(data)


def shares(ring):
    """{name: exact share}: point k owns (pos[k-1], pos[k]], point 0 the
    wrap-around too; of equal positions the first (the winner) owns it."""
    space, pos = 1 << ring.bits, ring.positions
    count = {}
    for k, (p, name, _) in enumerate(ring.points):
        width = (p - pos[k - 1]) % space if k else space - pos[-1] + p
        count[name] = count.get(name, 0) + width
    return {n: c / space for n, c in count.items()}


class TestFile(reference.TestFile):
    def __init__(self):
        reference.TestFile.__init__(self, "ownring.test", "")
        self.out = [
            "# tests/gen/ownring.test: rings of your own design (ring options label,",
            "# first, ties; hashes md5be, crc32a) and algorithm groupcache",
            "#",
            "# GENERATED by tests/gen/ownring_gen.py, an independent Python model:",
            "# do not edit. Regenerate with",
            "#   /usr/bin/python3 tests/gen/ownring_gen.py --write",
            "",
        ]


def json_spec(nodes, **opts):
    """An inline ring; nodes a list (weights 1) or a list of (name, weight)
    pairs, written as a JSON object in that order."""
    spec = dict(opts)
    spec["nodes"] = (nodes if isinstance(nodes[0], str) else
                     {n: w for n, w in nodes})
    return sql_str(json.dumps(spec, ensure_ascii=False))


def model_of(nodes, **opts):
    pairs = [(n, 1) for n in nodes] if isinstance(nodes[0], str) else nodes
    if opts.get("algorithm") == "groupcache":
        return groupcache([n for n, _ in pairs], opts.get("vnodes", 50))
    opts = {k: v for k, v in opts.items() if k != "algorithm"}
    return OwnRing(pairs, **opts)


def locate_keys(tf, ring, spec, n=300):
    """Keys of every type, then n generated text keys, on one spec."""
    values = ", ".join("(%d, %s)" % (i, k) for i, k in enumerate(KEYS))
    tf.query("T", "SELECT ch_locate(column2, %s) FROM (VALUES %s) ORDER BY column1"
             % (spec, values), [(owner_of(ring, k),) for k in KEYS])
    tf.query("T", "%s SELECT ch_locate('k' || i, %s) FROM s ORDER BY i"
             % (series(n), spec),
             [(ring.locate(b"k%d" % i),) for i in range(1, n + 1)])


def check_shares(tf, table, ring, nodes):
    want = shares(ring)
    checks = ", ".join("(%s, %r, %d)" % (sql_str(n), want[n], node_points(ring.vnodes, w))
                       for n, w in nodes)
    tf.query("T", "WITH x(n, s, p) AS (VALUES %s) SELECT n FROM x LEFT JOIN %s ON n = node "
             "WHERE share IS NULL OR abs(share - s) >= 1e-12 OR points <> p" % (checks, table), [])


def gen_hashes(tf):
    tf.comment("md5be: the first four bytes of MD5, read big-endian (as Java code that\n"
               "shifts digest[0..3] into a long). MD5('') = d41d8cd98f00b204e9800998ecf8427e,\n"
               "so md5be('') = 0xd41d8cd9 = 3558706393 and md5 (little-endian) is\n"
               "0xd98c1dd4 = 3649838548. crc32a is the whole IEEE CRC-32, as Go's\n"
               "crc32.ChecksumIEEE and zlib's crc32: crc32a('0http://10.0.0.1:8080') =\n"
               "2090179191, the first point of groupcache peer http://10.0.0.1:8080.")
    lits = ["''", "'a'", "'hello'", "'user:1000'", "'0http://10.0.0.1:8080'",
            "'caf\u00e9'", "42", "-1", "x'00ff'", "1.5"]
    for h in ("md5be", "crc32a", "md5"):
        tf.query("I", "SELECT ch_hash(column2, '%s') FROM (VALUES %s) ORDER BY column1"
                 % (h, ", ".join("(%d, %s)" % (i, k) for i, k in enumerate(lits))),
                 [(hash_bytes(h, key_bytes(k)),) for k in lits])
    tf.query("I", "SELECT ch_hash(NULL, 'md5be') IS NULL", [(1,)])


def gen_worked(tf):
    nodes = ["A", "B"]
    ring = OwnRing([(n, 1) for n in nodes], label="%s:%d", first=0, ties="last",
                   hash="md5be", vnodes=2)
    lines = ["A worked example: nodes A and B, label '%s:%d', first 0, two points each,",
             "hash md5be. The labels and the first four bytes of their MD5:"]
    for p, name, i in sorted(ring.points, key=lambda t: (t[1], t[2])):
        label = label_text("%s:%d", name, i)
        lines.append("  %-4s MD5 %s..  -> %10d" % (
            label, hashlib.md5(label.encode()).hexdigest()[:8], p))
    key = "user:42"
    kp = hash_bytes("md5be", key.encode())
    lines.append("Key '%s': MD5 %s.. -> %d; the first point at or after it is %s's."
                 % (key, hashlib.md5(key.encode()).hexdigest()[:8], kp, ring.locate(key.encode())))
    tf.comment("\n".join(lines))
    spec = json_spec(nodes, label="%s:%d", first=0, ties="last", hash="md5be", vnodes=2)
    tf.query("ITI", "SELECT token, node, replica FROM ch_points(%s)" % spec, ring.points)
    tf.query("T", "SELECT ch_locate('%s', %s)" % (key, spec), [(ring.locate(key.encode()),)])


def gen_java_router(tf):
    nodes = ["IDC1-127.0.0.1:8080", "IDC1-127.0.0.1:8081", "IDC1-127.0.0.1:8082",
             "IDC1-127.0.0.1:8084"]
    keys = ["192.168.0.%d" % i for i in range(1, 6)]
    tf.comment("The Java TreeMap router of docs/algorithms.md: label '%s-%d', first 0,\n"
               "md5be, ties last, 10 points a node; then a fifth node joins.")
    tf.statement("CREATE VIRTUAL TABLE router USING chash(hash=md5be, label='%s-%d', "
                 "first=0, ties=last, vnodes=10)")
    tf.statement("INSERT INTO router(node) VALUES %s"
                 % ", ".join("(%s)" % sql_str(n) for n in nodes))
    for extra in ([], ["IDC2-127.0.0.1:8080"]):
        if extra:
            tf.statement("INSERT INTO router(node) VALUES (%s)" % sql_str(extra[0]))
        ring = java_router(nodes + extra, 10, "-")
        tf.query("TT", "SELECT column1, ch_locate(column1, 'router') FROM (VALUES %s)"
                 % ", ".join("(%s)" % sql_str(k) for k in keys),
                 [(k, ring.locate(k.encode())) for k in keys])


def gen_groupcache(tf):
    peers = ["http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080"]
    ring = groupcache(peers)
    tf.comment("groupcache: three peers, 50 replicas (HTTPPool's default). Point i of\n"
               "peer N is crc32a(decimal(i) + N), i = 0..49. The same placements from\n"
               "algorithm groupcache and from algorithm ring with groupcache's options.")
    for spec in (json_spec(peers, algorithm="groupcache"),
                 json_spec(peers, algorithm="ring", label="%d%s", first=0,
                           hash="crc32a", ties="last", vnodes=50)):
        tf.query("TT", "SELECT column1, ch_locate(column1, %s) FROM (VALUES ('foo'), "
                 "('bar'), ('baz'), ('user:1000'), ('hello'))" % spec,
                 [(k, ring.locate(k.encode())) for k in
                  ("foo", "bar", "baz", "user:1000", "hello")])
        locate_keys(tf, ring, spec)
        tf.query("ITI", "SELECT token, node, replica FROM ch_points(%s)" % spec, ring.points)
    tf.query("ITI", "SELECT token, node, replica FROM ch_points(%s) WHERE token = 2090179191"
             % json_spec(peers, algorithm="groupcache"), [(2090179191, peers[0], 0)])
    ring160 = groupcache(peers, 160)
    locate_keys(tf, ring160, json_spec(peers, algorithm="groupcache", vnodes=160))

    tf.statement("CREATE VIRTUAL TABLE gc USING chash(algorithm=groupcache)")
    tf.statement("INSERT INTO gc(node) VALUES %s" % ", ".join("(%s)" % sql_str(p) for p in peers))
    locate_keys(tf, ring, "'gc'")
    check_shares(tf, "gc", ring, [(p, 1) for p in peers])
    tf.query("I", "SELECT count(*) FROM ch_points('gc')", [(150,)])


def tie_keys(nodes, n, **opts):
    """n keys 'tie:i' on the arc of a point two nodes share."""
    last = model_of(nodes, **dict(opts, ties="last"))
    first = model_of(nodes, **dict(opts, ties="first"))
    keys = []
    i = 0
    while len(keys) < n:
        k = "tie:%d" % i
        if last.locate(k.encode()) != first.locate(k.encode()):
            keys.append(k)
        i += 1
    return keys


def gen_ties(tf):
    a, b = "10.0.0.1:11211", "110.0.0.1:11211"
    gc = dict(label="%d%s", first=0, hash="crc32a", vnodes=50)
    shared = zlib.crc32(b"11" + a.encode())
    assert shared == zlib.crc32(b"1" + b.encode())
    keys = tie_keys([a, b], 5, **gc)
    tf.comment("Ties. In groupcache's labels, point 11 of a = %s and point 1\n"
               "of b = %s are the same text, '11%s', so both sit at\n"
               "crc32a = %d. The node that joined last owns it (a Go map\n"
               "overwrite); the 'tie:i' keys land on that point. ties=first gives it\n"
               "to the node that joined first, ties=name to the name that sorts first.\n"
               "ch_points lists the winner first." % (a, b, a, shared))
    key_list = ", ".join("(%s)" % sql_str(k) for k in keys)
    for order in ([a, b], [b, a]):
        for ties in ("last", "first", "name"):
            ring = model_of(order, ties=ties, **gc)
            winner = ring.locate(keys[0].encode())
            spec = json_spec(order, algorithm="ring", ties=ties, **gc)
            tf.query("T", "SELECT DISTINCT ch_locate(column1, %s) FROM (VALUES %s)"
                     % (spec, key_list), [(winner,)])
            tf.query("ITI", "SELECT token, node, replica FROM ch_points(%s) WHERE token = %d"
                     % (spec, shared), [pt for pt in ring.points if pt[0] == shared])
        ring = groupcache(order)
        tf.query("T", "SELECT DISTINCT ch_locate(column1, %s) FROM (VALUES %s)"
                 % (json_spec(order, algorithm="groupcache"), key_list),
                 [(ring.locate(keys[0].encode()),)])

    c = "0.0.0.1:11211"
    assert zlib.crc32(b"111" + c.encode()) == shared
    tf.comment("In a table, join order is the order of the INSERTs. With 160 replicas\n"
               "point 111 of %s is that text too. b joins last and owns the point;\n"
               "deleting b gives it back to a; a node that joins again joins last; a\n"
               "renamed node keeps its place in the join order (b renamed to c stays\n"
               "before a, so a keeps the point)." % c)
    tg = dict(gc, vnodes=160)
    union = model_of([a, b, c], **tg)
    keys = []
    i = 0
    while len(keys) < 5:
        k = "tie:%d" % i
        at = bisect.bisect_left(union.positions, union.key_position(k.encode()))
        if union.positions[at % len(union.positions)] == shared:
            keys.append(k)
        i += 1
    key_list = ", ".join("(%s)" % sql_str(k) for k in keys)
    tf.statement("CREATE VIRTUAL TABLE tg USING chash(algorithm=groupcache, vnodes=160)")
    steps = [
        ("INSERT INTO tg(node) VALUES (%s)" % sql_str(a), [a]),
        ("INSERT INTO tg(node) VALUES (%s)" % sql_str(b), [a, b]),
        ("DELETE FROM tg WHERE node = %s" % sql_str(b), [a]),
        ("INSERT INTO tg(node) VALUES (%s)" % sql_str(b), [a, b]),
        ("DELETE FROM tg WHERE node = %s" % sql_str(a), [b]),
        ("INSERT INTO tg(node) VALUES (%s)" % sql_str(a), [b, a]),
        ("UPDATE tg SET node = %s WHERE node = %s" % (sql_str(c), sql_str(b)), [c, a]),
    ]
    owners = []
    for sql, order in steps:
        tf.statement(sql)
        owner = model_of(order, ties="last", **tg).locate(keys[0].encode())
        owners.append(owner)
        tf.query("T", "SELECT DISTINCT ch_locate(column1, 'tg') FROM (VALUES %s)"
                 % key_list, [(owner,)])
    assert owners == [a, b, a, b, b, a, a], owners
    tf.comment("Every version keeps its own join order.")
    tf.query("T", "%s SELECT group_concat(ch_locate(%s, 'tg@' || i), ' ') FROM s"
             % (series(7), sql_str(keys[0])), [(" ".join(owners),)])


def gen_options(tf):
    nodes = [("10.0.0.1:11211", 1), ("NodeB", 2), ("node-c", 0.5)]
    tf.comment("Labels, first points and weights: index first .. first+p-1 with\n"
               "p = round(vnodes*weight); %% is a literal %; either order of %s, %d.")
    cases = [
        dict(label="%s:%d", first=0, hash="md5be", ties="last", vnodes=40),
        dict(label="%d-%s", first=1, hash="md5be", vnodes=40),
        dict(label="100%% %s (%d)", first=0, hash="crc32a", ties="first", vnodes=10),
        dict(label="%s#%d", first=0, hash="xxh3", vnodes=20),
        dict(label="%d%s", first=1, hash="xxh64", seed=7, vnodes=20),
    ]
    for opts in cases:
        ring = model_of(nodes, **opts)
        spec = json_spec(nodes, **opts)
        locate_keys(tf, ring, spec, 200)
        tf.query("ITI", "SELECT token, node, replica FROM ch_points(%s)" % spec,
                 point_rows(ring))
    ring = model_of(nodes, **cases[0])
    tf.statement("CREATE VIRTUAL TABLE own USING chash(label='%s:%d', first=0, hash=md5be, "
                 "ties=last, vnodes=40)")
    tf.statement("INSERT INTO own(node, weight) VALUES %s"
                 % ", ".join("(%s, %r)" % (sql_str(n), w) for n, w in nodes))
    locate_keys(tf, ring, "'own'", 200)
    check_shares(tf, "own", ring, nodes)
    tf.comment("The default label '%s#%d', first 1, ties name is the plain ring.")
    plain = [n for n, _ in nodes]
    tf.query("I", "%s SELECT count(*) FROM s WHERE ch_locate('k' || i, %s) IS NOT "
             "ch_locate('k' || i, %s)" % (series(300), json_spec(plain),
                                           json_spec(plain, label="%s#%d", first=1, ties="name")),
             [(0,)])


def generate():
    tf = TestFile()
    gen_hashes(tf)
    gen_worked(tf)
    gen_java_router(tf)
    gen_groupcache(tf)
    gen_ties(tf)
    gen_options(tf)
    return tf.text()


if __name__ == "__main__":
    genfiles.main("ownring_gen.py", [("ownring.test", generate)])

#!/usr/bin/python3
"""tests/gen/reference.py: an independent reference model of chash's placement.

It computes, in plain Python, what chash must answer, from the rules in
ARCHITECTURE.md and docs/ only (not from chash's C code and not from
chash's output), and writes the expected values into sqllogictest files:

    tests/gen/hash.test        ch_hash of keys of every type, xxh3 and xxh64
    tests/gen/placement.test   ch_locate on inline JSON rings, ring tables,
                           versions (name@N, name@-K) and modn
    tests/gen/shares.test      the points and share columns

The rules modelled:
  - hash(data) = xxh3_64(data, seed) or xxh64(data, seed), unsigned 64-bit;
    ch_hash returns it reinterpreted as a signed int64.
  - Keys: TEXT -> UTF-8 bytes, INTEGER -> decimal text, BLOB -> bytes,
    a REAL whose value is a whole number in [-2^63, 2^63) -> the decimal
    text of that integer (42.0 -> "42", -0.0 -> "0"), any other REAL ->
    SQLite's text form (asked of Python's own sqlite3 module, which is
    SQLite, not chash), NULL -> NULL.
  - ring: node N has points i = 1..round(vnodes*weight) (half away from
    zero, at least 1) at hash("N#i"); points sorted by (position unsigned,
    name bytes, i); a key belongs to the first point with position >= the
    key's, wrapping to the first point.
  - modn: nodes sorted by name bytes; owner = hash(key) mod n.
  - share: point k owns the positions (pos[k-1], pos[k]]; point 0 also owns
    the wrap-around (pos[n-1], 2^64). Computed exactly with integers.

Usage (Debian's python3 with python3-xxhash; the pyenv python3 cannot load
SQLite extensions and lacks xxhash):

    /usr/bin/python3 tests/gen/reference.py --write   regenerate the .test files
    /usr/bin/python3 tests/gen/reference.py --check   exit 1, with a diff, if the
                                                  committed files differ
"""

import bisect
import hashlib
import json
import math
import os
import sqlite3
from decimal import Decimal, ROUND_HALF_UP

import xxhash

import genfiles
from testkit import sql_text as sql_str

M64 = 1 << 64
HERE = os.path.dirname(os.path.abspath(__file__))

# Result sets larger than this are written as "N values hashing to MD5";
# smaller ones literally, so a reader sees real values.
LITERAL_MAX = 30


# ---------------------------------------------------------------- the model

def hash64(hash_name, seed, data):
    """The unsigned 64-bit position of bytes data."""
    if hash_name == "xxh3":
        return xxhash.xxh3_64_intdigest(data, seed)
    if hash_name == "xxh64":
        return xxhash.xxh64_intdigest(data, seed)
    raise ValueError(hash_name)


def signed64(u):
    return u - M64 if u >= 1 << 63 else u


_sql = sqlite3.connect(":memory:")


def sql_value(literal):
    """The Python value of a SQL literal, as SQLite itself evaluates it."""
    return _sql.execute("SELECT " + literal).fetchone()[0]


def key_bytes(literal):
    """The bytes chash hashes for the key written as SQL literal, or None."""
    v = sql_value(literal)
    if v is None:
        return None
    if isinstance(v, bytes):
        return v
    if isinstance(v, int):
        return str(v).encode()
    if isinstance(v, float):
        # A whole value that an int64 holds is that integer (SQL holds
        # 42.0 = 42); 2^63 is a double but no int64.
        if math.isfinite(v) and v == math.floor(v) and -2**63 <= v < 2**63:
            return str(int(v)).encode()
        # Any other REAL: SQLite's own text form (e.g. 1e20 -> '1.0e+20').
        return _sql.execute("SELECT CAST(? AS TEXT)", (v,)).fetchone()[0].encode()
    return v.encode("utf-8")


def node_points(vnodes, weight):
    """round(vnodes*weight), half away from zero, at least 1 (in doubles,
    as C computes the product)."""
    x = Decimal(vnodes * weight).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return max(1, int(x))


class Ring:
    """One ring: nodes {name: weight} and the table options."""

    def __init__(self, nodes, algorithm="ring", hash="xxh3", vnodes=160, seed=0):
        self.nodes = dict(nodes)
        self.algorithm, self.hash, self.vnodes, self.seed = algorithm, hash, vnodes, seed
        self.names = sorted(self.nodes, key=lambda n: n.encode())
        if algorithm == "ring":
            pts = []
            for name in self.names:
                for i in range(1, node_points(vnodes, self.nodes[name]) + 1):
                    label = ("%s#%d" % (name, i)).encode()
                    pts.append((hash64(hash, seed, label), name.encode(), i, name))
            pts.sort()
            self.positions = [p[0] for p in pts]
            self.owners = [p[3] for p in pts]

    def points(self, name):
        """Points of a node; modn has none (the points column is NULL)."""
        return node_points(self.vnodes, self.nodes[name]) if self.algorithm == "ring" else None

    def locate(self, literal):
        data = key_bytes(literal)
        if data is None:
            return None
        pos = hash64(self.hash, self.seed, data)
        if self.algorithm == "modn":
            return self.names[pos % len(self.names)]
        k = bisect.bisect_left(self.positions, pos)
        return self.owners[k % len(self.owners)]

    def shares(self):
        """{name: exact share as a float}, from integer counts of positions."""
        count = {n: 0 for n in self.names}
        if self.algorithm == "modn":
            n = len(self.names)
            for j, name in enumerate(self.names):
                count[name] = (M64 - j + n - 1) // n   # p in [0, 2^64), p % n == j
        else:
            pos = self.positions
            count[self.owners[0]] += M64 - pos[-1] + pos[0]
            for k in range(1, len(pos)):
                count[self.owners[k]] += pos[k] - pos[k - 1]
        assert sum(count.values()) == M64
        return {n: c / M64 for n, c in count.items()}


# ------------------------------------------------------- writing test files

def render_text(v):
    """A T value as the runner renders it."""
    if v is None:
        return "NULL"
    b = v.encode("utf-8") if isinstance(v, str) else v
    if not b:
        return "(empty)"
    return "".join(chr(c) if 0x20 <= c <= 0x7E else "@" for c in b)


def render(v, t):
    if v is None:
        return "NULL"
    if t == "I":
        return "%d" % v
    if t == "R":
        return "%.3f" % v
    return render_text(v)


class TestFile:
    def __init__(self, name, title):
        self.name = name
        self.out = [
            "# tests/gen/%s: %s" % (name, title),
            "#",
            "# GENERATED by tests/gen/reference.py, an independent Python model of",
            "# chash's placement: do not edit. Regenerate with",
            "#   /usr/bin/python3 tests/gen/reference.py --write",
            "",
        ]

    def comment(self, text):
        self.out += ["# " + line if line else "#" for line in text.split("\n")]

    def statement(self, sql):
        self.out += ["statement ok", sql, ""]

    def query(self, types, sql, rows):
        """rows: list of tuples of Python values, in the query's order."""
        values = [render(v, t) for row in rows for v, t in zip(row, types)]
        self.out += ["query %s nosort" % types, sql, "----"]
        if len(rows) > LITERAL_MAX:
            digest = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()
            self.out.append("%d values hashing to %s" % (len(values), digest))
        elif len(types) > 1:
            for i in range(0, len(values), len(types)):
                self.out.append("\t".join(values[i:i + len(types)]))
        else:
            self.out += values
        self.out.append("")

    def text(self):
        return "\n".join(self.out).rstrip("\n") + "\n"


def series(n):
    """SQL for the integers 1..n, as a recursive CTE named s(i)."""
    return "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<%d)" % n


# Keys of every type, as SQL literals. No REAL here has more than 15
# significant digits outside the int64 range (2^63 itself, say): SQLite
# 3.40 writes such a REAL with 15 digits and newer versions with up to 17,
# so its text, and where it lands, depends on the SQLite version
# (tests/sql/keys.test compares those with CAST(... AS TEXT) instead).
KEYS = [
    "'hello'", "''", "'a'", "'42'", "'caf\u00e9'", "'\u65e5\u672c\u8a9e'",
    "'\U0001F600 emoji'", "'key with spaces'",
    "0", "1", "42", "-1", "-9223372036854775808", "9223372036854775807",
    "1.5", "-2.25", "1e20", "0.1", "-0.0", "3.0", "42.0", "-7.0", "1e18",
    "0.5e1",
    "x''", "x'00'", "x'00ff'", "x'68656c6c6f'", "NULL",
]

# Whole REALs at the edges of the int64 range and of a double's 53 bits:
# they hash as integers, but quote() shows them differently in different
# SQLite versions, so they are keys of ch_hash only (hash.test), not of the
# placement queries, which show each key with quote().
EDGE_REALS = [
    "-9223372036854775808.0", "9223372036854774784.0", "1.0e15",
    "4503599627370497.0",
]

# Generated keys: 'k1'.., integers and reals, so the model and the SQL agree.
N_KEYS = 300
GEN_KEYS = [
    ("'k' || i", lambda i: "'k%d'" % i),
    ("i * 7919 - 1000000", lambda i: "%d" % (i * 7919 - 1000000)),
    ("i / 8.0", lambda i: repr(i / 8.0)),
    ("i * 1.0", lambda i: repr(i * 1.0)),
]


def key_rows(ring, literals):
    return [(ring.locate(k),) for k in literals]


def locate_all(tf, ring, spec_sql, what=""):
    """Literal keys of every type, then the generated keys, under one spec."""
    values = ", ".join("(%d, %s)" % (i, k) for i, k in enumerate(KEYS))
    tf.query("TT", "SELECT quote(column2), ch_locate(column2, %s) FROM (VALUES %s) ORDER BY column1"
             % (spec_sql, values), [(sql_value("quote(%s)" % k), ring.locate(k)) for k in KEYS])
    for expr, lit in GEN_KEYS:
        keys = [lit(i) for i in range(1, N_KEYS + 1)]
        tf.query("T", "%s SELECT ch_locate(%s, %s) FROM s ORDER BY i"
                 % (series(N_KEYS), expr, spec_sql), key_rows(ring, keys))


# ------------------------------------------------------------ hash.test

def gen_hash():
    tf = TestFile("hash.test", "ch_hash of keys of every type, against the model")
    tf.comment("ch_hash(key) is xxh3_64 with seed 0, as a signed int64; ch_hash(key, 'xxh64')\n"
               "is XXH64 with seed 0. Keys: TEXT as UTF-8, INTEGER as its decimal text,\n"
               "a REAL with a whole value in [-2^63, 2^63) as that INTEGER (42.0 as '42'),\n"
               "any other REAL as SQLite's text form, BLOB as bytes; NULL gives NULL.")
    tf.out.append("")
    for hname in ("xxh3", "xxh64"):
        for k in KEYS + EDGE_REALS:
            data = key_bytes(k)
            sql = ("SELECT ch_hash(%s)" % k if hname == "xxh3"
                   else "SELECT ch_hash(%s, 'xxh64')" % k)
            tf.query("I", sql, [(None if data is None else signed64(hash64(hname, 0, data)),)])
    tf.comment("Integers hash as their decimal text, whole reals in the int64 range as\n"
               "that integer, other reals as SQLite's text form.")
    tf.query("IIIII", "SELECT ch_hash(42) = ch_hash('42'), ch_hash(42.0) = ch_hash('42'), "
             "ch_hash(1e20) = ch_hash('1.0e+20'), ch_hash(4.5) = ch_hash('4.5'), "
             "ch_hash(x'616263') = ch_hash('abc')", [(1, 1, 1, 1, 1)])
    tf.comment("The hash name is case-insensitive.")
    tf.query("I", "SELECT ch_hash('x', 'XXH64') = ch_hash('x', 'xxh64')", [(1,)])
    for hname in ("xxh3", "xxh64"):
        for expr, lit in GEN_KEYS:
            rows = [(signed64(hash64(hname, 0, key_bytes(lit(i)))),) for i in range(1, N_KEYS + 1)]
            tf.query("I", "%s SELECT ch_hash(%s, '%s') FROM s ORDER BY i"
                     % (series(N_KEYS), expr, hname), rows)
    return tf


# ------------------------------------------------------- placement.test

NODES3 = {"alpha": 1.0, "beta": 1.0, "gamma": 1.0}
NODES_W = {"alpha": 0.5, "beta": 1.0, "gamma": 2.5, "d\u00e9lta": 1.0}
BIG_SEED = 18446744073709551615


def json_spec(nodes, weighted, **opts):
    spec = dict(opts)
    spec["nodes"] = dict(nodes) if weighted else sorted(nodes)
    return sql_str(json.dumps(spec, ensure_ascii=False))


def create_table(tf, name, nodes, order=None, **opts):
    args = ", ".join("%s=%s" % (k, v) for k, v in opts.items())
    tf.statement("CREATE VIRTUAL TABLE %s USING chash(%s)" % (name, args))
    values = ", ".join("(%s, %r)" % (sql_str(n), nodes[n]) for n in (order or nodes))
    tf.statement("INSERT INTO %s(node, weight) VALUES %s" % (name, values))


def gen_placement():
    tf = TestFile("placement.test", "ch_locate against the model: inline JSON rings, "
                  "ring tables, versions, modn")

    tf.comment("Inline JSON rings, array form (weights 1) and object form ({name: weight}),\n"
               "with every option. The seed 2^64-1 is written as a JSON string: a JSON number\n"
               "that large reaches SQLite's json_each as a REAL.")
    tf.out.append("")
    cases = [
        (NODES3, False, {}),
        (NODES3, False, {"vnodes": 1}),
        (NODES3, False, {"vnodes": 3, "hash": "xxh64"}),
        (NODES3, False, {"vnodes": 160, "seed": "18446744073709551615"}),
        (NODES3, False, {"hash": "xxh64", "seed": 12345}),
        (NODES_W, True, {}),
        (NODES_W, True, {"vnodes": 1}),
        (NODES_W, True, {"vnodes": 3, "hash": "xxh64", "seed": "18446744073709551615"}),
        (NODES3, False, {"algorithm": "modn"}),
        (NODES_W, True, {"algorithm": "modn", "hash": "xxh64", "seed": 7}),
    ]
    for nodes, weighted, opts in cases:
        model = {k: (int(v) if k == "seed" else v) for k, v in opts.items()}
        ring = Ring(nodes if weighted else {n: 1.0 for n in nodes}, **model)
        spec = json_spec(nodes, weighted, **opts)
        tf.comment("spec %s" % spec)
        locate_all(tf, ring, spec)

    tf.comment("A single-node ring owns everything; a bare JSON array is a ring too.")
    tf.query("TT", "SELECT ch_locate('x', '[\"solo\"]'), ch_locate(1, '{\"nodes\":{\"solo\":2}}')",
             [("solo", "solo")])
    ring = Ring({n: 1.0 for n in NODES3})
    tf.query("T", "SELECT ch_locate('hello', '[\"gamma\",\"alpha\",\"beta\"]')",
             [(ring.locate("'hello'"),)])

    tf.comment("Rounding of vnodes*weight, half away from zero: 3*0.5 = 1.5 -> 2 points,\n"
               "1*2.5 -> 3, 5*0.3 = 1.5 -> 2, 1*0.1 -> 0 -> at least 1. Placement checks\n"
               "the exact point count: one point more or less moves keys.")
    for vnodes, nodes in ((3, {"a": 0.5, "b": 1.0, "c": 1.5}),
                          (1, {"a": 2.5, "b": 0.5, "c": 0.1}),
                          (5, {"a": 0.3, "b": 0.7, "c": 0.9})):
        ring = Ring(nodes, vnodes=vnodes)
        spec = sql_str(json.dumps({"nodes": nodes, "vnodes": vnodes}))
        keys = [GEN_KEYS[0][1](i) for i in range(1, 1001)]
        tf.query("T", "%s SELECT ch_locate('k' || i, %s) FROM s ORDER BY i" % (series(1000), spec),
                 key_rows(ring, keys))

    tf.comment("Ring tables: the same nodes as a table place keys as the JSON ring does.")
    for name, opts in (("t_default", {}), ("t_v3", {"vnodes": 3, "hash": "xxh64"}),
                       ("t_seed", {"seed": BIG_SEED, "vnodes": 1}),
                       ("t_modn", {"algorithm": "modn"})):
        create_table(tf, name, NODES_W, **opts)
        locate_all(tf, Ring(NODES_W, **opts), sql_str(name))

    tf.comment("Versions: every committed change is one version; name@N places keys with\n"
               "version N after later changes, name@-K with the version K before the current.")
    history = [
        ("INSERT INTO hist(node) VALUES ('n1'), ('n2'), ('n3')",
         {"n1": 1.0, "n2": 1.0, "n3": 1.0}),
        ("INSERT INTO hist(node, weight) VALUES ('n4', 2.0)",
         {"n1": 1.0, "n2": 1.0, "n3": 1.0, "n4": 2.0}),
        ("DELETE FROM hist WHERE node = 'n2'",
         {"n1": 1.0, "n3": 1.0, "n4": 2.0}),
        ("UPDATE hist SET weight = 0.5 WHERE node = 'n1'",
         {"n1": 0.5, "n3": 1.0, "n4": 2.0}),
        ("UPDATE hist SET node = 'n5' WHERE node = 'n3'",
         {"n1": 0.5, "n5": 1.0, "n4": 2.0}),
    ]
    tf.statement("CREATE VIRTUAL TABLE hist USING chash(vnodes=20)")
    for sql, _ in history:
        tf.statement(sql)
    tf.query("I", "SELECT ch_epoch('hist')", [(len(history),)])
    keys = [GEN_KEYS[0][1](i) for i in range(1, N_KEYS + 1)]
    for v, (sql, nodes) in enumerate(history, 1):
        ring = Ring(nodes, vnodes=20)
        tf.comment("version %d: after %s" % (v, sql))
        for spec in ("hist@%d" % v, "hist@-%d" % (len(history) - v)):
            tf.query("T", "%s SELECT ch_locate('k' || i, '%s') FROM s ORDER BY i"
                     % (series(N_KEYS), spec), key_rows(ring, keys))
    ring = Ring(history[-1][1], vnodes=20)
    tf.query("T", "%s SELECT ch_locate('k' || i, 'hist') FROM s ORDER BY i" % series(N_KEYS),
             key_rows(ring, keys))
    tf.comment("ch_moved between versions agrees with the two placements.")
    old, new = Ring(history[0][1], vnodes=20), Ring(history[1][1], vnodes=20)
    tf.query("I", "%s SELECT ch_moved('k' || i, 'hist@1', 'hist@2') FROM s ORDER BY i"
             % series(N_KEYS),
             [(int(old.locate(k) != new.locate(k)),) for k in keys])
    return tf


# ---------------------------------------------------------- shares.test

def gen_shares():
    tf = TestFile("shares.test", "the points and share columns, against the exact model")
    tf.comment("share is the exact fraction of the 2^64 positions a node owns. Each is\n"
               "shown with 3 decimals and also checked to within 1e-12 of the exact value\n"
               "(a double has 53 bits; 1e-12 leaves room for the C code summing arcs).")
    tf.out.append("")
    cases = [
        ("s_one", {"only": 1.0}, {}),
        ("s_v1", {"a": 1.0, "b": 1.0, "c": 1.0}, {"vnodes": 1}),
        ("s_v3", {"a": 0.5, "b": 1.0, "c": 2.5}, {"vnodes": 3}),
        ("s_v160", {"a": 0.5, "b": 1.0, "c": 2.5, "d": 1.0}, {}),
        ("s_xxh64", {"a": 1.0, "b": 2.0, "c": 3.0}, {"hash": "xxh64", "vnodes": 10}),
        ("s_seed", {"a": 1.0, "b": 1.0}, {"seed": BIG_SEED, "vnodes": 2}),
        ("s_round", {"a": 0.5, "b": 0.1, "c": 1.5}, {"vnodes": 1}),
        ("s_modn", {"a": 1.0, "b": 5.0, "c": 1.0}, {"algorithm": "modn"}),
    ]
    for name, nodes, opts in cases:
        ring = Ring(nodes, **opts)
        create_table(tf, name, nodes, **opts)
        shares = ring.shares()
        names = ring.names
        tf.query("TRIR", "SELECT node, weight, points, share FROM %s ORDER BY node" % name,
                 [(n, nodes[n], ring.points(n), shares[n]) for n in names])
        checks = ", ".join("(%s, %r)" % (sql_str(n), shares[n]) for n in names)
        tf.query("T", "WITH x(n, s) AS (VALUES %s) SELECT n FROM x LEFT JOIN %s ON n = node "
                 "WHERE share IS NULL OR abs(share - s) >= 1e-12" % (checks, name), [])
        tf.query("I", "SELECT abs(sum(share) - 1.0) < 1e-12 FROM %s" % name, [(1,)])
    return tf


# ----------------------------------------------------------------- main

GENERATORS = [gen_hash, gen_placement, gen_shares]


def file_maker(gen):
    return lambda: gen().text()


if __name__ == "__main__":
    genfiles.main("reference.py", [(gen().name, file_maker(gen)) for gen in GENERATORS])

#!/usr/bin/python3
"""Generate tests/gen/analysis.test: the table-valued functions of chash.

    /usr/bin/python3 tests/gen/analysis_gen.py --write  write tests/gen/analysis.test
    /usr/bin/python3 tests/gen/analysis_gen.py --check  fail if it is out of date

Expected rows of ch_points, ch_arcs, ch_diff and ch_replicas come from the
small models below (Debian's python3-xxhash), written from the placement
rules in ARCHITECTURE.md, docs/algorithms.md and docs/analysis.md, not from
chash's output: the ring, ketama (twemproxy's float formula and MD5 words,
checked here against twemproxy's point counts for a weighted pool), maglev
(Envoy's fill, checked against Envoy's table), and jump and rendezvous from
tests/gen/gen_algos.py. Properties and errors are checked by hand-written SQL
in tests/sql/analysis_props.test and tests/sql/analysis_algos.test.
"""
import hashlib
import math
import struct

import genfiles

import xxhash

from gen_algos import jump, rendezvous, hash128to64

SPACE = 1 << 64


def signed(u, bits=64):
    return u - SPACE if bits == 64 and u >= 1 << 63 else u


def pos(data, seed=0):
    return xxhash.xxh3_64_intdigest(data.encode(), seed)


def points_of(nodes, vnodes):
    """[(position, node, replica)] in ring order. nodes: {name: weight}."""
    names = sorted(nodes, key=lambda n: n.encode())
    pts = []
    for ni, name in enumerate(names):
        w = vnodes * nodes[name]
        count = max(1, int(w + 0.5))          # half away from zero, w > 0
        for i in range(1, count + 1):
            pts.append((pos(f"{name}#{i}"), ni, i))
    pts.sort()
    return [(p, names[ni], i) for p, ni, i in pts]


def owner(pts, p):
    for q, name, _ in pts:
        if q >= p:
            return name
    return pts[0][1]


def split(s, e, bits=64):
    """The signed rows of the cyclic range [s, e] of unsigned positions:
    two where the signed value drops (at 2^63 in a 64-bit space, at the
    wrap in a smaller one)."""
    S, E = signed(s, bits), signed(e, bits)
    if S <= E:
        return [(S, E)]
    if bits == 64:
        return [(S, (1 << 63) - 1), (-(1 << 63), E)]
    return [(S, (1 << bits) - 1), (0, E)]


def arcs(pts, bits=64):
    rows = []
    for k, (p, name, _) in enumerate(pts):
        prev = pts[k - 1][0]
        if k > 0 and prev == p:
            continue
        for S, E in split((prev + 1) % (1 << bits), p, bits):
            rows.append((S, E, name))
    return rows


def diff(old, new, bits=64):
    """Pieces between consecutive distinct positions of both rings, merged
    while src and dst stay the same, also across the wrap; the first piece
    wraps around."""
    bounds = sorted({p for p, _, _ in old} | {p for p, _, _ in new})
    rows, run = [], None
    prev = bounds[-1]
    for u in bounds:
        src, dst = owner(old, u), owner(new, u)
        if run and (src == dst or (src, dst) != tuple(run[2:])):
            rows.append(run)
            run = None
        if src != dst and run is None:
            run = [(prev + 1) % (1 << bits), None, src, dst]
        if run:
            run[1] = u
        prev = u
    if run:
        rows.append(run)
    # a run through the end that continues the first one is one row, last
    if (len(rows) > 1 and rows[0][0] == (bounds[-1] + 1) % (1 << bits)
            and rows[-1][1] == bounds[-1] and rows[0][2:] == rows[-1][2:]):
        rows[-1][1] = rows[0][1]
        rows.pop(0)
    out = []
    for s, e, src, dst in rows:
        for S, E in split(s, e, bits):
            out.append((S, E, src, dst))
    return out


def replicas(pts, key, n, keypos=None):
    p = (keypos or pos)(key)
    k0 = next((k for k, (q, _, _) in enumerate(pts) if q >= p), 0)
    seen = []
    for step in range(len(pts)):
        name = pts[(k0 + step) % len(pts)][1]
        if name not in seen:
            seen.append(name)
    return seen[:n]


def share(S, E, bits=64):
    return "%.3f" % ((E - S + 1) / (1 << bits))


# ---- ketama: twemproxy's ring (docs/algorithms.md)

def f32(x):
    """x rounded to single precision, as C's float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def md5_words(data):
    d = hashlib.md5(data.encode()).digest()
    return [int.from_bytes(d[4 * w:4 * w + 4], "little") for w in range(4)]


def md5_pos(key):
    return md5_words(key)[0]


def ketama_points(nodes, vnodes=160):
    """[(position, node, replica)] in ring order; replica 4i+w is word w of
    MD5("N-i"). nodes: {name: weight}. Ties: shorter names first, then
    bytewise, then generation order."""
    W, n = sum(nodes.values()), len(nodes)
    pts = []
    for name, w in nodes.items():
        t = f32(f32(w) / f32(W))
        t = f32(t * f32(vnodes))
        t = f32(t / 4.0)
        t = f32(t * f32(n))
        t = f32(t + 1e-10)
        for i in range(int(t)):
            for wd, p in enumerate(md5_words(f"{name}-{i}")):
                rank = (len(name.encode()), name.encode())
                pts.append((p, rank, 4 * i + wd, name))
    pts.sort()
    return [(p, name, r) for p, _, r, name in pts]


def check_ketama():
    """twemproxy's counts: 80, 160 and 240 points for weights 1, 2, 3."""
    pts = ketama_points({"127.0.0.1": 1, "127.0.0.1:21212": 2,
                         "127.0.0.1:21213": 3})
    counts = {}
    for _, name, _ in pts:
        counts[name] = counts.get(name, 0) + 1
    assert counts == {"127.0.0.1": 80, "127.0.0.1:21212": 160,
                      "127.0.0.1:21213": 240}, counts


# ---- maglev: Envoy's table (docs/algorithms.md)

def xxh64(name, seed):
    return xxhash.xxh64_intdigest(name.encode(), seed)


def maglev_table(nodes, m):
    """slot -> node name. nodes: {name: weight}."""
    names = sorted(nodes, key=lambda n: n.encode())
    total = sum(nodes.values())
    weight = {n: nodes[n] / total for n in names}
    wmax = max(weight.values())
    offset = {n: xxh64(n, 0) % m for n in names}
    skip = {n: xxh64(n, 1) % (m - 1) + 1 for n in names}
    nxt = {n: 0 for n in names}
    target = {n: 0.0 for n in names}
    table = [None] * m
    filled, rnd = 0, 1
    while filled < m:
        for n in names:
            if filled == m:
                break
            if rnd * weight[n] < target[n]:
                continue
            target[n] += wmax
            while table[(offset[n] + skip[n] * nxt[n]) % m] is not None:
                nxt[n] += 1
            table[(offset[n] + skip[n] * nxt[n]) % m] = n
            nxt[n] += 1
            filled += 1
        rnd += 1
    return table


def maglev_preference(name, m, slot):
    """The j with (offset + skip*j) mod m = slot, by search."""
    offset, skip = xxh64(name, 0) % m, xxh64(name, 1) % (m - 1) + 1
    return next(j for j in range(m) if (offset + skip * j) % m == slot)


def check_maglev():
    hosts = ["127.0.0.1:%d" % p for p in range(90, 96)]
    table = maglev_table({h: 1 for h in hosts}, 7)
    assert table == [hosts[i] for i in [2, 4, 0, 1, 5, 0, 3]], table


def class_share(r, period, bits=64):
    """Share of the positions p < 2^bits with p mod period = r."""
    return "%.3f" % ((((1 << bits) - 1 - r) // period + 1) / (1 << bits))


def residue_diff(old, new, period, bits=64):
    """[(src, dst, share)] per residue class of period whose owner changes;
    old and new: functions of the class."""
    return [(old(r), new(r), class_share(r, period, bits))
            for r in range(min(period, 1 << bits)) if old(r) != new(r)]


def walk(units, k0, n):
    """The first n distinct owners of units, from unit k0 on, wrapping."""
    seen = []
    for i in range(len(units)):
        u = units[(k0 + i) % len(units)]
        if u not in seen:
            seen.append(u)
    return seen[:n]


def rendezvous_order(p, nodes, seed=0, h=xxhash.xxh3_64_intdigest):
    """Nodes by falling score for position p; ties in name order."""
    def score(name):
        c = hash128to64(h(name.encode(), seed=seed), p)
        return -nodes[name] / math.log(((c >> 12) + 0.5) / 2.0 ** 52)
    names = sorted(nodes, key=lambda s: s.encode())
    return sorted(names, key=lambda s: -score(s))


def query(types, sql, rows):
    lines = [f"query {types} nosort", sql, "----"]
    lines += ["\t".join(str(v) for v in r) for r in rows]
    return "\n".join(lines) + "\n"


def error(sql, msg):
    return f"statement error\n{sql}\n----\n{msg}\n"


def generate():
    v1 = {"a": 1, "b": 1}
    v2 = {"a": 1, "b": 1, "c": 1}
    old, new = points_of(v1, 4), points_of(v2, 4)
    out = ["""# analysis.test: ch_points, ch_arcs, ch_diff, ch_replicas on small rings.
# GENERATED by tests/gen/analysis_gen.py (edit that, not this): the expected rows
# come from its Python model of the ring, not from chash.
"""]
    out.append("""statement ok
CREATE VIRTUAL TABLE shards USING chash(vnodes=4)

statement ok
INSERT INTO shards(node) VALUES ('a'), ('b')

statement ok
INSERT INTO shards(node) VALUES ('c')
""")
    # ch_points: every point, every spec form
    rows = [(signed(p), n, i) for p, n, i in new]
    out.append(query("ITI", "SELECT token, node, replica FROM ch_points('shards')",
                     rows))
    out.append(query("ITI", "SELECT token, node, replica FROM ch_points", rows))
    rows1 = [(signed(p), n, i) for p, n, i in old]
    for spec in ["'shards@1'", "1", "'shards@-1'", "'main.shards@1'",
                 """'{"nodes":["b","a"],"vnodes":4}'""",
                 """'{"nodes":{"a":1,"b":1},"vnodes":4}'"""]:
        out.append(query("ITI", f"SELECT token, node, replica FROM ch_points({spec})",
                         rows1))
    out.append(query("IT", "SELECT token, node FROM ch_points('shards') WHERE node='b'",
                     [(signed(p), n) for p, n, _ in new if n == "b"]))
    out.append(query("II", "SELECT token, replica FROM ch_points('shards') WHERE node='c'",
                     [(signed(p), i) for p, n, i in new if n == "c"]))
    out.append(query("I", "SELECT count(*) FROM ch_points('shards') WHERE node='zz'",
                     [(0,)]))
    # weights: round(vnodes*w) points, half away from zero
    wr = {"x": 0.375, "y": 0.125}
    out.append(query("ITI", """SELECT token, node, replica FROM ch_points('{"nodes":{"x":0.375,"y":0.125},"vnodes":4}')""",
                     [(signed(p), n, i) for p, n, i in points_of(wr, 4)]))
    # ch_arcs
    out.append(query("IITR", "SELECT start, \"end\", node, share FROM ch_arcs('shards')",
                     [(S, E, n, share(S, E)) for S, E, n in arcs(new)]))
    out.append(query("IIT", "SELECT start, \"end\", node FROM ch_arcs WHERE node='a'",
                     [(S, E, n) for S, E, n in arcs(new) if n == "a"]))
    one = points_of({"solo": 1}, 1)
    out.append(query("IITR", """SELECT start, "end", node, share FROM ch_arcs('{"nodes":["solo"],"vnodes":1}')""",
                     [(S, E, n, share(S, E)) for S, E, n in arcs(one)]))
    # ch_diff
    out.append(query("IITTR", "SELECT start, \"end\", src, dst, share FROM ch_diff('shards@1', 'shards')",
                     [(S, E, s, d, share(S, E)) for S, E, s, d in diff(old, new)]))
    out.append(query("IITTR", "SELECT start, \"end\", src, dst, share FROM ch_diff('shards', 'shards@1')",
                     [(S, E, s, d, share(S, E)) for S, E, s, d in diff(new, old)]))
    # a run through the wrap that continues the first run is one row
    o2 = points_of({"db-a": 1, "db-b": 1}, 4)
    n2 = points_of({"db-a": 1, "db-b": 1, "db-c": 1}, 4)
    out.append(query("IITTR", """SELECT start, "end", src, dst, share FROM ch_diff('{"nodes":["db-a","db-b"],"vnodes":4}', '{"nodes":["db-a","db-b","db-c"],"vnodes":4}')""",
                     [(S, E, s, d, share(S, E)) for S, E, s, d in diff(o2, n2)]))
    # ch_replicas
    for key, n in [("user:42", 2), ("user:7", 3), ("k", 10), ("", 1)]:
        want = replicas(new, key, n)
        out.append(query("IT", f"SELECT rank, node FROM ch_replicas('{key}', {n}, 'shards')",
                         [(r + 1, name) for r, name in enumerate(want)]))
    want = replicas(new, "42", 3)
    out.append(query("IT", "SELECT rank, node FROM ch_replicas(42, 3)",
                     [(r + 1, name) for r, name in enumerate(want)]))
    want = replicas(old, "42", 3)
    out.append(query("IT", "SELECT rank, node FROM ch_replicas(42, 3, 1)",
                     [(r + 1, name) for r, name in enumerate(want)]))
    out += generate_algos()
    return "\n".join(out)


def spec(algorithm, nodes, **opts):
    """An inline JSON spec; nodes: a list (weight 1) or {name: weight}."""
    import json
    d = {"algorithm": algorithm, "nodes": nodes}
    d.update(opts)
    return json.dumps(d, separators=(",", ":"))


def replica_rows(names):
    return [(r + 1, name) for r, name in enumerate(names)]


def generate_algos():
    """ketama, maglev, jump, rendezvous, and the ring in 32-bit spaces."""
    check_ketama()
    check_maglev()
    out = ["# ---- the other algorithms (docs/analysis.md, algorithms table)\n"]
    # ketama: 32-bit points; replica 4i+w is word w of MD5("N-i")
    k1 = {"a": 1, "bb": 2}
    k2 = {"a": 1, "bb": 2, "c": 1}
    s1, s2 = spec("ketama", k1, vnodes=8), spec("ketama", k2, vnodes=8)
    p1, p2 = ketama_points(k1, 8), ketama_points(k2, 8)
    out.append(query("ITI", f"SELECT token, node, replica FROM ch_points('{s1}')",
                     [(p, n, i) for p, n, i in p1]))
    out.append(query("II", f"SELECT token, replica FROM ch_points('{s2}') WHERE node='c'",
                     [(p, i) for p, n, i in p2 if n == "c"]))
    out.append(query("IITR", f"SELECT start, \"end\", node, share FROM ch_arcs('{s2}')",
                     [(S, E, n, share(S, E, 32)) for S, E, n in arcs(p2, 32)]))
    out.append(query("IITTR", f"SELECT start, \"end\", src, dst, share FROM ch_diff('{s1}', '{s2}')",
                     [(S, E, a, b, share(S, E, 32)) for S, E, a, b in diff(p1, p2, 32)]))
    for key, n in [("user:42", 2), ("k", 5)]:
        out.append(query("IT", f"SELECT rank, node FROM ch_replicas('{key}', {n}, '{s2}')",
                         replica_rows(replicas(p2, key, n, md5_pos))))
    # the ring and ketama compared, both with md5 keys
    r1 = spec("ring", {"a": 1, "bb": 1}, vnodes=3, hash="md5")
    rp = []
    for name in sorted(["a", "bb"]):
        rp += [(md5_pos(f"{name}#{i}"), name, i) for i in range(1, 4)]
    rp.sort()
    out.append(query("IITR", f"SELECT start, \"end\", node, share FROM ch_arcs('{r1}')",
                     [(S, E, n, share(S, E, 32)) for S, E, n in arcs(rp, 32)]))
    out.append(query("IITTR", f"SELECT start, \"end\", src, dst, share FROM ch_diff('{r1}', '{s1}')",
                     [(S, E, a, b, share(S, E, 32)) for S, E, a, b in diff(rp, p1, 32)]))
    # maglev: slots as points (token = slot, replica = preference index)
    # and as arcs (no range: NULL bounds, exact share)
    m1 = {"a": 1, "b": 1, "c": 2}
    m2 = {"a": 1, "b": 1, "c": 2, "d": 1}
    t1, t2 = maglev_table(m1, 7), maglev_table(m2, 7)
    g1, g2 = spec("maglev", m1, table=7), spec("maglev", m2, table=7)
    out.append(query("ITI", f"SELECT token, node, replica FROM ch_points('{g1}')",
                     [(s_, n, maglev_preference(n, 7, s_)) for s_, n in enumerate(t1)]))
    out.append(query("TTTR", f"SELECT quote(start), quote(\"end\"), node, share FROM ch_arcs('{g2}')",
                     [("NULL", "NULL", n, class_share(s_, 7)) for s_, n in enumerate(t2)]))
    out.append(query("TTR", f"SELECT src, dst, share FROM ch_diff('{g1}', '{g2}')",
                     residue_diff(lambda r: t1[r % 7], lambda r: t2[r % 7], 7)))
    # tables of 7 and 11 slots: residue classes of 77
    t3 = maglev_table(m2, 11)
    g3 = spec("maglev", m2, table=11)
    out.append(query("TTR", f"SELECT src, dst, share FROM ch_diff('{g1}', '{g3}')",
                     residue_diff(lambda r: t1[r % 7], lambda r: t3[r % 11], 77)))
    # modn against maglev, both with xxh64 keys: classes of lcm(3, 7) = 21
    mo = spec("modn", ["a", "b", "c"], hash="xxh64")
    out.append(query("TTR", f"SELECT src, dst, share FROM ch_diff('{mo}', '{g1}')",
                     residue_diff(lambda r: "abc"[r % 3], lambda r: t1[r % 7], 21)))
    for key, n in [("user:42", 3), ("k", 9)]:
        p = xxhash.xxh64_intdigest(key.encode())
        out.append(query("IT", f"SELECT rank, node FROM ch_replicas('{key}', {n}, '{g2}')",
                         replica_rows(walk(t2, p % 7, n))))
    # jump: the owner's bucket, then the next buckets in join order
    order = ["zeta", "alpha", "mu", "beta"]
    js = spec("jump", order)
    for key in ["user:42", "k", "x"]:
        p = pos(key)
        out.append(query("IT", f"SELECT rank, node FROM ch_replicas('{key}', 3, '{js}')",
                         replica_rows(walk(order, jump(p, 4), 3))))
    # rendezvous: nodes by falling score
    rv = {"db-a": 1.0, "db-b": 2.0, "db-c": 0.5, "db-d": 3.0}
    rs = spec("rendezvous", rv)
    for key in ["user:42", "k", "x"]:
        want = rendezvous_order(pos(key), rv)
        assert want[0] == rendezvous(pos(key), rv)
        out.append(query("IT", f"SELECT rank, node FROM ch_replicas('{key}', 4, '{rs}')",
                         replica_rows(want)))
    return out


if __name__ == "__main__":
    genfiles.main("analysis_gen.py", [("analysis.test", generate)])

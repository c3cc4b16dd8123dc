"""
tests/harness/make_stored_rings.py: writes tests/sql/stored_rings.test, the
fixture that proves rings written by one chash read back identically in a
later one. Run it once with the older build, and commit its output:

    /usr/bin/python3 tests/harness/make_stored_rings.py OLD/chash.so \
        tests/sql/stored_rings.test COMMIT

It creates a ring of every algorithm with options other than the defaults,
adds three nodes in two commits, and writes the rows of the rings' shadow
tables (loaded through writable_schema, as that build wrote them) and what
that build answered for them: the owners of 300 keys, the points, a clean
ch_check, and (for the build under test) a new ring with the same options
must store the same option rows. Not run by make gen: its answers are the
older build's, not the current one's.
"""
import sqlite3, hashlib, sys
ext, out, commit = sys.argv[1], sys.argv[2], sys.argv[3]
RINGS = [
  ("s_ring",       "algorithm=ring, hash=xxh64, vnodes=7, seed=42, label='%s:%d', first=0, ties=last, hash_tag='{}'"),
  ("s_ring_first", "vnodes=3, ties=first, label='%d-%s'"),
  ("s_ketama",     "algorithm=ketama, vnodes=40, hash_tag='::'"),
  ("s_jump",       "algorithm=jump, seed=7"),
  ("s_rendezvous", "algorithm=rendezvous, hash=xxh64, seed=9"),
  ("s_maglev",     "algorithm=maglev, table=13"),
  ("s_modn",       "algorithm=modn, hash=fnv1a_32"),
  ("s_nginx",      "algorithm=nginx"),
  ("s_hashring",   "algorithm=hashring, vnodes=8"),
  ("s_haproxy",    "algorithm=haproxy, hash=djb2, avalanche=0"),
  ("s_haproxy_av", "algorithm=haproxy, hash=wt6"),
  ("s_dubbo",      "algorithm=dubbo, vnodes=8"),
  ("s_envoy",      "algorithm=envoy_ring, min_ring=16, max_ring=64"),
  ("s_groupcache", "algorithm=groupcache, vnodes=5, hash=fnv1a_32"),
  ("s_redis",      "algorithm=redis_cluster, hash_tag='{}'"),
]
NODES = {"s_nginx": ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]}
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(ext)
for name, opts in RINGS:
    db.execute("CREATE VIRTUAL TABLE %s USING chash(%s)" % (name, opts))
    nodes = NODES.get(name, ["alpha", "beta", "gamma"])
    w2 = 1 if name in ("s_jump", "s_groupcache", "s_redis", "s_modn", "s_dubbo", "s_rendezvous", "s_nginx", "s_hashring", "s_envoy", "s_maglev", "s_ketama") else 2
    db.execute("INSERT INTO %s(node) VALUES (?)" % name, (nodes[0],))
    db.execute("INSERT INTO %s(node, weight) VALUES (?, ?)" % name, (nodes[1], w2))
    db.commit()
    db.execute("INSERT INTO %s(node) VALUES (?)" % name, (nodes[2],))
    db.commit()
# The dump: schema rows of the rings and their shadow tables, then rows.
stmts = ["PRAGMA writable_schema=ON"]
for name, _ in RINGS:
    sql = db.execute("SELECT sql FROM sqlite_schema WHERE name=?", (name,)).fetchone()[0]
    stmts.append("INSERT INTO sqlite_schema(type, name, tbl_name, rootpage, sql) VALUES ('table', '%s', '%s', 0, %s)"
                 % (name, name, "'" + sql.replace("'", "''") + "'"))
stmts.append("PRAGMA writable_schema=OFF")
def lit(v):
    if v is None: return "NULL"
    if isinstance(v, (int, float)): return repr(v)
    return "'" + str(v).replace("'", "''") + "'"
for name, _ in RINGS:
    for sfx in ("config", "nodes", "history"):
        t = "%s_%s" % (name, sfx)
        stmts.append(db.execute("SELECT sql FROM sqlite_schema WHERE name=?", (t,)).fetchone()[0])
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
        for row in db.execute("SELECT * FROM %s ORDER BY 1" % t):
            stmts.append("INSERT INTO %s(%s) VALUES (%s)" % (t, ", ".join('"%s"' % c for c in cols), ", ".join(lit(v) for v in row)))
def md5lines(vals):
    h = hashlib.md5()
    for v in vals: h.update((("NULL" if v is None else str(v)) + "\n").encode())
    return "%d values hashing to %s" % (len(vals), h.hexdigest())
KEYS = "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i<300) "
o = []
o.append("""# Rings written by chash at commit %s (before each algorithm owned its
# options), read back by this chash: their shadow tables as that build
# wrote them (tests/harness/make_stored_rings.py: a CREATE of each ring
# below, three nodes in two commits, then the rows of its three tables),
# and what that build answered for them. Each ring's options must read
# back as they were written: the same placement of 300 keys, the same
# points, a clean ch_check, and a new ring created with the same options
# stores the same option rows.
""" % commit)
o.append("statement ok\n" + ";\n".join(stmts) + "\n")
o.append("reopen\n")
for name, opts in RINGS:
    o.append("# %s: chash(%s)" % (name, opts))
    vals = [r[0] for r in db.execute(KEYS + "SELECT ch_locate('key' || i || '{t' || (i%%7) || '}', '%s') FROM k ORDER BY i" % name)]
    o.append("query T nosort\n" + KEYS + "SELECT ch_locate('key' || i || '{t' || (i%%7) || '}', '%s') FROM k ORDER BY i\n----\n%s\n" % (name, md5lines(vals)))
    try:
        rows = db.execute("SELECT node, token FROM ch_points('%s') ORDER BY token, node" % name).fetchall()
        vals = [v for r in rows for v in r]
        o.append("query TI nosort\nSELECT node, token FROM ch_points('%s') ORDER BY token, node\n----\n%s\n" % (name, md5lines(vals)))
    except sqlite3.Error:
        pass
    o.append("query T nosort\nSELECT ch_check('%s')\n----\nok\n" % name)
    fresh = "f" + name[1:]
    o.append("statement ok\nCREATE VIRTUAL TABLE %s USING chash(%s)\n" % (fresh, opts))
    for a, b in ((name, fresh), (fresh, name)):
        o.append("query TTT nosort\nSELECT key, typeof(value), value FROM %s_config WHERE key NOT IN ('stamp', 'created', 'epoch', 'nextid', 'points') EXCEPT SELECT key, typeof(value), value FROM %s_config\n----\n" % (a, b))
open(out, "w").write("\n".join(o))

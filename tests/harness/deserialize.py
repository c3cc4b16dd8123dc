#!/usr/bin/python3
"""tests/harness/deserialize.py: a connection whose main database is replaced with
sqlite3_deserialize() places keys by the new database's ring, however many
commits follow (a connection remembers resolved ring specs: spec.c,
fast_get; a new database restarts SQLite's data version count, so it must
not be what tells the rings apart). And a committed version it has built
(r@2) is not served again when the new database is a copy that committed
another version 2: the copies share the table's creation tag.

Usage: /usr/bin/python3 tests/harness/deserialize.py ./chash.so
"""
import sqlite3
import sys

EXT = sys.argv[1] if len(sys.argv) > 1 else "./chash.so"


def connect():
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(EXT.removesuffix(".so"))
    return db


def committed_version_cases():
    """Version 1 is a; the connection builds its version 2 (a, b), then
    deserializes a copy of version 1 that committed c as version 2 (through
    another connection, or through this one after the deserialize). For
    each: how many of 200 keys r@2 places unlike the ring of a and c (built
    on a connection of its own), and how many ch_moved says move between
    r@2 and r, which are equal. (No inline ring is used on the connection
    that deserializes: SQLite 3.40 crashes preparing json_each there.)"""
    keys = "WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM s " \
           "WHERE k<200) SELECT %s FROM s ORDER BY k"

    def owners(db, spec):
        return [row[0] for row in
                db.execute(keys % ("ch_locate(k, '%s')" % spec))]

    expected = {}
    for nodes in ("a", "b"), ("a", "c"):
        ref = connect()
        expected[nodes] = owners(ref, '{"nodes":["%s","%s"],"vnodes":20}'
                                 % nodes)
    base = connect()
    base.execute("CREATE VIRTUAL TABLE r USING chash(vnodes=20)")
    base.execute("INSERT INTO r(node) VALUES ('a')")
    diverged = connect()
    diverged.deserialize(base.serialize())
    diverged.execute("INSERT INTO r(node) VALUES ('c')")
    for image, commit_after in ((diverged.serialize(), False),
                                (base.serialize(), True)):
        db = connect()
        db.deserialize(base.serialize())
        db.execute("INSERT INTO r(node) VALUES ('b')")
        assert owners(db, "r@2") == expected[("a", "b")]
        db.deserialize(image)
        if commit_after:
            db.execute("INSERT INTO r(node) VALUES ('c')")
        got = owners(db, "r@2")
        yield "keys r@2 places unlike the ring of a and c", \
            sum(1 for x, y in zip(got, expected[("a", "c")]) if x != y)
        yield "keys ch_moved(k, 'r@2', 'r') says move", \
            sum(row[0] for row in db.execute(keys % "ch_moved(k, 'r@2', 'r')"))


def main():
    image_db = connect()
    image_db.execute("CREATE VIRTUAL TABLE r USING chash")
    image_db.execute("INSERT INTO r(node) VALUES ('b')")
    image = image_db.serialize()
    passed = failed = 0
    for commits in range(12):
        db = connect()
        db.execute("CREATE VIRTUAL TABLE r USING chash")
        db.execute("INSERT INTO r(node) VALUES ('a')")
        assert db.execute("SELECT ch_locate(7, 'r')").fetchone()[0] == "a"
        db.deserialize(image)
        for i in range(commits):
            db.execute("CREATE TABLE t%d(x)" % i)
        got = db.execute("SELECT ch_locate(7, 'r'), ch_locate(7)").fetchone()
        if got == ("b", "b"):
            passed += 1
        else:
            failed += 1
            print("deserialize.py: after %d commits: %r, expected ('b', 'b')"
                  % (commits, got))
    for what, got in committed_version_cases():
        if got == 0:
            passed += 1
        else:
            failed += 1
            print("deserialize.py: r@2 of a deserialized copy: %s: %d of 200, "
                  "expected 0" % (what, got))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""tests/harness/settled.py: a connection whose main database is in memory
trusts the ring a spec resolved to, without reading its stamp, while main is
settled at the same data version (spec.c, main_settled). Each case below
resolves 'r' (so that the connection remembers it), changes the ring, its
table or the schemas in a way that raises no change count of the
connection or that is rolled back, and asks again: the answer must be the
new one. Placements are compared with inline JSON rings of the nodes the
case expects, built on a connection of their own; a spec that names no
ring must fail with the error a fresh connection gives.

(The sqllogictest files run on database files, where the stamp is always
read: these cases need main in memory, so they are here.)

Usage: /usr/bin/python3 tests/harness/settled.py ./chash.so
"""
import sqlite3
import sys

EXT = sys.argv[1] if len(sys.argv) > 1 else "./chash.so"
KEYS = "WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM s " \
       "WHERE k<200) SELECT ch_locate(k, '%s') FROM s ORDER BY k"


def connect(path=":memory:"):
    db = sqlite3.connect(path, isolation_level=None, uri=True)
    db.enable_load_extension(True)
    db.load_extension(EXT.removesuffix(".so"))
    return db


REFERENCE = connect()


def expected(nodes):
    """The owners of keys 1..200 on a ring of these nodes (vnodes 20)."""
    spec = '{"nodes":[%s],"vnodes":20}' % ",".join('"%s"' % n for n in nodes)
    return [row[0] for row in REFERENCE.execute(KEYS % spec)]


def owners(db, spec="r"):
    """The owners of keys 1..200 on spec, or the error message."""
    try:
        return [row[0] for row in db.execute(KEYS % spec)]
    except sqlite3.Error as e:
        return str(e)


def ring_db(nodes, path=":memory:"):
    """A connection with ring r of these nodes, its spec resolved twice."""
    db = connect(path)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS r USING chash(vnodes=20)")
    for n in nodes:
        db.execute("INSERT INTO r(node) VALUES (?)", (n,))
    owners(db)
    owners(db)
    return db


def case_drop_in_transaction():
    """DROP TABLE inside a transaction changes no count and no data
    version until COMMIT."""
    db = ring_db(["a", "b"])
    db.execute("BEGIN")
    db.execute("DROP TABLE r")
    yield "DROP TABLE r in BEGIN", owners(db), "ch_locate: no such ring: 'r'"
    db.execute("ROLLBACK")
    yield "after ROLLBACK of the DROP", owners(db), expected(["a", "b"])


def case_drop_autocommit():
    """DROP TABLE alone changes no count: the data version tells."""
    db = ring_db(["a", "b"])
    db.execute("DROP TABLE r")
    yield "DROP TABLE r", owners(db), "ch_locate: no such ring: 'r'"


def case_rename():
    db = ring_db(["a", "b"])
    db.execute("ALTER TABLE r RENAME TO r2")
    yield "r after RENAME", owners(db), "ch_locate: no such ring: 'r'"
    yield "r2 after RENAME", owners(db, "r2"), expected(["a", "b"])


def case_savepoints():
    """Changes rolled back to a savepoint, then the whole transaction."""
    db = ring_db(["a", "b"])
    db.execute("BEGIN")
    db.execute("INSERT INTO r(node) VALUES ('c')")
    yield "inserted c in BEGIN", owners(db), expected(["a", "b", "c"])
    db.execute("SAVEPOINT s")
    db.execute("DELETE FROM r WHERE node='a'")
    yield "deleted a in SAVEPOINT", owners(db), expected(["b", "c"])
    db.execute("ROLLBACK TO s")
    yield "after ROLLBACK TO", owners(db), expected(["a", "b", "c"])
    db.execute("ROLLBACK")
    yield "after ROLLBACK", owners(db), expected(["a", "b"])


def case_temp_hides():
    """A table of temp hides the ring of main: temp's commits raise no data
    version of main."""
    db = ring_db(["a", "b"])
    db.execute("CREATE TEMP TABLE r(x)")
    yield "temp table r", owners(db), "ch_locate: not a chash ring: 'r'"
    db.execute("DROP TABLE temp.r")
    yield "temp table r dropped", owners(db), expected(["a", "b"])
    db.execute("CREATE TEMP TABLE other(x)")
    db.execute("CREATE TEMP TABLE r(x)")
    yield "temp table r again", owners(db), "ch_locate: not a chash ring: 'r'"
    # Changing where temp is kept closes temp and everything in it.
    db.execute("PRAGMA temp_store = %d"
               % (2 - db.execute("PRAGMA temp_store").fetchone()[0] % 2))
    yield "temp closed by PRAGMA temp_store", owners(db), expected(["a", "b"])


def case_backup_restored():
    """A backup restored into main: another ring of the same name."""
    db = ring_db(["a", "b"])
    other = ring_db(["c", "d"])
    other.backup(db)
    yield "after a backup restored", owners(db), expected(["c", "d"])


def case_deserialized():
    """A database put in place with sqlite3_deserialize (also
    tests/harness/deserialize.py): SQLite's data version count starts
    again with it, and reaches the old one's after a few commits."""
    image = ring_db(["c"]).serialize()
    for commits in range(6):
        db = ring_db(["a", "b"])
        db.deserialize(image)
        for i in range(commits):
            db.execute("CREATE TABLE t%d(x)" % i)
        yield "deserialized, then %d commits" % commits, owners(db), \
            expected(["c"])
    db.execute("INSERT INTO r(node) VALUES ('d')")
    owners(db)
    db.deserialize(image)
    yield "after a second deserialize", owners(db), expected(["c"])


def case_shared_cache():
    """Two connections of one shared cache: the other's commit, and its
    change read uncommitted then rolled back."""
    path = "file:settled_shared?mode=memory&cache=shared"
    db = ring_db(["a", "b"], path)
    other = connect(path)
    other.execute("INSERT INTO r(node) VALUES ('c')")
    yield "after the other's commit", owners(db), expected(["a", "b", "c"])
    db.execute("PRAGMA read_uncommitted = 1")
    other.execute("BEGIN")
    other.execute("DELETE FROM r WHERE node='a'")
    yield "the other's change read uncommitted", owners(db), \
        expected(["b", "c"])
    other.execute("ROLLBACK")
    yield "after the other's ROLLBACK", owners(db), expected(["a", "b", "c"])
    other.close()
    yield "after the other closed", owners(db), expected(["a", "b", "c"])


def case_empty_image():
    """An empty database deserialized in place of main: no ring at all."""
    db = ring_db(["a", "b"])
    empty = connect()
    empty.execute("CREATE TABLE t(x)")
    db.deserialize(empty.serialize())
    yield "after an empty database", owners(db), "ch_locate: no such ring: 'r'"


CASES = [case_drop_in_transaction, case_drop_autocommit, case_rename,
         case_savepoints, case_temp_hides,
         case_backup_restored, case_deserialized, case_shared_cache,
         case_empty_image]


def main():
    passed = failed = 0
    for case in CASES:
        for what, got, want in case():
            if isinstance(want, str) and isinstance(got, str):
                ok = got.startswith(want)
            else:
                ok = got == want
            if ok:
                passed += 1
            else:
                failed += 1
                if isinstance(got, list) and isinstance(want, list):
                    got = "%d of 200 keys placed otherwise" % sum(
                        1 for x, y in zip(got, want) if x != y)
                    want = "the same placement"
                elif isinstance(got, list):
                    got = "a placement"
                elif isinstance(want, list):
                    want = "a placement"
                print("settled.py: %s: %s: got %s, expected %s"
                      % (case.__name__, what, got, want))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

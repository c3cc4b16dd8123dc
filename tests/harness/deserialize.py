#!/usr/bin/python3
"""tests/harness/deserialize.py: a connection whose main database is replaced with
sqlite3_deserialize() places keys by the new database's ring, however many
commits follow (a connection remembers resolved ring specs: spec.c,
fast_get; a new database restarts SQLite's data version count, so it must
not be what tells the rings apart).

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
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

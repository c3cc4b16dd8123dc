"""tests/packaging/python_test.py: the installed sqlite_chash package.

Usage: python python_test.py REPO/chash   (run by python.sh, in a venv)

Keys bound from Python (int, str, bytes) must land where the sqlite3
shell, with the repository's own build of the extension, places the same
keys stored in a table: the same ring, read from the same database file.
Versions given as Python ints select versions (ch_moved(?, 1, 2)), and
64-bit hashes come back as Python ints equal to the shell's.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

import sqlite_chash

passed = failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
        print("ok:", what)
    else:
        failed += 1
        print("FAILED: %s: got %r, want %r" % (what, got, want))


shell_extension = sys.argv[1]
path = sqlite_chash.loadable_path()
check("the extension comes from the installed package",
      path.startswith(sys.prefix) and os.path.basename(os.path.dirname(path)) == "sqlite_chash",
      True)

keys = list(range(-5, 995)) + [2**62, -2**63] + ["user:%d" % i for i in range(500)] \
    + [b"\x00\xffblob", "", "\u00e9t\u00e9"]

with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "app.db")
    conn = sqlite3.connect(db)
    sqlite_chash.load(conn)
    conn.executescript("""
        CREATE VIRTUAL TABLE shards USING chash(vnodes=160);
        INSERT INTO shards(node) VALUES ('db-a'), ('db-b'), ('db-c');
        INSERT INTO shards(node) VALUES ('db-d');
        CREATE TABLE keys(k);
    """)
    conn.executemany("INSERT INTO keys(k) VALUES (?)", [(k,) for k in keys])
    conn.commit()

    def from_python(sql):
        return ["" if v is None else str(v)
                for k in keys for v in conn.execute(sql, (k,)).fetchone()]

    def from_shell(sql):
        out = subprocess.run(
            ["sqlite3", "-batch", db, "-cmd", ".load " + shell_extension, sql],
            check=True, capture_output=True, text=True).stdout
        return out.split("\n")[:-1]

    check("ch_locate of %d keys bound from Python = the shell's" % len(keys),
          from_python("SELECT ch_locate(?, 'shards')"),
          from_shell("SELECT ch_locate(k, 'shards') FROM keys ORDER BY rowid"))
    moved = [conn.execute("SELECT ch_moved(?, ?, ?)", (k, 1, 2)).fetchone()[0] for k in keys]
    check("ch_moved(?, 1, 2) with versions as Python ints = the shell's",
          [str(m) for m in moved],
          from_shell("SELECT ch_moved(k, 'shards@1', 'shards@2') FROM keys ORDER BY rowid"))
    check("some keys move from version 1 to 2, not all", 0 < sum(moved) < len(keys), True)
    hashes = [conn.execute("SELECT ch_hash(?)", (k,)).fetchone()[0] for k in keys]
    check("ch_hash gives Python ints, 64-bit, equal to the shell's",
          [str(h) for h in hashes],
          from_shell("SELECT ch_hash(k) FROM keys ORDER BY rowid"))
    check("some hashes need more than 53 bits", any(abs(h) > 2**53 for h in hashes), True)

    # Python binds a NaN as NULL: a NaN weight is refused, not taken as 1.
    def insert_error(weight):
        try:
            conn.execute("INSERT INTO shards(node, weight) VALUES (?, ?)", ("db-e", weight))
        except sqlite3.Error as e:
            return str(e)
        return None
    want = ("shards: weight must not be NULL (a NaN is bound as NULL): leave the"
            " weight out of an INSERT for the default 1")
    check("a NaN weight is refused", insert_error(float("nan")), want)
    check("a None weight is refused", insert_error(None), want)
    check("the refused rows are not there",
          conn.execute("SELECT count(*) FROM shards WHERE node='db-e'").fetchone()[0], 0)
    conn.rollback()

    # load() leaves extension loading off, whatever it was before.
    conn.enable_load_extension(True)
    sqlite_chash.load(conn)
    try:
        conn.load_extension(shell_extension)
        loading = "on"
    except sqlite3.OperationalError:
        loading = "off"
    check("extension loading is off after load()", loading, "off")
    conn.close()

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)

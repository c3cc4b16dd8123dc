#!/usr/bin/python3
"""tests/bench/history_cases.py: two long ring histories, and the time
ch_check takes on them (docs/performance.md, "Commits and history").

Usage: /usr/bin/python3 tests/bench/history_cases.py EXT DIR

Makes, unless DIR already holds them:
  DIR/real.db     ring r (algorithm ring, vnodes 160): 50 nodes, then
                  100,000 commits, each renaming one node
  DIR/crafted.db  ring r: 1,000 nodes, then 1,999,000 renames written
                  directly into r_history (a non-defensive connection),
                  200 to a version: 2,000,000 history rows, 9,996 versions
then prints the seconds SELECT ch_check('r') takes on each with EXT (both
must say ok). Run it with two builds of chash to compare them.
"""
import os
import sqlite3
import sys
import time


def connect(ext, path):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(ext.removesuffix(".so"))
    return db


def make_real(ext, path):
    db = connect(ext, path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE VIRTUAL TABLE r USING chash(vnodes=160)")
    db.executemany("INSERT INTO r(node) VALUES (?)",
                   [("n%d" % i,) for i in range(1, 51)])
    for i in range(100000):
        node = "n%d" % (i % 50 + 1)
        if (i // 50) % 2 == 0:
            db.execute("UPDATE r SET node = ? WHERE node = ?",
                       (node + "x", node))
        else:
            db.execute("UPDATE r SET node = ? WHERE node = ?",
                       (node, node + "x"))
    db.close()


def make_crafted(ext, path):
    nodes, per_version, rows = 1000, 200, 2000000
    db = connect(ext, path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE VIRTUAL TABLE r USING chash(vnodes=160)")
    db.execute("BEGIN")
    db.executemany("INSERT INTO r(node) VALUES (?)",
                   [("n%d" % i,) for i in range(1, nodes + 1)])
    db.execute("COMMIT")
    names = ["n%d" % i for i in range(1, nodes + 1)]
    history = []
    epoch = 1
    for k in range(rows - nodes):
        if k % per_version == 0:
            epoch += 1
        i = k % nodes
        old = names[i]
        new = old[:-1] if old.endswith("x") else old + "x"
        names[i] = new
        history.append((epoch, i + 1, new, old))
    db.execute("BEGIN")
    db.executemany("INSERT INTO r_history(epoch, op, id, node, weight, old)"
                   " VALUES (?, 'rename', ?, ?, 1, ?)", history)
    db.executemany("UPDATE r_nodes SET node = ? WHERE id = ?",
                   [(names[i], i + 1) for i in range(nodes)])
    db.execute("UPDATE r_config SET value = ? WHERE key = 'epoch'", (epoch,))
    db.execute("COMMIT")
    db.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ext, folder = sys.argv[1], sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    for name, make in (("real", make_real), ("crafted", make_crafted)):
        path = os.path.join(folder, name + ".db")
        if not os.path.exists(path):
            make(ext, path)
        db = connect(ext, path)
        rows = db.execute("SELECT count(*) FROM r_history").fetchone()[0]
        t0 = time.process_time()
        report = db.execute("SELECT ch_check('r')").fetchone()[0]
        seconds = time.process_time() - t0
        print("%s: %d history rows, ch_check %.2f s: %s"
              % (name, rows, seconds, report[:200]))
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""tests/harness/commit_work.py: the work a commit of a ring table does does
not grow with the ring's history.

The algorithms with a commit rule (jump, ketama, hashring, redis_cluster,
envoy_ring) check each commit against the committed version. For each, a
ring of 40 nodes takes one commit (a node joins, the last one leaves, one
is renamed) after a short history and again after HISTORY more commits,
and the SQLite virtual machine steps each commit runs are counted (a
progress handler called at every step, which also counts the statements
chash runs for the check). Work is counted, not time: the later commits
may run at most SLACK more steps than the first ones. ch_check then
confirms the history it made is sound.

Usage: /usr/bin/python3 tests/harness/commit_work.py ./chash.so
"""
import sqlite3
import sys

EXT = sys.argv[1] if len(sys.argv) > 1 else "./chash.so"
HISTORY = 2000          # commits between the two measures
NODES = 40
SLACK = 20              # steps: the rowid look-ups may go one level deeper

RINGS = [
    "algorithm=jump",
    "algorithm=ketama",
    "algorithm=hashring",
    "algorithm=redis_cluster",
    "algorithm=envoy_ring",
]


def connect():
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(EXT.removesuffix(".so"))
    return db


class Steps:
    """Counts the virtual machine steps of the statements run while on."""

    def __init__(self, db):
        self.n = 0
        db.set_progress_handler(self.step, 1)

    def step(self):
        self.n += 1
        return 0


def commit_steps(db, steps, sql):
    """Steps of the COMMIT of a transaction that runs sql."""
    db.execute("BEGIN")
    db.execute(sql)
    before = steps.n
    db.execute("COMMIT")
    return steps.n - before


def one_of_each(db, steps, tag):
    """The steps of three commits: a node joins, the last one leaves, one
    is renamed (and renamed back)."""
    return [
        commit_steps(db, steps, "INSERT INTO r(node) VALUES ('new-%s')" % tag),
        commit_steps(db, steps, "DELETE FROM r WHERE node = 'new-%s'" % tag),
        commit_steps(db, steps, "UPDATE r SET node = 'x' WHERE node = 'n1'"),
        commit_steps(db, steps, "UPDATE r SET node = 'n1' WHERE node = 'x'"),
    ]


def main():
    passed = failed = 0
    for spec in RINGS:
        db = connect()
        db.execute("CREATE VIRTUAL TABLE r USING chash(%s)" % spec)
        db.executemany("INSERT INTO r(node) VALUES (?)",
                       [("n%d" % i,) for i in range(1, NODES + 1)])
        steps = Steps(db)
        early = one_of_each(db, steps, "early")
        db.set_progress_handler(None, 0)
        for i in range(HISTORY // 2):
            db.execute("UPDATE r SET node = 'y' WHERE node = 'n2'")
            db.execute("UPDATE r SET node = 'n2' WHERE node = 'y'")
        steps = Steps(db)
        late = one_of_each(db, steps, "late")
        db.set_progress_handler(None, 0)
        check = db.execute("SELECT ch_check('r')").fetchone()[0]
        bad = [i for i in range(len(early)) if late[i] > early[i] + SLACK]
        if bad or check != "ok":
            failed += 1
            print("commit_work: %s: commit steps after %d commits %s, after "
                  "%d more %s (allowed: %d more each); ch_check: %s"
                  % (spec, NODES, early, HISTORY, late, SLACK, check))
        else:
            passed += 1
        db.close()
    print("commit_work: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

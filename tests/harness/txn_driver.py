#!/usr/bin/python3
"""tests/harness/txn_driver.py: random transactions with DDL and savepoints
against a model.

    /usr/bin/python3 tests/harness/txn_driver.py [--ext ./chash.so]
        [--transactions N] [--seed S] [--busy]

Each transaction (BEGIN ... COMMIT or ROLLBACK, or a SAVEPOINT that is the
transaction, or one autocommit statement) mixes, over several rings and two
ordinary tables (rings in main, temp and an attached schema): CREATE
VIRTUAL TABLE, ALTER TABLE ... RENAME, DROP TABLE,
INSERT, UPDATE (weight and name) and DELETE of nodes and rows, SAVEPOINT,
ROLLBACK TO and RELEASE. A model in this file follows what SQL promises:
savepoints are copies of the whole model, a ring's version is raised by a
commit in which a change it logged survived. After every commit and
rollback the database is compared with the model:

  - the rows of the ordinary tables and which rings exist;
  - each ring's current nodes and weights (SELECT from the ring table);
  - every committed version N of each ring: the nodes replayed from its
    %_history rows by this file (not by chash), and the distinct nodes of
    ch_points('ring@N'), through the writing connection (its caches) and,
    for rings not in temp, through a second connection; a committed version,
    once seen, must never change;
  - ch_epoch(ring) is the last committed version, ch_check(ring) is 'ok'.

--busy: a third connection sometimes holds a SHARED lock (rollback
journal) while COMMIT runs, so that COMMIT fails with SQLITE_BUSY; the
transaction then goes on with more changes, or a lookup of the version it
would take, and ends in another COMMIT or a ROLLBACK.

Seeded: the same --seed gives the same transactions. A failure prints the
seed, the transaction number and its statements, and exits with status 1.
"""
import argparse
import copy
import os
import random
import sqlite3
import sys
import tempfile

# Ring names by schema: a ring is known as "schema.name" throughout.
RING_NAMES = {"main": ["ra", "rb", "rc", "rd", "re"], "temp": ["ta", "tb"],
              "aux": ["xa", "xb"]}
TABLES = ["t1", "t2"]
NODES = ["n%d" % i for i in range(8)]


class Failure(Exception):
    pass


class Model:
    """What the database must hold: rings by name, rows by table."""

    def __init__(self):
        # name -> {"nodes": {node: weight}, "versions": [dict...],
        #          "dirty": bool, "ident": int}
        self.rings = {}
        self.rows = {t: [] for t in TABLES}
        self.next_ident = 0

    def copy(self):
        return copy.deepcopy(self)


def connect(path, ext):
    db = sqlite3.connect(path, isolation_level=None, timeout=0)
    db.enable_load_extension(True)
    db.load_extension(ext)
    db.enable_load_extension(False)
    return db


def shadow(ring, suffix):
    """The shadow table of ring ("schema.name") ending in suffix."""
    schema, name = ring.split(".")
    return '%s."%s_%s"' % (schema, name, suffix)


def replay_history(db, ring, version):
    """Nodes of ring@version from its history rows, by this file's rules."""
    by_id = {}
    for _epoch, op, rid, node, weight in db.execute(
            'SELECT epoch, op, id, node, weight FROM %s'
            ' WHERE epoch<=? ORDER BY seq' % shadow(ring, "history"),
            (version,)):
        if op == "remove":
            by_id.pop(rid, None)
        else:
            by_id[rid] = (node, weight)
    return {n: w for n, w in by_id.values()}


class Driver:
    def __init__(self, args, rnd, path):
        self.args = args
        self.rnd = rnd
        self.db = connect(path, args.ext)
        self.reader = connect(path, args.ext)
        for c in (self.db, self.reader):
            c.execute("ATTACH ? AS aux", (path + "-aux",))
        self.locker = sqlite3.connect(path, isolation_level=None, timeout=0)
        self.db.execute("PRAGMA journal_mode=DELETE")
        self.db.execute("PRAGMA aux.journal_mode=DELETE")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("PRAGMA aux.synchronous=OFF")
        for t in TABLES:
            self.db.execute("CREATE TABLE %s(x INTEGER)" % t)
        self.committed = Model()
        self.work = None
        self.savepoints = []     # [(name, model copy)]
        self.log = []
        self.serial = 0          # values of ordinary rows
        self.sp_serial = 0
        self.outer_is_txn = False  # the first savepoint opened the transaction

    # ------------------------------------------------------------ running

    def sql(self, stmt, params=()):
        self.log.append(stmt if not params else "%s -- %r" % (stmt, params))
        try:
            return self.db.execute(stmt, params).fetchall()
        except sqlite3.Error as e:
            raise Failure("%s\n  failed: %s" % (stmt, e))

    def fail(self, msg):
        raise Failure(msg)

    # ------------------------------------------------------- operations

    def free_ring_name(self, model, schema):
        free = ["%s.%s" % (schema, n) for n in RING_NAMES[schema]
                if "%s.%s" % (schema, n) not in model.rings]
        return self.rnd.choice(free) if free else None

    def op_create(self, m):
        p = self.rnd.random()
        schema = "temp" if p < 0.15 else "aux" if p < 0.3 else "main"
        self.op_create_named(m, self.free_ring_name(m, schema))

    def op_create_named(self, m, name):
        if name is None or name in m.rings:
            return
        self.sql("CREATE VIRTUAL TABLE %s USING chash(vnodes=4)" % name)
        m.rings[name] = {"nodes": {}, "versions": [{}], "dirty": False,
                         "ident": m.next_ident}
        m.next_ident += 1

    def op_rename(self, m):
        if not m.rings:
            return
        old = self.rnd.choice(sorted(m.rings))
        self.rename(m, old)

    def rename(self, m, old):
        """Rename ring old to a free name of its schema (False: none)."""
        new = self.free_ring_name(m, old.split(".")[0])
        if new is None:
            return False
        self.sql("ALTER TABLE %s RENAME TO %s" % (old, new.split(".")[1]))
        m.rings[new] = m.rings.pop(old)
        return True

    def op_drop(self, m):
        if not m.rings:
            return
        name = self.rnd.choice(sorted(m.rings))
        self.sql("DROP TABLE %s" % name)
        del m.rings[name]

    def op_node(self, m):
        if m.rings:
            self.op_node_of(m, self.rnd.choice(sorted(m.rings)))

    def op_node_of(self, m, name):
        r = m.rings[name]
        nodes = r["nodes"]
        absent = [n for n in NODES if n not in nodes]
        kind = self.rnd.choice(["add", "add", "reweight", "rename", "remove"])
        if kind == "add" and absent:
            node = self.rnd.choice(absent)
            w = self.rnd.choice([1, 2, 3])
            self.sql("INSERT INTO %s(node, weight) VALUES (?, ?)" % name,
                     (node, w))
            nodes[node] = float(w)
            r["dirty"] = True
        elif kind == "reweight" and nodes:
            node = self.rnd.choice(sorted(nodes))
            w = float(self.rnd.choice([1, 2, 3]))
            self.sql("UPDATE %s SET weight=? WHERE node=?" % name, (w, node))
            if nodes[node] != w:
                nodes[node] = w
                r["dirty"] = True
        elif kind == "rename" and nodes and absent:
            node = self.rnd.choice(sorted(nodes))
            new = self.rnd.choice(absent)
            self.sql("UPDATE %s SET node=? WHERE node=?" % name, (new, node))
            nodes[new] = nodes.pop(node)
            r["dirty"] = True
        elif kind == "remove" and nodes:
            node = self.rnd.choice(sorted(nodes))
            self.sql("DELETE FROM %s WHERE node=?" % name, (node,))
            del nodes[node]
            r["dirty"] = True

    def op_row(self, m):
        t = self.rnd.choice(TABLES)
        rows = m.rows[t]
        if rows and self.rnd.random() < 0.3:
            x = self.rnd.choice(rows)
            self.sql("DELETE FROM %s WHERE x=?" % t, (x,))
            rows.remove(x)
        else:
            self.serial += 1
            self.sql("INSERT INTO %s VALUES (?)" % t, (self.serial,))
            rows.append(self.serial)

    def op_savepoint(self, m):
        self.sp_serial += 1
        name = "sp%d" % self.sp_serial
        self.sql("SAVEPOINT %s" % name)
        self.savepoints.append((name, m.copy()))
        return m

    def op_rollback_to(self, m):
        if not self.savepoints:
            return m
        i = self.rnd.randrange(len(self.savepoints))
        name, saved = self.savepoints[i]
        self.sql("ROLLBACK TO %s" % name)
        del self.savepoints[i + 1:]
        return saved.copy()

    def op_release(self, m):
        # Releasing the outer savepoint of a transaction it opened commits.
        first = 1 if self.outer_is_txn else 0
        if len(self.savepoints) <= first:
            return m
        i = self.rnd.randrange(first, len(self.savepoints))
        self.sql("RELEASE %s" % self.savepoints[i][0])
        del self.savepoints[i:]
        return m

    def op_ddl_undone(self, m):
        """A change to a ring, then DDL on it (drop, rename, a new ring in
        its name) after a savepoint, then ROLLBACK TO or RELEASE: the
        shape of the migrations that lost transactions."""
        if not m.rings:
            return m
        name = self.rnd.choice(sorted(m.rings))
        for _ in range(3):
            self.op_node_of(m, name)
        m = self.op_savepoint(m)
        if self.rnd.random() < 0.5:
            self.sql("DROP TABLE %s" % name)
            del m.rings[name]
        elif not self.rename(m, name):
            return m
        if self.rnd.random() < 0.5:
            self.op_create_named(m, name)
            self.op_node_of(m, name)
        if self.rnd.random() < 0.7:
            return self.op_rollback_to(m)
        return self.op_release(m)

    def random_ops(self, m, n):
        for _ in range(n):
            p = self.rnd.random()
            if p < 0.05:
                m = self.op_ddl_undone(m)
            elif p < 0.08:
                self.op_create(m)
            elif p < 0.16:
                self.op_rename(m)
            elif p < 0.24:
                self.op_drop(m)
            elif p < 0.54:
                self.op_node(m)
            elif p < 0.66:
                self.op_row(m)
            elif p < 0.78:
                m = self.op_savepoint(m)
            elif p < 0.90:
                m = self.op_rollback_to(m)
            else:
                m = self.op_release(m)
        return m

    # ---------------------------------------------------- transactions

    def commit_model(self, m):
        for r in m.rings.values():
            if r["dirty"]:
                r["versions"].append(dict(r["nodes"]))
                r["dirty"] = False
        self.committed = m

    def try_commit(self, stmt, m):
        """COMMIT (or RELEASE of the outer savepoint), with --busy perhaps
        made to fail first while a reader holds a SHARED lock."""
        if self.args.busy and self.rnd.random() < 0.3:
            self.locker.execute("BEGIN")
            self.locker.execute("SELECT count(*) FROM sqlite_schema").fetchall()
            self.log.append(stmt + "  -- with a SHARED lock held elsewhere")
            try:
                self.db.execute(stmt)
                committed = True     # the transaction wrote nothing
            except sqlite3.Error as e:
                if "locked" not in str(e):
                    self.fail("%s failed: %s" % (stmt, e))
                committed = False
            finally:
                self.locker.execute("COMMIT")
            if committed:
                self.commit_model(self.work)
                self.savepoints = []
                return True
            # The failed commit must have changed nothing: look up the
            # version each changed ring would take, change more, or end.
            for name, r in sorted(m.rings.items()):
                if r["dirty"]:
                    n = len(r["versions"])
                    self.sql("SELECT count(*) FROM ch_points('%s@%d')"
                             % (name, n))
            choice = self.rnd.random()
            if choice < 0.3:
                self.sql("ROLLBACK")
                self.savepoints = []
                return False
            if choice < 0.7:
                m = self.random_ops(m, self.rnd.randrange(1, 4))
                self.work = m
        self.sql(stmt)
        self.commit_model(self.work)
        self.savepoints = []
        return True

    def transaction(self):
        self.log = []
        self.savepoints = []
        self.outer_is_txn = False
        kind = self.rnd.random()
        m = self.committed.copy()
        if kind < 0.15:
            # One autocommit statement.
            self.random_ops_autocommit(m)
            return
        if kind < 0.30:
            # A SAVEPOINT outside BEGIN is the transaction.
            self.sp_serial += 1
            outer = "sp%d" % self.sp_serial
            self.sql("SAVEPOINT %s" % outer)
            self.savepoints.append((outer, m.copy()))
            self.outer_is_txn = True
        else:
            self.sql("BEGIN")
        m = self.random_ops(m, self.rnd.randrange(1, 9))
        self.work = m
        if self.rnd.random() < 0.25:
            self.sql("ROLLBACK")
            self.savepoints = []
            return
        if self.outer_is_txn:
            self.try_commit("RELEASE %s" % outer, m)
        else:
            self.try_commit("COMMIT", m)

    def random_ops_autocommit(self, m):
        op = self.rnd.choice([self.op_create, self.op_rename, self.op_drop,
                              self.op_node, self.op_node, self.op_row])
        op(m)
        self.commit_model(m)

    # ---------------------------------------------------------- checks

    def check(self):
        m = self.committed
        for t in TABLES:
            got = sorted(x for (x,) in self.db.execute("SELECT x FROM %s" % t))
            if got != sorted(m.rows[t]):
                self.fail("%s holds %r, the model %r" % (t, got, sorted(m.rows[t])))
        got = sorted("%s.%s" % (schema, n) for schema in RING_NAMES
                     for (n,) in self.db.execute(
                         "SELECT name FROM %s.sqlite_schema WHERE type='table'"
                         " AND sql LIKE 'CREATE VIRTUAL TABLE%%chash%%'"
                         % schema))
        if got != sorted(m.rings):
            self.fail("the rings are %r, the model's %r" % (got, sorted(m.rings)))
        for name, r in sorted(m.rings.items()):
            self.check_ring(name, r)

    def check_ring(self, name, r):
        cur = {n: w for n, w in self.db.execute(
            "SELECT node, weight FROM %s" % name)}
        if cur != r["nodes"]:
            self.fail("%s has nodes %r, the model %r" % (name, cur, r["nodes"]))
        last = len(r["versions"]) - 1
        # Another connection has a temp schema of its own.
        conns = [(self.db, "writer")]
        if not name.startswith("temp."):
            conns.append((self.reader, "reader"))
        for conn, who in conns:
            (epoch,) = conn.execute("SELECT ch_epoch(?)", (name,)).fetchone()
            if epoch != last:
                self.fail("%s: ch_epoch(%s) is %d, the model's last version %d"
                          % (who, name, epoch, last))
            (check,) = conn.execute("SELECT ch_check(?)", (name,)).fetchone()
            if check != "ok":
                self.fail("%s: ch_check(%s): %s" % (who, name, check))
        # Every version, or the last few and a sample of the older ones.
        versions = range(last + 1)
        if last > 12:
            versions = sorted(set(range(last - 5, last + 1))
                              | set(self.rnd.sample(range(last - 5), 6)))
        for v in versions:
            want = r["versions"][v]
            got = replay_history(self.db, name, v)
            if got != want:
                self.fail("%s@%d replayed from its history is %r, the model's"
                          " %r" % (name, v, got, want))
            for conn, who in conns:
                got = sorted(n for (n,) in conn.execute(
                    "SELECT DISTINCT node FROM ch_points(?)",
                    ("%s@%d" % (name, v),)))
                if got != sorted(want):
                    self.fail("%s: ch_points('%s@%d') has nodes %r, the model"
                              " %r" % (who, name, v, got, sorted(want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default="./chash.so")
    ap.add_argument("--transactions", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--busy", action="store_true")
    args = ap.parse_args()
    ext = os.path.abspath(args.ext)
    if ext.endswith(".so"):
        ext = ext[:-3]
    args.ext = ext
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        d = Driver(args, rnd, os.path.join(tmp, "txn.db"))
        for i in range(1, args.transactions + 1):
            try:
                d.transaction()
                d.check()
            except Failure as e:
                print("txn_driver: seed %d%s, transaction %d failed:\n%s\n"
                      "-- the transaction:\n%s"
                      % (args.seed, " --busy" if args.busy else "", i, e,
                         "\n".join(d.log)))
                return 1
        for c in (d.db, d.reader, d.locker):
            c.close()
    print("txn_driver: seed %d%s: %d transactions match the model"
          % (args.seed, " --busy" if args.busy else "", args.transactions))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""tests/gen/lists_gen.py: writes every list of algorithms, hashes and
options in the docs and tests from the build itself, so that adding an
algorithm (its file and its line in ext/algos/registry.c) needs `make gen`
and nothing else before its own tests and docs.

The truth comes from two places, never from a list kept here (and the
functions the loadable registers must each have their section in
docs/reference.md):
  build/catalog   (tests/gen/catalog.c, linked with ext/core and ext/algos)
                  prints the registry, each descriptor's doc facts and the
                  option and hash tables as JSON;
  the loadable    (./chash.so) lists its functions and runs the statements
                  of example sessions, so the error messages they show are
                  real output.

Generated regions stand inside hand-written files between markers, which
this script rewrites and nothing else:
  Markdown   <!-- gen:NAME --> ... <!-- /gen -->  (on one line, or the
             markers on lines of their own around whole lines)
  .test      a line "# gen:NAME" ... a line "# /gen"
The regions each file must hold are listed in FILES; a missing or unknown
region is an error.

Run: make gen (or gen-check), which builds both first; by hand,
  /usr/bin/python3 tests/gen/lists_gen.py --write  (or --check)
with CATALOG and LOADABLE naming them when they are not build/catalog and
./chash.so.
"""
import json
import os
import re
import sqlite3
import subprocess

import genfiles

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def catalog():
    exe = os.environ.get("CATALOG", os.path.join(ROOT, "build", "catalog"))
    if not os.path.exists(exe):
        raise SystemExit("lists_gen.py: %s is missing: run make gen" % exe)
    return json.loads(subprocess.run([exe], check=True, capture_output=True,
                                     text=True).stdout)


CAT = catalog()
ALGOS = CAT["algorithms"]
DOC_FIELDS = ("cost", "weights", "remove", "movement", "options")


def code(names):
    return ", ".join("`%s`" % n for n in names)


def spoken(items, last="and"):
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else \
        "%s %s %s" % (", ".join(items[:-1]), last, items[-1])


def check_docs():
    """Every descriptor carries its doc facts, and its options field names
    exactly the options it takes beyond those every algorithm takes."""
    universal = set.intersection(*(set(a["options"]) for a in ALGOS))
    for a in ALGOS:
        for f in ("summary",) + DOC_FIELDS:
            if not a["doc"][f]:
                raise SystemExit("lists_gen.py: algorithm %s: its descriptor has "
                                 "no doc.%s (ext/core/algo.h, ring_algo_doc)"
                                 % (a["name"], f))
        named = set(re.findall(r"`([a-z_]+)`", a["doc"]["options"])) & set(CAT["options"])
        own = set(a["options"]) - universal
        if not own <= named or not named <= set(a["options"]):
            raise SystemExit("lists_gen.py: algorithm %s: doc.options names %s, "
                             "but it takes %s" % (a["name"], sorted(named),
                                                 sorted(own)))
    return universal


UNIVERSAL = check_docs()


# ------------------------------------------------------------ the lists

def algorithm_names():
    return code(a["name"] for a in ALGOS)


def algorithm_summaries():
    return "; ".join("`%s`: %s" % (a["name"], a["doc"]["summary"]) for a in ALGOS)


def hash_names():
    return code(h["name"] for h in CAT["hashes"])


def default_hashes():
    """'`xxh3`; `md5` for `ketama` and `hashring`, ...': the default
    algorithm's hash, then the others' by hash, in registry order."""
    first = next(a for a in ALGOS if a["name"] == CAT["default_algorithm"])
    by_hash = {}
    for a in ALGOS:
        if a["default_hash"] != first["default_hash"]:
            by_hash.setdefault(a["default_hash"], []).append("`%s`" % a["name"])
    return "`%s`; " % first["default_hash"] + ", ".join(
        "`%s` for %s" % (h, spoken(names)) for h, names in by_hash.items())


def reproduces():
    return spoken((a["doc"]["reproduces"] for a in ALGOS
                   if a["doc"]["reproduces"]), "or")


def options_not_applying():
    """'`vnodes` with any algorithm but `ring`, ...; `table` ...': the
    options some algorithms do not take, grouped by who takes them."""
    groups = {}
    for o in CAT["options"]:
        if o in UNIVERSAL:
            continue
        takers = tuple(a["name"] for a in ALGOS if o in a["options"])
        groups.setdefault(takers, []).append("`%s`" % o)
    return "; ".join("%s with any algorithm but %s" % (spoken(opts), code(takers))
                     for takers, opts in groups.items())


def hashes_not_taken():
    """'a hash other than `crc32a` with `nginx` or `dalli`; ...; `xxh3`,
    ... or `md5_128` with `ketama`': each algorithm's hashes as its options
    check takes them, grouped by algorithms that take the same; identity
    (a rule of its own) and algorithms taking every hash left out."""
    every = [h["name"] for h in CAT["hashes"] if h["name"] != "identity"]
    groups = {}
    for a in ALGOS:
        taken = [h for h in every if h in a["hashes"]]
        if len(taken) == len(every):
            continue
        if a["default_hash"] in taken:    # the default first
            taken.remove(a["default_hash"])
            taken.insert(0, a["default_hash"])
        groups.setdefault(tuple(taken), []).append("`%s`" % a["name"])
    out = []
    for taken, names in groups.items():
        refused = [h for h in every if h not in taken]
        if len(taken) <= len(refused):
            out.append("a hash other than %s with %s"
                       % (spoken((code([h]) for h in taken), "or"),
                          spoken(names, "or")))
        else:
            out.append("%s with %s" % (spoken((code([h]) for h in refused), "or"),
                                       spoken(names, "or")))
    return "; ".join(out)


def tvf_cells(a):
    """What ch_points, ch_arcs, ch_diff, ch_replicas give for algorithm a:
    its doc fields, or what its units give."""
    units, doc = a["units"], a["doc"]
    listed = {"points": ("points", "arcs"),
              "slots": ("table slots (`token` = slot)", "slots, NULL `start`/`end`"),
              "buckets": ("buckets", "buckets"),
              "none": ("error", "error")}[units]
    if not a["lists_units"]:
        listed = ("error", "error")
    diff = ("exact, arcs" if units == "points" else "exact, residue classes") \
        if a["exact_diff"] else "error"
    replicas = {"points": "points clockwise", "slots": "slots after the key's",
                "buckets": "buckets after the owner's (join order)",
                "none": "by falling score"}[units]
    return (doc["points"] or listed[0], doc["arcs"] or listed[1],
            doc["diff"] or diff, doc["replicas"] or replicas)


def tvf_table():
    """One column per group of algorithms the functions treat alike."""
    columns = {}
    for a in ALGOS:
        columns.setdefault(tvf_cells(a), []).append(a["name"])
    out = ["| | " + " | ".join(", ".join(n) for n in columns.values()) + " |",
           "|---" * (len(columns) + 1) + "|"]
    for i, fn in enumerate(("ch_points", "ch_arcs", "ch_diff", "ch_replicas")):
        out.append("| `%s` | " % fn + " | ".join(c[i] for c in columns) + " |")
    return "\n".join(out) + "\n"


def algorithms_table():
    out = ["| algorithm | lookup cost | weights | remove | movement when a node "
           "joins | options |", "|---|---|---|---|---|---|"]
    for a in ALGOS:
        name = "`%s`" % a["name"]
        if a["name"] == CAT["default_algorithm"]:
            name += " (default)"
        out.append("| %s | %s |" % (name, " | ".join(a["doc"][f] for f in DOC_FIELDS)))
    return "\n".join(out) + "\n"


# ------------------------------------------------------- sessions

def loadable():
    paths = [os.environ["LOADABLE"]] if os.environ.get("LOADABLE") else \
        [os.path.join(ROOT, so) for so in ("chash.so", "chash.dylib", "chash.dll")]
    for path in paths:
        if os.path.exists(path):
            return path
    raise SystemExit("lists_gen.py: no chash loadable (%s): run make gen" %
                     ", ".join(paths))


def connect():
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(loadable())
    return db


def session(text):
    """A fenced block of `sqlite> ` statements, each followed by what the
    sqlite3 shell prints for it: its rows ('|' between values) or
    'Runtime error: ...'. Every statement runs, in order, on one
    in-memory database with chash loaded."""
    db = connect()
    out = []
    for line in text.splitlines():
        if line.startswith("```"):
            out.append(line)
        if not line.startswith("sqlite> "):
            continue
        out.append(line)
        try:
            for row in db.execute(line[len("sqlite> "):]):
                out.append("|".join("" if v is None else str(v) for v in row))
        except sqlite3.Error as e:
            out.append("Runtime error: %s" % e)
    db.close()
    return "\n".join(out) + "\n"


def registered():
    """What the loadable registers, each list sorted: its scalar functions,
    its aggregates, its table-valued functions (ch_*) and its other modules
    (the ring table's, and chash_close_hook, which has no rows)."""
    db = connect()
    funcs = db.execute("SELECT DISTINCT name, type FROM pragma_function_list "
                       "WHERE name LIKE 'ch\\_%' ESCAPE '\\'").fetchall()
    mods = [r[0] for r in db.execute(
        "SELECT name FROM pragma_module_list WHERE name LIKE 'ch%'")]
    db.close()
    return (sorted(n for n, t in funcs if t == "s"), sorted(n for n, t in funcs if t != "s"),
            sorted(m for m in mods if m.startswith("ch_")),
            sorted(m for m in mods if not m.startswith("ch_")))


def functions():
    """'the scalar functions `ch_check`, ...': what the loadable registers.
    Each function must have its section in docs/reference.md, each
    table-valued function its row there (checked here)."""
    scalars, aggregates, tvfs, modules = registered()
    with open(os.path.join(ROOT, "docs", "reference.md"), encoding="utf-8") as f:
        ref = f.read()
    for name in scalars + aggregates:
        if "### `%s(" % name not in ref:
            raise SystemExit("lists_gen.py: docs/reference.md has no section "
                             "### `%s(...)` for the function %s" % (name, name))
    for name in tvfs:
        if "| `%s(" % name not in ref:
            raise SystemExit("lists_gen.py: docs/reference.md's table of "
                             "table-valued functions has no row for %s" % name)
    def listed(names):
        return spoken("`%s`" % n for n in names)
    return "the scalar functions %s, the aggregates %s, the table-valued " \
        "functions %s and the virtual table modules %s" % (
            listed(scalars), listed(aggregates), listed(tvfs), listed(modules))


# ------------------------------------------------------------- tests

def surface_lists():
    """surface.test: the full lists error messages print, anchored at the
    message's end."""
    cases = [("algorithm=none", "algorithm: unknown value 'none'; accepted: " +
              ", ".join(a["name"] for a in ALGOS)),
             ("hash=none", "hash: unknown value 'none'; accepted: " +
              ", ".join(h["name"] for h in CAT["hashes"])),
             ("none=1", "unknown option 'none'; accepted: " + ", ".join(CAT["options"]))]
    return "\n".join("statement error\nCREATE VIRTUAL TABLE bad USING chash(%s)\n"
                     "----\nbad: %s$\n" % c for c in cases)


def every_algorithm_checked():
    """check.test: a ring of every algorithm with its defaults, changed
    three ways, is healthy and places keys."""
    out = []
    for a in ALGOS:
        t = "every_" + a["name"]
        # Columns without a default get their example value per node.
        cols = [c for c in a["columns"] if c["example"]]
        names = "".join(", " + c["name"] for c in cols)
        rows = ", ".join("('%s'%s)" % (n, "".join(", '%s'" % c["example"].replace("%d", str(i + 1))
                                                  for c in cols))
                         for i, n in enumerate("abc"))
        out.append("statement ok\n"
                   "CREATE VIRTUAL TABLE %s USING chash(algorithm=%s);\n"
                   "INSERT INTO %s(node%s) VALUES %s;\n"
                   "DELETE FROM %s WHERE node = 'c'\n\n"
                   "query TT\n"
                   "SELECT ch_check('%s'), ch_locate('key', '%s') IN ('a', 'b')\n"
                   "----\nok\n1\n\n"
                   "statement ok\nDROP TABLE %s\n" % (t, a["name"], t, names, rows, t, t, t, t))
    return "\n".join(out)


# ------------------------------------------------------------ regions

REGIONS = {
    "algorithms": algorithm_names,
    "algorithm-summaries": algorithm_summaries,
    "hashes": hash_names,
    "default-hashes": default_hashes,
    "reproduces": reproduces,
    "options-not-applying": options_not_applying,
    "hashes-not-taken": hashes_not_taken,
    "tvf-table": tvf_table,
    "algorithms-table": algorithms_table,
    "session": session,
    "functions": functions,
    "surface-lists": surface_lists,
    "every-algorithm": every_algorithm_checked,
}

MARKDOWN = re.compile(r"<!-- gen:([a-z-]+) -->(.*?)<!-- /gen -->", re.S)
TEST = re.compile(r"^# gen:([a-z-]+)\n(.*?)^# /gen$", re.S | re.M)

# Every file with generated regions, relative to the repository, and the
# regions it must hold.
FILES = {
    "README.md": ["algorithms", "reproduces"],
    "docs/reference.md": ["algorithms", "algorithm-summaries", "hashes",
                          "default-hashes", "options-not-applying",
                          "hashes-not-taken", "session",
                          "tvf-table", "functions"],
    "docs/analysis.md": ["tvf-table"],
    "docs/algorithms.md": ["algorithms-table"],
    "tests/sql/surface.test": ["surface-lists"],
    "tests/sql/check.test": ["every-algorithm"],
}


def rewrite(path, wanted):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    marker = TEST if path.endswith(".test") else MARKDOWN
    found = set()

    def fill(m):
        name, old = m.group(1), m.group(2)
        if name not in REGIONS:
            raise SystemExit("lists_gen.py: %s: unknown region gen:%s" % (path, name))
        found.add(name)
        make = REGIONS[name]
        body = make(old) if name == "session" else make()
        if marker is TEST or old.startswith("\n"):    # whole lines
            body = ("" if marker is TEST else "\n") + body
        return m.group(0)[:m.start(2) - m.start(0)] + body + \
            m.group(0)[m.end(2) - m.start(0):]
    text = marker.sub(fill, text)
    if set(wanted) - found:
        raise SystemExit("lists_gen.py: %s lacks the region(s) gen:%s" %
                         (path, ", gen:".join(sorted(set(wanted) - found))))
    return text


if __name__ == "__main__":
    genfiles.main("lists_gen.py", [
        (os.path.relpath(os.path.join(ROOT, p), HERE),
         lambda p=p, w=w: rewrite(p, w)) for p, w in FILES.items()])

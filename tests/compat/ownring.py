"""tests/compat/ownring.py: rings of your own design against real code.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  ownring.py groupcache CHASH_SO GROUPCACHE_OWNERS
  ownring.py java CHASH_SO JAVA_CLASSES

groupcache: GROUPCACHE_OWNERS is tests/compat/groupcache_owners.go built
against Debian's golang-github-golang-groupcache-dev; every configuration
is placed by the real package, by chash's algorithm groupcache, by chash's
algorithm ring with groupcache's label, first, hash and tie rule, and by
the Python model of tests/gen/ownring_gen.py. java: JAVA_CLASSES holds
tests/compat/TreeMapRing.java compiled by Debian's OpenJDK; the same, with
algorithm ring, hash md5be, label '%s:%d' or '%s-%d', first 0, ties last.

Configurations: 3, 5 and 10 nodes named like 10.0.0.1:11211 and like
NodeA, 50 and 160 points a node, and pairs of nodes with two equal points
in both join orders (for groupcache the labels themselves are equal:
"11" + "10.0.0.1:11211" is "1" + "110.0.0.1:11211"). Every key must agree.
Then variants that must not agree: the other tie rule on the pairs, and
another label, index base or byte order everywhere; each must get some key
wrong, which shows the comparison can fail. Prints counts; exits 1 on any
failure.
"""
import os, sqlite3, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gen"))
from ownring_gen import OwnRing, hash_bytes  # noqa: E402
from compatkit import make_keys  # noqa: E402

KEYS = 2500          # generated keys per configuration
TIE_KEYS = 40        # extra keys on the arc of a tied point
IP_NAMES = ["10.0.0.%d:11211" % i for i in range(1, 11)]
WORD_NAMES = ["Node" + chr(ord("A") + i) for i in range(10)]


def tie_keys(opts, nodes, n):
    """n keys that the tie rule decides: they fall on the arc of a
    position two nodes share, so ties=last and ties=first place them on
    different nodes (chosen with the model; the real code judges them)."""
    last = OwnRing(nodes, ties="last", **opts)
    first = OwnRing(nodes, ties="first", **opts)
    keys = []
    for i in range(2_000_000):
        k = b"tie:%d" % i
        if last.locate(k) != first.locate(k):
            keys.append(k)
            if len(keys) == n:
                return keys
    raise SystemExit("ownring: no tied point in %r" % (nodes,))


def run_lines(argv, keys):
    out = subprocess.run(argv, input="".join(k.hex() + "\n" for k in keys),
                         capture_output=True, text=True, timeout=120,
                         check=True, encoding="utf-8").stdout
    lines = out.split("\n")[:-1]
    assert len(lines) == len(keys), (argv[:3], len(lines), len(keys))
    return lines


def chash_owners(db, spec, nodes, keys):
    """ch_locate of every key on a chash table made with spec (a CREATE
    argument list) and nodes [(name, weight)] inserted in join order."""
    db.execute("DROP TABLE IF EXISTS r")
    db.execute("CREATE VIRTUAL TABLE r USING chash(%s)" % spec)
    for name, weight in nodes:
        db.execute("INSERT INTO r(node, weight) VALUES (?, ?)", (name, weight))
    return [db.execute("SELECT ch_locate(?, 'r')", (k,)).fetchone()[0]
            for k in keys]


class Tally:
    def __init__(self, what):
        self.what, self.configs, self.keys, self.failures = what, 0, 0, []
        self.variants = []

    def agree(self, name, got, real):
        bad = sum(g != r for g, r in zip(got, real))
        if bad:
            self.failures.append("%s: %d of %d keys differ" % (name, bad, len(real)))

    def variant(self, name, got, real):
        self.variants.append((name, sum(g != r for g, r in zip(got, real)),
                              len(real)))

    def report(self):
        totals = {}
        for name, bad, n in self.variants:
            b, t = totals.get(name, (0, 0))
            totals[name] = (b + bad, t + n)
        for name, (bad, n) in totals.items():
            if bad == 0:
                self.failures.append("variant %s agrees with the real ring on "
                                     "every key: the check could not fail" % name)
        print("%s: %d configurations, %d keys, every key placed as the real "
              "ring places it%s" % (self.what, self.configs, self.keys,
                                    "" if not self.failures else " EXCEPT:"))
        for f in self.failures:
            print("  FAIL", f)
        for name, (bad, n) in totals.items():
            print("  variant %-40s disagrees on %6d of %6d keys" % (name, bad, n))
        return 1 if self.failures else 0


def configurations(pairs):
    """(nodes in join order, vnodes, is a tie pair)."""
    for vnodes in (50, 160):
        for names in (IP_NAMES, WORD_NAMES):
            for n in (3, 5, 10):
                yield names[:n], vnodes, False
        for pair in pairs:
            yield list(pair), vnodes, True
            yield list(reversed(pair)), vnodes, True


def check_family(tally, db, real_owners, opts, chash_specs, variants, pairs,
                 text_only):
    """opts: the model's options; chash_specs: CREATE arguments that must
    agree; variants: (name, model options, chash CREATE arguments or None,
    only on tie pairs)."""
    for seed, (names, vnodes, tied) in enumerate(configurations(pairs)):
        nFailed = len(tally.failures)
        nodes = [(n, 1) for n in names]
        o = dict(opts, vnodes=vnodes)
        keys = make_keys(seed, KEYS, text_only)
        if tied:
            keys += tie_keys({k: v for k, v in o.items() if k != "ties"},
                             nodes, TIE_KEYS)
        real = real_owners(names, vnodes, keys)
        where = "%d nodes %s.., vnodes %d" % (len(names), names[0], vnodes)
        model = OwnRing(nodes, **o)
        tally.agree("model, " + where, [model.locate(k) for k in keys], real)
        for spec in chash_specs:
            tally.agree("%s, %s" % (spec.format(vnodes=vnodes), where),
                        chash_owners(db, spec.format(vnodes=vnodes), nodes, keys), real)
        for name, vopts, vspec, only_tied in variants:
            if only_tied and not tied:
                continue
            vm = OwnRing(nodes, **dict(o, **vopts))
            tally.variant("model " + name, [vm.locate(k) for k in keys], real)
            if vspec:
                tally.variant("chash " + name,
                              chash_owners(db, vspec.format(vnodes=vnodes), nodes, keys), real)
        print("%s: %-44s %5d keys, %s" % (
            tally.what, where + (" (tie pair)" if tied else ""), len(keys),
            "agree" if len(tally.failures) == nFailed else "DISAGREE"))
        tally.configs += 1
        tally.keys += len(keys)


def check_hash(tally, db, hash_name, real_hashes, text_only):
    keys = make_keys(99, KEYS, text_only)
    real = [int(x) for x in real_hashes(keys)]
    tally.agree("model %s" % hash_name, [hash_bytes(hash_name, k) for k in keys], real)
    got = [db.execute("SELECT ch_hash(?, ?)", (k, hash_name)).fetchone()[0]
           for k in keys]
    tally.agree("ch_hash(key, '%s')" % hash_name, got, real)
    print("%s: ch_hash(key, '%s') equals the real hash on %d keys"
          % (tally.what, hash_name, len(keys)))


def groupcache(db, owners_bin):
    t = Tally("groupcache")
    check_hash(t, db, "crc32a", lambda keys: run_lines([owners_bin, "0"], keys),
               False)
    check_family(
        t, db,
        lambda names, vnodes, keys: run_lines([owners_bin, str(vnodes)] + names, keys),
        dict(label="%d%s", first=0, ties="last", hash="crc32a"),
        ["algorithm=groupcache, vnodes={vnodes}",
         "algorithm=ring, label='%d%s', first=0, hash=crc32a, ties=last, vnodes={vnodes}"],
        [("ties=first", dict(ties="first"),
          "algorithm=ring, label='%d%s', first=0, hash=crc32a, ties=first, vnodes={vnodes}", True),
         ("ties=name", dict(ties="name"),
          "algorithm=ring, label='%d%s', first=0, hash=crc32a, ties=name, vnodes={vnodes}", True),
         ("label='%s%d' (index after the name)", dict(label="%s%d"),
          "algorithm=ring, label='%s%d', first=0, hash=crc32a, ties=last, vnodes={vnodes}", False),
         ("first=1", dict(first=1),
          "algorithm=ring, label='%d%s', first=1, hash=crc32a, ties=last, vnodes={vnodes}", False)],
        [("10.0.0.1:11211", "110.0.0.1:11211")],
        False)
    return t.report()


# Two pairs of node names with one equal point each (found by search): for
# label '%s:%d', point 13 of the first and 48 of the second; for '%s-%d',
# point 23 of the first and 2 of the second.
JAVA_PAIRS = {":": ("10.0.9.84:11211", "10.0.10.67:11211"),
              "-": ("10.0.0.190:11211", "10.0.5.100:11211")}


def java(db, classes):
    t = Tally("java TreeMap")
    jvm = ["java", "-Xshare:auto", "-cp", classes, "TreeMapRing"]
    check_hash(t, db, "md5be", lambda keys: run_lines(jvm + ["-", "0"], keys), True)
    for sep, pair in JAVA_PAIRS.items():
        assert (hash_bytes("md5be", b"%s%s%d" % (pair[0].encode(), sep.encode(),
                                                  13 if sep == ":" else 23))
                == hash_bytes("md5be", b"%s%s%d" % (pair[1].encode(), sep.encode(),
                                                     48 if sep == ":" else 2)))
        label = "%s" + sep + "%d"
        print("java TreeMap: label '%s', md5be, first 0, ties last" % label)
        ring = ("algorithm=ring, hash={hash}, label='" + label +
                "', first={first}, ties={ties}, vnodes={{vnodes}}")
        check_family(
            t, db,
            lambda names, vnodes, keys: run_lines(jvm + [sep, str(vnodes)] + names, keys),
            dict(label=label, first=0, ties="last", hash="md5be"),
            [ring.format(hash="md5be", first=0, ties="last")],
            [("ties=first", dict(ties="first"),
              ring.format(hash="md5be", first=0, ties="first"), True),
             ("ties=name", dict(ties="name"),
              ring.format(hash="md5be", first=0, ties="name"), True),
             ("hash=md5 (bytes 0..3 little-endian)", dict(hash="md5"),
              ring.format(hash="md5", first=0, ties="last"), False),
             ("first=1", dict(first=1),
              ring.format(hash="md5be", first=1, ties="last"), False)],
            [pair],
            True)
    return t.report()


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("groupcache", "java"):
        raise SystemExit(__doc__)
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(sys.argv[2])
    sys.exit({"groupcache": groupcache, "java": java}[sys.argv[1]](db, sys.argv[3]))


if __name__ == "__main__":
    main()

"""tests/compat/hashring.py: chash's hashring algorithm against the real npm
packages `hashring` and `memcached`, run with Node.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  hashring.py CHASH_SO NODE_MODULES

NODE_MODULES holds hashring 3.2.0 and memcached 2.2.2 (run.sh installs
them from npm into build/compat). For each configuration, hashring.js
asks the packages where 2,000+ keys go (no network: the memcached client's
connect is replaced by one that records the server its get() chose), and
the answers are compared with ch_locate on the equivalent chash ring
(nodes = the server strings in the same order; for the memcached client,
a server on port 11211 is named by its host alone), with the independent
Python model (tests/gen/hashring_model.py), and with wrong variants of the
rule, which must disagree. For the hashring configurations, the servers as
JSON are read by ch_config('hashring', ...) and ch_locate over that spec
must agree too, and so must the package given the text ch_export writes.
Exit 1 unless every key agrees.
"""
import json, os, random, subprocess, sys

from compatkit import agreement, chash_db
import hashring_model

HERE = os.path.dirname(os.path.abspath(__file__))

JS_BLANKS = set(' \t\n\r\v\f\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff') | \
    {chr(c) for c in range(0x2000, 0x200b)}


def make_keys(seed, n):
    """Text keys (JavaScript strings, hashed as UTF-8): ASCII, Cyrillic,
    CJK, emoji, some longer than 250 characters; no blanks (the memcached
    client refuses keys with any)."""
    rnd = random.Random(seed)
    keys = set()
    alphabet = [chr(c) for c in range(0x21, 0x7f)] + list('ключéü鍵キー🙂𝄞')
    shapes = [
        lambda i: 'user:%d' % i,
        lambda i: 'session:%08x' % rnd.getrandbits(32),
        lambda i: 'ключ-%d-émoji-🙂' % i,
        lambda i: ''.join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 40))),
        lambda i: str(rnd.getrandbits(48)),
        # longer than memcached's 250: the client hashes the whole key
        lambda i: 'long/%d/' % i + 'x' * rnd.randint(250, 400),
    ]
    while len(keys) < n:
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)


def edge_keys(entries):
    """Keys on the ring's edges, from the rule: the text a point was made
    of ("S-i") lands exactly on that point (its MD5 word 0); keys found by
    search whose position is past the last point (the wrap-around) or
    before the first."""
    names = sorted({e[1] for e in entries})
    exact = ['%s-%d' % (n, i) for n in names for i in (0, 1, 7)]
    last, first = entries[-1][0], entries[0][0]
    wrap, before = [], []
    i = 0
    while len(wrap) < 5 or len(before) < 5:
        k = 'wrap-%d' % i
        pos = hashring_model.key_position(k)
        if pos > last and len(wrap) < 5:
            wrap.append(k)
        elif pos <= first and len(before) < 5:
            before.append(k)
        i += 1
    return exact + wrap + before


def arc_keys(entries, point, n):
    """n keys (found by search) whose position falls in the arc that ends
    at point."""
    pts = [e[0] for e in entries]
    i = pts.index(point)
    lo = pts[i - 1] if i > 0 else -1
    keys, j = [], 0
    while len(keys) < n:
        k = 'arc-%d' % j
        if lo < hashring_model.key_position(k) <= point:
            keys.append(k)
        j += 1
    return keys


def run_node(node_modules, mode, servers, keys):
    job = json.dumps({'mode': mode, 'servers': servers, 'keys': keys})
    out = subprocess.run(['node', os.path.join(HERE, 'hashring.js')], input=job,
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, NODE_PATH=node_modules))
    if out.returncode != 0:
        raise SystemExit('compat hashring: node failed:\n' + out.stderr)
    return json.loads(out.stdout)


def chash_places(db, table, nodes, keys):
    db.execute('CREATE VIRTUAL TABLE "%s" USING chash(algorithm=hashring)' % table)
    db.executemany('INSERT INTO "%s"(node, weight) VALUES (?, ?)' % table, nodes)
    return [db.execute('SELECT ch_locate(?, ?)', (k, table)).fetchone()[0] for k in keys]


def configurations():
    """(name, mode, servers as given to the package, [(chash node, weight)],
    {chash node: the server string the package returns})."""
    out = []

    def add(name, mode, servers):
        if isinstance(servers, dict):
            pairs = [(s, w['weight'] if isinstance(w, dict) else w)
                     for s, w in servers.items()]
        else:
            pairs = [(s, 1) for s in servers]
        name_of = hashring_model.memcached_name if mode == 'memcached' else (lambda s: s)
        nodes = [(name_of(s), w) for s, w in pairs]
        out.append((name, mode, servers, nodes, {name_of(s): s for s, _ in pairs}))

    add('equal', 'hashring', ['10.0.0.%d:11211' % i for i in range(1, 5)])
    add('weights', 'hashring', {'cache-a:11211': 1, 'cache-b:11212': 2, 'кэш-c': 3,
                                'cache-d:11211': 1.5, '10.0.0.5': 4})
    # 7 equal servers: 1/7*40*7 is 39.99999999999999 in double precision,
    # so every server gets 39 digests (156 points), not 40.
    add('seven', 'hashring', ['node%d.example:6379' % i for i in range(1, 8)])
    add('many', 'hashring', {'10.1.0.%d:%d' % (i, 11211 + i % 3): 1 + i % 4
                             for i in range(1, 16)})
    add('small-weight', 'hashring', {'big:1': 100, 'tiny:2': 1, 'mid:3': 7})
    # 1/208*40*3 = 0.58: 'none' gets no digest, no point, no key.
    add('zero-points', 'hashring', {'big:1': 200, 'none:2': 1, 'mid:3': 7})
    add('weight-objects', 'hashring', {'obj-a:1': {'weight': 2}, 'obj-b:2': {'weight': 0.5},
                                       'obj-c:3': {'weight': 3}})
    a, b, _ = hashring_model.collision_pair()
    add('collide-ab', 'hashring', [a, b])
    add('collide-ba', 'hashring', [b, a])
    # Line breaks to YAML (U+0085, U+2028, U+2029) in names: the reader
    # must not fold them, and ch_export must write them as escapes.
    add('breaks', 'hashring', ['a\u0085b:1', 'c\u2028:2', '\u2029d:3', 'e:4'])
    add('memcached', 'memcached', ['10.0.0.1:11211', '10.0.0.2:11211',
                                   'cache-c:11212', '10.0.0.4'])
    add('memcached-w', 'memcached', {'10.0.0.1:11211': 1, 'mc-b:11211': 3,
                                     'mc-c:22122': 2, 'localhost:11211': 1})
    return out


def main(so, node_modules):
    db = None
    if so != '-':
        db = chash_db(so)
    total = agree = 0
    ok_all = True
    for n, (name, mode, servers, nodes, server_of) in enumerate(configurations()):
        model = hashring_model.Ring(nodes)
        keys = make_keys(n, 2000) + edge_keys(model.entries)
        if name.startswith('collide'):
            keys += arc_keys(model.entries, hashring_model.collision_pair()[2], 200)
        got = run_node(node_modules, mode, servers, keys)
        expect_model = [server_of.get(model.locate(k)) for k in keys]
        bad_model = sum(1 for g, e in zip(got, expect_model) if g != e)
        counts = hashring_model.groups(nodes)
        line = 'compat hashring %-12s %2d servers, %5s digests: model %d/%d' % (
            name, len(nodes), min(counts) if min(counts) == max(counts) else
            '%d..%d' % (min(counts), max(counts)), len(keys) - bad_model, len(keys))
        if bad_model:
            ok_all = False
        if db is not None:
            expect = [server_of.get(e) for e in
                      chash_places(db, 'h_' + name.replace('-', '_'), nodes, keys)]
            ok = agreement(keys, got, expect, mode)
            line += ', chash %d/%d keys agree' % (ok, len(keys))
            total += len(keys)
            agree += ok
            ok_all &= ok == len(keys)
            if mode == 'hashring':
                # The same servers as JSON, read by ch_config; the text
                # ch_export writes, given back to the package.
                # Written as an editor would; the YAML line breaks as
                # escapes (raw, ch_config refuses them).
                text = json.dumps(servers, ensure_ascii=(name == 'breaks'))
                spec = db.execute("SELECT ch_config('hashring', ?)", (text,)).fetchone()[0]
                via_config = [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0]
                              for k in keys]
                exported = db.execute("SELECT ch_export(?, 'hashring')", (spec,)).fetchone()[0]
                via_export = run_node(node_modules, mode, json.loads(exported), keys)
                for how, answers in (('ch_config', via_config), ('ch_export', via_export)):
                    ok = agreement(keys, got, answers, mode + ' ' + how)
                    line += ', %s %d/%d' % (how, ok, len(keys))
                    total += len(keys)
                    agree += ok
                    ok_all &= ok == len(keys)
        # Controls: wrong variants of the rule must disagree.
        variants = []
        if name == 'seven':
            # rounding the digest count instead of flooring it
            variants.append(('40 digests (rounded)', hashring_model.Ring(nodes, rounding=round)))
        if name == 'zero-points':
            # a floor of one digest, as chash's own ring keeps one point
            variants.append(('at least 1 digest', hashring_model.Ring(
                nodes, rounding=lambda t: max(1, int(t)))))
        if name in ('weights', 'small-weight', 'many'):
            variants.append(('weights ignored', hashring_model.Ring([(s, 1) for s, _ in nodes])))
        if mode == 'memcached':
            variants.append(('port 11211 kept in the name', hashring_model.Ring(
                [(server, w) for (server, _), (_, w) in zip(
                    (list(servers.items()) if isinstance(servers, dict)
                     else [(s, 1) for s in servers]), nodes)])))
        if name.startswith('collide'):
            variants.append(('later server wins a tie', hashring_model.Ring(list(reversed(nodes)))))
        for vname, wrong in variants:
            guess = [wrong.locate(k) for k in keys]
            guess = [server_of.get(g, g) for g in guess]
            diff = sum(1 for k, g, w in zip(keys, got, guess) if g != w)
            line += '; variant "%s" disagrees on %d' % (vname, diff)
            if diff == 0:
                ok_all = False
        print(line)
    if db is not None:
        print('compat hashring: %d/%d keys agree (%.2f%%)' % (agree, total, 100.0 * agree / total))
    return ok_all


if __name__ == '__main__':
    sys.exit(0 if main(sys.argv[1], sys.argv[2]) else 1)

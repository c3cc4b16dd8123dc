"""tests/compat/pyclients.py: the Python client libraries pymemcache
(HashClient's RendezvousHash, Debian's python3-pymemcache) and uhashring
(HashRing, both modes, Debian's python3-uhashring), run for real, against
the independent models tests/gen/pymemcache_model.py and
tests/gen/uhashring_model.py, and uhashring's two rings against chash's
algorithms uhashring and uhashring_ketama.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  pyclients.py CHASH_SO

Per configuration (3, 5 and 10 servers named by address and by name,
unequal weights for uhashring, a pair of uhashring_ketama servers whose
points collide in both orders) it places 2,400 keys of compatkit.make_keys
(ASCII, characters beyond ASCII and beyond U+00FF) and more: the empty key,
'€', keys equal to a point's label, which land exactly on that point with the real library and the
model, and with chash, and exits 1 unless they all agree on every key.
Each check is shown able to fail: pymemcache's model hashing UTF-8 bytes
(not characters masked to a byte), each uhashring mode with the other
lookup direction (first point at or above) and uhashring_ketama's colliding
pair with the other tie rule (the earlier server wins) must each disagree
with the library somewhere.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'gen'))
import compatkit                            # noqa: E402
from compatkit import chash_db            # noqa: E402
import pymemcache_model                     # noqa: E402
import uhashring_model                      # noqa: E402
from pymemcache.client.rendezvous import RendezvousHash   # noqa: E402
from uhashring import HashRing              # noqa: E402

NKEYS = 2400


def make_keys(seed, n, labels=()):
    """compatkit's n mixed keys as text, a Django cache key, '€' (beyond
    U+00FF, masked to 0xAC by pymemcache), the empty key and labels."""
    keys = {k.decode() for k in compatkit.make_keys(seed, n, text_only=True)}
    keys |= {'', ':1:views.decorators.cache.cache_page', 'prix-€'} | set(labels)
    return sorted(keys)


def addresses(n):
    return ['10.0.%d.%d:11211' % (i // 200, 1 + i % 200) for i in range(n)]


def names(n):
    return ['cache%d' % (i + 1) for i in range(n)]


def pymemcache_configs():
    for n in (3, 5, 10):
        yield 'pymemcache %d addresses' % n, addresses(n)
        yield 'pymemcache %d names' % n, names(n)
    yield 'pymemcache unix socket and address', ['/run/memcached/memcached.sock', '10.0.0.1:11211']


def utf8_owner(servers, key):
    """The variant hashing UTF-8 bytes, not characters masked to a byte."""
    return max(servers, key=lambda s: (pymemcache_model.murmur3_32(
        ('%s-%s' % (s, key)).encode('utf-8')), s))


def check_pymemcache():
    bad = 0
    variant_differs = False
    for title, servers in pymemcache_configs():
        keys = make_keys(title, NKEYS)
        real = RendezvousHash(list(servers))
        got = [real.get_node(k) for k in keys]
        model = [pymemcache_model.owner(servers, k) for k in keys]
        ok = sum(g == m for g, m in zip(got, model))
        print('%-40s %d/%d keys agree' % (title, ok, len(keys)))
        bad += ok != len(keys)
        utf8 = [utf8_owner(servers, k) for k in keys]
        variant_differs |= any(g != u for g, u in zip(got, utf8))
    return bad, variant_differs


def uhashring_configs():
    for ketama in (False, True):
        mode = 'uhashring_ketama' if ketama else 'uhashring'
        for n in (3, 5, 10):
            yield '%s %d addresses' % (mode, n), ketama, [(s, 1) for s in addresses(n)], None
            yield '%s %d names' % (mode, n), ketama, [(s, 1) for s in names(n)], None
            yield ('%s %d weighted' % (mode, n), ketama,
                   [(s, 1 + i % 3) for i, s in enumerate(names(n))], None)
        yield '%s 4 vnodes 7' % mode, ketama, [(s, 1) for s in names(4)], 7
    pair = uhashring_model.ketama_collision()[:2]
    for order in (pair, pair[::-1]):
        yield ('uhashring_ketama colliding %s, %s' % order, True,
               [(order[0], 1), (order[1], 1)], None)


def real_ring(servers, ketama, vnodes):
    kwargs = {}
    if ketama:
        kwargs['hash_fn'] = 'ketama'
    if vnodes is not None:
        kwargs['vnodes'] = vnodes
    return HashRing({s: w for s, w in servers}, **kwargs)


def chash_owners(db, servers, ketama, vnodes, keys):
    """chash's owners of keys on the ring of that mode."""
    db.execute('DROP TABLE IF EXISTS r')
    db.execute('CREATE VIRTUAL TABLE r USING chash(algorithm=%s%s)'
               % ('uhashring_ketama' if ketama else 'uhashring',
                  '' if vnodes is None else ', vnodes=%d' % vnodes))
    db.executemany('INSERT INTO r(node, weight) VALUES (?, ?)', servers)
    return [db.execute("SELECT ch_locate(?, 'r')", (k,)).fetchone()[0] for k in keys]


def check_uhashring(db):
    """Configurations that disagree, and whether each variant disagrees
    with the library: the at-or-above lookup in each mode ({ketama: bool})
    and the first-wins tie rule on the colliding pair."""
    bad = 0
    direction_differs = {False: False, True: False}
    ties_differ = False
    for title, ketama, servers, vnodes in uhashring_configs():
        vn = vnodes if vnodes is not None else (40 if ketama else 160)
        labels = ['%s-%d' % (s, i) for s, _ in servers for i in range(0, vn, 3)]
        keys = make_keys(title, NKEYS, labels)
        real = real_ring(servers, ketama, vnodes)
        got = [real.get_node(k) for k in keys]
        model = uhashring_model.Ring(servers, ketama, vnodes)
        want = [model.owner(k) for k in keys]
        ok = sum(g == m for g, m in zip(got, want))
        mine = chash_owners(db, servers, ketama, vnodes, keys)
        ok = min(ok, sum(g == c for g, c in zip(got, mine)))
        print('%-40s %d/%d keys agree (model and chash)' % (title, ok, len(keys)))
        bad += ok != len(keys)
        at_or_above = uhashring_model.Ring(servers, ketama, vnodes, strictly_above=False)
        direction_differs[ketama] |= any(g != at_or_above.owner(k) for g, k in zip(got, keys))
        if 'colliding' in title:
            first_wins = uhashring_model.Ring(servers, ketama, vnodes, later_wins=False)
            ties_differ |= any(g != first_wins.owner(k) for g, k in zip(got, keys))
    return bad, direction_differs, ties_differ


def main():
    bad, bytes_variant = check_pymemcache()
    bad2, direction, tie_variant2 = check_uhashring(chash_db(sys.argv[1]))
    bad += bad2
    print('variants: pymemcache hashing UTF-8 bytes disagrees: %s; at-or-above '
          'lookup disagrees: uhashring %s, uhashring_ketama %s; uhashring_ketama '
          'first-wins ties disagree: %s' % (bytes_variant, direction[False],
                                            direction[True], tie_variant2))
    if not (bytes_variant and direction[False] and direction[True] and tie_variant2):
        print('pyclients: a variant agrees with the library: that check cannot fail')
        bad += 1
    if bad:
        print('pyclients: %d configurations disagree' % bad)
        sys.exit(1)
    print('pyclients: all configurations agree')


if __name__ == '__main__':
    main()

"""tests/compat/pymemcache_compat.py: algorithm pymemcache against the real
pymemcache (Debian's python3-pymemcache 3.5.2: HashClient and its default
RendezvousHash, no connection made) and the independent model
tests/gen/pymemcache_model.py.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  pymemcache_compat.py CHASH_SO

Per configuration (3, 5 and 10 servers by address and by name, a unix
socket path, a non-ASCII server name, a pair of servers with a crafted
tie) it places 2,400 keys of compatkit.make_keys (ASCII, characters beyond
ASCII and beyond U+00FF) and more: the empty key, '€', a Django cache key,
keys of 300 characters and the tie keys, with the real library, the model
and chash's ch_locate, and exits 1 unless all three agree on every key.
The servers are also given to a real HashClient as Django's LOCATION
gives them (strings "host:port", a "unix:" path), to check that the names
HashClient hashes are the ones chash's ring is given.

Server lists as text (Django's LOCATION string, servers between ',' and
';', and a server per line) are given to HashClient as Django splits them
and to ch_config('pymemcache', ...): ch_locate over the spec must agree
with the client's hasher on every key, and so must a HashClient given
ch_export's text of the spec.

Each check is shown able to fail: hashing the UTF-8 bytes of
"<server>-<key>" (not one byte per character) and giving a tie to the
smaller name must each disagree with the library somewhere.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'gen'))
import compatkit                            # noqa: E402
import pymemcache_model as m                # noqa: E402
from pymemcache.client.hash import HashClient              # noqa: E402
from pymemcache.client.rendezvous import RendezvousHash    # noqa: E402

NKEYS = 2400
TIE_PAIRS = [('10.0.0.1:11211', '10.0.100.100:11211'), ('cache1', 'cache1-dc2')]


def addresses(n):
    return ['10.0.%d.%d:11211' % (i // 200, 1 + i % 200) for i in range(n)]


def names(n):
    return ['cache%d' % (i + 1) for i in range(n)]


def configs():
    for n in (3, 5, 10):
        yield '%d addresses' % n, addresses(n), ()
        yield '%d names' % n, names(n), ()
    yield 'unix socket, address, non-ASCII name', [
        '/run/memcached/memcached.sock', '10.0.0.1:11211', 'mémoire:11211'], ()
    for a, b in TIE_PAIRS:
        tie = m.tie_key(a, b)               # the same key for both orders
        yield 'tie %s, %s' % (a, b), [a, b], (tie,)
        yield 'tie %s, %s' % (b, a), [b, a, 'other:11211'], (tie,)


def make_keys(title, extra):
    keys = {k.decode() for k in compatkit.make_keys(title, NKEYS, text_only=True)}
    keys |= {'', '€', ':1:views.decorators.cache.cache_page', 'é' * 300,
             'x' * 600, 'k€' * 300} | set(extra)
    return sorted(keys)


def utf8_owner(servers, key):
    """The variant hashing UTF-8 bytes, not characters masked to a byte."""
    return max(servers, key=lambda s: (m.murmur3_32(('%s-%s' % (s, key)).encode()), s))


def chash_owners(db, servers, keys):
    db.execute('DROP TABLE IF EXISTS r')
    db.execute('CREATE VIRTUAL TABLE r USING chash(algorithm=pymemcache)')
    db.executemany('INSERT INTO r(node) VALUES (?)', [(s,) for s in servers])
    return [db.execute("SELECT ch_locate(?, 'r')", (k,)).fetchone()[0] for k in keys]


def check_hash_client():
    """HashClient names servers given as Django's LOCATION strings: "host:port"
    as it is, a host alone with port 11211, "unix:PATH" as PATH. The names
    its hasher holds are the ones a chash ring is given."""
    location = ['10.0.0.1:11211', '10.0.0.2', 'unix:/run/memcached.sock', 'cache-b:11212']
    want = ['10.0.0.1:11211', '10.0.0.2:11211', '/run/memcached.sock', 'cache-b:11212']
    client = HashClient(location, allow_unicode_keys=True)
    got = list(client.hasher.nodes)
    print('HashClient server names %s: %s' % ('agree' if got == want else 'DIFFER', got))
    return got == want


TEXTS = [
    ('a LOCATION string', '10.0.0.1:11211;10.0.0.2,unix:/run/memcached.sock,cache-b:11212'),
    ('IPv6, a port with a leading 0', '[::1]:11211,[fe80::1],::2:11213;10.0.0.5:011211'),
    ('10 addresses', ';'.join(addresses(10))),
    ('a server per line', 'm\u00e9moire:11211\n/run/a.sock\n\ncache1\ncache2:11300\n'),
]


def location(text):
    """The servers HashClient is given: Django splits a LOCATION string on
    ',' and ';'; a text of lines, a server per line."""
    if '\n' in text:
        return [line for line in text.splitlines() if line]
    return re.split('[;,]', text)


def hash_client_owners(servers, keys):
    hasher = HashClient(servers, allow_unicode_keys=True).hasher
    return [hasher.get_node(k) for k in keys]


def check_texts(db):
    """Each text read by HashClient and by ch_config, and ch_export's text
    read by HashClient. The number of texts that disagree."""
    bad = 0
    for title, text in TEXTS:
        keys = make_keys(title, ())
        spec = db.execute("SELECT ch_config('pymemcache', ?)", (text,)).fetchone()[0]
        exported = db.execute("SELECT ch_export(?, 'pymemcache')", (spec,)).fetchone()[0]
        mine = [db.execute('SELECT ch_locate(?, ?)', (k, spec)).fetchone()[0] for k in keys]
        ok = compatkit.agreement(keys, hash_client_owners(location(text), keys), mine,
                                 'ch_config')
        ok_exported = compatkit.agreement(keys, hash_client_owners(location(exported), keys),
                                          mine, 'ch_export')
        print('pymemcache text %-30s %d keys: ch_config %d, HashClient on ch_export %d agree'
              % (title, len(keys), ok, ok_exported))
        bad += ok != len(keys) or ok_exported != len(keys)
    return bad


def main():
    db = compatkit.chash_db(sys.argv[1])
    bad = 0 if check_hash_client() else 1
    bad += check_texts(db)
    total = 0
    utf8_differs = smaller_differs = False
    for title, servers, extra in configs():
        keys = make_keys(title, extra)
        real = RendezvousHash(list(servers))
        got = [real.get_node(k) for k in keys]
        model = [m.owner(servers, k) for k in keys]
        mine = chash_owners(db, servers, keys)
        ok = min(sum(g == w for g, w in zip(got, model)),
                 compatkit.agreement(keys, got, mine, 'pymemcache'))
        print('pymemcache %-44s %d/%d keys agree' % (title, ok, len(keys)))
        bad += ok != len(keys)
        total += len(keys)
        utf8_differs |= any(g != utf8_owner(servers, k) for g, k in zip(got, keys))
        for k in extra:
            smaller_differs |= real.get_node(k) != m.owner(servers, k, larger_wins=False)
    print('pymemcache: %d keys in all; variants: UTF-8 bytes disagree: %s; ties to '
          'the smaller name disagree: %s' % (total, utf8_differs, smaller_differs))
    if not (utf8_differs and smaller_differs):
        print('pymemcache: a variant agrees with the library: the check cannot fail')
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()

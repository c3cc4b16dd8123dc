"""tests/gen/pymemcache_model.py: an independent model of pymemcache's
HashClient placement (its default RendezvousHash), written from the rule in
docs/algorithms.md, not from chash or pymemcache's code.

The rule (pymemcache 3.5.2, Debian's python3-pymemcache):
  - a server is named '%s:%s' % (host, port), a unix-socket server by its path;
  - a server's score for a key is MurmurHash3 x86_32, seed 0, of the text
    "<server>-<key>", where every character counts as one byte: its code
    point's low 8 bits (so 'é' U+00E9 is the byte 0xE9, '€' U+20AC is 0xAC,
    and the hashed length is the number of characters, not of UTF-8 bytes);
  - the server with the highest score owns the key; on equal scores the
    server whose name sorts last (by code point) owns it.
"""


def murmur3_32(data, seed=0):
    """MurmurHash3 x86_32 of bytes data, as Appleby's C reference."""
    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & 0xffffffff
    c1, c2 = 0xcc9e2d51, 0x1b873593
    h = seed & 0xffffffff
    nblocks = len(data) // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], 'little')
        k = rotl((k * c1) & 0xffffffff, 15)
        h ^= (k * c2) & 0xffffffff
        h = (rotl(h, 13) * 5 + 0xe6546b64) & 0xffffffff
    tail = data[4 * nblocks:]
    if tail:
        k = int.from_bytes(tail, 'little')
        k = rotl((k * c1) & 0xffffffff, 15)
        h ^= (k * c2) & 0xffffffff
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h


def char_bytes(text):
    """The bytes pymemcache's hash sees for text: each character's low byte."""
    return bytes(ord(c) & 0xff for c in text)


def score(server, key):
    return murmur3_32(char_bytes('%s-%s' % (server, key)))


def owner(servers, key, larger_wins=True):
    """The server owning key; larger_wins=False is the other tie rule (a
    variant that shows a check can fail)."""
    best = None
    for s in servers:
        sc = score(s, key)
        if best is None or sc > best[0] or (
                sc == best[0] and ((s > best[1]) if larger_wins else (s < best[1]))):
            best = (sc, s)
    return best[1] if best else None


# ------------------------------------------------------------------ ties
# An equal score needs the same 32-bit hash for two servers: crafted here
# by running MurmurHash3 forwards to the last block of the key and solving
# that block, not found by search.

C1, C2, C5 = 0xcc9e2d51, 0x1b873593, 0xe6546b64
M32 = 0xffffffff


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def _blocks(data, h=0):
    """MurmurHash3's h after the whole 4-byte blocks of data, from h."""
    for i in range(0, len(data) - len(data) % 4, 4):
        k = _rotl((int.from_bytes(data[i:i + 4], 'little') * C1) & M32, 15)
        h = (_rotl(h ^ ((k * C2) & M32), 13) * 5 + C5) & M32
    return h


def tie_key(a, b, stem='tie'):
    """A key on which servers a and b score the same. Their names' lengths
    differ by a non-zero multiple of 4, so the key's last 4 characters form
    the same last block X for both: with states ha, hb before it, the
    scores are fmix(G(ha ^ mix(X)) ^ La) and fmix(G(hb ^ mix(X)) ^ Lb),
    G(u) = 5 rotl(u, 13) + C5, La and Lb the lengths. fmix is a bijection,
    so they are equal when G(u) ^ G(u ^ d) = La ^ Lb, u = ha ^ mix(X),
    d = ha ^ hb: with p = rotl(u, 13), 5p + C5 = Y and 5q + C5 = Y ^ La ^
    Lb give p and q for any Y, and need p ^ q = rotl(d, 13). Meet in the
    middle: 2^19 values of Y against the d of keys stem0000.., stem0001..
    (2^32 / 2^19 keys expected). Each byte of X becomes a character whose
    low byte it is."""
    assert len(a) != len(b) and (len(a) - len(b)) % 4 == 0
    inv5 = pow(5, -1, 1 << 32)
    la = len(a) + 1 + len(stem) + 8
    while la % 4:
        stem += '.'
        la += 1
    lb = la + len(b) - len(a)
    la, lb = la + 4, lb + 4                    # with X
    delta = la ^ lb
    want = {}
    for y in range(1 << 19):
        y = (y * 0x9e3779b1) & M32
        pp = ((y - C5) * inv5) & M32
        qq = (((y ^ delta) - C5) * inv5) & M32
        want[pp ^ qq] = pp
    ha0 = _blocks(char_bytes('%s-%s' % (a, stem)))
    hb0 = _blocks(char_bytes('%s-%s' % (b, stem)))
    for i in range(1 << 24):
        s = '%s%08x' % (stem, i)
        ha = _blocks(s[-8:].encode(), ha0)
        hb = _blocks(s[-8:].encode(), hb0)
        pp = want.get(_rotl(ha ^ hb, 13))
        if pp is None:
            continue
        m = _rotl(pp, 19) ^ ha                 # u ^ ha, rotl(u, 13) == p
        k = (m * pow(C2, -1, 1 << 32)) & M32   # undo mix: * C2, rotl 15, * C1
        k = (_rotl(k, 17) * pow(C1, -1, 1 << 32)) & M32
        x = ''.join(chr(c) if 0x21 <= c < 0x7f else chr(0x100 + c)
                    for c in k.to_bytes(4, 'little'))
        key = s + x
        assert score(a, key) == score(b, key)
        return key
    raise SystemExit('pymemcache_model: no tie key for %s, %s' % (a, b))


def ranked(servers, key):
    """Servers by falling score, an equal score to the larger name first."""
    return sorted(servers, key=lambda s: (score(s, key), s), reverse=True)

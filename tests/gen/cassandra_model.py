"""tests/gen/cassandra_model.py: an independent model, in Python, of how
Cassandra (Murmur3Partitioner, SimpleStrategy, NetworkTopologyStrategy)
places a partition key, written from the rules in docs/algorithms.md (no
chash code and no driver code involved). Imported by
tests/compat/cassandra_compat.py, which checks it against Debian's
python3-cassandra (the DataStax driver).

  murmur3_x64_128(data)   the 128-bit hash as two signed 64-bit halves, with
                          Cassandra's tail rule: tail bytes are sign-extended
                          (signed_tail=False gives the reference MurmurHash3,
                          whose tail bytes are unsigned: a variant that
                          must disagree)
  token(data)             the Murmur3Partitioner token: the first half, with
                          Long.MIN_VALUE mapped to Long.MAX_VALUE, and the
                          minimum token for an empty key
  serialize(key, how)     a partition key's bytes: str as UTF-8, int as
                          'bigint' (8 bytes) or 'int' (4 bytes) big-endian
                          two's complement, bytes as given
  key_for_hash(h1)        a 16-byte key whose hash's first half is h1 (the
                          hash run backwards), to craft keys onto a token
  Ring(nodes)             nodes as (address, tokens, dc, rack)
    .primary(t)           the owner of the first token at or after t, wrapping
    .simple(t, rf)        SimpleStrategy's replicas, in walk order
    .network(t, rfs)      NetworkTopologyStrategy's replicas, in the order
                          Cassandra's server adds them ({dc: rf})

It writes no file of its own. self_check() pins it to hand-worked values;
running this file runs it.
"""
import bisect
import struct

MASK = (1 << 64) - 1
MIN_TOKEN = -(1 << 63)
MAX_TOKEN = (1 << 63) - 1
C1 = 0x87c37b91114253d5
C2 = 0x4cf5ad432745937f


def signed64(x):
    x &= MASK
    return x - (1 << 64) if x >> 63 else x


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def fmix(k):
    k ^= k >> 33
    k = (k * 0xff51afd7ed558ccd) & MASK
    k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & MASK
    k ^= k >> 33
    return k


def tail_word(data, signed_tail):
    """The tail bytes as one 64-bit word, byte i at bits 8i. Cassandra
    widens each byte as a Java byte (signed), so a byte >= 0x80 sets every
    bit above its own; XOR, not OR, combines them."""
    word = 0
    for i, b in enumerate(data):
        if signed_tail and b >= 0x80:
            word ^= (b - 256) << (8 * i)
        else:
            word ^= b << (8 * i)
    return word & MASK


def murmur3_x64_128(data, signed_tail=True):
    h1 = h2 = 0
    nblocks = len(data) // 16
    for i in range(nblocks):
        k1, k2 = struct.unpack_from("<QQ", data, 16 * i)
        k1 = (rotl((k1 * C1) & MASK, 31) * C2) & MASK
        h1 ^= k1
        h1 = (((rotl(h1, 27) + h2) & MASK) * 5 + 0x52dce729) & MASK
        k2 = (rotl((k2 * C2) & MASK, 33) * C1) & MASK
        h2 ^= k2
        h2 = (((rotl(h2, 31) + h1) & MASK) * 5 + 0x38495ab5) & MASK
    tail = data[16 * nblocks:]
    if len(tail) > 8:
        k2 = tail_word(tail[8:], signed_tail)
        h2 ^= (rotl((k2 * C2) & MASK, 33) * C1) & MASK
    if tail:
        k1 = tail_word(tail[:8], signed_tail)
        h1 ^= (rotl((k1 * C1) & MASK, 31) * C2) & MASK
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & MASK
    h2 = (h2 + h1) & MASK
    h1 = fmix(h1)
    h2 = fmix(h2)
    h1 = (h1 + h2) & MASK
    h2 = (h2 + h1) & MASK
    return signed64(h1), signed64(h2)


def unfmix(k):
    inverse = pow(0xc4ceb9fe1a85ec53, -1, 1 << 64)
    k ^= k >> 33                    # x ^= x >> 33 undoes itself for 64 bits
    k = (k * inverse) & MASK
    k ^= k >> 33
    k = (k * pow(0xff51afd7ed558ccd, -1, 1 << 64)) & MASK
    return k ^ (k >> 33)


def rotr(x, r):
    return rotl(x, 64 - r)


def key_for_hash(h1):
    """The 16 bytes (no tail) whose murmur3_x64_128 is (h1, 0): every step
    of the hash undone, last first."""
    inv5 = pow(5, -1, 1 << 64)
    out1, out2 = h1 & MASK, 0
    f2 = (out2 - out1) & MASK              # undo h1 += h2; h2 += h1 (after fmix)
    f1 = (out1 - f2) & MASK
    a1, a2 = unfmix(f1), unfmix(f2)
    b2 = (a2 - a1) & MASK                  # undo h1 += h2; h2 += h1 (before fmix)
    b1 = (a1 - b2) & MASK
    b1 ^= 16                               # undo the length XOR
    b2 ^= 16
    m2 = rotr((((b2 - 0x38495ab5) * inv5) - b1) & MASK, 31)
    k2 = (rotr((m2 * pow(C1, -1, 1 << 64)) & MASK, 33) * pow(C2, -1, 1 << 64)) & MASK
    m1 = rotr(((b1 - 0x52dce729) * inv5) & MASK, 27)
    k1 = (rotr((m1 * pow(C2, -1, 1 << 64)) & MASK, 31) * pow(C1, -1, 1 << 64)) & MASK
    return struct.pack("<QQ", k1, k2)


def token(data, signed_tail=True):
    if not data:
        return MIN_TOKEN
    first = murmur3_x64_128(data, signed_tail)[0]
    return MAX_TOKEN if first == MIN_TOKEN else first


def serialize(key, how="bigint"):
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, bytes):
        return key
    if how == "bigint":
        return struct.pack(">q", key)
    if how == "int":
        return struct.pack(">i", key)
    raise ValueError("integer_key: %r" % how)


class Ring:
    """nodes: a list of (address, [tokens], dc, rack)."""

    def __init__(self, nodes):
        owner = {}
        self.location = {}
        for address, tokens, dc, rack in nodes:
            self.location[address] = (dc, rack)
            for t in tokens:
                if not MIN_TOKEN <= t <= MAX_TOKEN:
                    raise ValueError("token %d is not a signed 64-bit integer" % t)
                if t in owner:
                    raise ValueError("token %d is held by %s and %s" % (t, owner[t], address))
                owner[t] = address
        self.tokens = sorted(owner)
        self.owners = [owner[t] for t in self.tokens]

    def walk(self, t):
        """Token owners from the first token at or after t, once round."""
        start = bisect.bisect_left(self.tokens, t) % len(self.tokens)
        for i in range(len(self.tokens)):
            yield self.owners[(start + i) % len(self.tokens)]

    def primary(self, t):
        return next(self.walk(t))

    def simple(self, t, rf):
        replicas = []
        for node in self.walk(t):
            if len(replicas) == rf:
                break
            if node not in replicas:
                replicas.append(node)
        return replicas

    def network(self, t, rfs):
        """One walk of the ring; each DC takes a node from a rack it has
        not used yet, or, while it has more replicas to place than racks
        (rf - racks rack repeats are allowed), a node from a used rack.
        A DC is done at min(rf, its node count) replicas."""
        nodes_in = {}
        racks_in = {}
        for node, (dc, rack) in self.location.items():
            nodes_in[dc] = nodes_in.get(dc, 0) + 1
            racks_in.setdefault(dc, set()).add(rack)
        left = {}
        repeats = {}
        for dc, rf in rfs.items():
            if rf > 0 and nodes_in.get(dc, 0) > 0:
                left[dc] = min(rf, nodes_in[dc])
                repeats[dc] = rf - len(racks_in[dc])
        replicas = []
        racks_used = set()
        to_fill = len(left)
        for node in self.walk(t):
            if to_fill == 0:
                break
            dc, rack = self.location[node]
            if left.get(dc, 0) == 0:
                continue
            if (dc, rack) not in racks_used:
                racks_used.add((dc, rack))
            elif repeats[dc] > 0 and node not in replicas:
                repeats[dc] -= 1
            else:
                continue
            replicas.append(node)
            left[dc] -= 1
            if left[dc] == 0:
                to_fill -= 1
        return replicas


def self_check():
    # The tail rule: one byte 0x80 is widened to 0xFFFFFFFFFFFFFF80 by
    # Cassandra, to 0x80 by the reference hash; bytes below 0x80 agree.
    assert tail_word(b"\x80", True) == 0xFFFFFFFFFFFFFF80
    assert tail_word(b"\x80", False) == 0x80
    assert tail_word(b"\x01\x80", True) == 0xFFFFFFFFFFFF8001
    assert murmur3_x64_128(b"abc") == murmur3_x64_128(b"abc", False)
    assert murmur3_x64_128(b"\xe9") != murmur3_x64_128(b"\xe9", False)
    # A 16-byte key has no tail: both rules agree whatever its bytes.
    assert murmur3_x64_128(b"\xff" * 16) == murmur3_x64_128(b"\xff" * 16, False)
    # The reference MurmurHash3_x64_128 of "" with seed 0 is all zero.
    assert murmur3_x64_128(b"") == (0, 0)
    assert token(b"") == MIN_TOKEN
    for h in (MIN_TOKEN, MAX_TOKEN, 0, -1, 12345):
        assert murmur3_x64_128(key_for_hash(h)) == (h, 0)
    assert token(key_for_hash(MIN_TOKEN)) == MAX_TOKEN
    assert serialize(1) == b"\0\0\0\0\0\0\0\x01"
    assert serialize(-2, "int") == b"\xff\xff\xff\xfe"
    # A hand-worked ring: tokens -10 (a), 0 (b), 10 (c).
    ring = Ring([("a", [-10], "dc1", "r1"), ("b", [0], "dc1", "r1"), ("c", [10], "dc1", "r2")])
    assert [ring.primary(t) for t in (-11, -10, -9, 0, 10, 11, MAX_TOKEN)] == \
        ["a", "a", "b", "b", "c", "a", "a"]
    assert ring.simple(11, 2) == ["a", "b"]
    # Racks r1, r2, RF 2: from -9, b (r1), then c (r2); a would repeat r1.
    assert ring.network(-9, {"dc1": 2}) == ["b", "c"]
    # RF 3 > 2 racks: one rack repeat is allowed, taken by the first node
    # of a used rack met (b, right after a), before c's new rack.
    assert ring.network(-10, {"dc1": 3}) == ["a", "b", "c"]


if __name__ == "__main__":
    self_check()
    print("cassandra_model: self-check passed")

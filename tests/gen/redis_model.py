"""tests/gen/redis_model.py: an independent model, in Python, of how Redis
Cluster places keys and of the hash_tag rule, written from the rules in
docs/algorithms.md (no chash code involved). Imported by tests/gen/redis_gen.py
(which writes redis_cluster.test from it) and by tests/compat/redis_compat.py
(which checks it, and chash, against the real redis-server, redis-cli and
nutcracker).

  crc16(data)             CRC-16/XMODEM, bit by bit (polynomial 0x1021, MSB
                          first, initial value 0, no final XOR)
  tagged(key, tag)        the bytes a router hashes under a two-character tag
  keyslot(key)            Redis Cluster's slot: crc16 of the {tag} or the key,
                          mod 16384
  create_ranges(n)        the slot range of each of n masters, as
                          `redis-cli --cluster create` splits 16384 slots
                          (single-precision float, lround)
  interleave(addrs)       the master order redis-cli uses for "host:port"
                          arguments on several hosts
  keys_for_slots(slots)   short keys crafted to land on given slots
  slot_owner(ranges)      slot -> master index

It writes no file of its own. self_check() pins it to published values
(CRC-16/XMODEM's check value, Redis's slots of "foo" and "bar", redis-cli's
3-master split); redis_gen.py runs it first, and so does running this file.
"""
import math
import struct

SLOTS = 16384


def crc16(data):
    """CRC-16/XMODEM of bytes: the check value of b'123456789' is 0x31C3."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def tagged(key, tag):
    """The part of key (bytes) that is hashed under tag (two bytes): from
    the first tag[0], up to the first tag[1] after it, when at least one
    byte lies between; otherwise the whole key."""
    if tag is None:
        return key
    start = key.find(tag[0:1])
    if start < 0:
        return key
    end = key.find(tag[1:2], start + 1)
    if end < 0 or end == start + 1:
        return key
    return key[start + 1:end]


def keyslot(key):
    return crc16(tagged(key, b'{}')) % SLOTS


def f32(x):
    """x rounded to single precision (round to nearest even). An operation
    on two floats done in double and then rounded here is correctly rounded
    single precision: double holds more than twice float's bits."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def lround(x):
    """C's lround: nearest integer, halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def create_ranges(n, single=True):
    """[(first, last)] of each master, in master order. single=False does
    the arithmetic in double precision: a wrong variant, used to show that
    the checks notice (it first differs at 78 masters)."""
    r = f32 if single else float
    per_master = r(SLOTS / r(n))
    first, cursor, out = 0, 0.0, []
    for i in range(n):
        last = lround(r(r(cursor + per_master) - 1.0))
        if last > SLOTS or i == n - 1:
            last = SLOTS - 1
        if last < first:
            last = first
        out.append((first, last))
        first = last + 1
        cursor = r(cursor + per_master)
    return out


def layout_is_valid(ranges):
    """Whether every master got slots inside 0..16383 (redis-cli's split
    runs past the last slot for some counts above 7541)."""
    return ranges[-1][1] == SLOTS - 1 and all(
        a <= b < SLOTS for a, b in ranges)


def interleave(addrs):
    """redis-cli's master order for "host:port" arguments: group them by
    host in order of first appearance, then take the first of each group,
    then the second of each, and so on."""
    groups = {}
    for a in addrs:
        groups.setdefault(a.rsplit(':', 1)[0], []).append(a)
    out, k = [], 0
    while len(out) < len(addrs):
        for g in groups.values():
            if k < len(g):
                out.append(g[k])
        k += 1
    return out


def keys_for_slots(slots):
    """{slot: the first of 'a'..'z', '0'..'9' strings (shortest first, then
    in alphabet order) whose slot it is}: keys crafted to land on chosen
    slots, such as the first and last slot of every master."""
    import itertools
    alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
    want, found = set(slots), {}
    for length in range(1, 6):
        for chars in itertools.product(alphabet, repeat=length):
            key = ''.join(chars)
            s = keyslot(key.encode())
            if s in want and s not in found:
                found[s] = key
                if len(found) == len(want):
                    return found
    raise ValueError('no short key for some slots')


def slot_owner(ranges):
    owner = [None] * SLOTS
    for i, (a, b) in enumerate(ranges):
        for s in range(a, b + 1):
            owner[s] = i
    return owner


def self_check():
    assert crc16(b'123456789') == 0x31C3
    # Redis's own examples: the keys of its cluster tutorial.
    assert keyslot(b'foo') == 12182 and keyslot(b'bar') == 5061
    assert keyslot(b'{user1000}.following') == keyslot(b'user1000')
    assert tagged(b'{}{a}', b'{}') == b'{}{a}'
    assert tagged(b'{{a}}', b'{}') == b'{a'
    assert tagged(b'a{b}{c}', b'{}') == b'b'
    assert create_ranges(3) == [(0, 5460), (5461, 10922), (10923, 16383)]
    assert create_ranges(78) != create_ranges(78, single=False)
    assert all(layout_is_valid(create_ranges(n)) for n in (1, 2, 100, 7541))
    assert not layout_is_valid(create_ranges(7542))
    assert interleave(['a:1', 'a:2', 'b:1', 'b:2', 'a:3']) == \
        ['a:1', 'b:1', 'a:2', 'b:2', 'a:3']


if __name__ == '__main__':
    self_check()
    print('redis_model.py: self-check passed')

"""tests/gen/partitioners_model.py: models of the Kafka and Guava
partitioners, written in Python from the libraries' own definitions (not
from chash's code):

  murmur2_kafka(b)           Kafka's Utils.murmur2 (seed 0x9747b28c), as an
                             unsigned 32-bit value
  murmur2_kafkajs_legacy(b)  kafkajs' legacy murmur2 (LegacyPartitioner),
                             evaluated with JavaScript's number rules:
                             products are doubles, bitwise operators take
                             ToInt32/ToUint32, the block loop runs while
                             i < length/4
  kafka_partition(b, n, h)   toPositive(h(b)) % n
  murmur3_128_low(b)         MurmurHash3 x64 128 (seed 0), its h1: Guava's
                             murmur3_128().hashBytes(b).padToLong()
  guava_bucket(x, n)         Hashing.consistentHash(long x, int n), with
                             Java's int overflow and saturating (int) cast
  guava_extreme_longs()      longs whose generator hits the +1 overflow and
                             the saturating cast within a few steps

Used by tests/gen/partitioners_gen.py and tests/compat/partitioners.py.
"""
M32 = 0xffffffff
M64 = (1 << 64) - 1


def murmur2_kafka(b):
    m = 0x5bd1e995
    n = len(b)
    h = (0x9747b28c ^ n) & M32
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(b[i:i + 4], 'little')
        k = (k * m) & M32
        k ^= k >> 24
        k = (k * m) & M32
        h = (h * m) & M32
        h ^= k
    t = n - n % 4
    r = n % 4
    if r >= 3:
        h ^= b[t + 2] << 16
    if r >= 2:
        h ^= b[t + 1] << 8
    if r >= 1:
        h ^= b[t]
        h = (h * m) & M32
    h ^= h >> 13
    h = (h * m) & M32
    h ^= h >> 15
    return h


def _to_uint32(x):
    """JavaScript's ToUint32 of a number holding an integer (a float)."""
    return int(x) & M32


def _to_int32(x):
    u = _to_uint32(x)
    return u - (1 << 32) if u >= 1 << 31 else u


def murmur2_kafkajs_legacy(b):
    M = float(0x5bd1e995)
    n = len(b)
    h = float(_to_int32(0x9747b28c) ^ n)          # SEED ^ length
    at = lambda j: b[j] if j < n else 0            # undefined & 0xff is 0
    i = 0
    while i < n / 4:                               # length4 is not floored
        j = 4 * i
        k = float(at(j) + (at(j + 1) << 8) + (at(j + 2) << 16)
                  + _to_int32(at(j + 3) << 24))
        k *= M                                     # a double product
        k = float(_to_int32(k) ^ (_to_uint32(k) >> 24))
        k *= M
        h *= M
        h = float(_to_int32(h) ^ _to_int32(k))
        i += 1
    t = n & ~3
    r = n % 4
    if r >= 3:
        h = float(_to_int32(h) ^ (b[t + 2] << 16))
    if r >= 2:
        h = float(_to_int32(h) ^ (b[t + 1] << 8))
    if r >= 1:
        h = float(_to_int32(h) ^ b[t])
        h *= M
    h = float(_to_int32(h) ^ (_to_uint32(h) >> 13))
    h *= M
    h = _to_int32(h) ^ (_to_uint32(h) >> 15)
    return h & M32


def kafka_partition(b, n, hash_fn=murmur2_kafka):
    return (hash_fn(b) & 0x7fffffff) % n


def _rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _fmix64(k):
    k ^= k >> 33
    k = (k * 0xff51afd7ed558ccd) & M64
    k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & M64
    k ^= k >> 33
    return k


def murmur3_128(b):
    """(h1, h2) of MurmurHash3_x64_128 with seed 0."""
    c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
    h1 = h2 = 0
    n = len(b)
    nb = n - n % 16
    for i in range(0, nb, 16):
        k1 = int.from_bytes(b[i:i + 8], 'little')
        k2 = int.from_bytes(b[i + 8:i + 16], 'little')
        k1 = (_rotl64((k1 * c1) & M64, 31) * c2) & M64
        h1 ^= k1
        h1 = (_rotl64(h1, 27) + h2) & M64
        h1 = (h1 * 5 + 0x52dce729) & M64
        k2 = (_rotl64((k2 * c2) & M64, 33) * c1) & M64
        h2 ^= k2
        h2 = (_rotl64(h2, 31) + h1) & M64
        h2 = (h2 * 5 + 0x38495ab5) & M64
    tail = b[nb:]
    k1 = int.from_bytes(tail[:8], 'little')
    k2 = int.from_bytes(tail[8:], 'little')
    if len(tail) > 8:
        h2 ^= (_rotl64((k2 * c2) & M64, 33) * c1) & M64
    if len(tail) > 0:
        h1 ^= (_rotl64((k1 * c1) & M64, 31) * c2) & M64
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    return h1, h2


def murmur3_128_low(b):
    return murmur3_128(b)[0]


def signed64(u):
    return u - (1 << 64) if u >= 1 << 63 else u


LCG_A = 2862933555777941757


def _java_int(d):
    """Java's (int) of a double: truncation, saturating at the int range."""
    if d != d:
        return 0
    if d >= 2147483647.0:
        return 2147483647
    if d <= -2147483648.0:
        return -2147483648
    return int(d)


def guava_bucket(x, n, overflow=True, saturate=True):
    """consistentHash(x, n) for a long x (any int, taken mod 2^64).
    overflow=False or saturate=False give the wrong variants that the
    checks must tell apart: no int wrap of the + 1, a C-style cast that
    wraps mod 2^32 instead of saturating."""
    state = x & M64
    candidate = 0
    while True:
        state = (LCG_A * state + 1) & M64
        top = (state >> 33) + 1
        if overflow and top == 1 << 31:
            top = -(1 << 31)
        q = float(candidate + 1) / (float(top) / 2147483648.0)
        if saturate:
            nxt = _java_int(q)
        else:
            nxt = int(q) & M32 if q == q and abs(q) < 2.0 ** 63 else 0
            nxt = nxt - (1 << 32) if nxt >= 1 << 31 else nxt
        if 0 <= nxt < n:
            candidate = nxt
        else:
            return candidate


def guava_extreme_longs():
    """Longs whose generator state, after step s (1..4), has its top 31
    bits all ones (the + 1 overflows: d = -1) or all zeros (d = 2^-31:
    the quotient passes the int range), found by running the generator
    backwards (its multiplier is odd, so invertible mod 2^64)."""
    inv = pow(LCG_A, -1, 1 << 64)
    out = []
    for s in range(1, 5):
        for top in (0x7fffffff, 0):
            for low in (0, 1, 0x1ffffffff, 0x123456789):
                state = (top << 33) | low
                for _ in range(s):
                    state = ((state - 1) * inv) & M64
                out.append(signed64(state))
    return out

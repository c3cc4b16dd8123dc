"""tests/gen/uhashring_model.py: an independent model of Python uhashring
2.x's two rings, written from the rule in docs/algorithms.md, not from chash
or uhashring's code.

HashRing(nodes) (the default ring, uhashring 2.1, Debian's python3-uhashring):
  - node n of weight w gets vnodes*w points (vnodes 160 by default, no
    normalising of weights): point i is the MD5 of the text "n-i"
    (i = 0 .. vnodes*w-1) read as one 128-bit big-endian integer;
  - the nodes are placed in the order given, each point over any equal
    point already placed (so the later node owns a shared point);
  - a key (its text, UTF-8) goes to the first point strictly above the
    key's 128-bit MD5, wrapping to the lowest point.
HashRing(nodes, hash_fn='ketama'):
  - node n of weight w gets k = floor(vnodes * N * w / W) labels "n-i"
    (i = 0 .. k-1; vnodes 40 by default, N nodes, W the sum of weights),
    each giving 4 points: the 4 little-endian 32-bit words of its MD5;
  - the later node (in the order given) owns a shared point;
  - a key goes to the first point strictly above the first little-endian
    32-bit word of the key's MD5, wrapping to the lowest point.
"""
import bisect
import hashlib


def md5_int(text):
    return int.from_bytes(hashlib.md5(text.encode('utf-8')).digest(), 'big')


def md5_words(text):
    d = hashlib.md5(text.encode('utf-8')).digest()
    return [int.from_bytes(d[4 * j:4 * j + 4], 'little') for j in range(4)]


class Ring:
    """nodes: [(name, weight)] in the order given. ketama picks the mode;
    later_wins and strictly_above are the library's rules (the other values
    are variants that show a check can fail)."""

    def __init__(self, nodes, ketama=False, vnodes=None,
                 later_wins=True, strictly_above=True):
        self.ketama = ketama
        self.strictly_above = strictly_above
        vnodes = vnodes if vnodes is not None else (40 if ketama else 160)
        owners = {}
        total = sum(w for _, w in nodes)
        for name, w in nodes:
            if ketama:
                labels = vnodes * len(nodes) * w // total
                points = [p for i in range(labels)
                          for p in md5_words('%s-%d' % (name, i))]
            else:
                points = [md5_int('%s-%d' % (name, i)) for i in range(vnodes * w)]
            for p in points:
                if later_wins or p not in owners:
                    owners[p] = name
        self.keys = sorted(owners)
        self.owners = owners

    def key_position(self, key):
        return md5_words(key)[0] if self.ketama else md5_int(key)

    def owner_at(self, pos):
        if not self.keys:
            return None
        find = bisect.bisect_right if self.strictly_above else bisect.bisect_left
        i = find(self.keys, pos)
        return self.owners[self.keys[i % len(self.keys)]]

    def owner(self, key):
        return self.owner_at(self.key_position(key))


def ketama_collision():
    """The first two names mc0, mc1, ... whose ketama points (40 labels
    each) share one: (earlier name, later name, the point)."""
    seen = {}
    for i in range(100000):
        name = 'mc%d' % i
        for j in range(40):
            for p in md5_words('%s-%d' % (name, j)):
                if seen.get(p, name) != name:
                    return seen[p], name, p
                seen[p] = name
    raise SystemExit('uhashring_model: no colliding pair found')

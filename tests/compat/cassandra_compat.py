"""tests/compat/cassandra_compat.py: the Cassandra model of
tests/gen/cassandra_model.py against Debian's python3-cassandra (the
DataStax driver, 3.25), whose token-aware routing reproduces Cassandra's
placement: its Murmur3Token hash, and its TokenMap built, with no cluster,
from the same hosts (address, dc, rack) and tokens, with SimpleStrategy and
NetworkTopologyStrategy keyspaces.

Run by tests/compat/run.sh (make test-compat) with Debian's python3:

  cassandra_compat.py CHASH_SO

For each configuration (3 nodes with one token each, the lowest token
among them; 6 nodes x 16 tokens; 2 DCs x 3 racks x 2 nodes x 8 tokens with
{dc1: 3, dc2: 2}; a DC with fewer racks than its replication factor), over
2,000+ text keys, 2,000 bigint ids and 2,000 int ids, it compares:

  token     the model's token with the driver's, for every key
  ch_hash   chash's ch_hash(key, 'murmur3_cassandra') with the driver's
            token (text keys as TEXT, others as the BLOB of their bytes)
  primary   the first replica (a SimpleStrategy RF 1 keyspace)
  simple    the SimpleStrategy replica list, in order
  network   the NetworkTopologyStrategy replica SET
  ch_locate, ch_replicas simple, ch_replicas network
            algorithm cassandra (an inline JSON ring of the same nodes,
            tokens, DCs and racks; INTEGER ids as INTEGER keys, which the
            ring's integer_key serializes) against the driver: the
            primary, the SimpleStrategy list in order, the NTS set
  ch_replicas server order
            chash's NTS list in order against the model of the server

Some node tokens are the tokens of crafted text keys, and 16-byte blob
keys are crafted (the hash run backwards) onto every node token and onto
the hashes -2^63 (whose token is 2^63-1) and 2^63-1, so that a key's token
equals a node's token, and keys wrap past the highest token. Where the driver and Cassandra's
server differ, the check follows the server, from the model of
NetworkTopologyStrategy.calculateNaturalReplicas, and prints how often:
the driver groups replicas by DC (so only the set is compared), it lists a
host twice when a DC has fewer racks than its RF and a skipped host has
two tokens before the last rack is met (those keys are counted, and the
driver's hosts must be among the server's), and it hashes an empty key where the server gives the
minimum token (the empty key is checked against the model alone).

Each check is shown able to fail: the unsigned-tail MurmurHash3,
little-endian integers, the hash -2^63 kept as the token, NetworkTopologyStrategy with every
node in one rack, the lookup
taking the first token strictly after the key's, or the one before it,
must each disagree with the driver on
some keys. Exits 1 on any disagreement or on a variant that agrees.
"""
import bisect
import json
import random
import struct
import sys

import compatkit  # also puts tests/gen/ on the module path
import cassandra_model as model
from cassandra.connection import DefaultEndPoint
from cassandra.metadata import KeyspaceMetadata, Murmur3Token, TokenMap
from cassandra.policies import SimpleConvictionPolicy
from cassandra.pool import Host

NKEYS = 2000


class Metadata:
    """What TokenMap asks of the driver's cluster metadata: the keyspaces."""

    def __init__(self, keyspaces):
        self.keyspaces = keyspaces


def text_keys(rnd, crafted):
    shapes = [
        lambda i: 'user:%d' % i,
        lambda i: 'order-%08x' % rnd.getrandbits(32),
        lambda i: 'ключ-%d-é' % i,
        lambda i: '鍵%dキー🙂' % i,
        lambda i: ''.join(chr(rnd.randint(0x20, 0x7e)) for _ in range(rnd.randint(1, 40))),
        lambda i: ''.join(chr(rnd.randint(0xa0, 0x2fff)) for _ in range(rnd.randint(1, 12))),
    ]
    keys = set(crafted)
    while len(keys) < NKEYS + len(crafted):
        keys.add(shapes[len(keys) % len(shapes)](len(keys)))
    return sorted(keys)


def int_keys(rnd, bits):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    keys = {lo, hi, 0, -1, 1, lo + 1, hi - 1}
    while len(keys) < NKEYS:
        keys.add(rnd.randint(lo, hi) if len(keys) % 2 else rnd.randint(-5000, 5000))
    return sorted(keys)


def configurations():
    """(name, nodes as (address, tokens, dc, rack), crafted keys,
    replication factors {dc: rf}, SimpleStrategy RF)."""
    rnd = random.Random(20)
    out = []

    three = [("10.0.0.1", [model.MIN_TOKEN], "dc1", "rack1"),
             ("10.0.0.2", [-3074457345618258603], "dc1", "rack1"),
             ("10.0.0.3", [3074457345618258602], "dc1", "rack1")]
    out.append(("3 nodes x 1 token", three, [], {"dc1": 2}, 2))

    def spread(names, per_node, dc_rack, tag):
        """Random tokens, a quarter of them the tokens of crafted keys."""
        crafted, nodes = [], []
        for i, name in enumerate(names):
            tokens = []
            for j in range(per_node):
                if j % 4 == 0:
                    key = "tie-%s-%d" % (tag, len(crafted))
                    crafted.append(key)
                    tokens.append(model.token(key.encode()))
                else:
                    tokens.append(rnd.randint(model.MIN_TOKEN + 1, model.MAX_TOKEN))
            dc, rack = dc_rack(i)
            nodes.append((name, tokens, dc, rack))
        return nodes, crafted

    six, crafted = spread(["10.0.1.%d" % i for i in range(1, 7)], 16,
                          lambda i: ("dc1", "rack%d" % (i % 3 + 1)), "six")
    out.append(("6 nodes x 16 tokens", six, crafted, {"dc1": 3}, 3))

    names = ["10.%d.%d.%d" % (dc, rack, n) for dc in (1, 2) for rack in (1, 2, 3) for n in (1, 2)]
    two_dc, crafted = spread(names, 8, lambda i: ("dc%d" % (i // 6 + 1), "rack%d" % (i // 2 % 3 + 1)),
                             "twodc")
    out.append(("2 DCs x 3 racks x 2 nodes x 8 tokens", two_dc, crafted, {"dc1": 3, "dc2": 2}, 3))

    names = ["10.3.%d.%d" % (rack, n) for rack in (1, 2) for n in (1, 2, 3)] + \
        ["10.4.1.%d" % n for n in (1, 2, 3)]
    few, crafted = spread(names, 8, lambda i: ("dc1", "rack%d" % (i // 3 + 1)) if i < 6
                          else ("dc2", "rack1"), "few")
    out.append(("dc1 with 2 racks for RF 4, dc2 with 1 rack for RF 2", few, crafted,
                {"dc1": 4, "dc2": 2}, 3))
    return out


def driver_map(nodes, rfs, simple_rf):
    owner = {}
    for address, tokens, dc, rack in nodes:
        host = Host(DefaultEndPoint(address), SimpleConvictionPolicy, datacenter=dc, rack=rack)
        for t in tokens:
            owner[Murmur3Token(t)] = host
    keyspaces = {
        "one": KeyspaceMetadata("one", True, "SimpleStrategy", {"replication_factor": "1"}),
        "simple": KeyspaceMetadata("simple", True, "SimpleStrategy",
                                   {"replication_factor": str(simple_rf)}),
        "network": KeyspaceMetadata("network", True, "NetworkTopologyStrategy",
                                    {dc: str(rf) for dc, rf in rfs.items()}),
    }
    return TokenMap(Murmur3Token, owner, sorted(owner), Metadata(keyspaces))


def names(hosts):
    return [h.endpoint.address for h in hosts]


def variant_primary(ring, t, lookup):
    if lookup == "strictly after":
        i = bisect.bisect_right(ring.tokens, t)
    else:                                       # the token before the key's
        i = bisect.bisect_left(ring.tokens, t) - 1
    return ring.owners[i % len(ring.owners)]


def variant_bytes(key, how):
    if isinstance(key, str):
        return key.encode("utf-8")
    return struct.pack("<q" if how == "bigint" else "<i", key)


def chash_tokens(db, keys, how):
    args = [(k,) if isinstance(k, str) else (model.serialize(k, how),) for k in keys]
    return [db.execute("SELECT ch_hash(?, 'murmur3_cassandra')", a).fetchone()[0] for a in args]


def chash_spec(nodes, replication, how):
    """The inline JSON spec of the ring: algorithm cassandra, its nodes
    with their tokens, dc and rack."""
    return json.dumps({"algorithm": "cassandra", "replication": replication,
                       "integer_key": how,
                       "nodes": {a: {"tokens": " ".join(map(str, t)), "dc": dc, "rack": rack}
                                 for a, t, dc, rack in nodes}})


def chash_placements(db, keys, nodes, rfs, simple_rf, how):
    """chash's primary, SimpleStrategy list and NetworkTopologyStrategy list
    of every key (an INTEGER key serialized by the ring's integer_key)."""
    simple = chash_spec(nodes, "simple:%d" % simple_rf, how)
    network = chash_spec(nodes, ",".join("%s:%d" % kv for kv in sorted(rfs.items())), how)
    out = []
    for k in keys:
        row = db.execute(
            "SELECT ch_locate(?1, ?2), (SELECT group_concat(node, ' ') FROM"
            " ch_replicas(?1, 100000, ?2)), (SELECT group_concat(node, ' ') FROM"
            " ch_replicas(?1, 100000, ?3))", (k, simple, network)).fetchone()
        out.append((row[0], (row[1] or "").split(), (row[2] or "").split()))
    return out


def check_configuration(db, name, nodes, crafted, rfs, simple_rf, failures, variants):
    ring = model.Ring(nodes)
    one_rack = model.Ring([(a, tokens, dc, "rack1") for a, tokens, dc, rack in nodes])
    tmap = driver_map(nodes, rfs, simple_rf)
    rnd = random.Random(name)
    print("%s: %d tokens, replication simple:%d and %s" % (
        name, len(ring.tokens), simple_rf, ",".join("%s:%d" % kv for kv in sorted(rfs.items()))))
    blobs = list(dict.fromkeys(model.key_for_hash(t)
                               for t in ring.tokens + [model.MIN_TOKEN, model.MAX_TOKEN]))
    for kind, keys in (("text", text_keys(rnd, crafted) + blobs), ("bigint", int_keys(rnd, 64)),
                       ("int", int_keys(rnd, 32))):
        how = kind if kind != "text" else "bigint"
        agree = dict.fromkeys(("token", "ch_hash", "primary", "simple", "network",
                               "ch_locate", "ch_replicas simple", "ch_replicas network",
                               "ch_replicas server order"), 0)
        tokens = chash_tokens(db, keys, how)
        placed = chash_placements(db, keys, nodes, rfs, simple_rf, how)
        repeated = reordered = ties = 0
        wrong = dict.fromkeys(("unsigned tail", "little-endian", "strictly after", "before",
                               "minimum kept", "racks ignored"), 0)
        for key, chash_token, (c_primary, c_simple, c_network) in zip(keys, tokens, placed):
            data = model.serialize(key, how)
            t = model.token(data)
            dt = Murmur3Token.hash_fn(data)
            agree["token"] += t == dt
            agree["ch_hash"] += chash_token == dt
            ties += t in ring.tokens
            dtok = Murmur3Token(dt)
            primary = ring.primary(t)
            agree["primary"] += names(tmap.get_replicas("one", dtok)) == [primary]
            agree["simple"] += names(tmap.get_replicas("simple", dtok)) == ring.simple(t, simple_rf)
            server = ring.network(t, rfs)
            driver = names(tmap.get_replicas("network", dtok))
            agree["ch_locate"] += names(tmap.get_replicas("one", dtok)) == [c_primary]
            agree["ch_replicas simple"] += names(tmap.get_replicas("simple", dtok)) == c_simple
            agree["ch_replicas server order"] += c_network == server
            if len(set(driver)) < len(driver):
                repeated += 1          # the driver's repeated host: follow the server,
                agree["network"] += set(driver) <= set(server)   # which holds its hosts
                agree["ch_replicas network"] += set(driver) <= set(c_network)
            else:
                agree["network"] += set(driver) == set(server)
                agree["ch_replicas network"] += set(driver) == set(c_network)
                wrong["racks ignored"] += set(driver) != set(one_rack.network(t, rfs))
                reordered += driver != server
            wrong["unsigned tail"] += model.token(data, signed_tail=False) != dt
            if kind != "text":
                wrong["little-endian"] += model.token(variant_bytes(key, how)) != dt
            if data:
                wrong["minimum kept"] += model.murmur3_x64_128(data)[0] != dt
            wrong["strictly after"] += variant_primary(ring, t, "strictly after") != primary
            wrong["before"] += variant_primary(ring, t, "before") != primary
        line = ", ".join("%s %d/%d" % (k, v, len(keys)) for k, v in agree.items())
        print("  %-6s %s; %d keys on a node's token" % (kind, line, ties))
        print("         driver's NTS order differs from the server's on %d keys, repeats a "
              "host on %d" % (reordered, repeated))
        for k, v in agree.items():
            if v != len(keys):
                failures.append("%s, %s keys: %s agrees on %d of %d" % (name, kind, k, v, len(keys)))
        for k, v in wrong.items():
            variants[k] = variants.get(k, 0) + v
        print("         variants disagreeing with the driver: %s" % ", ".join(
            "%s %d" % (k, v) for k, v in wrong.items() if k != "little-endian" or kind != "text"))
        if kind == "text":
            print("         (%d text keys and %d crafted blob keys)" % (len(keys) - len(blobs), len(blobs)))


def check_empty_key(db, failures):
    """Cassandra's server gives an empty partition key the minimum token;
    the driver hashes it (MurmurHash3 of no bytes is 0)."""
    t, dt = model.token(b""), Murmur3Token.hash_fn(b"")
    ct = db.execute("SELECT ch_hash('', 'murmur3_cassandra')").fetchone()[0]
    print("empty key: server rule %d (the minimum token), chash %d, driver %d "
          "(followed: the server)" % (t, ct, dt))
    if t != model.MIN_TOKEN or ct != model.MIN_TOKEN:
        failures.append("empty key: token %d, ch_hash %d, not the minimum" % (t, ct))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cassandra_compat.py CHASH_SO")
    model.self_check()
    db = compatkit.chash_db(sys.argv[1])
    failures, variants = [], {}
    for config in configurations():
        check_configuration(db, *config, failures=failures, variants=variants)
    check_empty_key(db, failures)
    for k, v in variants.items():
        if v == 0:
            failures.append("variant %r agrees with the driver on every key: the check cannot fail" % k)
    print("variants, keys disagreeing over all configurations: %s" % ", ".join(
        "%s %d" % kv for kv in variants.items()))
    if failures:
        print("cassandra_compat: FAILED\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("cassandra_compat: model, chash (ch_hash, ch_locate, ch_replicas) and the "
          "driver agree on every key")


if __name__ == "__main__":
    main()

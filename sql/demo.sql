-- chash: a tour. Run it with `make demo` (an in-memory database).
.headers on
.mode box

-- 1. A ring of three database shards. Each node gets 160 virtual nodes
--    ("db-a#1" .. "db-a#160") spread over the 64-bit hash ring.
CREATE VIRTUAL TABLE shards USING chash(vnodes=160);
INSERT INTO shards(node) VALUES ('db-a'), ('db-b'), ('db-c');

-- points: virtual nodes per node; share: the exact fraction of the hash
-- space each node owns.
SELECT node, weight, points, round(share, 4) AS share FROM shards;

-- 2. Some data to place: 10,000 users.
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<10000)
INSERT INTO users SELECT i, 'user-' || i FROM n;

-- Where does each key live? ch_locate(key) uses the only ring there is.
SELECT id, ch_locate(id) AS node FROM users LIMIT 5;

-- How balanced is it? Compare the key counts with the shares above.
SELECT ch_locate(id) AS node, count(*) AS keys FROM users GROUP BY node;

-- 3. Every committed change to the ring is a new version.
SELECT ch_epoch('shards') AS version;

-- A fourth shard joins: version 2.
INSERT INTO shards(node) VALUES ('db-d');
SELECT ch_epoch('shards') AS version;

-- Monotonicity, as Karger et al. (1997) define it: the new node takes over
-- part of every other node's keys, and nothing else moves. Who gives what
-- to db-d?
SELECT ch_locate(id, 'shards@1') AS src, ch_locate(id, 'shards') AS dst,
       count(*) AS keys
  FROM users WHERE ch_moved(id, 'shards@1', 'shards')
 GROUP BY src, dst;

-- Compare with plain hash mod N, where adding a fourth node moves about
-- three keys in four.
SELECT sum(ch_moved(id, '{"algorithm":"modn","nodes":["db-a","db-b","db-c"]}',
                        '{"algorithm":"modn","nodes":["db-a","db-b","db-c","db-d"]}'))
         AS modn_moved,
       sum(ch_moved(id, 'shards@1', 'shards')) AS ring_moved
  FROM users;

-- 4. The migration set as a join: every user that must move, with its
--    source and destination, ready to drive INSERT ... SELECT / DELETE.
CREATE TABLE placement AS
  SELECT id, ch_locate(id, 'shards@1') AS shard FROM users;
SELECT p.id, p.shard AS src, ch_locate(u.id, 'shards') AS dst
  FROM users u JOIN placement p USING (id)
 WHERE p.shard <> ch_locate(u.id, 'shards')
 ORDER BY p.id LIMIT 5;

-- 5. Weights: db-d has twice the capacity, so twice the points.
UPDATE shards SET weight = 2 WHERE node = 'db-d';
SELECT node, weight, points, round(share, 4) AS share FROM shards;

-- 6. Removing a node moves only its own keys (version 3 -> 4).
DELETE FROM shards WHERE node = 'db-b';
SELECT ch_locate(id, 'shards@3') AS src, ch_locate(id, 'shards') AS dst,
       count(*) AS keys
  FROM users WHERE ch_moved(id, 'shards@3', 'shards')
 GROUP BY src, dst;

-- 7. Rings need not be tables: an inline JSON ring, with weights.
SELECT ch_locate('user:42', '{"nodes": {"cache-1": 1, "cache-2": 2}, "vnodes": 300}')
         AS node;

-- ch_hash gives a key's position on the ring (a signed 64-bit integer).
SELECT ch_hash('user:42') AS position, ch_version() AS chash_version;

-- vnode_sweep.sql: how evenly 100,000 keys split over 2 and then 3 equal
-- nodes as the number of virtual nodes per node grows (50, 100, ... 1000),
-- with the 64-bit xxh3 and with md5 (its first 4 bytes, 32-bit positions,
-- the hash of ketama rings). The usual rule of thumb in write-ups on
-- consistent hashing, measured with MD5 and their own keys, is that from
-- 300 virtual nodes per node the split is within a few percent; this is
-- the same measurement with chash.
--
--   sqlite3 :memory: -cmd '.load ./chash' < sql/vnode_sweep.sql
--
-- Columns: keys per node (node-1 .. node-3), max/min (the spread such
-- write-ups quote), worst % (largest deviation of a node's key count from
-- the mean) and exact % (the busiest node's exact share from ch_arcs, over
-- the mean: the ring's own imbalance, without the keys' sampling noise).
-- Another hash is one more row in the hash list below.

CREATE TABLE keys(id INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<100000)
INSERT INTO keys SELECT i FROM c;

-- One inline ring per (nodes, vnodes, hash).
CREATE TABLE rings AS
WITH RECURSIVE v(vnodes) AS (SELECT 50 UNION ALL SELECT vnodes+50 FROM v
                             WHERE vnodes<1000),
     n(nodes) AS (VALUES (2), (3)),
     h(hash) AS (VALUES ('xxh3'), ('md5'))
SELECT nodes, vnodes, hash,
       json_object('nodes', CASE nodes WHEN 2 THEN json_array('node-1', 'node-2')
                            ELSE json_array('node-1', 'node-2', 'node-3') END,
                   'vnodes', vnodes, 'hash', hash) AS spec
FROM h, n, v;

CREATE TABLE counts AS
SELECT r.nodes, r.vnodes, r.hash, ch_locate(k.id, r.spec) AS node,
       count(*) AS n
FROM rings r, keys k GROUP BY 1, 2, 3, 4;

CREATE TABLE vnode_sweep AS
SELECT c.nodes, c.vnodes, c.hash,
       sum(n) FILTER (WHERE node='node-1') AS "node-1",
       sum(n) FILTER (WHERE node='node-2') AS "node-2",
       sum(n) FILTER (WHERE node='node-3') AS "node-3",
       round(max(n)*1.0/min(n), 3) AS "max/min",
       round(100.0*max(abs(n - 100000.0/c.nodes))/(100000.0/c.nodes), 2) AS "worst %",
       (SELECT round(100.0*(max(s)*r.nodes - 1), 2) FROM
          (SELECT sum(share) AS s FROM ch_arcs(r.spec) GROUP BY node)) AS "exact %"
FROM counts c JOIN rings r USING (nodes, vnodes, hash)
GROUP BY c.nodes, c.vnodes, c.hash ORDER BY c.hash, c.nodes, c.vnodes;

.headers on
.mode column
SELECT * FROM vnode_sweep;

-- properties.sql: the five properties of consistent hashing from the paper
-- that introduced it (Karger et al. 1997), each measured on the ring and on
-- hash mod n.
--
--   sqlite3 :memory: -cmd '.load ./chash' < sql/properties.sql
--
--   balance       keys spread evenly: max and min keys per node over the mean
--                 (and the busiest node's exact share from ch_arcs; modn has
--                 no arcs)
--   monotonicity  when a node joins, keys move only onto the new node
--   spread        clients that each know a different subset of the nodes
--                 ("views") still agree: distinct owners of one key
--   load          no node gets too many different keys across all views
--   smoothness    each join or leave moves about 1/n of the keys
--
-- 100,000 keys (20,000 for spread and load), nodes n01 .. n10.

.headers on
.mode column

CREATE TABLE keys(id INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<100000)
INSERT INTO keys SELECT i FROM c;

CREATE TABLE nodes(node TEXT PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<10)
INSERT INTO nodes SELECT printf('n%02d', i) FROM c;

-- The rings compared: modn and the ring with 1 .. 1000 virtual nodes.
CREATE TABLE rings(name TEXT, spec TEXT);
WITH t(v) AS (VALUES (1), (10), (100), (160), (1000))
INSERT INTO rings
SELECT 'ring vnodes=' || v, json_object('vnodes', v, 'nodes',
       (SELECT json_group_array(node) FROM nodes))
FROM t;
INSERT INTO rings SELECT 'modn', json_object('algorithm', 'modn', 'nodes',
       (SELECT json_group_array(node) FROM nodes));

.print
.print == balance: keys per node over the mean (10 nodes, 100,000 keys)
SELECT c.name, round(max(c.n)/10000.0, 3) AS "max/mean",
       round(min(c.n)/10000.0, 3) AS "min/mean",
       CASE WHEN c.name != 'modn' THEN
         (SELECT round(max(s)*10, 3) FROM
            (SELECT sum(share) AS s FROM ch_arcs(r.spec) GROUP BY node))
       END AS "exact max/mean"
FROM (SELECT r.rowid AS i, r.name, ch_locate(k.id, r.spec) AS node,
             count(*) AS n
      FROM rings r, keys k GROUP BY r.rowid, node) AS c
JOIN rings r ON r.rowid = c.i
GROUP BY c.i ORDER BY c.i;

-- Each ring again with n11 added. (Outer columns passed to a table-valued
-- function are qualified, g.old: unqualified, old would name ch_diff's own
-- argument column.)
CREATE TABLE grown AS
SELECT name, spec AS old, json_set(spec, '$.nodes[#]', 'n11') AS new FROM rings
WHERE name IN ('ring vnodes=160', 'modn');

.print
.print == monotonicity: n11 joins 10 nodes; keys that move elsewhere than n11
SELECT g.name,
       sum(ch_moved(id, g.old, g.new)) AS moved,
       sum(ch_moved(id, g.old, g.new) AND ch_locate(id, g.new) != 'n11')
         AS "moved, not to n11",
       (SELECT count(*) FROM ch_diff(g.old, g.new) WHERE dst != 'n11')
         AS "ch_diff rows not to n11"
FROM grown g, keys GROUP BY g.name ORDER BY g.name DESC;

-- Eight client views: view v knows node N if hash('vN') mod 4 != 0
-- (about three quarters of the nodes).
CREATE TABLE views AS
WITH RECURSIVE v(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM v WHERE v<8)
SELECT v, (SELECT json_group_array(node) FROM nodes
           WHERE abs(ch_hash('view' || v || node)) % 4 != 0) AS members
FROM v;

CREATE TABLE view_owner AS
SELECT g.name, w.v, k.id,
       ch_locate(k.id, json_set(g.old, '$.nodes', json(w.members))) AS node
FROM grown g, views w, keys k WHERE k.id <= 20000;

.print
.print == spread: distinct owners of a key over 8 views (each ~3/4 of the nodes)
SELECT name, round(avg(owners), 3) AS "mean owners", max(owners) AS "max owners"
FROM (SELECT name, id, count(DISTINCT node) AS owners FROM view_owner
      GROUP BY name, id)
GROUP BY name ORDER BY name DESC;

.print
.print == load: distinct keys a node gets over the 8 views (mean share 2,000)
SELECT name, max(n) AS "max keys", round(max(n)/2000.0, 2) AS "max/mean share"
FROM (SELECT name, node, count(DISTINCT id) AS n FROM view_owner
      GROUP BY name, node)
GROUP BY name ORDER BY name DESC;

-- Smoothness: two ring tables change one node per transaction, so each
-- step is a version and ch_diff('r@-1'...) compares neighbours.
CREATE VIRTUAL TABLE r USING chash;
CREATE VIRTUAL TABLE m USING chash(algorithm=modn);
INSERT INTO r(node) SELECT node FROM nodes;
INSERT INTO m(node) SELECT node FROM nodes;
CREATE TABLE steps(version INTEGER PRIMARY KEY, change TEXT, nodes INTEGER);
INSERT INTO steps VALUES (1, 'start', 10);
INSERT INTO r(node) VALUES ('n11'); INSERT INTO m(node) VALUES ('n11');
INSERT INTO steps VALUES (2, '+n11', 11);
INSERT INTO r(node) VALUES ('n12'); INSERT INTO m(node) VALUES ('n12');
INSERT INTO steps VALUES (3, '+n12', 12);
INSERT INTO r(node) VALUES ('n13'); INSERT INTO m(node) VALUES ('n13');
INSERT INTO steps VALUES (4, '+n13', 13);
DELETE FROM r WHERE node = 'n01'; DELETE FROM m WHERE node = 'n01';
INSERT INTO steps VALUES (5, '-n01', 12);
DELETE FROM r WHERE node = 'n05'; DELETE FROM m WHERE node = 'n05';
INSERT INTO steps VALUES (6, '-n05', 11);
DELETE FROM r WHERE node = 'n09'; DELETE FROM m WHERE node = 'n09';
INSERT INTO steps VALUES (7, '-n09', 10);

.print
.print == smoothness: fraction of keys moved by each change (ideal: the one node's share)
SELECT s.change,
       round((SELECT sum(share) FROM ch_diff('r@' || (s.version-1), 'r@' || s.version)), 4)
         AS "ring exact",
       round((SELECT avg(ch_moved(id, 'r@' || (s.version-1), 'r@' || s.version))
              FROM keys), 4) AS "ring moved",
       round(1.0/max(s.nodes, p.nodes), 4) AS "ideal 1/n",
       round((SELECT sum(share) FROM ch_diff('m@' || (s.version-1), 'm@' || s.version)), 4)
         AS "modn exact"
FROM steps s JOIN steps p ON p.version = s.version - 1
ORDER BY s.version;

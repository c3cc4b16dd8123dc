-- modn_vs_ring.sql: the fraction of keys that move when one node joins n
-- nodes (n = 2 .. 10), for hash mod n and for the ring (160 virtual nodes,
-- the default).
-- Consistent hashing moves about 1/(n+1) of the keys (only those the new
-- node takes); mod n moves about n/(n+1) (a key stays only if its position
-- mod n equals its position mod n+1).
--
--   sqlite3 :memory: -cmd '.load ./chash' < sql/modn_vs_ring.sql
--
-- measured: ch_moved over 100,000 keys; exact: sum(share) of ch_diff, the
-- moved fraction of the whole hash space, computed without any key.

CREATE TABLE keys(id INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<100000)
INSERT INTO keys SELECT i FROM c;

-- Rings of nodes s1 .. sN, for both algorithms.
CREATE TABLE rings AS
WITH RECURSIVE n(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM n WHERE n<11),
     a(algorithm) AS (VALUES ('ring'), ('modn'))
SELECT algorithm, n,
       json_object('algorithm', algorithm, 'nodes',
         (SELECT json_group_array('s' || m) FROM
            (WITH RECURSIVE m(m) AS (SELECT 1 UNION ALL SELECT m+1 FROM m WHERE m<n)
             SELECT m FROM m))) AS spec
FROM a, n;

CREATE TABLE movement AS
SELECT o.algorithm, o.n,
       (SELECT avg(ch_moved(id, o.spec, w.spec)) FROM keys) AS measured,
       (SELECT sum(share) FROM ch_diff(o.spec, w.spec)) AS exact
FROM rings o JOIN rings w ON w.algorithm = o.algorithm AND w.n = o.n + 1
WHERE o.n >= 2;

CREATE TABLE modn_vs_ring AS
SELECT r.n AS n,
       round(r.measured, 4) AS "ring moved",
       round(r.exact, 4) AS "ring exact",
       round(1.0/(r.n+1), 4) AS "1/(n+1)",
       round(m.measured, 4) AS "modn moved",
       round(m.exact, 4) AS "modn exact",
       round(r.n*1.0/(r.n+1), 4) AS "n/(n+1)"
FROM movement r JOIN movement m ON m.n = r.n AND m.algorithm = 'modn'
WHERE r.algorithm = 'ring' ORDER BY r.n;

.headers on
.mode column
SELECT * FROM modn_vs_ring;

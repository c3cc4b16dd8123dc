-- migration.sql: a users table sharded over SQLite files by ch_locate(id),
-- a shard joining and a shard leaving, each moving only the rows whose
-- owner changes, in one transaction across the attached files.
--
-- Run it in an empty directory (it creates catalog.db and shard_a.db ..
-- shard_d.db there); the main database must be a file, so that a
-- transaction over the attached files commits atomically:
--
--   mkdir /tmp/mig && cd /tmp/mig
--   sqlite3 catalog.db -cmd '.load /path/to/chash' < /path/to/sql/migration.sql
--
-- Every check prints "ok" or "FAIL"; tests/harness/migration.sh runs this file and
-- also kills sqlite3 in the middle of a migration (a real crash).
--
-- The ring table `shards` lives in catalog.db; node names are the schema
-- names the shard files are attached as.

.headers on
.mode column

ATTACH 'shard_a.db' AS shard_a;
ATTACH 'shard_b.db' AS shard_b;
ATTACH 'shard_c.db' AS shard_c;
ATTACH 'shard_d.db' AS shard_d;
CREATE TABLE shard_a.users(id INTEGER PRIMARY KEY, name TEXT, email TEXT);
CREATE TABLE shard_b.users(id INTEGER PRIMARY KEY, name TEXT, email TEXT);
CREATE TABLE shard_c.users(id INTEGER PRIMARY KEY, name TEXT, email TEXT);
CREATE TABLE shard_d.users(id INTEGER PRIMARY KEY, name TEXT, email TEXT);

-- Every row of every shard, with the shard it is on.
CREATE TEMP VIEW all_users AS
  SELECT 'shard_a' AS shard, * FROM shard_a.users UNION ALL
  SELECT 'shard_b', * FROM shard_b.users UNION ALL
  SELECT 'shard_c', * FROM shard_c.users UNION ALL
  SELECT 'shard_d', * FROM shard_d.users;

-- Count and checksum of all rows, wherever they are (order-independent).
CREATE TEMP VIEW fingerprint AS
  SELECT count(*) AS n, count(DISTINCT id) AS ids,
         sum(ch_hash(id || '|' || name || '|' || email) % 1000000007) AS checksum
  FROM all_users;

-- Version 1 of the ring: three shards.
CREATE VIRTUAL TABLE shards USING chash;
INSERT INTO shards(node) VALUES ('shard_a'), ('shard_b'), ('shard_c');

-- 30,000 users, each written to the shard that owns its id.
CREATE TEMP TABLE new_users AS
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<30000)
SELECT i AS id, 'user ' || i AS name, 'user' || i || '@example.com' AS email
FROM c;
BEGIN;
INSERT INTO shard_a.users SELECT * FROM new_users WHERE ch_locate(id, 'shards') = 'shard_a';
INSERT INTO shard_b.users SELECT * FROM new_users WHERE ch_locate(id, 'shards') = 'shard_b';
INSERT INTO shard_c.users SELECT * FROM new_users WHERE ch_locate(id, 'shards') = 'shard_c';
COMMIT;

.print == 3 shards (ring version 1)
SELECT shard, count(*) AS users FROM all_users GROUP BY shard;
CREATE TEMP TABLE before AS SELECT * FROM fingerprint;

-- ------------------------------------------------------------ a shard joins
-- One transaction: the ring change (so 'shards' is the new ring and
-- 'shards@-1' the committed one), the migration set, the moves.

BEGIN;
INSERT INTO shards(node) VALUES ('shard_d');

-- The migration set: the rows whose owner differs between the two rings.
CREATE TEMP TABLE move AS
  SELECT shard AS src, ch_locate(id, 'shards') AS dst, id FROM all_users
  WHERE ch_moved(id, 'shards@-1', 'shards');

INSERT INTO shard_a.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_a';
INSERT INTO shard_b.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_b';
INSERT INTO shard_c.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_c';
INSERT INTO shard_d.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_d';
DELETE FROM shard_a.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_a');
DELETE FROM shard_b.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_b');
DELETE FROM shard_c.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_c');
DELETE FROM shard_d.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_d');
COMMIT;

.print
.print == shard_d joined (ring version 2): rows moved, by route
SELECT src, dst, count(*) AS moved FROM move GROUP BY src, dst;

.print
.print == checks after the join
SELECT 'no row lost or duplicated' AS "check",
       CASE WHEN f.n = b.n AND f.ids = b.n AND f.checksum = b.checksum
            THEN 'ok' ELSE 'FAIL' END AS result
FROM fingerprint f, before b
UNION ALL
SELECT 'every row on its owner', CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM all_users WHERE shard != ch_locate(id, 'shards')
UNION ALL
SELECT 'rows moved only to the new shard',
       CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM move WHERE dst != 'shard_d'
UNION ALL
-- ch_diff's exact fraction p predicts n*p moved rows, give or take
-- sqrt(n*p*(1-p)) (a binomial count); 4 standard deviations is the bound.
SELECT printf('moved %d rows, ch_diff predicts %.0f', m.moved, b.n * d.p),
       CASE WHEN abs(m.moved - b.n * d.p) < 4 * sqrt(b.n * d.p * (1 - d.p))
            THEN 'ok' ELSE 'FAIL' END
FROM (SELECT count(*) AS moved FROM move) m, before b,
     (SELECT sum(share) AS p FROM ch_diff('shards@1', 'shards@2')) d;

SELECT shard, count(*) AS users FROM all_users GROUP BY shard;

-- ----------------------------------------- a crash in the middle (rollback)
-- shard_b starts to leave; half the moves are done when the process dies.
-- A transaction that never commits is rolled back (at the next open, from
-- the hot journals, after a real crash): nothing is lost and the ring is
-- still version 2.

BEGIN;
DELETE FROM shards WHERE node = 'shard_b';
DROP TABLE move;
CREATE TEMP TABLE move AS
  SELECT shard AS src, ch_locate(id, 'shards') AS dst, id FROM all_users
  WHERE ch_moved(id, 'shards@-1', 'shards');
INSERT INTO shard_a.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_a';
DELETE FROM shard_b.users WHERE id IN (SELECT id FROM move WHERE dst = 'shard_a');
-- ... the process dies here.
ROLLBACK;

.print
.print == checks after a migration that was rolled back
SELECT 'no row lost or duplicated' AS "check",
       CASE WHEN f.n = b.n AND f.ids = b.n AND f.checksum = b.checksum
            THEN 'ok' ELSE 'FAIL' END AS result
FROM fingerprint f, before b
UNION ALL
SELECT 'every row on its owner (version 2)',
       CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM all_users WHERE shard != ch_locate(id, 'shards@2')
UNION ALL
SELECT 'the ring is still version 2',
       CASE WHEN ch_epoch('shards') = 2
             AND (SELECT count(*) FROM shards) = 4 THEN 'ok' ELSE 'FAIL' END;

-- ------------------------------------------------------------ a shard leaves

BEGIN;
DELETE FROM shards WHERE node = 'shard_b';
DROP TABLE move;
CREATE TEMP TABLE move AS
  SELECT shard AS src, ch_locate(id, 'shards') AS dst, id FROM all_users
  WHERE ch_moved(id, 'shards@-1', 'shards');
INSERT INTO shard_a.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_a';
INSERT INTO shard_b.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_b';
INSERT INTO shard_c.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_c';
INSERT INTO shard_d.users SELECT u.id, u.name, u.email FROM all_users u
  JOIN move m ON m.id = u.id AND m.src = u.shard WHERE m.dst = 'shard_d';
DELETE FROM shard_a.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_a');
DELETE FROM shard_b.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_b');
DELETE FROM shard_c.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_c');
DELETE FROM shard_d.users WHERE id IN (SELECT id FROM move WHERE src = 'shard_d');
COMMIT;

.print
.print == shard_b left (ring version 3): rows moved, by route
SELECT src, dst, count(*) AS moved FROM move GROUP BY src, dst;

.print
.print == checks after the leave
SELECT 'no row lost or duplicated' AS "check",
       CASE WHEN f.n = b.n AND f.ids = b.n AND f.checksum = b.checksum
            THEN 'ok' ELSE 'FAIL' END AS result
FROM fingerprint f, before b
UNION ALL
SELECT 'every row on its owner', CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM all_users WHERE shard != ch_locate(id, 'shards')
UNION ALL
SELECT 'rows moved only from the leaving shard',
       CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM move WHERE src != 'shard_b'
UNION ALL
SELECT 'shard_b is empty', CASE WHEN count(*) = 0 THEN 'ok' ELSE 'FAIL' END
FROM shard_b.users
UNION ALL
SELECT printf('moved %d rows, ch_diff predicts %.0f', m.moved, b.n * d.p),
       CASE WHEN abs(m.moved - b.n * d.p) < 4 * sqrt(b.n * d.p * (1 - d.p))
            THEN 'ok' ELSE 'FAIL' END
FROM (SELECT count(*) AS moved FROM move) m, before b,
     (SELECT sum(share) AS p FROM ch_diff('shards@2', 'shards@3')) d;

SELECT shard, count(*) AS users FROM all_users GROUP BY shard;

.print
.print == the ring's history
SELECT * FROM ch_history('shards');

#!/bin/sh
# tests/harness/migration.sh: runs sql/migration.sql (a sharded users table: a shard
# joins, a migration is rolled back, a shard leaves) and requires every one
# of its checks to print ok; then kills sqlite3 in the middle of a third
# migration (kill -9, with dirty pages already spilled to the shard files)
# and checks that the next open rolls the hot journals back: same rows,
# same checksum, same ring version.
#
#   tests/harness/migration.sh [path/to/chash.so]
#
# Prints "N passed, N failed" like the runner; exit status 1 on failure.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
ext=$(cd "$(dirname "${1:-$top/chash.so}")" && pwd)/$(basename "${1:-chash.so}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
pass=0 fail=0
check(){   # check NAME CONDITION-STATUS
  if [ "$2" = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1"; fi
}

sqlite3 -bail catalog.db -cmd ".load $ext" < "$top/sql/migration.sql" > out.txt 2>&1
check "sql/migration.sql runs without error" $?
n_ok=$(grep -c ' ok *$' out.txt)
! grep -q 'FAIL' out.txt
check "no check in sql/migration.sql fails" $?
[ "$n_ok" = 12 ]
check "sql/migration.sql prints 12 ok checks (got $n_ok)" $?

# Row count, distinct ids and checksum of every shard, and the ring version.
state(){
  sqlite3 -bail catalog.db -cmd ".load $ext" <<'SQL'
ATTACH 'shard_a.db' AS shard_a; ATTACH 'shard_b.db' AS shard_b;
ATTACH 'shard_c.db' AS shard_c; ATTACH 'shard_d.db' AS shard_d;
SELECT count(*), count(DISTINCT id),
       sum(ch_hash(id || '|' || name || '|' || email) % 1000000007),
       ch_epoch('shards'), (SELECT count(*) FROM shards)
FROM (SELECT * FROM shard_a.users UNION ALL SELECT * FROM shard_b.users
      UNION ALL SELECT * FROM shard_c.users UNION ALL SELECT * FROM shard_d.users);
SQL
}
before=$(state)

# shard_c starts to leave; sqlite3 is killed before COMMIT.
sqlite3 catalog.db -cmd ".load $ext" > crash.txt 2>&1 <<'SQL'
ATTACH 'shard_a.db' AS shard_a; ATTACH 'shard_c.db' AS shard_c;
ATTACH 'shard_d.db' AS shard_d;
PRAGMA shard_a.cache_size = 2; PRAGMA shard_c.cache_size = 2;
PRAGMA shard_d.cache_size = 2;
BEGIN;
DELETE FROM shards WHERE node = 'shard_c';
CREATE TEMP TABLE move AS SELECT id, ch_locate(id, 'shards') AS dst
  FROM shard_c.users WHERE ch_moved(id, 'shards@-1', 'shards');
INSERT INTO shard_a.users SELECT * FROM shard_c.users
  WHERE id IN (SELECT id FROM move WHERE dst = 'shard_a');
DELETE FROM shard_c.users WHERE id IN (SELECT id FROM move WHERE dst = 'shard_a');
.shell ls *-journal > journals.txt; kill -9 $PPID
SELECT 'still alive';
SQL
! grep -q 'still alive' crash.txt
check "sqlite3 was killed in the middle of the migration" $?
grep -q 'shard_a.db-journal' journals.txt && grep -q 'shard_c.db-journal' journals.txt
check "the crash left hot journals on the shard files" $?
after=$(state)
[ -n "$before" ] && [ "$before" = "$after" ]
check "after the crash: same rows, checksum and ring ($after)" $?
# (catalog.db-journal may stay: the catalog's pages were never written
# before the crash, so its journal is not hot and SQLite ignores it.)
! ls shard_*-journal > /dev/null 2>&1
check "the shard files' hot journals were rolled back" $?

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]

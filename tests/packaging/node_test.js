'use strict';
/*
 * tests/packaging/node_test.js: the installed sqlite-chash package with
 * better-sqlite3 (run by node.sh in a temporary project).
 *
 * Keys bound from JS must land where SQL places the same keys held in a
 * table (ids 1..1000 as INTEGER, 'user:N' as TEXT): JS numbers (bound as
 * REAL; a REAL with a whole value hashes as that INTEGER), BigInt (bound as
 * INTEGER) and strings. Versions given as JS numbers select versions
 * (ch_moved(?, 1, 2)). 64-bit hashes read with safeIntegers are exact. A
 * NaN weight (bound as NULL) is refused.
 */
const path = require('path');
const Database = require('better-sqlite3');
const chash = require('sqlite-chash');

let passed = 0;
let failed = 0;
function check(what, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g === w) {
    passed++;
    console.log('ok: ' + what);
  } else {
    failed++;
    let i = 0;
    if (Array.isArray(got) && Array.isArray(want)) while (i < got.length && g && got[i] === want[i]) i++;
    const n = Array.isArray(got) ? got.filter((v, j) => v !== want[j]).length : 1;
    console.log('FAILED: ' + what + ': ' + n + ' differ; first at ' + i + ': got ' +
                JSON.stringify(Array.isArray(got) ? got[i] : got) + ', want ' +
                JSON.stringify(Array.isArray(want) ? want[i] : want));
  }
}

const where = chash.getLoadablePath();
check('the extension comes from node_modules',
      where.split(path.sep).slice(-4, -1).join('/'), 'node_modules/sqlite-chash/lib');

const db = new Database(':memory:');
chash.load(db);
db.exec(`
  CREATE VIRTUAL TABLE shards USING chash(vnodes=160);
  INSERT INTO shards(node) VALUES ('db-a'), ('db-b'), ('db-c');
  INSERT INTO shards(node) VALUES ('db-d');
  CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1000)
  INSERT INTO users SELECT i, 'user:' || i FROM n;
`);
const ids = db.prepare('SELECT id FROM users ORDER BY id').pluck().all();
const inSql = db.prepare("SELECT ch_locate(id, 'shards') FROM users ORDER BY id").pluck().all();
const locate = db.prepare("SELECT ch_locate(?, 'shards')").pluck();

check('ch_locate of 1000 ids as JS numbers = in SQL', ids.map((id) => locate.get(id)), inSql);
check('ch_locate of 1000 ids as BigInt = in SQL', ids.map((id) => locate.get(BigInt(id))), inSql);
check("ch_locate of 1000 'user:N' strings = in SQL",
      ids.map((id) => locate.get('user:' + id)),
      db.prepare("SELECT ch_locate(name, 'shards') FROM users ORDER BY id").pluck().all());

const movedSql = db.prepare(
  "SELECT ch_moved(id, 'shards@1', 'shards@2') FROM users ORDER BY id").pluck().all();
let movedJs;
try {
  const moved = db.prepare('SELECT ch_moved(?, ?, ?)').pluck();
  movedJs = ids.map((id) => moved.get(id, 1, 2));
} catch (e) {
  movedJs = String(e.message);
}
check('ch_moved(?, 1, 2) with versions as JS numbers = in SQL', movedJs, movedSql);
check('some ids move from version 1 to 2, not all',
      movedSql.some((m) => m === 1) && movedSql.some((m) => m === 0), true);

const hashSafe = db.prepare('SELECT ch_hash(?)').pluck().safeIntegers(true);
const hashText = db.prepare('SELECT CAST(ch_hash(?) AS TEXT)').pluck();
const exact = ids.map((id) => hashSafe.get(BigInt(id)).toString());
check('ch_hash with safeIntegers (BigInt) = its text in SQL', exact,
      ids.map((id) => hashText.get(BigInt(id))));
check('some hashes are past 2^53 (a JS number would round them)',
      exact.some((h) => BigInt(h) > 2n ** 53n || BigInt(h) < -(2n ** 53n)), true);

// better-sqlite3 binds a NaN as NULL: a NaN weight is refused, not taken as 1.
let nanError = null;
try {
  db.prepare('INSERT INTO shards(node, weight) VALUES (?, ?)').run('db-e', NaN);
} catch (e) {
  nanError = String(e.message);
}
check('a NaN weight is refused', nanError,
      'shards: weight must not be NULL (a NaN is bound as NULL): leave the weight out of an INSERT for the default 1');
check('the refused row is not there',
      db.prepare("SELECT count(*) FROM shards WHERE node = 'db-e'").pluck().get(), 0);

db.close();
console.log(passed + ' passed, ' + failed + ' failed');
process.exit(failed ? 1 : 0);

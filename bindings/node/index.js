'use strict';
/*
 * sqlite-chash: chash, consistent hashing inside SQLite, for Node.
 *
 *   const Database = require('better-sqlite3');
 *   const chash = require('sqlite-chash');
 *   const db = new Database('app.db');
 *   chash.load(db);
 *
 * The package ships the loadable extension for the platform it was packed
 * on; getLoadablePath() is its path. Type rules: a JS number binds as a
 * REAL (a whole one hashes as that INTEGER); 64-bit results (ch_hash, the
 * tokens of ch_points) need BigInt: stmt.safeIntegers(true).
 */
const fs = require('fs');
const path = require('path');

const SUFFIX = { darwin: 'dylib', win32: 'dll' }[process.platform] || 'so';

/* The path of the chash loadable extension inside this package. */
function getLoadablePath() {
  const file = path.join(__dirname, 'lib', 'chash.' + SUFFIX);
  if (!fs.existsSync(file)) {
    throw new Error('sqlite-chash: no chash loadable extension at ' + file +
                    ' (the package holds the one for the platform it was packed on)');
  }
  return file;
}

/* Load chash into db: a better-sqlite3 Database (or anything with
 * loadExtension(path), as node:sqlite's DatabaseSync opened with
 * allowExtension: true). Returns db. */
function load(db) {
  if (db === null || typeof db !== 'object' || typeof db.loadExtension !== 'function') {
    throw new TypeError('sqlite-chash: load(db) takes a database with loadExtension(),' +
                        ' such as a better-sqlite3 Database');
  }
  db.loadExtension(getLoadablePath());
  return db;
}

module.exports = { load, getLoadablePath };

'use strict';
/*
 * bindings/node/scripts/prepack.js: npm pack's first step. Builds the chash
 * loadable extension with the repository's Makefile (or takes the file
 * named by CHASH_LOADABLE) and copies it into lib/, which the package
 * ships.
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const SUFFIX = { darwin: 'dylib', win32: 'dll' }[process.platform] || 'so';
const repo = path.resolve(__dirname, '..', '..', '..');
let built = process.env.CHASH_LOADABLE;
if (!built) {
  if (!fs.existsSync(path.join(repo, 'Makefile'))) {
    throw new Error('sqlite-chash: pack from a checkout of chash (bindings/node),' +
                    ' or set CHASH_LOADABLE to a built chash.' + SUFFIX);
  }
  execFileSync('make', ['-C', repo, '--no-print-directory', 'chash.' + SUFFIX],
               { stdio: ['ignore', process.stderr, process.stderr] });
  built = path.join(repo, 'chash.' + SUFFIX);
}
const lib = path.join(__dirname, '..', 'lib');
fs.mkdirSync(lib, { recursive: true });
fs.copyFileSync(built, path.join(lib, 'chash.' + SUFFIX));

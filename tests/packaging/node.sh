#!/bin/sh
# tests/packaging/node.sh: the npm package (make test-node).
#
# Packs bindings/node (npm pack builds the extension into it), installs the
# tarball beside better-sqlite3 from npm into a temporary project, and runs
# node_test.js there, so that both come from node_modules.
# BETTER_SQLITE3 picks the better-sqlite3 release (default 12: version 13
# needs Node 22).
set -eu
cd "$(dirname "$0")/../.."
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd bindings/node && npm pack --silent --pack-destination "$tmp" >/dev/null)
rm -rf bindings/node/lib
cd "$tmp"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund "better-sqlite3@${BETTER_SQLITE3:-12}" ./sqlite-chash-*.tgz
cp "$repo/tests/packaging/node_test.js" .
node node_test.js

// tests/compat/hashring.js: asks the real npm packages where keys go.
// Run by tests/compat/hashring.py with node, NODE_PATH pointing at the
// packages `hashring` and `memcached` installed from npm.
//
// stdin: one JSON object {mode, servers, keys}
//   mode "hashring":  new HashRing(servers).get(key) for every key
//   mode "memcached": new Memcached(servers) (no server is contacted: the
//                     client's connect is replaced by one that records the
//                     server its get() chose), and the client's own multi()
//                     grouping, which must agree with get()
//   servers: an array of server strings, or an object {server: weight}
// stdout: a JSON array, the server chosen for each key.
'use strict';

const HashRing = require('hashring');
const Memcached = require('memcached');

function viaHashring(servers, keys) {
  const ring = new HashRing(servers);
  return keys.map((key) => ring.get(key));
}

function viaMemcached(servers, keys) {
  const client = new Memcached(servers, { retries: 0 });
  let chosen = null;
  client.connect = function recordServer(server) { chosen = server; };
  const viaGet = keys.map((key) => {
    chosen = null;
    client.get(key, () => {});
    return chosen;
  });
  const viaMulti = {};
  client.multi(keys, (server, serverKeys) => {
    for (const key of serverKeys) viaMulti[key] = server;
  });
  keys.forEach((key, i) => {
    if (viaMulti[key] !== viaGet[i]) {
      throw new Error('memcached: get() and multi() disagree on ' + JSON.stringify(key));
    }
  });
  return viaGet;
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const job = JSON.parse(input);
  const run = job.mode === 'memcached' ? viaMemcached : viaHashring;
  process.stdout.write(JSON.stringify(run(job.servers, job.keys)) + '\n');
});

<?php
// tests/compat/php_memcache_find.php: where PHP's memcache extension
// (memcache.hash_strategy=consistent) sends each key, with no connection:
// MemcachePool::findServer(). Run by tests/compat/php_memcache.py.
//
// Arguments: the hash function (crc32 or fnv), the key prefix
// (memcache.prefix_static_key; "-" for none), the host name to add to it
// (memcache.prefix_host_key with $_SERVER['SERVER_NAME'], whose "www." the
// extension drops; "-" for none), then the servers as JSON:
// [[host, port or null for the default, weight], ...] in addServer()
// order. Keys in hex on stdin, one a line; out, one a line, the server's
// "host:port", or "-" where findServer() refuses the key.
ini_set('memcache.hash_strategy', 'consistent');
ini_set('memcache.hash_function', $argv[1]);
if ($argv[2] !== '-' && ini_set('memcache.prefix_static_key', $argv[2]) === false) {
    fwrite(STDERR, "memcache.prefix_static_key refuses $argv[2]\n");
    exit(1);
}
if ($argv[3] !== '-') {
    ini_set('memcache.prefix_host_key', '1');
    $_SERVER['SERVER_NAME'] = $argv[3];
}
$pool = new MemcachePool();
foreach (json_decode($argv[4]) as [$host, $port, $weight]) {
    $ok = $port === null
        ? $pool->addServer($host, (int)ini_get('memcache.default_port'), 0, false, $weight)
        : $pool->addServer($host, $port, 0, false, $weight);
    if (!$ok) {
        fwrite(STDERR, "addServer($host) failed\n");
        exit(1);
    }
}
while (($line = fgets(STDIN)) !== false) {
    $server = @$pool->findServer(hex2bin(rtrim($line, "\n")));
    echo $server === false ? '-' : $server, "\n";
}

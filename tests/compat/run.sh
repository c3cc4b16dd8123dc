#!/usr/bin/env bash
# tests/compat/run.sh: check chash against the real routers: ketama against twemproxy
# (nutcracker + memcached on loopback) and libmemcached, from Debian's
# packages nutcracker, memcached and libmemcached-dev; nginx against
# Debian's nginx; hashring against the npm packages hashring and memcached
# under Debian's nodejs; dubbo against a Java TreeMap ring (Debian's
# openjdk-17-jdk-headless). Needs ./chash.so.
# under Debian's nodejs; algorithm groupcache and the ring options
# label/first/ties against Go's groupcache package (golang-go,
# golang-github-golang-groupcache-dev; GOPATH mode, no network) and a Java
# TreeMap ring (openjdk-17-jdk-headless); redis_cluster, ch_keyslot and
# hash_tag against Debian's redis-server and redis-cli (redis-server,
# redis-tools) and nutcracker; kafka and guava against npm kafkajs,
# librdkafka-dev and libguava-java (tests/compat/partitioners.py); dalli against Ruby's
# Dalli (ruby, ruby-dalli); pymemcache against Python's pymemcache
# (python3-pymemcache); php_memcache against PHP's memcache extension
# (php-cli, php-memcache); spymemcached against its
# KetamaNodeLocator (libspymemcached-java); uhashring_ketama against
# Python's uhashring (python3-uhashring; tests/compat/pyclients.py).
# Needs ./chash.so.
# The configuration files given to nutcracker, nginx and haproxy are also
# read by ch_config, and each ring's ch_export text is given back to the
# program (nutcracker -t, nginx -t, haproxy -c, and a run that places keys).
# Every step is bounded in time; compat.py stops what it starts by PID.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/compat
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -Werror -o build/compat/lmhash \
  tests/compat/lmhash.c -lmemcached
timeout 300 /usr/bin/python3 tests/compat/compat.py libmemcached ./chash.so build/compat/lmhash
timeout 300 /usr/bin/python3 tests/compat/compat.py twemproxy ./chash.so

# nginx (Debian's nginx) and the npm packages hashring and memcached (run
# with Debian's nodejs, installed from npm into build/compat/npm).
timeout 300 /usr/bin/python3 tests/compat/nginx.py ./chash.so
NPM_DIR=build/compat/npm
if [ ! -f $NPM_DIR/node_modules/hashring/package.json ] ||
   [ ! -f $NPM_DIR/node_modules/memcached/package.json ]; then
  mkdir -p $NPM_DIR
  timeout 300 npm install --prefix $NPM_DIR --no-audit --no-fund --no-save \
    hashring@3.2.0 memcached@2.2.2 >/dev/null
fi
timeout 300 /usr/bin/python3 tests/compat/hashring.py ./chash.so $NPM_DIR/node_modules

# HAProxy (Debian's haproxy): algorithm haproxy and the hashes sdbm, djb2, wt6
timeout 300 /usr/bin/python3 tests/compat/haproxy_compat.py ./chash.so

# Dubbo's ring: a Java TreeMap program (Debian's openjdk-17-jdk-headless)
# and the Python model against chash.
javac -d build/compat tests/compat/DubboRing.java
timeout 300 /usr/bin/python3 tests/compat/dubbo_check.py build/compat ./chash.so
# groupcache and the Java TreeMap ring
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$PWD/build/compat/gocache" \
  GOFLAGS= GOPROXY=off timeout 300 go build -o build/compat/groupcache_owners \
  tests/compat/groupcache_owners.go
timeout 300 javac -d build/compat/java tests/compat/TreeMapRing.java
timeout 300 /usr/bin/python3 tests/compat/ownring.py groupcache ./chash.so build/compat/groupcache_owners
timeout 300 /usr/bin/python3 tests/compat/ownring.py java ./chash.so build/compat/java

# redis_cluster, ch_keyslot and hash_tag: redis-server, redis-cli, nutcracker
timeout 300 /usr/bin/python3 tests/compat/redis_compat.py ./chash.so
# a live Redis Cluster's map (CLUSTER NODES) after reshard, add-node,
# rebalance and a failover, on real redis-server clusters
timeout 300 /usr/bin/python3 tests/compat/redis_live.py ./chash.so
# a redis-cli --cluster create command line (format redis_cli), read and
# written, run by a shell against redis-server on three loopback addresses
timeout 300 /usr/bin/python3 tests/compat/redis_cli_create.py ./chash.so

# kafka and guava: npm kafkajs 2.x (into build/compat/npm), Debian's
# librdkafka-dev (a small C program) and libguava-java (a small Java
# program), against the model and chash.
if [ ! -f $NPM_DIR/node_modules/kafkajs/package.json ]; then
  mkdir -p $NPM_DIR
  timeout 300 npm install --prefix $NPM_DIR --no-audit --no-fund --no-save \
    kafkajs@2.2.4 >/dev/null
fi
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -Werror -o build/compat/rdkafka_partition \
  tests/compat/rdkafka_partition.c -lrdkafka
GUAVA_CP=/usr/share/java/guava.jar:build/compat/java
timeout 300 javac -cp $GUAVA_CP -d build/compat/java tests/compat/GuavaHash.java
timeout 300 /usr/bin/python3 tests/compat/partitioners.py ./chash.so $NPM_DIR/node_modules \
  build/compat/rdkafka_partition $GUAVA_CP

# cassandra: ch_hash 'murmur3_cassandra' and the model of Murmur3Partitioner,
# SimpleStrategy and NetworkTopologyStrategy (tests/gen/cassandra_model.py)
# against Debian's python3-cassandra (the DataStax driver's Murmur3Token and
# TokenMap, no cluster); chash's algorithm cassandra is not written yet.
timeout 300 /usr/bin/python3 tests/compat/cassandra_compat.py ./chash.so

# dalli: Ruby's Dalli client ring (Debian's ruby and ruby-dalli), no server
timeout 300 /usr/bin/python3 tests/compat/dalli.py ./chash.so

# pymemcache: HashClient's RendezvousHash (Debian's python3-pymemcache), no
# server, against the model tests/gen/pymemcache_model.py and chash
timeout 300 /usr/bin/python3 tests/compat/pymemcache_compat.py ./chash.so

# php_memcache: PHP's memcache extension (Debian's php-cli and
# php-memcache), MemcachePool::findServer() with no server
timeout 300 /usr/bin/python3 tests/compat/php_memcache.py ./chash.so
# spymemcached: its KetamaNodeLocator (Debian's libspymemcached-java) over
# nodes that only give their address, no server
SPY_CP=/usr/share/java/spymemcached.jar:build/compat/spy
timeout 300 javac -cp $SPY_CP -d build/compat/spy tests/compat/SpyRing.java
timeout 300 /usr/bin/python3 tests/compat/spymemcached.py ./chash.so $SPY_CP
# uhashring's HashRing (ketama mode): the real library (python3-uhashring)
# against the model in tests/gen/ and chash.
timeout 120 /usr/bin/python3 tests/compat/pyclients.py ./chash.so

#!/usr/bin/env bash
# tests/compat/run.sh: check chash against the real routers: ketama against twemproxy
# (nutcracker + memcached on loopback) and libmemcached, from Debian's
# packages nutcracker, memcached and libmemcached-dev. Needs ./chash.so.
# Every step is bounded in time; compat.py stops what it starts by PID.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/compat
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -Werror -o build/compat/lmhash \
  tests/compat/lmhash.c -lmemcached
timeout 300 /usr/bin/python3 tests/compat/compat.py libmemcached ./chash.so build/compat/lmhash
timeout 300 /usr/bin/python3 tests/compat/compat.py twemproxy ./chash.so
# HAProxy (Debian's haproxy): algorithm haproxy and the hashes sdbm, djb2, wt6
timeout 300 /usr/bin/python3 tests/compat/haproxy_compat.py ./chash.so

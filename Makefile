# chash: consistent hashing for SQLite, as a loadable extension.
#
#   make            build chash.so (load it with: .load ./chash)
#   make demo       the tour: sql/demo.sql in the sqlite3 shell
#   make test       build, then run every tests/sql/*.test tests/gen/*.test and the unit tests
#   make test-asan  the same, built with AddressSanitizer and UBSan
#   make test-valgrind  the .test files (but oom.test) under valgrind memcheck
#   make test-oom   every .test file under out-of-memory fault injection
#   make test-hard  concurrency, crash rounds and the slow limits tests
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (default 60)
#   make fuzz-replay  every fuzz corpus entry once under ASan+UBSan
#   make test-compat  ketama, nginx, hashring, haproxy, groupcache, Redis
#                   Cluster against the real programs; dubbo and the ring
#                   options against Java TreeMap rings
#   make bench      the benchmark (tests/bench/bench.c; docs/performance.md)
#   make experiments  run sql/vnode_sweep.sql, modn_vs_ring.sql and
#                   properties.sql; tables and gnuplot SVG/PNG plots in out/
#   make deps       install the Debian packages the build needs (as root)
#
# Missing Debian packages are installed with apt-get when run as root;
# otherwise make stops and prints the command to run.

CC      ?= gcc
CFLAGS  ?= -O2
WARN     = -Wall -Wextra -Werror
STD      = -std=gnu11 -ffp-contract=off
SOFLAGS  = -fPIC -shared -fvisibility=hidden
# ext/core: the pure C core (no SQLite); ext/algos: one file per algorithm;
# ext/sqlite: the SQLite layer. The unit tests link the first two directly.
CORE     = $(wildcard ext/core/*.c ext/algos/*.c)
SRC      = $(CORE) $(wildcard ext/sqlite/*.c)
HDR      = $(wildcard ext/*/*.h) tests/unit/unit.h
INC      = -Iext/core -Iext/algos -Iext/sqlite
LIBS     = -lnettle -lz -lm
SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g

DEBS = gcc make sqlite3 libsqlite3-dev libxxhash-dev nettle-dev zlib1g-dev python3 python3-xxhash
DEBS_HARD = clang libclang-rt-14-dev valgrind

.PHONY: gen gen-check all deps deps-hard demo test test-asan test-valgrind test-oom test-hard fuzz fuzz-replay test-compat unit bench clean experiments plot-deps

all: chash.so

# Install the Debian packages named in $(1) that are missing (as root), or
# stop and print the command that would (otherwise).
need_debs = @missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "chash needs these Debian packages:$$missing"; \
	    echo "run: sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

deps:
	$(call need_debs,$(DEBS))

# valgrind, and clang with its libFuzzer runtime (test-valgrind, fuzz)
deps-hard:
	$(call need_debs,$(DEBS_HARD))

plot-deps:
	$(call need_debs,gnuplot-nox)

chash.so: $(SRC) $(HDR) | deps
	$(CC) $(STD) $(CFLAGS) $(WARN) $(SOFLAGS) $(INC) -o $@ $(SRC) $(LIBS)

build/runner: tests/harness/runner.c | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) -o $@ $< -lsqlite3 -lnettle

build/ring_test: tests/unit/ring_test.c $(CORE) $(HDR) | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/ring_test.c $(CORE) $(LIBS)

demo: chash.so
	sqlite3 :memory: -cmd '.load ./chash' < sql/demo.sql

build/algos_test: tests/unit/algos_test.c $(CORE) $(HDR) | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/algos_test.c $(CORE) $(LIBS)

build/ring_points_test: tests/unit/ring_points_test.c $(CORE) $(HDR) | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/ring_points_test.c $(CORE) $(LIBS)

build/geometry_test: tests/unit/geometry_test.c $(CORE) $(HDR) | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/geometry_test.c $(CORE) $(LIBS)

# The benchmark links the ring core directly and loads chash.so for the
# rest; with libmemcached-dev installed it also races libmemcached's ketama.
BENCH_LM = $(shell pkg-config --exists libmemcached 2>/dev/null && echo \
             -DBENCH_LIBMEMCACHED $$(pkg-config --libs libmemcached))
tests/bench/bench: tests/bench/bench.c $(CORE) $(HDR) | deps
	$(CC) $(STD) $(CFLAGS) $(WARN) $(INC) -o $@ tests/bench/bench.c $(CORE) \
	  -lsqlite3 $(BENCH_LM) $(LIBS)

bench: chash.so tests/bench/bench
	tests/bench/bench --ext ./chash.so

test: chash.so build/runner build/ring_test build/algos_test build/ring_points_test build/geometry_test
	build/ring_test
	build/algos_test
	build/ring_points_test
	build/geometry_test
	$(MAKE) --no-print-directory gen-check
	build/runner --ext ./chash.so tests/sql/*.test tests/gen/*.test
	tests/harness/migration.sh ./chash.so
	/usr/bin/python3 tests/harness/deserialize.py ./chash.so

# The generated .test files (tests/gen/): gen-check fails if a committed
# file differs from what its generator writes; gen rewrites them.
# (a generator is a script that hands its files to genfiles.main)
GEN_SCRIPTS = $(shell grep -l 'genfiles.main' tests/gen/*.py)

gen-check: | deps
	@for g in $(GEN_SCRIPTS); do /usr/bin/python3 $$g --check || exit 1; done

gen: | deps
	@for g in $(GEN_SCRIPTS); do /usr/bin/python3 $$g --write || exit 1; done

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer;
# any report fails the run.
build/asan/chash.so: $(SRC) $(HDR) | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(SOFLAGS) $(INC) -o $@ $(SRC) $(LIBS)

build/asan/runner: tests/harness/runner.c | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) -o $@ $< -lsqlite3 -lnettle

build/asan/ring_test: tests/unit/ring_test.c $(CORE) $(HDR) | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/ring_test.c $(CORE) $(LIBS)

build/asan/algos_test: tests/unit/algos_test.c $(CORE) $(HDR) | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/algos_test.c $(CORE) $(LIBS)

build/asan/ring_points_test: tests/unit/ring_points_test.c $(CORE) $(HDR) | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/ring_points_test.c $(CORE) $(LIBS)

build/asan/geometry_test: tests/unit/geometry_test.c $(CORE) $(HDR) | deps
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/geometry_test.c $(CORE) $(LIBS)

test-asan: build/asan/chash.so build/asan/runner build/asan/ring_test build/asan/algos_test build/asan/ring_points_test build/asan/geometry_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/ring_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/algos_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/ring_points_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/geometry_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/runner --ext ./build/asan/chash.so tests/sql/*.test tests/gen/*.test

# Every .test file under valgrind memcheck: any error or leak fails.
# oom.test is left out: its 22,000 fault-injection runs take valgrind most
# of an hour, and the runner already counts every allocation in them (a
# leak fails it) while test-asan runs it under AddressSanitizer.
VALGRIND_TESTS = $(filter-out tests/sql/oom.test,$(wildcard tests/sql/*.test tests/gen/*.test))

test-valgrind: chash.so build/runner | deps-hard
	valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
	  --errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
	  build/runner --ext ./chash.so $(VALGRIND_TESTS)

# Every statement and query of every .test file, run first with allocation
# N = 1, 2, 3 ... failing (see tests/harness/runner.c, "oom").
test-oom: chash.so build/runner
	build/runner --oom --ext ./chash.so tests/sql/*.test tests/gen/*.test

# Processes against one database: concurrent readers and writers (WAL), and
# writers killed with SIGKILL mid-transaction. HARD_SECONDS and
# CRASH_ROUNDS bound them; CI uses the defaults, larger runs are on demand.
HARD_SECONDS ?= 5
CRASH_ROUNDS ?= 40

build/concurrency: tests/harness/concurrency.c | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) -o $@ $< -lsqlite3

build/crash: tests/harness/crash.c | deps
	@mkdir -p build
	$(CC) $(STD) $(CFLAGS) $(WARN) -o $@ $< -lsqlite3

test-hard: chash.so build/runner build/concurrency build/crash
	build/concurrency --ext ./chash.so --seconds $(HARD_SECONDS)
	build/crash --ext ./chash.so --rounds $(CRASH_ROUNDS)
	build/runner --ext ./chash.so tests/slow/*.test

# libFuzzer targets (clang): the extension linked in statically with the
# system libsqlite3. New corpus entries go to build/fuzz/corpus-NAME; the
# seeds in tests/fuzz/corpus/NAME are kept in the repository.
#
# FUZZ_SANITIZE picks the sanitizers: address,undefined (the default, as CI
# runs it) or undefined alone, about three times as many executions per
# second for long runs; `make fuzz-replay` then runs every corpus entry
# found through the ASan+UBSan build.
FUZZ_TARGETS = options spec keys dml corrupt
FUZZ_SECONDS ?= 60
FUZZ_SANITIZE ?= address,undefined
FUZZ_OPT = $(if $(findstring address,$(FUZZ_SANITIZE)),-O1,-O2)
comma := ,
FUZZ_DIR = build/fuzz-$(subst $(comma),-,$(FUZZ_SANITIZE))
# The points and maglev-table limits are lowered to 2^14 and 65537 (the
# default table): the same checks, with rings that build in a millisecond
# rather than seconds, which took most of the fuzzers' time.
FUZZ_FLAGS = $(STD) -g $(FUZZ_OPT) $(WARN) -fsanitize=fuzzer,$(FUZZ_SANITIZE) \
             -fno-sanitize-recover=all -DSQLITE_CORE $(INC) \
             -DRING_MAX_POINTS=16384 -DRING_MAX_TABLE=65537

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(SRC) $(HDR) | deps deps-hard
	@mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_FLAGS) -o $@ $< $(SRC) -lsqlite3 $(LIBS)

# glibc would give the top of the heap back after every input and fault it
# in again at the next (an eighth of fuzz_dml's time): FUZZ_MALLOC keeps it.
FUZZ_MALLOC = MALLOC_TRIM_THRESHOLD_=268435456 MALLOC_TOP_PAD_=67108864

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build/fuzz/corpus-$$t; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  $(FUZZ_MALLOC) $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/ build/fuzz/corpus-$$t tests/fuzz/corpus/$$t \
	    > build/fuzz/$$t.log 2>&1 || { tail -40 build/fuzz/$$t.log; exit 1; }; \
	  grep -E '^(stat::number_of_executed_units|#[0-9]+ *DONE)' build/fuzz/$$t.log; \
	done

# Every entry of every corpus, once, through the ASan+UBSan build.
fuzz-replay:
	$(MAKE) FUZZ_SANITIZE=address,undefined $(FUZZ_TARGETS:%=build/fuzz-address-undefined/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build/fuzz/corpus-$$t; \
	  echo "fuzz_$$t: replaying" $$(ls build/fuzz/corpus-$$t tests/fuzz/corpus/$$t | wc -l) "inputs"; \
	  build/fuzz-address-undefined/fuzz_$$t -runs=0 \
	    build/fuzz/corpus-$$t tests/fuzz/corpus/$$t \
	    > build/fuzz/$$t-replay.log 2>&1 || { tail -40 build/fuzz/$$t-replay.log; exit 1; }; \
	done

# ketama placement against the real routers (Debian: nutcracker, memcached,
# libmemcached-dev), nginx against Debian's nginx, hashring against the npm
# packages under Debian's nodejs; starts its own processes on loopback and
# stops them.
# groupcache and the ring options against Go's groupcache package and a
# Java TreeMap ring (golang-go, golang-github-golang-groupcache-dev,
# openjdk-17-jdk-headless).
test-compat: chash.so
	tests/compat/run.sh

# The experiments: each sql/NAME.sql prints its tables into out/NAME.txt;
# the two that are plotted also leave their table NAME in out/NAME.tsv.
PLOTTED = vnode_sweep modn_vs_ring

experiments: chash.so plot-deps
	@mkdir -p out
	@for e in $(PLOTTED); do \
	  echo "== sql/$$e.sql"; \
	  sqlite3 -bail :memory: -cmd '.load ./chash' -cmd ".read sql/$$e.sql" \
	    -cmd ".output out/$$e.tsv" -cmd '.mode tabs' -cmd '.headers on' \
	    "SELECT * FROM $$e" > out/$$e.txt || exit 1; \
	  cat out/$$e.txt; \
	done
	@echo "== sql/properties.sql"
	@sqlite3 -bail :memory: -cmd '.load ./chash' < sql/properties.sql > out/properties.txt
	@cat out/properties.txt
	gnuplot sql/plots.gp
	@ls out/*.svg out/*.png

clean:
	rm -rf chash.so tests/bench/bench build

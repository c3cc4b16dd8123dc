# chash: consistent hashing for SQLite, as a loadable extension.
#
#   make            build the loadable extension chash.so (chash.dylib on
#                   macOS, chash.dll on Windows; load it with: .load ./chash)
#                   needing only a C compiler, SQLite's headers, xxHash's
#                   header, nettle, zlib and libyaml
#   make demo       the tour: sql/demo.sql in the sqlite3 shell
#   make test       build, then run every tests/sql/*.test and tests/gen/*.test and the unit tests
#   make test-asan  the same, built with AddressSanitizer and UBSan
#   make test-valgrind  the .test files (but oom.test) under valgrind memcheck
#   make test-oom   every .test file under out-of-memory fault injection
#   make test-probe  a copy of an algorithm under a new name, its registry
#                   line and make gen are all it takes (in a copy of the tree)
#   make test-hard  concurrency, crash rounds and the slow limits tests
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (default 60)
#   make fuzz-replay  every fuzz corpus entry once under ASan+UBSan
#   make test-compat  ketama, nginx, hashring, haproxy, groupcache, Redis
#                   Cluster, Dalli against the real programs; dubbo and the ring
#                   options against Java TreeMap rings
#   make bench      the benchmark (tests/bench/bench.c; docs/performance.md)
#   make experiments  run sql/vnode_sweep.sql, modn_vs_ring.sql and
#                   properties.sql; tables and gnuplot SVG/PNG plots in out/
#   make install    chash.so into $(PREFIX)/lib, chash.h into
#                   $(PREFIX)/include, the command-line tool chash into
#                   $(PREFIX)/bin (PREFIX=/usr/local; DESTDIR honoured);
#                   make uninstall removes them
#   make dist       the one-file build: dist/chash.c and dist/chash.h
#   make test-sqlite-versions  the suite against SQLite amalgamations from
#                   npm: the oldest supported, the newest, and a load into
#                   one just below the oldest that must be refused
#   make test-dist  dist/chash.c as a loadable and linked into programs
#   make test-install  make install into a temporary DESTDIR, load, uninstall
#   make test-python  the Python package, in a venv of Debian's python3
#   make test-node  the npm package, with better-sqlite3 from npm
#   make deps       install the Debian packages the build and tests need (as root)
#
# Building needs no package manager. make deps (which demo and the test
# targets run first) installs missing Debian packages with apt-get when
# run as root; otherwise it stops and prints the command to run.
# CC, CPPFLAGS, CFLAGS and LDFLAGS are honoured; the test targets (and CI)
# add -Werror through WERROR.

CC      ?= gcc
CFLAGS  ?= -O2
WERROR  ?=
WARN     = -Wall -Wextra $(WERROR)
STD      = -std=gnu11 -ffp-contract=off
# ext/core: the pure C core (no SQLite); ext/algos: one file per algorithm;
# ext/config: the configuration files (pure C, libyaml); ext/sqlite: the
# SQLite layer. The unit tests link the first two directly.
CORE     = $(wildcard ext/core/*.c ext/algos/*.c)
SRC      = $(CORE) $(wildcard ext/config/*.c ext/sqlite/*.c)
HDR      = $(wildcard ext/*/*.h) include/chash.h tests/unit/unit.h \
           tests/unit/unit_options.h
INC      = -Iext/core -Iext/algos -Iext/config -Iext/sqlite -Iinclude
# xxHash is inlined from its header; MD5 is nettle's, CRC-32 zlib's; YAML
# (the nutcracker format) libyaml's.
LIBS     = -lnettle -lz -lyaml -lm
SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g

# The loadable's suffix is the one SQLite adds to ".load chash" here.
UNAME_S := $(shell uname -s 2>/dev/null || echo unknown)
ifeq ($(UNAME_S),Darwin)
  SO      = dylib
  SOFLAGS = -fPIC -dynamiclib -fvisibility=hidden
else ifneq ($(filter MINGW% MSYS% CYGWIN%,$(UNAME_S)),)
  SO      = dll
  SOFLAGS = -shared -fvisibility=hidden
else
  SO      = so
  SOFLAGS = -fPIC -shared -fvisibility=hidden
endif
LOADABLE = chash.$(SO)

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin

DEBS = gcc make sqlite3 libsqlite3-dev libxxhash-dev nettle-dev zlib1g-dev libyaml-dev python3 python3-xxhash
DEBS_HARD = clang libclang-rt-14-dev valgrind
DEBS_PYTHON = python3-venv python3-pip python3-setuptools python3-wheel

.PHONY: gen gen-check test-probe all deps deps-hard demo test test-asan test-valgrind test-oom test-hard fuzz fuzz-replay test-compat unit bench clean experiments plot-deps \
        install uninstall dist test-dist test-install test-sqlite-versions test-python test-node deps-npm deps-npm-debian deps-node deps-python

all: $(LOADABLE) $(CLI)

# The command-line tool: chash linked in (-DSQLITE_CORE) with the system's
# libsqlite3 (cli/chash.c). In build/, so that ".load ./chash" never finds it.
CLI = build/chash
$(CLI): cli/chash.c $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -DSQLITE_CORE $(INC) -o $@ cli/chash.c $(SRC) \
	  $(LDFLAGS) -lsqlite3 $(LIBS)

# Install the Debian packages named in $(1) that are missing (as root), or
# stop and print the command that would (otherwise).
need_debs = @if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "not a Debian system: make deps cannot check for$(foreach p,$(1), $(p))"; \
	  echo "(install their equivalents by hand if the build or the tests fail)"; \
	  exit 0; \
	fi; \
	missing=""; \
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

# npm, for the SQLite amalgamations and the Node package (the machine's own
# Node.js is used when there is one)
deps-npm:
	@command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory deps-npm-debian

deps-npm-debian:
	$(call need_debs,nodejs npm)

deps-python:
	$(call need_debs,$(DEBS_PYTHON))

# better-sqlite3 builds its addon with g++ where npm has no prebuilt one
deps-node: deps-npm
	$(call need_debs,g++)

# With make -j, a goal that runs deps would otherwise start compiling
# before deps has installed a header the compile needs (libxxhash-dev):
# when such a goal is asked for, every build waits for deps. A plain make,
# or make chash.so, runs no package manager.
DEPS_GOALS = demo test gen gen-check test-asan test-install test-dist \
             test-sqlite-versions test-python test-node
BUILDS = $(LOADABLE) build/runner build/ring_test build/algos_test \
         build/ring_points_test build/geometry_test build/asan/chash.so \
         build/asan/runner build/asan/ring_test build/asan/algos_test \
         build/asan/ring_points_test build/asan/geometry_test dist/chash.c \
         build/dist/chash.so build/dist/runner-embedded build/dist/embedded \
         build/concurrency build/crash build/holds build/asan/holds \
         tests/bench/bench
ifneq ($(filter $(DEPS_GOALS),$(MAKECMDGOALS)),)
$(BUILDS): | deps
endif

$(LOADABLE): $(SRC) $(HDR)
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(SOFLAGS) $(INC) -o $@ $(SRC) $(LDFLAGS) $(LIBS)

build/runner: tests/harness/runner.c
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) -lsqlite3 -lnettle

build/holds: tests/harness/holds.c
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) -lsqlite3

build/ring_test: tests/unit/ring_test.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/ring_test.c $(CORE) $(LIBS)

demo: deps $(LOADABLE)
	sqlite3 :memory: -cmd '.load ./chash' < sql/demo.sql

build/algos_test: tests/unit/algos_test.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/algos_test.c $(CORE) $(LIBS)

build/ring_points_test: tests/unit/ring_points_test.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/ring_points_test.c $(CORE) $(LIBS)

build/geometry_test: tests/unit/geometry_test.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/geometry_test.c $(CORE) $(LIBS)

build/lookup_rules_test: tests/unit/lookup_rules_test.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/unit/lookup_rules_test.c $(CORE) $(LIBS)

# The benchmark links the ring core directly and loads chash.so for the
# rest; with libmemcached-dev installed it also races libmemcached's ketama.
BENCH_LM = $(shell pkg-config --exists libmemcached 2>/dev/null && echo \
             -DBENCH_LIBMEMCACHED $$(pkg-config --libs libmemcached))
tests/bench/bench: tests/bench/bench.c $(CORE) $(HDR)
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/bench/bench.c $(CORE) \
	  -lsqlite3 $(BENCH_LM) $(LIBS)

bench: $(LOADABLE) tests/bench/bench
	tests/bench/bench --ext ./$(LOADABLE)

# The test builds fail on any warning.
TEST_TARGETS = test test-asan test-valgrind test-oom test-hard fuzz fuzz-replay test-compat \
               bench test-dist test-install test-sqlite-versions test-python test-node
$(TEST_TARGETS): WERROR = -Werror

test: deps $(LOADABLE) $(CLI) build/runner build/holds build/ring_test build/algos_test build/ring_points_test build/geometry_test build/lookup_rules_test
	build/ring_test
	build/algos_test
	build/ring_points_test
	build/geometry_test
	build/lookup_rules_test
	$(MAKE) --no-print-directory gen-check
	build/runner --ext ./$(LOADABLE) tests/sql/*.test tests/gen/*.test
	build/holds ./$(LOADABLE)
	tests/harness/migration.sh ./$(LOADABLE)
	tests/harness/cli.sh $(CURDIR)/$(CLI) $(CURDIR)/$(LOADABLE)
	/usr/bin/python3 tests/harness/deserialize.py ./$(LOADABLE)
	/usr/bin/python3 tests/harness/settled.py ./$(LOADABLE)
	/usr/bin/python3 tests/harness/commit_work.py ./$(LOADABLE)
	/usr/bin/python3 tests/harness/txn_driver.py --ext ./$(LOADABLE) --transactions 3000 --seed 7 --busy

# The generated files: the .test files of tests/gen/, and the generated
# regions of docs and tests (the lists of algorithms, hashes and options,
# which tests/gen/lists_gen.py writes from build/catalog and the loadable).
# gen-check fails if a committed file differs from what its generator
# writes; gen rewrites them. (a generator is a script that hands its files
# to genfiles.main)
GEN_SCRIPTS = $(shell grep -l 'genfiles.main' tests/gen/*.py)
GEN_ENV     = CATALOG=build/catalog LOADABLE=./$(LOADABLE)

# What the build knows of itself (the registry, the option and hash
# tables) as JSON, for lists_gen.py.
build/catalog: tests/gen/catalog.c $(CORE) $(HDR)
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(INC) -o $@ tests/gen/catalog.c $(CORE) $(LIBS)

gen-check: deps $(LOADABLE) build/catalog
	@for g in $(GEN_SCRIPTS); do $(GEN_ENV) /usr/bin/python3 $$g --check || exit 1; done

gen: deps $(LOADABLE) build/catalog
	@for g in $(GEN_SCRIPTS); do $(GEN_ENV) /usr/bin/python3 $$g --write || exit 1; done

# Adding an algorithm needs its file, its registry line and make gen: a
# copy of modn under another name proves it in a copy of the tree.
test-probe: deps
	tests/harness/probe_algorithm.sh

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer;
# any report fails the run.
build/asan/chash.so: $(SRC) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(SOFLAGS) $(INC) -o $@ $(SRC) $(LIBS)

build/asan/runner: tests/harness/runner.c
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) -o $@ $< -lsqlite3 -lnettle

build/asan/holds: tests/harness/holds.c
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) -o $@ $< -lsqlite3

build/asan/ring_test: tests/unit/ring_test.c $(CORE) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/ring_test.c $(CORE) $(LIBS)

build/asan/algos_test: tests/unit/algos_test.c $(CORE) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/algos_test.c $(CORE) $(LIBS)

build/asan/ring_points_test: tests/unit/ring_points_test.c $(CORE) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/ring_points_test.c $(CORE) $(LIBS)

build/asan/geometry_test: tests/unit/geometry_test.c $(CORE) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/geometry_test.c $(CORE) $(LIBS)

build/asan/lookup_rules_test: tests/unit/lookup_rules_test.c $(CORE) $(HDR)
	@mkdir -p build/asan
	$(CC) $(STD) -O1 $(WARN) $(SAN) $(INC) -o $@ tests/unit/lookup_rules_test.c $(CORE) $(LIBS)

test-asan: deps build/asan/chash.so build/asan/runner build/asan/holds build/asan/ring_test build/asan/algos_test build/asan/ring_points_test build/asan/geometry_test build/asan/lookup_rules_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/ring_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/algos_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/ring_points_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/geometry_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/lookup_rules_test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/runner --ext ./build/asan/chash.so tests/sql/*.test tests/gen/*.test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/holds ./build/asan/chash.so

# Every .test file under valgrind memcheck: any error or leak fails.
# oom.test is left out: its 22,000 fault-injection runs take valgrind most
# of an hour, and the runner already counts every allocation in them (a
# leak fails it) while test-asan runs it under AddressSanitizer.
VALGRIND_TESTS = $(filter-out tests/sql/oom.test,$(wildcard tests/sql/*.test tests/gen/*.test))

test-valgrind: $(LOADABLE) build/runner | deps-hard
	valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
	  --errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
	  build/runner --ext ./$(LOADABLE) $(VALGRIND_TESTS)

# Every statement and query of every .test file, run first with allocation
# N = 1, 2, 3 ... failing (see tests/harness/runner.c, "oom").
test-oom: $(LOADABLE) build/runner
	build/runner --oom --ext ./$(LOADABLE) tests/sql/*.test tests/gen/*.test

# Processes against one database: concurrent readers and writers (WAL), and
# writers killed with SIGKILL mid-transaction; random transactions with DDL
# and savepoints against a model (txn_driver.py, once plain and once with
# COMMITs that fail with SQLITE_BUSY). HARD_SECONDS, CRASH_ROUNDS and
# TXN_TRANSACTIONS bound them; CI uses the defaults, larger runs are on
# demand.
HARD_SECONDS ?= 5
CRASH_ROUNDS ?= 40
TXN_TRANSACTIONS ?= 10000

build/concurrency: tests/harness/concurrency.c
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) -lsqlite3

build/crash: tests/harness/crash.c
	@mkdir -p build
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) -lsqlite3

test-hard: $(LOADABLE) build/runner build/concurrency build/crash
	build/concurrency --ext ./$(LOADABLE) --seconds $(HARD_SECONDS)
	build/crash --ext ./$(LOADABLE) --rounds $(CRASH_ROUNDS)
	build/runner --ext ./$(LOADABLE) tests/slow/*.test
	/usr/bin/python3 tests/harness/txn_driver.py --ext ./$(LOADABLE) --transactions $(TXN_TRANSACTIONS) --seed 1
	/usr/bin/python3 tests/harness/txn_driver.py --ext ./$(LOADABLE) --transactions $(TXN_TRANSACTIONS) --seed 2 --busy

# libFuzzer targets (clang): the extension linked in statically with the
# system libsqlite3. New corpus entries go to build/fuzz/corpus-NAME; the
# seeds in tests/fuzz/corpus/NAME are kept in the repository.
#
# FUZZ_SANITIZE picks the sanitizers: address,undefined (the default, as CI
# runs it) or undefined alone, about three times as many executions per
# second for long runs; `make fuzz-replay` then runs every corpus entry
# found through the ASan+UBSan build.
FUZZ_TARGETS = options spec keys dml corrupt nginx haproxy nutcracker envoy \
               libmemcached spymemcached hashring nodetool_ring redis_nodes \
               dalli pymemcache redis_cli
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
             -DRING_MAX_POINTS=16384 -DMAGLEV_MAX_TABLE=65537

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_config.h $(SRC) $(HDR) | deps-hard
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
# openjdk-17-jdk-headless). redis_cluster and hash_tag against
# redis-server, redis-cli and nutcracker (redis-server, redis-tools).
# kafka and guava against npm kafkajs, librdkafka-dev and libguava-java;
# spymemcached against libspymemcached-java.
test-compat: $(LOADABLE)
	tests/compat/run.sh

# The experiments: each sql/NAME.sql prints its tables into out/NAME.txt;
# the two that are plotted also leave their table NAME in out/NAME.tsv.
PLOTTED = vnode_sweep modn_vs_ring

experiments: $(LOADABLE) plot-deps
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

# ------------------------------------------------------------ getting it
# make install: the loadable, the public header chash.h and the tool chash.
install: $(LOADABLE) $(CLI)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 755 $(LOADABLE) $(DESTDIR)$(LIBDIR)/$(LOADABLE)
	install -m 644 include/chash.h $(DESTDIR)$(INCLUDEDIR)/chash.h
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/chash

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(LOADABLE) $(DESTDIR)$(INCLUDEDIR)/chash.h $(DESTDIR)$(BINDIR)/chash

# Installs into a temporary DESTDIR, loads the installed extension in the
# sqlite3 shell, uninstalls and checks that nothing is left.
test-install: deps $(LOADABLE)
	tests/packaging/install.sh

# The one-file build: tools/amalgamate.sh joins ext/ into dist/chash.c (and
# stops on a name two files would both define). A program built from it
# links what the loadable links.
dist: dist/chash.c

dist/chash.c: tools/amalgamate.sh $(SRC) $(HDR)
	CC="$(CC)" tools/amalgamate.sh dist

dist/chash.h: dist/chash.c

build/dist/chash.so: dist/chash.c
	@mkdir -p build/dist
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) $(SOFLAGS) -o $@ dist/chash.c $(LDFLAGS) $(LIBS)

# The runner and the tour with chash linked in (-DSQLITE_CORE): each
# registers it with sqlite3_auto_extension().
build/dist/runner-embedded: tests/harness/runner.c dist/chash.c
	@mkdir -p build/dist
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -DSQLITE_CORE -DCHASH_EMBEDDED -Idist -o $@ \
	  tests/harness/runner.c dist/chash.c $(LDFLAGS) -lsqlite3 $(LIBS)

build/dist/embedded: tests/harness/embedded.c dist/chash.c
	@mkdir -p build/dist
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -DSQLITE_CORE -Idist -o $@ \
	  tests/harness/embedded.c dist/chash.c $(LDFLAGS) -lsqlite3 $(LIBS)

# The suite with dist/chash.c built as a loadable and linked in; the tour
# linked in prints what the shell prints with the loadable.
test-dist: deps build/runner build/dist/chash.so build/dist/runner-embedded build/dist/embedded $(LOADABLE)
	build/runner --ext ./build/dist/chash.so tests/sql/*.test tests/gen/*.test
	build/dist/runner-embedded tests/sql/*.test tests/gen/*.test
	build/dist/embedded sql/demo.sql > build/dist/tour-embedded.txt
	grep -v '^\.' sql/demo.sql | sqlite3 -batch :memory: -cmd '.load ./$(LOADABLE)' \
	  > build/dist/tour-loadable.txt
	cmp build/dist/tour-embedded.txt build/dist/tour-loadable.txt
	@echo "tour: $$(wc -l < build/dist/tour-embedded.txt) lines, linked in = loadable"

# ---------------------------------------------------------- SQLite versions
# The suite against SQLite amalgamations (sqlite3.c, sqlite3.h) taken from
# better-sqlite3 releases on npm, each compiled into the runner so that its
# SQLite, not the system's, loads chash: the oldest SQLite chash supports
# and the newest at hand. The files in tests/sql-newest/ run on the newest
# only (SQLite 3.44 or later: PRAGMA integrity_check reaching the virtual
# table). One release just below the oldest must refuse to load chash.
SQLITE_BELOW  = 3.38.5
SQLITE_OLDEST = 3.39.0
SQLITE_NEWEST = 3.54.1
BSQ_3.38.5 = 7.5.3
BSQ_3.39.0 = 7.6.0
BSQ_3.54.1 = 13.2.0
NEWEST_TESTS = $(wildcard tests/sql-newest/*.test)
# The tests use sqrt() and URI file names, as Debian's SQLite has them.
AMALGAMATION_FLAGS = -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_MATH_FUNCTIONS -DSQLITE_USE_URI=1

.PRECIOUS: build/sqlite/%/sqlite3.c build/sqlite/%/sqlite3.o

build/sqlite/%/sqlite3.c: | deps-npm
	@test -n "$(BSQ_$*)" || { echo "no better-sqlite3 release known for SQLite $*"; exit 1; }
	@mkdir -p build/sqlite/$*
	cd build/sqlite && npm pack --silent better-sqlite3@$(BSQ_$*) >/dev/null
	tar -xzf build/sqlite/better-sqlite3-$(BSQ_$*).tgz -C build/sqlite/$* --strip-components=3 \
	  package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h
	@rm -f build/sqlite/better-sqlite3-$(BSQ_$*).tgz
	@grep -q '^#define SQLITE_VERSION  *"$*"' build/sqlite/$*/sqlite3.h \
	  || { echo "better-sqlite3@$(BSQ_$*) does not hold SQLite $*"; rm -f $@; exit 1; }

build/sqlite/%/sqlite3.o: build/sqlite/%/sqlite3.c
	$(CC) -O1 -w $(AMALGAMATION_FLAGS) -c -o $@ $<

build/sqlite/%/runner: tests/harness/runner.c build/sqlite/%/sqlite3.o
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -Ibuild/sqlite/$* -o $@ $< build/sqlite/$*/sqlite3.o \
	  $(LDFLAGS) -lnettle -lpthread -ldl -lm

build/sqlite/%/floor: tests/harness/floor.c include/chash.h build/sqlite/%/sqlite3.o
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -Ibuild/sqlite/$* -Iinclude -o $@ $< build/sqlite/$*/sqlite3.o \
	  $(LDFLAGS) -lpthread -ldl -lm

test-sqlite-versions: deps $(LOADABLE) build/sqlite/$(SQLITE_BELOW)/floor \
                      build/sqlite/$(SQLITE_OLDEST)/runner build/sqlite/$(SQLITE_NEWEST)/runner
	build/sqlite/$(SQLITE_BELOW)/floor ./$(LOADABLE)
	build/sqlite/$(SQLITE_OLDEST)/runner --ext ./$(LOADABLE) tests/sql/*.test tests/gen/*.test
	build/sqlite/$(SQLITE_NEWEST)/runner --ext ./$(LOADABLE) tests/sql/*.test tests/gen/*.test $(NEWEST_TESTS)

# --------------------------------------------------------------- bindings
# The Python package, installed offline into a venv of Debian's python3,
# and the npm package, packed and installed beside better-sqlite3 from npm.
test-python: deps deps-python $(LOADABLE)
	tests/packaging/python.sh

test-node: deps deps-node $(LOADABLE)
	tests/packaging/node.sh

clean:
	rm -rf chash.so chash.dylib chash.dll tests/bench/bench build dist \
	  bindings/python/build bindings/python/src/*.egg-info bindings/node/lib bindings/node/*.tgz

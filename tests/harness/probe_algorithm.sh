#!/usr/bin/env bash
# tests/harness/probe_algorithm.sh: adding an algorithm is its file, its
# line in ext/algos/registry.c and `make gen`, nothing else.
#
# In a temporary copy of the tree (the files git tracks, as they are in
# the working tree, and the untracked ones it does not ignore), it adds
# algorithm `probe`, a copy of ext/algos/modn.c under that name, and its
# registry line; runs `make gen`; then checks that the copy builds, that a
# probe ring places keys as modn's (it is the same rule), that `make
# gen-check`, tests/sql/surface.test and tests/sql/check.test pass, that
# the generated lists of the docs name it, and that `make gen` changed no
# file but those that hold generated regions. Run by `make test-probe`
# (.ci/run); it builds the loadable twice, so it is not part of make test.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail(){ echo "probe_algorithm.sh: FAIL: $*"; exit 1; }

git ls-files -z --cached --others --exclude-standard \
  | (cd "$root" && tar --null -T - -cf -) | tar -xf - -C "$work"
cp -a "$work" "$work.before"
trap 'rm -rf "$work" "$work.before"' EXIT
cd "$work"

# The new algorithm: modn's file under another name, and its registry line.
sed 's/modn/probe/g' ext/algos/modn.c > ext/algos/probe.c
grep -q 'algo_probe' ext/algos/probe.c || fail "probe.c defines no algo_probe"
awk 'NR==FNR { if( /^  X\([a-z0-9_]*\)$/ ) last = FNR; next }
     FNR==last { print $0 " \\"; print "  X(probe)"; next }
     { print }' ext/algos/registry.c ext/algos/registry.c > registry.c.new
mv registry.c.new ext/algos/registry.c
grep -q '^  X(probe)$' ext/algos/registry.c || fail "no registry line"

make --no-print-directory -s gen >/dev/null

# make gen may have changed only the files with generated regions.
changed=$({ diff -rq "$work.before" "$work" -x build -x '*.so' -x __pycache__ || true; } \
          | sed -e "s|^Files $work.before/\([^ ]*\) and .*|\1|" \
                -e "s|^Only in $work/\?\([^:]*\): \(.*\)|\1/\2|" \
          | sed 's|^/||' | sort)
want=$(printf '%s\n' ext/algos/probe.c ext/algos/registry.c README.md \
       docs/reference.md docs/analysis.md docs/algorithms.md \
       tests/sql/surface.test tests/sql/check.test | sort)
unexpected=$(comm -23 <(echo "$changed") <(echo "$want"))
[ -z "$unexpected" ] || fail "make gen changed files without generated regions: $unexpected"

make --no-print-directory -s chash.so build/runner >/dev/null
make --no-print-directory -s gen-check >/dev/null || fail "make gen-check"
build/runner --ext ./chash.so tests/sql/surface.test tests/sql/check.test \
  || fail "surface.test or check.test"

# It places keys, as modn does with the same nodes.
keys="SELECT group_concat(ch_locate('key' || value, '{\"algorithm\":\"ALGO\",
        \"nodes\":[\"a\",\"b\",\"c\"]}'), ',') FROM generate_series(1, 50)"
probe=$(sqlite3 :memory: -cmd '.load ./chash' "${keys//ALGO/probe}")
modn=$(sqlite3 :memory: -cmd '.load ./chash' "${keys//ALGO/modn}")
[ -n "$probe" ] && [ "$probe" = "$modn" ] || fail "probe places keys as '$probe', modn as '$modn'"

# The generated lists name it.
for f in README.md docs/reference.md docs/algorithms.md; do
  grep -q '`probe`' "$f" || fail "$f does not name probe"
done
grep -q '`probe`\|, probe\b' docs/analysis.md || fail "docs/analysis.md's table does not list probe"
grep -q ', probe\$$' tests/sql/surface.test \
  || fail "surface.test's list lacks probe"
echo "probe_algorithm.sh: a new algorithm needed its file, its registry line and make gen"

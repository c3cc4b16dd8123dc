#!/bin/sh
# tools/amalgamate.sh: the one-file build of chash.
#
#   tools/amalgamate.sh [OUTDIR]        (make dist: OUTDIR is dist)
#
# Writes OUTDIR/chash.h, the public header, and OUTDIR/chash.c: the public
# header, every header in ext/*/ (each after the headers it includes) and
# every C file in ext/*/, joined in that order
# with their #include "..." lines blanked (so each part keeps its line
# numbers: a #line directive starts each). System headers stay #included:
# xxHash is inlined from <xxhash.h> (XXH_INLINE_ALL), and a program built
# from chash.c links nettle, zlib and libyaml:
#
#   cc -O2 -fPIC -shared -o chash.so chash.c -lnettle -lz -lyaml -lm
#   cc -O2 -DSQLITE_CORE -c chash.c    (then link with -lsqlite3 -lnettle -lz -lyaml -lm)
#
# New files in ext/*/ are taken up by the wildcard. The script stops with a
# message when a local #include names no file, or a name two files would
# each define: a macro #defined in two places, or a file-scope static
# (function or variable) in two C files. In one file they would collide.
set -eu
cd "$(dirname "$0")/.."
out=${1:-dist}
CC=${CC:-cc}

die(){ echo "amalgamate: $*" >&2; exit 1; }

headers=$(ls ext/*/*.h)
sources=$(ls ext/*/*.c)
[ -n "$headers" ] && [ -n "$sources" ] || die "no sources under ext/"

# Every local header by its base name, which must be unique.
all_headers="include/chash.h $headers"
dups=$(for h in $all_headers; do basename "$h"; done | sort | uniq -d)
[ -z "$dups" ] || die "two headers are named $dups"

# The local headers a file includes, as paths.
local_includes(){
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1" |
  while read -r name; do
    found=""
    for h in $all_headers; do
      [ "$(basename "$h")" = "$name" ] && found=$h
    done
    [ -n "$found" ] || { echo "amalgamate: $1 includes \"$name\", which is not in ext/*/ or include/" >&2; echo "!missing"; }
    echo "$found"
  done
}

# Headers in dependency order: tsort on "included includer" pairs.
pairs=$(for h in $headers; do
  echo "$h $h"
  for d in $(local_includes "$h"); do
    [ "$d" = "!missing" ] && exit 1
    [ "$d" = include/chash.h ] || echo "$d $h"
  done
done) || die "a header includes a file that does not exist"
ordered=$(echo "$pairs" | tsort) || die "the headers include each other in a loop"
for c in $sources; do
  for d in $(local_includes "$c"); do
    [ "$d" = "!missing" ] && die "a C file includes a file that does not exist"
  done
done

# A macro #defined in two files (include guards are each their own).
macros=$(for f in $all_headers $sources; do
  sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$f" |
    sort -u | sed "s|\$| $f|"
done)
clash=$(echo "$macros" | awk '{n[$1]++; f[$1]=f[$1] " " $2} END{for(m in n) if(n[m]>1) print m ":" f[m]}')
[ -z "$clash" ] || die "macro defined in more than one file: $clash"

# A file-scope static in two C files: each file compiled alone, without
# optimisation (so every static is kept), its local symbols listed.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
INC="-Iext/core -Iext/algos -Iext/config -Iext/sqlite -Iinclude"
for c in $sources; do
  o=$tmp/$(echo "$c" | tr / _).o
  $CC -std=gnu11 -O0 -fPIC $INC -c -o "$o" "$c" || die "cannot compile $c"
  nm "$o" | awk -v f="$c" '$2 ~ /^[tdbr]$/ && $3 !~ /\./ {print $3, f}'
done > "$tmp/statics"
# A header's static inline functions are in every file that includes it
# (and once in chash.c): their names are left out. So are the statics a
# header brings from a system header it includes (xxHash, inlined through
# xxhash_inline.h): each header compiled alone lists them.
for h in $headers; do
  sed -n 's/^static[^(;=]*[^A-Za-z0-9_(;=]\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p' "$h"
  o=$tmp/header_$(echo "$h" | tr / _).o
  if $CC -std=gnu11 -O0 -fPIC -fkeep-static-functions -fkeep-inline-functions $INC -x c -c -o "$o" "$h" 2>/dev/null; then
    nm "$o" | awk '$2 ~ /^[tdbr]$/ && $3 !~ /\./ {print $3}'
  fi
done | sort -u > "$tmp/header_statics"
clash=$(sort -u "$tmp/statics" | awk 'NR==FNR{h[$1]=1; next} !($1 in h){n[$1]++; f[$1]=f[$1] " " $2}
  END{for(s in n) if(n[s]>1) print s ":" f[s]}' "$tmp/header_statics" -)
[ -z "$clash" ] || die "static name defined in more than one C file: $clash"

mkdir -p "$out"
cp include/chash.h "$out/chash.h"
{
  echo "/*"
  echo "** chash.c: the whole chash extension in one C file, written by"
  echo "** tools/amalgamate.sh from the sources in ext/ (edit those, not this)."
  echo "**"
  echo "** As a loadable extension:"
  echo "**   cc -O2 -fPIC -shared -o chash.so chash.c -lnettle -lz -lyaml -lm"
  echo "** Linked into an application with SQLite (see chash.h):"
  echo "**   cc -O2 -DSQLITE_CORE -c chash.c   and link -lsqlite3 -lnettle -lz -lyaml -lm"
  echo "** Both need xxHash's header (xxhash.h), nettle's, zlib's and libyaml's."
  echo "*/"
  for f in include/chash.h $ordered $sources; do
    echo "/************** $f **************/"
    echo "#line 1 \"$f\""
    sed 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*".*//' "$f"
  done
} > "$out/chash.c.tmp"
mv "$out/chash.c.tmp" "$out/chash.c"
echo "amalgamate: $out/chash.c ($(echo $ordered $sources | wc -w) files, $(wc -l < "$out/chash.c") lines), $out/chash.h"

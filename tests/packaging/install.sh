#!/bin/sh
# tests/packaging/install.sh: make install and make uninstall, into a
# temporary DESTDIR (make test-install).
#
# The installed header must compile into a program that names
# sqlite3_chash_init; the installed loadable must load in the sqlite3 shell
# by its installed path and hash: ch_hash('foo', 'md5') is the first four
# bytes of MD5("foo") read little-endian, which md5sum computes here on its
# own. The installed tool chash must run and read a file. After make
# uninstall no file may be left.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check(){  # check WHAT GOT WANT
  if [ "$2" = "$3" ]; then pass=$((pass+1)); echo "ok: $1"
  else fail=$((fail+1)); echo "FAILED: $1: got '$2', want '$3'"; fi
}

make --no-print-directory install DESTDIR="$tmp" PREFIX=/opt/chash
lib=$(ls "$tmp"/opt/chash/lib/chash.*)
check "installed files" "$(cd "$tmp" && find . -type f | sort | tr '\n' ' ')" \
      "./opt/chash/bin/chash ./opt/chash/include/chash.h ./opt/chash/lib/$(basename "$lib") "

cat > "$tmp/prog.c" <<'PROG'
#include <chash.h>
int main(void){
  int (*init)(sqlite3*, char**, const sqlite3_api_routines*) = sqlite3_chash_init;
  (void)init;
  return 0;
}
PROG
compiled=no
${CC:-cc} -Wall -Werror -I"$tmp/opt/chash/include" -c -o "$tmp/prog.o" "$tmp/prog.c" && compiled=yes
check "a program including the installed chash.h compiles" "$compiled" yes
rm -f "$tmp/prog.c" "$tmp/prog.o"

md5=$(printf foo | md5sum | cut -c1-8)
want=$(echo "$md5" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')
got=$(sqlite3 :memory: -cmd ".load $tmp/opt/chash/lib/chash" \
        "SELECT printf('%08x', ch_hash('foo', 'md5'))")
check "installed chash loads and hashes" "$got" "$want"

printf 'upstream u { hash $x consistent; server a; }\n' > "$tmp/u.conf"
check "installed chash tool runs" \
      "$("$tmp/opt/chash/bin/chash" locate --format nginx --config "$tmp/u.conf" k)" "$(printf 'k\ta')"
rm -f "$tmp/u.conf"

make --no-print-directory uninstall DESTDIR="$tmp" PREFIX=/opt/chash
check "nothing left after uninstall" "$(cd "$tmp" && find . ! -type d)" ""
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

#!/bin/sh
# tests/harness/cli.sh: the command-line tool against the SQL functions it
# is a shell over (make test). Usage: cli.sh CHASH_TOOL CHASH_SO
#
# Each command's output must equal what the sqlite3 shell, with the
# loadable, computes for the same files and keys with ch_config, ch_locate,
# ch_diff, ch_moved and ch_export; bad arguments and files must give exit
# status 2 and a message on stderr, never output.
set -eu
tool=$1
so=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check(){  # check WHAT GOT WANT
  if [ "$2" = "$3" ]; then pass=$((pass+1))
  else fail=$((fail+1)); printf 'FAILED: %s\n--- got\n%s\n--- want\n%s\n' "$1" "$2" "$3"; fi
}
sql(){ sqlite3 -batch -noheader :memory: -cmd ".load $so" "$@"; }
# the same, with the keys of keys.txt in table k
sqlk(){ sqlite3 -batch -noheader :memory: -cmd ".load $so" -cmd "CREATE TABLE k(k)" \
          -cmd ".import keys.txt k" "$@"; }

cat > "$tmp/nginx.conf" <<'CONF'
http {
  upstream app {
    hash $request_uri consistent;   # the ring
    server 10.0.0.1:8080;
    server 10.0.0.2:8080 weight=2;
    server "unix:/run/app.sock";
  }
  upstream other { hash $x consistent; server 10.9.9.9; }
}
CONF
cat > "$tmp/old.yml" <<'CONF'
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  servers:
   - 10.0.0.1:11211:1
   - 10.0.0.2:11211:1 cache-b
   - 10.0.0.3:11212:1
CONF
sed 's/10.0.0.3:11212:1/10.0.0.3:11212:2\n   - 10.0.0.4:11211:1/' "$tmp/old.yml" > "$tmp/new.yml"
i=0
while [ $i -lt 500 ]; do echo "user:$i"; i=$((i+1)); done > "$tmp/keys.txt"
printf 'a,b\nq"uote\n' >> "$tmp/keys.txt"
cd "$tmp"

# locate: keys as arguments, then from stdin, against ch_locate.
got=$("$tool" locate --format nginx --config nginx.conf --name app /users/42 /users/43)
want=$(sql "SELECT k || char(9) || ch_locate(k, ch_config('nginx', readfile('nginx.conf'), 'app')) FROM (SELECT '/users/42' AS k UNION ALL SELECT '/users/43')")
check "locate KEY..." "$got" "$want"
got=$("$tool" locate --format nginx --config nginx.conf --name app < keys.txt)
want=$(sqlk "SELECT k || char(9) || ch_locate(k, ch_config('nginx', readfile('nginx.conf'), 'app')) FROM k")
check "locate < keys" "$got" "$want"

# a redis-cli --cluster create command line (format redis_cli), and the
# help's list of formats, which names it.
printf 'redis-cli --cluster create \\\n  b:1 a:1 a:2 a:3 c:1 b:2 --cluster-replicas 1\n' > create.sh
got=$("$tool" locate --format redis_cli --config create.sh user:1 user:2 '{a}b')
want=$(sql "SELECT k || char(9) || ch_locate(k, ch_config('redis_cli', readfile('create.sh'))) FROM (SELECT 'user:1' AS k UNION ALL SELECT 'user:2' UNION ALL SELECT '{a}b')")
check "locate --format redis_cli" "$got" "$want"
check "--help lists redis_cli" "$("$tool" --help | grep -c 'redis_cli')" 1

# A key no node serves (a Redis map's uncovered slots) has an empty NODE,
# in locate and in diff's SRC, as NULL is in CSV.
cat > gaps.txt <<'CONF'
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 master - 0 1426238317239 4 connected 0-100
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
CONF
sed 's/0-100$/0-5460/; s/5461-10922$/5461-16383/' gaps.txt > full.txt
got=$("$tool" locate --format redis_nodes --config gaps.txt a b c)
want=$(sql "SELECT k || char(9) || coalesce(ch_locate(k, ch_config('redis_nodes', readfile('gaps.txt'))), '') FROM (SELECT 'a' AS k UNION ALL SELECT 'b' UNION ALL SELECT 'c')")
check "locate: no node" "$got" "$want"
check "locate: no node is an empty field" "$(echo "$got" | grep -c "$(printf '\t')\$")" 2
set +e
got=$("$tool" diff --format redis_nodes gaps.txt full.txt); rc=$?
set -e
want=$(sql "SELECT coalesce(src, '') || char(9) || dst || char(9) || printf('%!.17g', sum(share)) FROM ch_diff(ch_config('redis_nodes', readfile('gaps.txt')), ch_config('redis_nodes', readfile('full.txt'))) GROUP BY src, dst ORDER BY src, dst")
check "diff: no node" "$(echo "$got" | grep -v '^total' | awk -F'\t' '{ printf "%s\t%s\t%.12g\n", $1, $2, $3 }')" \
                      "$(echo "$want" | awk -F'\t' '{ printf "%s\t%s\t%.12g\n", $1, $2, $3 }')"
check "diff: no node, exit status" "$rc" 1

# diff: the exact share per src -> dst, and the exit status 1 (keys move).
set +e
got=$("$tool" diff --format nutcracker old.yml new.yml); rc=$?
set -e
want=$(sql "SELECT src || char(9) || dst || char(9) || printf('%!.17g', sum(share)) FROM ch_diff(ch_config('nutcracker', readfile('old.yml')), ch_config('nutcracker', readfile('new.yml'))) GROUP BY src, dst ORDER BY src, dst" \
  "SELECT 'total' || char(9) || char(9) || printf('%!.17g', sum(share)) FROM ch_diff(ch_config('nutcracker', readfile('old.yml')), ch_config('nutcracker', readfile('new.yml')))")
check "diff rows" "$(echo "$got" | awk -F'\t' '{ printf "%s\t%s\t%.12g\n", $1, $2, $3 }')" \
                  "$(echo "$want" | awk -F'\t' '{ printf "%s\t%s\t%.12g\n", $1, $2, $3 }')"
check "diff exit status when keys move" "$rc" 1
set +e
got=$("$tool" diff --format nutcracker old.yml old.yml --name alpha); rc=$?
set -e
check "diff of a file with itself" "$got:$rc" "$(printf 'total\t\t0'):0"

# moved: CSV of the keys that move, as ch_moved and ch_locate say.
set +e
got=$("$tool" moved --format nutcracker old.yml new.yml < keys.txt); rc=$?
set -e
want=$(sqlite3 -batch -csv -header :memory: -cmd ".load $so" -cmd "CREATE TABLE k(k)" \
         -cmd ".mode list" -cmd ".import keys.txt k" -cmd ".mode csv" "SELECT k AS key, ch_locate(k, ch_config('nutcracker', readfile('old.yml'))) AS src, ch_locate(k, ch_config('nutcracker', readfile('new.yml'))) AS dst FROM k WHERE ch_moved(k, ch_config('nutcracker', readfile('old.yml')), ch_config('nutcracker', readfile('new.yml')))" | tr -d '\r')
check "moved CSV" "$got" "$want"
check "moved exit status" "$rc" 1
check "moved: some keys move" "$(echo "$got" | wc -l | tr -d ' ')" "$(echo "$want" | wc -l | tr -d ' ')"

# export: a ring table as a file, and that file read back.
sqlite3 -batch pool.db -cmd ".load $so" "CREATE VIRTUAL TABLE app USING chash(algorithm=nginx); INSERT INTO app(node, weight) VALUES ('10.0.0.1:8080', 1), ('10.0.0.2:8080', 2);"
got=$("$tool" export --format nginx --db pool.db --ring app)
want=$(sqlite3 -batch pool.db -cmd ".load $so" "SELECT ch_export('app', 'nginx')")
check "export" "$got" "$want"
got=$("$tool" export --format nginx --db pool.db --name web | head -1)
check "export: the only ring, named by --name" "$got" "upstream web {"
"$tool" export --format nginx --db pool.db > exported.conf
check "export read back" "$("$tool" locate --format nginx --config exported.conf k1 k2)" \
      "$("$tool" locate --db pool.db --ring app k1 k2)"

# Trouble: exit status 2, a message on stderr, nothing on stdout.
trouble(){  # trouble WHAT MESSAGE ARGS...
  what=$1; msg=$2; shift 2
  set +e
  out=$("$tool" "$@" 2> err.txt < /dev/null); rc=$?
  set -e
  check "$what: exit status" "$rc" 2
  check "$what: no output" "$out" ""
  check "$what: message" "$(grep -c -F -- "$msg" err.txt)" 1
}
trouble "no command" "no command"
trouble "unknown command" "unknown command frobnicate" frobnicate
trouble "unknown option" "unknown option --colour" locate --colour x
trouble "option without value" "--format needs a value" locate --format
trouble "option twice" "--name is given twice" locate --name a --name b
trouble "missing file" "cannot read nope.conf" locate --format nginx --config nope.conf k
trouble "config and db" "give --config or --db, not both" locate --format nginx --config nginx.conf --db pool.db k
trouble "several upstreams" "the text holds 2 upstreams (app, other)" locate --format nginx --config nginx.conf k
trouble "unknown upstream" "no upstream named 'x'" locate --format nginx --config nginx.conf --name x k
trouble "unknown format" "unknown format 'apache'" locate --format apache --config nginx.conf k
trouble "diff with one file" "diff takes two files: OLD NEW" diff --format nutcracker old.yml
trouble "diff without format" "diff needs --format" diff old.yml new.yml
trouble "export without db" "export needs --db DB" export --format nginx
trouble "export of a missing ring" "no such ring: 'nope'" export --format nginx --db pool.db --ring nope
trouble "export in another format" "the ring is algorithm nginx" export --format haproxy --db pool.db
trouble "a missing database" "cannot open missing.db" export --format nginx --db missing.db
trouble "a key with a tab" "key 2 holds a tab, a line break or a NUL byte" locate --format nginx --config nginx.conf --name app k "$(printf 'x\ty')"
set +e
out=$(printf 'k1\nk\0z\n' | "$tool" locate --format nginx --config nginx.conf --name app 2> err.txt); rc=$?
set -e
check "a key line with a NUL: exit status" "$rc" 2
check "a key line with a NUL: the lines before it" "$out" "$("$tool" locate --format nginx --config nginx.conf --name app k1)"
check "a key line with a NUL: message" "$(grep -c -F 'line 2 of the standard input holds a tab, a line break or a NUL byte' err.txt)" 1
"$tool" --help | grep -q '^usage: chash COMMAND' && check "--help" ok ok || check "--help" no ok
check "--help exit status" "$("$tool" locate --help > /dev/null; echo $?)" 0

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]

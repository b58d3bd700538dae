#!/usr/bin/env bash
# End to end, with real processes (docs/history.md, "On a coordinator"): a coordinator and a
# server and a load agent on loopback. Nine campaigns of a series run on the pair; after the
# fifth, the server agent is upgraded: its catalogue's "hello" becomes a build that spends 20 us
# more CPU per request, and the build it replaces stays as "hello-base", each with a `version`
# command. The coordinator finds the change and re-measures it itself, hello-base against hello
# on the same pair, and records it confirmed; `benchlab regressions --fail-on regression` then
# exits 3. An agent upgraded without keeping the old build has the change recorded as not
# measured, and nothing is queued; once it keeps it, `benchlab remeasure --coordinator` has the
# change re-measured and confirmed.
# Usage: coordinator_remeasure_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
db="$work/lab.db"
[ -e "$work/hello-server" ] || ln -s "$bin/hello-server" "$work/hello-server"

local_coordinator_start

server_config() {  # server_config ENTRY=WORK_NS:VERSION...
  cat <<TOML
name = "cr-server"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/server-state"
run_root = "$work/server-runs"
TOML
  local spec entry ns version
  for spec in "$@"; do
    entry=${spec%%=*} ns=${spec#*=} version=${ns#*:} ns=${ns%%:*}
    cat <<TOML
[[target]]
name = "$entry"
command = ["$work/hello-server", "--port", "{port}", "--work-ns", "$ns"]
version = ["echo", "$version"]
TOML
  done
}

campaign() {  # campaign SERIES N: runs SERIES-N on the pair and waits for the coordinator to idle
  cat > "$work/c.toml" <<TOML
name = "$1-$2"
series = "$1"
baseline = "hello"
[matrix]
connections = [4]
rounds = 3
warmup = "100ms"
duration = "300ms"
[placement]
pairs = [["cr-server", "cr-load"]]
# The plumbing is under test, not this machine's neighbours: two agents on one machine see each
# other as foreign CPU.
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
  "$bin/benchlab" submit "$work/c.toml" --coordinator "127.0.0.1:$port" > /dev/null ||
    fail "submit $1-$2"
  wait_until 120 "$1-$2 to end" ended "$1-$2"
  [ "$(sqlite3 "$db" "select state from campaigns where name = '$1-$2'")" = done ] ||
    fail "$1-$2: $(sqlite3 "$db" "select state, error from campaigns where name = '$1-$2'")"
}
ended() {
  [[ "$(sqlite3 "$db" "select state from campaigns where name = '$1'")" =~ ^(done|failed|cancelled)$ ]]
}
judged() {  # judged SERIES: a re-measurement of SERIES is recorded and none is still measuring
  [ "$(sqlite3 "$db" "select count(*) > 0 and sum(status = 'measuring') = 0 from confirmations
                      where series = '$1'")" = 1 ]
}

restart_server() {  # restart_server ENTRY=WORK_NS:VERSION...: the same instance, a new catalogue
  kill "$server"
  wait "$server" 2>/dev/null || true
  server_config "$@" > "$work/server.toml"
  agent_start server
  wait_until 20 "the server agent to register its new catalogue" sh -c \
    "'$bin/benchlab' agents --coordinator 127.0.0.1:$port --json | grep -q '\"${1%%=*}\"'"
}

server_config hello=0:base > "$work/server.toml"
local_agent_config cr-load load "$port" > "$work/load.toml"
agent_start server
agent_start load

# --- an upgrade that keeps the old build ------------------------------------------------------
for n in 1 2 3 4 5; do campaign nightly "$n"; done
[ "$(sqlite3 "$db" "select count(*) from confirmations")" = 0 ] || fail "re-measured without a step"
restart_server hello=20000:slower hello-base=0:base
for n in 6 7 8 9; do campaign nightly "$n"; done
wait_until 120 "the coordinator to re-measure and judge the change" judged nightly
rows=$(sqlite3 "$db" "select figure || ' ' || status || ' ' || campaign from confirmations
                      where series = 'nightly' order by figure")
# The step is at nightly-6; on a busy machine the detector may place it a campaign off, and the
# re-measurement then still takes a base build (two campaigns before its point) as the old one.
[ "$(sqlite3 "$db" "select count(*) from confirmations where series = 'nightly' and
     (status != 'confirmed' or after_campaign_id not in (select id from campaigns where
     name in ('nightly-5', 'nightly-6', 'nightly-7')))")" -eq 0 ] ||
  fail "not every re-measurement confirmed the change near nightly-6: $(sqlite3 "$db" \
    "select figure, status, after_campaign_id, estimate, low, high, rounds from confirmations; select id, name from campaigns")"
probe=$(sqlite3 "$db" "select campaign from confirmations where series = 'nightly' limit 1")
[[ "$probe" =~ ^nightly-[6789]-remeasure-[0-9]+$ ]] || fail "re-measurement campaign '$probe'"
# Both builds, each from its catalogue entry, on the line's pair.
[ "$(sqlite3 "$db" "select group_concat(distinct target || '=' || target_version || '@' ||
     server_agent || '/' || load_agent) from (select * from windows w join campaigns c on
     c.id = w.campaign_id where c.name = '$probe' order by target)")" = \
  "hello=slower@cr-server/cr-load,hello-base=base@cr-server/cr-load" ] ||
  fail "re-measured builds: $(sqlite3 "$db" "select target, target_version, server_agent from windows w join campaigns c on c.id = w.campaign_id where c.name = '$probe'")"
grep -q "re-measuring hello c4 hello on cr-server: hello-base" "$work/coordinator.log" ||
  fail "the coordinator did not log the re-measurement"
check "the coordinator re-measured the change on its pair against the catalogue's old build: $(echo $rows)"

expect_status 3 "$bin/benchlab" regressions nightly --db "$db" --fail-on regression
"$bin/benchlab" regressions nightly --db "$db" --format markdown > "$work/pr.md" || true
grep -q '\*\*confirmed\*\*' "$work/pr.md" || fail "the Markdown does not say confirmed: $(cat "$work/pr.md")"
grep -q "$probe" "$work/pr.md" || fail "the Markdown does not name $probe"
check "regressions --fail-on regression exits 3 on the confirmed change, and the Markdown says so"

# --- an upgrade that does not ---------------------------------------------------------------
restart_server hello=0:base
for n in 1 2 3 4 5; do campaign lean "$n"; done
restart_server hello=20000:slower
for n in 6 7 8 9; do campaign lean "$n"; done
wait_until 20 "the change of series lean to be looked at" judged lean
[ "$(sqlite3 "$db" "select count(*) from confirmations where series = 'lean' and
     (status != 'not measured' or campaign != '' or detail not like '%version base%')")" = 0 ] ||
  fail "lean: $(sqlite3 "$db" "select figure, status, campaign, detail from confirmations where series = 'lean'")"
[ "$(sqlite3 "$db" "select count(*) from campaigns where name like 'lean-%-remeasure-%'")" = 0 ] ||
  fail "lean: a re-measurement was queued"
"$bin/benchlab" regressions lean --db "$db" --fail-on regression > "$work/lean.txt" ||
  fail "--fail-on regression failed on a change that was not measured"
grep -q "not measured" "$work/lean.txt" || fail "lean: $(cat "$work/lean.txt")"
check "without the old build in the catalogue the change is recorded not measured, with why"

# --- the old build kept afterwards, and a re-measurement asked for ------------------------------
restart_server hello=20000:slower hello-base=0:base
"$bin/benchlab" remeasure lean --coordinator "127.0.0.1:$port" > "$work/ask.txt" ||
  fail "remeasure --coordinator: $(cat "$work/ask.txt")"
grep -q "^series lean: hello c4 hello on cr-server .*: queued campaign lean-9-remeasure-1;" \
  "$work/ask.txt" || fail "remeasure --coordinator printed: $(cat "$work/ask.txt")"
wait_until 120 "the asked-for re-measurement of lean to be judged" judged lean
[ "$(sqlite3 "$db" "select group_concat(status || ' ' || campaign, ', ') from (select * from
     confirmations where series = 'lean' order by figure)")" = \
  "confirmed lean-9-remeasure-1, confirmed lean-9-remeasure-1" ] ||
  fail "lean, asked for: $(sqlite3 "$db" "select figure, status, campaign, detail from confirmations where series = 'lean'")"
expect_status 3 "$bin/benchlab" regressions lean --db "$db" --fail-on regression
expect_status 2 "$bin/benchlab" remeasure nope --coordinator "127.0.0.1:$port"
check "once the old build is kept, remeasure --coordinator has the change re-measured and confirmed"
echo "$passed checks passed"

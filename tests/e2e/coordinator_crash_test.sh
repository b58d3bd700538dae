#!/usr/bin/env bash
# A coordinator killed with SIGKILL mid-window and started again on the same database and port:
# the agents register again, the window cut off becomes a failed attempt (coordinator_restart)
# and is measured again, no other window is measured twice, the campaign finishes, and nothing
# is left running.
# Usage: coordinator_crash_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/benchlab-crash-XXXXXX)
pids=()
cleanup() {
  # SIGTERM first, so that an agent stops its targets and removes their cgroups; then SIGKILL.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "== $f" >&2; tail -8 "$f" >&2; done
  [ -e "$work/lab.db" ] && sqlite3 "$work/lab.db" \
    "select id, round, attempt, verdict, reasons from windows" >&2
  exit 1
}
passed=0
check() { echo "ok: $*"; passed=$((passed + 1)); }
wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$deadline" ] || return 1; sleep 0.05; done
}
sql() { sqlite3 "$work/lab.db" "$1"; }
# Every process of this test: its command line names the work directory (the daemons' files,
# the target's symlink).
left_behind() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) || continue
    [[ "$cmd" == *"$work"* ]] && echo -n "${p#/proc/}($cmd) "
  done
  return 0
}
# The targets the server agent runs now (its children; it reaps, so no zombie is counted).
targets() { pgrep -P "$server" -f "$work/hello-server" || true; }

# The first coordinator picks a free port; its successor listens on the same one, which the
# agents keep calling.
"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/lab.db" \
  --port-file "$work/port" 2> "$work/coordinator.log" &
coordinator=$!
pids+=($coordinator)
wait_for 10 test -s "$work/port" || fail "coordinator did not start"
port=$(cat "$work/port")

ln -s "$bin/hello-server" "$work/hello-server"
cat > "$work/server.toml" <<TOML
name = "crash-server"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/server-state"
run_root = "$work/runs"
spool_dir = "$work/spool"
[[target]]
name = "hello"
command = ["$work/hello-server", "--port", "{port}"]
TOML
cat > "$work/load.toml" <<TOML
name = "crash-load"
roles = ["load"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/load-state"
run_root = "$work/load-runs"
TOML
"$bin/benchlab" agent --config "$work/server.toml" 2> "$work/server.log" &
server=$!
pids+=($server)
"$bin/benchlab" agent --config "$work/load.toml" 2> "$work/load.log" &
load=$!
pids+=($load)

cat > "$work/campaign.toml" <<TOML
name = "crash"
baseline = "hello"
[matrix]
connections = [4]
rounds = 5
warmup = "100ms"
duration = "500ms"
[load]
cpus = "1"
[gates]
# Two agents on one machine see each other as foreign CPU, and the machine is shared: the test
# is about the restart, not the verdicts.
foreign_cpu = false
selftest_drift = false
generator_bound = false
steal = false
[[target]]
name = "hello"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" submit "$work/campaign.toml" --coordinator "127.0.0.1:$port" > /dev/null ||
  fail "submit"

# Kill the coordinator inside a window's measured interval: a window stored, the next one claimed
# and its target started, then into its 100 ms warm-up and 500 ms interval.
in_flight() {
  local stored
  stored=$(sql "select count(*) from windows") || return 1
  [ "$stored" -ge 1 ] && [ "$(sql "select count(*) from window_claims")" -eq 1 ] &&
    [ "$(grep -c 'started target' "$work/server.log")" -gt "$stored" ]
}
wait_for 30 in_flight || fail "no window in flight"
sleep 0.3
claim=$(sql "select target || '|' || scenario || '|' || load_level || '|' || round || '|' || position || '|' || attempt from window_claims")
stored=$(sql "select count(*) from windows")
running=$(targets | wc -l)
{ kill -9 "$coordinator"; wait "$coordinator" || true; } 2>/dev/null
[ "$stored" -lt 5 ] || fail "the campaign ended before the coordinator was killed"
[ "$running" -eq 1 ] || fail "the window's target should have been running when it was cut off"
cut_round=$(echo "$claim" | cut -d'|' -f4)
[ "$(echo "$claim" | cut -d'|' -f6)" = 1 ] || fail "the claim should be a first attempt: $claim"
check "coordinator killed in window round $cut_round after $stored window(s) stored"

"$bin/benchlab" coordinator --listen "127.0.0.1:$port" --db "$work/lab.db" \
  --port-file "$work/port2" 2> "$work/coordinator2.log" &
coordinator=$!
pids+=($coordinator)
wait_for 10 test -s "$work/port2" || fail "the coordinator did not start again on port $port"
grep -q "1 window(s) were cut off by a coordinator restart" "$work/coordinator2.log" ||
  fail "the restart should report the window cut off"
wait_for 20 grep -q "agent crash-server registered" "$work/coordinator2.log" ||
  fail "the server agent did not register with the new coordinator"
wait_for 20 grep -q "agent crash-load registered" "$work/coordinator2.log" ||
  fail "the load agent did not register with the new coordinator"
check "the agents register again with the coordinator on the same port"

wait_for 60 sh -c "[ \"\$(sqlite3 '$work/lab.db' \"select state from campaigns where name = 'crash'\")\" = done ]" ||
  fail "the campaign did not finish"
check "the campaign reaches done"

# The cut window: attempt 1 failed with coordinator_restart, attempt 2 measured.
where="target || '|' || scenario || '|' || load_level || '|' || round || '|' || position = '$(echo "$claim" | cut -d'|' -f1-5)'"
history=$(sql "select attempt || ' ' || verdict from windows where $where order by attempt" | tr '\n' ',')
[[ "$history" =~ ^1\ failed,2\ (valid|invalid),$ ]] ||
  fail "the cut window should have attempt 1 failed and attempt 2 measured, got '$history'"
reason=$(sql "select json_extract(reasons, '\$[0]') from windows where $where and attempt = 1")
[[ "$reason" == coordinator_restart* ]] || fail "attempt 1's reason should be coordinator_restart, got '$reason'"
[ "$(sql "select json_array_length(reasons) from windows where $where and attempt = 1")" -eq 1 ] ||
  fail "attempt 1 should have one reason"
check "the cut window: attempt 1 failed ($reason), attempt 2 measured"

# No other window measured twice; every planned window stored; nothing pending.
[ "$(sql "select count(*) from windows where not ($where)")" -eq 4 ] ||
  fail "every other window should be stored once"
[ "$(sql "select count(*) from (select distinct round from windows where not ($where) and attempt = 1 and verdict in ('valid', 'invalid'))")" -eq 4 ] ||
  fail "every other window should be one measured first attempt"
[ "$(sql "select count(*) from window_claims") $(sql "select count(*) from rerun_requests")" = "0 0" ] ||
  fail "a claim or a re-run request is left over"
check "no other window was measured twice, and no claim is left"

# Only one target runs at a time (docs/campaign.md): the cut window's target must not outlive it.
sleep 0.3
running=$(targets | tr '\n' ' ')
[ -z "$running" ] ||
  fail "the server agent still runs target(s) $running after the campaign is done (the cut window's, started before the crash)"
check "no target runs once the campaign is done"

for pid in "$coordinator" "$server" "$load"; do kill -TERM "$pid"; done
for pid in "$coordinator" "$server" "$load"; do wait "$pid" || fail "a daemon exited non-zero after SIGTERM"; done
pids=()
sleep 0.2
left=$(left_behind)
[ -z "$left" ] || fail "processes left behind: $left"
check "no process left running"
echo "$passed checks passed"

#!/usr/bin/env bash
# A coordinator killed with SIGKILL mid-window and started again on the same database and port:
# the agents register again, the window cut off becomes a failed attempt (coordinator_restart)
# and is measured again, no other window is measured twice, the campaign finishes, and nothing
# is left running.
# Usage: coordinator_crash_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
on_fail() {
  [ -e "$work/lab.db" ] && sqlite3 "$work/lab.db" "select id, round, attempt, verdict, reasons from windows"
}
sql() { sqlite3 "$work/lab.db" "$1"; }
# The targets the server agent runs now (its children; it reaps, so no zombie is counted).
targets() { pgrep -P "$server" -f "$work/hello-server" || true; }

# The first coordinator picks a free port; its successor listens on the same one, which the
# agents keep calling.
local_coordinator_start
local_agent_config crash-server server "$port" "spool_dir = \"$work/spool\"" > "$work/server.toml"
local_agent_config crash-load load "$port" > "$work/load.toml"
agent_start server
agent_start load

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
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
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

# Kill the coordinator inside a window's load: a window stored, the next one claimed and its
# target started (the server agent logs it with its port), and the load agent holding its 4
# connections to that port (warm-up or measured interval).
in_flight() {
  local stored tport
  stored=$(sql "select count(*) from windows") || return 1
  [ "$stored" -ge 1 ] && [ "$(sql "select count(*) from window_claims")" -eq 1 ] &&
    [ "$(grep -c 'started target' "$work/server.log")" -gt "$stored" ] || return 1
  tport=$(sed -n 's/.*started target hello as [0-9a-f]* (pid [0-9]*, port \([0-9]*\),.*/\1/p' \
    "$work/server.log" | tail -1)
  [ "$(ss -Htnp state established "( dport = :$tport )" | grep -c "pid=$load,")" -ge 4 ]
}
wait_until 30 "a window in flight (stored one, claimed the next, its load running)" in_flight
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
track $coordinator
wait_until 10 "the coordinator to start again on port $port" test -s "$work/port2"
wait_until 5 "the restarted coordinator to report the window cut off" \
  grep -q "1 window(s) were cut off by a coordinator restart" "$work/coordinator2.log"
# The new coordinator's registry starts empty: an agent it lists has registered again.
listed() { "$bin/benchlab" agents --coordinator "127.0.0.1:$port" | grep -q "^$1 "; }
wait_until 20 "the server agent to register with the new coordinator" listed crash-server
wait_until 20 "the load agent to register with the new coordinator" listed crash-load
check "the agents register again with the coordinator on the same port"

campaign_done() {
  [ "$(sql "select state from campaigns where name = 'crash'")" = "done" ]
}
wait_until 60 "the campaign to be done" campaign_done
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
no_target() { [ -z "$(targets)" ]; }
poll 5 no_target ||
  fail "the server agent still runs target(s) $(targets | tr '\n' ' ')5 s after the campaign is done (the cut window's, started before the crash)"
check "no target runs once the campaign is done"

for pid in "$coordinator" "$server" "$load"; do kill -TERM "$pid"; done
for pid in "$coordinator" "$server" "$load"; do wait "$pid" || fail "a daemon exited non-zero after SIGTERM"; done
tracked=()
expect_none_left "the daemons"
check "no process left running"
echo "$passed checks passed"

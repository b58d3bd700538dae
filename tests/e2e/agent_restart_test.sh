#!/usr/bin/env bash
# An agent killed with SIGKILL mid-window and restarted: the window in flight fails with the step
# named, the restarted agent stops the orphans its predecessor left (found by their cookie), it
# offers its spool to the coordinator, which keeps it, and the campaign still finishes.
# Usage: agent_restart_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
orphan=
# The orphan, by its id, in case the restarted agent did not stop it.
on_exit() { [ -z "$orphan" ] || kill -9 "$orphan" 2>/dev/null || true; }

local_coordinator_start
# A unique sleep length marks this test's orphan.
nap=$((310 + RANDOM % 10))
cat > "$work/server.toml" <<TOML
name = "restart-server"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/server-state"
run_root = "$work/runs"
spool_dir = "$work/spool"
[[target]]
name = "forker"
command = ["/bin/sh", "-c", "sleep $nap & exec $bin/hello-server --port {port}"]
TOML
local_agent_config restart-load load "$port" > "$work/load.toml"
agent_start server
agent_start load

cat > "$work/campaign.toml" <<TOML
name = "restart"
baseline = "forker"
[matrix]
connections = [2]
rounds = 2
warmup = "100ms"
duration = "2s"
[gates]
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
# Two agents on one machine see each other as foreign CPU, and the machine may be shared: the
# test is about the restart, not the verdicts.
foreign_cpu = false
selftest_drift = false
generator_bound = false
steal = false
[[target]]
name = "forker"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" submit "$work/campaign.toml" --coordinator "127.0.0.1:$port" > /dev/null ||
  fail "submit"

# Kill the server agent while its target (and the target's child) run.
# The agent reports the target started once it answers; the window then goes on to the load
# and the marks, which the server agent is no longer there to answer.
wait_until 15 "the target's child" pgrep -f "^sleep $nap\$"
wait_until 15 "the server agent to report the target started" \
  grep -q "started target forker" "$work/server.log"
kill -9 "$server"
wait "$server" 2>/dev/null || true
poll 5 pgrep -f "^sleep $nap\$" || fail "expected the target's child to outlive the agent"
orphan=$(pgrep -f "^sleep $nap\$" | head -1)
tr '\0' '\n' < "/proc/$orphan/environ" | grep -q '^BENCHLAB_AGENT=restart-server:' ||
  fail "the orphan carries no cookie"
check "a SIGKILLed agent leaves an orphan that carries its cookie"

# A result written to the spool before the crash, never acknowledged: a MarkReply (the
# coordinator keeps only payloads that parse as their key's message) with cpu_user_s = 1.0, in a
# record of the format spools wrote before records named their window.
printf '\x09\x00\x00\x00\x00\x00\x00\xf0\x3f' > "$work/spool/1-forker-hello-c2-r9-a1.server.rec"

"$bin/benchlab" agent --config "$work/server.toml" 2> "$work/server2.log" &
track $!
wait_until 10 "the orphan to be stopped" sh -c "! pgrep -f '^sleep $nap\$'"
wait_until 5 "the restarted agent to log the cleanup" \
  grep -q "left running by an earlier agent" "$work/server2.log"
check "the restarted agent stops its predecessor's orphans"

wait_until 10 "the spooled result to be acknowledged (its file removed)" \
  test ! -e "$work/spool/1-forker-hello-c2-r9-a1.server.rec"
kept=$(sqlite3 "$work/lab.db" "select count(*) from agent_results where agent = 'restart-server' and key = '1-forker-hello-c2-r9-a1.server' and payload = X'09000000000000F03F'")
[ "$kept" -eq 1 ] || fail "the coordinator did not keep the spooled result"
check "the spool is offered again and kept by the coordinator"

campaign_done() {
  [ "$(sqlite3 "$work/lab.db" "select state from campaigns where name = 'restart'")" = "done" ]
}
wait_until 60 "the campaign to be done" campaign_done
failed=$(sqlite3 "$work/lab.db" "select count(*) from windows where verdict = 'failed' and (reasons like '%mark %' or reasons like '%stop_target%' or reasons like '%start_target%' or reasons like '%check_host%')")
[ "$failed" -ge 1 ] || fail "the window in flight should have failed with its step named"
valid=$(sqlite3 "$work/lab.db" "select count(*) from windows where verdict = 'valid'")
[ "$valid" -ge 1 ] || fail "the campaign should go on with the restarted agent"
check "the window in flight failed, the campaign went on and finished"

# The window in flight was round 1's (the agent was killed while its target ran): attempt 1
# failed, its first reason agent_lost with the step named; attempt 2 measured it on the same
# agent, which only the restarted one could do. Round 2 was measured once. The kill follows the
# agent's "started target" line, which it logs just before its StartTarget reply, so it may land
# before the reply left: then the step is start_target.
lost=$(sqlite3 "$work/lab.db" "select json_extract(reasons, '\$[0]') from windows where round = 1 and attempt = 1 and verdict = 'failed'")
[[ "$lost" =~ ^agent_lost:\ (start_target|mark_begin|mark_end|stop_target|run_load):\ agent\ restart-server: ]] ||
  fail "round 1's attempt 1 should fail with agent_lost and the step, got '$lost'"
again=$(sqlite3 "$work/lab.db" "select attempt || ' ' || verdict || ' ' || server_agent from windows where round = 1 and attempt > 1 order by attempt" | tr '\n' ',')
[[ "$again" =~ ^2\ (valid|invalid)\ restart-server,$ ]] ||
  fail "round 1 should be measured again as attempt 2 once the agent is back, got '$again'"
once=$(sqlite3 "$work/lab.db" "select group_concat(attempt || ' ' || verdict) from windows where round = 2")
[[ "$once" =~ ^1\ (valid|invalid)$ ]] || fail "round 2 should be measured once, got '$once'"
check "the window in flight: '$lost', then measured again (attempt 2) with the agent back"
echo "$passed checks passed"

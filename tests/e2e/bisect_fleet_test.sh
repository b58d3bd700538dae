#!/usr/bin/env bash
# End to end across three "hosts" (deploy/netns-lab.sh; docs/methodology.md, "On a
# coordinator"): a coordinator bisects a target of its server agent's catalogue on the pair a
# campaign file places it on. The agent's catalogue entry builds commits of a git repository of
# eight commits whose "build" copies a start script running the bundled hello-server; the sixth
# commit makes every request spend 40 us more CPU, and the fourth does not build. The range comes
# from the server agent (ListCommits); each look is a campaign the coordinator queues. A viewer
# cannot start a bisection (PERMISSION_DENIED, nothing stored, the refusal audited) and a
# revision that names nothing is refused naming it. The coordinator is killed with SIGKILL
# after the search's first decided step and started again: the search goes on by itself from its
# store, never measures a decided commit again, and names the sixth commit; `--status
# --coordinator` prints it for a viewer too. Everything started is stopped and the namespaces are
# removed. Skips (exit 77) where the machine cannot create network namespaces.
# Usage: bisect_fleet_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lab=$src/deploy/netns-lab.sh
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (CAP_SYS_ADMIN)"
command -v ip > /dev/null || skip "no ip command (iproute2)"

prefix=bl-bis-$$
coord_ns=$prefix-coord server_ns=$prefix-server load_ns=$prefix-load
coord=10.77.0.1:7700
server_addr=10.77.0.2 load_addr=10.77.0.3
server_agent=bis-server-$$
load_agent=bis-load-$$
on_exit() { lab_stop "$lab" "$prefix"; }
sql() { sqlite3 "$work/lab.db" "$1"; }
# The CLI speaks to the coordinator from its own namespace: the lab's network is not the host's.
cli() { ip netns exec "$coord_ns" "$bin/benchlab" "$@"; }
on_fail() {
  [ -e "$work/lab.db" ] && sql "select id, state, result from bisections; select bisection_id, step, oid, decision from bisect_steps; select id, name, state, error from campaigns"
  tail -20 "$work/coordinator.log" 2> /dev/null || true
}

# --- the repository ------------------------------------------------------------------------
repo="$work/app"
bisect_repo "$repo" 0.0.0.0

# --- the fleet -----------------------------------------------------------------------------
lab_start "$lab" "$prefix"
ca=$work/ca
lab_certificates "$bin" "$ca" 10.77.0.1 "$server_agent" "$server_addr" "$load_agent" "$load_addr"
"$bin/benchlab" ca issue --dir "$ca" --name watcher --role viewer > /dev/null
lab_coordinator_start "$coord_ns" "$coord" "$ca"
lab_agent_config "$server_agent" server "$server_addr" "$coord" "$ca" > "$work/server.toml"
cat >> "$work/server.toml" <<TOML
[[target]]
name = "app"
command = ["sh", "{out}/start.sh", "{port}"]
source = "$repo"
build = [["cp", "{src}/start.sh", "{out}/start.sh"]]
TOML
lab_agent_config "$load_agent" load "$load_addr" "$coord" "$ca" > "$work/load.toml"
agent_start server "$server_ns"
agent_start load "$load_ns"
listed() { cli agents --coordinator "$coord" 2> /dev/null | grep -q "^$1 "; }
wait_until 30 "the server agent to register" listed "$server_agent"
wait_until 30 "the load agent to register" listed "$load_agent"
check "the fleet is up: coordinator, server and load agents in their own namespaces"

cat > "$work/bisect.toml" <<TOML
name = "bisect-fleet"
baseline = "app"
[matrix]
connections = [4]
rounds = 3
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
[placement]
server = "$server_agent"
load = "$load_agent"
# The plumbing is under test, not this machine's neighbours: three hosts share its CPUs.
[gates]
mode = "warn"
foreign_cpu = false
[[target]]
name = "app"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

# --- refusals ------------------------------------------------------------------------------
viewer_cli() {
  BENCHLAB_TLS_CERT=$ca/watcher.pem BENCHLAB_TLS_KEY=$ca/watcher.key \
    ip netns exec "$coord_ns" "$bin/benchlab" "$@"
}
set +e
viewer_cli bisect "$work/bisect.toml" --target app --good "${oids[0]}" --bad main \
  --coordinator "$coord" > "$work/viewer.out" 2> "$work/viewer.err"
status=$?
set -e
[ "$status" -ne 0 ] || fail "a viewer started a bisection"
grep -q "may not call StartBisection" "$work/viewer.err" || { cat "$work/viewer.err"; fail "the viewer's refusal"; }
[ "$(sql "select count(*) from bisections")" -eq 0 ] || fail "a refused bisection was stored"
[ "$(sql "select count(*) from audit where call = 'StartBisection' and outcome = 'refused'")" -ge 1 ] ||
  fail "the refusal is not audited"
check "a viewer cannot start a bisection; nothing is stored and the refusal is audited"

set +e
cli bisect "$work/bisect.toml" --target app --good nosuchrev --bad main \
  --coordinator "$coord" > "$work/badrev.out" 2> "$work/badrev.err"
status=$?
set -e
[ "$status" -ne 0 ] || fail "a revision that names nothing was accepted"
grep -q "good" "$work/badrev.err" && grep -q "nosuchrev" "$work/badrev.err" ||
  { cat "$work/badrev.err"; fail "the bad revision was not named"; }
[ "$(sql "select count(*) from bisections")" -eq 0 ] || fail "a refused bisection was stored"
check "a revision that names no commit is refused, naming it"

# --- the search, cut by a coordinator killed with SIGKILL ----------------------------------
cli bisect "$work/bisect.toml" --target app --good "${oids[0]}" --bad main \
  --coordinator "$coord" > "$work/start.out" 2> "$work/start.err" ||
  { cat "$work/start.out" "$work/start.err"; fail "the operator's bisection did not start"; }
grep -q "bisection 1: app on hello/c4 by cpu_us_per_request, 8 commits from ${oids[0]:0:12} (good) to ${oids[7]:0:12} (bad), on $server_agent/$load_agent" "$work/start.out" ||
  { cat "$work/start.out"; fail "the start's summary"; }
[ "$(sql "select json_array_length(range_json) || ' ' || pair from bisections where id = 1")" = "8 $server_agent/$load_agent" ] ||
  fail "the listed range and the pair are not stored"
check "an operator starts it: the server agent listed 8 commits, stored with the pair"

first_step() { [ "$(sql "select count(*) from bisect_steps where bisection_id = 1")" -ge 1 ]; }
wait_until 240 "the search's first decided step" first_step
{ kill -9 "$coordinator"; wait "$coordinator" || true; } 2> /dev/null
steps_before=$(sql "select count(*) from bisect_steps where bisection_id = 1")
check "coordinator killed with SIGKILL after $steps_before decided step(s)"

rm -f "$work/port"
lab_coordinator_start "$coord_ns" "$coord" "$ca"
wait_until 30 "the server agent to register again" listed "$server_agent"
wait_until 30 "the load agent to register again" listed "$load_agent"
viewer_cli bisect --status 1 --coordinator "$coord" --wait --format json \
  > "$work/status.json" 2> "$work/status.err" ||
  { cat "$work/status.err"; fail "--status --wait as a viewer"; }
python3 - "$work/status.json" "$culprit" "${oids[3]}" <<'PY' || fail "the search's outcome"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["state"] == "found", b
assert b["culprit"] == sys.argv[2], (b["culprit"], sys.argv[2])
oids = [s["oid"] for s in b["steps"]]
assert len(oids) == len(set(oids)), oids
decisions = {s["oid"]: s["decision"] for s in b["steps"]}
assert decisions.get(sys.argv[3], "build failed") == "build failed", decisions
PY
[ "$(sql "select count(*) from bisect_steps where bisection_id = 1")" -gt "$steps_before" ] ||
  fail "no step was decided after the restart"
check "after the restart the search went on by itself and named the sixth commit, no commit decided twice"

viewer_cli bisect --status 1 --coordinator "$coord" > "$work/status.txt"
grep -q "$culprit" "$work/status.txt" || { cat "$work/status.txt"; fail "--status text"; }
[ "$(sql "select count(*) from audit where identity like '%coordinator%' and call = 'SubmitCampaign' and subject like '%bisection 1%'")" -ge 3 ] ||
  fail "the coordinator's looks are not audited"
check "--status prints it; every look is audited as the coordinator's submission"

for pid in "$coordinator" "$server" "$load"; do kill -TERM "$pid"; done
for pid in "$coordinator" "$server" "$load"; do wait "$pid" || fail "a daemon exited non-zero after SIGTERM"; done
tracked=()
check "the daemons stop"
echo "bisect_fleet_test: $passed checks passed"

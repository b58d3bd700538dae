#!/usr/bin/env bash
# End to end, with real processes: `benchlab run` on a tiny campaign (nginx and hello-server)
# fills the database and leaves no process behind; a bad campaign file gets a one-line
# file:line error and exit status 2; the daemons (coordinator, two agents, submit --wait,
# windows) do the same campaign by hand.
# Usage: run_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)

cp "$src/examples/nginx.conf.in" "$work/"
cat > "$work/tiny.toml" <<TOML
name = "tiny"
baseline = "nginx"
[matrix]
connections = [4]
rounds = 2
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
# The plumbing is under test, not this machine: on a shared machine the measurement gates would
# judge the neighbours, and standalone agents on one machine see each other's load as foreign.
[gates]
mode = "warn"
[[target]]
name = "nginx"
command = ["nginx", "-e", "stderr", "-p", "{run_dir}", "-c", "{run_dir}/nginx.conf", "-g", "daemon off;"]
templates = ["{campaign_dir}/nginx.conf.in"]
cpus = "0"
[[target]]
name = "hello-server"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
[[negative]]
name = "missing"
path = "/nope"
expect = { status = 404 }
TOML

# --- benchlab run --------------------------------------------------------------------------
"$bin/benchlab" run "$work/tiny.toml" --db "$work/run.db" > "$work/run.out" 2> "$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "benchlab run exited $?"; }
grep -q "4 windows: 4 valid" "$work/run.out" || { cat "$work/run.out"; fail "summary line"; }
[ "$(grep -c '^\[' "$work/run.out")" -eq 4 ] || fail "one line per window"
check "benchlab run measured 4 windows"

valid=$(sqlite3 "$work/run.db" "select count(*) from windows where campaign='tiny' and verdict='valid' and requests > 0 and rps > 0 and p99_us >= p50_us and server_cpu_s > 0 and rss_peak_kb > 0")
[ "$valid" -eq 4 ] || fail "expected 4 valid windows with figures, got $valid"
rounds=$(sqlite3 "$work/run.db" "select group_concat(target, ',') from (select target from windows where round = 2 order by position)")
[ "$rounds" = "hello-server,nginx" ] || fail "round 2 should start with hello-server (rotation), got $rounds"
samples=$(sqlite3 "$work/run.db" "select count(*) from samples where source='server'")
[ "$samples" -gt 0 ] || fail "no server samples stored"
mode=$(sqlite3 "$work/run.db" "pragma journal_mode")
[ "$mode" = "wal" ] || fail "journal mode $mode"
check "the database holds every window with its figures"

expect_none_left "benchlab run"
check "no process left running"

"$bin/benchlab" windows --db "$work/run.db" > "$work/windows.out"
[ "$(grep -c ' valid ' "$work/windows.out")" -eq 4 ] || fail "benchlab windows --db"
check "benchlab windows --db lists them"

# --- bad input ------------------------------------------------------------------------------
set +e
"$bin/benchlab" run "$work/tiny.toml" --db "$work/run.db" > /dev/null 2> "$work/dup.err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "a campaign name already in the database should exit 2, got $status"
grep -q 'campaign "tiny" already exists' "$work/dup.err" || fail "duplicate name message"

sed 's/^connections = \[4\]/connections = ["ten"]/' "$work/tiny.toml" > "$work/bad.toml"
set +e
"$bin/benchlab" run "$work/bad.toml" --db "$work/bad.db" > /dev/null 2> "$work/bad.err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "a bad campaign should exit 2, got $status"
[ "$(wc -l < "$work/bad.err")" -eq 1 ] || { cat "$work/bad.err"; fail "the error should be one line"; }
grep -q "^$work/bad.toml:4: matrix.connections\[0\]: expected" "$work/bad.err" ||
  { cat "$work/bad.err"; fail "the error should name file:line and key"; }
[ ! -e "$work/bad.db" ] || fail "a bad campaign must not create a database"
check "a bad campaign gets a one-line file:line error and exit 2"

# A lab that cannot start still says where its logs are: the server agent's registration is
# refused (its target's version line is over the coordinator's 256 bytes), so the agents never
# all register and the run gives up.
cat > "$work/no-lab.toml" <<TOML
name = "no-lab"
baseline = "hello-server"
[matrix]
connections = [4]
rounds = 1
warmup = "100ms"
duration = "300ms"
[[target]]
name = "hello-server"
command = ["$bin/hello-server", "--port", "{port}"]
version = ["/bin/sh", "-c", "printf 'v%0300d\\\\n' 0"]
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
set +e
"$bin/benchlab" run "$work/no-lab.toml" --db "$work/no-lab.db" > /dev/null 2> "$work/no-lab.err"
status=$?
set -e
kept=$(sed -n 's/^benchlab run: logs kept in \(.*\)$/\1/p' "$work/no-lab.err")
logs=0
[[ "$kept" == /tmp/benchlab-run-* && -s "$kept/coordinator.log" ]] && logs=1
[ -z "$kept" ] || rm -rf "$kept"
[ "$status" -eq 1 ] || { cat "$work/no-lab.err"; fail "a lab that cannot start should exit 1, got $status"; }
[ "$logs" -eq 1 ] ||
  { cat "$work/no-lab.err"; fail "a run that failed to start its lab should say where its logs are"; }
check "a lab that cannot start exits 1 and says where its logs are"

for cmd in run coordinator agent submit windows load; do
  "$bin/benchlab" "$cmd" --help > /dev/null || fail "benchlab $cmd --help"
done
check "every subcommand has --help"

# --- the same parts as daemons ----------------------------------------------------------------
"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/daemons.db" \
  --port-file "$work/coordinator.port" 2> "$work/coordinator.log" &
coordinator=$!
track $coordinator
wait_until 10 "the coordinator's port file" test -s "$work/coordinator.port"
port=$(cat "$work/coordinator.port")
cat > "$work/agent-server.toml" <<TOML
name = "server-1"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/server-state"
run_root = "$work/server-runs"
[[target]]
name = "nginx"
command = ["nginx", "-e", "stderr", "-p", "{run_dir}", "-c", "{run_dir}/nginx.conf", "-g", "daemon off;"]
templates = ["{campaign_dir}/nginx.conf.in"]
[[target]]
name = "hello-server"
command = ["$bin/hello-server", "--port", "{port}"]
TOML
cat > "$work/agent-load.toml" <<TOML
name = "load-1"
roles = ["load"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/load-state"
TOML
"$bin/benchlab" agent --config "$work/agent-server.toml" 2> "$work/agent-server.log" &
server=$!
"$bin/benchlab" agent --config "$work/agent-load.toml" 2> "$work/agent-load.log" &
load=$!
track $server $load
# The submitted campaign's commands are ignored: the agent runs its own catalogue.
sed -e 's/^name = "tiny"/name = "tiny-daemons"/' "$work/tiny.toml" > "$work/tiny-daemons.toml"
"$bin/benchlab" submit "$work/tiny-daemons.toml" --coordinator "127.0.0.1:$port" --wait \
  > "$work/submit.out" || { cat "$work/submit.out" "$work/coordinator.log"; fail "submit --wait"; }
grep -q "4 windows: 4 valid" "$work/submit.out" || fail "submit --wait summary"
"$bin/benchlab" windows --coordinator "127.0.0.1:$port" --campaign tiny-daemons > "$work/w.out"
[ "$(grep -c ' valid ' "$work/w.out")" -eq 4 ] || fail "benchlab windows --coordinator"
servers=$(sqlite3 "$work/daemons.db" "select distinct server_agent || '/' || load_agent from windows")
[ "$servers" = "server-1/load-1" ] || fail "windows should name their agents, got $servers"
check "coordinator, agents and submit --wait as daemons"

daemons=("$coordinator" "$server" "$load")
for pid in "${daemons[@]}"; do kill -TERM "$pid"; done
for pid in "${daemons[@]}"; do wait "$pid" || fail "a daemon exited non-zero after SIGTERM"; done
tracked=()
expect_none_left "the daemons"
check "daemons stop cleanly on SIGTERM"

echo "$passed checks passed"

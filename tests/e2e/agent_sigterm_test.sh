#!/usr/bin/env bash
# SIGTERM stops `benchlab agent` within its grace period whatever it is running: a load agent in
# the middle of a 30 s RunLoad (benchlab's own generator, then wrk when it is installed) and the
# server agent holding that window's target each exit 0 within 5 s, and leave no process behind
# (no load tool, no target).
# Usage: agent_sigterm_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
# The load tools too: a load agent's children.
kinds="$kinds|wrk|h2load"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Established connections to port $1 held by process $2.
connections() { ss -Htnp state established "( dport = :$1 )" 2>/dev/null | grep -c "pid=$2," || true; }

# SIGTERM to both agents at once, mid-window; fails unless each exits 0 within 5 s and its
# children (the load tool, the target) are gone.
stop_agents() {  # stop_agents PID WHAT PID WHAT
  local pids=("$1" "$3") whats=("$2" "$4") children=() took=(0 0) start left i status
  for i in 0 1; do children[i]=$(pgrep -P "${pids[i]}" | tr '\n' ' ' || true); done
  start=$(now_ms)
  kill -TERM "$1" "$3"
  left=2
  while [ "$left" -gt 0 ]; do
    for i in 0 1; do
      if [ "${took[i]}" -eq 0 ] && ! kill -0 "${pids[i]}" 2>/dev/null; then
        took[i]=$(($(now_ms) - start + 1))
        left=$((left - 1))
      fi
    done
    [ $(($(now_ms) - start)) -lt 5000 ] ||
      fail "still running 5 s after SIGTERM: $(left_behind "$coordinator")"
    sleep 0.02
  done
  for i in 0 1; do
    status=0
    wait "${pids[i]}" || status=$?
    [ "$status" -eq 0 ] || fail "${whats[i]} exited with status $status after SIGTERM"
    for child in ${children[i]}; do
      ! kill -0 "$child" 2>/dev/null || fail "${whats[i]} left its child $child running"
    done
    check "${whats[i]} exited 0 within ${took[i]} ms of SIGTERM; children (${children[i]% }) gone"
  done
}

ln -s "$bin/hello-server" "$work/hello-server"

run_round() {  # run_round TOOL
  local tool=$1 dir="$work/$1" port tport tool_pid
  mkdir "$dir"
  "$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$dir/lab.db" \
    --port-file "$dir/port" 2> "$work/$tool-coordinator.log" &
  coordinator=$!
  track $coordinator
  wait_until 10 "the coordinator's port file ($tool)" test -s "$dir/port"
  port=$(cat "$dir/port")
  cat > "$dir/server.toml" <<TOML
name = "sigterm-server-$tool"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$dir/server-state"
[[target]]
name = "hello"
command = ["$work/hello-server", "--port", "{port}"]
TOML
  cat > "$dir/load.toml" <<TOML
name = "sigterm-load-$tool"
roles = ["load"]
coordinator = "127.0.0.1:$port"
state_dir = "$dir/load-state"
TOML
  "$bin/benchlab" agent --config "$dir/server.toml" 2> "$work/$tool-server.log" &
  server=$!
  "$bin/benchlab" agent --config "$dir/load.toml" 2> "$work/$tool-load.log" &
  load=$!
  track $server $load
  cat > "$dir/campaign.toml" <<TOML
name = "sigterm-$tool"
baseline = "hello"
[matrix]
connections = [2]
rounds = 1
warmup = "0s"
duration = "30s"
[load]
tool = "$tool"
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
  "$bin/benchlab" submit "$dir/campaign.toml" --coordinator "127.0.0.1:$port" > /dev/null ||
    fail "submit"

  # In the middle of the window's RunLoad: the target runs and the load holds its connections.
  wait_until 30 "the server agent to report the window's target started ($tool)" \
    grep -q "started target hello" "$work/$tool-server.log"
  tport=$(sed -n 's/.*started target hello as [0-9a-f]* (pid [0-9]*, port \([0-9]*\),.*/\1/p' \
    "$work/$tool-server.log" | head -1)
  if [ "$tool" = wrk ]; then
    wait_until 10 "wrk to start" pgrep -P "$load" -x wrk
    tool_pid=$(pgrep -P "$load" -x wrk)
  else
    tool_pid=$load
  fi
  load_connected() { [ "$(connections "$tport" "$tool_pid")" -ge 2 ]; }
  wait_until 10 "the load's 2 connections to the target on port $tport ($tool)" load_connected
  check "$tool: a 30 s RunLoad is under way ($(connections "$tport" "$tool_pid") connections to port $tport)"

  stop_agents "$load" "load agent running $tool" "$server" "server agent running the target"
  [ "$(connections "$tport" "$tool_pid")" -eq 0 ] || fail "the load's connections outlived it"
  expect_none_left "the agents ($tool)" "$coordinator"
  kill -TERM "$coordinator"
  wait "$coordinator" || true
  tracked=()
}

run_round benchlab
if command -v wrk > /dev/null; then run_round wrk; else echo "skipped: wrk is not installed"; fi
echo "$passed checks passed"

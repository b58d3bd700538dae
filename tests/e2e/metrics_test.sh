#!/usr/bin/env bash
# /metrics on a coordinator (--http) and on two agents (metrics_listen), all on loopback, over a
# three-window campaign: scraped while a window's load runs and after the campaign, the windows
# counter moves by the number of windows stored, the agents show their work, every body passes
# `promtool check metrics`, and every metric the Grafana dashboard (deploy/grafana/benchlab.json)
# queries is in a scrape. Skipped (77) without promtool (Debian's prometheus package).
# Usage: metrics_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
if ! command -v promtool > /dev/null; then
  echo "skipped: promtool is not installed (Debian package prometheus)"
  exit 77
fi
sql() { sqlite3 "$work/lab.db" "$1"; }
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics"; }  # scrape PORT
# value BODY NAME{LABELS}: the sample's value, "" when absent.
value() { awk -v m="$2" '$1 == m { print $2 }' <<< "$1"; }
# windows_total BODY: the sum over verdicts.
windows_total() { awk '$1 ~ /^benchlab_windows_total\{/ { s += $2 } END { print s + 0 }' <<< "$1"; }
promcheck() {  # promcheck WHAT BODY
  promtool check metrics <<< "$2" > "$work/promtool.out" 2>&1 ||
    fail "promtool check metrics on $1: $(cat "$work/promtool.out")"
  check "promtool check metrics passes on $1"
}

local_coordinator_start http
local_agent_config metrics-server server "$port" 'metrics_listen = "127.0.0.1:0"' \
  > "$work/server.toml"
local_agent_config metrics-load load "$port" "spool_dir = \"$work/load-spool\"" \
  'metrics_listen = "127.0.0.1:0"' > "$work/load.toml"
agent_start server
agent_start load
# Each agent logs where it serves its metrics.
metrics_port() { sed -n 's|.*metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$1" | head -1; }
wait_until 10 "the server agent's metrics address" grep -q "metrics on http" "$work/server.log"
wait_until 10 "the load agent's metrics address" grep -q "metrics on http" "$work/load.log"
server_metrics=$(metrics_port "$work/server.log")
load_metrics=$(metrics_port "$work/load.log")
registered() { [ "$(value "$(scrape "$1")" benchlab_agent_registered)" = 1 ]; }
wait_until 20 "the server agent to register" registered "$server_metrics"
wait_until 20 "the load agent to register" registered "$load_metrics"
before=$(scrape "$http") || fail "scraping the coordinator"
[ "$(windows_total "$before")" = 0 ] || fail "windows counted before any window ran"
[ "$(value "$before" 'benchlab_agents{state="ready"}')" = 2 ] ||
  fail "two ready agents expected: $(grep '^benchlab_agents' <<< "$before")"
check "before the campaign: no window counted, both agents ready and registered"
# The standard process_* metrics of every exporter, on the coordinator and each agent: this
# process's own (a start time in the last day, a CPU time, a resident size, open and maximum fds).
for who in "coordinator $http" "server agent $server_metrics" "load agent $load_metrics"; do
  body=$(scrape "${who##* }")
  for metric in process_resident_memory_bytes process_virtual_memory_bytes process_open_fds \
    process_max_fds; do
    awk -v v="$(value "$body" "$metric")" 'BEGIN { exit !(v > 0) }' ||
      fail "${who% *}: $metric is '$(value "$body" "$metric")', expected above 0"
  done
  # Counted in whole clock ticks (10 ms): an agent just started may not have used one yet. It
  # must be there; that it moves is checked once the load agent has made load.
  awk -v v="$(value "$body" process_cpu_seconds_total)" 'BEGIN { exit !(v != "" && v >= 0) }' ||
    fail "${who% *}: process_cpu_seconds_total is '$(value "$body" process_cpu_seconds_total)'"
  started=$(value "$body" process_start_time_seconds)
  awk -v s="$started" -v now="$(date +%s)" 'BEGIN { exit !(s > now - 86400 && s <= now + 1) }' ||
    fail "${who% *}: process_start_time_seconds is '$started', not within the last day"
done
check "process_* metrics on the coordinator and both agents"

cat > "$work/campaign.toml" <<TOML
name = "metrics"
baseline = "hello"
[matrix]
connections = [2]
rounds = 3
warmup = "100ms"
duration = "1s"
[load]
cpus = "1"
[gates]
# Both agents share one machine and see each other as foreign CPU: in warn mode with a 0%
# threshold every window keeps its verdict and has foreign_cpu reasons for the counter.
mode = "warn"
foreign_cpu_max_pct = 0
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

# During a window: the load agent produces load, the server agent runs the target, the
# coordinator shows the campaign running.
loading() {
  local body
  body=$(scrape "$load_metrics") && [ "$(value "$body" benchlab_agent_load_running)" = 1 ]
}
wait_until 30 "a window's load to run" loading
during_load=$(scrape "$load_metrics")
during_server=$(scrape "$server_metrics")
during=$(scrape "$http")
[ "$(value "$during_server" benchlab_agent_targets_running)" = 1 ] ||
  fail "the server agent should run one target during a window"
[ "$(value "$during" 'benchlab_campaigns{state="running"}')" = 1 ] ||
  fail "the campaign should be running: $(grep '^benchlab_campaigns' <<< "$during")"
check "during a window: load running, one target running, the campaign running"
promcheck "the coordinator's body during the campaign" "$during"
promcheck "the load agent's body during a window" "$during_load"

campaign_done() { [ "$(sql "select state from campaigns where name = 'metrics'")" = done ]; }
wait_until 60 "the campaign to be done" campaign_done
load_cpu=$(value "$(scrape "$load_metrics")" process_cpu_seconds_total)
awk -v v="$load_cpu" 'BEGIN { exit !(v > 0) }' ||
  fail "load agent: process_cpu_seconds_total is '$load_cpu' after 3 s of load, expected above 0"
check "the load agent's process_cpu_seconds_total moved to $load_cpu with its load"
stored=$(sql "select count(*) from windows")
# The window is counted just after it is stored: poll for the last one.
counted() { [ "$(windows_total "$(scrape "$http")")" = "$stored" ]; }
poll 5 counted || fail "benchlab_windows_total should sum to the $stored windows stored: $(
  grep '^benchlab_windows_total' <<< "$(scrape "$http")")"
after=$(scrape "$http")
[ "$(windows_total "$during")" -lt "$stored" ] ||
  fail "the counter should have moved after the scrape during the campaign"
check "benchlab_windows_total moved from $(windows_total "$during") to $stored, the windows stored"
for verdict in valid invalid failed skipped; do
  want=$(sql "select count(*) from windows where verdict = '$verdict'")
  [ "$(value "$after" "benchlab_windows_total{verdict=\"$verdict\"}")" = "$want" ] ||
    fail "benchlab_windows_total{verdict=\"$verdict\"} should be $want"
done
check "benchlab_windows_total by verdict matches the store"
reasons=$(sql "select sum((length(reasons) - length(replace(reasons, 'foreign_cpu:', ''))) / 12) from windows")
[ "${reasons:-0}" -ge 1 ] || fail "the windows should have foreign_cpu reasons (warn mode, 0%)"
[ "$(value "$after" 'benchlab_window_reasons_total{kind="gate",reason="foreign_cpu"}')" = "$reasons" ] ||
  fail "benchlab_window_reasons_total{kind=\"gate\",reason=\"foreign_cpu\"} should be $reasons"
check "benchlab_window_reasons_total counts the $reasons foreign_cpu reasons stored"
[ "$(value "$after" 'benchlab_campaigns{state="done"}')" = 1 ] || fail "the campaign should be done"
[ "$(value "$after" 'benchlab_window_duration_seconds_count{verdict="valid"}')" = \
  "$(value "$after" 'benchlab_windows_total{verdict="valid"}')" ] ||
  fail "each valid window's duration should be observed"
db_bytes=$(value "$after" 'benchlab_store_bytes{file="db"}')
[ "${db_bytes%.*}" -gt 0 ] 2> /dev/null || fail "benchlab_store_bytes{file=\"db\"} should be > 0"
runload=$(value "$after" 'grpc_server_handled_total{grpc_code="OK",grpc_method="RegisterAgent",grpc_service="benchlab.v1.Coordinator",grpc_type="unary"}')
[ "${runload:-0}" -ge 2 ] || fail "both agents' RegisterAgent calls should be counted"
check "campaigns by state, window durations, store size and the coordinator's RPCs"

after_load=$(scrape "$load_metrics")
after_server=$(scrape "$server_metrics")
[ "$(value "$after_load" benchlab_agent_load_running)" = 0 ] || fail "load still running"
[ "$(value "$after_server" benchlab_agent_targets_running)" = 0 ] || fail "a target still runs"
runs=$(value "$after_load" 'grpc_server_handled_total{grpc_code="OK",grpc_method="RunLoad",grpc_service="benchlab.v1.Agent",grpc_type="server_stream"}')
[ "${runs:-0}" = "$stored" ] || fail "the load agent should count $stored RunLoad calls, not ${runs:-0}"
for name in benchlab_agent_last_interval_foreign_cpu_cores \
  benchlab_agent_last_interval_steal_cpu_cores benchlab_agent_last_interval_end_timestamp_seconds \
  benchlab_agent_spool_bytes; do
  [ -n "$(value "$after_load" "$name")" ] || fail "the load agent should show $name"
done
[ -n "$(value "$after_server" benchlab_agent_selftest_seconds)" ] ||
  fail "the server agent should show its last self-test"
check "the agents: nothing running after, $stored RunLoad calls, last host readings, self-test"
promcheck "the coordinator's body after the campaign" "$after"
promcheck "the server agent's body after the campaign" "$after_server"
promcheck "the load agent's body after the campaign" "$after_load"

# Every metric the Grafana dashboard queries is one a scrape shows.
dashboard="$src/deploy/grafana/benchlab.json"
python3 -m json.tool "$dashboard" > /dev/null || fail "$dashboard is not valid JSON"
all="$after$after_server$after_load"
names=$(python3 - "$dashboard" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
exprs = []
def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str): exprs.append(node["expr"])
        if isinstance(node.get("query"), str): exprs.append(node["query"])
        for v in node.values(): walk(v)
    elif isinstance(node, list):
        for v in node: walk(v)
walk(doc)
names = set()
for e in exprs:
    names.update(re.findall(r"\b((?:benchlab|grpc_server|process)_[a-z_]+)\b", e))
print("\n".join(sorted(names)))
PY
)
[ -n "$names" ] || fail "no metric names found in $dashboard"
# Temperatures are absent, by design, on a machine without thermal zones (most VMs).
thermal=$(compgen -G '/sys/class/thermal/thermal_zone*/temp' || true)
for name in $names; do
  if [ -z "$thermal" ] && [[ "$name" == *_temperature_celsius ]]; then
    echo "note: $name not checked: this machine has no thermal zones"
    continue
  fi
  grep -qE "^$name(\{| )" <<< "$all" || fail "the dashboard queries $name, which no scrape shows"
done
check "the dashboard's $(wc -w <<< "$names") metric names are all in a scrape"

stop_tracked
expect_none_left "after the test"
echo "metrics_test: $passed checks passed"

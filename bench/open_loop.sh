#!/usr/bin/env bash
# The open loop measured against the bundled hello-server (pinned to SERVER_CPU; the generator
# on CLIENT_CPU):
#   1. capacity: a closed-loop run finds the server's req/s;
#   2. rate accuracy: --rate R for a few rates up to capacity; prints requested vs scheduled and
#      achieved req/s (responses completed inside the interval, per second), dropped slots, errors, generator lag and the generator_bound flag;
#   3. a stall: the server is stopped (SIGSTOP) for STALL_MS once, mid-run, and the corrected
#      and uncorrected percentiles are printed side by side, with a closed-loop run under the
#      same stall for comparison (the closed loop hides it: coordinated omission).
# A benchmark, not a test: it asserts nothing.
#
# Usage: bench/open_loop.sh BIN_DIR [SECONDS=5] [RATES="20000 50000"]
#   Environment: PORT (18090), SERVER_CPU (0), CLIENT_CPU (1), CONNECTIONS (50),
#   MAX_CONNS (400), STALL_MS (200), STALL_RATE (20000), ARRIVAL (constant), SPIN (0s),
#   PARTS ("rates stall": which parts to run).
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [SECONDS] [RATES]"}
seconds=${2:-5}
rates=${3:-"20000 50000"}
port=${PORT:-18090}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
connections=${CONNECTIONS:-50}
max_conns=${MAX_CONNS:-400}
stall_ms=${STALL_MS:-200}
stall_rate=${STALL_RATE:-20000}
arrival=${ARRIVAL:-constant}
spin=${SPIN:-0s}
parts=${PARTS:-"rates stall"}
url="http://127.0.0.1:${port}/"

for tool in taskset python3; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required" >&2; exit 2; }
done
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill -CONT "$server_pid" 2>/dev/null || true
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

taskset -c "$server_cpu" "$bin_dir/hello-server" --port "$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.05
done

load() {  # load NAME ARGS...: runs benchlab load on the client CPU with --json NAME.json
  local name=$1; shift
  taskset -c "$client_cpu" "$bin_dir/benchlab" load -t 1 -d "${seconds}s" --json "$work/$name.json" \
    "$@" "$url" >"$work/$name.out" 2>&1 || { echo "$0: $name failed:" >&2; cat "$work/$name.out" >&2; exit 1; }
}
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo "$(date -u +%FT%TZ) $(uptime)"
if [[ $parts == *rates* ]]; then
load capacity -c "$connections"
capacity=$(field "$work/capacity.json" 'round(j["rps"])')
echo "capacity (closed loop, $connections connections): $capacity req/s"
echo
echo "rate accuracy ($arrival arrivals, ${seconds}s, $connections connections growing to $max_conns)"
printf "%10s %11s %10s %8s %8s %7s %9s %9s %10s %11s %s\n" requested scheduled/s achieved/s "error%" dropped errors "lag p50" "lag p99" "p99" "cpu us/req" generator_bound
near=$(( capacity * 95 / 100 ))
for rate in $rates $near $capacity; do
  load "rate$rate" -c "$connections" --max-conns "$max_conns" --rate "$rate" --arrival "$arrival" \
    --spin "$spin"
  f="$work/rate$rate.json"
  field "$f" '"%10d %11.0f %10.0f %+7.2f%% %8d %7d %7dus %7dus %8dus %11.2f %s" % ('"$rate"', j["scheduled"]/j["duration_s"], j["throughput_rps"], 100*(j["throughput_rps"]-'"$rate"')/'"$rate"', j["dropped"], sum(v for k,v in j["errors"].items() if k!="mismatch"), j["generator_lag_us"]["p50"], j["generator_lag_us"]["p99"], j["latency_us"]["p99"], (j["cpu"]["user_s"]+j["cpu"]["sys_s"])*1e6/max(j["requests"],1), j["generator_bound"])'
done
fi

if [[ $parts == *stall* ]]; then
echo
echo "stall: the server stops for ${stall_ms}ms once, $((seconds / 2))s into a ${seconds}s run at $stall_rate req/s"
stall_later() {
  sleep "$(awk -v s="$seconds" 'BEGIN {print s / 2}')"
  kill -STOP "$server_pid"
  sleep "$(awk -v m="$stall_ms" 'BEGIN {print m / 1000}')"
  kill -CONT "$server_pid"
}
stall_later & stall_pid=$!
load stall -c "$connections" --max-conns "$max_conns" --rate "$stall_rate" --spin "$spin"
wait "$stall_pid"
stall_later & stall_pid=$!
load closed -c "$connections"
wait "$stall_pid"
printf "%-24s %9s %9s %9s %9s %9s %9s\n" "" mean p50 p90 p99 p99.9 max
row() { field "$1" '"%-24s %9.0f %9d %9d %9d %9d %9d" % (("'"$2"'",) + tuple(j["'"$3"'"][k] for k in ("mean","p50","p90","p99","p999","max")))'; }
row "$work/stall.json" "open, corrected (us)" latency_us
row "$work/stall.json" "open, uncorrected (us)" latency_uncorrected_us
row "$work/closed.json" "closed loop (us)" latency_us
field "$work/stall.json" '"open loop: %d requests, %.0f req/s, dropped %d; series p99 per second (us): %s" % (j["requests"], j["rps"], j["dropped"], [p["p99_us"] for p in j["series"]])'
field "$work/closed.json" '"closed loop: %d requests, %.0f req/s; series p99 per second (us): %s" % (j["requests"], j["rps"], [p["p99_us"] for p in j["series"]])'
fi
echo "$(date -u +%FT%TZ) $(uptime)"

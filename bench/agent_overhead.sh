#!/usr/bin/env bash
# Measures the agents' own CPU while they run long windows: `benchlab run` on a campaign of
# one target (the bundled hello-server, pinned to SERVER_CPU) and one cell whose windows last
# SECONDS each, while this script reads each agent process's utime+stime (its own threads only,
# not its children: the target is a child of the server agent) once a second. The server
# agent's figure is what sampling the target and the host at 10 Hz costs, plus its gRPC; the
# issue's target is at most 1% of one core. The load agent's figure includes the load
# generator when it runs in the agent's process. A benchmark, not a test: it asserts nothing.
# Compare with bench/host_watch_bench.cc (`cost`), which times the samplers alone.
#
# Usage: bench/agent_overhead.sh BIN_DIR [SECONDS=10] [ROUNDS=3]
#   BIN_DIR holds benchlab and hello-server (e.g. build/bin). Environment: SERVER_CPU (0),
#   LOAD_CPU (1), CONNECTIONS (32).
set -euo pipefail

bin_dir=$(cd "${1:?"usage: $0 BIN_DIR [SECONDS] [ROUNDS]"}" && pwd)
seconds=${2:-10}
rounds=${3:-3}
server_cpu=${SERVER_CPU:-0}
load_cpu=${LOAD_CPU:-1}
connections=${CONNECTIONS:-32}
for exe in benchlab hello-server; do
  [[ -x "$bin_dir/$exe" ]] || { echo "$0: $bin_dir/$exe not found; build it first" >&2; exit 2; }
done
clk_tck=$(getconf CLK_TCK)

work=$(mktemp -d)
run_pid=
cleanup() {
  if [[ -n "$run_pid" ]]; then kill "$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/campaign.toml" <<EOF
name = "agent-overhead"
baseline = "hello-server"

[matrix]
connections = [$connections]
rounds = $rounds
warmup = "500ms"
duration = "${seconds}s"

[load]
threads = 1
cpus = "$load_cpu"

[[target]]
name = "hello-server"
command = ["$bin_dir/hello-server", "--port", "{port}"]
port = "auto"
ready = "/"
cpus = "$server_cpu"

[[scenario]]
name = "hello"
method = "GET"
path = "/"
expect = { status = 200, body = "hello\n" }
EOF

echo "conditions: $(uptime)"
"$bin_dir/benchlab" run "$work/campaign.toml" --db "$work/bench.db" >"$work/run.log" 2>&1 &
run_pid=$!

# The agents `benchlab run` started: argv "... agent --config PATH ... --parent-pid RUN_PID".
find_agents() {
  local pid
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q " agent --config .*--parent-pid $run_pid\b" &&
      echo "$pid"
  done
}
# utime+stime of the process itself (fields 14 and 15; comm may hold spaces, so cut after ')').
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'; }
label() { { tr '\0' '\n' <"/proc/$1/cmdline"; } 2>/dev/null | awk 'prev == "--config" {print $0} {prev = $0}' | xargs -r basename; }

# The agents start once; find them, then read their CPU each second against the wall clock
# (the loop's own work makes an iteration longer than the sleep).
agents=()
for _ in $(seq 50); do
  mapfile -t agents < <(find_agents)
  [[ ${#agents[@]} -ge 2 ]] && break
  sleep 0.2
done
[[ ${#agents[@]} -ge 1 ]] || { echo "$0: the agents of run $run_pid never appeared" >&2; exit 1; }
declare -A last name
for pid in "${agents[@]}"; do name[$pid]=$(label "$pid"); done
last_ns=$(date +%s%N)
: >"$work/series"
while kill -0 "$run_pid" 2>/dev/null; do
  sleep 1
  now_ns=$(date +%s%N)
  for pid in "${agents[@]}"; do
    ticks=$(cpu_ticks "$pid") || continue
    [[ -n "$ticks" ]] || continue
    if [[ -n "${last[$pid]:-}" ]]; then
      # ticks over the elapsed seconds, as ticks per second
      echo "$pid ${name[$pid]} $(( (ticks - last[$pid]) * 1000000000 / (now_ns - last_ns) )) $((ticks - last[$pid])) $((now_ns - last_ns))" >>"$work/series"
    fi
    last[$pid]=$ticks
  done
  last_ns=$now_ns
done
wait "$run_pid" && status=0 || status=$?
run_pid=
tail -n 5 "$work/run.log"
[[ -z "${SERIES_OUT:-}" ]] || cp "$work/series" "$SERIES_OUT"
[[ $status -eq 0 ]] || echo "$0: benchlab run exited with status $status (figures below may be partial)" >&2

echo "agent CPU, % of one core (CLK_TCK $clk_tck; one line per agent; per-second figures are"
echo "whole ticks, so the mean is total ticks over total time):"
awk -v hz="$clk_tck" '
  { key = $1 " " $2; n[key]++; ticks[key] += $4; ns[key] += $5
    pct = 100 * $4 / hz / ($5 / 1e9); v[key, n[key]] = pct; if (pct > max[key]) max[key] = pct }
  END {
    for (key in n) {
      m = n[key]; for (i = 1; i <= m; i++) s[i] = v[key, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
      med = (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
      printf "  pid %s: %.1f s, mean %.2f%%, median %.2f%%, max %.2f%%\n", key, ns[key] / 1e9,
             100 * ticks[key] / hz / (ns[key] / 1e9), med, max[key]
    }
  }' "$work/series"
echo "(one tick is $((100 / clk_tck))% of one core over a second: read the mean over many seconds)"

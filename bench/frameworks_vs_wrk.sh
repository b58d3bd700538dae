#!/usr/bin/env bash
# benchlab's load generator against wrk on one of the framework apps (examples/frameworks/, by
# default raw node:http answering GET /json), the way a crosscheck campaign measures them but
# without the lab around them: for each connection count, PAIRS pairs; each measurement starts a
# fresh target process pinned to SERVER_CPU, warms it up for WARMUP seconds and measures SECONDS
# with the client pinned to CLIENT_CPU (one thread). benchlab warms up inside its run (`--warmup`,
# the same connections, as the agent runs it); wrk has no warm-up, so it runs twice and measures
# on new connections (as the agent runs it). BL_WARMUP=separate gives benchlab wrk's way too.
# The order of the two tools alternates from pair to pair. Prints each pair's req/s and the ratio
# benchlab / wrk, then the median ratio and whether it is within +-5%.
# A benchmark, not a test: it asserts nothing. Run it when the machine is quiet (see `uptime`).
#
# Usage: bench/frameworks_vs_wrk.sh BIN_DIR [APP=node] [PAIRS=7]
#   BIN_DIR holds benchlab (e.g. build/bin); APP is a directory of examples/frameworks/ whose
#   server.js runs on Node (node, express, fastify, hono). Environment: CONNECTIONS ("16 64"),
#   SECONDS_MEASURED (3), WARMUP (1), PATH_QUERY (/json), PORT (18180), SERVER_CPU (0),
#   CLIENT_CPU (1), BL_WARMUP (same | separate).
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [APP] [PAIRS]"}
app=${2:-node}
pairs=${3:-7}
connections=${CONNECTIONS:-"16 64"}
seconds=${SECONDS_MEASURED:-3}
warmup=${WARMUP:-1}
path_query=${PATH_QUERY:-/json}
port=${PORT:-18180}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
bl_warmup=${BL_WARMUP:-same}
here=$(cd "$(dirname "$0")" && pwd)
server_js="$here/../examples/frameworks/$app/server.js"
url="http://127.0.0.1:${port}${path_query}"

for tool in wrk node taskset awk curl; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required" >&2; exit 2; }
done
[[ -x "$bin_dir/benchlab" ]] || { echo "$0: $bin_dir/benchlab not found; build it first" >&2; exit 2; }
[[ -f "$server_js" ]] || { echo "$0: no $server_js (APP is a directory of examples/frameworks/)" >&2; exit 2; }
[[ -d "$here/../examples/frameworks/node_modules" ]] ||
  { echo "$0: run examples/frameworks/install.sh first" >&2; exit 2; }
[[ "$bl_warmup" == same || "$bl_warmup" == separate ]] ||
  { echo "$0: BL_WARMUP is same or separate, got $bl_warmup" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
stop_server() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=
}
trap 'stop_server; rm -rf "$work"' EXIT

start_server() {
  PORT=$port NODE_ENV=production taskset -c "$server_cpu" node "$server_js" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 200); do
    curl -fs -o /dev/null "http://127.0.0.1:${port}/health" && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "$0: $app exited:" >&2; cat "$work/server.log" >&2; exit 1; }
    sleep 0.025
  done
  echo "$0: $app did not answer /health" >&2
  exit 1
}

# One measurement on a fresh target; sets rps. Both tools print "Requests/sec: X".
measure() {  # measure TOOL CONNECTIONS
  local tool=$1 c=$2
  start_server
  if [[ $tool == wrk ]]; then
    taskset -c "$client_cpu" wrk -t 1 -c "$c" -d "${warmup}s" --timeout 2s "$url" >/dev/null
    taskset -c "$client_cpu" wrk -t 1 -c "$c" -d "${seconds}s" --timeout 2s --latency "$url" >"$work/out"
  elif [[ $bl_warmup == separate ]]; then
    taskset -c "$client_cpu" "$bin_dir/benchlab" load -t 1 -c "$c" -d "${warmup}s" "$url" >/dev/null
    taskset -c "$client_cpu" "$bin_dir/benchlab" load -t 1 -c "$c" -d "${seconds}s" "$url" >"$work/out"
  else
    taskset -c "$client_cpu" "$bin_dir/benchlab" load -t 1 -c "$c" --warmup "${warmup}s" \
      -d "${seconds}s" "$url" >"$work/out"
  fi
  stop_server
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/out")
  [[ -n "$rps" ]] || { echo "$0: $tool printed no Requests/sec:" >&2; cat "$work/out" >&2; exit 1; }
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "$(date -u +%FT%TZ) $(uptime)"
echo "target: $app $path_query on CPU $server_cpu, fresh per measurement; clients on CPU $client_cpu," \
  "1 thread, ${warmup}s warm-up (benchlab: $bl_warmup connections), ${seconds}s measured, $pairs pairs"
for c in $connections; do
  echo
  echo "$c connections"
  printf "%-5s %12s %12s %8s\n" pair "wrk req/s" "bl req/s" ratio
  : >"$work/ratios"
  for pair in $(seq "$pairs"); do
    order="wrk benchlab"
    if (( pair % 2 == 0 )); then order="benchlab wrk"; fi
    for tool in $order; do
      measure "$tool" "$c"
      if [[ $tool == wrk ]]; then wrk_rps=$rps; else bl_rps=$rps; fi
    done
    ratio=$(awk -v a="$bl_rps" -v b="$wrk_rps" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
    printf "%-5s %12.0f %12.0f %8s\n" "$pair" "$wrk_rps" "$bl_rps" "$ratio"
    echo "$ratio" >>"$work/ratios"
  done
  med=$(median <"$work/ratios")
  range=$(sort -g "$work/ratios" | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}')
  verdict=$(awk -v m="$med" 'BEGIN {print (m >= 0.95 && m <= 1.05 ? "within" : "outside")}')
  echo "median ratio benchlab/wrk $med (range $range): $verdict +-5%"
done
echo
echo "$(date -u +%FT%TZ) $(uptime)"

#!/usr/bin/env bash
# Compares `benchlab load` with wrk against the bundled hello-server on one machine. The server
# is pinned to one CPU and each client in turn to another, with the same connections, one
# thread and the same duration; rounds alternate wrk and benchlab so drift hits both alike.
# Prints requests/s per round, the medians, the ratio benchlab/wrk, and client CPU (user+sys,
# from /usr/bin/time) per request. A benchmark, not a test: it asserts nothing.
#
# Usage: bench/loadgen_vs_wrk.sh BIN_DIR [CONNECTIONS=50] [SECONDS=5] [ROUNDS=3]
#   BIN_DIR holds hello-server and benchlab (e.g. build/bin). Environment: PORT (18080),
#   SERVER_CPU (0), CLIENT_CPU (1).
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [CONNECTIONS] [SECONDS] [ROUNDS]"}
connections=${2:-50}
seconds=${3:-5}
rounds=${4:-3}
port=${PORT:-18080}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
url="http://127.0.0.1:${port}/"

for tool in wrk taskset /usr/bin/time awk; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required" >&2; exit 2; }
done
for exe in hello-server benchlab; do
  [[ -x "$bin_dir/$exe" ]] || { echo "$0: $bin_dir/$exe not found; build it first" >&2; exit 2; }
done

work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

taskset -c "$server_cpu" "$bin_dir/hello-server" --port "$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { echo "$0: hello-server exited:" >&2; cat "$work/server.log" >&2; exit 1; }
  sleep 0.05
done

# Runs one client pinned to the client CPU and sets rps, requests and cpu (user+sys seconds).
# Both tools print "N requests in ..." and "Requests/sec: X", so one parser reads both.
run_client() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c "$client_cpu" "$@" >"$work/$name.out" 2>&1 || {
    echo "$0: $name failed:" >&2; cat "$work/$name.out" >&2; exit 1; }
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$name.out")
  requests=$(awk '/ requests in / {print $1}' "$work/$name.out")
  cpu=$(awk 'END {print $1 + $2}' "$work/time")
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "server: hello-server on CPU $server_cpu; clients on CPU $client_cpu; ${connections} connections, 1 thread, ${seconds}s x ${rounds} rounds each"
printf "%-6s %-9s %12s %12s %14s\n" round client "req/s" requests "cpu us/req"
: >"$work/wrk.rps"; : >"$work/benchlab.rps"; : >"$work/wrk.cpu"; : >"$work/benchlab.cpu"
for round in $(seq "$rounds"); do
  for client in wrk benchlab; do
    if [[ $client == wrk ]]; then
      run_client wrk wrk -t1 -c"$connections" -d"${seconds}s" "$url"
    else
      run_client benchlab "$bin_dir/benchlab" load -t 1 -c "$connections" -d "${seconds}s" "$url"
    fi
    cpu_per_req=$(awk -v c="$cpu" -v n="$requests" 'BEGIN {printf "%.3f", (n > 0 ? c * 1e6 / n : 0)}')
    printf "%-6s %-9s %12s %12s %14s\n" "$round" "$client" "$rps" "$requests" "$cpu_per_req"
    echo "$rps" >>"$work/$client.rps"
    echo "$cpu_per_req" >>"$work/$client.cpu"
  done
done

wrk_rps=$(median <"$work/wrk.rps")
bl_rps=$(median <"$work/benchlab.rps")
echo
echo "median req/s:       wrk $wrk_rps, benchlab $bl_rps"
echo "ratio benchlab/wrk: $(awk -v a="$bl_rps" -v b="$wrk_rps" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')"
echo "median client CPU:  wrk $(median <"$work/wrk.cpu") us/req, benchlab $(median <"$work/benchlab.cpu") us/req"

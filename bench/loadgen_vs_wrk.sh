#!/usr/bin/env bash
# Compares `benchlab load` with wrk against the bundled hello-server (a minimal fixed epoll
# server that answers pipelined requests). The server is pinned to one CPU and each client in
# turn to another, with the same connections, one thread and the same duration. For each depth
# (1, then 16: wrk pipelines through bench/pipeline16.lua) it runs PAIRS pairs, alternating which
# tool goes first so drift hits both alike, and prints each tool's client CPU per response
# (user+sys of the whole process from /usr/bin/time, divided by the responses it counted), req/s,
# the ratio benchlab/wrk per pair and the median ratio against the issue's targets.
# A benchmark, not a test: it asserts nothing. Run it when the machine is quiet (see `uptime`).
#
# Usage: bench/loadgen_vs_wrk.sh BIN_DIR [CONNECTIONS=50] [SECONDS=5] [PAIRS=5]
#   BIN_DIR holds hello-server and benchlab (e.g. build/bin). Environment: PORT (18080),
#   SERVER_CPU (0), CLIENT_CPU (1), DEPTHS ("1 16"), EXTRA (more `benchlab load` options).
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [CONNECTIONS] [SECONDS] [PAIRS]"}
connections=${2:-50}
seconds=${3:-5}
pairs=${4:-5}
port=${PORT:-18080}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
depths=${DEPTHS:-"1 16"}
extra=${EXTRA:-}
url="http://127.0.0.1:${port}/"
here=$(cd "$(dirname "$0")" && pwd)

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
  cpu_per_req=$(awk -v c="$cpu" -v n="$requests" 'BEGIN {printf "%.3f", (n > 0 ? c * 1e6 / n : 0)}')
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "$(date -u +%FT%TZ) $(uptime)"
echo "server: hello-server on CPU $server_cpu; clients on CPU $client_cpu; ${connections} connections, 1 thread, ${seconds}s, ${pairs} pairs per depth"
for depth in $depths; do
  if [[ $depth == 1 ]]; then target=0.85; wrk_extra=(); else target=0.70; wrk_extra=(-s "$here/pipeline16.lua"); fi
  echo
  echo "depth $depth (wrk ${wrk_extra[*]:-without a script})"
  printf "%-5s %14s %14s %12s %12s %8s\n" pair "wrk us/req" "benchlab us/req" "wrk req/s" "bl req/s" ratio
  : >"$work/ratios"; : >"$work/wrk.cpu"; : >"$work/bl.cpu"; : >"$work/wrk.rps"; : >"$work/bl.rps"
  for pair in $(seq "$pairs"); do
    order="wrk benchlab"
    if (( pair % 2 == 0 )); then order="benchlab wrk"; fi
    for client in $order; do
      if [[ $client == wrk ]]; then
        DEPTH=$depth run_client wrk wrk -t1 -c"$connections" -d"${seconds}s" "${wrk_extra[@]}" "$url"
        wrk_cpu=$cpu_per_req; wrk_rps=$rps
      else
        # shellcheck disable=SC2086
        run_client benchlab "$bin_dir/benchlab" load -t 1 -c "$connections" -d "${seconds}s" \
          --depth "$depth" $extra "$url"
        bl_cpu=$cpu_per_req; bl_rps=$rps
      fi
    done
    ratio=$(awk -v a="$bl_cpu" -v b="$wrk_cpu" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
    printf "%-5s %14s %14s %12s %12s %8s\n" "$pair" "$wrk_cpu" "$bl_cpu" "$wrk_rps" "$bl_rps" "$ratio"
    echo "$ratio" >>"$work/ratios"; echo "$wrk_cpu" >>"$work/wrk.cpu"; echo "$bl_cpu" >>"$work/bl.cpu"
    echo "$wrk_rps" >>"$work/wrk.rps"; echo "$bl_rps" >>"$work/bl.rps"
  done
  med=$(median <"$work/ratios")
  verdict=$(awk -v m="$med" -v t="$target" 'BEGIN {print (m <= t ? "meets" : "misses")}')
  echo "median: wrk $(median <"$work/wrk.cpu") us/req, benchlab $(median <"$work/bl.cpu") us/req;" \
    "req/s wrk $(median <"$work/wrk.rps"), benchlab $(median <"$work/bl.rps");" \
    "ratio $med ($verdict the target <= $target)"
done
echo
echo "$(date -u +%FT%TZ) $(uptime)"

#!/usr/bin/env bash
# Compares `benchlab load`, with each of its I/O engines, with wrk against the bundled
# hello-server (a minimal fixed epoll server that answers pipelined requests). The server is
# pinned to one CPU and each client in turn to another, with the same connections, one thread
# and the same duration. For each depth (1, then 16: wrk pipelines through bench/pipeline16.lua)
# it runs PAIRS rounds of the three clients (wrk, benchlab --engine epoll, benchlab --engine
# io_uring), rotating which goes first so drift hits all alike, and prints each one's client CPU
# per response (user+sys of the whole process from /usr/bin/time, divided by the responses it
# counted), req/s, req/s per load-generator core (responses per CPU second), the ratios
# benchlab/wrk per round and their medians against the targets (docs/load.md, "Engines").
# A benchmark, not a test: it asserts nothing. Run it when the machine is quiet (see `uptime`).
#
# Usage: bench/loadgen_vs_wrk.sh BIN_DIR [CONNECTIONS=50] [SECONDS=5] [PAIRS=5]
#   ENGINES ("epoll io_uring") picks the benchlab engines to run; BASELINE, another build's
#   benchlab binary, adds it as a fourth client ("baseline", its default engine), so a change is
#   measured against the build before it in the same run.
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
engines=${ENGINES:-"epoll io_uring"}
baseline=${BASELINE:-}
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

# run_client, median, ratio.
. "$(dirname "$0")/client_lib.sh"

# Targets, benchlab/wrk CPU per response: io_uring at most 0.50 (depth 1) and 0.35 (depth 16);
# epoll no worse than the releases before the io_uring engine (0.79 and 0.63).
target() {
  case "$1/$2" in
    io_uring/1) echo 0.50 ;; io_uring/*) echo 0.35 ;; baseline/*) echo - ;; */1) echo 0.79 ;;
    *) echo 0.63 ;;
  esac
}

echo "$(date -u +%FT%TZ) $(uptime)"
echo "server: hello-server on CPU $server_cpu; clients on CPU $client_cpu; ${connections} connections, 1 thread, ${seconds}s, ${pairs} rounds per depth"
clients=(wrk)
for e in $engines; do clients+=("$e"); done
if [[ -n "$baseline" ]]; then clients+=(baseline); fi
for depth in $depths; do
  if [[ $depth == 1 ]]; then wrk_extra=(); else wrk_extra=(-s "$here/pipeline16.lua"); fi
  echo
  echo "depth $depth (wrk ${wrk_extra[*]:-without a script}); us/req, req/s, req/s per client core; ratio = benchlab/wrk us/req"
  for c in "${clients[@]}"; do : >"$work/$c.cpu"; : >"$work/$c.rps"; : >"$work/$c.core"; : >"$work/$c.ratio"; done
  for pair in $(seq "$pairs"); do
    n=${#clients[@]}
    line="round $pair:"
    for k in $(seq 0 $((n - 1))); do
      c=${clients[$(( (k + pair) % n ))]}
      if [[ $c == wrk ]]; then
        run_client wrk wrk -t1 -c"$connections" -d"${seconds}s" "${wrk_extra[@]}" "$url"
      elif [[ $c == baseline ]]; then
        # shellcheck disable=SC2086
        run_client baseline "$baseline" load -t 1 -c "$connections" -d "${seconds}s" \
          --depth "$depth" $extra "$url"
      else
        # shellcheck disable=SC2086
        run_client "$c" "$bin_dir/benchlab" load -t 1 -c "$connections" -d "${seconds}s" \
          --depth "$depth" --engine "$c" $extra "$url"
      fi
      echo "$cpu_per_req" >>"$work/$c.cpu"; echo "$rps" >>"$work/$c.rps"
      awk -v u="$cpu_per_req" 'BEGIN {printf "%.0f\n", (u > 0 ? 1e6 / u : 0)}' >>"$work/$c.core"
      eval "cpu_$c=\$cpu_per_req"
    done
    for c in "${clients[@]}"; do
      eval "u=\$cpu_$c"
      line+=" $c $u"
      if [[ $c != wrk ]]; then r=$(ratio "$u" "$cpu_wrk"); echo "$r" >>"$work/$c.ratio"; line+=" ($r)"; fi
      line+=";"
    done
    echo "$line"
  done
  printf "%-9s %10s %12s %16s %8s %8s\n" client "us/req" "req/s" "req/s per core" ratio target
  for c in "${clients[@]}"; do
    if [[ $c == wrk ]]; then r="1"; t="-"; else r=$(median <"$work/$c.ratio"); t=$(target "$c" "$depth"); fi
    verdict=""
    if [[ $t != - ]]; then verdict=$(awk -v m="$r" -v t="$t" 'BEGIN {print (m <= t ? "meets" : "misses")}'); fi
    printf "%-9s %10s %12s %16s %8s %8s %s\n" "$c" "$(median <"$work/$c.cpu")" "$(median <"$work/$c.rps")" \
      "$(median <"$work/$c.core")" "$r" "$t" "$verdict"
  done
done
echo
echo "$(date -u +%FT%TZ) $(uptime)"

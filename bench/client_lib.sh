# shellcheck shell=bash
# What the load-generator comparisons (loadgen_vs_wrk.sh, loadgen_tls.sh) share; each sources it
# after setting $work (a scratch directory) and $client_cpu.
#
# run_client NAME COMMAND...: runs one client pinned to $client_cpu and sets rps, requests, cpu
# (user+sys seconds of the whole process, from /usr/bin/time) and cpu_per_req (µs). Both
# benchlab and wrk print "N requests in ..." and "Requests/sec: X", so one parser reads both.
run_client() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c "$client_cpu" "$@" >"$work/$name.out" 2>&1 || {
    echo "$0: $name failed:" >&2; cat "$work/$name.out" >&2; exit 1; }
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$name.out")
  requests=$(awk '/ requests in / {print $1}' "$work/$name.out")
  cpu=$(awk 'END {print $1 + $2}' "$work/time")
  cpu_per_req=$(awk -v c="$cpu" -v n="$requests" 'BEGIN {printf "%.3f", (n > 0 ? c * 1e6 / n : 0)}')
}

# median: of the numbers on stdin, one per line; 1000 and above printed whole.
median() { sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print (m >= 1000 ? sprintf("%.0f", m) : m)}'; }

# ratio A B: A / B to three places (0 when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}'; }

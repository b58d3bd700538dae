#!/usr/bin/env bash
# Does sampling disturb the target, and what does it cost the agent? The same campaign (the
# bundled hello-server pinned to CPU 0, load on CPU 1) runs on a server agent sampling at 10 Hz
# and on one sampling at 1 Hz, alternately, PAIRS times each. Prints the median req/s of each
# and their ratio, and the server agent's own CPU (user+sys from /proc, whole process) per
# second of campaign, at each rate. A benchmark, not a test: it asserts nothing.
# Usage: bench/sampling_ab.sh BIN_DIR [PAIRS=3]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [PAIRS]}" && pwd)
pairs=${2:-3}
work=$(mktemp -d /tmp/benchlab-ab-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
hz=$(getconf CLK_TCK)

"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/ab.db" --port-file "$work/port" \
  2> "$work/coordinator.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")
cat > "$work/load.toml" <<TOML
name = "ab-load"
roles = ["load"]
coordinator = "127.0.0.1:$port"
run_root = "$work/load"
TOML
"$bin/benchlab" agent --config "$work/load.toml" 2> "$work/load.log" &
pids+=($!)
for period in 100ms 1s; do
  cat > "$work/server-$period.toml" <<TOML
name = "ab-server"
roles = ["server"]
coordinator = "127.0.0.1:$port"
run_root = "$work/server-$period"
sample_period = "$period"
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
TOML
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run_one() {  # run_one PERIOD NAME -> prints "rps agent_cpu_pct"
  local period=$1 name=$2
  "$bin/benchlab" agent --config "$work/server-$period.toml" 2>> "$work/server.log" &
  local agent=$!
  sleep 1
  sed "1s/^name = .*/name = \"$name\"/" "$work/campaign.toml" > "$work/$name.toml"
  local t0 c0
  t0=$(date +%s.%N); c0=$(cpu_ticks "$agent")
  "$bin/benchlab" submit "$work/$name.toml" --coordinator "127.0.0.1:$port" --wait > "$work/$name.out"
  local c1 t1
  c1=$(cpu_ticks "$agent"); t1=$(date +%s.%N)
  kill "$agent"; wait "$agent" 2>/dev/null || true
  local rps
  rps=$(sqlite3 "$work/ab.db" "select avg(rps) from windows where campaign = '$name' and verdict = 'valid'")
  awk -v r="$rps" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$hz" \
    'BEGIN {printf "%.0f %.2f\n", r, 100 * (c1 - c0) / hz / (t1 - t0)}'
}

cat > "$work/campaign.toml" <<TOML
name = "x"
baseline = "hello"
[matrix]
connections = [16]
rounds = 3
warmup = "500ms"
duration = "2s"
[load]
cpus = "1"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

echo "pair  10Hz req/s  1Hz req/s   agent CPU % of a core (10Hz, 1Hz)"
: > "$work/fast"; : > "$work/slow"
for i in $(seq "$pairs"); do
  # ABBA: each rate goes first in every other pair, so drift over the run hits both alike.
  if (( i % 2 )); then
    read -r fast_rps fast_cpu < <(run_one 100ms "fast-$i")
    read -r slow_rps slow_cpu < <(run_one 1s "slow-$i")
  else
    read -r slow_rps slow_cpu < <(run_one 1s "slow-$i")
    read -r fast_rps fast_cpu < <(run_one 100ms "fast-$i")
  fi
  echo "$fast_rps $fast_cpu" >> "$work/fast"; echo "$slow_rps $slow_cpu" >> "$work/slow"
  printf "%-5s %11s %10s   %6s %6s\n" "$i" "$fast_rps" "$slow_rps" "$fast_cpu" "$slow_cpu"
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
f=$(cut -d' ' -f1 "$work/fast" | median); s=$(cut -d' ' -f1 "$work/slow" | median)
fc=$(cut -d' ' -f2 "$work/fast" | median); sc=$(cut -d' ' -f2 "$work/slow" | median)
echo "median req/s: 10Hz $f, 1Hz $s, ratio $(awk -v a="$f" -v b="$s" 'BEGIN {printf "%.3f", a / b}')"
echo "median server agent CPU: 10Hz ${fc}% of a core, 1Hz ${sc}% (whole agent process, whole campaign)"

#!/usr/bin/env bash
# How soon a re-run starts: a coordinator and two agents on this machine run a one-window-per-
# round campaign; then, ROUNDS times, `benchlab rerun ID --coordinator ... --no-wait` is timed
# from just before the command to the moment the coordinator claims the window
# (window_claims.started_at, written before the self-test and the target's start), and to the
# new attempt's measured interval (windows.started_at, after the target's start-up, conformance
# and warm-up). The issue's target: a re-run starts within 1 s of the command, plus the target's
# start-up. A benchmark, not a test: it asserts nothing and prints figures with the conditions.
#
# Usage: bench/rerun_latency.sh BIN_DIR [ROUNDS=5]
set -euo pipefail
bin=$(cd "${1:?"usage: $0 BIN_DIR [ROUNDS]"}" && pwd)
rounds=${2:-5}
command -v sqlite3 >/dev/null || { echo "$0: needs the sqlite3 command" >&2; exit 2; }
work=$(mktemp -d /tmp/benchlab-rerun-bench-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/lab.db" --port-file "$work/port" \
  2>"$work/coordinator.log" &
pids+=($!)
for _ in $(seq 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
address="127.0.0.1:$(cat "$work/port")"
for role in server load; do
  cat >"$work/$role.toml" <<TOML
name = "$role"
roles = ["$role"]
coordinator = "$address"
run_root = "$work/$role"
TOML
  [[ $role == server ]] && cat >>"$work/$role.toml" <<TOML
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
TOML
  "$bin/benchlab" agent --config "$work/$role.toml" 2>"$work/$role.log" &
  pids+=($!)
done
cat >"$work/c.toml" <<TOML
name = "rerun-bench"
baseline = "hello"
[matrix]
connections = [4]
rounds = 1
warmup = "100ms"
duration = "300ms"
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" submit "$work/c.toml" --coordinator "$address" --wait >"$work/submit.log"
id=$(sqlite3 "$work/lab.db" "SELECT id FROM windows ORDER BY id LIMIT 1")
echo "conditions: $(nproc) CPUs, $(uptime | sed 's/.*load average/load average/')"
echo "re-running window $id $rounds times (warmup 100 ms, duration 300 ms)"
ms() { date +%s%3N; }
iso_ms() { sqlite3 "$work/lab.db" "SELECT CAST(round((julianday('$1') - 2440587.5) * 86400000) AS INTEGER)"; }
: >"$work/figures"
for attempt in $(seq 2 $((rounds + 1))); do
  t0=$(ms)
  "$bin/benchlab" rerun "$id" --coordinator "$address" --no-wait >/dev/null
  claimed=
  for _ in $(seq 2000); do
    claimed=$(sqlite3 "$work/lab.db" "SELECT started_at FROM window_claims WHERE attempt = $attempt" 2>/dev/null || true)
    [[ -n "$claimed" ]] && break
    stored=$(sqlite3 "$work/lab.db" "SELECT count(*) FROM windows WHERE attempt = $attempt")
    [[ "$stored" -gt 0 ]] && break
    sleep 0.005
  done
  for _ in $(seq 2000); do
    row=$(sqlite3 -separator ' ' "$work/lab.db" "SELECT started_at, startup_ms FROM windows WHERE attempt = $attempt")
    [[ -n "$row" ]] && break
    sleep 0.01
  done
  read -r measured startup <<<"$row"
  [[ -n "$claimed" ]] || claimed=$measured
  c=$(( $(iso_ms "$claimed") - t0 ))
  m=$(( $(iso_ms "$measured") - t0 ))
  printf '  attempt %d: claimed %4d ms after the command, measuring at %4d ms (target start-up %.1f ms)\n' \
    "$attempt" "$c" "$m" "$startup"
  echo "$c $m" >>"$work/figures"
done
sort -n "$work/figures" | awk '{c[NR] = $1; if ($1 > max) max = $1} END {
  printf "claim latency: median %d ms, max %d ms over %d re-runs\n", c[int((NR + 1) / 2)], max, NR }'

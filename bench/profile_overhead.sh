#!/usr/bin/env bash
# What does a CPU profile cost the target? One campaign on the embedded lab runs the bundled
# hello-server (2 µs of SpendCpu per request, CPU 0; load on CPU 1, 16 connections, 2 s windows)
# as two targets, `plain` and `profiled`, of which only `profiled` is profiled ([profile]
# targets, perf at FREQUENCY Hz), in ROUNDS rounds with the order rotated: each round's two
# windows are seconds apart, so the host's slow drifts hit both. Per round, the ratio of the
# profiled window's req/s and CPU µs per request to the plain one's; then the geometric mean of
# the rounds' ratios with its 95% t interval. A benchmark, not a test: it asserts nothing. Run it
# on a quiet machine (docs/profiles.md, "Sampling a window").
# Usage: bench/profile_overhead.sh BIN_DIR [ROUNDS=20] [FREQUENCY=99]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [ROUNDS] [FREQUENCY]}" && pwd)
rounds=${2:-20}
frequency=${3:-99}
work=$(mktemp -d /tmp/benchlab-profile-overhead-XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/lab.db"
name="overhead-$frequency"

target() {  # target NAME
  cat <<TOML
[[target]]
name = "$1"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "2000"]
cpus = "0"
TOML
}
{
  cat <<TOML
name = "$name"
baseline = "plain"
[matrix]
connections = [16]
rounds = $rounds
order = "rotate"
warmup = "500ms"
duration = "2s"
[load]
cpus = "1"
[gates]
mode = "warn"
[profile]
enabled = true
frequency = $frequency
targets = ["profiled"]
TOML
  target plain
  target profiled
  cat <<TOML
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
} > "$work/$name.toml"

"$bin/benchlab" run "$work/$name.toml" --db "$db" --progress off --no-remeasure \
  > "$work/run.out" 2>&1 || { cat "$work/run.out"; exit 1; }

sqlite3 "$db" "select p.round, p.rps, q.rps, p.cpu_us_per_request, q.cpu_us_per_request,
    coalesce((select samples from window_profiles where window_id = q.id), 0)
  from windows p join windows q on q.campaign = p.campaign and q.round = p.round
  where p.campaign = '$name' and p.target = 'plain' and q.target = 'profiled'
    and p.verdict = 'valid' and q.verdict = 'valid' and p.noise = 0 and q.noise = 0
    and p.id = (select max(id) from windows where campaign = p.campaign and target = 'plain'
                and round = p.round and noise = 0)
    and q.id = (select max(id) from windows where campaign = q.campaign and target = 'profiled'
                and round = q.round and noise = 0)
  order by p.round" | tr '|' ' ' > "$work/rounds"

python3 - "$work/rounds" "$frequency" <<'PY'
import math, sys
from statistics import mean, stdev
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
       18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}
def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(f"profile_overhead: {len(rows)} paired rounds, perf at {sys.argv[2]} Hz (profiled / plain)")
print("round   plain req/s  profiled req/s  ratio   plain µs/req  profiled µs/req  ratio  samples")
for rnd, rp, rq, cp, cq, s in rows:
    print(f"{rnd:5.0f} {rp:13.0f} {rq:15.0f} {rq / rp:6.4f} {cp:14.3f} {cq:16.3f} {cq / cp:6.4f} {s:8.0f}")
def gm(ratios):
    logs = [math.log(r) for r in ratios]
    m = mean(logs)
    if len(logs) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = t95(len(logs) - 1) * stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)
for what, k in (("req/s", (1, 2)), ("CPU µs per request", (3, 4))):
    g, lo, hi = gm([r[k[1]] / r[k[0]] for r in rows])
    print(f"{what}: profiled / plain {g:.4f} [{lo:.4f}, {hi:.4f}] (95% t interval over rounds)")
PY

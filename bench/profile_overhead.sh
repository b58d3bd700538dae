#!/usr/bin/env bash
# What does a CPU profile cost the target? The same campaign (the bundled hello-server pinned to
# CPU 0, load on CPU 1, 3 rounds of 2 s at 16 connections) runs on the embedded lab without and
# with `--profile` (perf at FREQUENCY Hz), alternately, PAIRS times each. Per pair, the ratio of
# the profiled campaign's median req/s and CPU µs per request to the plain one's; then the
# geometric mean of the pairs' ratios with its 95% t interval. A benchmark, not a test: it
# asserts nothing. Run it on a quiet machine (docs/profiles.md, "Sampling a window").
# Usage: bench/profile_overhead.sh BIN_DIR [PAIRS=5] [FREQUENCY=99]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [PAIRS] [FREQUENCY]}" && pwd)
pairs=${2:-5}
frequency=${3:-99}
work=$(mktemp -d /tmp/benchlab-profile-overhead-XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/lab.db"

campaign() {  # campaign NAME
  cat > "$work/$1.toml" <<TOML
name = "$1"
baseline = "hello"
[matrix]
connections = [16]
rounds = 3
warmup = "500ms"
duration = "2s"
[load]
cpus = "1"
[gates]
mode = "warn"
[profile]
frequency = $frequency
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "2000"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
}

median() {  # median CAMPAIGN COLUMN
  sqlite3 "$db" "select $2 from windows where campaign = '$1' and verdict = 'valid' order by $2" |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

: > "$work/pairs"
for i in $(seq "$pairs"); do
  for mode in plain profiled; do
    name="$mode-$i"
    campaign "$name"
    flag=()
    [ "$mode" = profiled ] && flag=(--profile)
    "$bin/benchlab" run "$work/$name.toml" --db "$db" --progress off --no-remeasure "${flag[@]}" \
      > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; exit 1; }
  done
  echo "$(median "plain-$i" rps) $(median "profiled-$i" rps)" \
    "$(median "plain-$i" cpu_us_per_request) $(median "profiled-$i" cpu_us_per_request)" \
    "$(sqlite3 "$db" "select sum(samples) from window_profiles p join windows w on \
      w.id = p.window_id where w.campaign = 'profiled-$i' and w.verdict = 'valid'")" \
    >> "$work/pairs"
done

python3 - "$work/pairs" "$frequency" <<'PY'
import math, sys
from statistics import mean, stdev
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(f"profile_overhead: {len(rows)} pairs, perf at {sys.argv[2]} Hz (profiled / plain)")
print(" pair   plain req/s  profiled req/s  ratio   plain µs/req  profiled µs/req  ratio  samples")
for i, (rp, rq, cp, cq, s) in enumerate(rows, 1):
    print(f"{i:5d} {rp:13.0f} {rq:15.0f} {rq / rp:6.4f} {cp:14.3f} {cq:16.3f} {cq / cp:6.4f} {s:8.0f}")
def gm(ratios):
    logs = [math.log(r) for r in ratios]
    m = mean(logs)
    if len(logs) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = T95.get(len(logs) - 1, 2.0) * stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)
for what, k in (("req/s", (0, 1)), ("CPU µs per request", (2, 3))):
    g, lo, hi = gm([r[k[1]] / r[k[0]] for r in rows])
    print(f"{what}: profiled / plain {g:.4f} [{lo:.4f}, {hi:.4f}] (95% t interval over pairs)")
PY

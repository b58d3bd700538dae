#!/usr/bin/env bash
# Does the profile diff find a known change, and how exactly? One campaign measures the bundled
# hello-server twice, pinned to CPU 0 with load on CPU 1: "base" spends EXTRA_NS in SpendCpu (a
# named, never inlined function) per request, "plus" EXTRA_NS + DELTA_NS; rotated rounds, perf at
# FREQUENCY Hz. Prints what `benchlab profile --diff base plus` names first, its self and total
# µs per request difference with the 95% interval over the paired rounds, whether that interval
# holds the true DELTA_NS, and the lab's own CPU per request difference beside it. A benchmark,
# not a test: it asserts nothing. Run it on a quiet machine.
# Usage: bench/profile_accuracy.sh BIN_DIR [ROUNDS=8] [DELTA_NS=3000] [FREQUENCY=99]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [ROUNDS] [DELTA_NS] [FREQUENCY]}" && pwd)
rounds=${2:-8}
delta_ns=${3:-3000}
frequency=${4:-99}
extra_ns=${EXTRA_NS:-5000}
work=$(mktemp -d /tmp/benchlab-profile-accuracy-XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/lab.db"

cat > "$work/accuracy.toml" <<TOML
name = "accuracy"
baseline = "base"
[matrix]
connections = [4]
rounds = $rounds
warmup = "500ms"
duration = "3s"
[load]
cpus = "1"
[gates]
mode = "warn"
[profile]
enabled = true
frequency = $frequency
[[target]]
name = "base"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "$extra_ns"]
cpus = "0"
[[target]]
name = "plus"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "$((extra_ns + delta_ns))"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" run "$work/accuracy.toml" --db "$db" --progress off --no-remeasure \
  > "$work/run.out" 2>&1 || { cat "$work/run.out"; exit 1; }
"$bin/benchlab" profile accuracy --db "$db" --diff base plus --format json > "$work/diff.json"
"$bin/benchlab" profile accuracy --db "$db" --diff base plus --top 6

python3 - "$work/diff.json" "$delta_ns" "$frequency" "$rounds" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))[0]
true_us = float(sys.argv[2]) / 1000
first = cell["functions"][0]
print()
print(f"profile_accuracy: +{true_us:.2f} µs in SpendCpu, perf at {sys.argv[3]} Hz, "
      f"{cell['rounds']} paired rounds of {sys.argv[4]}")
print(f"named first: {first['function']}")
print(f"  self  {first['self_delta_us']:+.3f} µs [{first['low']:+.3f}, {first['high']:+.3f}] "
      f"holds the true {true_us:+.2f}: {first['low'] <= true_us <= first['high']}")
print(f"  total {first['total_delta_us']:+.3f} µs; share of the whole difference "
      f"{100 * first['share']:.0f}%")
print(f"whole CPU per request {cell['delta_us']:+.3f} µs [{cell['low']:+.3f}, {cell['high']:+.3f}] "
      f"({cell['base_us_per_request']:.2f} -> {cell['new_us_per_request']:.2f})")
PY

#!/usr/bin/env bash
# A real series on this machine (docs/history.md): N nightly-style campaigns of the bundled
# hello-server, each stored under its own name in one series, where the build measured from
# campaign K on spends EXTRA_NS more ns of CPU per request (hello-server --work-ns: BASE_NS ns of
# CPU per request before, BASE_NS + EXTRA_NS from K on, on top of the server's own cost; with the
# defaults the total CPU per request is about 10 us here, so 500 ns is about 5%: the measured
# size is what `regressions` prints). Each
# campaign is the same file: one target, one cell, ROUNDS rounds; the catalogue's `version`
# command names the build. Then prints `benchlab history --figure cpu` and `benchlab regressions
# --figure cpu --figure rps`. Every run re-measures what the series then suspects, as `benchlab
# run` does by default (docs/history.md, "Confirmation by re-measurement"), at most
# REMEASURE_ROUNDS rounds; the script prints each run's re-measurement lines. A benchmark, not a
# test: it asserts nothing.
# Usage: [N=10] [K=6] [EXTRA_NS=500] [BASE_NS=5000] [ROUNDS=5] [REMEASURE_ROUNDS=30] \
#        [HOST_GATES=on|off] bench/series_regression.sh BIN_DIR [OUT_DB]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [OUT_DB]}" && pwd)
n=${N:-10} k=${K:-6} extra=${EXTRA_NS:-500} base=${BASE_NS:-5000} rounds=${ROUNDS:-5}
remeasure_rounds=${REMEASURE_ROUNDS:-30}
work=$(mktemp -d /tmp/benchlab-series-XXXXXX)
trap 'rm -rf "$work"' EXIT
db=${2:-$work/series.db}
gates=""
[ "${HOST_GATES:-on}" = off ] && gates=$'steal = false\nselftest_drift = false'
for i in $(seq 1 "$n"); do
  ns=$base version="base"
  if [ "$i" -ge "$k" ]; then
    ns=$((base + extra)) version="slower"
  fi
  cat > "$work/nightly.toml" <<TOML
name = "nightly"
baseline = "hello"
[matrix]
connections = [16]
rounds = $rounds
warmup = "500ms"
duration = "2s"
[load]
cpus = "1"
[gates]
$gates
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "$ns"]
version = ["echo", "$version-$ns"]
cpus = "0"
[[scenario]]
name = "json"
path = "/json"
expect = { status = 200 }
TOML
  "$bin/benchlab" run "$work/nightly.toml" --name "nightly-$i" --db "$db" --progress off \
    --remeasure-rounds "$remeasure_rounds" > "$work/run-$i.out" 2>&1 ||
    { tail -5 "$work/run-$i.out"; echo "campaign $i: see above"; }
  echo "campaign $i: --work-ns $ns: $(grep -E 'windows:' "$work/run-$i.out" | head -1)"
  grep -E '^re-measur' "$work/run-$i.out" || true
done
"$bin/benchlab" history nightly --db "$db" --figure cpu
"$bin/benchlab" history nightly --db "$db" --figure rps
"$bin/benchlab" regressions nightly --db "$db" --figure cpu --figure rps

#!/usr/bin/env bash
# `benchlab bisect` on a repository of 64 commits of a target in which one commit makes every
# request cost more CPU: each commit's build is a start script that runs the bundled
# hello-server with its CPU cost per request (--work-ns) set by that commit; for each regression size and position,
# whether the search named that commit, the commits it measured against log2(63) = 6 for an
# exact search, the windows and the wall time, and the windows against measuring all 63
# commits with the same rounds (docs/methodology.md, "Bisection"). Run on a quiet machine:
# everything else running is foreign CPU.
# Usage: bench/bisect.sh [BUILD_DIR] [CASES]   CASES: "SIZE:POSITION ..." (default below)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-$here/../build}/bin" && pwd)
cases=${2:-"0.20:40 0.10:13 0.05:51"}
work=$(mktemp -d /tmp/benchlab-bisect-bench-XXXXXX)
# KEEP=1 keeps the repositories, databases and JSON records for `benchlab bisect --status`.
trap '[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"' EXIT

make_repo() {  # make_repo DIR SIZE POSITION: 64 commits; commit POSITION (0-based) is the step
  local repo=$1 size=$2 position=$3 base=20000
  git init -q -b main "$repo"
  git -C "$repo" config user.email bench@example.invalid
  git -C "$repo" config user.name bench
  for n in $(seq 0 63); do
    local w=$base
    [ "$n" -ge "$position" ] && w=$(awk -v b=$base -v s="$size" 'BEGIN { printf "%d", b * (1 + s) }')
    printf '#!/bin/sh\nexec %s --port "$1" --work-ns %s\n' "$bin/hello-server" "$w" > "$repo/start.sh"
    echo "change $n" > "$repo/NOTES"
    git -C "$repo" add -A
    git -C "$repo" commit -q -m "change $n"
  done
}

printf '%-6s %-8s %-7s %-13s %-8s %-6s %-8s %-8s %-8s %-10s %s\n' size position found state \
  measured steps windows gated wall_s "windows/all" "bad/good"
for c in $cases; do
  size=${c%%:*} position=${c##*:}
  repo="$work/repo-$size-$position"
  make_repo "$repo" "$size" "$position"
  cat > "$work/campaign.toml" <<TOML
name = "bisect-bench"
baseline = "app"
[matrix]
connections = [16]
rounds = 3
warmup = "300ms"
duration = "1s"
[load]
cpus = "1"
# The self-test drift gate refuses most windows of these one-round looks on this VM (see
# bench/README.md, "bisect"); the figures are taken with the gates reporting, not refusing,
# and the refusals they would have made are counted.
[gates]
mode = "warn"
[[target]]
name = "app"
command = ["sh", "{out}/start.sh", "{port}"]
cpus = "0"
source = "$repo"
build = [["cp", "{src}/start.sh", "{out}/start.sh"]]
[[scenario]]
name = "ok"
path = "/"
expect = { status = 200 }
TOML
  start=$(date +%s.%N)
  "$bin/benchlab" bisect "$work/campaign.toml" --target app --good "$(git -C "$repo" rev-list --max-parents=0 main)" --bad main \
    --db "$work/$size-$position.db" --format json > "$work/out-$size-$position.json" \
    2> "$work/err-$size-$position" || { cat "$work/err-$size-$position"; exit 1; }
  cp "$work/out-$size-$position.json" "$work/out.json"
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
  want=$(git -C "$repo" rev-parse "main~$((63 - position))")
  found=$(jq -r --arg w "$want" 'if .culprit == $w then "yes" else "no" end' "$work/out.json")
  measured=$(jq '[.steps[] | select(.decision != "build failed")] | length' "$work/out.json")
  steps=$(jq '.steps | length' "$work/out.json")
  windows=$(sqlite3 "$work/$size-$position.db" "select count(*) from windows")
  # Windows a gate judged bad (in warn mode they count all the same).
  gated=$(sqlite3 "$work/$size-$position.db" "select count(*) from windows where reasons != '[]'")
  rounds=$(jq '[.steps[].rounds] | add' "$work/out.json")
  # Measuring every commit of the range with the rounds this search took per commit on average.
  all=$(awk -v w="$windows" -v m="$measured" 'BEGIN { printf "%.3f", w / (63 * w / m) }')
  size_ratio=$(jq -r '"\(.size|tostring|.[0:6]) [\(.size_low|tostring|.[0:6]), \(.size_high|tostring|.[0:6])]"' "$work/out.json")
  state=$(jq -r .state "$work/out.json")
  printf '%-6s %-8s %-7s %-13s %-8s %-6s %-8s %-8s %-8s %-10s %s\n' "$size" "$position" "$found" \
    "$state" "$measured" "$steps" "$windows" "$gated" "$wall" "$all" "$size_ratio"
done

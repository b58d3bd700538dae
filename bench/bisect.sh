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

. "$here/bisect_lib.sh"

print_header
for c in $cases; do
  size=${c%%:*} position=${c##*:}
  repo="$work/repo-$size-$position"
  make_repo "$repo" "$size" "$position"
  bisect_campaign "command = [\"sh\", \"{out}/start.sh\", \"{port}\"]
source = \"$repo\"
build = [[\"cp\", \"{src}/start.sh\", \"{out}/start.sh\"]]" > "$work/campaign.toml"
  start=$(date +%s.%N)
  "$bin/benchlab" bisect "$work/campaign.toml" --target app --good "$(git -C "$repo" rev-list --max-parents=0 main)" --bad main \
    --db "$work/$size-$position.db" --format json > "$work/out-$size-$position.json" \
    2> "$work/err-$size-$position" || { cat "$work/err-$size-$position"; exit 1; }
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
  print_row "$size" "$position" "$repo" "$work/out-$size-$position.json" "$work/$size-$position.db" "$wall"
done

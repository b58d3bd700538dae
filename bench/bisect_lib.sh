# shellcheck shell=bash
# What bench/bisect.sh (the embedded lab) and bench/bisect_fleet.sh (a coordinator on the netns
# lab) share: the 64-commit repository, the campaign of its looks and the row of figures printed
# for each search. Sourced; $bin is the directory of benchlab and hello-server.

# make_repo DIR SIZE POSITION [HOST]: 64 commits of a start script that runs hello-server (on
# HOST, default its own) with 20,000 ns of work per request, raised by SIZE from commit POSITION
# (0-based) on.
make_repo() {
  local repo=$1 size=$2 position=$3 host=${4:-} base=20000 listen=""
  [ -z "$host" ] || listen="--host $host "
  git init -q -b main "$repo"
  git -C "$repo" config user.email bench@example.invalid
  git -C "$repo" config user.name bench
  for n in $(seq 0 63); do
    local w=$base
    [ "$n" -ge "$position" ] && w=$(awk -v b=$base -v s="$size" 'BEGIN { printf "%d", b * (1 + s) }')
    printf '#!/bin/sh\nexec %s %s--port "$1" --work-ns %s\n' "$bin/hello-server" "$listen" "$w" \
      > "$repo/start.sh"
    echo "change $n" > "$repo/NOTES"
    git -C "$repo" add -A
    git -C "$repo" commit -q -m "change $n"
  done
}

# bisect_campaign TARGET_LINES [EXTRA_LINES]: the campaign file the looks are cut from, with the
# [[target]] table's lines and top-level tables (such as [placement]) given.
bisect_campaign() {
  cat <<TOML
name = "bisect-bench"
baseline = "app"
[matrix]
connections = [16]
rounds = 3
warmup = "300ms"
duration = "1s"
[load]
cpus = "1"
${2:-}
# The self-test drift gate refuses many windows of these one-round looks on this VM (see
# bench/README.md, "bisect.sh"); the figures are taken with the gates reporting, not refusing,
# and the refusals they would have made are counted.
[gates]
mode = "warn"
[[target]]
name = "app"
cpus = "0"
$1
[[scenario]]
name = "ok"
path = "/"
expect = { status = 200 }
TOML
}

print_header() {
  printf '%-6s %-8s %-7s %-13s %-8s %-6s %-8s %-8s %-8s %-10s %s\n' size position found state \
    measured steps windows gated wall_s "windows/all" "bad/good"
}

# print_row SIZE POSITION REPO JSON DB WALL_S: the search's figures from its JSON record and the
# database its windows are in.
print_row() {
  local size=$1 position=$2 repo=$3 json=$4 db=$5 wall=$6
  local want found measured steps windows gated all size_ratio state
  want=$(git -C "$repo" rev-parse "main~$((63 - position))")
  found=$(jq -r --arg w "$want" 'if .culprit == $w then "yes" else "no" end' "$json")
  measured=$(jq '[.steps[] | select(.decision != "build failed")] | length' "$json")
  steps=$(jq '.steps | length' "$json")
  windows=$(sqlite3 "$db" "select count(*) from windows")
  # Windows a gate judged bad (in warn mode they count all the same).
  gated=$(sqlite3 "$db" "select count(*) from windows where reasons != '[]'")
  # The commits measured against measuring all 63 after the good end.
  all=$(awk -v m="$measured" 'BEGIN { printf "%.3f", m / 63 }')
  size_ratio=$(jq -r '"\(.size|tostring|.[0:6]) [\(.size_low|tostring|.[0:6]), \(.size_high|tostring|.[0:6])]"' "$json")
  state=$(jq -r .state "$json")
  printf '%-6s %-8s %-7s %-13s %-8s %-6s %-8s %-8s %-8s %-10s %s\n' "$size" "$position" "$found" \
    "$state" "$measured" "$steps" "$windows" "$gated" "$wall" "$all" "$size_ratio"
}

#!/usr/bin/env bash
# bench/bisect.sh's search once on the netns fleet (deploy/netns-lab.sh), end to end: a
# coordinator (10.77.0.1), a server agent (10.77.0.2) whose catalogue entry builds the 64-commit
# repository and a load agent (10.77.0.3), mutual TLS from benchlab's own CA; `benchlab bisect
# --coordinator --wait` from the coordinator's host, the search run by the coordinator on the
# pair (docs/methodology.md, "On a coordinator"). Prints the row bench/bisect.sh prints. Run as
# root on a quiet machine.
# Usage: bench/bisect_fleet.sh [BUILD_DIR] [SIZE:POSITION]   (default 0.20:40)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/e2e/lib.sh"
bin=$(cd "${1:-$here/../build}/bin" && pwd)
c=${2:-0.20:40}
size=${c%%:*} position=${c##*:}
. "$here/bisect_lib.sh"
lab=$here/../deploy/netns-lab.sh
prefix=bl-bench-$$
coord_ns=$prefix-coord server_ns=$prefix-server load_ns=$prefix-load
coord=10.77.0.1:7700
server_agent=bench-server-$$ load_agent=bench-load-$$
on_exit() { lab_stop "$lab" "$prefix"; }
cli() { ip netns exec "$coord_ns" "$bin/benchlab" "$@"; }
listed() { cli agents --coordinator "$coord" 2> /dev/null | grep -q "^$1 "; }

repo="$work/repo-$size-$position"
make_repo "$repo" "$size" "$position" 0.0.0.0
lab_start "$lab" "$prefix"
lab_certificates "$bin" "$work/ca" 10.77.0.1 "$server_agent" 10.77.0.2 "$load_agent" 10.77.0.3
lab_coordinator_start "$coord_ns" "$coord" "$work/ca"
lab_agent_config "$server_agent" server 10.77.0.2 "$coord" "$work/ca" > "$work/server.toml"
cat >> "$work/server.toml" <<TOML
[[target]]
name = "app"
command = ["sh", "{out}/start.sh", "{port}"]
source = "$repo"
build = [["cp", "{src}/start.sh", "{out}/start.sh"]]
TOML
lab_agent_config "$load_agent" load 10.77.0.3 "$coord" "$work/ca" > "$work/load.toml"
agent_start server "$server_ns"
agent_start load "$load_ns"
wait_until 30 "the server agent to register" listed "$server_agent"
wait_until 30 "the load agent to register" listed "$load_agent"

# The three hosts share this machine's CPUs: each sees the others as foreign CPU.
bisect_campaign "" "[placement]
server = \"$server_agent\"
load = \"$load_agent\"" > "$work/campaign.toml"
sed -i 's/^mode = "warn"$/mode = "warn"\nforeign_cpu = false/' "$work/campaign.toml"
print_header
start=$(date +%s.%N)
cli bisect "$work/campaign.toml" --target app --good "$(git -C "$repo" rev-list --max-parents=0 main)" \
  --bad main --coordinator "$coord" --wait --format json > "$work/out.json" 2> "$work/bisect.err" ||
  fail "the bisection: $(cat "$work/bisect.err")"
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
print_row "$size" "$position" "$repo" "$work/out.json" "$work/lab.db" "$wall"

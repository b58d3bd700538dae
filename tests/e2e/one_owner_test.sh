#!/usr/bin/env bash
# One owner per state (docs/security.md): a second coordinator on a database in use, and a second
# agent on a state directory in use, refuse to start and name who holds it; an agent of a live
# agent's name from another state directory is refused with that agent's address, and the fleet
# keeps showing the live one.
# Usage: one_owner_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)

local_coordinator_start

# A second coordinator on the same database, elsewhere: refused before it touches the database.
attempts_before=$(sqlite3 "$work/lab.db" 'SELECT COUNT(*) FROM attempts' 2>/dev/null || echo none)
set +e
timeout 20 "$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/lab.db" \
  2> "$work/second.log"
status=$?
set -e
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "a second coordinator on lab.db: exit $status"
grep -q "$work/lab.db is in use by benchlab coordinator, pid $coordinator, listening on 127.0.0.1:$port" \
  "$work/second.log" || fail "the refusal does not name the holder: $(cat "$work/second.log")"
check "a second coordinator on the database is refused, naming pid $coordinator"
[ "$(sqlite3 "$work/lab.db" 'SELECT COUNT(*) FROM attempts' 2>/dev/null || echo none)" = \
  "$attempts_before" ] || fail "the refused coordinator wrote attempts"
kill -0 "$coordinator" || fail "the first coordinator is gone"
"$bin/benchlab" agents --coordinator "127.0.0.1:$port" > /dev/null || fail "the first stopped answering"
check "the first coordinator goes on"

# Two agents of one name on one state directory: the second is refused at start.
local_agent_config load-1 load "$port" > "$work/load.toml"
agent_start load
first_agent=$load
ready() { "$bin/benchlab" agents --coordinator "127.0.0.1:$port" | grep -q "^load-1 .*ready"; }
wait_until 15 "load-1 ready" ready
set +e
timeout 20 "$bin/benchlab" agent --config "$work/load.toml" 2> "$work/second-agent.log"
status=$?
set -e
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "a second agent on the state directory: exit $status"
grep -q "state_dir $work/load-state is in use by benchlab agent load-1, pid $first_agent" \
  "$work/second-agent.log" || fail "the refusal does not name the holder: $(cat "$work/second-agent.log")"
check "a second agent on the state directory is refused, naming pid $first_agent"
address=$("$bin/benchlab" agents --coordinator "127.0.0.1:$port" --json |
  python3 -c 'import json,sys; print([a["address"] for a in json.load(sys.stdin)["agents"] if a["name"]=="load-1"][0])')

# The same name from another state directory: refused while the first is live, with its address.
sed "s#$work/load-state#$work/other-state#; s#$work/load-runs#$work/other-runs#" \
  "$work/load.toml" > "$work/other.toml"
agent_start other
refused() { grep -q "registered by a live instance at $address" "$work/other.log"; }
wait_until 15 "the other load-1 refused with the first's address" refused
check "a registration under a live name is refused with the holder's address ($address)"
kill "$other"
wait "$other" 2> /dev/null || true
ready || fail "load-1 is no longer ready"
now=$("$bin/benchlab" agents --coordinator "127.0.0.1:$port" --json |
  python3 -c 'import json,sys; print([a["address"] for a in json.load(sys.stdin)["agents"] if a["name"]=="load-1"][0])')
[ "$now" = "$address" ] || fail "load-1 now shows $now, not the live $address"
check "benchlab agents shows the live load-1 at $address"
echo "$passed checks passed"

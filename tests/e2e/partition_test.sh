#!/usr/bin/env bash
# Campaigns survive a network partition (docs/fleet.md, "Partitions"). In the three-host netns
# lab (deploy/netns-lab.sh) with a mutual-TLS fleet, a campaign runs; in the middle of a window a
# host's link is cut (`ip link set dev eth0 down`) for 30 s, then brought back. Twice: the load
# host's link, then the coordinator's. Each time, without anyone acting:
#   (a) the cut window fails with agent_lost and is measured again, not failed, and the campaign
#       ends done;
#   (b) no window is stored twice (one row per window and attempt);
#   (c) no result is left in an agent's spool: each was acknowledged or offered after the heal;
#   (d) the campaign moves again (a window starts) within one lease (5 s) plus one window (9 s)
#       after the heal, plus a 10 s margin for a loaded machine; the figure is printed;
# and no target process is orphaned: the server host never runs more than one hello-server
# after the heal, and none once the campaign is done. The foreign CPU and self-test drift gates
# are off (the three hosts share one machine's CPUs, which other work may use).
# Skips (exit 77) where the machine cannot create network namespaces.
# Usage: partition_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lab=$src/deploy/netns-lab.sh
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root (CAP_SYS_ADMIN)"; exit 77; }
command -v ip > /dev/null || { echo "SKIP: no ip command (iproute2)"; exit 77; }
command -v sqlite3 > /dev/null || fail "the sqlite3 command is needed to read the store"

prefix=bl-part-$$
coord_ns=$prefix-coord server_ns=$prefix-server load_ns=$prefix-load
coord=10.77.0.1:7700
# Unique agent names: a starting agent stops processes left by earlier agents of its name.
server_agent=part-server-$$
load_agent=part-load-$$
readonly CUT_S=30 LEASE_S=5 WINDOW_S=9 MARGIN_S=10
on_exit() { lab_stop "$lab" "$prefix"; }
on_fail() { for f in "$work"/*.out; do [ ! -e "$f" ] || { echo "== $f"; tail -8 "$f"; }; done; }
sql() { sqlite3 -cmd ".timeout 5000" "$work/lab.db" "$@"; }
now_iso() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
hellos_at_least() { [ "$(ns_count "$server_ns" hello-server)" -ge "$1" ]; }

# --- the lab and the fleet ----------------------------------------------------------------------
lab_start "$lab" "$prefix"
ca=$work/ca
lab_certificates "$bin" "$ca" 10.77.0.1 "$server_agent" 10.77.0.2 "$load_agent" 10.77.0.3
lab_coordinator_start "$coord_ns" "$coord" "$ca"
lab_agent_config "$server_agent" server 10.77.0.2 "$coord" "$ca" > "$work/server.toml"
lab_agent_config "$load_agent" load 10.77.0.3 "$coord" "$ca" > "$work/load.toml"
agent_start server "$server_ns"
agent_start load "$load_ns"
ready() {
  in_netns "$coord_ns" "$bin/benchlab" agents --coordinator "$coord" |
    awk -v a="$server_agent" -v b="$load_agent" '($1 == a || $1 == b) && $2 == "ready" { n++ }
      END { exit n != 2 }'
}
wait_until 20 "both agents to register" ready
check "the lab is up: coordinator, server and load agents, mutual TLS"

# --- one partition ------------------------------------------------------------------------------
# partition NAME NS: runs campaign NAME, cuts NS's link for CUT_S in the middle of its first
# window, and checks (a)-(d) and that no target is orphaned.
partition() {
  local name=$1 ns=$2 id t_heal moved hello most=0 figure
  sed "s/@NAME@/$name/" > "$work/$name.toml" <<'TOML'
name = "@NAME@"
baseline = "hello-server"
[matrix]
connections = [2]
rounds = 3
warmup = "1s"
duration = "8s"
[load]
cpus = "1"
[gates]
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
foreign_cpu = false
selftest_drift = false
steal = false
[[target]]
name = "hello-server"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
  # Not --wait: with the coordinator's link down, no client could reach it. The store is read
  # from outside instead.
  in_netns "$coord_ns" timeout 20 "$bin/benchlab" submit "$work/$name.toml" \
    --coordinator "$coord" > "$work/$name-submit.out" 2>&1 || fail "submit $name exited $?"
  id=$(sql "select id from campaigns where name = '$name'")
  [ -n "$id" ] || fail "campaign $name is not stored"
  claimed() { [ "$(sql "select count(*) from window_claims where campaign_id = $id")" -ge 1 ]; }
  wait_until 60 "$name's first window to start" claimed
  wait_until 60 "$name's target to run" hellos_at_least 1
  # The load runs once the load host sends thousands of packets a second; then 2 s more.
  loading() {
    local before after
    before=$(in_netns "$load_ns" cat /sys/class/net/eth0/statistics/tx_packets)
    sleep 1
    after=$(in_netns "$load_ns" cat /sys/class/net/eth0/statistics/tx_packets)
    [ $((after - before)) -ge 1000 ]
  }
  wait_until 30 "$name's load to run" loading
  sleep 2
  ip -n "$ns" link set dev eth0 down
  echo "cut $ns's link at $(now_iso)"
  sleep "$CUT_S"
  ip -n "$ns" link set dev eth0 up
  t_heal=$(now_iso)
  echo "healed $ns's link at $t_heal"

  # Until the campaign is done: when a window first starts after the heal, and the most
  # hello-server processes the server host runs at once.
  local deadline=$((SECONDS + 180)) state=""
  while :; do
    state=$(sql "select state from campaigns where id = $id")
    [ -n "${moved:-}" ] || moved=$(sql "select min(started_at) from (
      select started_at from window_claims where campaign_id = $id
      union all select started_at from windows where campaign_id = $id)
      where julianday(started_at) > julianday('$t_heal')")
    hello=$(ns_count "$server_ns" hello-server)
    [ "$hello" -le "$most" ] || most=$hello
    [ "$state" != "done" ] || break
    [ "$SECONDS" -lt "$deadline" ] || fail "$name is still $state 180 s after the heal"
    case $state in failed | cancelled) fail "$name ended $state" ;; esac
    sleep 0.2
  done
  check "$name: the campaign finished on its own after the cut"

  # (a) the cut window failed as agent_lost and its next attempt was not failed.
  local lost
  lost=$(sql "select count(*) from windows w where w.campaign_id = $id
    and w.outcome like '%\"kind\":\"agent_lost\"%' and exists (select 1 from windows v
      where v.campaign_id = w.campaign_id and v.pair = w.pair and v.target = w.target
      and v.scenario = w.scenario and v.load_level = w.load_level and v.round = w.round
      and v.position = w.position and v.attempt > w.attempt and v.verdict != 'failed')")
  [ "$lost" -ge 1 ] || fail "$name: no agent_lost window measured again; windows:
$(sql "select round, attempt, verdict, reasons from windows where campaign_id = $id")"
  local failed
  failed=$(sql "select count(*) from windows w where w.campaign_id = $id and w.verdict = 'failed'
    and not w.outcome like '%\"kind\":\"agent_lost\"%'")
  [ "$failed" -eq 0 ] || fail "$name: $failed window(s) failed for another reason than agent_lost"
  check "$name: the cut window failed with agent_lost and was measured again"

  # (b) one row per window and attempt; one result per agent and key.
  local twice
  twice=$(sql "select count(*) from (select 1 from windows where campaign_id = $id
    group by campaign_id, target, scenario, load_level, round, pair, position, attempt
    having count(*) > 1)")
  [ "$twice" -eq 0 ] || fail "$name: $twice window(s) stored twice"
  twice=$(sql "select count(*) from (select 1 from agent_results where key like '$id-%'
    group by agent, key having count(*) > 1)")
  [ "$twice" -eq 0 ] || fail "$name: $twice spooled result(s) stored twice"
  check "$name: no window or result stored twice"

  # (c) every spooled result reached the coordinator.
  spools_empty() {
    [ -z "$(find "$work/$server_agent-state/spool" "$work/$load_agent-state/spool" \
      -name '*.rec' 2> /dev/null)" ]
  }
  wait_until 15 "$name: the agents' spools to empty ($(find "$work"/*-state/spool -name '*.rec' \
    2> /dev/null | tr '\n' ' '))" spools_empty
  check "$name: no result left in a spool"

  # (d) the campaign moved again soon after the heal.
  [ -n "$moved" ] || fail "$name: no window started after the heal"
  figure=$(sql "select printf('%.1f', (julianday('$moved') - julianday('$t_heal')) * 86400)")
  echo "heal -> campaign moving again ($name): $figure s"
  awk -v f="$figure" -v max=$((LEASE_S + WINDOW_S + MARGIN_S)) 'BEGIN { exit !(f <= max) }' ||
    fail "$name: moving again $figure s after the heal, over $((LEASE_S + WINDOW_S + MARGIN_S)) s"
  check "$name: moving again $figure s after the heal (bound: lease + window + margin)"

  # No orphaned target: at most the current window's, and none once done.
  [ "$most" -le 1 ] || fail "$name: $most hello-server processes ran at once after the heal"
  wait_until 5 "$name: no hello-server left" eval '! hellos_at_least 1'
  check "$name: no target orphaned (at most $most running at once after the heal)"
}

partition part-load "$load_ns"
wait_until 30 "both agents ready again" ready
partition part-coord "$coord_ns"
grep -q "unreachable for .* stopped" "$work/server.log" &&
  echo "the server agent stopped its targets while the coordinator was unreachable"

# --- stopping -----------------------------------------------------------------------------------
stop_tracked
for ns in "$coord_ns" "$server_ns" "$load_ns"; do
  left=$(ip netns pids "$ns" | tr '\n' ' ')
  [ -z "$left" ] || fail "processes left in $ns: $left"
done
check "nothing left running in the lab"
echo "$passed checks passed"

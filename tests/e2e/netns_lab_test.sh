#!/usr/bin/env bash
# End to end across three "hosts": deploy/netns-lab.sh builds a lab of network namespaces (coord
# 10.77.0.1, server 10.77.0.2, load 10.77.0.3); the coordinator, a server agent and a load agent
# each run in their own, listening on and advertising their namespace's address; a tiny campaign
# submitted with `submit --wait` completes with every window valid. Every channel is mutual TLS with
# certificates from `benchlab ca`; plaintext is refused beyond loopback. From a fourth host
# (intruder 10.77.0.4) certificates of the wrong role or of another CA cannot submit, register or
# drive an agent (so none can have a profile taken), and the refusals are audited. The load provably
# crossed the lab's network, not loopback: the load namespace's loopback carries not one packet
# during the campaign (a dial to 127.0.0.1 there would, even a refused one: SYN and RST), and its
# eth0 sends, and the server namespace's eth0 receives, at least one packet per measured request.
# The campaign is profiled: the valid window's CPU profile, taken by the server agent's perf in the
# server namespace, is in the coordinator's store without error, names hello-server's SpendCpu and
# reads back as folded stacks (where perf is missing: a message, and the window stores why it has no
# profile). Everything started is stopped and the namespaces are removed, on success and failure
# alike. The foreign CPU gate is off (the three hosts share one machine's CPUs); the others judge
# the window as usual. Skips (exit 77) where the machine cannot create network namespaces.
# Usage: netns_lab_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lab=$src/deploy/netns-lab.sh
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (CAP_SYS_ADMIN)"
command -v ip > /dev/null || skip "no ip command (iproute2)"

prefix=bl-e2e-$$
coord_ns=$prefix-coord server_ns=$prefix-server load_ns=$prefix-load intruder_ns=$prefix-intruder
coord=10.77.0.1:7700
server_addr=10.77.0.2 load_addr=10.77.0.3
# Unique agent names: a starting agent stops processes left by earlier agents of its name.
server_agent=netns-server-$$
load_agent=netns-load-$$
# down also stops anything still inside the namespaces (a target the agent left, say).
on_exit() { lab_stop "$lab" "$prefix"; }
on_fail() { for f in "$work"/*.out; do [ ! -e "$f" ] || { echo "== $f"; tail -8 "$f"; }; done; }
# in_ns runs commands, not daemons: in the background its subshell would stand between the test
# and the daemon. The daemons are started by lib.sh's lab_coordinator_start and agent_start, which
# background `ip netns exec` itself (it execs, so $! is the daemon).
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
counter() { in_ns "$1" cat "/sys/class/net/$2/statistics/$3"; }

# --- the lab ------------------------------------------------------------------------------------
lab_start "$lab" "$prefix"
grep -q "^server .* $server_addr\$" "$work/lab.out" ||
  fail "netns-lab.sh up should print the addresses"
"$lab" status --prefix "$prefix" > /dev/null || fail "netns-lab.sh status after up"
for ns in "$coord_ns" "$server_ns" "$load_ns" "$intruder_ns"; do
  in_ns "$ns" ip -4 -o addr show dev eth0 | grep -q "10\.77\.0\." || fail "$ns has no address"
done
check "the lab is up: four hosts, one address each"

# --- the fleet, with mutual TLS from benchlab's own CA -----------------------------------------
ca=$work/ca
# The commands below speak to the coordinator as the operator (BENCHLAB_TLS_* exported).
lab_certificates "$bin" "$ca" 10.77.0.1 "$server_agent" "$server_addr" "$load_agent" "$load_addr"
# Without TLS the coordinator refuses to listen beyond loopback.
if ip netns exec "$coord_ns" env -u BENCHLAB_TLS_CA -u BENCHLAB_TLS_CERT -u BENCHLAB_TLS_KEY \
  -u BENCHLAB_TLS_CRL "$bin/benchlab" coordinator --listen "$coord" --db "$work/plain.db" \
  > "$work/plain.out" 2>&1; then
  fail "a coordinator on $coord without TLS should refuse to start"
fi
grep -q "without TLS is refused" "$work/plain.out" || fail "the refusal should say why"
lab_coordinator_start "$coord_ns" "$coord" "$ca"

# The target listens on every address of the server namespace: the agent probes readiness at its
# advertised address (docs/agent.md, "Readiness"), where the load agent will reach the target.
# It spends 20 µs of CPU per request in SpendCpu, a function of its own that its CPU profile
# names (docs/profiles.md), as in profile_test.sh.
cat > "$work/server.toml" <<TOML
name = "$server_agent"
roles = ["server"]
coordinator = "$coord"
state_dir = "$work/server-state"
listen = "$server_addr:7701"
advertise = "$server_addr:7701"
run_root = "$work/server-runs"
[tls]
ca = "$ca/ca.pem"
cert = "$ca/$server_agent.pem"
key = "$ca/$server_agent.key"
crl = "$ca/crl.pem"
[[target]]
name = "hello-server"
command = ["$bin/hello-server", "--host", "0.0.0.0", "--port", "{port}", "--work-ns", "20000"]
TOML
cat > "$work/load.toml" <<TOML
name = "$load_agent"
roles = ["load"]
coordinator = "$coord"
state_dir = "$work/load-state"
allowed_targets = ["$server_addr"]
listen = "$load_addr:7701"
advertise = "$load_addr:7701"
run_root = "$work/load-runs"
[tls]
ca = "$ca/ca.pem"
cert = "$ca/$load_agent.pem"
key = "$ca/$load_agent.key"
crl = "$ca/crl.pem"
TOML
agent_start server "$server_ns"
agent_start load "$load_ns"
# The coordinator lists an agent with the address it registered from.
registered() {
  in_ns "$coord_ns" "$bin/benchlab" agents --coordinator "$coord" | awk -v name="$1" \
    -v address="$2:7701" '$1 == name && $5 == address { found = 1 } END { exit !found }'
}
wait_until 15 "the server agent to register from $server_addr" \
  registered "$server_agent" "$server_addr"
wait_until 15 "the load agent to register from $load_addr" registered "$load_agent" "$load_addr"
check "the coordinator has both agents at their namespaces' addresses"

cat > "$work/campaign.toml" <<TOML
name = "netns-lab"
baseline = "hello-server"
[matrix]
connections = [2]
rounds = 1
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
[gates]
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
# One machine holds all three hosts: each agent sees the other hosts' processes (the target, the
# load generator) on the same CPUs and counts them as foreign, so this gate would judge the lab,
# not the window. This test is about the network path, so the self-test drift and steal gates,
# which on a shared CI machine judge the neighbours and the hypervisor (steal of 30% has been
# seen on CI virtual machines), are off too; all three are still measured and stored.
foreign_cpu = false
selftest_drift = false
steal = false
# The server agent profiles the measured interval with perf (docs/profiles.md): it runs in the
# server namespace, the target in its tree, and the profile travels in MarkReply to the
# coordinator's store. Without perf the window stays valid and stores why it has no profile.
[profile]
enabled = true
frequency = 999
[[target]]
name = "hello-server"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
[[negative]]
name = "missing"
path = "/nope"
expect = { status = 404 }
TOML

lo_before=$(counter "$load_ns" lo tx_packets)
load_tx_before=$(counter "$load_ns" eth0 tx_packets)
server_rx_before=$(counter "$server_ns" eth0 rx_packets)
in_ns "$coord_ns" timeout 60 "$bin/benchlab" submit "$work/campaign.toml" --coordinator "$coord" \
  --wait > "$work/submit.out" 2>&1 || fail "submit --wait exited $?"
lo_after=$(counter "$load_ns" lo tx_packets)
load_tx_after=$(counter "$load_ns" eth0 tx_packets)
server_rx_after=$(counter "$server_ns" eth0 rx_packets)
grep -q "1 windows: 1 valid" "$work/submit.out" ||
  fail "submit --wait summary: $(grep -m1 'invalid\|failed' "$work/submit.out")"
state=$(sqlite3 "$work/lab.db" "select state from campaigns where name = 'netns-lab'")
[ "$state" = "done" ] || fail "the campaign is $state, not done"
rows=$(sqlite3 "$work/lab.db" "select count(*),
  sum(verdict = 'valid' and requests > 0 and rps > 0 and server_cpu_s > 0),
  group_concat(distinct server_agent || '/' || load_agent)
  from windows where campaign = 'netns-lab'")
[ "$rows" = "1|1|$server_agent/$load_agent" ] ||
  fail "expected 1 valid window with figures run by $server_agent/$load_agent, got $rows"
in_ns "$coord_ns" "$bin/benchlab" windows --coordinator "$coord" --campaign netns-lab \
  > "$work/windows.out"
[ "$(grep -c ' valid ' "$work/windows.out")" -eq 1 ] || fail "benchlab windows --coordinator"
check "the campaign completed with every window valid"

# --- the windows' CPU profiles, through the fleet (docs/profiles.md) ---------------------------
if ! command -v perf > /dev/null; then
  echo "SKIP: the profile checks: perf is missing (make deps installs linux-perf)"
  # The window was measured all the same, and its profile row says why there is none.
  why=$(sqlite3 "$work/lab.db" "select count(*), sum(p.error like '%perf could not start%')
    from windows w join window_profiles p on p.window_id = w.id
    where w.campaign = 'netns-lab' and w.verdict = 'valid'")
  [ "$why" = "1|1" ] || fail "without perf, the valid window should store why: $why"
  check "without perf, the valid window stores why it has no profile"
else
  # Every valid window has its profile, with samples and without error.
  profiles=$(sqlite3 "$work/lab.db" "select count(*),
    sum(p.error = '' and p.folded_z is not null and p.samples > 0 and p.frequency_hz = 999),
    group_concat(nullif(p.error, ''), '; ')
    from windows w left join window_profiles p on p.window_id = w.id
    where w.campaign = 'netns-lab' and w.verdict = 'valid'")
  [ "$profiles" = "1|1|" ] ||
    fail "expected a profile with samples and no error for the 1 valid window, got $profiles"
  in_ns "$coord_ns" "$bin/benchlab" profile netns-lab --db "$work/lab.db" --target hello-server \
    > "$work/profile.out" 2> "$work/profile.err" || fail "benchlab profile exited $?"
  grep -q "^target hello-server: 1 window(s), [0-9]* samples" "$work/profile.out" ||
    fail "benchlab profile's header: $(head -1 "$work/profile.out")"
  grep -q "SpendCpu" "$work/profile.out" ||
    { cat "$work/profile.out"; fail "hello-server's SpendCpu is not in its profile"; }
  in_ns "$coord_ns" "$bin/benchlab" profile netns-lab --db "$work/lab.db" --target hello-server \
    --format collapsed -o "$work/profile.folded" 2> "$work/profile.err" ||
    fail "benchlab profile --format collapsed exited $?"
  [ -s "$work/profile.folded" ] || fail "no collapsed stacks written"
  if grep -Evq '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$work/profile.folded"; then
    grep -Ev '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$work/profile.folded" | head -3
    fail "a collapsed line is not FRAME;FRAME... COUNT"
  fi
  grep -q "^hello-server;.*SpendCpu.* [0-9]*$" "$work/profile.folded" ||
    fail "no stack under hello-server's root reaches SpendCpu"
  # Not a sample lost between the agent and the reader: the stacks hold what the store counted.
  stored=$(sqlite3 "$work/lab.db" "select sum(p.samples) from windows w
    join window_profiles p on p.window_id = w.id where w.campaign = 'netns-lab'")
  folded=$(awk '{ n += $NF } END { print n }' "$work/profile.folded")
  [ "$folded" = "$stored" ] || fail "the collapsed stacks hold $folded samples, the store $stored"
  check "the valid window's CPU profile reached the coordinator's store ($stored samples):" \
    "SpendCpu in it, read back as folded stacks"
fi

# A client without a certificate gets nowhere, even from inside the lab.
if in_ns "$load_ns" env -u BENCHLAB_TLS_CA -u BENCHLAB_TLS_CERT -u BENCHLAB_TLS_KEY \
  -u BENCHLAB_TLS_CRL timeout 20 "$bin/benchlab" agents --coordinator "$coord" \
  > "$work/plain-client.out" 2>&1; then
  fail "a plaintext client should be refused by the coordinator"
fi
check "the fleet speaks mutual TLS: a plaintext coordinator and a plaintext client are refused"

# --- a stranger on the network: the fourth host, outside the fleet ----------------------------
# It holds certificates of the wrong role from the fleet's CA (a viewer's, an agent's of its own
# name) and certificates of another CA (an operator's, and an agent's under the server agent's
# name). With none of them can it submit, register or drive an agent.
rogue=$work/rogue
"$bin/benchlab" ca init --dir "$rogue" > /dev/null
"$bin/benchlab" ca issue --dir "$rogue" --name mallory --role operator > /dev/null
"$bin/benchlab" ca issue --dir "$rogue" --name "$server_agent" --role agent --host 10.77.0.4 \
  > /dev/null
"$bin/benchlab" ca issue --dir "$ca" --name watcher --role viewer > /dev/null
"$bin/benchlab" ca issue --dir "$ca" --name stray --role agent --host 10.77.0.4 > /dev/null
# as DIR NAME COMMAND...: run COMMAND on the intruder with certificate NAME of the CA in DIR.
as() {
  local dir=$1 name=$2; shift 2
  in_ns "$intruder_ns" env -u BENCHLAB_TLS_CRL BENCHLAB_TLS_CA="$dir/ca.pem" \
    BENCHLAB_TLS_CERT="$dir/$name.pem" BENCHLAB_TLS_KEY="$dir/$name.key" "$@"
}
campaigns=$(sqlite3 "$work/lab.db" "select count(*) from campaigns")
for who in "$ca watcher" "$ca stray" "$rogue mallory"; do
  # shellcheck disable=SC2086 # two words: the CA's directory and the certificate's name
  if as $who timeout 20 "$bin/benchlab" submit "$work/campaign.toml" --coordinator "$coord" \
    > "$work/intruder-submit.out" 2>&1; then
    fail "the intruder submitted a campaign as ${who##* }"
  fi
done
as "$ca" watcher timeout 20 "$bin/benchlab" submit "$work/campaign.toml" --coordinator "$coord" \
  > "$work/intruder-submit.out" 2>&1 && fail "a viewer's submit should fail"
grep -q "PERMISSION_DENIED\|may not\|permission" "$work/intruder-submit.out" ||
  fail "a viewer's submit should be refused for its role: $(tail -1 "$work/intruder-submit.out")"
[ "$(sqlite3 "$work/lab.db" "select count(*) from campaigns")" = "$campaigns" ] ||
  fail "a refused submit stored a campaign"
# Identical refusals from one address share a row and count up (docs/store.md, "audit").
refused=$(sqlite3 "$work/lab.db" "select coalesce(sum(count), 0) from audit
  where call = 'SubmitCampaign' and outcome = 'refused' and peer like 'ipv4:10.77.0.4:%'")
[ "$refused" -ge 2 ] || fail "the refused submits from the intruder are audited ($refused refusals)"
check "from a fourth host, a viewer's, an agent's and another CA's certificate cannot submit"

# Registering: under the server agent's name with another CA's certificate; with a viewer's
# certificate (the agent itself refuses to start with it).
cat > "$work/intruder.toml" <<TOML
name = "$server_agent"
roles = ["server"]
coordinator = "$coord"
state_dir = "$work/intruder-state"
listen = "10.77.0.4:7701"
advertise = "10.77.0.4:7701"
run_root = "$work/intruder-runs"
[tls]
ca = "$rogue/ca.pem"
cert = "$rogue/$server_agent.pem"
key = "$rogue/$server_agent.key"
TOML
in_ns "$intruder_ns" timeout 8 "$bin/benchlab" agent --config "$work/intruder.toml" \
  > "$work/intruder-agent.out" 2>&1 || true
grep -q "registered with coordinator" "$work/intruder-agent.out" &&
  fail "an agent with another CA's certificate registered"
sed -e "s|$rogue/$server_agent|$ca/watcher|g" -e "s|$rogue/ca.pem|$ca/ca.pem|" \
  -e "s|^name = .*|name = \"watcher\"|" "$work/intruder.toml" > "$work/intruder-viewer.toml"
if in_ns "$intruder_ns" timeout 8 "$bin/benchlab" agent --config "$work/intruder-viewer.toml" \
  > "$work/intruder-viewer.out" 2>&1; then
  fail "an agent with a viewer's certificate should not run"
fi
grep -q "registered with coordinator" "$work/intruder-viewer.out" &&
  fail "an agent with a viewer's certificate registered"
registered "$server_agent" "$server_addr" ||
  fail "the server agent should still be registered from $server_addr"
in_ns "$coord_ns" "$bin/benchlab" agents --coordinator "$coord" | grep -q "10\.77\.0\.4" &&
  fail "the coordinator lists an agent at the intruder's address"
check "from a fourth host, another CA's or a viewer's certificate cannot register"

# Driving an agent: its port takes only the coordinator's certificate. An operator of the fleet's
# CA, another CA's operator and a client with no certificate are cut off after the handshake
# (openssl ends with "unexpected eof"); the coordinator's certificate, from the coordinator's
# host, is kept (the probe then waits until `timeout` ends it: 124). So no other role gets as far
# as an RPC: none can call StartTarget, and so none can have a CPU profile taken (profile_hz is
# a field of StartTargetRequest, docs/profiles.md, "On the wire"), nor any other window call.
probe() {  # probe NAMESPACE OPENSSL-ARGS...: the exit status of a TLS connection to the agent
  local ns=$1; shift
  set +e
  in_ns "$ns" timeout 5 openssl s_client -connect "$server_addr:7701" -alpn h2 -ign_eof "$@" \
    < /dev/null > "$work/probe.out" 2>&1
  local status=$?
  set -e
  echo "$status"
}
command -v openssl > /dev/null || fail "openssl (the command) is needed to probe an agent's port"
[ "$(probe "$coord_ns" -CAfile "$ca/ca.pem" -cert "$ca/coord.pem" -key "$ca/coord.key")" = 124 ] ||
  fail "the coordinator's certificate should keep its connection to the agent"
for who in "$ca op" "$rogue mallory" "$ca stray"; do
  set -- $who
  [ "$(probe "$intruder_ns" -CAfile "$ca/ca.pem" -cert "$1/$2.pem" -key "$1/$2.key")" = 1 ] ||
    fail "the agent should cut off a client with certificate $2 ($(tail -1 "$work/probe.out"))"
done
[ "$(probe "$intruder_ns" -CAfile "$ca/ca.pem")" = 1 ] ||
  fail "the agent should cut off a client without a certificate"
check "from a fourth host, no certificate but the coordinator's can drive an agent"

# The coordinator sends the load agent to the host its server agent registered from (10.77.0.2,
# checked above). That the load went there over the lab's network and not over any loopback:
requests=$(sqlite3 "$work/lab.db" "select sum(requests) from windows where campaign = 'netns-lab'")
lo=$((lo_after - lo_before))
[ "$lo" -eq 0 ] || fail "the load namespace sent $lo packets over loopback during the campaign"
load_tx=$((load_tx_after - load_tx_before))
[ "$load_tx" -ge "$requests" ] ||
  fail "the load namespace's eth0 sent $load_tx packets for $requests measured requests"
server_rx=$((server_rx_after - server_rx_before))
[ "$server_rx" -ge "$requests" ] ||
  fail "the server namespace's eth0 received $server_rx packets for $requests measured requests"
check "the load crossed the lab's network ($requests requests measured," \
  "$load_tx packets out of the load host's eth0, none on its loopback)"

# --- stopping -----------------------------------------------------------------------------------
daemons=("$coordinator" "$server" "$load")
for pid in "${daemons[@]}"; do kill -TERM "$pid"; done
for pid in "${daemons[@]}"; do wait "$pid" || fail "a daemon exited non-zero after SIGTERM"; done
tracked=()
for ns in "$coord_ns" "$server_ns" "$load_ns" "$intruder_ns"; do
  left=$(ip netns pids "$ns" | tr '\n' ' ')
  [ -z "$left" ] || fail "processes left in $ns: $left"
done
check "the daemons stop on SIGTERM and leave nothing running in the lab"

"$lab" down --prefix "$prefix" || fail "netns-lab.sh down"
lab_up=0
"$lab" down --prefix "$prefix" || fail "netns-lab.sh down a second time"
left=$(ip netns list | grep -c "^$prefix-" || true)
[ "$left" -eq 0 ] || fail "$left namespaces of $prefix left after down"
check "netns-lab.sh down removes the lab, twice over"
echo "$passed checks passed"

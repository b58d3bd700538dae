#!/usr/bin/env bash
# A fleet campaign measured by the Debian package's own files over a namespaced network. The .deb
# that package.build made is extracted (`dpkg-deb -x`, nothing installed) and only its
# /usr/bin/benchlab and /usr/lib/benchlab/hello-server are used. deploy/netns-lab.sh --pairs 2
# gives a coordinator host and two pairs of hosts: server-1 10.77.0.2 with load-1 10.77.0.3,
# server-2 10.77.0.5 with load-2 10.77.0.6. Every daemon is started from the command line of its
# packaged unit: ExecStart= as the extracted unit file has it, with what systemd would supply done
# here (%i the instance, %S the state root, $VARIABLES from EnvironmentFile=, StateDirectory=
# made and passed as $STATE_DIRECTORY, UMask=, LimitNOFILE=, a clean environment), and the
# package's absolute paths moved into the extracted tree. /etc/default/benchlab-coordinator is
# edited as deploy/README.md tells an operator to: the listen address set to the coordinator
# host's, the fleet form's BENCHLAB_TLS_* lines uncommented, the files they name put in place.
# Every channel is mutual TLS from `benchlab ca`. A campaign with `pairs = "all"` then
#   - finishes done, placed on two disjoint (server, load) pairs of the four agents;
#   - is measured whole on each pair: every window of the matrix, by that pair's two agents,
#     measured (valid or invalid, never failed or skipped);
#   - is measured on both pairs at once: windows of the two pairs overlap in time;
#   - is reported pair by pair: the Markdown has each cell once per pair ("## Pair NAME · ...");
#   - shows in the coordinator's /metrics (on its --http, loopback inside the coordinator host),
#     which `promtool check metrics` passes where promtool is installed;
# and every daemon stops on SIGTERM with status 0, the state stays in the state root (nothing in
# /var/lib/benchlab), no process or namespace is left. The daemons run as root, not as the
# unit's User=benchlab, which the package's postinst would create. The foreign CPU and self-test
# drift gates are off: the five hosts share this machine's CPUs.
# Skips (exit 77, the reason printed) without network namespaces or without a .deb to test.
# Usage: fleet_deb_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lab=$src/deploy/netns-lab.sh
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (CAP_SYS_ADMIN)"
command -v ip > /dev/null || skip "no ip command (iproute2)"
command -v dpkg-deb > /dev/null || skip "no dpkg-deb, so no Debian package to test"
command -v python3 > /dev/null || fail "python3 is needed to read the JSON report"
command -v curl > /dev/null || fail "curl is needed to read the coordinator's /metrics"
started_at=$SECONDS

prefix=bl-fdeb-$$
coord_ns=$prefix-coord
coord_addr=10.77.0.1
coord=$coord_addr:7700
# Unique agent names: a starting agent stops processes left by earlier agents of its name.
s1=server-1-$$ l1=load-1-$$ s2=server-2-$$ l2=load-2-$$
declare -A ns_of=([$s1]=$prefix-server [$l1]=$prefix-load [$s2]=$prefix-server-2
  [$l2]=$prefix-load-2)
declare -A addr_of=([$s1]=10.77.0.2 [$l1]=10.77.0.3 [$s2]=10.77.0.5 [$l2]=10.77.0.6)
agents=("$s1" "$l1" "$s2" "$l2")
readonly ROUNDS=2 LEVELS=2  # the campaign below: 1 target x 1 scenario x LEVELS x ROUNDS
on_exit() { lab_stop "$lab" "$prefix"; }
on_fail() { for f in "$work"/*.out; do [ ! -e "$f" ] || { echo "== $f"; tail -8 "$f"; }; done; }
var_lib_before=$([ -e /var/lib/benchlab ] && echo yes || echo no)

# --- the package ---------------------------------------------------------------------------------
version=$(sed -n 's/^project(benchlab VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(benchlab VERSION ...) in $src/CMakeLists.txt"
deb=$(cd "$bin/.." && pwd)/package/benchlab_${version}_amd64.deb
[ -f "$deb" ] || skip "no $deb to test (ctest's package.build or \`make deb\` makes it)"
[ ! "$bin/benchlab" -nt "$deb" ] ||
  echo "note: $deb is older than $bin/benchlab; \`make deb\` builds it again"
root=$work/root
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
benchlab=$root/usr/bin/benchlab
for program in "$benchlab" "$root/usr/lib/benchlab/hello-server"; do
  [ -x "$program" ] || fail "the package has no ${program#"$root"}"
done
"$benchlab" --version | grep -qx "benchlab $version" ||
  fail "the packaged benchlab --version says $("$benchlab" --version 2>&1), not $version"
unit_file() {  # unit_file NAME: the packaged unit NAME, wherever the package puts units
  local found
  found=$(find "$root/lib/systemd/system" "$root/usr/lib/systemd/system" -name "$1" \
    2> /dev/null || true)
  [ "$(wc -w <<< "$found")" -eq 1 ] || fail "the package should hold one $1, found: ${found:-none}"
  echo "$found"
}
coordinator_unit=$(unit_file benchlab-coordinator.service)
agent_unit=$(unit_file benchlab-agent@.service)
check "extracted $(basename "$deb"): benchlab $version, its hello-server and both units"

# --- starting a unit as systemd would -----------------------------------------------------------
state_root=$work/state  # %S, /var/lib under systemd

# unit_values UNIT KEY: each value of KEY= in the unit's [Service] section, continuation lines
# (a trailing backslash) joined.
unit_values() {
  awk -v key="$2" '
    /^\[/ { service = ($0 == "[Service]"); next }
    !service || /^[#;]/ { next }
    { line = held $0; held = "" }
    line ~ /\\$/ { held = substr(line, 1, length(line) - 1) " "; next }
    index(line, key "=") == 1 { print substr(line, length(key) + 2) }' "$1"
}

# in_root PATH: where a path of the installed package lies in the extracted tree.
in_root() {
  case $1 in
    /usr/* | /etc/* | /lib/*) echo "$root$1" ;;
    *) echo "$1" ;;
  esac
}

# specifiers UNIT INSTANCE TEXT: sets expanded to TEXT with the unit's specifiers replaced, as
# systemd does (in this shell, so that an unknown one fails the test).
specifiers() {
  local text=$3 out="" c
  while [[ $text == *%* ]]; do
    out+=${text%%\%*}
    text=${text#*%}
    c=${text:0:1}
    text=${text:1}
    case $c in
      i | I) out+=$2 ;;
      S) out+=$state_root ;;
      %) out+=% ;;
      *) fail "$(basename "$1"): specifier %$c is not one this test knows how to replace" ;;
    esac
  done
  expanded=$out$text
}

# read_environment_file FILE: KEY=VALUE lines as systemd reads them (comments and blank lines
# skipped, one pair of enclosing quotes removed) into unit_env.
read_environment_file() {
  local line key value
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line#"${line%%[![:space:]]*}"}
    [[ -z $line || $line == \#* || $line == \;* ]] && continue
    [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || fail "$1: not KEY=VALUE: $line"
    key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then value=${BASH_REMATCH[1]}; fi
    unit_env[$key]=$value
  done < "$1"
}

# unit_command UNIT INSTANCE: sets unit_argv (ExecStart=, expanded as systemd expands it, the
# package's paths in the extracted tree), unit_environment (env -i's arguments), unit_umask and
# unit_nofile, and makes the unit's StateDirectory= under the state root.
declare -A unit_env
unit_command() {
  local unit=$1 instance=$2 name exec value word file mode dirs="" dir words=()
  name=$(basename "$unit")
  unit_env=([PATH]=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
  while read -r value; do
    [ -n "$value" ] || continue
    specifiers "$unit" "$instance" "${value#-}"
    file=$(in_root "$expanded")
    if [ -f "$file" ]; then
      read_environment_file "$file"
    elif [ "${value:0:1}" != - ]; then
      fail "$name: EnvironmentFile=$value is not in the package"
    fi
  done < <(unit_values "$unit" EnvironmentFile)
  while read -r value; do
    specifiers "$unit" "$instance" "$value"
    for word in $expanded; do
      [[ $word == *=* ]] || fail "$name: Environment= word $word is not KEY=VALUE"
      unit_env[${word%%=*}]=${word#*=}
    done
  done < <(unit_values "$unit" Environment)
  mode=$(unit_values "$unit" StateDirectoryMode | tail -1)
  specifiers "$unit" "$instance" "$(unit_values "$unit" StateDirectory)"
  for word in $expanded; do
    dir=$state_root/$word
    mkdir -p "$dir"
    chmod "${mode:-0755}" "$dir"
    dirs+=${dirs:+:}$dir
  done
  [ -z "$dirs" ] || unit_env[STATE_DIRECTORY]=$dirs
  unit_umask=$(unit_values "$unit" UMask | tail -1)
  unit_umask=${unit_umask:-0022}
  unit_nofile=$(unit_values "$unit" LimitNOFILE | tail -1)

  exec=$(unit_values "$unit" ExecStart)
  [ "$(grep -c . <<< "$exec")" -eq 1 ] || fail "$name: expected one ExecStart= line, got: $exec"
  case ${exec:0:1} in
    [@:+!]) fail "$name: ExecStart= prefix ${exec:0:1} is not one this test handles" ;;
    -) exec=${exec:1} ;;
  esac
  [[ $exec != *[\"\'\\]* ]] ||
    fail "$name: ExecStart= quotes or escapes; this test splits on spaces"
  unit_argv=()
  read -ra words <<< "$exec"
  for word in "${words[@]}"; do
    specifiers "$unit" "$instance" "$word"
    word=$expanded
    if [[ $word =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
      # $NAME alone is split into words at whitespace; an unset one gives none.
      # shellcheck disable=SC2206 # splitting is the point
      unit_argv+=(${unit_env[${BASH_REMATCH[1]}]:-})
      continue
    fi
    while [[ $word =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
      value=${unit_env[${BASH_REMATCH[1]}]:-}
      word=${word/"${BASH_REMATCH[0]}"/"$value"}
    done
    [[ $word != *\$* ]] || fail "$name: ExecStart= word $word refers to a variable oddly"
    unit_argv+=("$(in_root "$word")")
  done
  [ "${unit_argv[0]:-}" = "$benchlab" ] ||
    fail "$name: ExecStart= runs ${unit_argv[0]:-nothing}, not the package's /usr/bin/benchlab"
  unit_environment=()
  for word in "${!unit_env[@]}"; do unit_environment+=("$word=${unit_env[$word]}"); done
}

declare -A noted
# start_unit UNIT INSTANCE NAMESPACE LOG: the unit's command in NAMESPACE, its stderr to LOG, in a
# clean environment with the unit's umask and file limit; the daemon's pid in $daemon (ip netns
# exec and env both exec, so the subshell becomes the daemon).
start_unit() {
  unit_command "$1" "$2"
  if [ -n "$unit_nofile" ] && ! (ulimit -n "$unit_nofile") 2> /dev/null; then
    # Raising the hard limit needs CAP_SYS_RESOURCE, which systemd has and a container may not.
    [ -n "${noted[$1]:-}" ] || echo "note: LimitNOFILE=$unit_nofile cannot be set here;" \
      "$(basename "$1") gets this shell's hard limit, $(ulimit -Hn)"
    noted[$1]=1
    unit_nofile=$(ulimit -Hn)
  fi
  echo "$3: ${unit_environment[*]} ${unit_argv[*]}" >> "$work/commands.out"
  (
    umask "$unit_umask"
    [ -z "$unit_nofile" ] || ulimit -n "$unit_nofile"
    exec ip netns exec "$3" env -i "${unit_environment[@]}" "${unit_argv[@]}"
  ) 2> "$4" &
  daemon=$!
  track "$daemon"
}

# --- the lab, the certificates, the operator's configuration -----------------------------------
lab_start "$lab" "$prefix" 2
for name in "${agents[@]}"; do
  host=${ns_of[$name]#"$prefix"-}
  grep -q "^$host .* ${addr_of[$name]}\$" "$work/lab.out" ||
    fail "netns-lab.sh up --pairs 2 should list $host at ${addr_of[$name]}: $(cat "$work/lab.out")"
done
"$lab" status --prefix "$prefix" > "$work/status.out" || fail "netns-lab.sh status after up"
grep -q "is up (2 pairs)" "$work/status.out" || fail "status: $(tail -1 "$work/status.out")"
check "the lab is up with two pairs: six hosts, one address each"

ca=$work/ca
lab_certificates "$root/usr/bin" "$ca" "$coord_addr" "$s1" "${addr_of[$s1]}" \
  "$l1" "${addr_of[$l1]}" "$s2" "${addr_of[$s2]}" "$l2" "${addr_of[$l2]}"

# The coordinator's options, edited as an operator would: its address, and the fleet form's TLS
# files (the commented BENCHLAB_TLS_* lines) with the certificates copied where they point.
defaults=$root/etc/default/benchlab-coordinator
[ -f "$defaults" ] || fail "the package has no /etc/default/benchlab-coordinator"
cp "$defaults" "$work/benchlab-coordinator.shipped"
grep -q '^BENCHLAB_COORDINATOR_ARGS=.*--listen [^ "]' "$defaults" ||
  fail "/etc/default/benchlab-coordinator sets no BENCHLAB_COORDINATOR_ARGS with --listen"
sed -i -e "/^BENCHLAB_COORDINATOR_ARGS=/s|--listen [^ \"]*|--listen $coord|" \
  -e "s|^#\(BENCHLAB_TLS_[A-Z]*=\)/etc/|\1$root/etc/|" "$defaults"
declare -A ca_file=([CA]=ca.pem [CERT]=coord.pem [KEY]=coord.key [CRL]=crl.pem)
for kind in CA CERT KEY CRL; do
  file=$(sed -n "s|^BENCHLAB_TLS_$kind=||p" "$defaults")
  [ -n "$file" ] || fail "/etc/default/benchlab-coordinator shows no BENCHLAB_TLS_$kind to set"
  install -D -m 0640 "$ca/${ca_file[$kind]}" "$file"
done
# What the coordinator will listen on for the dashboard and /metrics (loopback, in its host).
http=$(sed -n 's|^BENCHLAB_COORDINATOR_ARGS=.*--http \([^ "]*\).*|\1|p' "$defaults")
[ -n "$http" ] || fail "the coordinator's options in the package have no --http"
diff -u "$work/benchlab-coordinator.shipped" "$defaults" > "$work/defaults.diff" || true

# The agents' configurations where their unit reads them, the state left to the unit's
# StateDirectory=, the catalogue's hello-server the package's.
lab_state_dir=0
lab_hello_server=$root/usr/lib/benchlab/hello-server
lab_agent_config "$s1" server "${addr_of[$s1]}" "$coord" "$ca" > "$root/etc/benchlab/agent-$s1.toml"
lab_agent_config "$s2" server "${addr_of[$s2]}" "$coord" "$ca" > "$root/etc/benchlab/agent-$s2.toml"
lab_agent_config "$l1" load "${addr_of[$l1]}" "$coord" "$ca" > "$root/etc/benchlab/agent-$l1.toml"
lab_agent_config "$l2" load "${addr_of[$l2]}" "$coord" "$ca" > "$root/etc/benchlab/agent-$l2.toml"

# --- the daemons, from their units ---------------------------------------------------------------
start_unit "$coordinator_unit" "" "$coord_ns" "$work/coordinator.log"
coordinator=$daemon
listening() {
  grep -q "listening on $coord" "$work/coordinator.log" && return 0
  any_alive "$coordinator" || fail "the coordinator exited before it listened"
  return 1
}
wait_until 15 "the coordinator to listen on $coord (log: $work/coordinator.log)" listening
grep -q "listening on $coord (mutual TLS" "$work/coordinator.log" ||
  fail "the coordinator should take mutual TLS from its EnvironmentFile's BENCHLAB_TLS_*"
declare -A pid_of
for name in "${agents[@]}"; do
  start_unit "$agent_unit" "$name" "${ns_of[$name]}" "$work/$name.log"
  pid_of[$name]=$daemon
done
# The database where docs/packaging.md says (%S), the options from the edited defaults, the
# configuration where the unit reads it.
for expected in "coordinator --db $state_root/benchlab/coordinator/benchlab.db " \
  " --listen $coord" " --http $http"; do
  head -1 "$work/commands.out" | grep -q -- "$expected" ||
    fail "the coordinator's command line lacks \"$expected\": $(head -1 "$work/commands.out")"
done
grep -q -- " agent --config $root/etc/benchlab/agent-$s1.toml\$" "$work/commands.out" ||
  fail "the agent's command line: $(sed -n 2p "$work/commands.out")"
agents_out=$work/agents.out
all_ready() {
  local name
  for name in "${agents[@]}"; do
    any_alive "${pid_of[$name]}" || fail "agent $name exited (log: $work/$name.log)"
  done
  in_netns "$coord_ns" "$benchlab" agents --coordinator "$coord" > "$agents_out" 2>&1 || return 1
  for name in "${agents[@]}"; do
    awk -v n="$name" -v a="${addr_of[$name]}:7701" '$1 == n && $2 == "ready" && $5 == a { f = 1 }
      END { exit !f }' "$agents_out" || return 1
  done
}
wait_until 30 "all four agents to be ready at their hosts' addresses" all_ready
check "the packaged units' ExecStart lines run the coordinator and four agents, mutual TLS"

# --- the campaign ---------------------------------------------------------------------------------
cat > "$work/campaign.toml" <<TOML
name = "fleet-deb"
baseline = "hello-server"
[matrix]
connections = [2, 8]
rounds = $ROUNDS
warmup = "200ms"
duration = "600ms"
[load]
cpus = "1"
[placement]
pairs = "all"
[gates]
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
# The five hosts share one machine's CPUs: each agent sees the other hosts' targets and load as
# foreign, and a neighbour's load moves the self-test. Both are still measured and stored.
foreign_cpu = false
selftest_drift = false
[[target]]
name = "hello-server"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\\n" }
TOML
in_netns "$coord_ns" timeout 90 "$benchlab" submit "$work/campaign.toml" --coordinator "$coord" \
  --wait --progress plain > "$work/submit.out" 2>&1 || fail "submit --wait exited $?"
in_netns "$coord_ns" "$benchlab" report fleet-deb --coordinator "$coord" --format json \
  --output "$work/report.json" > "$work/report-json.out" 2>&1 || fail "report --format json"
in_netns "$coord_ns" "$benchlab" report fleet-deb --coordinator "$coord" \
  --output "$work/report.md" > "$work/report-md.out" 2>&1 || fail "report (Markdown)"

# From the run of record: the placement, each pair's windows, their overlap in time.
python3 - "$work/report.json" "$ROUNDS" "$LEVELS" "${agents[@]}" > "$work/pairs.out" 2>&1 <<'PY' \
  || fail "the run of record: $(tail -3 "$work/pairs.out")"
import json, sys
from datetime import datetime

r = json.load(open(sys.argv[1]))
rounds, levels = int(sys.argv[2]), int(sys.argv[3])
s1, l1, s2, l2 = sys.argv[4:8]
c = r["campaign"]
assert c["state"] == "done", f"the campaign is {c['state']}, not done ({c['error']})"
pairs = c["placement"].get("pairs")
assert isinstance(pairs, list) and len(pairs) == 2, f"placement {c['placement']}: not 2 pairs"
servers = {p[0] for p in pairs}
loads = {p[1] for p in pairs}
assert servers == {s1, s2} and loads == {l1, l2}, f"pairs {pairs}: not each server with a load"
assert len(servers | loads) == 4, f"pairs {pairs} share an agent"
per_pair = rounds * levels
assert c["total_windows"] == 2 * per_pair, f"total_windows {c['total_windows']}, not {2 * per_pair}"

def when(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()

spans = {}
for server, load in pairs:
    windows = [w for w in r["windows"] if w["pair"] == server and not w["noise"]]
    names = {(w["target"], w["scenario"], w["load_level"], w["round"]) for w in windows}
    expected = {("hello-server", "hello", level, rnd) for level in ("c2", "c8")
                for rnd in range(1, rounds + 1)}
    assert names == expected, f"pair {server}: windows {sorted(names)}, not {sorted(expected)}"
    assert len(windows) == per_pair, f"pair {server}: {len(windows)} windows for {per_pair} names"
    spans[server] = []
    for w in windows:
        a = next(a for a in w["attempts"] if a["newest"])
        name = f"pair {server} {w['load_level']} round {w['round']}"
        assert a["verdict"] in ("valid", "invalid"), f"{name}: {a['verdict']}: {a['reasons']}"
        assert (a["server_agent"], a["load_agent"]) == (server, load), \
            f"{name} ran on {a['server_agent']}/{a['load_agent']}, not its pair {server}/{load}"
        assert a["requests"] > 0, f"{name}: no requests"
        spans[server].append((when(a["started_at"]), when(a["ended_at"])))
    valid = sum(1 for w in windows
                for a in w["attempts"] if a["newest"] and a["verdict"] == "valid")
    print(f"pair {server}/{load}: {len(windows)} windows, {valid} valid")

a, b = spans[s1], spans[s2]
together = sum(max(0.0, min(x[1], y[1]) - max(x[0], y[0])) for x in a for y in b)
measured = sum(x[1] - x[0] for x in a)
assert together > 0, f"no window of {s1} overlaps one of {s2}: {a} against {b}"
print(f"measured at once: {together:.2f} s of {s1}'s {measured:.2f} s")
PY
cat "$work/pairs.out"
check "done on two disjoint pairs, each measured the whole matrix ($((ROUNDS * LEVELS))" \
  "windows), both at once"

for server in "$s1" "$s2"; do
  n=$(grep -c "^## Pair $server · hello · " "$work/report.md" || true)
  [ "$n" -eq "$LEVELS" ] ||
    fail "the Markdown report has $n cell headings \"## Pair $server · hello · ...\", not $LEVELS"
done
grep -q "^Campaign \*\*fleet-deb\*\*.*, done\." "$work/report.md" ||
  fail "the Markdown report's summary: $(grep -m1 '^Campaign' "$work/report.md")"
check "the Markdown report shows each pair apart ($LEVELS cells each)"

# --- the coordinator's /metrics ----------------------------------------------------------------
scrape() { in_netns "$coord_ns" curl -sf --max-time 5 "http://$http/metrics"; }
scrape > "$work/metrics.txt" || fail "GET http://$http/metrics in $coord_ns"
in_netns "$coord_ns" curl -sf --max-time 5 "http://$http/" | grep -qi "<html" ||
  fail "the coordinator does not serve the packaged dashboard at http://$http/"
grep -q '^benchlab_campaigns{state="done"} 1$' "$work/metrics.txt" ||
  fail "/metrics: $(grep '^benchlab_campaigns' "$work/metrics.txt" | tr '\n' ' ')"
stored=$(python3 -c 'import json, sys
windows = json.load(open(sys.argv[1]))["windows"]
print(sum(len(w["attempts"]) for w in windows))' "$work/report.json")
counted=$(awk '/^benchlab_windows_total\{/ { n += $2 } END { print n + 0 }' "$work/metrics.txt")
[ "$counted" -eq "$stored" ] ||
  fail "/metrics counts $counted windows in benchlab_windows_total, the store $stored attempts"
if command -v promtool > /dev/null; then
  promtool check metrics < "$work/metrics.txt" > "$work/promtool.out" 2>&1 ||
    fail "promtool check metrics: $(head -5 "$work/promtool.out")"
  check "the coordinator's /metrics ($counted windows) passes promtool check metrics"
else
  check "the coordinator's /metrics counts $counted windows (promtool not installed: not checked)"
fi

# --- stopping -----------------------------------------------------------------------------------
for pid in "$coordinator" "${pid_of[@]}"; do kill -TERM "$pid"; done
for pid in "$coordinator" "${pid_of[@]}"; do
  wait "$pid" || fail "a daemon (pid $pid) exited $? after SIGTERM"
done
tracked=()
for ns in $(ip netns list | awk -v p="$prefix-" 'index($1, p) == 1 { print $1 }'); do
  left=$(ip netns pids "$ns" | tr '\n' ' ')
  [ -z "$left" ] || fail "processes left in $ns: $left"
done
[ -f "$state_root/benchlab/coordinator/benchlab.db" ] ||
  fail "no database at %S/benchlab/coordinator/benchlab.db ($state_root)"
for name in "${agents[@]}"; do
  [ -f "$state_root/benchlab/agent-$name/instance_proof" ] ||
    fail "agent $name kept no instance proof in its StateDirectory," \
      "$state_root/benchlab/agent-$name"
done
if [ "$var_lib_before" = no ] && [ -e /var/lib/benchlab ]; then
  fail "a daemon wrote /var/lib/benchlab: the unit's state directory was not honoured"
fi
check "the daemons stop on SIGTERM; their state is in the units' state directories only"

"$lab" down --prefix "$prefix" || fail "netns-lab.sh down"
lab_up=0
left=$(ip netns list | grep -c "^$prefix-" || true)
[ "$left" -eq 0 ] || fail "$left namespaces of $prefix left after down"
expect_none_left "the fleet"
check "the lab is down: no namespace, no benchlab or hello-server process left"
echo "$passed checks passed in $((SECONDS - started_at)) s"

# shellcheck shell=bash
# What the end-to-end scripts share; each sources it first: . "$(dirname "$0")/lib.sh"
#
# - work: a fresh scratch directory, /tmp/benchlab-<script>-XXXXXX, removed at exit.
# - fail MESSAGE: prints FAIL and the last lines of $work/*.log (and whatever the script's own
#   on_fail function prints), then exits 1. check MESSAGE: prints ok and counts it in $passed.
# - wait_until SECONDS WHAT COMMAND...: runs COMMAND every 50 ms until it succeeds; fails
#   naming WHAT when SECONDS pass first. poll SECONDS COMMAND... is the same returning 1.
# - track PID...: processes the script started; at exit each gets SIGTERM, up to 5 s to exit,
#   then SIGKILL, before the script's own on_exit function runs (the script fails if it does)
#   and $work is removed (kept when KEEP is set).
# - expect_none_left WHAT [PID...]: fails naming the processes left behind unless, within 5 s,
#   none of the kinds in $kinds (an extended regular expression on the process name; nginx,
#   hello-server and benchlab unless the script changes it) that this script's session started
#   runs any more, other than the PIDs named.
# - leaves_lab_dir PID | leaves_lab_dir_in FILE: the embedded lab's work directory
#   (/tmp/benchlab-run-XXXXXX), which `benchlab run` removes only after a run with every window
#   measured, is removed at exit with $work (kept when KEEP is set). leaves_lab_dir takes it from
#   the daemons of the running `benchlab run` PID (their working directory), before the run is
#   killed; leaves_lab_dir_in from the "logs kept in DIR" line of a finished run's stderr, FILE.
set -euo pipefail

work=$(mktemp -d "/tmp/benchlab-$(basename "$0" _test.sh)-XXXXXX")
passed=0
tracked=()
kinds='nginx|hello-server|benchlab'

fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "$work"/*.log; do
    [ -f "$f" ] && { echo "== $f" >&2; tail -8 "$f" >&2; }
  done
  if declare -F on_fail > /dev/null; then on_fail >&2 || true; fi
  exit 1
}

check() { echo "ok: $*"; passed=$((passed + 1)); }
# expect_status STATUS COMMAND...: runs it with stdout to $work/out and stderr to $work/err, and
# fails the test (printing both) unless it exits STATUS.
expect_status() {
  local want=$1; shift
  set +e
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || { cat "$work/out" "$work/err"; fail "$* exited $got, want $want"; }
}

poll() {  # poll SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" > /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local seconds=$1 what=$2; shift 2
  poll "$seconds" "$@" || fail "waited ${seconds}s for $what"
}

track() { tracked+=("$@"); }

# This script's session: the daemons and the targets they start stay in it (they only start new
# process groups), and the processes of other people's work on the machine are in others.
session=$(ps -o sid= -p $$ | tr -d ' ')
_e2e_before=" $(ps -e -o pid= | tr '\n' ' ' | tr -s ' ') "

left_behind() {  # left_behind [PID...]: "pid(name) ..." of $kinds started since the script began
  local ignore=" $* " pid sid name
  while read -r pid sid name; do
    [ "$sid" = "$session" ] && [[ "$name" =~ ^($kinds)$ ]] || continue
    [[ "$_e2e_before" == *" $pid "* || "$ignore" == *" $pid "* ]] && continue
    echo -n "$pid($name) "
  done < <(ps -e -o pid=,sid=,comm=)
}

none_left() { [ -z "$(left_behind "$@")" ]; }

expect_none_left() {  # expect_none_left WHAT [PID...]
  local what=$1; shift
  poll 5 none_left "$@" || fail "$what: left behind after 5s: $(left_behind "$@")"
}

any_alive() {  # any_alive PID...: a zombie (exited, not yet waited for) does not count
  local pid stat
  for pid in "$@"; do
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
    stat=${stat##*) }
    [ "${stat:0:1}" = Z ] || return 0
  done
  return 1
}

stop_tracked() {
  local pid
  for pid in "${tracked[@]}"; do kill -TERM "$pid" 2> /dev/null || true; done
  poll 5 eval '! any_alive "${tracked[@]}"' || true
  for pid in "${tracked[@]}"; do kill -KILL "$pid" 2> /dev/null || true; done
  tracked=()
}

lab_dirs=()
leaves_lab_dir() {  # leaves_lab_dir PID
  local daemon dir
  for daemon in $(pgrep -f -- "--parent-pid $1\$"); do
    dir=$(readlink "/proc/$daemon/cwd" 2> /dev/null) || continue
    [[ "$dir" == /tmp/benchlab-run-?????? ]] && lab_dirs+=("$dir")
  done
  return 0
}

leaves_lab_dir_in() {  # leaves_lab_dir_in FILE
  local dir
  dir=$(sed -n 's|^benchlab [a-z]*: logs kept in \(/tmp/benchlab-run-[^/ ]*\)$|\1|p' "$1")
  [ -z "$dir" ] || lab_dirs+=("$dir")
}

cleanup() {
  local status=$?
  stop_tracked
  if declare -F on_exit > /dev/null; then on_exit || status=1; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work" "${lab_dirs[@]}"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- a fleet on loopback ------------------------------------------------------------------------
# Daemons are started in the script's own shell, never in a subshell or a command substitution:
# the started command execs, so $! is the daemon's pid, which the script signals and waits for.
# local_coordinator_start [http]: a coordinator on 127.0.0.1, a free port, its store
#   $work/lab.db and its stderr $work/coordinator.log; waits up to 10 s for its port file
#   ($work/port). Sets coordinator (the pid, tracked) and port. With http it also serves HTTP
#   (--http 127.0.0.1:0, its port in $work/http-port, waited for too) and sets http.
# local_agent_config NAME ROLE PORT [LINE...]: prints the configuration of agent NAME in ROLE
#   (server or load) for the coordinator at 127.0.0.1:PORT, its state in $work/ROLE-state and
#   $work/ROLE-runs, then each LINE (top-level keys such as spool_dir or metrics_listen). A
#   server agent's catalogue holds "hello": $work/hello-server --port {port}, a link to
#   $bin/hello-server made here, whose path tells this script's targets apart for pgrep -f.
# agent_start KEY [NS]: an agent with configuration $work/KEY.toml, its stderr $work/KEY.log, in
#   network namespace NS if given; sets the variable KEY to its pid, tracked.
local_coordinator_start() {
  local files=("$work/port") extra=() what="the coordinator's port file"
  if [ "${1:-}" = http ]; then
    files+=("$work/http-port")
    what+=s
    extra=(--http 127.0.0.1:0 --http-port-file "$work/http-port")
  fi
  "$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/lab.db" --port-file "$work/port" \
    "${extra[@]}" 2> "$work/coordinator.log" &
  coordinator=$!
  track $coordinator
  wait_until 10 "$what" all_files "${files[@]}"
  port=$(cat "$work/port")
  [ "${1:-}" != http ] || http=$(cat "$work/http-port")
}

all_files() {  # all_files FILE...: each exists and is not empty
  local f
  for f in "$@"; do [ -s "$f" ] || return 1; done
}

local_agent_config() {
  local name=$1 role=$2 port=$3
  shift 3
  cat <<TOML
name = "$name"
roles = ["$role"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/$role-state"
run_root = "$work/$role-runs"
TOML
  [ $# -eq 0 ] || printf '%s\n' "$@"
  [ "$role" = server ] || return 0
  [ -e "$work/hello-server" ] || ln -s "$bin/hello-server" "$work/hello-server"
  cat <<TOML
[[target]]
name = "hello"
command = ["$work/hello-server", "--port", "{port}"]
TOML
}

agent_start() {
  local key=$1 ns=${2:-} netns=()
  [ -z "$ns" ] || netns=(ip netns exec "$ns")
  "${netns[@]}" "$bin/benchlab" agent --config "$work/$key.toml" 2> "$work/$key.log" &
  printf -v "$key" %s "$!"
  track "$!"
}

# --- a fleet in the netns lab (deploy/netns-lab.sh) ---------------------------------------------
# lab_start LAB PREFIX [PAIRS]: brings the lab up under PREFIX (coord 10.77.0.1, server 10.77.0.2,
#   load 10.77.0.3, intruder 10.77.0.4; with PAIRS 2, server-2 10.77.0.5 and load-2 10.77.0.6,
#   and so on); skips the script (exit 77, the reason printed) where this machine cannot host it.
#   Sets lab_up=1; the script's on_exit calls lab_stop LAB PREFIX, which removes every host.
# lab_certificates BIN DIR COORD_HOST [AGENT HOST]...: a CA in DIR and certificates for the
#   coordinator "coord", each agent, and the operator "op", whose identity the commands of the
#   script then use (BENCHLAB_TLS_* exported).
# lab_agent_config NAME ROLE ADDRESS COORDINATOR CA_DIR: prints an agent's configuration (listen
#   and advertise ADDRESS:7701, state in $work/NAME-state, mutual TLS); a server agent's catalogue
#   holds hello-server listening on every address (readiness is probed at the advertised
#   address). The script may set lab_hello_server (the program; $bin/hello-server unless set)
#   and lab_state_dir=0 (no state_dir or run_root: the agent keeps them in $STATE_DIRECTORY, as
#   under its systemd unit).
# lab_coordinator_start NS ADDRESS CA_DIR: a coordinator in NS listening on ADDRESS (host:port)
#   with mutual TLS (the certificate "coord" of lab_certificates), its store $work/lab.db and
#   its stderr $work/coordinator.log; waits up to 10 s for its port file. Sets coordinator (the
#   pid, tracked). Agents are started with agent_start KEY NS.
# in_netns NS COMMAND...: runs COMMAND in NS. ns_count NS COMM: how many processes named COMM
#   run in NS.
lab_up=0
lab_start() {
  local lab=$1 prefix=$2 pairs=${3:-1} status
  set +e
  "$lab" up --prefix "$prefix" --pairs "$pairs" > "$work/lab.out" 2> "$work/lab.err"
  status=$?
  set -e
  if [ "$status" -eq 3 ]; then
    echo "SKIP: $(cat "$work/lab.err")"
    exit 77
  fi
  [ "$status" -eq 0 ] || { cat "$work/lab.err" >&2; fail "netns-lab.sh up exited $status"; }
  lab_up=1
}

lab_stop() { [ "$lab_up" -eq 0 ] || "$1" down --prefix "$2"; lab_up=0; }

lab_certificates() {
  local bin=$1 dir=$2 coord_host=$3
  shift 3
  "$bin/benchlab" ca init --dir "$dir" > /dev/null
  "$bin/benchlab" ca issue --dir "$dir" --name coord --role coordinator --host "$coord_host" \
    > /dev/null
  while [ $# -ge 2 ]; do
    "$bin/benchlab" ca issue --dir "$dir" --name "$1" --role agent --host "$2" > /dev/null
    shift 2
  done
  "$bin/benchlab" ca issue --dir "$dir" --name op --role operator > /dev/null
  export BENCHLAB_TLS_CA=$dir/ca.pem BENCHLAB_TLS_CERT=$dir/op.pem BENCHLAB_TLS_KEY=$dir/op.key
  export BENCHLAB_TLS_CRL=$dir/crl.pem
}

lab_agent_config() {
  local name=$1 role=$2 address=$3 coordinator=$4 ca=$5
  cat <<TOML
name = "$name"
roles = ["$role"]
coordinator = "$coordinator"
listen = "$address:7701"
advertise = "$address:7701"
allowed_targets = ["10.77.0.0/24"]
TOML
  [ "${lab_state_dir:-1}" = 0 ] || cat <<TOML
state_dir = "$work/$name-state"
run_root = "$work/$name-runs"
TOML
  cat <<TOML
[tls]
ca = "$ca/ca.pem"
cert = "$ca/$name.pem"
key = "$ca/$name.key"
crl = "$ca/crl.pem"
TOML
  [ "$role" = server ] || return 0
  cat <<TOML
[[target]]
name = "hello-server"
command = ["${lab_hello_server:-$bin/hello-server}", "--host", "0.0.0.0", "--port", "{port}"]
TOML
}

lab_coordinator_start() {
  local ns=$1 address=$2 ca=$3
  ip netns exec "$ns" "$bin/benchlab" coordinator --listen "$address" --db "$work/lab.db" \
    --port-file "$work/port" --tls-ca "$ca/ca.pem" --tls-cert "$ca/coord.pem" \
    --tls-key "$ca/coord.key" --tls-crl "$ca/crl.pem" 2> "$work/coordinator.log" &
  coordinator=$!
  track $coordinator
  wait_until 10 "the coordinator's port file" test -s "$work/port"
}

in_netns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

ns_count() {  # ns_count NS COMM
  local pid n=0
  for pid in $(ip netns pids "$1"); do
    [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = "$2" ] && n=$((n + 1))
  done
  echo "$n"
}

# --- a repository to bisect ---------------------------------------------------------------------
# bisect_repo DIR [HOST]: a git repository of eight commits of start.sh, which runs
#   $bin/hello-server (listening on HOST, default its own) with 1,000 ns of work per request, and
#   41,000 ns from the sixth commit on; the fourth commit has no start.sh, so its build (a copy of
#   it) fails. Sets oids (the eight ids, oldest first) and culprit (the sixth).
bisect_repo() {
  local repo=$1 listen="" n ns
  [ -z "${2:-}" ] || listen="--host $2 "
  git init -q -b main "$repo"
  git -C "$repo" config user.email lab@example.invalid
  git -C "$repo" config user.name lab
  oids=()
  for n in 0 1 2 3 4 5 6 7; do
    ns=1000
    [ "$n" -ge 5 ] && ns=41000
    if [ "$n" -eq 3 ]; then
      rm -f "$repo/start.sh"
    else
      printf '#!/bin/sh\nexec %s %s--port "$1" --work-ns %s\n' "$bin/hello-server" "$listen" "$ns" \
        > "$repo/start.sh"
    fi
    echo "change $n" > "$repo/CHANGES"
    git -C "$repo" add -A
    git -C "$repo" commit -q -m "change $n"
    oids+=("$(git -C "$repo" rev-parse HEAD)")
  done
  culprit=${oids[5]}
}

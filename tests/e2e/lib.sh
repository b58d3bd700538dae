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

cleanup() {
  local status=$?
  stop_tracked
  if declare -F on_exit > /dev/null; then on_exit || status=1; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

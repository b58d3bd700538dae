#!/usr/bin/env bash
# A fleet on one machine: three "hosts" (coordinator, server, load), each a network namespace with
# its own address on one subnet, and a fourth, "intruder", on the same network but outside the
# fleet (a stranger's machine, to try what it can and cannot do), joined by a bridge that lives
# in a namespace of its own. Nothing is
# added to the machine's own network namespace, so several labs (under different prefixes) can be
# up at once, each with the same addresses, and none of them can reach or be reached from outside.
#
#   netns-lab.sh up     [--prefix NAME]   create the lab and print its hosts' addresses
#   netns-lab.sh down   [--prefix NAME]   stop what runs inside it and remove it (idempotent)
#   netns-lab.sh status [--prefix NAME]   print the hosts and addresses; exit 1 unless fully up
#
# Namespaces: NAME-coord 10.77.0.1, NAME-server 10.77.0.2, NAME-load 10.77.0.3, NAME-intruder
# 10.77.0.4 (each on eth0, /24, with lo up) and NAME-net (the bridge br0 and the other ends of
# the veth pairs).
# NAME defaults to "bl". Run a process on a host with: ip netns exec NAME-server COMMAND...
#
# Exit status: 0 done; 1 failed (whatever was created is removed again); 2 bad usage;
# 3 this machine cannot host a lab (not root, no `ip netns`, no permission to create namespaces).
set -Eeuo pipefail

readonly SUBNET=10.77.0
readonly HOSTS=(coord server load intruder)  # host i gets $SUBNET.(i+1)
readonly NAMESPACES=$((${#HOSTS[@]} + 1))    # the hosts and NAME-net

die() { echo "netns-lab.sh: $2" >&2; exit "$1"; }

usage() {
  echo "usage: netns-lab.sh up|down|status [--prefix NAME]  (NAME: [a-z0-9-], default bl)" >&2
  exit 2
}

action=${1:-}
[ $# -gt 0 ] && shift
prefix=bl
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    *) usage ;;
  esac
done
case $action in up|down|status) ;; *) usage ;; esac
[[ $prefix =~ ^[a-z0-9][a-z0-9-]{0,31}$ ]] ||
  die 2 "--prefix must be 1-32 of [a-z0-9-], not starting with -, got \"$prefix\""

namespaces() { echo "$prefix-net"; for h in "${HOSTS[@]}"; do echo "$prefix-$h"; done; }
exists() { [ -e "/run/netns/$1" ]; }
address() { echo "$SUBNET.$(($1 + 1))"; }

preflight() {
  [ "$(id -u)" -eq 0 ] ||
    die 3 "needs root (CAP_SYS_ADMIN) to manage network namespaces; run it with sudo"
  command -v ip > /dev/null || die 3 "the ip command (iproute2) is not installed"
  ip netns list > /dev/null 2>&1 || die 3 "\`ip netns\` is unavailable on this machine"
}

print_hosts() {
  local i
  for i in "${!HOSTS[@]}"; do
    printf '%-9s %-20s %s\n' "${HOSTS[$i]}" "$prefix-${HOSTS[$i]}" "$(address "$i")"
  done
}

# Whether any of the pids still runs; a zombie (one whose parent has not reaped it yet) does not.
any_alive() {
  local pid stat
  for pid; do
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
    stat=${stat##*) }
    [ "${stat:0:1}" = Z ] || return 0
  done
  return 1
}

# Stops every process still inside one of the lab's namespaces (SIGTERM, then SIGKILL after 3 s):
# a namespace that a process still holds would outlive `ip netns delete`, unseen.
stop_processes() {
  local ns pids=() deadline
  for ns in $(namespaces); do
    if exists "$ns"; then
      mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2> /dev/null || true)
    fi
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  echo "netns-lab.sh: stopping processes inside the lab: ${pids[*]}" >&2
  kill -TERM "${pids[@]}" 2> /dev/null || true
  deadline=$((SECONDS + 3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    any_alive "${pids[@]}" || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2> /dev/null || true
}

down() {
  local ns
  stop_processes
  for ns in $(namespaces); do
    if exists "$ns"; then ip netns delete "$ns"; fi
  done
}

up() {
  local ns i h n=0
  for ns in $(namespaces); do if exists "$ns"; then n=$((n + 1)); fi; done
  if [ "$n" -eq "$NAMESPACES" ] && status > /dev/null; then
    echo "lab $prefix is already up" >&2
    print_hosts
    return 0
  fi
  [ "$n" -eq 0 ] ||
    die 1 "lab $prefix is partly up ($n of $NAMESPACES namespaces): netns-lab.sh down --prefix $prefix"

  # The first namespace tells whether this machine lets us create any.
  ip netns add "$prefix-net" 2> /dev/null ||
    die 3 "cannot create network namespaces here (ip netns add failed: no CAP_SYS_ADMIN?)"
  trap 'trap - ERR; echo "netns-lab.sh: setting up lab $prefix failed; removing it" >&2
        down; exit 1' ERR
  # No spanning tree, so each port forwards as soon as it is up.
  ip -n "$prefix-net" link add name br0 type bridge stp_state 0 forward_delay 0
  ip -n "$prefix-net" link set dev lo up
  ip -n "$prefix-net" link set dev br0 up
  for i in "${!HOSTS[@]}"; do
    h=${HOSTS[$i]}
    ns=$prefix-$h
    ip netns add "$ns"
    # Made inside the namespaces, so the machine's own namespace never holds either end.
    ip -n "$prefix-net" link add name "port-$h" type veth peer name eth0 netns "$ns"
    ip -n "$prefix-net" link set dev "port-$h" master br0 up
    ip -n "$ns" link set dev lo up
    ip -n "$ns" addr add "$(address "$i")/24" dev eth0
    ip -n "$ns" link set dev eth0 up
  done
  local forwarding tries=0
  until forwarding=$(bridge -netns "$prefix-net" link show | grep -c 'state forwarding') &&
      [ "$forwarding" -eq ${#HOSTS[@]} ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || { echo "netns-lab.sh: the bridge's ports do not forward" >&2; false; }
    sleep 0.1
  done
  trap - ERR
  print_hosts
}

status() {
  local i ns addr ready=0 present=0
  for i in "${!HOSTS[@]}"; do
    ns=$prefix-${HOSTS[$i]}
    if exists "$ns"; then
      present=$((present + 1))
      addr=$(ip -n "$ns" -4 -o addr show dev eth0 2> /dev/null | awk '{print $4}') || addr=""
      printf '%-9s %-20s %-16s processes: %s\n' "${HOSTS[$i]}" "$ns" "${addr:-no address}" \
        "$(ip netns pids "$ns" 2> /dev/null | wc -l)"
      if [ -n "$addr" ]; then ready=$((ready + 1)); fi
    else
      printf '%-9s %-20s absent\n' "${HOSTS[$i]}" "$ns"
    fi
  done
  if exists "$prefix-net"; then present=$((present + 1)); fi
  if [ "$present" -eq "$NAMESPACES" ] && [ "$ready" -eq ${#HOSTS[@]} ]; then
    echo "lab $prefix is up"
    return 0
  fi
  if [ "$present" -eq 0 ]; then
    echo "lab $prefix is down"
  else
    echo "lab $prefix is partly up ($present of $NAMESPACES namespaces);" \
      "netns-lab.sh down --prefix $prefix removes it"
  fi
  return 1
}

preflight
"$action"

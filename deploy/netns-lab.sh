#!/usr/bin/env bash
# A fleet on one machine: three "hosts" (coordinator, server, load), each a network namespace with
# its own address on one subnet, and a fourth, "intruder", on the same network but outside the
# fleet (a stranger's machine, to try what it can and cannot do), joined by a bridge that lives
# in a namespace of its own. With --pairs N, N-1 more pairs of hosts (server-2 and load-2, ...)
# join them, for fleet campaigns that measure on several pairs at once. Nothing is
# added to the machine's own network namespace, so several labs (under different prefixes) can be
# up at once, each with the same addresses, and none of them can reach or be reached from outside.
#
#   netns-lab.sh up     [--prefix NAME] [--pairs N]  create the lab and print its hosts' addresses
#   netns-lab.sh down   [--prefix NAME]   stop what runs inside it and remove it (idempotent;
#                                         every host of the prefix, whatever --pairs made it)
#   netns-lab.sh status [--prefix NAME] [--pairs N]  print the hosts and addresses; exit 1
#                                         unless fully up (without --pairs: as many pairs as
#                                         the lab has)
#
# Namespaces: NAME-coord 10.77.0.1, NAME-server 10.77.0.2, NAME-load 10.77.0.3, NAME-intruder
# 10.77.0.4, then per further pair k = 2..N NAME-server-k and NAME-load-k (10.77.0.5 and
# 10.77.0.6 for k = 2, 10.77.0.7 and 10.77.0.8 for k = 3, ...), each on eth0, /24, with lo up;
# and NAME-net (the bridge br0 and the other ends of the veth pairs).
# NAME defaults to "bl", N to 1 (at most 4). Run a process on a host with:
# ip netns exec NAME-server COMMAND...
#
# Exit status: 0 done; 1 failed (whatever was created is removed again); 2 bad usage;
# 3 this machine cannot host a lab (not root, no `ip netns`, no permission to create namespaces).
set -Eeuo pipefail

readonly SUBNET=10.77.0
readonly MAX_PAIRS=4

die() { echo "netns-lab.sh: $2" >&2; exit "$1"; }

usage() {
  echo "usage: netns-lab.sh up|down|status [--prefix NAME] [--pairs N]" \
    "(NAME: [a-z0-9-], default bl; N: 1 to $MAX_PAIRS, default 1)" >&2
  exit 2
}

action=${1:-}
[ $# -gt 0 ] && shift
prefix=bl
pairs=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --pairs) [ $# -ge 2 ] || usage; pairs=$2; shift 2 ;;
    --pairs=*) pairs=${1#--pairs=}; shift ;;
    *) usage ;;
  esac
done
case $action in up|down|status) ;; *) usage ;; esac
[[ $prefix =~ ^[a-z0-9][a-z0-9-]{0,31}$ ]] ||
  die 2 "--prefix must be 1-32 of [a-z0-9-], not starting with -, got \"$prefix\""
[ -z "$pairs" ] || [[ $pairs =~ ^[1-9][0-9]*$ && $pairs -le $MAX_PAIRS ]] ||
  die 2 "--pairs must be a whole number from 1 to $MAX_PAIRS, got \"$pairs\""

exists() { [ -e "/run/netns/$1" ]; }
address() { echo "$SUBNET.$(($1 + 1))"; }

# Every namespace of this lab that exists, whatever --pairs it was made with: NAME-net and the
# hosts' names, never another lab's (a prefix "bl" must not take "bl-e2e-coord" along).
existing() {
  local path ns
  for path in /run/netns/"$prefix"-*; do
    [ -e "$path" ] || continue
    ns=${path##*/}
    [[ ${ns#"$prefix"-} =~ ^(net|coord|server|load|intruder|server-[0-9]+|load-[0-9]+)$ ]] &&
      echo "$ns"
  done
}

# The pairs of the lab as it exists: the highest k of a NAME-server-k or NAME-load-k, else 1.
existing_pairs() {
  local ns k n=1
  for ns in $(existing); do
    k=${ns##*-}
    [[ $k =~ ^[0-9]+$ ]] && [ "$k" -gt "$n" ] && n=$k
  done
  echo "$n"
}

# The hosts of a lab of `pairs` pairs, in address order: host i gets $SUBNET.(i+1).
if [ -z "$pairs" ]; then
  if [ "$action" = status ]; then pairs=$(existing_pairs); else pairs=1; fi
fi
HOSTS=(coord server load intruder)
for ((k = 2; k <= pairs; k++)); do HOSTS+=("server-$k" "load-$k"); done
readonly HOSTS
readonly NAMESPACES=$((${#HOSTS[@]} + 1))  # the hosts and NAME-net

namespaces() { echo "$prefix-net"; for h in "${HOSTS[@]}"; do echo "$prefix-$h"; done; }

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
  for ns in $(existing); do
    mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2> /dev/null || true)
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

# Every host of the prefix goes, however many pairs the lab was made with.
down() {
  local ns
  stop_processes
  for ns in $(existing); do ip netns delete "$ns"; done
}

up() {
  local ns i h n=0
  for ns in $(existing); do n=$((n + 1)); done
  if [ "$n" -eq "$NAMESPACES" ] && status > /dev/null; then
    echo "lab $prefix is already up" >&2
    print_hosts
    return 0
  fi
  local made="$n namespaces; --pairs $pairs makes $NAMESPACES"
  [ "$n" -eq 0 ] ||
    die 1 "lab $prefix is partly up or has other pairs ($made): netns-lab.sh down --prefix $prefix"

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
  local i ns addr ready=0 present=0 all
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
  all=$(existing | wc -l)
  if [ "$present" -eq "$NAMESPACES" ] && [ "$ready" -eq ${#HOSTS[@]} ] && [ "$all" -eq "$present" ]
  then
    echo "lab $prefix is up ($pairs pair$([ "$pairs" -eq 1 ] || echo s))"
    return 0
  fi
  if [ "$all" -gt "$present" ]; then
    echo "lab $prefix has $all namespaces, more than the $NAMESPACES of --pairs $pairs;" \
      "netns-lab.sh status --prefix $prefix lists them all"
  elif [ "$present" -eq 0 ]; then
    echo "lab $prefix is down"
  else
    echo "lab $prefix is partly up ($present of $NAMESPACES namespaces);" \
      "netns-lab.sh down --prefix $prefix removes it"
  fi
  return 1
}

preflight
"$action"

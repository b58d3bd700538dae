#!/usr/bin/env bash
# Where the load generator's CPU goes, per engine: hello-server pinned to one CPU, `benchlab
# load` pinned to another and sampled by `perf record -e cpu-clock` (the software clock: no
# hardware counters needed), once per engine and depth. Prints each run's CPU per response and
# the share of its samples in: the kernel's TCP/IP and socket code (what every HTTP client pays
# per request), system-call entry and file lookup, io_uring, epoll, benchlab's own code and
# libraries, and the rest of the kernel (scheduling, timers, memory).
# A benchmark, not a test: it asserts nothing. Run it when the machine is quiet.
#
# Usage: bench/loadgen_profile.sh BIN_DIR [CONNECTIONS=50] [SECONDS=5]
#   Environment: PORT (18081), SERVER_CPU (0), CLIENT_CPU (1), DEPTHS ("1 16"),
#   ENGINES ("epoll io_uring").
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [CONNECTIONS] [SECONDS]"}
connections=${2:-50}
seconds=${3:-5}
port=${PORT:-18081}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
depths=${DEPTHS:-"1 16"}
engines=${ENGINES:-"epoll io_uring"}

for tool in perf taskset awk; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required (Debian: linux-perf)" >&2; exit 2; }
done
work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

taskset -c "$server_cpu" "$bin_dir/hello-server" --port "$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.05
done

echo "$(date -u +%FT%TZ) $(uptime)"
printf "%-9s %5s %8s %7s %8s %9s %6s %6s %6s\n" engine depth "us/req" "tcp/ip" syscall io_uring epoll "user" other
for depth in $depths; do
  for engine in $engines; do
    taskset -c "$client_cpu" perf record -q -e cpu-clock -F 4000 -o "$work/perf.data" \
      "$bin_dir/benchlab" load -t 1 -c "$connections" -d "${seconds}s" --depth "$depth" \
      --engine "$engine" "http://127.0.0.1:$port/" >"$work/out" 2>/dev/null
    us=$(awk '{for (i = 2; i <= NF; ++i) if ($i == "us/request") print $(i - 1)}' "$work/out")
    perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null |
      awk -v e="$engine" -v d="$depth" -v us="$us" '
        /^ +[0-9.]+%/ {
          p = $1; sub("%", "", p); dso = $2; s = $4
          if (dso != "[kernel.kallsyms]") user += p
          else if (s ~ /io_uring|^io_|^__io_/) ring += p
          else if (s ~ /^ep_|epoll/) ep += p
          else if (s ~ /syscall|entry_SYSCALL|^fdget|^fget|^fput|__x64_sys|exit_to_user/) sc += p
          else if (s ~ /tcp|skb|inet|^ip_|dev_|^net_|sock|loopback|bbr|netif|napi|copy_|datagram|^nf_|dst_|^sk_/) net += p
          else other += p
        }
        END { printf "%-9s %5s %8s %6.1f%% %7.1f%% %8.1f%% %5.1f%% %5.1f%% %5.1f%%\n", e, d, us, net, sc, ring, ep, user, other }'
  done
done
echo "(user: benchlab, libc and the vdso in user space; other: the rest of the kernel)"

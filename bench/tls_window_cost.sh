#!/usr/bin/env bash
# What mutual TLS costs a window: the same campaign on the same three daemons on this machine,
# once with plaintext gRPC and once with mutual TLS (certificates from `benchlab ca`), in
# alternating order PAIRS times, so drift of the machine falls on both. A window's control
# traffic (claim, self-test, StartTarget, conformance, Mark, RunLoad, StopTarget, the result's
# acknowledgement) rides on channels opened once per daemon, so TLS adds one handshake per
# channel and the cost of encrypting each call. The figure is each campaign's wall time per
# window (from `submit --wait` to its return), and the ratio TLS / plaintext; the measured
# intervals (warm-up and duration) are the same in both. The target: TLS adds at most 1%.
# A benchmark, not a test: it asserts nothing and prints figures with the conditions.
#
# Usage: bench/tls_window_cost.sh BIN_DIR [PAIRS=3] [WINDOWS=8]
set -euo pipefail
bin=$(cd "${1:?"usage: $0 BIN_DIR [PAIRS] [WINDOWS]"}" && pwd)
pairs=${2:-3}
windows=${3:-8}
work=$(mktemp -d /tmp/benchlab-tls-bench-XXXXXX)
pids=()
stop_lab() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
cleanup() { stop_lab; rm -rf "$work"; }
trap cleanup EXIT

"$bin/benchlab" ca init --dir "$work/ca" >/dev/null
"$bin/benchlab" ca issue --dir "$work/ca" --name coord --role coordinator --host 127.0.0.1 >/dev/null
for name in server load; do
  "$bin/benchlab" ca issue --dir "$work/ca" --name "$name" --role agent --host 127.0.0.1 >/dev/null
done
"$bin/benchlab" ca issue --dir "$work/ca" --name op --role operator >/dev/null

# run MODE N: one lab (plain or tls), one campaign of WINDOWS windows; prints its wall seconds.
run() {
  local mode=$1 n=$2 dir=$work/$1-$2 tls=() client=()
  mkdir -p "$dir"
  if [[ $mode == tls ]]; then
    tls=(--tls-ca "$work/ca/ca.pem" --tls-cert "$work/ca/coord.pem" --tls-key "$work/ca/coord.key")
    client=(--tls-ca "$work/ca/ca.pem" --tls-cert "$work/ca/op.pem" --tls-key "$work/ca/op.key")
  fi
  "$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$dir/lab.db" --port-file "$dir/port" \
    "${tls[@]}" 2>"$dir/coordinator.log" &
  pids+=($!)
  for _ in $(seq 200); do [[ -s "$dir/port" ]] && break; sleep 0.05; done
  local address="127.0.0.1:$(cat "$dir/port")" role
  for role in server load; do
    cat >"$dir/$role.toml" <<TOML
name = "$role"
roles = ["$role"]
coordinator = "$address"
state_dir = "$dir/$role-state"
run_root = "$dir/$role"
TOML
    [[ $mode == tls ]] && cat >>"$dir/$role.toml" <<TOML
[tls]
ca = "$work/ca/ca.pem"
cert = "$work/ca/$role.pem"
key = "$work/ca/$role.key"
TOML
    [[ $role == server ]] && cat >>"$dir/$role.toml" <<TOML
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
TOML
    "$bin/benchlab" agent --config "$dir/$role.toml" 2>"$dir/$role.log" &
    pids+=($!)
  done
  for _ in $(seq 200); do
    [[ $("$bin/benchlab" agents --coordinator "$address" "${client[@]}" 2>/dev/null |
      grep -c ready) -ge 2 ]] && break
    sleep 0.05
  done
  cat >"$dir/c.toml" <<TOML
name = "tls-bench"
baseline = "hello"
[matrix]
connections = [4]
rounds = $windows
warmup = "100ms"
duration = "500ms"
[load]
cpus = "1"
[gates]
mode = "warn"
[[target]]
name = "hello"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
  local t0 t1
  t0=$(date +%s%N)
  "$bin/benchlab" submit "$dir/c.toml" --coordinator "$address" "${client[@]}" --wait \
    >"$dir/submit.log" 2>&1
  t1=$(date +%s%N)
  stop_lab
  awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

echo "conditions: $(nproc) CPUs, $(uptime | sed 's/.*load average/load average/')"
echo "campaign: $windows windows of 100 ms warm-up + 500 ms, one target, plaintext and mutual TLS"
: >"$work/figures"
for pair in $(seq "$pairs"); do
  if ((pair % 2)); then order=(plain tls); else order=(tls plain); fi
  for mode in "${order[@]}"; do
    s=$(run "$mode" "$pair")
    printf '  pair %d %-5s %7.3f s, %6.1f ms a window\n' "$pair" "$mode" "$s" \
      "$(awk -v s="$s" -v n="$windows" 'BEGIN { print s * 1000 / n }')"
    echo "$mode $s" >>"$work/figures"
  done
done
awk -v n="$windows" '
  { sum[$1] += $2; count[$1]++ }
  END {
    p = sum["plain"] / count["plain"]; t = sum["tls"] / count["tls"]
    printf "mean per window: plaintext %.1f ms, mutual TLS %.1f ms; TLS / plaintext = %.4fx (%+.2f%%)\n",
      p * 1000 / n, t * 1000 / n, t / p, (t / p - 1) * 100
  }' "$work/figures"
echo "conditions at the end: $(uptime | sed 's/.*load average/load average/')"

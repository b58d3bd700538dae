#!/usr/bin/env bash
# HTTPS: `benchlab load`, with each I/O engine, against wrk on nginx serving TLS 1.3 (session
# tickets on), and benchlab's handshake figures against nginx's own counter and openssl s_time.
# nginx (one worker) is pinned to one CPU and each client in turn to another. Two loads:
#   keep-alive: CONNECTIONS connections kept for the run (one full handshake each);
#   reconnect:  one request per connection: wrk with "Connection: close" (nginx closes, wrk
#               reconnects), benchlab with --requests-per-connection 1. wrk reuses its SSL
#               object, which keeps the last session, so its handshakes after the first are
#               resumed; benchlab runs at --tls-resumption 1.0 to match. nginx logs
#               $ssl_session_reused, and the share of resumed handshakes it saw is printed.
# For each it runs PAIRS rounds of the clients in rotating order and prints client CPU per
# response (user+sys from /usr/bin/time over responses), req/s, and the ratio benchlab/wrk.
# Then every handshake full, which wrk cannot do: on one connection at a time, benchlab's
# handshakes/s and latency beside the connections nginx accepted (stub_status), and its CPU per
# request (a full handshake each) beside `openssl s_time -new`'s CPU per handshake.
# A benchmark, not a test: it asserts nothing. Run it when the machine is quiet.
#
# Usage: bench/loadgen_tls.sh BIN_DIR [CONNECTIONS=50] [SECONDS=5] [PAIRS=5]
#   Environment: PORT (18443), SERVER_CPU (0), CLIENT_CPU (1), ENGINES ("epoll io_uring").
set -euo pipefail

bin_dir=${1:?"usage: $0 BIN_DIR [CONNECTIONS] [SECONDS] [PAIRS]"}
connections=${2:-50}
seconds=${3:-5}
pairs=${4:-5}
port=${PORT:-18443}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
engines=${ENGINES:-"epoll io_uring"}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
for tool in wrk taskset /usr/bin/time awk curl openssl "$nginx"; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required" >&2; exit 2; }
done
[[ -x "$bin_dir/benchlab" ]] || { echo "$0: $bin_dir/benchlab not found; build it first" >&2; exit 2; }

work=$(mktemp -d)
nginx_pid=
cleanup() {
  if [[ -n "$nginx_pid" ]]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$bin_dir/benchlab" ca init --dir "$work/ca" >/dev/null
"$bin_dir/benchlab" ca issue --dir "$work/ca" --name server --role agent --host localhost \
  --host 127.0.0.1 >/dev/null
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  log_format reused "\$ssl_session_reused";
  access_log $work/access.log reused buffer=64k flush=100ms;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $work/ca/server.pem;
    ssl_certificate_key $work/ca/server.key;
    ssl_protocols TLSv1.3;
    ssl_session_tickets on;
    keepalive_requests 100000000;
    location = /nginx_status { stub_status; }
    location / { return 200 "hello\n"; }
  }
}
CONF
taskset -c "$server_cpu" "$nginx" -c "$work/nginx.conf" -p "$work/nginx" >"$work/nginx.out" 2>&1 &
nginx_pid=$!
ca=(--cacert "$work/ca/ca.pem")
url="https://localhost:$port/"
for _ in $(seq 100); do
  curl -sf "${ca[@]}" "$url" >/dev/null && break
  sleep 0.05
done
accepts() { curl -s "${ca[@]}" "https://localhost:$port/nginx_status" | awk 'NR == 3 {print $1}'; }

# run_client, median, ratio.
. "$(dirname "$0")/client_lib.sh"

echo "$(date -u +%FT%TZ) $(uptime)"
echo "nginx $("$nginx" -v 2>&1 | sed 's/.*\///'), TLS 1.3, 1 worker on CPU $server_cpu; clients on CPU $client_cpu; ${seconds}s, ${pairs} rounds"
clients=(wrk)
for e in $engines; do clients+=("$e"); done
# The share of nginx's logged requests on a resumed session ("r"), since the log was emptied.
resumed_share() { sleep 0.2; awk '{n++; if ($1 == "r") r++} END {printf "%.3f", (n ? r / n : 0)}' "$work/access.log"; }
for mode in keep-alive reconnect; do
  if [[ $mode == keep-alive ]]; then
    c=$connections wrk_extra=() bl_extra=()
  else
    c=$connections wrk_extra=(-H "Connection: close") bl_extra=(--requests-per-connection 1 --tls-resumption 1)
  fi
  echo
  echo "$mode, $c connections: us/req per round; ratio = benchlab/wrk"
  for k in "${clients[@]}"; do : >"$work/$k.cpu"; : >"$work/$k.rps"; : >"$work/$k.ratio"; : >"$work/$k.reused"; done
  for pair in $(seq "$pairs"); do
    n=${#clients[@]}
    line="round $pair:"
    for k in $(seq 0 $((n - 1))); do
      who=${clients[$(( (k + pair) % n ))]}
      sleep 0.2; : >"$work/access.log"
      if [[ $who == wrk ]]; then
        run_client wrk wrk -t1 -c"$c" -d"${seconds}s" "${wrk_extra[@]}" "$url"
      else
        run_client "$who" "$bin_dir/benchlab" load -t 1 -c "$c" -d "${seconds}s" --engine "$who" \
          "${ca[@]}" "${bl_extra[@]}" "$url"
      fi
      echo "$cpu_per_req" >>"$work/$who.cpu"; echo "$rps" >>"$work/$who.rps"
      resumed_share >>"$work/$who.reused"; echo >>"$work/$who.reused"
      eval "cpu_${who}=\$cpu_per_req"
    done
    for who in "${clients[@]}"; do
      eval "u=\$cpu_${who}"
      line+=" $who $u"
      if [[ $who != wrk ]]; then r=$(ratio "$u" "$cpu_wrk"); echo "$r" >>"$work/$who.ratio"; line+=" ($r)"; fi
      line+=";"
    done
    echo "$line"
  done
  printf "%-9s %10s %12s %8s %16s\n" client "us/req" "req/s" ratio "nginx: resumed"
  for who in "${clients[@]}"; do
    r=-; [[ $who == wrk ]] || r=$(median <"$work/$who.ratio")
    printf "%-9s %10s %12s %8s %16s\n" "$who" "$(median <"$work/$who.cpu")" "$(median <"$work/$who.rps")" "$r" \
      "$(grep . "$work/$who.reused" | median)"
  done
done

echo
echo "handshakes, one connection at a time, every handshake full (${seconds}s each):"
before=$(accepts)
sleep 0.2; : >"$work/access.log"
/usr/bin/time -f "%U %S" -o "$work/time" taskset -c "$client_cpu" "$bin_dir/benchlab" load -t 1 \
  -c 1 -d "${seconds}s" "${ca[@]}" --requests-per-connection 1 --tls-resumption 0 \
  --json "$work/hs.json" "$url" >"$work/hs.out"
after=$(accepts)
python3 - "$work/hs.json" "$before" "$after" "$(awk 'END {print $1 + $2}' "$work/time")" "$(resumed_share)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["tls"]
done = t["handshakes_full"] + t["handshakes_resumed"]
accepted = int(sys.argv[3]) - int(sys.argv[2]) - 1  # less the nginx_status request itself
cpu = float(sys.argv[4])
print(f"  benchlab: {done} handshakes ({t['handshakes_full']} full), {t['handshakes_per_s']:.0f}/s, "
      f"mean {t['handshake_us']['mean']:.0f} us, p99 {t['handshake_us']['p99']} us; "
      f"{cpu * 1e6 / max(1, r['requests']):.0f} us of its CPU per request; nginx saw "
      f"{sys.argv[5]} of them resumed")
print(f"  nginx stub_status: {accepted} connections accepted over the run "
      f"({accepted / r['duration_s']:.0f}/s; includes the warm-up-free drain)")
PY
taskset -c "$client_cpu" openssl s_time -connect "127.0.0.1:$port" -new -time "$seconds" \
  -CAfile "$work/ca/ca.pem" >"$work/s_time.out" 2>&1 || true
# s_time prints "N connections in Us; R connections/user sec" (U: its own CPU seconds) and
# whole real seconds only; over -time T seconds its rate is about N / T.
awk -v t="$seconds" '/connections\/user sec/ {
       n = $1; u = $4; sub(/s;$/, "", u);
       printf "  openssl s_time -new: %d full handshakes in about %d s: %.0f/s, %.0f us of its CPU each\n", n, t, n / t, u * 1e6 / n }' \
  "$work/s_time.out"

#!/usr/bin/env bash
# End to end, with real processes: `benchlab load https://...` against nginx serving TLS 1.3 with
# session tickets. Keep-alive over TLS answers every request; with a reconnect every N requests
# and no resumption every handshake is full, and the handshakes benchlab counts agree with the
# connections nginx's own counter (stub_status) accepted; with resumption 1.0 they are resumed.
# A wrong CA is refused with the reason, and TLS options without https:// are bad input.
# Skipped (77) when nginx is not installed (make test installs it).
# Usage: load_https_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "SKIP: nginx is not installed"; exit 77; }

# A CA and a server certificate for localhost and 127.0.0.1, by benchlab's own CA commands.
"$bin/benchlab" ca init --dir "$work/ca" > /dev/null
"$bin/benchlab" ca issue --name server --role agent --host localhost --host 127.0.0.1 --dir "$work/ca" \
  > /dev/null
"$bin/benchlab" ca init --dir "$work/other" > /dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $work/nginx.log;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
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
    keepalive_requests 1000000;
    location = /nginx_status { stub_status; }
    location / { return 200 "hello\n"; }
  }
}
CONF
"$nginx" -c "$work/nginx.conf" -p "$work/nginx" > "$work/nginx.out.log" 2>&1 &
track $!
accepts() { curl -s --cacert "$work/ca/ca.pem" "https://localhost:$port/nginx_status" | awk 'NR==3 {print $1}'; }
wait_until 10 "nginx on $port" curl -sf --cacert "$work/ca/ca.pem" "https://localhost:$port/"

url="https://localhost:$port/"
"$bin/benchlab" load -c 4 -d 1s --cacert "$work/ca/ca.pem" --json "$work/keep.json" "$url" \
  > "$work/keep.out" || { cat "$work/keep.out"; fail "keep-alive over TLS"; }
python3 - "$work/keep.json" <<'PY' || fail "keep-alive figures"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] > 100 and r["status"] == {"200": r["requests"]}, r["status"]
assert sum(r["errors"].values()) == 0, r["errors"]
t = r["tls"]
assert t["version"] == "1.3" and t["alpn"] == "http/1.1", t
assert t["handshakes_full"] == 4 and t["handshakes_resumed"] == 0, t
assert t["handshake_us"]["max"] > 0, t
PY
grep -q "TLS 1.3, ALPN http/1.1: 4 handshakes (4 full, 0 resumed)" "$work/keep.out" ||
  { cat "$work/keep.out"; fail "the TLS line"; }
check "keep-alive over TLS 1.3: 4 full handshakes, every response 200"

for share in 0 1; do
  before=$(accepts)
  "$bin/benchlab" load -c 2 -d 1s --requests-per-connection 5 --tls-resumption "$share" \
    --cacert "$work/ca/ca.pem" --json "$work/churn$share.json" "$url" > "$work/churn$share.out" ||
    { cat "$work/churn$share.out"; fail "reconnects at resumption $share"; }
  after=$(accepts)
  python3 - "$work/churn$share.json" "$share" "$before" "$after" <<'PY' || fail "reconnect figures at $share"
import json, sys
r = json.load(open(sys.argv[1]))
share, before, after = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert sum(r["errors"].values()) == 0, r["errors"]
t = r["tls"]
done = t["handshakes_full"] + t["handshakes_resumed"]
assert done > 50, t
assert abs(r["requests"] / done - 5) < 0.5, (r["requests"], done)
resumed = t["handshakes_resumed"] / done
assert abs(resumed - share) < 0.05, (share, t)
# nginx's own count: the connections it accepted during the run (the nginx_status request is one more).
server = after - before - 1
assert 0 <= server - done <= 2, (server, done)
assert abs(t["handshakes_per_s"] - done / r["duration_s"]) < 1e-6, t
PY
  check "reconnect every 5 requests at resumption $share: benchlab's handshakes equal nginx's accepts"
done

expect_status 1 "$bin/benchlab" load -c 1 -d 300ms --cacert "$work/other/ca.pem" "$url"
grep -q "First TLS failure: TLS handshake: .*certificate" "$work/out" ||
  { cat "$work/out" "$work/err"; fail "the wrong CA's reason"; }
expect_status 0 "$bin/benchlab" load -c 1 -d 300ms --insecure "$url"
check "a certificate of another CA is refused with the reason; --insecure measures it"

expect_status 2 "$bin/benchlab" load -c 1 -d 300ms --tls-version 1.1 "$url"
grep -q "tls.version: expected \"1.3\" or \"1.2\"" "$work/err" || { cat "$work/err"; fail "1.1"; }
expect_status 2 "$bin/benchlab" load -c 1 -d 300ms --insecure "http://127.0.0.1:$port/"
grep -q "need an https:// URL" "$work/err" || { cat "$work/err"; fail "TLS options on http"; }
expect_status 2 "$bin/benchlab" load -c 1 -d 300ms --alpn h2 "$url"
grep -q "http/1.1" "$work/err" || { cat "$work/err"; fail "alpn without http/1.1"; }
check "bad TLS options are refused before any connection, naming the option"

echo "load_https_test: $passed checks passed"

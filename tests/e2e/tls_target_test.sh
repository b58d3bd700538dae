#!/usr/bin/env bash
# End to end, with real processes: a campaign whose targets serve HTTPS ([[target]] tls = true)
# on the embedded lab. nginx (examples/nginx-tls.conf.in) and hello-server --tls-cert get their
# certificates from the window's run directory; conformance and load go over TLS, verified
# against that CA; the windows are measured; the load record carries the handshakes, all full
# at [load] tls resumption 0 with a reconnect every 5 requests. No process is left behind.
# Skipped (77) when nginx is not installed (make test installs it).
# Usage: tls_target_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
command -v nginx > /dev/null || [ -x /usr/sbin/nginx ] || { echo "SKIP: nginx is not installed"; exit 77; }
export PATH="$PATH:/usr/sbin"

cp "$src/examples/nginx-tls.conf.in" "$work/"
cat > "$work/tls.toml" <<TOML
name = "tls"
baseline = "nginx-tls"
[matrix]
connections = [2]
rounds = 1
warmup = "100ms"
duration = "500ms"
[load]
cpus = "1"
requests_per_connection = 5
tls = { resumption = 0.0 }
# The plumbing is under test, not this machine's neighbours.
[gates]
mode = "warn"
[[target]]
name = "nginx-tls"
command = ["nginx", "-e", "stderr", "-p", "{run_dir}", "-c", "{run_dir}/nginx-tls.conf", "-g", "daemon off;"]
templates = ["{campaign_dir}/nginx-tls.conf.in"]
tls = true
cpus = "0"
[[target]]
name = "hello-tls"
command = ["$bin/hello-server", "--port", "{port}", "--tls-cert", "{tls_cert}", "--tls-key", "{tls_key}"]
tls = true
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

db="$work/tls.db"
"$bin/benchlab" run "$work/tls.toml" --db "$db" --progress plain > "$work/run.out" 2> "$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "benchlab run exited $?"; }
grep -q "2 windows: 2 valid" "$work/run.out" || { cat "$work/run.out" "$work/run.err"; fail "run summary"; }
check "both HTTPS targets ready, conformant and measured over TLS"

"$bin/benchlab" report tls --db "$db" --format json --output "$work/report.json"
python3 - "$work/report.json" <<'PY' || fail "the windows' TLS figures"
import json, sys
r = json.load(open(sys.argv[1]))
seen = set()
for w in r["windows"]:
    a = w["attempts"][-1]
    rec = a["load_record"]
    t = rec["tls"]
    assert a["requests"] > 0 and sum(rec["errors"].values()) == 0, (w["target"], rec["errors"])
    done = t["handshakes_full"] + t["handshakes_resumed"]
    assert done > 0 and t["handshakes_resumed"] == 0, (w["target"], t)
    assert abs(a["requests"] / done - 5) < 1, (w["target"], a["requests"], done)
    seen.add(w["target"])
assert seen == {"nginx-tls", "hello-tls"}, seen
PY
check "each window's load record: every handshake full, one per 5 requests"
expect_none_left "after the run"
check "no process left behind"
echo "tls_target_test: $passed checks passed"

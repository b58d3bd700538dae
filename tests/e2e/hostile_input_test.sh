#!/usr/bin/env bash
# Hostile input against the real binaries (docs/security.md): a 10,000-level nested TOML value
# is refused with file:line and exit 2 by `benchlab run`, by `benchlab agent` and by a live
# coordinator, which keeps answering; a plan over --max-windows is refused with its product; the
# dashboard answers 421 to a foreign Host (GET and POST), 403 to a foreign Origin and a JSON 400
# to a non-UTF-8 URL; a target's secret environment value is absent from the reports, the API
# and the database file, which is created 0600.
# Usage: hostile_input_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
# expect_exit CODE OUTFILE COMMAND...: runs COMMAND, its stdout and stderr to OUTFILE.
expect_exit() {
  local want=$1 out=$2; shift 2
  local got=0
  "$@" > "$out" 2>&1 || got=$?
  [ "$got" -eq "$want" ] || { cat "$out" >&2; fail "$* exited $got, expected $want"; }
}

# --- 1. a deeply nested value --------------------------------------------------------------
deep=$(python3 -c 'print("[" * 10000 + "]" * 10000)')
printf 'name = "deep"\n\nx = %s\n' "$deep" > "$work/deep.toml"
expect_exit 2 "$work/run-deep.out" "$bin/benchlab" run "$work/deep.toml" --db "$work/deep.db"
grep -q "deep.toml:3: nesting deeper than 32 levels" "$work/run-deep.out" ||
  { cat "$work/run-deep.out"; fail "benchlab run: no file:line for the nesting"; }
check "benchlab run refuses 10,000 nested arrays with deep.toml:3 and exit 2"

printf 'name = "a"\nroles = ["load"]\ncoordinator = "127.0.0.1:1"\nlabels = %s\n' "$deep" \
  > "$work/agent-deep.toml"
expect_exit 2 "$work/agent-deep.out" "$bin/benchlab" agent --config "$work/agent-deep.toml"
grep -q "agent-deep.toml:4: nesting deeper than 32 levels" "$work/agent-deep.out" ||
  { cat "$work/agent-deep.out"; fail "benchlab agent: no file:line for the nesting"; }
check "benchlab agent refuses a nested configuration with agent-deep.toml:4 and exit 2"

umask 022  # the database must be private whatever the caller's umask
"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/lab.db" --port-file "$work/port" \
  --http 127.0.0.1:0 --http-port-file "$work/http-port" --max-windows 1000 \
  2> "$work/coordinator.log" &
track $!
wait_until 10 "the coordinator's port file" test -s "$work/port"
wait_until 10 "the dashboard's port file" test -s "$work/http-port"
port=$(cat "$work/port")
http=$(cat "$work/http-port")
expect_exit 2 "$work/submit-deep.out" \
  "$bin/benchlab" submit "$work/deep.toml" --coordinator "127.0.0.1:$port"
grep -q "deep.toml:3: nesting deeper than 32 levels" "$work/submit-deep.out" ||
  { cat "$work/submit-deep.out"; fail "submit: no file:line for the nesting"; }
expect_exit 0 "$work/agents.out" "$bin/benchlab" agents --coordinator "127.0.0.1:$port"
check "a live coordinator refuses the nested campaign and keeps answering"

# --- 2. a plan over the limit --------------------------------------------------------------
python3 - "$work/huge.toml" <<'PY'
import sys
targets = "\n".join(f'[[target]]\nname = "t{i}"\ncommand = ["true"]\n' for i in range(10))
scenarios = "\n".join(f'[[scenario]]\nname = "s{i}"\npath = "/"\nexpect = {{ status = 200 }}\n' for i in range(20))
levels = ", ".join(str(i + 1) for i in range(30))
open(sys.argv[1], "w").write(f'name = "huge"\nbaseline = "t0"\n[matrix]\nconnections = [{levels}]\nrounds = 200\n'
                             f'{targets}\n{scenarios}\n')
PY
expect_exit 2 "$work/submit-huge.out" \
  "$bin/benchlab" submit "$work/huge.toml" --coordinator "127.0.0.1:$port"
grep -q "targets 10 × scenarios 20 × load levels 30 × rounds 200 = 1,200,000 windows" "$work/submit-huge.out" ||
  { cat "$work/submit-huge.out"; fail "the plan's product is not spelled out"; }
grep -q "1,000 (--max-windows)" "$work/submit-huge.out" ||
  { cat "$work/submit-huge.out"; fail "the limit is not named"; }
expect_exit 0 "$work/agents2.out" "$bin/benchlab" agents --coordinator "127.0.0.1:$port"
check "a plan of 1,200,000 windows is refused with its product and the coordinator answers"

# --- 3. the dashboard's Host, Origin and URL checks ---------------------------------------
api="http://127.0.0.1:$http/api/v1"
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
[ "$(code "$api/campaigns")" = 200 ] || fail "GET with the dashboard's own Host"
[ "$(code -H 'Host: rebind.example' "$api/campaigns")" = 421 ] || fail "GET, foreign Host"
[ "$(code -X POST -H 'Host: rebind.example' -H 'Content-Type: application/json' \
  -d '{"invalid":true}' "$api/rerun")" = 421 ] || fail "POST, foreign Host"
[ "$(code -X POST -H 'Origin: http://evil.example' -H 'Content-Type: application/json' \
  -d '{"invalid":true}' "$api/rerun")" = 403 ] || fail "POST, foreign Origin"
check "foreign Host gets 421 (GET and POST), foreign Origin 403"
[ "$(code "$api/campaigns/%FF%FE")" = 400 ] || fail "non-UTF-8 URL is not a 400"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "error" in d' "$work/body" ||
  fail "the 400 is not JSON with an error"
check "a non-UTF-8 URL gets a JSON 400"

# --- 4. a secret in a target's environment -------------------------------------------------
secret="s3cr3t-$RANDOM-$RANDOM-value"
cat > "$work/secret.toml" <<TOML
name = "secret"
baseline = "hello"
public_env = ["NODE_ENV"]
[matrix]
connections = [2]
rounds = 1
warmup = "50ms"
duration = "200ms"
[load]
cpus = "1"
[gates]
mode = "warn"
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
env = { API_TOKEN = "$secret", NODE_ENV = "production" }
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
expect_exit 0 "$work/run-secret.out" "$bin/benchlab" run "$work/secret.toml" --db "$work/secret.db"
for format in md json csv; do
  "$bin/benchlab" report secret --db "$work/secret.db" --format "$format" > "$work/report.$format"
  ! grep -q "$secret" "$work/report.$format" || fail "the secret is in the $format report"
done
grep -q "API_TOKEN" "$work/report.json" || fail "the variable's name is gone from the run of record"
grep -q "production" "$work/report.json" || fail "a public value is redacted"
for f in "$work"/secret.db*; do
  ! grep -qa "$secret" "$f" || fail "the secret is in $f"
done
[ "$(stat -c %a "$work/secret.db")" = 600 ] || fail "the database is not 0600"
[ "$(stat -c %a "$work/lab.db")" = 600 ] || fail "the coordinator's database is not 0600"
"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$work/secret.db" --port-file "$work/port2" \
  --http 127.0.0.1:0 --http-port-file "$work/http-port2" 2> "$work/coordinator2.log" &
track $!
wait_until 10 "the second coordinator's port file" test -s "$work/port2"
wait_until 10 "the second dashboard's port file" test -s "$work/http-port2"
curl -sf "http://127.0.0.1:$(cat "$work/http-port2")/api/v1/campaigns/secret" > "$work/api.json" ||
  fail "GET the campaign"
! grep -q "$secret" "$work/api.json" || fail "the secret is served by the API"
"$bin/benchlab" report secret --coordinator "127.0.0.1:$(cat "$work/port2")" --format json \
  > "$work/grpc-report.json"
! grep -q "$secret" "$work/grpc-report.json" || fail "the secret is served by GetReport"
check "the secret is absent from reports, API, GetReport and the database (0600)"

echo "$passed passed, 0 failed"

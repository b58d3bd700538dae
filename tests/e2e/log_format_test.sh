#!/usr/bin/env bash
# --log-format json (docs/logging.md): a coordinator started with the option and two agents
# with BENCHLAB_LOG_FORMAT=json measure a one-window campaign. Every line each daemon writes to
# stderr is one JSON object with the documented fields in order; the server agent's line about
# the window's target carries its agent name and the window; the coordinator's campaign lines
# carry the campaign, and its line about the server agent's registration that agent's name. A
# value other than text or json is refused with exit status 2.
# Usage: log_format_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
ln -s "$bin/hello-server" "$work/hello-server"

status=0
"$bin/benchlab" agents --log-format yaml > /dev/null 2> "$work/bad.err" || status=$?
[ "$status" -eq 2 ] || fail "--log-format yaml: exit status $status, expected 2"
grep -q "log-format: yaml not in {text,json}" "$work/bad.err" ||
  fail "--log-format yaml: no clear error: $(cat "$work/bad.err")"
check "--log-format yaml is refused (exit 2): $(head -1 "$work/bad.err")"

"$bin/benchlab" coordinator --log-format json --listen 127.0.0.1:0 --db "$work/lab.db" \
  --http 127.0.0.1:0 --port-file "$work/port" 2> "$work/coordinator.log" &
coordinator=$!
track $coordinator
wait_until 10 "the coordinator's port file" test -s "$work/port"
port=$(cat "$work/port")
for role in server load; do
  cat > "$work/$role.toml" <<TOML
name = "logs-$role"
roles = ["$role"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/$role-state"
TOML
done
cat >> "$work/server.toml" <<TOML
[[target]]
name = "hello"
command = ["$work/hello-server", "--port", "{port}"]
TOML
BENCHLAB_LOG_FORMAT=json "$bin/benchlab" agent --config "$work/server.toml" 2> "$work/server.log" &
server=$!
BENCHLAB_LOG_FORMAT=json "$bin/benchlab" agent --config "$work/load.toml" 2> "$work/load.log" &
load=$!
track $server $load
cat > "$work/campaign.toml" <<TOML
name = "logs"
baseline = "hello"
[matrix]
connections = [2]
rounds = 1
warmup = "0s"
duration = "300ms"
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" submit "$work/campaign.toml" --coordinator "127.0.0.1:$port" --wait \
  --progress off > "$work/submit.out" || fail "submit --wait: $(cat "$work/submit.out")"
check "the campaign ran with every daemon logging JSON"
kill -TERM "$server" "$load" "$coordinator"
wait "$server" "$load" "$coordinator" || true
tracked=()

# Each log: every line a JSON object, fields in the documented order; then what it must hold.
python3 - "$work" <<'PY' || fail "JSON logs: see above"
import json, sys
work = sys.argv[1]
fields = ["time", "level", "daemon", "agent", "campaign", "window", "message"]
def lines(name):
    out = []
    for n, text in enumerate(open(f"{work}/{name}.log", encoding="utf-8"), 1):
        try:
            obj = json.loads(text)
        except ValueError as e:
            sys.exit(f"{name}.log:{n}: not JSON ({e}): {text!r}")
        if list(obj) != fields:
            sys.exit(f"{name}.log:{n}: fields {list(obj)}, expected {fields}")
        out.append(obj)
    if not out:
        sys.exit(f"{name}.log is empty")
    return out
coordinator, server, load = lines("coordinator"), lines("server"), lines("load")
assert all(o["daemon"] == "coordinator" for o in coordinator), coordinator
# The coordinator's lines about one agent name it; the others name none.
registered = [o for o in coordinator if o["message"].startswith("agent logs-server registered")]
assert registered and registered[0]["agent"] == "logs-server", registered
assert all(o["agent"] in (None, "logs-server", "logs-load") for o in coordinator), coordinator
assert any(o["agent"] is None and o["message"].startswith("coordinator listening")
           for o in coordinator), coordinator
assert all(o["daemon"] == "agent" and o["agent"] == "logs-server" for o in server), server
assert all(o["agent"] == "logs-load" for o in load), load
started = [o for o in server if o["message"].startswith("started target hello")]
assert started and started[0]["window"] == "logs-r1-hello-hello-c2", started
assert any(o["campaign"] == "logs" and o["message"].startswith("campaign logs")
           for o in coordinator), [o["message"] for o in coordinator]
print(f"ok: {len(coordinator)} coordinator, {len(server)} server and {len(load)} load lines are "
      f"JSON; the target's start names window {started[0]['window']}; the coordinator's "
      f"registration line names agent {registered[0]['agent']}")
PY
passed=$((passed + 1))

# A daemon that refuses to start says why in JSON too: its stderr holds nothing else.
status=0
"$bin/benchlab" coordinator --log-format json --listen 127.0.0.1:nope --db "$work/refused.db" \
  2> "$work/refused.log" || status=$?
[ "$status" -eq 2 ] || fail "a malformed --listen exited $status, expected 2"
python3 - "$work/refused.log" <<'PY' || fail "refusal to start: see above"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 1, f"expected one JSON line, got {lines!r}"
obj = json.loads(lines[0])
assert obj["level"] == "error" and obj["message"].startswith("--listen: "), obj
PY
check "a coordinator that refuses to start says so in one JSON line"
echo "$passed checks passed"

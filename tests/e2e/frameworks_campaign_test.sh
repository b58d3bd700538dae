#!/usr/bin/env bash
# End to end, with real processes: `benchlab run` on a short campaign of real frameworks, raw
# node:http (the baseline) against Express 5, with the scenarios and negatives of
# examples/frameworks/node.toml: every window is measured, both apps pass the conformance gate,
# every response matched its scenario, and the report names both. A third target that answers
# 200 to everything must be skipped by the same gate, so the gate is seen to bite. One round,
# 300 ms windows, gates in warn mode (the shared CI machine's neighbours are not under test).
# Usage: frameworks_campaign_test.sh BIN_DIR SOURCE_DIR (exit 77: skipped, no Node.js 20+)
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
fw="$src/examples/frameworks"

node_bin=$(command -v node || true)
if [ -z "$node_bin" ] || ! "$node_bin" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "SKIP: the framework apps need Node.js 20 or later (found: ${node_bin:-none})"
  exit 77
fi

"$fw/install.sh" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "npm ci in $fw"; }

# The apps run on node (Bun's on bun).
kinds="$kinds|node|bun"

# `node` is found in the agent's PATH, as in the example campaigns; the scenarios and negatives
# are node.toml's own, from its contract section to the end.
cat > "$work/frameworks-ci.toml" <<TOML
name = "frameworks-ci"
baseline = "node"
[matrix]
connections = [16]
rounds = 1
order = "rotate"
warmup = "200ms"
duration = "300ms"
[load]
threads = 1
cpus = "1"
[gates]
mode = "warn"
[[target]]
name = "node"
command = ["node", "$fw/node/server.js"]
env = { NODE_ENV = "production" }
ready = "/health"
cpus = "0"
[[target]]
name = "express"
command = ["node", "$fw/express/server.js"]
env = { NODE_ENV = "production" }
ready = "/health"
cpus = "0"
[[target]]
name = "impostor"
command = ["node", "-e", "require('http').createServer((q, s) => s.end('ok')).listen(process.env.PORT)"]
ready = "/health"
cpus = "0"
TOML
sed -n '/^# The contract.s routes/,$p' "$fw/node.toml" >> "$work/frameworks-ci.toml"
scenarios=$(grep -c '^\[\[scenario\]\]' "$work/frameworks-ci.toml")
[ "$scenarios" -ge 6 ] || fail "node.toml's scenarios were not found (got $scenarios)"

set +e
timeout 120 "$bin/benchlab" run "$work/frameworks-ci.toml" --db "$work/fw.db" --progress plain \
  > "$work/run.out" 2> "$work/run.err"
status=$?
set -e
# Not every window was measured, so the run keeps its lab's logs: removed at exit.
leaves_lab_dir_in "$work/run.err"
summary="$((3 * scenarios)) windows: $((2 * scenarios)) valid, 0 invalid, $scenarios failed or skipped (campaign done)"
grep -qxF "$summary" "$work/run.out" ||
  { cat "$work/run.out" "$work/run.err"; fail "benchlab run (exit $status): expected \"$summary\""; }
# Exit 1: not every window was measured (the impostor's were skipped, as they must be).
[ "$status" -eq 1 ] || { cat "$work/run.err"; fail "benchlab run exited $status, expected 1"; }
[ ${#lab_dirs[@]} -gt 0 ] || { cat "$work/run.err"; fail "benchlab run did not say where its logs are"; }
check "benchlab run: $summary"

q() { sqlite3 "$work/fw.db" "$1"; }
for target in node express; do
  measured=$(q "select count(*) from windows where campaign='frameworks-ci' and target='$target'
                and verdict='valid' and requests > 0 and errors_mismatch = 0 and errors = 0
                and reasons not like '%conformance%'")
  [ "$measured" -eq "$scenarios" ] ||
    { q "select target, scenario, verdict, requests, errors, reasons from windows"; fail "$target: $measured of $scenarios windows measured with no error"; }
done
check "node and express passed the conformance gate and every window was measured without error"

impostor=$(q "select count(*) from windows where campaign='frameworks-ci' and target='impostor'
              and verdict='skipped' and reasons like '%conformance%'")
[ "$impostor" -eq "$scenarios" ] ||
  { q "select target, scenario, verdict, reasons from windows where target='impostor'"; fail "impostor: $impostor of $scenarios windows skipped by conformance"; }
check "a target that does not answer the contract is skipped by the conformance gate"

"$bin/benchlab" report frameworks-ci --db "$work/fw.db" > "$work/report.md"
grep -q '^| node (baseline) ' "$work/report.md" || { cat "$work/report.md"; fail "report: node"; }
grep -q '^| express ' "$work/report.md" || { cat "$work/report.md"; fail "report: express"; }
check "the report names both targets"

expect_none_left "benchlab run"
check "no process left running"

echo "$passed passed, 0 failed"

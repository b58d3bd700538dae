#!/usr/bin/env bash
# End to end, with real processes: a campaign whose gate refuses every window (the load host's
# busy share over 0%, which no measured window can meet) is measured with each refused window
# measured again at once within the campaign's budget; its report, in Markdown and JSON, carries
# the gate's audit and the windows measured again, and the host check's findings of each agent;
# `benchlab host check` answers in text and JSON, and a bad --cpus exits 2 with one line.
# Usage: gate_audit_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)

cat > "$work/audit.toml" <<TOML
name = "audit"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 3
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
[gates]
# Refuses every window on the load host: the gate under test is the audit, not the machine.
load_busy_max_pct = 0
# The gates a shared machine trips without anyone's fault are off.
foreign_cpu = false
selftest_drift = false
steal = false
[[target]]
name = "hello-a"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[target]]
name = "hello-b"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

db="$work/run.db"
"$bin/benchlab" run "$work/audit.toml" --db "$db" > "$work/run.out" 2> "$work/run.err" || true
leaves_lab_dir_in "$work/run.err"
sql() { sqlite3 "$db" "$1"; }
# 6 planned windows, every one refused; the default budget (a quarter of the plan, at least 2)
# measures 2 of them again, each at once after the attempt it replaces.
[ "$(sql "select count(*) from windows")" -eq 8 ] ||
  { sql "select id, round, target, attempt, verdict from windows"; fail "expected 8 attempts"; }
[ "$(sql "select count(*) from windows where verdict = 'invalid'")" -eq 8 ] ||
  fail "every attempt should be refused"
order=$(sql "select attempt from windows order by id limit 3" | tr '\n' ' ')
[ "$order" = "1 2 3 " ] || fail "the first window should be measured again at once, got '$order'"
check "every refused window of the budget was measured again at once (8 attempts of 6 windows)"

"$bin/benchlab" report audit --db "$db" > "$work/report.md" 2> "$work/md.err" ||
  { cat "$work/md.err"; fail "report exited $?"; }
grep -q '^## Gate audit$' "$work/report.md" || { cat "$work/report.md"; fail "no Gate audit section"; }
grep -Eq '^\| generator_bound +\| load \(agent [^)]+\) +\| +8 of 8 \|.*\| undecided +\|$' \
  "$work/report.md" || { cat "$work/report.md"; fail "the gate's audit row"; }
grep -q '^- generator_bound refused 8 of 8 windows on host load .*no cell had a valid window' \
  "$work/report.md" || fail "the audit's sentence"
grep -q '^2 windows were measured again after a gate refused them (generator_bound 2)\.$' \
  "$work/report.md" || fail "the windows measured again"
grep -Eq '^\| check: aslr +\| ' "$work/report.md" || fail "the host check's findings in the hosts table"
check "the Markdown report carries the gate audit, the windows measured again and the host findings"

"$bin/benchlab" report audit --db "$db" --format json > "$work/report.json" ||
  fail "report --format json exited $?"
python3 - "$work/report.json" <<'PY' || fail "the run of record's gate audit and findings"
import json, sys
r = json.load(open(sys.argv[1]))
# The load host's busy share refuses every window; the generator's own flag (a thread at 95% of
# its CPU) may refuse some too, on a busy machine, as a row of the window's own ("host": "").
a = [g for g in r["gate_audit"] if g["host"].startswith("load (agent ")]
assert len(a) == 1 and a[0]["gate"] == "generator_bound", r["gate_audit"]
assert a[0]["refused"] == 8 and a[0]["windows"] == 8 and a[0]["verdict"] == "undecided", a
# No cell has a valid window: no distance to measure, none invented.
assert a[0]["rps"]["refused_n"] == 0 and a[0]["rps"]["refused_off_pct"] is None, a
assert r["remeasured"] == {"windows": 2, "by_gate": {"generator_bound": 2}}, r["remeasured"]
findings = [f for h in r["hosts"] for f in h["facts"].get("findings", [])]
assert findings, "no host findings"
assert all(f["status"] in ("ok", "warn", "unavailable") for f in findings), findings
assert any(f["name"] == "aslr" and f["status"] != "unavailable" for f in findings), findings
PY
check "the run of record carries the gate audit, the windows measured again and the findings"

"$bin/benchlab" host check --format json > "$work/check.json" || fail "host check exited $?"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert any(f["name"]=="aslr" for f in c), c' \
  "$work/check.json" || fail "host check --format json"
"$bin/benchlab" host check > "$work/check.txt" || fail "host check (text) exited $?"
grep -q '^aslr ' "$work/check.txt" || { cat "$work/check.txt"; fail "host check's text"; }
status=0
"$bin/benchlab" host check --cpus 'x' > /dev/null 2> "$work/bad.err" || status=$?
[ "$status" -eq 2 ] || fail "a bad --cpus should exit 2, got $status"
[ "$(wc -l < "$work/bad.err")" -eq 1 ] || { cat "$work/bad.err"; fail "one line for a bad --cpus"; }
check "benchlab host check answers in text and JSON; a bad --cpus exits 2 with one line"

expect_none_left "after the run"
echo "$passed checks passed"

#!/usr/bin/env bash
# End to end, with real processes: `benchlab run` measures a tiny campaign (two hello-server
# targets, 2 rounds, 2 noise windows), then `benchlab report` turns the database into Markdown,
# a JSON run of record and CSV, each checked by a parser; the database is left unchanged; a
# missing campaign, a missing database file and an unknown format exit 2 with one line.
# Usage: report_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)

cat > "$work/tiny.toml" <<TOML
name = "tiny-report"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 2
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
# The plumbing is under test, not this machine: on a shared machine the measurement gates would
# judge the neighbours.
[gates]
mode = "warn"
[noise]
target = "hello-a"
scenario = "hello"
windows = 2
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
"$bin/benchlab" run "$work/tiny.toml" --db "$db" > "$work/run.out" 2> "$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "benchlab run exited $?"; }
grep -q "6 windows: 6 valid" "$work/run.out" || { cat "$work/run.out"; fail "run summary"; }
check "benchlab run measured 4 matrix and 2 noise windows"
before=$(sha256sum "$db" | cut -d' ' -f1)

# --- Markdown -------------------------------------------------------------------------------
"$bin/benchlab" report tiny-report --db "$db" > "$work/report.md" 2> "$work/md.err" ||
  { cat "$work/md.err"; fail "report --format md (the default) exited $?"; }
grep -q '^# tiny-report: benchlab report$' "$work/report.md" || fail "Markdown title"
grep -q '^## hello · 4 connections$' "$work/report.md" || fail "a section per cell"
grep -Eq '^\| target +\| +req/s \(spread\) .*\| +vs hello-a \(95% CI\) \|.*\| verdict +\| valid \|$' \
  "$work/report.md" || { cat "$work/report.md"; fail "the cell table's header"; }
grep -Eq '^\| hello-a \(baseline\) +\| +[0-9,]+ .*\| baseline +\| +2/2 \|$' "$work/report.md" ||
  { cat "$work/report.md"; fail "the baseline row"; }
grep -Eq '^\| hello-b +\| +[0-9,]+ .*\| (close|ahead|behind|inconclusive( \(~[0-9]+ rounds\))?) +\| +2/2 \|$' "$work/report.md" ||
  { cat "$work/report.md"; fail "the target row with its verdict"; }
grep -q '^## Noise floor$' "$work/report.md" || fail "noise floor section"
grep -q '2 noise windows of hello-a · hello · c4' "$work/report.md" || fail "noise windows named"
grep -q '^## Method$' "$work/report.md" || fail "method section"
grep -q '^## Hosts$' "$work/report.md" || fail "host facts"
check "Markdown: a table per cell, the baseline marked, noise floor, hosts and method"

# --- JSON -----------------------------------------------------------------------------------
"$bin/benchlab" report tiny-report --db "$db" --format json --output "$work/report.json" ||
  fail "report --format json --output"
python3 - "$work/report.json" <<'PY' || fail "the JSON run of record"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "benchlab-run-of-record" and r["version"] == 2, r["format"]
assert r["stats"]["plan"] == "fixed" and r["stats"]["confidence"] == 0.95, r["stats"]
assert r["campaign"]["name"] == "tiny-report"
assert 'name = "tiny-report"' in r["spec"]
assert r["targets"] == ["hello-a", "hello-b"], r["targets"]
assert len(r["windows"]) == 6, len(r["windows"])
attempts = [a for w in r["windows"] for a in w["attempts"]]
assert len(attempts) == 6
for a in attempts:
    assert a["verdict"] == "valid" and a["newest"] is True
    assert a["histogram"].startswith("h1:"), a["histogram"][:10]
    assert a["samples"]["count"] > 0 and a["samples"]["server_cpu_pct_max"] is not None
    assert isinstance(a["reasons"], list)
assert sum(1 for w in r["windows"] if w["noise"]) == 2
assert r["noise_floor"][0]["windows"] == 2
assert {h["role"] for h in r["hosts"]} == {"server", "load"}
cell = r["cells"][0]
assert [t["target"] for t in cell["targets"]] == ["hello-a", "hello-b"]
vs = cell["targets"][1]["metrics"]["rps"]["vs_baseline"]
assert vs["verdict"] in ("close", "ahead", "behind", "inconclusive"), vs["verdict"]
assert vs["interval"]["low"] <= vs["interval"]["estimate"] <= vs["interval"]["high"], vs["interval"]
assert vs["noise_rule"]["verdict"] in ("close", "ahead", "behind"), vs["noise_rule"]
PY
check "JSON: parses, version 2 with intervals, every window and attempt with histogram and samples"

# --- CSV ------------------------------------------------------------------------------------
"$bin/benchlab" report tiny-report --db "$db" --format csv > "$work/report.csv" ||
  fail "report --format csv"
python3 - "$work/report.csv" <<'PY' || fail "the CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
header, data = rows[0], rows[1:]
assert header[:4] == ["id", "campaign", "pair", "target"], header[:4]
assert len(data) == 6, len(data)
assert all(len(r) == len(header) for r in data)
col = {name: i for i, name in enumerate(header)}
assert {r[col["target"]] for r in data} == {"hello-a", "hello-b"}
assert all(float(r[col["rps"]]) > 0 for r in data)
PY
check "CSV: a header and one row per attempt"

after=$(sha256sum "$db" | cut -d' ' -f1)
[ "$before" = "$after" ] || fail "benchlab report changed the database"
check "the database is unchanged"

# --- the same from a running coordinator: GetReport and the dashboard's API -----------------
cp "$db" "$work/served.db"
"$bin/benchlab" coordinator --db "$work/served.db" --listen 127.0.0.1:0 --port-file "$work/grpc.port" \
  --http 127.0.0.1:0 --http-port-file "$work/http.port" 2> "$work/coordinator.err" &
coordinator=$!
track $coordinator
on_fail() { [ ! -f "$work/coordinator.err" ] || tail -8 "$work/coordinator.err"; }
wait_until 10 "the coordinator's port file" test -s "$work/grpc.port"
wait_until 10 "the dashboard's port file" test -s "$work/http.port"
address="127.0.0.1:$(cat "$work/grpc.port")"
for format in md json csv; do
  "$bin/benchlab" report tiny-report --coordinator "$address" --format "$format" \
    > "$work/served.$format" || fail "report --coordinator --format $format"
  "$bin/benchlab" report tiny-report --db "$db" --format "$format" > "$work/local.$format"
  cmp -s "$work/served.$format" "$work/local.$format" ||
    fail "report --coordinator --format $format differs from --db"
done
check "report --coordinator writes the same Markdown, JSON and CSV as --db"

python3 - "$(cat "$work/http.port")" "$work/local.json" <<'PY' || fail "the HTTP API"
import json, sys, urllib.request, urllib.error
base = "http://127.0.0.1:%s/api/v1" % sys.argv[1]
get = lambda path: json.load(urllib.request.urlopen(base + path, timeout=10))
campaigns = get("/campaigns")["campaigns"]
assert [c["name"] for c in campaigns] == ["tiny-report"], campaigns
assert campaigns[0]["windows"] == 6 and campaigns[0]["valid"] == 6, campaigns[0]
doc = get("/campaigns/tiny-report")
assert doc["record"] == json.load(open(sys.argv[2])), "record differs from the run of record"
assert doc["progress"]["done"] == 6 and doc["progress"]["running"] == []
first = doc["record"]["windows"][0]["attempts"][0]["id"]
window = get("/windows/%d" % first)
assert window["window"]["id"] == first and len(window["attempts"]) == 1
assert window["samples"]["server"], "server samples"
assert window["histogram"]["count"] == window["window"]["requests"], window["histogram"]["count"]
assert window["rerunnable"] is False
try:
    urllib.request.urlopen(base + "/campaigns/nope", timeout=10)
    raise AssertionError("an unknown campaign must be 404")
except urllib.error.HTTPError as e:
    assert e.code == 404 and "nope" in json.load(e)["error"]
PY
check "the HTTP API serves the same run of record, the window and its histogram"
kill "$coordinator"
wait "$coordinator" || true
tracked=()

# --- bad input ------------------------------------------------------------------------------
set +e
"$bin/benchlab" report nope --db "$db" > /dev/null 2> "$work/nope.err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "an unknown campaign should exit 2, got $status"
grep -qx "benchlab report: no campaign \"nope\" in $db (campaigns: tiny-report)" "$work/nope.err" ||
  { cat "$work/nope.err"; fail "unknown campaign message"; }

set +e
"$bin/benchlab" report tiny-report --db "$work/missing.db" > /dev/null 2> "$work/missing.err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "a missing database should exit 2, got $status"
[ "$(wc -l < "$work/missing.err")" -eq 1 ] || { cat "$work/missing.err"; fail "one line"; }
[ ! -e "$work/missing.db" ] || fail "report must not create a database"

set +e
"$bin/benchlab" report tiny-report --db "$db" --format xml > /dev/null 2>&1
status=$?
set -e
[ "$status" -eq 2 ] || fail "an unknown format should exit 2, got $status"
check "unknown campaign, missing database and unknown format exit 2"

"$bin/benchlab" report --help > /dev/null || fail "benchlab report --help"
echo "$passed checks passed"

#!/usr/bin/env bash
# End to end, with real processes: `benchlab run` measures two tiny campaigns into one database,
# then `benchlab compare` reads them by name (--db, and --coordinator from a real coordinator),
# as exported runs of record and mixed; every cell appears with its interval and all sources
# agree; an edited record (B at half the req/s, a target dropped) makes --fail-on-regression exit
# 3 on the absolute basis, is cancelled by the baseline basis, and shows "only in A"; bad input
# exits 2 with one line.
# Usage: compare_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)

campaign() {  # campaign NAME
  cat > "$work/$1.toml" <<TOML
name = "$1"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 2
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
# The plumbing is under test, not this machine's neighbours.
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
[[scenario]]
name = "json"
path = "/json"
expect = { status = 200 }
TOML
  local status=0 tries=0
  "$bin/benchlab" run "$work/$1.toml" --db "$db" > "$work/$1.out" 2> "$work/$1.err" || status=$?
  # On a busy machine a starved target can fail a window (no_responses); measure those again,
  # as a person would, so that every cell has its rounds.
  while [ "$status" -ne 0 ] && [ "$tries" -lt 3 ]; do
    tries=$((tries + 1))
    status=0
    "$bin/benchlab" rerun --failed --campaign "$1" --db "$db" >> "$work/$1.out" \
      2>> "$work/$1.err" || status=$?
  done
  [ "$status" -eq 0 ] ||
    { cat "$work/$1.out" "$work/$1.err"; fail "benchlab run $1 exited $status ($tries re-runs)"; }
}

db="$work/lab.db"
campaign cmp-a
campaign cmp-b
check "two campaigns measured into one database"

# --- by name, from the database ---------------------------------------------------------------
expect_status 0 "$bin/benchlab" compare cmp-a cmp-b --db "$db"
cp "$work/out" "$work/by-name.txt"
grep -q "^A: cmp-a, .*, done, from $db; noise floor req/s " "$work/by-name.txt" ||
  { cat "$work/by-name.txt"; fail "A's header line"; }
grep -q "^B: cmp-b, " "$work/by-name.txt" || fail "B's header line"
for title in "hello · 4 connections" "json · 4 connections"; do
  grep -qx "$title" "$work/by-name.txt" || { cat "$work/by-name.txt"; fail "no table $title"; }
done
[ "$(grep -Ec '^hello-(a|b) +req/s +[0-9,]+ .*(better|worse|close|inconclusive|n/a) *$' \
  "$work/by-name.txt")" -eq 4 ] ||
  { cat "$work/by-name.txt"; fail "4 rows (2 targets x 2 cells) with verdicts"; }
[ "$(grep -Ec '^ +(CPU µs/req|p99) +' "$work/by-name.txt")" -eq 8 ] ||
  { cat "$work/by-name.txt"; fail "a row per target and figure"; }
grep -q "^Summary: 4 in both, 0 only in A, 0 only in B\. req/s: " "$work/by-name.txt" ||
  { cat "$work/by-name.txt"; fail "summary line"; }
check "by name: both headers, a table per cell, every target, the summary"

# --- the width: 100 columns by default, --width N honoured, headers over their columns ----------
widths() {  # widths FILE MAX: every line at most MAX columns, each header over its column
  python3 - "$1" "$2" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
limit = int(sys.argv[2])
wide = [l for l in lines if len(l) > limit]
assert not wide, f"lines over {limit} columns: {wide}"
for i, line in enumerate(lines):
    if line.startswith("target "):
        header, row = line, lines[i + 1]
        # The verdict starts under its header; right-aligned B ends under its header.
        at = header.index("verdict")
        assert row[at:].split()[0] in ("better", "worse", "close", "inconclusive", "n/a"), (header, row)
        assert row[at - 1] == " ", (header, row)
PY
}
widths "$work/by-name.txt" 100 || { cat "$work/by-name.txt"; fail "the default width"; }
expect_status 0 "$bin/benchlab" compare cmp-a cmp-b --db "$db" --width 60
widths "$work/out" 60 || { cat "$work/out"; fail "--width 60"; }
grep -q "B/A (95% CI)" "$work/out" && { cat "$work/out"; fail "--width 60 keeps the interval"; }
grep -Eq '^hello-a +req/s .*(better|worse|close|inconclusive|n/a)$' "$work/out" ||
  { cat "$work/out"; fail "--width 60 lost the verdicts"; }
expect_status 2 "$bin/benchlab" compare cmp-a cmp-b --db "$db" --width 10
check "the text fits 100 columns, --width 60 and its headers; --width 10 is refused"

# --- as runs of record, and mixed -------------------------------------------------------------
"$bin/benchlab" report cmp-a --db "$db" --format json -o "$work/a.json"
"$bin/benchlab" report cmp-b --db "$db" --format json -o "$work/b.json"
expect_status 0 "$bin/benchlab" compare cmp-a cmp-b --db "$db" --format json
cp "$work/out" "$work/by-name.json"
expect_status 0 "$bin/benchlab" compare "$work/a.json" "$work/b.json" --format json
cp "$work/out" "$work/by-file.json"
expect_status 0 "$bin/benchlab" compare "$work/a.json" cmp-b --db "$db" --format json
cp "$work/out" "$work/mixed.json"
python3 - "$work" <<'PY' || fail "the sources disagree"
import json, sys
w = sys.argv[1]
name, byfile, mixed = (json.load(open(f"{w}/{f}.json")) for f in ("by-name", "by-file", "mixed"))
assert name["format"] == "benchlab-compare" and name["version"] == 2
assert name["stats"]["confidence"] == 0.95 and name["stats"]["baseline"] == "hello-a"
assert name["cells"] == byfile["cells"] == mixed["cells"], "cells differ between sources"
assert byfile["a"]["source"].endswith("/a.json") and mixed["b"]["source"].endswith("/lab.db")
cells = {(c["scenario"], c["load_level"], c["target"]) for c in name["cells"]}
assert cells == {(s, "c4", t) for s in ("hello", "json") for t in ("hello-a", "hello-b")}, cells
for c in name["cells"]:
    assert c["presence"] == "both"
    for m in ("rps", "cpu_us_per_request", "p99_us"):
        assert c["metrics"][m]["verdict"] in ("better", "worse", "close", "inconclusive", "n/a"), c
        assert c["metrics"][m]["noise_rule"]["verdict"] in ("better", "worse", "close", "n/a"), c
    rps = c["metrics"]["rps"]
    assert rps["a"]["n"] == 2 and rps["delta"] is not None
    assert rps["basis"] == ("absolute" if c["target"] == "hello-a" else "baseline"), c
    if rps["interval"] is not None:
        i = rps["interval"]
        assert i["n_a"] >= 2 and i["n_b"] >= 2 and i["level"] == 0.95, i
        assert i["low"] <= i["estimate"] <= i["high"], i
assert name["a"]["noise_floor"][0]["rps"] is not None
assert name["regressions"] is None
PY
check "by name, by exported file and mixed give the same cells"

# --- through a coordinator --------------------------------------------------------------------
"$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$db" --port-file "$work/port" \
  2> "$work/coordinator.log" &
track $!
wait_until 10 "the coordinator's port file" test -s "$work/port"
expect_status 0 "$bin/benchlab" compare cmp-a cmp-b --coordinator "127.0.0.1:$(cat "$work/port")" \
  --format json
python3 - "$work/out" "$work/by-name.json" <<'PY' || fail "the coordinator's cells differ"
import json, sys
rpc, db = (json.load(open(f)) for f in sys.argv[1:])
assert rpc["cells"] == db["cells"]
assert rpc["a"]["source"].startswith("coordinator 127.0.0.1:")
PY
expect_status 2 "$bin/benchlab" compare cmp-a nope --coordinator "127.0.0.1:$(cat "$work/port")"
grep -q '^benchlab compare: coordinator 127.0.0.1:[0-9]*: no campaign "nope" (campaigns: cmp-a, '\
'cmp-b)$' "$work/err" || { cat "$work/err"; fail "unknown campaign at the coordinator"; }
check "through --coordinator: the same cells; an unknown campaign exits 2"

# --- a regression and a missing target --------------------------------------------------------
# This machine's noise may be large enough to leave any difference inconclusive, so the edit
# makes the records' req/s exact: every matrix window valid, round 1 at 9,950 and round 2 at
# 10,050 req/s for both targets, no noise floor (fixed.json); B at half of that with hello-b
# dropped from json (slow.json). Half: 0.5 · e^{±t(0.95, 2) · 0.00707} = 0.485 to 0.515, worse.
python3 - "$work/a.json" "$work/fixed.json" "$work/slow.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for n in r["noise_floor"]:
    n["metrics"]["rps"] = None
def set_rps(scale):
    for w in r["windows"]:
        if w["noise"]:
            continue
        newest = next(a for a in w["attempts"] if a["newest"])
        newest["verdict"] = "valid"
        newest["rps"] = (9950 if w["round"] == 1 else 10050) * scale
    for cell in r["cells"]:
        for t in cell["targets"]:
            t["metrics"]["rps"].update(n=2, median=10000 * scale, min=9950 * scale,
                                       max=10050 * scale, spread_pct=1.0)
set_rps(1)
json.dump(r, open(sys.argv[2], "w"))
set_rps(0.5)
for cell in r["cells"]:
    if cell["scenario"] == "json":
        cell["targets"] = [t for t in cell["targets"] if t["target"] != "hello-b"]
r["windows"] = [w for w in r["windows"]
                if not (w["scenario"] == "json" and w["target"] == "hello-b")]
json.dump(r, open(sys.argv[3], "w"))
PY
# By default hello-b is judged by its ratio to hello-a, which halved with it: close; only the
# baseline's own rows (absolute) regress.
expect_status 3 "$bin/benchlab" compare "$work/fixed.json" "$work/slow.json" \
  --fail-on-regression 10
grep -q "^Summary: 3 in both, 1 only in A, 0 only in B\. req/s: 0 better, 2 worse, 1 close, " \
  "$work/out" || { cat "$work/out"; fail "the baseline basis cancels what halved both"; }
grep -qx "benchlab compare: 2 regression(s) worse than A by more than 10%" "$work/err" ||
  { cat "$work/err"; fail "the baseline's rows regress"; }
expect_status 3 "$bin/benchlab" compare "$work/fixed.json" "$work/slow.json" \
  --fail-on-regression 10 --basis absolute
grep -q "^REGRESSION hello · c4 · hello-a: req/s -50.0%, " "$work/out" ||
  { cat "$work/out"; fail "regression line"; }
grep -q "^Summary: 3 in both, 1 only in A, 0 only in B\. req/s: 0 better, 3 worse, " \
  "$work/out" || { cat "$work/out"; fail "summary with a target only in A"; }
grep -Eq '^hello-b +req/s +[0-9,]+ .* +— +— +only in A' "$work/out" ||
  { cat "$work/out"; fail "only in A row"; }
grep -qx "benchlab compare: 3 regression(s) worse than A by more than 10%" "$work/err" ||
  { cat "$work/err"; fail "stderr names the regressions"; }
expect_status 0 "$bin/benchlab" compare "$work/fixed.json" "$work/slow.json" \
  --fail-on-regression 50 --basis absolute
expect_status 0 "$bin/benchlab" compare "$work/a.json" "$work/a.json" --fail-on-regression 0
grep -q "req/s: 0 better, 0 worse, " "$work/out" ||
  { cat "$work/out"; fail "A vs A is neither better nor worse"; }
check "--fail-on-regression: half the req/s exits 3 beyond 10%, 0 at 50%; the baseline basis "\
"clears hello-b; A against A exits 0"

# --- bad input --------------------------------------------------------------------------------
expect_status 2 "$bin/benchlab" compare cmp-a helo --db "$db"
grep -qx "benchlab compare: no campaign \"helo\" in $db (campaigns: cmp-a, cmp-b)" "$work/err" ||
  { cat "$work/err"; fail "unknown campaign message"; }
echo '{"format": "something-else", "version": 1}' > "$work/other.json"
expect_status 2 "$bin/benchlab" compare "$work/a.json" "$work/other.json"
grep -qx "benchlab compare: $work/other.json: not a benchlab run of record (format "\
'"something-else", expected "benchlab-run-of-record")' "$work/err" ||
  { cat "$work/err"; fail "wrong format message"; }
expect_status 2 "$bin/benchlab" compare "$work/a.json" "$work/b.json" --fail-on-regression ten
[ "$(wc -l < "$work/err")" -eq 1 ] || { cat "$work/err"; fail "one line for a bad PCT"; }
expect_status 2 "$bin/benchlab" compare "$work/a.json" "$work/b.json" --confidence 1.5
grep -qx 'benchlab compare: --confidence: expected a fraction from 0.5 to 0.999, got "1.5"' \
  "$work/err" || { cat "$work/err"; fail "bad confidence message"; }
expect_status 2 "$bin/benchlab" compare cmp-a cmp-b --db "$work/missing.db"
[ ! -e "$work/missing.db" ] || fail "compare must not create a database"
# A coordinator that cannot be reached: a failure, 1, from compare as from report (docs/cli.md).
expect_status 1 "$bin/benchlab" compare cmp-a cmp-b --coordinator 127.0.0.1:1
grep -q '^benchlab compare: cannot reach the coordinator at 127.0.0.1:1 (Connection refused)' \
  "$work/err" ||
  { cat "$work/err"; fail "unreachable coordinator message"; }
expect_status 1 "$bin/benchlab" report cmp-a --coordinator 127.0.0.1:1
expect_status 2 "$bin/benchlab" compare cmp-a cmp-b
grep -qx 'benchlab compare: A: "cmp-a" is no .json file, and without --db FILE or '\
'--coordinator HOST:PORT it cannot be a campaign' "$work/err" ||
  { cat "$work/err"; fail "no source for a campaign name"; }
check "unknown campaign, wrong file, bad PCT, missing database, no source: exit 2, one line; "\
"an unreachable coordinator: exit 1, as from report"

"$bin/benchlab" compare --help > /dev/null || fail "benchlab compare --help"
echo "$passed checks passed"

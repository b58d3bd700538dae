#!/usr/bin/env bash
# End to end, with real processes: one campaign file run three times under new names
# (`benchlab run --name`) forms the series of the file's name, beside a campaign of another
# series in the same database; `benchlab history` prints that series' three campaigns per line,
# as tables and JSON whose medians are those of `benchlab report`; bad input exits 2 with one
# line (docs/history.md); a coordinator serving the database answers `history` and `regressions
# --coordinator` with the bytes `--db` writes. The third run is labelled (`--label hello=...`): its label is the
# target's version in the history; a bad --label exits 2 before anything is submitted, and
# `benchlab submit --label` sends the label in the campaign's text.
# Usage: history_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
db="$work/lab.db"

write_campaign() {  # write_campaign FILE NAME
  cat > "$1" <<TOML
name = "$2"
baseline = "hello"
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
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
}
write_campaign "$work/nightly.toml" nightly
write_campaign "$work/other.toml" other
for n in 1 2 3; do
  label=()
  [ "$n" -ne 3 ] || label=(--label "hello=3f2a9c1 (main)")
  "$bin/benchlab" run "$work/nightly.toml" --name "nightly-$n" "${label[@]}" --db "$db" \
    > "$work/run-$n.out" 2>&1 || { cat "$work/run-$n.out"; fail "benchlab run nightly-$n"; }
done
"$bin/benchlab" run "$work/other.toml" --db "$db" > "$work/run-other.out" 2>&1 ||
  { cat "$work/run-other.out"; fail "benchlab run other"; }
[ "$(sqlite3 "$db" "select group_concat(name || ':' || series, ' ') from campaigns")" = \
  "nightly-1:nightly nightly-2:nightly nightly-3:nightly other:other" ] ||
  fail "series: $(sqlite3 "$db" "select name, series from campaigns")"
check "three runs under new names keep the file's series; another file is its own"

expect_status 0 "$bin/benchlab" history nightly --db "$db"
grep -q "^series nightly: 3 campaign(s), rps (higher is better)" "$work/out" ||
  { cat "$work/out"; fail "history header"; }
grep -qx "hello c4 hello" "$work/out" || { cat "$work/out"; fail "the line's title"; }
[ "$(grep -Ec '^  [123] +nightly-[123] ' "$work/out")" -eq 3 ] ||
  { cat "$work/out"; fail "one row per campaign"; }
grep -q "other" "$work/out" && fail "another series' campaign in the history"
check "history: the series' three campaigns on its line"
grep -Eq '^  3 +nightly-3 .* 3f2a9c1 \(main\) \(label\)$' "$work/out" ||
  { cat "$work/out"; fail "the labelled campaign's version"; }
[ "$(grep -c '(label)$' "$work/out")" -eq 1 ] || { cat "$work/out"; fail "one label only"; }
check "history: the labelled run shows its label as the version, marked (label)"

expect_status 0 "$bin/benchlab" history nightly --db "$db" --json --figure cpu --cell hello/c4
cp "$work/out" "$work/history.json"
for n in 1 2 3; do
  "$bin/benchlab" report "nightly-$n" --db "$db" --format json -o "$work/report-$n.json"
done
python3 - "$work" <<'PY' || fail "history's JSON disagrees with the reports"
import json, sys
work = sys.argv[1]
h = json.load(open(f"{work}/history.json"))
assert h["series"] == "nightly" and h["figure"] == "cpu_us_per_request", h
assert [c["name"] for c in h["campaigns"]] == ["nightly-1", "nightly-2", "nightly-3"], h
assert [c["labels"] for c in h["campaigns"]] == [{}, {}, {"hello": "3f2a9c1 (main)"}], h
assert h["campaigns"][2]["versions"] == {"hello": "3f2a9c1 (main)"}, h
(line,) = h["lines"]
assert (line["scenario"], line["load_level"], line["target"]) == ("hello", "c4", "hello"), line
for n, point in zip((1, 2, 3), line["points"]):
    assert point["campaign"] == f"nightly-{n}", point
    report = json.load(open(f"{work}/report-{n}.json"))
    text = json.dumps(report)
    # The report's median CPU per request of this cell and target is the history's.
    medians = []
    def walk(x):
        if isinstance(x, dict):
            if x.get("target") == "hello" and isinstance(x.get("metrics"), dict):
                m = x["metrics"].get("cpu_us_per_request")
                if isinstance(m, dict) and "median" in m:
                    medians.append(m["median"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(report)
    assert medians, f"no median in report {n}"
    assert abs(medians[0] - point["median"]) <= 1e-9 * abs(medians[0]), (medians, point)
    assert point["n"] == len(point["values"]) >= 1, point
    if point["n"] >= 2:
        assert point["low"] <= point["estimate"] <= point["high"], point
PY
check "JSON: every campaign's median is its report's, inside its interval"

expect_status 2 "$bin/benchlab" history nightly --db "$db" --figure speed
grep -q "^benchlab history: --figure: expected rps, cpu, p99" "$work/err" || fail "$(cat "$work/err")"
expect_status 2 "$bin/benchlab" history nighty --db "$db"
grep -qx "benchlab history: no series \"nighty\" in $db (series: nightly, other)" "$work/err" ||
  fail "$(cat "$work/err")"
expect_status 2 "$bin/benchlab" history nightly --db "$work/missing.db"
[ ! -e "$work/missing.db" ] || fail "a missing --db was created"
expect_status 2 "$bin/benchlab" history nightly --db "$db" --cell /c4
check "bad figure, unknown series, missing database and bad cell exit 2 with one line"
# Three campaigns are too few for a change point (3 on each side at least): regressions says so
# in every format, and refuses bad input.
expect_status 0 "$bin/benchlab" regressions nightly --db "$db"
grep -qx "series nightly: 3 campaign(s), 0 change point(s)" "$work/out" ||
  { cat "$work/out"; fail "regressions' text"; }
expect_status 0 "$bin/benchlab" regressions nightly --db "$db" --format markdown -o "$work/pr.md"
[ "$(cat "$work/pr.md")" = "### benchlab: series \`nightly\`

No change point in 3 campaign(s)." ] || { cat "$work/pr.md"; fail "regressions' markdown"; }
expect_status 0 "$bin/benchlab" regressions nightly --db "$db" --format json --since nightly-2
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j=={"series":"nightly","campaigns":3,"changes":[]}, j' \
  "$work/out" || fail "regressions' JSON: $(cat "$work/out")"
expect_status 2 "$bin/benchlab" regressions nightly --db "$db" --since other
grep -qx "benchlab regressions: --since: no campaign \"other\" in series \"nightly\"" "$work/err" ||
  fail "$(cat "$work/err")"
expect_status 2 "$bin/benchlab" regressions nightly --db "$db" --figure rps --figure speed
check "regressions: none in three campaigns, as text, Markdown and JSON; bad input exits 2"

# --label: a bad flag exits 2 with one line and submits nothing.
label_refused() {  # label_refused WANT_ERR_LINE ARGS...
  local want=$1; shift
  expect_status 2 "$bin/benchlab" "$@"
  [ "$(cat "$work/err")" = "$want" ] || fail "--label: $(cat "$work/err"), want: $want"
}
label_refused "benchlab run: --label \"hello\": expected TARGET=VALUE, such as hello=v1.4.2" \
  run "$work/nightly.toml" --name nightly-9 --db "$db" --label hello
label_refused "benchlab run: --label \"nope=v1\": expected the name of a [[target]] (hello) before '=', got \"nope\"" \
  run "$work/nightly.toml" --name nightly-9 --db "$db" --label nope=v1
label_refused "benchlab run: --label \"hello=\": expected a version string or a git commit of 1 to 256 printable characters after '=', got \"\"" \
  run "$work/nightly.toml" --name nightly-9 --db "$db" --label hello=
label_refused "benchlab run: --label \"hello=v2\": target hello labelled twice; give each target one label" \
  run "$work/nightly.toml" --name nightly-9 --db "$db" --label hello=v1 --label hello=v2
{ cat "$work/nightly.toml"; printf '[labels]\nhello = "v1"\n'; } > "$work/labelled.toml"
label_refused "benchlab run: --label \"hello=v2\": $work/labelled.toml labels hello already (\"v1\"); give a target's label in one place" \
  run "$work/labelled.toml" --name nightly-9 --db "$db" --label hello=v2
label_refused "benchlab submit: --label \"nope=v1\": expected the name of a [[target]] (hello) before '=', got \"nope\"" \
  submit "$work/nightly.toml" --coordinator 127.0.0.1:1 --label nope=v1
[ "$(sqlite3 "$db" "select count(*) from campaigns where name = 'nightly-9'")" -eq 0 ] ||
  fail "a refused --label submitted its campaign"
check "--label without '=', of an unknown target, empty, twice or labelled in the file: exit 2"

# The labels are in the text stored: --resume compares it with the file and the same labels.
for other in "--label hello=v2" ""; do
  # shellcheck disable=SC2086
  expect_status 2 "$bin/benchlab" run "$work/nightly.toml" --name nightly-3 --db "$db" --resume $other
  grep -q "was submitted from a different file or with other --label values" "$work/err" ||
    fail "--resume with other labels: $(cat "$work/err")"
done
check "run --resume with other or no --label values than the run's is refused"

# submit sends the label in the text; the coordinator stores it (no agent: it stays queued).
local_coordinator_start
write_campaign "$work/submitted.toml" submitted
expect_status 0 "$bin/benchlab" submit "$work/submitted.toml" --coordinator "127.0.0.1:$port" \
  --label "hello=v9"
stored=$(sqlite3 "$work/lab.db" "select spec_toml from campaigns where name = 'submitted'")
[ "$stored" = "$(cat "$work/submitted.toml"; printf '\n[labels]\nhello = "v9"')" ] ||
  fail "submit --label: stored $stored"
check "submit --label: the coordinator stores the file's text with the label added"

# The coordinator serving the database answers history and regressions with the same bytes.
same_from_coordinator() {  # same_from_coordinator ARGS...
  expect_status 0 "$bin/benchlab" "$@" --db "$db"
  mv "$work/out" "$work/from-db"
  expect_status 0 "$bin/benchlab" "$@" --coordinator "127.0.0.1:$port"
  [ -s "$work/out" ] || fail "$*: nothing written"
  cmp -s "$work/from-db" "$work/out" ||
    { diff "$work/from-db" "$work/out"; fail "$*: --db and --coordinator differ"; }
}
same_from_coordinator history nightly
same_from_coordinator history nightly --json --figure cpu --cell hello/c4
same_from_coordinator regressions nightly
same_from_coordinator regressions nightly --format md --dashboard https://lab.example/
same_from_coordinator regressions nightly --format json --since nightly-2 --figure p99,rps
expect_status 2 "$bin/benchlab" history nighty --coordinator "127.0.0.1:$port"
grep -qx "benchlab history: no series \"nighty\" in the coordinator's database (series: nightly, other, submitted)" \
  "$work/err" || fail "$(cat "$work/err")"
expect_status 2 "$bin/benchlab" history nightly
grep -qx "benchlab history: give exactly one of --db FILE and --coordinator HOST:PORT" "$work/err" ||
  fail "$(cat "$work/err")"
check "history and regressions: --coordinator writes what --db writes, text, Markdown and JSON"
echo "passed: $passed"

#!/usr/bin/env bash
# End to end, with real processes and a real perf: `benchlab run --profile` measures hello-server
# as it is (hello-a) and made 20 µs per request slower in SpendCpu (hello-b); every valid window
# has a profile; `benchlab profile` lists hello-b's functions with SpendCpu first, writes
# collapsed stacks a flame graph tool reads, and `--diff hello-a hello-b` names SpendCpu first
# with an interval that holds a growth of the size it was given. Bad input exits 2 with what was
# expected. Skipped (77) where perf is missing. Usage: profile_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
command -v perf > /dev/null || { echo "SKIP: perf is missing (make deps installs linux-perf)"; exit 77; }

campaign() {  # campaign NAME PROFILE_TABLE
  cat > "$work/$1.toml" <<TOML
name = "$1"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 3
warmup = "200ms"
duration = "1s"
[load]
cpus = "1"
# The plumbing is under test, not this machine's neighbours.
[gates]
mode = "warn"
$2
[[target]]
name = "hello-a"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[target]]
name = "hello-b"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "20000"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
}

db="$work/lab.db"
campaign prof "[profile]
frequency = 499"
expect_status 0 "$bin/benchlab" run "$work/prof.toml" --db "$db" --profile
leaves_lab_dir_in "$work/err"
check "benchlab run --profile measured the campaign"

# --- one target's functions ------------------------------------------------------------------
expect_status 2 "$bin/benchlab" profile prof --db "$db"
grep -q "several targets (hello-a, hello-b)" "$work/err" || { cat "$work/err"; fail "two targets"; }
check "two targets are not added together"

expect_status 0 "$bin/benchlab" profile prof --db "$db" --target hello-b --top 5
cp "$work/out" "$work/b.txt"
grep -q "^target hello-b: 3 window(s), [0-9]* samples, [0-9.]* CPU µs per request" "$work/b.txt" ||
  { cat "$work/b.txt"; fail "header: 3 windows of hello-b"; }
# The first function row (after the header and the column titles) is SpendCpu.
sed -n '3p' "$work/b.txt" | grep -q "SpendCpu" || { cat "$work/b.txt"; fail "SpendCpu first"; }
check "hello-b's functions: SpendCpu first, in µs per request"

expect_status 0 "$bin/benchlab" profile prof --db "$db" --target hello-b --cell hello/c4 \
  --format collapsed -o "$work/b.folded"
[ -s "$work/b.folded" ] || fail "no collapsed stacks written"
if grep -Evq '^[^ ].* [0-9]+$' "$work/b.folded"; then
  grep -Ev '^[^ ].* [0-9]+$' "$work/b.folded" | head -3
  fail "a collapsed line is not STACK COUNT"
fi
grep -q "^hello-server;.*SpendCpu" "$work/b.folded" || fail "SpendCpu under hello-server's root"
check "collapsed stacks, one STACK COUNT per line"

# pprof: gzipped perftools.profiles.Profile, read back by protoc with pprof's own proto.
proto=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
expect_status 0 "$bin/benchlab" profile prof --db "$db" --target hello-b --format pprof \
  -o "$work/b.pb.gz"
gunzip -c "$work/b.pb.gz" |
  protoc -I /usr/share/gocode/src --decode perftools.profiles.Profile \
    github.com/google/pprof/proto/profile.proto > "$work/b.pprof.txt" 2> "$work/protoc.err" ||
  { cat "$work/protoc.err"; fail "protoc cannot read the pprof file ($proto)"; }
grep -q 'string_table: ".*SpendCpu' "$work/b.pprof.txt" || fail "SpendCpu in pprof's strings"
grep -q 'string_table: "nanoseconds"' "$work/b.pprof.txt" || fail "pprof's cpu/nanoseconds type"
check "pprof, read back through profile.proto"

expect_status 0 "$bin/benchlab" profile prof --db "$db" --target hello-b --format speedscope \
  -o "$work/b.speedscope.json"
python3 - "$work/b.speedscope.json" <<'PY' || fail "speedscope's JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json", doc.keys()
frames = doc["shared"]["frames"]
p = doc["profiles"][0]
assert p["type"] == "sampled" and p["unit"] == "microseconds", p["type"]
assert all(0 <= i < len(frames) for s in p["samples"] for i in s)
assert abs(sum(p["weights"]) - p["endValue"]) < 1e-6 * p["endValue"], p["endValue"]
assert any("SpendCpu" in f["name"] for f in frames)
PY
check "speedscope's file format"

# --- the difference ----------------------------------------------------------------------------
expect_status 0 "$bin/benchlab" profile prof --db "$db" --diff hello-a hello-b --format json
python3 - "$work/out" <<'PY' || fail "the diff's JSON"
import json, sys
cells = json.load(open(sys.argv[1]))
assert len(cells) == 1, cells
c = cells[0]
assert c["scenario"] == "hello" and c["load_level"] == "c4" and c["rounds"] == 3, c
first = c["functions"][0]
assert "SpendCpu" in first["function"], first
# hello-a calls it with no work to do: a sample may land on its entry, never more than a trace.
assert first["only_new"] or (
    first["base_self_us_per_request"] < 0.05 * first["new_self_us_per_request"]), first
# 20 µs per request was added: most in SpendCpu's own code, the rest in the clock it reads, so
# its total (inclusive) growth is of that size, give or take the sampling over three rounds.
assert 5 < first["self_delta_us"] <= first["total_delta_us"], first
assert 12 < first["total_delta_us"] < 28, first
assert first["low"] <= first["self_delta_us"] <= first["high"], first
print("SpendCpu self +%.2f µs [%.2f, %.2f], total +%.2f µs, share %.0f%%" %
      (first["self_delta_us"], first["low"], first["high"], first["total_delta_us"],
       100 * first["share"]))
PY
check "the diff names SpendCpu first with its growth"

expect_status 0 "$bin/benchlab" profile prof --db "$db" --diff hello-a hello-b --format markdown
grep -q "^| function | Δ self µs/request | 95% interval |" "$work/out" ||
  { cat "$work/out"; fail "the Markdown table"; }
check "the diff as Markdown"

# The report has each target against the baseline by function.
expect_status 0 "$bin/benchlab" report prof --db "$db"
grep -q "^## CPU profiles$" "$work/out" || { cat "$work/out"; fail "the report's profile section"; }
grep -q "^#### hello/c4: hello-b against hello-a$" "$work/out" || fail "the report's cell table"
# hello-a calls SpendCpu with no work, so a sample may land there too: "(only in hello-b)" is
# then not written, and the row still shows hello-b's growth.
grep -q "^| .*SpendCpu[^|]* | +[0-9.]* |" "$work/out" || { cat "$work/out"; fail "SpendCpu in the report"; }
check "the report shows where hello-b's CPU goes"

# --- bad input ---------------------------------------------------------------------------------
expect_status 2 "$bin/benchlab" profile prof --db "$db" --target hello-b --cell hello
grep -q "expected SCENARIO/LEVEL" "$work/err" || { cat "$work/err"; fail "--cell's form"; }
expect_status 2 "$bin/benchlab" profile prof --db "$db" --target nope
grep -q "profiled targets: hello-a, hello-b" "$work/err" || { cat "$work/err"; fail "what exists"; }
expect_status 2 "$bin/benchlab" profile prof --db "$db" --format pdf
grep -q "\-\-format: expected one of" "$work/err" || { cat "$work/err"; fail "--format"; }
expect_status 2 "$bin/benchlab" profile nope --db "$db"
expect_status 2 "$bin/benchlab" profile prof --db "$work/absent.db"
[ ! -e "$work/absent.db" ] || fail "a missing --db was created"
check "bad input exits 2 naming what was expected"

echo "PASS: $passed checks"

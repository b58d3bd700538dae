#!/usr/bin/env bash
# End to end, with real processes: one campaign measured by benchlab's generator, wrk and h2load
# on the same target (`[load] tool = [...]`). Every window is measured by the tool it names, the
# tool's output lands in the window's load record, what the tool cannot measure is listed as
# unavailable, and the report puts benchlab beside each tool. Skipped (77) when wrk or h2load is
# not installed (make test installs both).
# Usage: load_tools_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
for tool in wrk h2load; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

cat > "$work/tools.toml" <<TOML
name = "tools"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 1
warmup = "200ms"
duration = "1s"
[load]
cpus = "1"
tool = ["benchlab", "wrk", "h2load"]
# The plumbing is under test, not this machine's neighbours.
[gates]
mode = "warn"
[[target]]
name = "hello-a"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

db="$work/tools.db"
"$bin/benchlab" run "$work/tools.toml" --db "$db" --progress plain > "$work/run.out" 2> "$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "benchlab run exited $?"; }
grep -q "3 windows: 3 valid" "$work/run.out" || { cat "$work/run.out"; fail "run summary"; }
check "one window per tool, all measured"

"$bin/benchlab" report tools --db "$db" --format json --output "$work/report.json"
python3 - "$work/report.json" <<'PY' || fail "the windows of each tool"
import json, sys
r = json.load(open(sys.argv[1]))
by_level = {w["load_level"]: w["attempts"][-1] for w in r["windows"]}
assert sorted(by_level) == ["c4", "c4@h2load", "c4@wrk"], sorted(by_level)
for level, a in by_level.items():
    tool = level.split("@")[1] if "@" in level else "benchlab"
    rec = a["load_record"]
    assert a["requests"] > 0 and a["rps"] > 0, (level, a["requests"])
    assert a["server_cpu_s"] > 0, level
    if tool == "benchlab":
        assert a["histogram"].startswith("h1:") and "unavailable" not in rec, level
        continue
    assert rec["tool"] == tool, rec.get("tool")
    assert rec["argv"][0] == tool and "output" in rec, rec["argv"]
    assert "histogram" in rec["unavailable"] and "p999_us" in rec["unavailable"], rec["unavailable"]
    assert a["histogram"] == "", level
    assert a["load_cpu_s"] > 0, (level, a["load_cpu_s"])
wrk = by_level["c4@wrk"]
assert wrk["p99_us"] > 0 and wrk["load_record"]["latency_us"]["p99"] == wrk["p99_us"]
h2 = by_level["c4@h2load"]
assert "p99_us" in h2["load_record"]["unavailable"], h2["load_record"]["unavailable"]
tools = {c["tool"]: c for c in r["load_tools"]}
assert sorted(tools) == ["h2load", "wrk"], sorted(tools)
for c in tools.values():
    t = c["targets"][0]
    assert t["target"] == "hello-a" and t["ratio"]["n"] == 1 and t["ratio"]["median"] > 0, t
PY
check "each tool's figures, its command and output in the record, the unavailable ones listed"

"$bin/benchlab" report tools --db "$db" > "$work/report.md"
grep -q '^## benchlab against h2load and wrk$' "$work/report.md" || { cat "$work/report.md"; fail "tools section"; }
grep -q '^### hello · 4 connections · benchlab against wrk$' "$work/report.md" || fail "wrk cell"
grep -q '^## hello · 4 connections, h2load$' "$work/report.md" || fail "h2load's own cell"
check "the report sets benchlab beside wrk and h2load"
echo "$passed checks passed"

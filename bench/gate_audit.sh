#!/usr/bin/env bash
# The gates on this machine, before and after a change, side by side in one run: RUNS runs of the
# example campaign (examples/hello.toml, 24 windows) and one A/A campaign of three identical
# reference servers (hello-server with 5 us of extra CPU per request, one cell, 8 rounds of 2 s),
# each measured with the BEFORE binary and the AFTER binary in turn. Prints, per run, the valid
# windows of the first attempts, the windows measured again, and each gate's audit (docs/gates.md,
# "Every gate audits itself"), which the AFTER binary computes from either database: the audit
# is a function of the stored windows alone. A benchmark, not a test: it asserts nothing.
# Usage: [RUNS=5] bench/gate_audit.sh BEFORE_BIN_DIR AFTER_BIN_DIR [OUT_DIR]
# Needs a quiet machine: anything else running is foreign CPU, and the gates refuse its windows.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(cd "${1:?usage: $0 BEFORE_BIN_DIR AFTER_BIN_DIR [OUT_DIR]}" && pwd)
after=$(cd "${2:?usage: $0 BEFORE_BIN_DIR AFTER_BIN_DIR [OUT_DIR]}" && pwd)
out=${3:-/tmp/benchlab-gate-audit}
runs=${RUNS:-5}
mkdir -p "$out"

# The A/A campaign: three names of one server, a steady target (about 10 us of CPU a request).
cat > "$out/aa3.toml" <<TOML
name = "aa3"
baseline = "a"
[matrix]
connections = [16]
rounds = 8
order = "rotate"
warmup = "500ms"
duration = "2s"
[load]
cpus = "1"
[gates]
generator_bound = false
TOML
for t in a b c; do
  cat >> "$out/aa3.toml" <<TOML
[[target]]
name = "$t"
command = ["$after/hello-server", "--port", "{port}", "--work-ns", "5000"]
cpus = "0"
TOML
done
cat >> "$out/aa3.toml" <<TOML
[[scenario]]
name = "json"
path = "/json"
expect = { status = 200 }
TOML

# run WHICH BIN CAMPAIGN_FILE NAME DB: one campaign; prints valid first attempts, re-measured
# windows and the audit.
run() {
  local which=$1 bin=$2 file=$3 name=$4 db=$5
  rm -f "$db"
  "$bin/benchlab" run "$file" --db "$db" --progress off > "$db.log" 2>&1 || true
  local first valid again refused
  first=$(sqlite3 "$db" "select count(*) from windows where attempt = 1")
  valid=$(sqlite3 "$db" "select count(*) from windows where attempt = 1 and verdict = 'valid'")
  again=$(sqlite3 "$db" "select count(*) from windows where attempt > 1")
  refused=$(sqlite3 "$db" "select coalesce(group_concat(g || ' ' || n, ', '), '-') from (
    select json_extract(o.value, '$.name') g, count(*) n from windows w, json_each(w.outcome) o
    where w.verdict = 'invalid' and json_extract(o.value, '$.kind') = 'gate' group by g)")
  local newest
  newest=$(sqlite3 "$db" "select count(*) from windows w where verdict = 'valid' and attempt =
    (select max(v.attempt) from windows v where v.target = w.target and v.scenario = w.scenario
     and v.load_level = w.load_level and v.round = w.round and v.position = w.position)")
  printf '%-6s %-5s valid first attempts %2d of %2d; measured again %2d; valid windows %2d; refused: %s\n' \
    "$which" "$name" "$valid" "$first" "$again" "$newest" "$refused"
  "$after/benchlab" report "$name" --db "$db" --format json 2>/dev/null |
    python3 -c 'import json,sys
for a in json.load(sys.stdin).get("gate_audit", []):
    print("         audit: %-9s %s" % (a["verdict"], a["words"]))' || true
  if [ "$name" = aa3 ]; then
    "$after/benchlab" report "$name" --db "$db" 2>/dev/null |
      grep -E '^\| (b|c) ' | sed 's/^/         /' || true
  fi
}

for i in $(seq 1 "$runs"); do
  run before "$before" examples/hello.toml hello "$out/hello-before-$i.db"
  run after "$after" examples/hello.toml hello "$out/hello-after-$i.db"
done
run before "$before" "$out/aa3.toml" aa3 "$out/aa3-before.db"
run after "$after" "$out/aa3.toml" aa3 "$out/aa3-after.db"
echo "databases and logs: $out"

#!/usr/bin/env bash
# End to end, with real processes (docs/methodology.md, "Bisection"; docs/agent.md, "Builds"):
# a git repository of eight commits of a target whose "build" copies a start script that runs
# the bundled hello-server; the sixth commit makes every request spend 40 us more CPU, and the
# fourth does not build. `benchlab bisect` builds each commit it measures in the server agent's
# build cache, measures it against both ends, skips the commit that does not build, and names
# the sixth commit, with every step stored and shown again by `--status`, and the sixth commit
# profiled against its parent shows the CPU it added. Bad input (a
# revision that names nothing, a target without a build recipe) exits 2 saying what is wrong.
# Usage: bisect_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"

bin=$(cd "$1" && pwd)
db="$work/lab.db"
repo="$work/app"

bisect_repo "$repo"

cat > "$work/bisect.toml" <<TOML
name = "bisect-e2e"
baseline = "plain"
[matrix]
connections = [4]
rounds = 3
warmup = "100ms"
duration = "300ms"
[load]
cpus = "1"
# The plumbing is under test, not this machine's neighbours.
[gates]
mode = "warn"
[[target]]
name = "app"
command = ["sh", "{out}/start.sh", "{port}"]
cpus = "0"
source = "$repo"
build = [["cp", "{src}/start.sh", "{out}/start.sh"]]
[[target]]
name = "plain"
command = ["$bin/hello-server", "--port", "{port}"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

# --- bad input -----------------------------------------------------------------------------
expect_status 2 "$bin/benchlab" bisect "$work/bisect.toml" --target app --good nosuchrev \
  --bad main --db "$db"
grep -q -- '--good' "$work/err" && grep -q 'nosuchrev' "$work/err" ||
  { cat "$work/err"; fail "a revision that names no commit was not named"; }
expect_status 2 "$bin/benchlab" bisect "$work/bisect.toml" --target plain --good "${oids[0]}" \
  --bad main --db "$db"
grep -q 'no `source` and `build`' "$work/err" || { cat "$work/err"; fail "a target without a recipe"; }
# The ends the wrong way round: the bad commit is not after the good one.
expect_status 2 "$bin/benchlab" bisect "$work/bisect.toml" --target app --good main \
  --bad "${oids[0]}" --db "$db"
grep -q 'not an ancestor' "$work/err" || { cat "$work/err"; fail "ends the wrong way round"; }
check "bad input exits 2 naming what is wrong"
# An end that does not build: the search stops at its first look, saying so.
"$bin/benchlab" bisect "$work/bisect.toml" --target app --good "${oids[0]}" --bad "${oids[3]}" \
  --db "$db" --format json --progress off > "$work/end.json" 2> "$work/end.log" ||
  { cat "$work/end.log"; fail "a bisection whose bad end does not build"; }
jq -e '.state == "failed" and (.result | test("^the bad end [0-9a-f]{12} does not build: build: "))
  and (.steps | length) == 0' "$work/end.json" > /dev/null ||
  { cat "$work/end.json"; fail "a bad end that does not build did not stop the search"; }
[ "$(grep -c '^measuring' "$work/end.log")" -eq 1 ] || { cat "$work/end.log"; fail "more than one look"; }
check "an end that does not build stops the search at its first look"

# --- the search ----------------------------------------------------------------------------
"$bin/benchlab" bisect "$work/bisect.toml" --target app --good "${oids[0]}" --bad main \
  --db "$db" --format json --progress off > "$work/bisect.json" 2> "$work/bisect.log" ||
  { cat "$work/bisect.json"; fail "benchlab bisect"; }
jq -e --arg c "$culprit" '.state == "found" and .culprit == $c' "$work/bisect.json" > /dev/null ||
  { cat "$work/bisect.json"; fail "the culprit is not commit 6 ($culprit)"; }
check "the bisection names the sixth commit"
# Every measured step is right: commits before the sixth like good, from it on like bad; the
# fourth, if measured, failed to build.
jq -e --argjson oids "$(printf '%s\n' "${oids[@]}" | jq -R . | jq -s .)" '
  [.steps[] | . as $s | ($oids | index($s.oid)) as $i |
   if $i == 3 then $s.decision == "build failed" and $s.build == "failed"
   elif $i < 5 then $s.decision == "good" else $s.decision == "bad" end] | all' \
  "$work/bisect.json" > /dev/null || { cat "$work/bisect.json"; fail "a step decided wrongly"; }
steps=$(jq '.steps | length' "$work/bisect.json")
[ "$steps" -le 4 ] || { cat "$work/bisect.json"; fail "$steps steps for 8 commits"; }
check "each of $steps steps decided the commit's side"
id=$(jq .id "$work/bisect.json")
[ "$(sqlite3 "$db" "select count(*) from bisect_steps where bisection_id = $id")" -eq "$steps" ] ||
  fail "the store does not hold every step"
"$bin/benchlab" bisect --status "$id" --db "$db" > "$work/status.out"
grep -q "first bad commit: $culprit change 5" "$work/status.out" ||
  { cat "$work/status.out"; fail "--status does not name the culprit"; }
check "--status shows the stored search"
# The culprit against its parent, profiled: its 40 us of work per request is where the CPU went.
jq -e '(.culprit_campaign | startswith("bisect-")) and
  (.culprit_profile.headline | test("^CPU per request \\+[0-9]"))' "$work/bisect.json" > /dev/null ||
  { jq .culprit_profile "$work/bisect.json"; fail "no profile diff of the culprit against its parent"; }
grep -q "where the CPU went, parent against culprit (campaign bisect-$id-culprit-" "$work/status.out" ||
  { cat "$work/status.out"; fail "--status does not show where the culprit's CPU went"; }
check "the culprit's profile diff against its parent"

# --- killed, and gone on with ----------------------------------------------------------------
# The process is killed (SIGKILL: nothing of it runs any more) once one step is stored; the lab
# it started goes with it, and --resume goes on from the decided step to the same culprit.
"$bin/benchlab" bisect "$work/bisect.toml" --target app --good "${oids[0]}" --bad main \
  --db "$db" --progress off > "$work/killed.out" 2>&1 &
victim=$!
track "$victim"
second=$((id + 1))
stored_steps() {  # stored_steps ID: at least one step of the bisection is stored
  [ "$(sqlite3 -cmd ".timeout 2000" "$db" \
    "select count(*) from bisect_steps where bisection_id = $1")" -ge 1 ]
}
wait_until 120 "a step of bisection $second" stored_steps "$second"
leaves_lab_dir "$victim"
kill -9 "$victim"
wait "$victim" 2> /dev/null || true
expect_none_left "after the bisection was killed"
[ "$(sqlite3 "$db" "select state from bisections where id = $second")" = running ] ||
  fail "a killed bisection is not left running"
before=$(sqlite3 "$db" "select group_concat(oid) from bisect_steps where bisection_id = $second order by step")
"$bin/benchlab" bisect --resume "$second" --db "$db" --format json --progress off \
  > "$work/resumed.json" 2> "$work/resumed.log" &
resumer=$!
track "$resumer"
going_on() { grep -q "bisection $second (going on)" "$work/resumed.log"; }
wait_until 60 "the search going on" going_on
# While it measures, a second process may not resume the same search.
expect_status 1 "$bin/benchlab" bisect --resume "$second" --db "$db"
grep -q "bisection $second is being measured by another process" "$work/err" ||
  { cat "$work/err"; fail "a second --resume of a running search was not refused"; }
wait "$resumer" || { cat "$work/resumed.log"; fail "--resume"; }
[ ! -e "$db.bisect-$second.lock" ] || fail "the ended search left its lock file"
jq -e --arg c "$culprit" '.state == "found" and .culprit == $c' "$work/resumed.json" > /dev/null ||
  { cat "$work/resumed.json"; fail "the resumed search did not name commit 6"; }
grep -q "bisection $second (going on)" "$work/resumed.log" || { cat "$work/resumed.log"; fail "not resumed"; }
# The steps decided before the kill are kept, each commit decided once.
jq -e --arg before "$before" '[.steps[].oid] | (.[0:($before | split(",") | length)] | join(",")) == $before
  and (length == (unique | length))' "$work/resumed.json" > /dev/null ||
  { cat "$work/resumed.json"; fail "the resumed search did not keep its steps ($before)"; }
expect_status 2 "$bin/benchlab" bisect --resume "$second" --db "$db"
grep -q "has ended: found" "$work/err" || { cat "$work/err"; fail "an ended search resumed"; }
check "a killed bisection goes on from its last decided step with --resume, one process at a time"
echo "PASS ($passed checks)"

#!/usr/bin/env bash
# `benchlab run --resume`: an embedded run killed with SIGKILL mid-window leaves its campaign
# "running" with the window it was measuring claimed; `run --resume` with the same file and
# database finds the cut window failed (coordinator_restart from its claim, or agent_lost when
# an agent died first), measures it again and finishes the rest, measuring nothing twice. The killed run's daemons die with it.
# Usage: resume_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
on_fail() { [[ ! -f "$work/run1.out" ]] || tail -5 "$work/run1.out"; }
sql() { sqlite3 -cmd ".timeout 5000" "$work/r.db" "$1"; }

cat > "$work/resume.toml" <<TOML
name = "resume"
baseline = "hello"
[matrix]
connections = [4]
rounds = 4
warmup = "200ms"
duration = "800ms"
# The plumbing is under test, not this machine.
[gates]
mode = "warn"
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

"$bin/benchlab" run "$work/resume.toml" --db "$work/r.db" > "$work/run1.out" 2>&1 &
run_pid=$!
track $run_pid
# Kill it while a window runs: one window stored, the next one claimed and its target running
# (the previous window's target is stopped before that window is stored).
claimed() { [[ "$(sql "SELECT count(*) FROM windows" 2>/dev/null || echo 0)" -ge 1 ]] &&
            [[ "$(sql "SELECT count(*) FROM window_claims" 2>/dev/null || echo 0)" -ge 1 ]] &&
            pgrep -s "$session" -x hello-server; }
wait_until 60 "a window in flight after the first one was stored" claimed
# A killed run cannot remove its lab's work directory: the script does, at exit.
leaves_lab_dir "$run_pid"
[[ ${#lab_dirs[@]} -gt 0 ]] || fail "the running lab's work directory was not found"
kill -9 "$run_pid"
wait "$run_pid" 2>/dev/null || true
tracked=()
# The lab's daemons die with the run (PR_SET_PDEATHSIG); the database is read once they are gone.
gone() { ! pgrep -s "$session" -f "benchlab (coordinator|agent) .*--parent-pid"; }
wait_until 10 "the killed run's daemons to exit" gone
check "the killed run's daemons died with it"
# The window cut: still claimed (the coordinator died first), or already stored as failed (an
# agent died first, was cancelled while stopping, and the coordinator stored that before dying).
cut=$(sql "SELECT round FROM window_claims UNION SELECT round FROM windows WHERE verdict = 'failed'
           LIMIT 1")
[[ "$(sql "SELECT state FROM campaigns WHERE name = 'resume'")" == running ]] ||
  fail "the campaign should be left running"
check "killed mid-window: round $cut claimed, campaign left running"

set +e
"$bin/benchlab" run "$work/resume.toml" --db "$work/r.db" --resume > "$work/run2.out" 2>&1
status=$?
set -e
leaves_lab_dir_in "$work/run2.out"
[[ $status -eq 0 ]] || { cat "$work/run2.out" >&2; fail "run --resume exited $status"; }
[[ "$(sql "SELECT state FROM campaigns WHERE name = 'resume'")" == done ]] || fail "not done"
check "run --resume finished the campaign"
# Which of its daemons dies first decides the reason: the coordinator's (its claim is found at
# the resume: coordinator_restart) or an agent's (the coordinator stores agent_lost first).
restart=$(sql "SELECT count(*) FROM windows WHERE round = $cut AND attempt = 1 AND verdict = 'failed'
               AND (reasons LIKE '[\"coordinator_restart%' OR reasons LIKE '[\"agent_lost%')")
again=$(sql "SELECT count(*) FROM windows WHERE round = $cut AND attempt = 2
             AND verdict IN ('valid', 'invalid')")
[[ "$restart" -eq 1 && "$again" -eq 1 ]] ||
  fail "round $cut: expected a failed attempt (coordinator_restart or agent_lost) and a measured one ($restart, $again)"
check "the cut window failed (coordinator_restart or agent_lost) and was measured again"
once=$(sql "SELECT count(*) FROM windows WHERE round != $cut")
[[ "$once" -eq 3 ]] || fail "the other rounds should have one attempt each, got $once rows"
[[ "$(sql "SELECT count(*) FROM window_claims")" -eq 0 ]] || fail "a claim was left"
check "every other window measured once, no claim left"

# An adaptive campaign resumes from what is stored: killed in its first rounds, the resumed run
# measures the cut window again and stops once the cell is decided (a server 300 µs slower per
# request: decided at min rounds on a quiet machine, before max on a busy one), adding no round
# after that.
cat > "$work/adaptive.toml" <<TOML
name = "resume-adaptive"
baseline = "hello"
[matrix]
connections = [4]
rounds = { min = 3, max = 6 }
warmup = "200ms"
duration = "800ms"
[gates]
mode = "warn"
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}"]
[[target]]
name = "slow"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "300000"]
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
"$bin/benchlab" run "$work/adaptive.toml" --db "$work/r.db" > "$work/run4.out" 2>&1 &
run_pid=$!
track $run_pid
stored_two() { [[ "$(sql "SELECT count(*) FROM windows w JOIN campaigns c ON c.id = w.campaign_id
                          WHERE c.name = 'resume-adaptive'" 2>/dev/null || echo 0)" -ge 2 ]]; }
wait_until 60 "two windows of the adaptive campaign stored" stored_two
leaves_lab_dir "$run_pid"
kill -9 "$run_pid"
wait "$run_pid" 2>/dev/null || true
tracked=()
wait_until 10 "the killed run's daemons to exit" gone
set +e
"$bin/benchlab" run "$work/adaptive.toml" --db "$work/r.db" --resume > "$work/run5.out" 2>&1
status=$?
set -e
leaves_lab_dir_in "$work/run5.out"
[[ $status -eq 0 ]] || { cat "$work/run5.out" >&2; fail "adaptive run --resume exited $status"; }
adaptive() { sql "SELECT $1 FROM windows w JOIN campaigns c ON c.id = w.campaign_id
                  WHERE c.name = 'resume-adaptive'"; }
[[ "$(sql "SELECT state FROM campaigns WHERE name = 'resume-adaptive'")" == done ]] ||
  fail "the adaptive campaign is not done"
last=$(adaptive "max(round)")
[[ "$last" -ge 3 && "$last" -lt 6 ]] ||
  fail "a decided cell should stop between min and max rounds, got round $last"
[[ "$(adaptive "count(DISTINCT target || round)")" -eq $((2 * last)) ]] ||
  fail "every window of rounds 1 to $last should be stored"
"$bin/benchlab" report resume-adaptive --db "$work/r.db" --format json > "$work/adaptive.json"
grep -q '"stopped": "decided"' "$work/adaptive.json" || fail "the report should say decided"
check "an adaptive campaign killed mid-run resumes, decides at round $last of 3 to 6 and stops"

# Resuming a campaign the database does not hold is bad input.
set +e
"$bin/benchlab" run "$work/resume.toml" --db "$work/other.db" --resume > "$work/run3.out" 2>&1
status=$?
set -e
[[ $status -eq 2 ]] && grep -q 'no campaign "resume"' "$work/run3.out" ||
  fail "resume without the campaign: exit $status, $(cat "$work/run3.out")"
check "--resume of a campaign not in the database is exit 2 with a clear message"
echo "PASS ($passed checks)"

#!/usr/bin/env bash
# End to end, with real processes: a campaign whose two targets run one catalogue target ([[target]]
# of) at two commits ([[target]] commit) on the embedded lab. The server agent builds each commit
# of a git repository made here by the target's recipe (docs/agent.md, "Builds") and serves the
# build's output directory ({out}): the commits' files differ, and each window's conformance check
# sees its own commit's file. A commit whose build fails fails its window's start, saying why. No
# process is left behind.
# Usage: commit_target_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
kinds='benchlab|python3(\.[0-9]+)?'
python=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }

# Three commits: reply.txt says "alpha", then "beta", then is gone (so its build fails).
repo="$work/src"
mkdir "$repo"
g() { git -C "$repo" -c user.name=t -c user.email=t@example.org "$@"; }
g init -q
echo alpha > "$repo/reply.txt"
g add reply.txt && g commit -q -m alpha && g tag v-alpha
echo beta > "$repo/reply.txt"
g commit -q -am beta && g tag v-beta
g rm -q reply.txt && g commit -q -m gone && g tag v-gone
gone=$(g rev-parse v-gone)

# campaign NAME BODY TARGETS: a campaign whose one scenario expects BODY from /reply.txt.
campaign() {
  cat > "$work/$1.toml" <<TOML
name = "$1"
baseline = "$4"
[matrix]
connections = [1]
rounds = 1
warmup = "100ms"
duration = "300ms"
[gates]
mode = "warn"
$3
[[scenario]]
name = "reply"
path = "/reply.txt"
expect = { status = 200, body = "$2\n" }
TOML
}
site="command = [\"$python\", \"-m\", \"http.server\", \"--bind\", \"127.0.0.1\", \"--directory\", \"{out}\", \"{port}\"]
source = \"$repo\"
build = [[\"cp\", \"{src}/reply.txt\", \"{out}/reply.txt\"]]"

# Both commits of one catalogue target, each checked against its own commit's file: alpha's
# window expects alpha, so beta's (of = "alpha") would fail its conformance check if it ran
# alpha's build, and the other way round in the second campaign.
campaign pair-a alpha "[[target]]
name = \"alpha\"
commit = \"v-alpha\"
$site
[[target]]
name = \"beta\"
of = \"alpha\"
commit = \"v-beta\"" alpha
"$bin/benchlab" run "$work/pair-a.toml" --db "$work/a.db" --progress plain > "$work/run-a.out" 2> "$work/run-a.err" || true
grep -q "2 windows: 1 valid" "$work/run-a.out" ||
  { cat "$work/run-a.out" "$work/run-a.err"; fail "pair-a: alpha's window valid, beta's not"; }
leaves_lab_dir_in "$work/run-a.err"
campaign pair-b beta "[[target]]
name = \"alpha\"
commit = \"v-alpha\"
$site
[[target]]
name = \"beta\"
of = \"alpha\"
commit = \"v-beta\"" alpha
"$bin/benchlab" run "$work/pair-b.toml" --db "$work/b.db" --progress plain > "$work/run-b.out" 2> "$work/run-b.err" || true
grep -q "2 windows: 1 valid" "$work/run-b.out" ||
  { cat "$work/run-b.out" "$work/run-b.err"; fail "pair-b: beta's window valid, alpha's not"; }
leaves_lab_dir_in "$work/run-b.err"
"$bin/benchlab" report pair-a --db "$work/a.db" --format json --output "$work/a.json"
"$bin/benchlab" report pair-b --db "$work/b.db" --format json --output "$work/b.json"
python3 - "$work/a.json" "$work/b.json" <<'PY' || fail "the valid window is its own commit's"
import json, sys
for path, good in zip(sys.argv[1:], ["alpha", "beta"]):
    r = json.load(open(path))
    valid = {w["target"] for w in r["windows"] if w["attempts"][-1]["verdict"] == "valid"}
    assert valid == {good}, (path, [(w["target"], w["attempts"][-1]["verdict"]) for w in r["windows"]])
PY
python3 - "$work/a.db" "$(g rev-parse v-alpha)" "$(g rev-parse v-beta)" <<'PY' || fail "windows.target_commit"
import sqlite3, sys
rows = dict(sqlite3.connect(sys.argv[1]).execute("SELECT target, target_commit FROM windows"))
assert rows == {"alpha": sys.argv[2], "beta": sys.argv[3]}, rows
PY
check "two targets run one catalogue target at two commits, each from its own build"

# A commit whose build fails: the window's start fails with the build's reason.
campaign broken gone "[[target]]
name = \"gone\"
commit = \"v-gone\"
$site" gone
set +e
"$bin/benchlab" run "$work/broken.toml" --db "$work/c.db" --progress plain > "$work/run-c.out" 2> "$work/run-c.err"
set -e
leaves_lab_dir_in "$work/run-c.err"
grep -q "1 windows: 0 valid, 0 invalid, 1 failed" "$work/run-c.out" ||
  { cat "$work/run-c.out" "$work/run-c.err"; fail "the window of a failed build"; }
"$bin/benchlab" report broken --db "$work/c.db" --format json --output "$work/c.json"
grep -q "build of ${gone:0:12} failed: step 1 of 1 (cp " "$work/c.json" ||
  { cat "$work/c.json"; fail "the failed build's reason"; }
check "a commit whose build fails fails its window, saying why"

expect_none_left "after the runs"
check "no process left behind"
echo "commit_target_test: $passed checks passed"

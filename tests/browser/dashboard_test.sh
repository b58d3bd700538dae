#!/usr/bin/env bash
# The dashboard in Debian's Chromium against a real lab: a coordinator serving the page and the
# API over HTTPS (--http, --http-tls-cert from a CA made by `benchlab ca`, --web-root build/web),
# a server agent and a load agent, a viewer's and an operator's dashboard tokens, a small
# campaign of two hello-server targets and a second one whose windows all count (for the
# intervals), both submitted with --wait, and before them a series of ten short campaigns with
# a step (`benchlab run`, its last campaign and re-measurement profiled where perf is present),
# for the series page, a series of three campaigns whose gate modes differ, and a profiled
# campaign of two hello-servers, one slowed in SpendCpu (`benchlab run --profile`, where perf is
# present), for the flame graphs, and a found bisection's rows; then
# tests/browser/dashboard.test.mjs (node's test runner, playwright-core) drives the page.
# Everything started here is stopped on exit.
# Exit 77: skipped, when Chromium is missing and cannot be installed, or cannot start here.
# Usage: dashboard_test.sh BIN_DIR SOURCE_DIR [ARTIFACT_DIR]
set -euo pipefail
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
artifacts=${3:-$bin/../test-artifacts/browser}
web_root=$(cd "$bin/.." && pwd)/web
chromium=${BENCHLAB_CHROMIUM:-/usr/bin/chromium}
work=$(mktemp -d /tmp/benchlab-browser-XXXXXX)
pids=()
cleanup() {
  # SIGTERM first, so that an agent stops its targets; then SIGKILL what is left, including a
  # browser that outlived the test (its profile is under $work).
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in $(left_behind_pids); do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do [ -e "$f" ] && { echo "== $f" >&2; tail -15 "$f" >&2; }; done
  exit 1
}
skip() { echo "SKIP: $*" >&2; exit 77; }
wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$deadline" ] || return 1; sleep 0.05; done
}
# Every process of this test: its command line names the work directory (the daemons' files, the
# targets' symlinks, the browser's profile).
left_behind_pids() {
  local p cmd
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    cmd=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) || continue
    [[ "$cmd" == *"$work"* ]] && echo "${p#/proc/}"
  done
  return 0
}

# --- what the test needs ---------------------------------------------------------------------
if [ ! -x "$chromium" ]; then
  echo "chromium is missing; installing it (scripts/install-deps.sh chromium)"
  "$src/scripts/install-deps.sh" chromium || skip "Chromium is missing and cannot be installed"
  [ -x "$chromium" ] || skip "no $chromium after installing Debian's chromium"
fi
if ! timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/probe-profile" --dump-dom 'data:text/html,<p>ok</p>' 2> "$work/probe.txt" |
    grep -q '<p>ok</p>'; then
  tail -5 "$work/probe.txt" >&2
  skip "$chromium cannot run headless here"
fi
command -v node > /dev/null || fail "node is missing (the build needs it too)"
[ -e "$src/web/node_modules/playwright-core/package.json" ] ||
  fail "web/node_modules has no playwright-core: build first (the build runs npm ci in web/)"
[ -e "$web_root/index.html" ] && [ -e "$web_root/assets/app.js" ] ||
  fail "no dashboard in $web_root: build it (cmake --build, target benchlab_web)"

# --- a series with a step -------------------------------------------------------------------
# Ten short campaigns of one file, stored as steps-1 .. steps-10 in the series "steps" by
# `benchlab run` (its own embedded lab) before the coordinator opens the database: from steps-6
# on, hello-server spends 100 us more CPU per request (--work-ns), several times its own cost, so
# req/s falls by half or more, a step the detector finds at steps-6 on any machine. Five
# campaigns on each side: with fewer, the permutation test cannot reach p <= 0.05
# (docs/history.md). The gates only warn: every window counts. The tenth run re-measures the
# change (docs/history.md, "Confirmation by re-measurement"), profiled where perf is present (its
# re-measurement is profiled as it is), so that the change links to its profile diff.
series_profiled=
command -v perf > /dev/null && series_profiled=1
series_start=$SECONDS
for i in $(seq 1 10); do
  ns=0
  [ "$i" -ge 6 ] && ns=100000
  cat > "$work/steps.toml" <<TOML
name = "steps"
baseline = "hello"
[matrix]
connections = [2]
rounds = 2
warmup = "100ms"
duration = "250ms"
[load]
cpus = "1"
[gates]
mode = "warn"
[[target]]
name = "hello"
command = ["$bin/hello-server", "--port", "{port}", "--work-ns", "$ns"]
version = ["echo", "work-ns-$ns"]
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
  # The last run re-measures the change it finds (the build of steps-4 against that of
  # steps-10), so that the page has a confirmed change to show.
  again=--no-remeasure
  [ "$i" -eq 10 ] && again=
  [ "$i" -eq 10 ] && [ -n "$series_profiled" ] && again=--profile
  timeout 120 "$bin/benchlab" run "$work/steps.toml" --name "steps-$i" --db "$work/lab.db" \
    $again > "$work/steps-$i.log" 2>&1 || fail "campaign steps-$i (benchlab run)"
done
echo "ok: series steps measured ($((SECONDS - series_start)) s)"

# --- a series of mixed gate modes ------------------------------------------------------------
# Three one-window campaigns of the series "modes": the file's gates only warn (modes-1, modes-3),
# and modes-2 runs with them enforced (--gates enforce), so the series page must not join its
# point to the others' and marks theirs as not judged.
cat > "$work/modes.toml" <<TOML
name = "modes"
baseline = "hello"
[matrix]
connections = [2]
rounds = 1
warmup = "100ms"
duration = "250ms"
[load]
cpus = "1"
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
for i in 1 2 3; do
  gates=()
  [ "$i" -eq 2 ] && gates=(--gates enforce)
  timeout 120 "$bin/benchlab" run "$work/modes.toml" --name "modes-$i" --db "$work/lab.db" \
    --no-remeasure "${gates[@]}" > "$work/modes-$i.log" 2>&1 || fail "campaign modes-$i (benchlab run)"
done
echo "ok: series modes measured"

# --- a bisection -------------------------------------------------------------------------------
# A found search of 16 commits, its rows written as `benchlab bisect` stores them (docs/store.md,
# "bisections" and "bisect_steps"): good at 7, a failed build at 11, bad at 9, bad at 8 (the
# culprit); its measured steps name modes-1's campaign and one not stored. The culprit's subject
# holds markup, which the page must show as text.
sqlite3 "$work/lab.db" <<'SQL' || fail "the bisection's rows (sqlite3)"
INSERT INTO bisections (id, created_at, good_oid, bad_oid, target, cell, figure, commits, state,
  result, culprit, size, size_low, size_high, confidence)
VALUES (7, '2026-12-06T01:00:00Z', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  'ffffffffffffffffffffffffffffffffffffffff', 'app', 'hello/c2', 'cpu_us_per_request', 16,
  'found', 'first bad commit: 888888888888', '8888888888888888888888888888888888888888', 1.058,
  1.041, 1.076, 0.95);
INSERT INTO bisect_steps (bisection_id, step, oid, subject, build, campaigns, rounds, decision,
  estimate, low, high, figures, recorded_at, position)
VALUES
  (7, 1, '7777777777777777777777777777777777777777', 'Tidy the parser', 'built',
   json_array((SELECT id FROM campaigns WHERE name = 'modes-1'), 9999), 3, 'good', 1.0, 0.98,
   1.02, '[[10.0,10.0,10.6]]', '2026-12-06T01:10:00Z', 7),
  (7, 2, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'Half a refactor', 'failed', '[]', 0,
   'build failed', NULL, NULL, NULL, '[]', '2026-12-06T01:20:00Z', 11),
  (7, 3, '9999999999999999999999999999999999999999', 'Cache the routes', 'built',
   json_array((SELECT id FROM campaigns WHERE name = 'modes-1')), 3, 'bad', 1.06, 1.04, 1.08,
   '[[10.0,10.0,10.6]]', '2026-12-06T01:30:00Z', 9),
  (7, 4, '8888888888888888888888888888888888888888', 'Parse <b>headers</b> twice', 'built',
   json_array((SELECT id FROM campaigns WHERE name = 'modes-1')), 3, 'bad', 1.05, 1.03, 1.07,
   '[[10.0,10.0,10.6]]', '2026-12-06T01:40:00Z', 8);
SQL
echo "ok: bisection 7 stored"

# --- a profiled campaign ---------------------------------------------------------------------
# CPU profiles for the flame graphs (docs/profiles.md), by `benchlab run --profile` before the
# coordinator opens the database: hello-server as it is (hello-a) and 20 µs per request slower
# in SpendCpu (hello-b), so the differential flame graph has a frame that grew. Two rounds, so
# the functions' differences have intervals. Without perf the profile checks are skipped.
prof_campaign=
if command -v perf > /dev/null; then
  cat > "$work/prof.toml" <<TOML
name = "browser-prof"
baseline = "hello-a"
[matrix]
connections = [4]
rounds = 2
warmup = "100ms"
duration = "500ms"
[load]
cpus = "1"
[gates]
mode = "warn"
[profile]
frequency = 499
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
  timeout 120 "$bin/benchlab" run "$work/prof.toml" --db "$work/lab.db" --profile \
    > "$work/prof.log" 2>&1 || fail "the profiled campaign (benchlab run --profile)"
  prof_campaign=browser-prof
  echo "ok: profiled campaign browser-prof measured"
else
  echo "note: perf is missing (make deps installs linux-perf): the flame graphs are not checked"
fi

# --- the lab -----------------------------------------------------------------------------------
# The dashboard's certificate, from benchlab's own CA, for the address the browser dials.
"$bin/benchlab" ca init --dir "$work/ca" > /dev/null || fail "benchlab ca init"
"$bin/benchlab" ca issue --dir "$work/ca" --name dashboard --role coordinator --host 127.0.0.1 \
  > /dev/null || fail "benchlab ca issue"
"$bin/benchlab" coordinator --db "$work/lab.db" --listen 127.0.0.1:0 --port-file "$work/port" \
  --http 127.0.0.1:0 --http-port-file "$work/http-port" --web-root "$web_root" \
  --http-tls-cert "$work/ca/dashboard.pem" --http-tls-key "$work/ca/dashboard.key" \
  2> "$work/coordinator.log" &
pids+=($!)
wait_for 15 test -s "$work/port" || fail "the coordinator did not start"
wait_for 15 test -s "$work/http-port" || fail "the coordinator's HTTP server did not start"
port=$(cat "$work/port")
http_port=$(cat "$work/http-port")
viewer_token=$("$bin/benchlab" token create --db "$work/lab.db" --role viewer --name browser-viewer \
  2> /dev/null) || fail "benchlab token create --role viewer"
operator_token=$("$bin/benchlab" token create --db "$work/lab.db" --role operator \
  --name browser-operator 2> /dev/null) || fail "benchlab token create --role operator"
# Chromium trusts this one key for the test, not every certificate: the SPKI hash of the
# dashboard's certificate (--ignore-certificate-errors-spki-list).
spki=$(openssl x509 -in "$work/ca/dashboard.pem" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64) || fail "no SPKI hash of the dashboard's certificate"

# Two targets, both the bundled hello-server under names of their own in the work directory.
ln -s "$bin/hello-server" "$work/hello-server"
ln -s "$bin/hello-server" "$work/hello-twin"
cat > "$work/server.toml" <<TOML
name = "browser-server"
roles = ["server"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/server-state"
run_root = "$work/runs"
spool_dir = "$work/spool"
[[target]]
name = "hello-server"
command = ["$work/hello-server", "--port", "{port}"]
[[target]]
name = "hello-twin"
command = ["$work/hello-twin", "--port", "{port}"]
TOML
cat > "$work/load.toml" <<TOML
name = "browser-load"
roles = ["load"]
coordinator = "127.0.0.1:$port"
state_dir = "$work/load-state"
run_root = "$work/load-runs"
TOML
"$bin/benchlab" agent --config "$work/server.toml" 2> "$work/server.log" &
pids+=($!)
"$bin/benchlab" agent --config "$work/load.toml" 2> "$work/load.log" &
pids+=($!)

# 2 targets × 1 scenario × 2 load levels × 2 rounds = 8 short windows. The agents share this
# machine, so the server agent sees the load agent's generator as foreign CPU. With the foreign
# CPU gate at 1% every window is invalid for it, whatever the machine's speed (at the default 25%
# a slow host, a hypervisor taking a third of the CPU, left 7 of 8 valid): the page has reasons to
# show and windows to re-run, two of them by the tests.
cat > "$work/campaign.toml" <<TOML
name = "browser"
baseline = "hello-server"
[matrix]
connections = [2, 4]
rounds = 2
warmup = "100ms"
duration = "250ms"
[load]
cpus = "1"
[gates]
selftest_drift = false
generator_bound = false
steal = false
foreign_cpu_max_pct = 1
# Windows are re-run by hand below and their attempts counted: none is measured again at once.
remeasure_max = 0
[[target]]
name = "hello-server"
cpus = "0"
[[target]]
name = "hello-twin"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
timeout 300 "$bin/benchlab" submit "$work/campaign.toml" --coordinator "127.0.0.1:$port" --wait \
  > "$work/submit.log" 2>&1 || fail "the campaign did not finish (benchlab submit --wait)"
echo "ok: campaign measured ($(tail -1 "$work/submit.log"))"

# A second campaign whose windows count, for the intervals: the same two targets (an A/A
# comparison), one load level, a fixed plan of 3 rounds, the gates only warning, so that every
# cell has 3 round ratios and an interval on each figure.
cat > "$work/stats.toml" <<TOML
name = "browser-stats"
baseline = "hello-server"
[matrix]
connections = [2]
rounds = 3
warmup = "100ms"
duration = "250ms"
[load]
cpus = "1"
[gates]
mode = "warn"
[[target]]
name = "hello-server"
cpus = "0"
[[target]]
name = "hello-twin"
cpus = "0"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML
# A window may fail on a busy machine (submit then exits 1); an interval needs 2 of the 3 rounds,
# which the browser test checks, so a finished campaign is enough here.
timeout 300 "$bin/benchlab" submit "$work/stats.toml" --coordinator "127.0.0.1:$port" --wait \
  > "$work/submit-stats.log" 2>&1 || grep -q '(campaign done)' "$work/submit-stats.log" ||
  fail "the second campaign did not finish (benchlab submit --wait)"
echo "ok: campaign browser-stats measured ($(tail -1 "$work/submit-stats.log"))"

# --- the browser ---------------------------------------------------------------------------------
mkdir -p "$artifacts" "$work/profile"
status=0
BENCHLAB_URL="https://127.0.0.1:$http_port" BENCHLAB_CAMPAIGN=browser BENCHLAB_STATS_CAMPAIGN=browser-stats \
  BENCHLAB_SERIES=steps BENCHLAB_SERIES_STEP=steps-6 BENCHLAB_SERIES_PROFILED="$series_profiled" \
  BENCHLAB_MODES_SERIES=modes BENCHLAB_BISECTION=7 \
  BENCHLAB_PROF_CAMPAIGN="$prof_campaign" \
  BENCHLAB_VIEWER_TOKEN="$viewer_token" BENCHLAB_OPERATOR_TOKEN="$operator_token" \
  BENCHLAB_SPKI="$spki" NODE_EXTRA_CA_CERTS="$work/ca/ca.pem" \
  BENCHLAB_AGENTS=browser-server,browser-load BENCHLAB_CHROMIUM="$chromium" \
  BENCHLAB_PROFILE="$work/profile" BENCHLAB_ARTIFACTS="$(cd "$artifacts" && pwd)" \
  BENCHLAB_WEB_DIR="$src/web" \
  node --test --test-reporter=spec "$src/tests/browser/dashboard.test.mjs" || status=$?
[ "$status" -eq 0 ] || fail "the browser tests failed (screenshots in $artifacts)"
echo "screenshots: $(cd "$artifacts" && pwd)"

# Nothing of this test may outlive it: stop the lab, then look.
for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
pids=()
sleep 0.2
left=$(left_behind_pids | tr '\n' ' ')
[ -z "$left" ] || fail "processes left behind: $left"
echo "ok: nothing left running"

#!/usr/bin/env bash
# The audit trail against hostile callers (docs/security.md, "Audit"), with the real binaries: a
# bad-token GET to the dashboard whose path holds %0a, a forged row and an ESC prints as one
# escaped row in `benchlab audit`; repeated refusals from one client are one row with their
# count (×20 in the table, "count": 20 in --json); a coordinator started with --audit-keep-days
# deletes older rows; `benchlab audit --coordinator` writes what `--db` does.
# Usage: audit_trail_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
db="$work/lab.db"

start_coordinator() {  # start_coordinator [OPTIONS...]: serves gRPC and the dashboard on loopback
  rm -f "$work/port" "$work/http-port"
  "$bin/benchlab" coordinator --listen 127.0.0.1:0 --db "$db" --port-file "$work/port" \
    --http 127.0.0.1:0 --http-port-file "$work/http-port" "$@" 2>> "$work/coordinator.log" &
  coordinator=$!
  track "$coordinator"
  wait_until 10 "the coordinator's port file" test -s "$work/port"
  wait_until 10 "the dashboard's port file" test -s "$work/http-port"
  http=$(cat "$work/http-port")
}

stop_coordinator() {
  kill "$coordinator"
  wait "$coordinator" || true
}

start_coordinator

# --- 1. a forged row in a refused GET's path ------------------------------------------------
# Decoded by the dashboard: "/api/v1/campaigns\n2026-12-01T10:00:00.000Z  local:root  local
# TokenCreate  token evil  ok  -" and ESC[2J (clear the screen).
forged='/api/v1/campaigns%0a2026-12-01T10:00:00.000Z%20%20local:root%20%20local%20%20TokenCreate'
forged+='%20%20token%20evil%20%20ok%20%20-%1b%5b2J'
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer blt_wrong' \
  "http://127.0.0.1:$http$forged")
[ "$status" = 401 ] || fail "the forged GET got $status, not 401"
# Wide enough for the whole row; by default the table fits 100 columns, the subject cut.
"$bin/benchlab" audit --db "$db" --width 1000 > "$work/audit.out" 2> "$work/audit.err" ||
  { cat "$work/audit.err"; fail "benchlab audit failed"; }
"$bin/benchlab" audit --db "$db" > "$work/audit-100.out"
python3 - "$work/audit-100.out" <<'PY' || { cat "$work/audit-100.out"; fail "wider than 100"; }
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 2 and all(len(l) <= 100 for l in lines), lines
assert lines[1][lines[0].index("outcome"):].startswith("refused"), lines
PY
lines=$(wc -l < "$work/audit.out")
[ "$lines" -eq 2 ] || { cat -A "$work/audit.out"; fail "$lines lines for one audited call"; }
! grep -q $'\x1b' "$work/audit.out" || { cat -A "$work/audit.out"; fail "a raw ESC in the audit"; }
grep -qF '/api/v1/campaigns\n2026-12-01T10:00:00.000Z  local:root  local  TokenCreate  token evil  ok  -\x1b[2J  refused' \
  "$work/audit.out" || { cat "$work/audit.out"; fail "the path is not shown escaped"; }
check "a GET with a forged row and an ESC in its path prints as one escaped row, within 100 columns"

# --- 2. repeated refusals are one row -------------------------------------------------------
token="blt_$(printf 'x%.0s' $(seq 43))"  # well-formed, unknown
for _ in $(seq 20); do
  curl -s -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$http/api/v1/campaigns"
done
"$bin/benchlab" audit --db "$db" > "$work/audit.out"
[ "$(wc -l < "$work/audit.out")" -eq 3 ] || { cat "$work/audit.out"; fail "20 refusals, not one row"; }
grep -q 'refused ×20 ' "$work/audit.out" || { cat "$work/audit.out"; fail "no ×20"; }
"$bin/benchlab" audit --db "$db" --json > "$work/audit.json"
python3 - "$work/audit.json" <<'PY' || fail "--json does not carry the count"
import json, sys
rows = json.load(open(sys.argv[1]))["audit"]
assert [r["count"] for r in rows] == [1, 20], rows
assert rows[0]["subject"].startswith("/api/v1/campaigns\n2026-12-01T10:00:00.000Z"), rows[0]
PY
check "20 identical refusals from one client are one row: ×20, \"count\": 20"
# The coordinator answers `audit --coordinator` with the rows --db reads (reading is not audited).
"$bin/benchlab" audit --coordinator "127.0.0.1:$(cat "$work/port")" --json > "$work/audit-rpc.json" ||
  fail "benchlab audit --coordinator failed"
cmp -s "$work/audit.json" "$work/audit-rpc.json" ||
  { diff "$work/audit.json" "$work/audit-rpc.json"; fail "audit: --db and --coordinator differ"; }
"$bin/benchlab" audit --coordinator "127.0.0.1:$(cat "$work/port")" --width 1000 --since 7d \
  > "$work/audit-rpc.out" || fail "benchlab audit --coordinator --since 7d failed"
"$bin/benchlab" audit --db "$db" --width 1000 --since 7d > "$work/audit-db.out"
cmp -s "$work/audit-db.out" "$work/audit-rpc.out" ||
  { diff "$work/audit-db.out" "$work/audit-rpc.out"; fail "audit table: --db and --coordinator differ"; }
check "audit --coordinator writes what audit --db writes, as JSON and as a table"
stop_coordinator

# --- 3. retention at start ------------------------------------------------------------------
sqlite3 "$db" "INSERT INTO audit (at, identity, role, peer, call, subject, outcome, reason)
  VALUES ('2020-01-01T00:00:00.000Z', 'local:root', '', 'local', 'TokenCreate', 'token old',
  'ok', '')"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM audit')" -eq 3 ] || fail "the old row was not added"
start_coordinator --audit-keep-days 30
[ "$(sqlite3 "$db" 'SELECT count(*) FROM audit')" -eq 2 ] ||
  { sqlite3 "$db" 'SELECT at, subject FROM audit'; fail "the 2020 row outlived --audit-keep-days 30"; }
grep -q 'audit trail: 1 row(s) older than 30 days' "$work/coordinator.log" ||
  fail "the start-up pruning is not logged"
stop_coordinator
set +e
"$bin/benchlab" coordinator --db "$db" --audit-keep-days 0 > "$work/bad.out" 2>&1
got=$?
set -e
[ "$got" -eq 2 ] || { cat "$work/bad.out"; fail "--audit-keep-days 0 exited $got, not 2"; }
grep -q -- '--audit-keep-days' "$work/bad.out" || { cat "$work/bad.out"; fail "no option named"; }
check "--audit-keep-days prunes at start and refuses 0"

echo "PASS: $passed checks"

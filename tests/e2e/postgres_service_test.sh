#!/usr/bin/env bash
# A real PostgreSQL 15 as a side service of the embedded lab (docs/services.md), started by the
# lab in a directory of the run (examples/frameworks/db/postgres.sh: initdb, postgres), seeded
# by its setup (db/seed.sh: 10,000 users), run as the user postgres when the lab is root (run_as). One
# campaign, three targets that name it:
#   - quiet: hello-server while a loop inserts orders through psql, so the database works
#     during the window. Its windows are valid with the foreign CPU gate on: the database's CPU
#     is stored apart (window_services) and is not foreign. The users probe reads 10,000, and
#     the next window's orders probe starts at 0: the reset (TRUNCATE orders) ran between.
#   - checkpointer: hello-server while a loop runs CHECKPOINT every 0.3 s. Every window is
#     refused by [gates] probe.checkpoints.max = 0, with a reason that names the probe.
#   - killer: hello-server while a loop SIGKILLs the postmaster. Its window fails with
#     service_exited naming pg, and the next window starts PostgreSQL again (started = 1).
# Nothing is left running, and the service's directories are gone at the end.
# Usage: postgres_service_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
kinds="$kinds|postgres|psql"
on_fail() {
  for f in "$work"/*.out; do [ -e "$f" ] && { echo "== $f"; tail -30 "$f"; }; done
  [ -e "$work/lab.db" ] && sqlite3 "$work/lab.db" \
    "select id, target, round, attempt, verdict, reasons from windows order by id;
     select * from window_services; select * from window_probes;"
}
sql() { sqlite3 "$work/lab.db" "$1"; }

scripts_dir="$src/scripts"
"$scripts_dir/install-deps.sh" postgresql postgresql-client > "$work/install.out" 2>&1 ||
  fail "installing postgresql: $(tail -3 "$work/install.out")"
command -v psql > /dev/null || fail "no psql after installing postgresql-client"

psql_to='psql -X -q -h 127.0.0.1 -p {service.pg.port} -U bench -d bench'
ln -s "$bin/hello-server" "$work/hello-server"
service_dirs() {  # how many run_as service directories /var/tmp holds
  local n=0 d
  for d in /var/tmp/benchlab-service-pg-*; do [ -e "$d" ] && n=$((n + 1)); done
  echo "$n"
}
dirs_before=$(service_dirs)

cat > "$work/pg.toml" <<TOML
name = "pg-service"
baseline = "quiet"
[matrix]
connections = [2]
rounds = 2
order = "fixed"
warmup = "200ms"
duration = "1500ms"
[load]
cpus = "1"
[gates]
# Every attempt is counted below: a refused window is not measured again at once.
remeasure_max = 0
# The gates under test (probe bounds, service_exited, foreign CPU) stay on; the ones a shared
# machine trips without anyone's fault are off.
selftest_drift = false
generator_bound = false
steal = false
probe.checkpoints.max = 0

[[service]]
name = "pg"
kind = "postgres"
# PostgreSQL refuses root: a root lab runs it as postgres; any other, as itself.
run_as = "postgres"
command = ["$src/examples/frameworks/db/postgres.sh", "{run_dir}/data", "{port}"]
cpus = "0"
setup = [["$src/examples/frameworks/db/seed.sh", "127.0.0.1", "{port}"]]
reset_sql = "TRUNCATE orders"
[[service.probe]]
name = "checkpoints"
sql = "select checkpoints_timed + checkpoints_req from pg_stat_bgwriter"
[[service.probe]]
name = "users"
sql = "select count(*) from users"
[[service.probe]]
name = "orders"
sql = "select count(*) from orders"

[[target]]
name = "quiet"
command = ["sh", "-c", "while :; do $psql_to -c \"insert into orders (user_id, item, quantity) select id, 'x', 1 from users where id <= 50\"; done & exec $work/hello-server --port {port}"]
cpus = "0"
services = ["pg"]
[[target]]
name = "checkpointer"
command = ["sh", "-c", "while :; do sleep 0.3; $psql_to -c CHECKPOINT; done & exec $work/hello-server --port {port}"]
cpus = "0"
services = ["pg"]
[[target]]
name = "killer"
command = ["sh", "-c", "while :; do sleep 0.3; kill -9 \$(head -n 1 {service.pg.run_dir}/data/postmaster.pid) 2> /dev/null; done & exec $work/hello-server --port {port}"]
cpus = "0"
services = ["pg"]

[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
TOML

"$bin/benchlab" run "$work/pg.toml" --db "$work/lab.db" --progress plain --keep-work-dir \
  > "$work/run.out" 2>&1 ||
  true # the killer's windows fail, so the run says so; the store is what is checked
[ "$(sql "select count(*) from windows")" -gt 0 ] || fail "benchlab run stored no window"

# The newest attempt of each window, by target.
newest="select w.id, w.target, w.round, w.verdict, w.reasons from windows w
  where w.attempt = (select max(v.attempt) from windows v where v.campaign_id = w.campaign_id
    and v.target = w.target and v.scenario = w.scenario and v.connections = w.connections
    and v.round = w.round)"

# quiet: measured with the foreign CPU gate on, the database's CPU stored apart and never among
# the window's foreign processes (a neighbour on a shared machine may still be).
quiet=$(sql "select count(*), sum(verdict != 'failed') from ($newest) where target = 'quiet'")
[ "$quiet" = "2|2" ] || fail "quiet: expected 2 measured windows, got $quiet (count|measured)"
pg_cpu=$(sql "select min(s.cpu_user_s + s.cpu_sys_s) from window_services s
  join ($newest) w on w.id = s.window_id where w.target = 'quiet' and s.service = 'pg'")
awk -v cpu="$pg_cpu" 'BEGIN { exit !(cpu > 0.02) }' ||
  fail "quiet: the database's CPU over a window is $pg_cpu s, expected it measured (> 0.02 s)"
as_foreign=$(sql "select count(*) from windows where id in (select id from ($newest)
  where target = 'quiet') and (server_top_foreign like '%postgres%'
  or reasons like '%foreign_cpu%postgres%')")
[ "$as_foreign" = 0 ] || fail "quiet: PostgreSQL counted as foreign CPU in $as_foreign windows"
valid=$(sql "select count(*) from ($newest) where target = 'quiet' and verdict = 'valid'")
check "the database's CPU is stored apart (at least $pg_cpu s per window), not foreign ($valid of 2 valid)"

users=$(sql "select group_concat(distinct p.before) from window_probes p
  join ($newest) w on w.id = p.window_id where w.target = 'quiet' and p.probe = 'users'")
[ "$users" = "10000.0" ] || [ "$users" = "10000" ] || fail "users probe read $users, not 10000"
check "setup seeded 10,000 users and a probe read them"

# Orders only grow while quiet runs; the checkpointer's window, right after it in each round,
# begins with none: the reset (TRUNCATE orders) ran between the two windows.
orders=$(sql "select group_concat(q.after || '>' || c.before, ' ') from window_probes q
  join ($newest) qw on qw.id = q.window_id and qw.target = 'quiet'
  join ($newest) cw on cw.round = qw.round and cw.target = 'checkpointer'
  join window_probes c on c.window_id = cw.id and c.service = 'pg' and c.probe = 'orders'
  where q.service = 'pg' and q.probe = 'orders'")
resets=$(sql "select count(*) from window_services s join ($newest) w on w.id = s.window_id
  where w.target in ('quiet', 'checkpointer') and s.reset_ms > 0")
awk -v o="$orders" 'BEGIN { n = split(o, a, " "); if (n != 2) exit 1
  for (i = 1; i <= n; i++) { split(a[i], b, ">"); if (b[1] <= 0 || b[2] != 0) exit 1 } }' ||
  fail "orders after quiet > before the next window, per round: '$orders'; expected N>0"
[ "$resets" = 4 ] || fail "expected a timed reset before 4 windows, got $resets"
check "the reset emptied orders between windows (quiet's last count > the next one's first: $orders)"

# checkpointer: refused by the probe gate.
refused=$(sql "select count(*), sum(verdict = 'invalid' and reasons like '%probe.checkpoints%')
  from ($newest) where target = 'checkpointer'")
[ "$refused" = "2|2" ] || fail "checkpointer: expected 2 windows refused by probe.checkpoints, got $refused"
delta=$(sql "select min(p.delta) from window_probes p join ($newest) w on w.id = p.window_id
  where w.target = 'checkpointer' and p.probe = 'checkpoints'")
awk -v d="$delta" 'BEGIN { exit !(d >= 1) }' || fail "checkpointer: checkpoint delta $delta"
check "a CHECKPOINT inside the window is caught by the gate (at least $delta per window)"

# killer: failed with service_exited; the window after it started PostgreSQL again.
killed=$(sql "select count(*), sum(verdict = 'failed' and reasons like '%service_exited%pg%')
  from windows where target = 'killer'")
case "$killed" in
  0\|*) fail "killer: no window" ;;
  *) [ "${killed%%|*}" = "${killed##*|}" ] ||
       fail "killer: expected every window failed with service_exited: pg, got $killed" ;;
esac
restarted=$(sql "select count(*) from window_services s join windows w on w.id = s.window_id
  where s.started = 1 and w.id > (select min(id) from windows where target = 'killer')")
[ "$restarted" -ge 1 ] || fail "no window after the killer's started PostgreSQL again"
check "a killed database fails its window with service_exited and is started again ($killed)"

# The coordinator told the agent the campaign had ended (EndCampaign), which stopped PostgreSQL
# then, rather than the lab's own shutdown or the agent's idle timeout.
lab_dir=$(sed -n 's/^benchlab run: logs kept in //p' "$work/run.out")
[ -n "$lab_dir" ] && [ -d "$lab_dir" ] || fail "benchlab run did not say where its logs are"
ended=$(grep -c "stopped service pg, its campaign ended" "$lab_dir/server agent.log")
rm -rf "$lab_dir"
[ "$ended" -eq 1 ] || fail "PostgreSQL was not stopped when its campaign ended (log lines: $ended)"
check "the campaign's end stops PostgreSQL at once (EndCampaign)"
expect_none_left "after the campaign"
left=$(service_dirs)
[ "$left" -eq "$dirs_before" ] || fail "$((left - dirs_before)) service directories left in /var/tmp"
check "nothing is left running, and no service directory is left"
echo "passed: $passed"

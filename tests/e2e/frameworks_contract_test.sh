#!/usr/bin/env bash
# End to end, with real processes: each app of examples/frameworks/ (Hono, Elysia and Bun.serve
# on Bun; Hono, Express, Fastify and node:http on Node) answers the frozen contract
# (examples/frameworks/CONTRACT.md) byte for byte, invalid bodies and missing routes included,
# and logs nothing per request; the three campaign files expect what the contract says. The
# database routes too: one throwaway PostgreSQL for the whole test (db/postgres.sh in $work,
# seeded by db/seed.sh, stopped at the end), and each app run three times: with DATABASE_URL
# naming it (every --db case, and exactly the rows those cases insert are in orders
# afterwards), without DATABASE_URL (503 on the database routes), and with DATABASE_URL naming a
# port where nothing listens (500). Installs first what is missing or stale
# (examples/frameworks/install.sh: Debian's postgresql, then npm ci). Apps run as a benchlab agent
# runs them: only PORT, NODE_ENV and, for the database, DATABASE_URL in their environment. Bun's
# apps are skipped, saying so, only when the Bun binary from npm cannot run here.
# Usage: frameworks_contract_test.sh BIN_DIR SOURCE_DIR (exit 77: skipped, no Node.js 20+)
. "$(dirname "$0")/lib.sh"
src=$(cd "$2" && pwd)
fw="$src/examples/frameworks"

node_bin=$(command -v node || true)
if [ -z "$node_bin" ] || ! "$node_bin" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "SKIP: the framework apps need Node.js 20 or later (found: ${node_bin:-none})"
  exit 77
fi

kinds="$kinds|node|bun"
failed=0

"$fw/install.sh" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "$fw/install.sh"; }
check "PostgreSQL and the apps' packages are installed (install.sh)"

bun_bin="$fw/node_modules/.bin/bun"
bun_ok=1
if ! "$bun_bin" --version > "$work/bun.out" 2>&1; then
  bun_ok=0
  echo "SKIP: Bun's apps (bun, elysia, hono-bun): $bun_bin does not run here: $(head -c 300 "$work/bun.out")"
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# One PostgreSQL for the whole test, its pid the postmaster's (postgres.sh execs it). Run as
# root, postgres.sh runs it as the user postgres, who must be able to pass through $work.
chmod 711 "$work"
pg_port=$(free_port)
"$fw/db/postgres.sh" "$work/pg" "$pg_port" > "$work/postgres.log" 2>&1 &
pg_pid=$!
# At exit, whatever happened: SIGINT, PostgreSQL's fast shutdown, then SIGKILL after 10 s.
stop_postgres() {
  [ -n "$pg_pid" ] || return 0
  kill -INT "$pg_pid" 2> /dev/null || true
  poll 10 eval '! any_alive "$pg_pid"' || kill -KILL "$pg_pid" 2> /dev/null || true
  pg_pid=
}
on_exit() { stop_postgres; }
if ! "$fw/db/seed.sh" 127.0.0.1 "$pg_port" > "$work/seed.log" 2>&1; then
  any_alive "$pg_pid" || echo "postgres.sh exited" >&2
  fail "PostgreSQL did not start or could not be seeded (db/postgres.sh, db/seed.sh)"
fi
[ "$(cat "/proc/$pg_pid/comm")" = postgres ] ||
  fail "postgres.sh's pid $pg_pid is $(cat "/proc/$pg_pid/comm"), not postgres itself"
check "PostgreSQL runs as pid $pg_pid (db/postgres.sh) with the seeded database (db/seed.sh)"
database_url="postgres://bench@127.0.0.1:$pg_port/bench"
closed_port=$(free_port) # nothing listens there: connections are refused
orders() {
  psql -X -q -tA -h 127.0.0.1 -p "$pg_port" -U bench -d bench -c 'SELECT count(*) FROM orders'
}
db_inserts=$(cd "$fw" && python3 -c 'import contract_check; print(contract_check.DB_INSERTS)')

# Starts one app with the environment an agent gives a target, checks it, stops it. MODE: db
# (DATABASE_URL names the seeded database; contract_check.py --db, and the rows it inserts must
# be in orders afterwards), no-db (no DATABASE_URL; --no-db), db-down (DATABASE_URL names a port
# where nothing listens; --db-down).
# app_env: more of the app's environment (NAME=VALUE words), empty unless set.
# Usage: check_app NAME RUNTIME SCRIPT MODE [--campaign FILE]...
app_env=()
check_app() {
  local name=$1 runtime=$2 script=$3 mode=$4
  shift 4
  local port log out pid lines_ready db_env=() before=0 after what
  port=$(free_port)
  log="$work/$name-$mode.log"
  out="$work/$name-$mode.out"
  case $mode in
    db) db_env=(DATABASE_URL="$database_url"); before=$(orders); what="the contract" ;;
    no-db) what="the contract without a database" ;;
    db-down) db_env=(DATABASE_URL="postgres://bench@127.0.0.1:$closed_port/bench")
      what="the contract with its database refusing connections" ;;
  esac
  env -i PORT="$port" NODE_ENV=production "${db_env[@]}" "${app_env[@]}" "$runtime" "$fw/$script" \
    > "$log" 2>&1 &
  pid=$!
  track "$pid"
  if ! python3 "$fw/contract_check.py" "http://127.0.0.1:$port" --wait 20 "--$mode" "$@" \
      > "$out" 2>&1; then
    sed "s/^/  $name: /" "$out" "$log" >&2
    echo "FAIL: $name does not answer $what" >&2
    failed=$((failed + 1))
  else
    lines_ready=$(wc -l < "$log")
    [ "$lines_ready" -le 1 ] ||
      { sed "s/^/  $name: /" "$log" >&2; fail "$name logged more than its start line"; }
    if [ "$mode" = db ]; then
      after=$(orders)
      [ "$((after - before))" -eq "$db_inserts" ] ||
        fail "$name: $((after - before)) rows inserted into orders, not $db_inserts"
    fi
    check "$name answers $what ($(tail -n 1 "$out"))"
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  kill -0 "$pid" 2>/dev/null && fail "$name (pid $pid) still running after SIGTERM"
  return 0
}

# Usage: check_app_modes NAME RUNTIME SCRIPT [--campaign FILE]...: check_app in the three modes,
# the campaign files with the database.
check_app_modes() {
  check_app "$1" "$2" "$3" db "${@:4}"
  check_app "$1" "$2" "$3" no-db
  check_app "$1" "$2" "$3" db-down
}

campaigns=(--campaign "$fw/node.toml" --campaign "$fw/bun.toml" --campaign "$fw/runtimes.toml")
# node:http also answers every request of the three campaign files as their `expect` says.
check_app_modes node "$node_bin" node/server.js "${campaigns[@]}"
check_app_modes express "$node_bin" express/server.js
check_app_modes fastify "$node_bin" fastify/server.js
check_app_modes hono-node "$node_bin" hono/node.js
# Hono's body routes validated by TypeBox and cleaned by TypeBox's Value.Clean or exact-mirror
# (hono/app.js, BODY_VALIDATOR): clean.toml's two targets answer the contract too, and it
# expects what the contract says.
app_env=(BODY_VALIDATOR=typebox-clean)
check_app hono-typebox-clean "$node_bin" hono/node.js db --campaign "$fw/clean.toml"
app_env=(BODY_VALIDATOR=exact-mirror)
check_app hono-exact-mirror "$node_bin" hono/node.js db
app_env=()
if [ "$bun_ok" -eq 1 ]; then
  check_app_modes bun "$bun_bin" bun/server.js
  check_app_modes elysia "$bun_bin" elysia/server.js
  check_app_modes hono-bun "$bun_bin" hono/bun.js
fi

# The checker can fail: a server that answers 200 {"status":"ok"} to everything is refused.
port=$(free_port)
env -i PORT="$port" "$node_bin" -e '
  require("http").createServer((req, res) => res.end("{\"status\":\"ok\"}")).listen(process.env.PORT)
' > "$work/impostor.log" 2>&1 &
impostor=$!
track $impostor
set +e
python3 "$fw/contract_check.py" "http://127.0.0.1:$port" --wait 20 > "$work/impostor.out" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$work/impostor.out"; fail "the checker passed an impostor (exit $status)"; }
grep -q '^FAIL json (GET /json): body: expected' "$work/impostor.out" || fail "impostor: no body diff"
check "the checker refuses a server that does not answer the contract"

# --db can fail too: node:http without DATABASE_URL answers every other case right, and 503 on
# the database routes.
port=$(free_port)
env -i PORT="$port" NODE_ENV=production "$node_bin" "$fw/node/server.js" \
  > "$work/db-impostor.log" 2>&1 &
db_impostor=$!
track $db_impostor
set +e
python3 "$fw/contract_check.py" "http://127.0.0.1:$port" --wait 20 --db \
  > "$work/db-impostor.out" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] ||
  { cat "$work/db-impostor.out"; fail "--db passed a server without a database (exit $status)"; }
grep -q '^FAIL db-user-42 (GET /db/users/42): status: expected 200, got 503$' \
  "$work/db-impostor.out" || { cat "$work/db-impostor.out"; fail "db impostor: no status diff"; }
check "the checker's --db refuses a server that answers the database routes otherwise"

started=${#tracked[@]}
kill "$impostor" "$db_impostor"
wait "$impostor" "$db_impostor" 2>/dev/null || true
tracked=()
expect_none_left "the apps"
check "no app left running ($started started)"

# The postmaster's children (checkpointer, writers, backends) each start a session of their own.
read -r -a pg_children <<< "$(pgrep -P "$pg_pid" | tr '\n' ' ')"
kill -INT "$pg_pid"
pg_status=0
wait "$pg_pid" || pg_status=$?
pg_pid=
[ "$pg_status" -eq 0 ] || fail "PostgreSQL exited $pg_status on SIGINT"
grep -q 'database system is shut down' "$work/postgres.log" || fail "PostgreSQL: no clean shutdown"
kinds=postgres
expect_none_left "PostgreSQL"
! any_alive "${pg_children[@]}" || fail "PostgreSQL's children left: ${pg_children[*]}"
check "PostgreSQL stopped by SIGINT (fast shutdown), none of its ${#pg_children[@]} processes left"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

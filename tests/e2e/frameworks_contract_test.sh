#!/usr/bin/env bash
# End to end, with real processes: each app of examples/frameworks/ (Hono, Elysia and Bun.serve
# on Bun; Hono, Express, Fastify and node:http on Node) answers the frozen contract
# (examples/frameworks/CONTRACT.md) byte for byte, invalid bodies and missing routes included,
# and logs nothing per request; the three campaign files expect what the contract says. Installs
# the apps' packages first when they are missing or stale (examples/frameworks/install.sh, npm
# ci). Apps run as a benchlab agent runs them: only PORT and NODE_ENV in their environment.
# Bun's apps are skipped, saying so, only when the Bun binary from npm cannot run here.
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

"$fw/install.sh" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "npm ci in $fw"; }
check "the apps' packages are installed (npm ci)"

bun_bin="$fw/node_modules/.bin/bun"
bun_ok=1
if ! "$bun_bin" --version > "$work/bun.out" 2>&1; then
  bun_ok=0
  echo "SKIP: Bun's apps (bun, elysia, hono-bun): $bun_bin does not run here: $(head -c 300 "$work/bun.out")"
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts one app with the environment an agent gives a target, checks it, stops it.
# Usage: check_app NAME RUNTIME SCRIPT [--campaign FILE]...
check_app() {
  local name=$1 runtime=$2 script=$3
  shift 3
  local port log pid lines_ready
  port=$(free_port)
  log="$work/$name.log"
  env -i PORT="$port" NODE_ENV=production "$runtime" "$fw/$script" > "$log" 2>&1 &
  pid=$!
  track "$pid"
  if ! python3 "$fw/contract_check.py" "http://127.0.0.1:$port" --wait 20 "$@" > "$work/$name.out" 2>&1; then
    sed "s/^/  $name: /" "$work/$name.out" "$log" >&2
    echo "FAIL: $name does not answer the contract" >&2
    failed=$((failed + 1))
  else
    lines_ready=$(wc -l < "$log")
    [ "$lines_ready" -le 1 ] ||
      { sed "s/^/  $name: /" "$log" >&2; fail "$name logged more than its start line"; }
    check "$name answers the contract ($(tail -n 1 "$work/$name.out"))"
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  kill -0 "$pid" 2>/dev/null && fail "$name (pid $pid) still running after SIGTERM"
  return 0
}

campaigns=(--campaign "$fw/node.toml" --campaign "$fw/bun.toml" --campaign "$fw/runtimes.toml")
# node:http also answers every request of the three campaign files as their `expect` says.
check_app node "$node_bin" node/server.js "${campaigns[@]}"
check_app express "$node_bin" express/server.js
check_app fastify "$node_bin" fastify/server.js
check_app hono-node "$node_bin" hono/node.js
if [ "$bun_ok" -eq 1 ]; then
  check_app bun "$bun_bin" bun/server.js
  check_app elysia "$bun_bin" elysia/server.js
  check_app hono-bun "$bun_bin" hono/bun.js
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

started=${#tracked[@]}
kill "$impostor"
wait "$impostor" 2>/dev/null || true
tracked=()
expect_none_left "the apps"
check "no app left running ($started started)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The database routes' two figures (docs/frameworks.md, "The database routes"), measured side by
# side in one campaign on the embedded lab, targets interleaved round by round (order rotate):
#   - the probe's own cost: node against PostgreSQL with the checkpoint and autovacuum probes
#     (read right before and after every window) against node against an identical PostgreSQL
#     without probes;
#   - placement on a two-core machine: PostgreSQL on CPU 1 with the load generator, against
#     PostgreSQL on CPU 0 with the target, for node (pg) and bun (Bun.sql).
# Three clusters run side by side for the whole campaign (each seeded the same; the two idle ones
# wait on their sockets). Prints, per scenario, each target's median req/s, target and database
# CPU per request over its valid windows, and the ratios. A benchmark, not a test: it asserts
# nothing. Needs examples/frameworks/install.sh first.
# HOST_GATES=off turns the steal and self-test drift gates off (both still measured; steal is
# printed): on a virtual machine whose hypervisor takes a quarter of the CPU under load, every
# window would be refused, and with PostgreSQL on CPU 1 the load host's self-test shares that CPU
# with it; the targets' interleaving shares both between them.
# Usage: [HOST_GATES=off] bench/db_service_ab.sh BIN_DIR [ROUNDS=5]
set -euo pipefail
bin=$(cd "${1:?usage: $0 BIN_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
fw=$(cd "$(dirname "$0")/../examples/frameworks" && pwd)
work=$(mktemp -d /tmp/benchlab-db-ab-XXXXXX)
trap 'rm -rf "$work"' EXIT

service() {  # service NAME CPUS PROBES(yes|no)
  cat <<TOML
[[service]]
name = "$1"
kind = "postgres"
run_as = "postgres"
command = ["$fw/db/postgres.sh", "{run_dir}/data", "{port}"]
cpus = "$2"
setup = [["$fw/db/seed.sh", "127.0.0.1", "{port}"]]
reset_sql = "TRUNCATE orders"
TOML
  [ "$3" = yes ] || return 0
  cat <<TOML
[[service.probe]]
name = "checkpoints"
sql = "select checkpoints_timed + checkpoints_req from pg_stat_bgwriter"
[[service.probe]]
name = "autovacuums"
sql = "select coalesce(sum(autovacuum_count + autoanalyze_count), 0) from pg_stat_user_tables"
TOML
}
target() {  # target NAME SERVICE COMMAND...
  local name=$1 svc=$2; shift 2
  local argv="" a
  for a in "$@"; do argv="$argv${argv:+, }\"$a\""; done
  cat <<TOML
[[target]]
name = "$name"
command = [$argv]
env = { NODE_ENV = "production", DATABASE_URL = "postgres://bench@{service.$svc.host}:{service.$svc.port}/bench" }
services = ["$svc"]
ready = "/health"
cpus = "0"
TOML
}

bun="$fw/node_modules/.bin/bun"
{
  cat <<TOML
name = "db-ab"
baseline = "node"
public_env = ["NODE_ENV", "DATABASE_URL"]
[matrix]
connections = [16]
rounds = $rounds
order = "rotate"
warmup = "1s"
duration = "2s"
[load]
cpus = "1"
[gates]
generator_bound = false
selftest_drift_max_pct = 25
$([ "${HOST_GATES:-on}" = off ] && printf 'steal = false\nselftest_drift = false\n')
TOML
  service pg1 1 yes
  service pg1-plain 1 no
  service pg0 0 yes
  target node pg1 node "$fw/node/server.js"
  target node-noprobe pg1-plain node "$fw/node/server.js"
  target node-db-cpu0 pg0 node "$fw/node/server.js"
  target bun pg1 "$bun" "$fw/bun/server.js"
  target bun-db-cpu0 pg0 "$bun" "$fw/bun/server.js"
  sed -n '/^\[\[scenario\]\]/,$p' "$fw/db.toml" | sed '/^# Checked once/,$d'
} > "$work/db-ab.toml"

"$bin/benchlab" run "$work/db-ab.toml" --db "$work/ab.db" --progress plain > "$work/run.out" 2>&1 ||
  { tail -30 "$work/run.out"; exit 1; }
grep -E "^[0-9]+ windows:" "$work/run.out"

python3 - "$work/ab.db" <<'PY'
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""
  select w.scenario, w.target, w.rps, w.cpu_us_per_request, w.requests,
         coalesce((select sum(s.cpu_user_s + s.cpu_sys_s) from window_services s
                   where s.window_id = w.id), 0),
         w.server_steal_pct, w.verdict, w.round
  from windows w where w.round > 0 and w.attempt = (select max(v.attempt) from windows v
    where v.campaign_id = w.campaign_id and v.target = w.target and v.scenario = w.scenario
      and v.connections = w.connections and v.round = w.round)""").fetchall()
by = {}
steal = []
for scenario, target, rps, cpu, requests, db_cpu, st, verdict, rnd in rows:
    if st is not None:
        steal.append(st)
    if verdict != "valid":
        continue
    by.setdefault((scenario, target), []).append((rps, cpu, db_cpu * 1e6 / requests, rnd))
print(f"server steal over the windows: median {statistics.median(steal):.1f}%" if steal else "")
reasons = {}
for (text,) in db.execute("select reasons from windows where verdict != 'valid'"):
    for r in __import__("json").loads(text):
        key = r.split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
if reasons:
    print("refused for: " + ", ".join(f"{k} {n}" for k, n in sorted(reasons.items())))
    print("e.g. " + db.execute("select reasons from windows where verdict != 'valid' limit 1").fetchone()[0][:300])
med = lambda xs: statistics.median(xs) if xs else float("nan")
for scenario in sorted({k[0] for k in by}):
    print(f"\n{scenario}, 16 connections ({'valid windows' })")
    print(f"  {'target':<14} {'n':>2} {'req/s':>8} {'target us/req':>14} {'db us/req':>10} {'total':>8}")
    fig = {}
    for (s, t), xs in sorted(by.items()):
        if s != scenario:
            continue
        r, c, d = med([x[0] for x in xs]), med([x[1] for x in xs]), med([x[2] for x in xs])
        fig[t] = (r, c, d)
        print(f"  {t:<14} {len(xs):>2} {r:>8.0f} {c:>14.1f} {d:>10.1f} {c + d:>8.1f}")
    def ratio(a, b, what):
        if a not in fig or b not in fig:
            return
        # Round by round: the two targets' windows of a round ran minutes apart at most.
        ra = {x[3]: x for x in by[(scenario, a)]}
        rb = {x[3]: x for x in by[(scenario, b)]}
        paired = sorted(ra[r][0] / rb[r][0] for r in ra if r in rb)
        spread = f", rounds {paired[0]:.2f}-{paired[-1]:.2f} ({len(paired)})" if paired else ""
        print(f"  {what}: req/s {fig[a][0] / fig[b][0]:.3f}x{spread}, total CPU/req "
              f"{(fig[a][1] + fig[a][2]) / (fig[b][1] + fig[b][2]):.3f}x")
    ratio("node-noprobe", "node", "probe cost (node without probes / with)")
    ratio("node-db-cpu0", "node", "placement, node (database on CPU 0 / on CPU 1)")
    ratio("bun-db-cpu0", "bun", "placement, bun (database on CPU 0 / on CPU 1)")
PY

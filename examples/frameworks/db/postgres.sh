#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the database routes (CONTRACT.md, "Database routes"),
# run in the foreground so that a benchlab agent can run it as a service and stop it.
#
# Usage: postgres.sh DATADIR PORT
#
# When DATADIR holds no cluster (no PG_VERSION), makes one there: initdb -A trust -U bench
# --no-sync -E UTF8 --locale=C (superuser `bench`, no password, from this host only). Then
# replaces itself with postgres (exec), so its pid is the postmaster's, listening on
# 127.0.0.1:PORT and on a Unix socket in DATADIR, logging to stderr. It creates no database and
# no table: seed.sh HOST PORT does that, as a separate setup step.
#
# Stopping: SIGINT is PostgreSQL's fast shutdown (sessions are ended, then it exits); SIGTERM is
# its smart shutdown, which first waits for every connected client to disconnect, so stop the
# app first or expect the grace period before SIGKILL to run out; SIGKILL leaves a cluster that
# recovers at the next start.
#
# Settings: synchronous_commit=off (a commit does not wait for its WAL to reach the disk, so the
# database routes measure the app and the driver, not the disk's flush latency; a crash of the
# machine can lose the last commits but not corrupt the cluster, since fsync stays on),
# max_connections=100, shared_buffers=128MB, no logging collector.
#
# PostgreSQL refuses to run as root: run as root, the script makes DATADIR belong to the system
# user `postgres` (made by Debian's postgresql package) and runs initdb and postgres as that user
# through setpriv, which execs in place (runuser would fork and stay the parent). DATADIR's
# parent directories must then let `postgres` through (o+x). The binaries come from pg_config
# --bindir, else the newest /usr/lib/postgresql/*/bin (Debian keeps them off PATH). The system
# cluster (/var/lib/postgresql, port 5432) is never touched.
set -euo pipefail

die() {
  echo "postgres.sh: $*" >&2
  exit 1
}

[ $# -eq 2 ] || die "usage: postgres.sh DATADIR PORT"
[[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 65535 ] || die "not a port: $2"
port=$2

bindir() {
  local dir
  dir=$(pg_config --bindir 2> /dev/null || true)
  if [ -n "$dir" ] && [ -x "$dir/postgres" ]; then
    echo "$dir"
    return
  fi
  for dir in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
    [ -x "$dir/postgres" ] && { echo "$dir"; return; }
  done
  return 1
}
bin=$(bindir) || die "no PostgreSQL server binaries (apt-get install postgresql)"

mkdir -p "$1"
datadir=$(cd "$1" && pwd)
cd / # the postgres user may not be allowed into the caller's working directory

as_postgres=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres > /dev/null 2>&1 || die "running as root and there is no user postgres"
  as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups)
  chown postgres:postgres "$datadir"
  "${as_postgres[@]}" test -w "$datadir" -a -x "$datadir" ||
    die "user postgres cannot reach $datadir (its parent directories need o+x)"
fi
chmod 700 "$datadir"

if [ ! -f "$datadir/PG_VERSION" ]; then
  "${as_postgres[@]}" "$bin/initdb" -D "$datadir" -A trust -U bench --no-sync -E UTF8 \
    --locale=C > /dev/null || die "initdb failed"
fi

exec "${as_postgres[@]}" "$bin/postgres" -D "$datadir" -p "$port" -k "$datadir" \
  -c listen_addresses=127.0.0.1 -c synchronous_commit=off -c fsync=on \
  -c max_connections=100 -c shared_buffers=128MB -c logging_collector=off

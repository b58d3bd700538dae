#!/usr/bin/env bash
# Seeds the database of the database routes (CONTRACT.md, "Database routes"): waits up to 30 s for
# the server at HOST:PORT to accept connections, creates the database `bench` when it is missing,
# then runs schema.sql and seed.sql in it (psql -v ON_ERROR_STOP=1), as the superuser `bench`
# that postgres.sh's cluster has. Running it again starts over: the tables are dropped and made
# again, the same 10,000 users and no orders.
# Usage: seed.sh HOST PORT   (a setup step after postgres.sh DATADIR PORT has started)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() {
  echo "seed.sh: $*" >&2
  exit 1
}

[ $# -eq 2 ] || die "usage: seed.sh HOST PORT"
host=$1 port=$2

# psql and pg_isready from the server's directory when it is there, else from PATH.
bin=$(pg_config --bindir 2> /dev/null || true)
if [ -z "$bin" ] || [ ! -x "$bin/psql" ]; then
  bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r | head -n 1)
fi
psql=psql pg_isready=pg_isready
if [ -x "$bin/psql" ] && [ -x "$bin/pg_isready" ]; then
  psql=$bin/psql pg_isready=$bin/pg_isready
fi
command -v "$psql" > /dev/null || die "no psql (apt-get install postgresql-client)"

deadline=$((SECONDS + 30))
until "$pg_isready" -q -h "$host" -p "$port" -U bench -d postgres; do
  [ "$SECONDS" -lt "$deadline" ] || die "nothing accepts connections at $host:$port after 30 s"
  sleep 0.1
done

# Warnings and errors only (not the NOTICEs of DROP TABLE IF EXISTS on a new database).
run() {
  PGOPTIONS='-c client_min_messages=warning' \
    "$psql" -X -q -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U bench "$@"
}
if [ "$(run -d postgres -tA -c "SELECT 1 FROM pg_database WHERE datname = 'bench'")" != 1 ]; then
  run -d postgres -c 'CREATE DATABASE bench'
fi
run -d bench -f "$here/schema.sql" -f "$here/seed.sql"

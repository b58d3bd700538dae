#!/usr/bin/env bash
# Installs what the apps need. First Debian's PostgreSQL server and client, for the database
# routes (db/postgres.sh runs a throwaway cluster of its own; the system cluster is not used),
# through scripts/install-deps.sh, which installs only what is missing. Then the apps' packages
# with `npm ci` (exactly package-lock.json), only when node_modules is missing or older than
# package.json or package-lock.json: running it again installs nothing. Bun comes as the npm
# package `bun`, whose binary lands in node_modules/.bin/bun.
# Usage: examples/frameworks/install.sh
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
"$root/scripts/install-deps.sh" postgresql postgresql-client
stamp=node_modules/.package-lock.json # written by npm at the end of every install
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ "$stamp" -nt package.json ]; then
  exit 0
fi
if ! command -v npm > /dev/null 2>&1; then
  echo "install.sh: npm is missing (Node.js 20 or later with npm is needed)" >&2
  exit 1
fi
echo "install.sh: npm ci in $(pwd)"
npm ci --no-audit --no-fund

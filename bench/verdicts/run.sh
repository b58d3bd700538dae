#!/usr/bin/env bash
# Verdicts on real campaigns on this machine (docs/methodology.md, "Intervals and verdicts"),
# each part a campaign on the embedded lab, summarized by summarize.py:
#   aa      A/A: hello-server under two names (aa.toml); every comparison's truth is 1.00
#   slower  hello-server against itself 0.8 us of CPU slower per request (slower.toml)
#   loop    a busy loop started on the target's CPU in the middle of a campaign (loop.toml):
#           the self-test alone (foreign_cpu off) must refuse every window it overlaps
#   bun     examples/frameworks/bun.toml with a fixed 7-round plan, then with rounds 3 to 7
#           until decided: the same verdicts where the fixed plan decided, in fewer windows
# Usage: bench/verdicts/run.sh [PART...]   (default: aa slower loop; bun takes about 40 min)
# Needs `make build` (and `make frameworks-deps` for bun) and a quiet machine: anything else
# running is foreign CPU, and the gates refuse those windows. Databases go to $OUT
# (default /tmp/benchlab-verdicts).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/benchlab-verdicts}
mkdir -p "$out"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(aa slower loop)

campaign() { # NAME FILE DB: runs a campaign into a fresh database
  rm -f "$3"
  build/bin/benchlab run "$2" --db "$3" --progress off >"$out/$1.log" 2>&1 ||
    { echo "$1: benchlab run failed, see $out/$1.log" >&2; return 1; }
}

for part in "${parts[@]}"; do
  case $part in
    aa | slower)
      campaign "$part" "bench/verdicts/$part.toml" "$out/$part.db"
      bench/verdicts/summarize.py "$out/$part.db" "verdicts-$part"
      ;;
    loop)
      rm -f "$out/loop.db"
      build/bin/benchlab run bench/verdicts/loop.toml --db "$out/loop.db" --progress off \
        >"$out/loop.log" 2>&1 &
      run=$!
      # The loop starts once three windows are stored: after the calibration, mid-campaign.
      until [ "$(sqlite3 "$out/loop.db" 'select count(*) from windows' 2>/dev/null || echo 0)" -ge 3 ]; do
        kill -0 $run 2>/dev/null || break
        sleep 0.5
      done
      since=$(date -u +%Y-%m-%dT%H:%M:%S.%3N)
      taskset -c 0 sh -c 'while :; do :; done' &
      loop=$!
      wait $run || echo "loop: benchlab run failed, see $out/loop.log" >&2
      kill $loop
      echo "== verdicts-loop: a SCHED_OTHER busy loop on CPU 0 (the target's) from $since"
      sqlite3 -separator ' ' "$out/loop.db" "select '  ' || started_at, round, target, verdict,
        printf('drift %+.1f%%', 100 * selftest_drift), printf('%.0f req/s', rps),
        case when started_at >= '$since' then 'loop running' else 'quiet' end,
        reasons from windows order by id"
      sqlite3 "$out/loop.db" "select '  quiet: ' || sum(started_at < '$since') || ' windows, '
        || sum(started_at < '$since' and reasons like '%selftest_drift%') || ' refused by selftest_drift; loop running: '
        || sum(started_at >= '$since') || ' windows, ' || sum(started_at >= '$since' and reasons like '%selftest_drift%')
        || ' refused by selftest_drift' from windows"
      ;;
    bun)
      dir=$(pwd)/examples/frameworks
      [ -x "$dir/node_modules/.bin/bun" ] || { echo "bun: run make frameworks-deps first" >&2; exit 1; }
      for plan in fixed adaptive; do
        if [ $plan = fixed ]; then rounds='rounds = 7'; else rounds='rounds = { min = 3, max = 7 }'; fi
        sed -e "s|{campaign_dir}|$dir|g" -e "s|^rounds = 3$|$rounds|" \
          -e "s|^name = \"frameworks-bun\"|name = \"bun-$plan\"|" "$dir/bun.toml" >"$out/bun-$plan.toml"
        grep -q "^$rounds" "$out/bun-$plan.toml"
        campaign "bun-$plan" "$out/bun-$plan.toml" "$out/bun-$plan.db"
      done
      bench/verdicts/summarize.py "$out/bun-fixed.db" bun-fixed "$out/bun-adaptive.db" bun-adaptive
      ;;
    *)
      echo "unknown part $part (aa, slower, loop, bun)" >&2
      exit 2
      ;;
  esac
done

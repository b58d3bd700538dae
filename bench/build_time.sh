#!/usr/bin/env bash
# Clean-build time of benchlab at two commits, side by side, on this machine.
#
#   bench/build_time.sh BEFORE [AFTER]     (AFTER defaults to HEAD)
#   TARGETS="benchlab hello-server" bench/build_time.sh BEFORE   (what `make run` compiles)
#
# Each commit is cloned into a scratch directory and built from nothing with the flags of the
# normal tree (RelWithDebInfo, -O2 -g1, Ninja, -j$(nproc)), without ccache (CCACHE_DISABLE, so
# that neither the cache nor CMakeLists.txt's launcher shortcuts a compile): all of it, or only
# TARGETS. Printed per commit:
# wall time, CPU time (user+sys of the whole build, from /usr/bin/time), and from .ninja_log
# the number of translation units, their summed compile time, and how much of it goes to the
# units that include gRPC's headers (found with the compiler's dependency files). The last
# line gives AFTER/BEFORE ratios. Run it on a quiet machine: the builds are the measurement.
set -euo pipefail

before=${1:?usage: bench/build_time.sh BEFORE [AFTER]}
after=${2:-HEAD}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
scratch=$(mktemp -d /tmp/benchlab-build-time.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
jobs=$(nproc)

# measure NAME COMMIT: prints "wall cpu units unit_seconds grpc_units grpc_seconds"
measure() {
  local name=$1 commit=$2 dir=$scratch/$1
  git clone --quiet --no-checkout "$repo" "$dir"
  git -C "$dir" checkout --quiet "$(git -C "$repo" rev-parse "$commit")"
  env -u CMAKE_CXX_COMPILER_LAUNCHER cmake -S "$dir" -B "$dir/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
  # shellcheck disable=SC2086 # TARGETS is a list of words
  CCACHE_DISABLE=1 /usr/bin/time -f '%e %U %S' -o "$scratch/$name.time" \
    cmake --build "$dir/build" -j "$jobs" ${TARGETS:+--target $TARGETS} >"$scratch/$name.log" 2>&1 ||
    { tail -30 "$scratch/$name.log" >&2; exit 1; }
  read -r wall user sys <"$scratch/$name.time"
  # .ninja_log: start_ms end_ms mtime output hash. Object files are translation units; the
  # .d files ninja keeps in .ninja_deps are read back with `ninja -t deps`.
  ninja -C "$dir/build" -t deps >"$scratch/$name.deps"
  awk -v wall="$wall" -v cpu="$(echo "$user + $sys" | bc)" '
    FNR == NR {
      if ($0 ~ /^[^ ].*\.o: #deps/) { obj = $1; sub(/:$/, "", obj) }
      else if ($0 ~ /grpcpp\//) grpc[obj] = 1
      next
    }
    /^#/ { next }
    $4 ~ /\.o$/ {
      t = ($2 - $1) / 1000; units++; secs += t
      if ($4 in grpc) { gunits++; gsecs += t }
    }
    END { printf "%s %s %d %.1f %d %.1f\n", wall, cpu, units, secs, gunits, gsecs }
  ' "$scratch/$name.deps" "$dir/build/.ninja_log"
}

printf '%-8s %-12s %8s %8s %6s %10s %6s %10s\n' \
  build commit wall_s cpu_s units unit_s grpc_n grpc_s
read -r bw bc bu bs bgu bgs < <(measure before "$before")
printf '%-8s %-12s %8.1f %8.1f %6d %10.1f %6d %10.1f\n' before \
  "$(git -C "$repo" rev-parse --short "$before")" "$bw" "$bc" "$bu" "$bs" "$bgu" "$bgs"
read -r aw ac au as agu ags < <(measure after "$after")
printf '%-8s %-12s %8.1f %8.1f %6d %10.1f %6d %10.1f\n' after \
  "$(git -C "$repo" rev-parse --short "$after")" "$aw" "$ac" "$au" "$as" "$agu" "$ags"
awk -v bw="$bw" -v aw="$aw" -v bc="$bc" -v ac="$ac" -v bs="$bs" -v as="$as" \
  -v bu="$bu" -v au="$au" 'BEGIN {
    printf "after/before: wall %.2fx  cpu %.2fx  unit seconds %.2fx  mean unit %.2fx\n",
      aw / bw, ac / bc, as / bs, (as / au) / (bs / bu)
  }'

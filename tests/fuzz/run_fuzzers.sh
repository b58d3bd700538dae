#!/usr/bin/env bash
# Runs benchlab's libFuzzer targets (docs/fuzzing.md), one after the other. For each target NAME:
# first every input of tests/fuzz/regressions/NAME/ once (inputs that once failed; when one still
# fails, the target is not fuzzed), then fuzzing for SECONDS on its committed seed corpus,
# tests/fuzz/corpus/NAME/ (read only), and a working corpus under the build tree,
# BUILD_DIR/fuzz/corpus/NAME/, where new inputs go and accumulate from run to run. A crash, leak,
# timeout or out-of-memory stops that target; its input is saved under
# BUILD_DIR/fuzz/artifacts/NAME/. The script exits 1 after the others ran, naming each failing
# input and the command that replays it. Output: BUILD_DIR/fuzz/logs/NAME.log.
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [NAME...]   (default: every target)
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [NAME...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$src"/tests/fuzz/*_fuzz.cc; do names+=("$(basename "$f" _fuzz.cc)"); done
fi

# Per target: the longest input libFuzzer may make, its dictionary, and the seconds one input may
# take before it counts as a hang (a parser that needs 10 s for 64 KiB is a denial of service).
options() {
  case $1 in
    http_response_parser) echo "-max_len=1048576 -dict=$src/tests/fuzz/http.dict -timeout=10" ;;
    campaign_parser | agent_config_parser)
      echo "-max_len=65536 -dict=$src/tests/fuzz/toml.dict -timeout=10" ;;
    wrk_output_parser | h2load_output_parser) echo "-max_len=16384 -timeout=10" ;;
    *) echo "-max_len=65536 -timeout=30" ;;
  esac
}

# The targets' scratch directories (tests/fuzz/scratch_dir.h), emptied at each run: a target that
# fails leaves its own for inspection.
export TMPDIR=$build/fuzz/tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"

failed=()
for name in "${names[@]}"; do
  bin=$build/bin/${name}_fuzz
  seeds=$src/tests/fuzz/corpus/$name
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz: no target $name (need $bin and $seeds)" >&2
    failed+=("$name: missing")
    continue
  fi
  regressions=$src/tests/fuzz/regressions/$name
  work=$build/fuzz/corpus/$name
  artifacts=$build/fuzz/artifacts/$name
  log=$build/fuzz/logs/$name.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  : >"$log"
  # Regressions one by one, so that every one still failing is named.
  regressed=0
  for input in "$regressions"/*; do
    [ -f "$input" ] || continue
    # shellcheck disable=SC2046  # options() gives words on purpose
    if ! "$bin" $(options "$name") "$input" >"$log.last" 2>&1; then
      regressed=1
      echo "fuzz: $name: regression $(basename "$input") fails"
      grep -E '^(==[0-9]+==ERROR|SUMMARY|FUZZ_CHECK failed)' "$log.last" | head -n 2 | sed 's/^/  /'
      echo "  replay: $bin $input"
      failed+=("$name: $input")
    fi
    cat "$log.last" >>"$log"
    rm -f "$log.last"
  done
  [ $regressed -eq 0 ] || continue

  # shellcheck disable=SC2046
  "$bin" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" $(options "$name") "$work" "$seeds" >>"$log" 2>&1
  status=$?
  summary=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
  echo "fuzz: $name: ${summary:-no final stats} (log: $log)"
  if [ $status -ne 0 ]; then
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    grep -E '^(==[0-9]+==ERROR|SUMMARY|FUZZ_CHECK failed)' "$log" | head -n 3 | sed 's/^/  /'
    echo "  input: ${input:-none saved}; replay: $bin ${input:-}"
    failed+=("$name: ${input:-exit status $status}")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: ${#failed[@]} failing input(s):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi

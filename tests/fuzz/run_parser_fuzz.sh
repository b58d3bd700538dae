#!/usr/bin/env bash
# Builds the HttpResponseParser fuzzer with clang (libFuzzer, ASan, UBSan), seeds a corpus with
# well-formed pipelined responses, and runs it. Not part of the CMake build or of ctest.
# Usage: tests/fuzz/run_parser_fuzz.sh [SECONDS=60] [WORK_DIR=/tmp/benchlab-fuzz]
set -euo pipefail
seconds=${1:-60}
work=${2:-/tmp/benchlab-fuzz}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/corpus"
clang++ -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -std=c++20 \
  -I"$src" "$src/tests/fuzz/http_response_parser_fuzz.cc" "$src/loadgen/http_response_parser.cc" \
  -o "$work/parser_fuzz"
# Seeds: three control bytes (flags, split seed, more flags), then a stream of responses.
seed() { printf "%b" "$2" >"$work/corpus/$1"; }
ok='HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'
chunked='HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=1\r\nlo\r\n0\r\nT: 1\r\n\r\n'
seed ok "\x00\x01\x00$ok$ok$ok"
seed split "\x38\x05\x02$ok$chunked$ok$chunked"
seed head "\x0a\x07\x01$ok$ok"
seed close "\x05\x09\x02HTTP/1.1 200 OK\r\n\r\nhello"
seed interim "\x21\x03\x00HTTP/1.1 100 Continue\r\n\r\n$ok"
"$work/parser_fuzz" -max_total_time="$seconds" -max_len=4096 -dict="$src/tests/fuzz/http.dict" \
  -print_final_stats=1 "$work/corpus"

# The fuzzing build (docs/fuzzing.md): configured with -DBENCHLAB_FUZZ=ON and clang, it builds
# every benchlab library with libFuzzer's coverage instrumentation, AddressSanitizer and
# UndefinedBehaviorSanitizer, and the libFuzzer targets of tests/fuzz/ (target `fuzzers`).
# Debian's gRPC, protobuf and SQLite stay as packaged (built with gcc, not instrumented).
# It is also the tree in which `make test` runs the unit and integration tests under ASan and
# UBSan (build-asan/, Makefile): one compile of benchlab's code serves both. End-to-end tests and
# the dashboard are left out of it (CMakeLists.txt).
# Included by CMakeLists.txt before any target is defined, so the flags reach all of them.
option(BENCHLAB_FUZZ "Build the libFuzzer targets of tests/fuzz/ (needs clang)" OFF)
if(BENCHLAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BENCHLAB_FUZZ needs clang's libFuzzer, but the C++ compiler is "
      "${CMAKE_CXX_COMPILER_ID}: configure a separate build tree with "
      "-DCMAKE_CXX_COMPILER=clang++ (Debian: clang and libclang-rt-14-dev)")
  endif()
  if(BENCHLAB_SANITIZE)
    message(FATAL_ERROR "BENCHLAB_FUZZ already builds with ASan and UBSan: leave BENCHLAB_SANITIZE off")
  endif()
  # -Wno-unknown-warning-option: benchlab's code silences some GCC-only warnings by name (e.g.
  # agent/supervisor.cc), which clang would otherwise turn into errors under -Werror.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer -Wno-unknown-warning-option)
  add_link_options(-fsanitize=address,undefined)
endif()

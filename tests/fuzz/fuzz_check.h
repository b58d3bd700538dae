// FUZZ_CHECK: a property a fuzz target asserts beyond what the sanitizers catch. A failure prints
// what failed and where, then aborts, which libFuzzer reports as a crash with its input saved.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                  \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

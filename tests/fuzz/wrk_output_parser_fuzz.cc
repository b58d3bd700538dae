// libFuzzer target: ParseWrkOutput (agent/external_load.h); see external_output_fuzz.h.
#include "tests/fuzz/external_output_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return benchlab::fuzz::FuzzExternalOutput(data, size, benchlab::ParseWrkOutput);
}

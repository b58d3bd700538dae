// The body of the wrk and h2load output fuzz targets (agent/external_load.h): the parser on
// arbitrary text, as the tool's stdout and stderr would bring it. A refusal must stay short
// whatever the output (it quotes a bounded excerpt); accepted figures must be usable: no NaN,
// no negative time or rate.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/external_load.h"
#include "tests/fuzz/fuzz_check.h"

namespace benchlab::fuzz {

inline bool Usable(double v) { return std::isfinite(v) && v >= 0; }
inline bool Usable(const std::optional<double>& v) { return !v || Usable(*v); }

template <typename Parse>
int FuzzExternalOutput(const uint8_t* data, size_t size, Parse parse) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto figures = parse(text);
  if (!figures.ok()) {
    const std::string& message = figures.status().message();
    FUZZ_CHECK(message.size() <= 1024, "an error of " + std::to_string(message.size()) + " bytes");
    return 0;
  }
  const ExternalLoadFigures& f = *figures;
  FUZZ_CHECK(Usable(f.duration_s) && Usable(f.rps), "duration or rate not a finite number >= 0");
  FUZZ_CHECK(Usable(f.mean_us) && Usable(f.stdev_us) && Usable(f.max_us) && Usable(f.min_us) &&
                 Usable(f.bytes_per_s),
             "a latency or byte rate not a finite number >= 0");
  return 0;
}

}  // namespace benchlab::fuzz

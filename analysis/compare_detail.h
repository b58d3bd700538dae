// Helpers the comparison (analysis/compare.cc) and its formats (analysis/compare_format.cc)
// share: how a figure, a fraction and a missing value are written. Internal to `benchlab compare`.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/compare.h"
#include "analysis/report_format.h"

namespace benchlab::compare_detail {

inline constexpr const char* kMissing = "–";  // no figure (report_format's sign)
inline constexpr const char* kNone = "—";     // the side does not have the row

template <typename... Args>
std::string Printf(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

inline std::string Figure(CompareMetric m, double v) {
  if (!std::isfinite(v)) return kMissing;
  switch (m) {
    case CompareMetric::kRps:
      return Thousands(v);
    case CompareMetric::kCpu:
      return v < 10 ? Printf("%.2f", v) : Printf("%.1f", v);
    case CompareMetric::kP99:
      return Micros(v);
  }
  return kMissing;
}
inline std::string Percent(double fraction) {
  return std::isfinite(fraction) ? Printf("%.1f%%", fraction * 100) : kMissing;
}
inline std::string SignedPercent(double fraction) {
  return std::isfinite(fraction) ? Printf("%+.1f%%", fraction * 100) : kMissing;
}

}  // namespace benchlab::compare_detail

// Helpers the comparison (analysis/compare.cc) and its formats (analysis/compare_format.cc)
// share: how a figure, a fraction and a missing value are written. Internal to `benchlab compare`.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/compare.h"
#include "analysis/report_format.h"
#include "common/parse.h"

namespace benchlab::compare_detail {

inline constexpr const char* kMissing = "–";  // no figure (report_format's sign)
inline constexpr const char* kNone = "—";     // the side does not have the row

// A compared figure's value (kComparedMetrics); kMissing for any other figure.
inline std::string Figure(Metric m, double v) {
  if (!std::isfinite(v)) return kMissing;
  switch (m) {
    case Metric::kRps:
      return Thousands(v);
    case Metric::kCpuUsPerRequest:
      return v < 10 ? StrFormat("%.2f", v) : StrFormat("%.1f", v);
    case Metric::kP99Us:
      return Micros(v);
    default:
      return kMissing;
  }
}
inline std::string Percent(double fraction) {
  return std::isfinite(fraction) ? StrFormat("%.1f%%", fraction * 100) : kMissing;
}
inline std::string SignedPercent(double fraction) {
  return std::isfinite(fraction) ? StrFormat("%+.1f%%", fraction * 100) : kMissing;
}

}  // namespace benchlab::compare_detail

#include "coordinator/gates.h"

#include <cstdio>

namespace benchlab {

double ErrorRate(const GateInputs& in) {
  uint64_t attempts = in.requests + in.transport_errors;
  if (attempts == 0) return 0;
  return static_cast<double>(in.transport_errors + in.status_mismatches) /
         static_cast<double>(attempts);
}

std::vector<std::string> EvaluateGates(const GateInputs& in, const GateThresholds& thresholds) {
  std::vector<std::string> reasons;
  double rate = ErrorRate(in);
  if (rate > thresholds.error_rate_max) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "error_rate: %.2f%% > %.2f%% (%llu errors of %llu attempts)",
                  rate * 100, thresholds.error_rate_max * 100,
                  static_cast<unsigned long long>(in.transport_errors + in.status_mismatches),
                  static_cast<unsigned long long>(in.requests + in.transport_errors));
    reasons.push_back(buf);
  }
  return reasons;
}

}  // namespace benchlab

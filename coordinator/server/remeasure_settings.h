// How a re-measurement is run and judged (docs/history.md, "Confirmation by re-measurement"),
// apart from coordinator/server/confirmation.h so that the coordinator's options carry it
// without the analysis headers.
#pragma once

#include <vector>

#include "analysis/stats.h"

namespace benchlab {

// How a re-measurement is run and judged. The defaults are docs/history.md's: at least 5 rounds,
// at most 30, every look of the adaptive plan together at confidence 0.90 (one-sided 0.95).
struct RemeasureSettings {
  int min_rounds = 5;
  int max_rounds = 30;
  double confidence = 0.90;
  // The figures whose changes are re-measured; one campaign decides on them all.
  std::vector<Metric> figures = {Metric::kRps, Metric::kCpuUsPerRequest};
};

}  // namespace benchlab

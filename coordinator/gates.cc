#include "coordinator/gates.h"

#include <algorithm>

#include "coordinator/gate_table.h"

namespace benchlab {

DriftThreshold SelftestDriftThreshold(const SelftestDriftGate& gate, std::optional<double> spread) {
  DriftThreshold t{gate.max_pct, false, false};
  if (!spread) return t;
  const double from_spread = gate.spread_multiple * *spread * 100;
  const double calibrated = std::min(from_spread, kSelftestDriftCalibratedMaxPct);
  if (calibrated > gate.max_pct) t = {calibrated, true, from_spread > calibrated};
  return t;
}

int RemeasureBudget(const GateConfig& config, int planned_windows) {
  if (config.remeasure_max) return *config.remeasure_max;
  return std::max(2, (planned_windows + 3) / 4);
}

std::vector<GateReason> JudgeWindow(const WindowMeasures& m, const GateConfig& config) {
  std::vector<GateReason> reasons;
  for (const GateSpec& gate : GateTable()) {
    if (!GateApplies(gate, config)) continue;
    if (gate.judge_host) {
      GateReasons server(gate.name, "server", reasons);
      gate.judge_host(m.server, config, server);
      GateReasons load(gate.name, "load", reasons);
      gate.judge_host(m.load, config, load);
    }
    if (gate.judge_window) {
      GateReasons window(gate.name, "", reasons);
      gate.judge_window(m, config, window);
    }
  }
  return reasons;
}

}  // namespace benchlab

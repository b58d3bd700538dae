// libFuzzer target: ParseCampaignText (coordinator/campaign.h) on arbitrary text, as a campaign
// file or SubmitCampaign's spec_toml would bring it. A refusal must name the file (errors cite
// "fuzz.toml:LINE: ..."). An accepted campaign whose plan stays within 100,000 windows (the
// coordinator's default --max-windows, docs/security.md) is planned with ExpandMatrix, and the
// plan is checked against docs/campaign.md, "The plan": rounds x scenarios x load levels x
// targets windows plus [noise]'s, indexed in order, each naming a defined target and scenario,
// positions within their round, and a target process started exactly where the previous window
// stopped one. Larger plans are the coordinator's limit to refuse (coordinator_service_fuzz).
#include <cstddef>
#include <cstdint>
#include <string>

#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using benchlab::Campaign;
using benchlab::PlannedWindow;

constexpr uint64_t kMaxPlannedWindows = 100000;

// rounds x scenarios x levels x targets, saturating at kMaxPlannedWindows + 1.
uint64_t MatrixSize(const Campaign& c) {
  uint64_t n = 1;
  for (uint64_t factor : {uint64_t(c.rounds), uint64_t(c.scenarios.size()),
                          uint64_t(c.LoadLevels().size()), uint64_t(c.targets.size())}) {
    if (factor != 0 && n > kMaxPlannedWindows / factor) return kMaxPlannedWindows + 1;
    n *= factor;
  }
  return n;
}

void CheckPlan(const Campaign& c, uint64_t matrix) {
  const uint64_t noise = c.noise ? uint64_t(c.noise->windows) : 0;
  const auto plan = benchlab::ExpandMatrix(c);
  FUZZ_CHECK(plan.size() == matrix + noise, "plan of " + std::to_string(plan.size()) +
                                                " windows, expected " + std::to_string(matrix) +
                                                " + " + std::to_string(noise) + " noise");
  const uint64_t per_round = c.rounds > 0 ? matrix / uint64_t(c.rounds) : 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedWindow& w = plan[i];
    FUZZ_CHECK(w.index == int(i),
               "window " + std::to_string(i) + " has index " + std::to_string(w.index));
    FUZZ_CHECK(c.FindTarget(w.target) != nullptr, "window names no target: " + w.target);
    FUZZ_CHECK(c.FindScenario(w.scenario) != nullptr, "window names no scenario: " + w.scenario);
    if (w.noise) {
      FUZZ_CHECK(w.round == 0 && uint64_t(w.position) < noise, "noise window out of place");
    } else {
      FUZZ_CHECK(w.round >= 1 && w.round <= c.rounds, "round " + std::to_string(w.round));
      FUZZ_CHECK(w.position >= 0 && uint64_t(w.position) < per_round,
                 "position " + std::to_string(w.position));
    }
    FUZZ_CHECK(!benchlab::LoadLevelLabel(w).empty(), "empty load level label");
    const bool starts = i == 0 || plan[i - 1].stop_process;
    FUZZ_CHECK(w.start_process == starts,
               "window " + std::to_string(i) + " starts a process unlike its predecessor stopped");
    if (!w.start_process) FUZZ_CHECK(plan[i - 1].target == w.target, "process shared by targets");
  }
  if (!plan.empty()) FUZZ_CHECK(plan.back().stop_process, "the last window keeps its process");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto campaign = benchlab::ParseCampaignText(text, "fuzz.toml", "/nonexistent/campaign-dir");
  if (!campaign.ok()) {
    const std::string& message = campaign.status().message();
    FUZZ_CHECK(message.starts_with("fuzz.toml"), "error without its file: " + message);
    return 0;
  }
  const uint64_t matrix = MatrixSize(*campaign);
  if (matrix <= kMaxPlannedWindows) CheckPlan(*campaign, matrix);
  return 0;
}

#include "coordinator/plan.h"

namespace benchlab {

std::vector<std::string> TargetOrderForRound(const Campaign& campaign, int round) {
  std::vector<std::string> order;
  const size_t count = campaign.targets.size();
  if (count == 0) return order;
  // Rotating the start shifts every target one place per round, so no target always runs first
  // (cold caches, a fresh CPU frequency) or last (after the machine has warmed up).
  size_t start = 0;
  if (campaign.order == Order::kRotate && round >= 1) {
    start = static_cast<size_t>(round - 1) % count;
  }
  order.reserve(count);
  for (size_t i = 0; i < count; ++i) order.push_back(campaign.targets[(start + i) % count].name);
  return order;
}

std::vector<PlannedWindow> ExpandMatrix(const Campaign& campaign) {
  std::vector<PlannedWindow> windows;
  windows.reserve(static_cast<size_t>(campaign.rounds) * campaign.scenarios.size() *
                  campaign.connections.size() * campaign.targets.size());
  for (int round = 1; round <= campaign.rounds; ++round) {
    const std::vector<std::string> order = TargetOrderForRound(campaign, round);
    int position = 0;
    for (const auto& scenario : campaign.scenarios) {
      for (int connections : campaign.connections) {
        for (const auto& target : order) {
          PlannedWindow w;
          w.index = static_cast<int>(windows.size());
          w.round = round;
          w.position = position++;
          w.target = target;
          w.scenario = scenario.name;
          w.connections = connections;
          windows.push_back(std::move(w));
        }
      }
    }
  }
  return windows;
}

}  // namespace benchlab

#include "coordinator/server/adaptive_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "analysis/rounds.h"

namespace benchlab {

std::vector<size_t> SelectAdaptive(const Campaign& campaign, const std::vector<PlannedWindow>& plan,
                                   const std::vector<PlannedState>& state, bool budget_spent) {
  std::vector<size_t> out;
  if (!campaign.adaptive) {
    for (size_t i = 0; i < plan.size(); ++i) {
      if (state[i].pending) out.push_back(i);
    }
    return out;
  }
  // The matrix windows of each cell (scenario, load level).
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> cells;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].noise) cells[{plan[i].scenario, LoadLevelLabel(plan[i])}].push_back(i);
  }
  std::vector<std::string> targets;
  for (const TargetDef& t : campaign.targets) targets.push_back(t.name);
  const std::vector<Metric> deciding = DecidingMetrics(campaign);
  const StatsOptions options = StatsOptionsOf(campaign);

  std::vector<char> selected(plan.size(), 0);
  for (const auto& [cell, windows] : cells) {
    // complete: the rounds 1..complete with nothing pending; reached: the highest round with a
    // stored window.
    std::vector<char> round_pending(static_cast<size_t>(campaign.rounds) + 2, 0);
    int reached = 0;
    std::vector<Measurement> measured;
    for (size_t i : windows) {
      const int round = plan[i].round;
      if (state[i].pending) round_pending[static_cast<size_t>(round)] = 1;
      if (state[i].newest) {
        reached = std::max(reached, round);
        measured.push_back(*state[i].newest);
      }
    }
    int complete = 0;
    while (complete < campaign.rounds && !round_pending[static_cast<size_t>(complete + 1)]) {
      ++complete;
    }
    const bool stop =
        complete >= campaign.rounds || budget_spent ||
        (complete >= campaign.min_rounds &&
         CellDecided(measured, campaign.baseline, targets, deciding, options, complete));
    const int frontier = stop ? std::max(complete, reached) : std::max(complete + 1, reached);
    for (size_t i : windows) {
      if (state[i].pending && plan[i].round <= frontier) selected[i] = 1;
    }
  }
  size_t last_matrix = 0;
  bool any_matrix = false;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (selected[i]) {
      last_matrix = i;
      any_matrix = true;
    }
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].noise && state[i].pending && (!any_matrix || i < last_matrix)) selected[i] = 1;
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    if (selected[i]) out.push_back(i);
  }
  return out;
}

bool BudgetSpent(const Campaign& campaign, double first_start_s,
                 std::chrono::system_clock::time_point now) {
  if (!campaign.stats.max_duration || !std::isfinite(first_start_s)) return false;
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
  return now_s - first_start_s >
         std::chrono::duration<double>(*campaign.stats.max_duration).count();
}

}  // namespace benchlab

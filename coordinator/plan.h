// Planning: expands a campaign into its windows, round by round, in the order they run.
// Pure functions, no I/O.
#pragma once

#include <string>
#include <vector>

#include "coordinator/campaign.h"

namespace benchlab {

struct PlannedWindow {
  int index = 0;     // 0-based order of execution over the whole campaign
  int round = 0;     // 1-based
  int position = 0;  // 0-based position of this window within its round
  std::string target;
  std::string scenario;
  int connections = 0;
};

// Windows of a campaign: rounds x scenarios x connections x targets. Within a round windows are
// grouped by scenario, then load level; inside each group the targets run in the round's order.
// order = fixed: the file's target order every round. order = rotate: round r (1-based) starts
// at target (r-1) mod T, so over T rounds every target holds every place in its group once
// (a Latin square).
std::vector<PlannedWindow> ExpandMatrix(const Campaign& campaign);

// The target order of one round (1-based), as ExpandMatrix uses it.
std::vector<std::string> TargetOrderForRound(const Campaign& campaign, int round);

}  // namespace benchlab

// Which windows of an adaptive campaign to measure next (docs/methodology.md, "Rounds until
// decided"). The plan holds max rounds; after every pass the scheduler asks again, so a cell
// advances one round per pass while it is undecided and stops once every comparison that decides
// it is decided (analysis/rounds.h), at max rounds, or when the budget is spent. Every cell still
// running takes the same round in the same pass, so the rotation of targets stays balanced among
// them. Pure: the scheduler passes what the store holds.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "analysis/stats.h"
#include "coordinator/campaign.h"
#include "coordinator/plan.h"

namespace benchlab {

// One planned window as the scheduler sees it now.
struct PlannedState {
  bool pending = false;               // to be measured (never was, re-run asked, requeued)
  std::optional<Measurement> newest;  // its newest stored attempt, if any
};

// The indexes into `plan` (ascending) of the windows to measure in this pass, of those that are
// pending. A cell's round r is complete when none of its windows in rounds 1..r is pending; with
// c complete rounds the cell
//   - runs its pending windows of rounds up to c + 1 while it is undecided after c rounds, has
//     fewer than max, and the budget is not spent;
//   - otherwise runs only what is pending in rounds it has already reached (re-runs, and a round
//     it had started), and adds no new round.
// Noise windows run when the matrix windows selected have reached their place in the plan; all
// that remain run once no matrix window is selected. A fixed campaign: every pending window.
std::vector<size_t> SelectAdaptive(const Campaign& campaign, const std::vector<PlannedWindow>& plan,
                                   const std::vector<PlannedState>& state, bool budget_spent);

// [stats] max_duration: whether more than it has passed at `now` since `first_start_s` (seconds
// since the epoch, the first window's start as stored; NaN when none started). False without a
// max_duration.
bool BudgetSpent(const Campaign& campaign, double first_start_s,
                 std::chrono::system_clock::time_point now);

}  // namespace benchlab

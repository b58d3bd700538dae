// Rounds until decided (docs/methodology.md, "Rounds until decided"): whether a cell of an
// adaptive plan has decided every comparison it must, shared by the scheduler (which rounds to
// run next) and the report (how many rounds each cell took and why it stopped). Pure functions
// of the cell's windows: any thread may call them.
#pragma once

#include <string>
#include <vector>

#include "analysis/stats.h"
#include "coordinator/campaign.h"

namespace benchlab {

// The campaign's [stats] and [matrix] rounds as the statistics take them: its confidence and
// margin, and a fixed or adaptive LookPlan.
StatsOptions StatsOptionsOf(const Campaign& campaign);

// The figures of [stats] decide_on (names the campaign parser accepted).
std::vector<Metric> DecidingMetrics(const Campaign& campaign);

// Whether every target of `targets` other than the baseline is decided (ahead, behind or close)
// against the baseline on every metric of `deciding`, from the cell's valid windows of rounds 1
// to `through_round` (newest attempts; later rounds are not looked at). A comparison that is n/a
// (a target or the baseline without two valid rounds) is not decided. No targets besides the
// baseline: decided (there is nothing to compare).
bool CellDecided(const std::vector<Measurement>& cell, const std::string& baseline,
                 const std::vector<std::string>& targets, const std::vector<Metric>& deciding,
                 const StatsOptions& options, int through_round);

// Why a cell has the rounds it has.
enum class CellStop {
  kFixedPlan,  // a fixed plan: every cell runs its rounds
  kDecided,    // every deciding comparison was decided at its last round
  kMaxRounds,  // undecided after max rounds
  kBudget,     // undecided when [stats] max_duration ran out
  kStopped,    // undecided when the campaign ended otherwise (cancelled, failed)
  kRunning,    // undecided, and the campaign is still running
};
const char* CellStopName(CellStop stop);  // "fixed plan", "decided", "max rounds", "budget", ...

struct CellRounds {
  int rounds = 0;  // the highest round with a window of the cell
  CellStop stop = CellStop::kFixedPlan;
};

// The rounds a cell took and why it stopped. `finished`: the campaign is no longer running.
CellRounds CellRoundsOf(const std::vector<Measurement>& cell, const Campaign& campaign,
                        bool finished);

}  // namespace benchlab

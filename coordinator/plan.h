// Planning: expands a campaign into its windows, round by round, in the order they run, and marks
// where a target process starts and stops. Pure functions, no I/O; results are the same on every
// machine and standard library (docs/campaign.md, "The plan").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "coordinator/campaign.h"

namespace benchlab {

struct PlannedWindow {
  int index = 0;     // 0-based order of execution over the whole campaign
  int round = 0;     // 1-based; 0 for a noise window
  int position = 0;  // 0-based position within its round; a noise window's ordinal 0..windows-1
  std::string target;
  std::string scenario;
  int connections = 0;  // closed loop: the level; open loop: the connections opened for it
  double rate = 0;      // requests/second of an open-loop level; 0: closed loop
  std::string tool = "benchlab";  // the load generator measuring it: benchlab, wrk or h2load
  bool noise = false;             // one of [noise]'s identical windows, not a matrix window
  bool start_process = true;      // a new target process must be started before this window
  bool stop_process = true;       // the target process must be stopped after this window
};

// How many windows a campaign's plan holds, known before it is built: targets x scenarios x
// load levels x rounds, plus [noise]'s windows, the whole once per named pair of a fleet
// campaign (pairs = "all" is counted per pair: the number of pairs is known once placed).
struct PlanSize {
  uint64_t targets = 0, scenarios = 0, levels = 0, rounds = 0, noise = 0, pairs = 1;
  // The product, saturating at UINT64_MAX.
  uint64_t Total() const;
  // "targets 10 × scenarios 20 × load levels 30 × rounds 200 (+ noise windows 5) = 1,200,005
  // windows"; with pairs, "(... + noise windows 5) × pairs 3 = ..."; no noise part without any.
  std::string Describe() const;
};
PlanSize SizeOfPlan(const Campaign& campaign);

// The largest plan the coordinator builds by default (`benchlab coordinator --max-windows`).
inline constexpr uint64_t kDefaultMaxWindows = 100000;
// InvalidArgument "<source>: the plan has <Describe()>, over the limit of <max> (--max-windows)"
// when the plan holds more than max_windows windows. Cheap: nothing is built. `pairs`, when not
// 0, is the number of pairs the plan runs on, for a campaign with pairs = "all" once placed.
Status CheckPlanSize(const Campaign& campaign, uint64_t max_windows, uint64_t pairs = 0);

// LoadLevelLabel of the window's level: "c64", "r5000", "r2500.5".
std::string LoadLevelLabel(const PlannedWindow& window);

// Windows of a campaign: rounds x scenarios x load levels x targets, plus [noise]'s windows.
// Load levels run connections first, then rates, each in file order. Within a round:
//   fresh_process = window: grouped by scenario, then load level; inside each group the targets
//     run in the round's order (targets compared on a cell run back to back).
//   fresh_process = cell or round: grouped by target in the round's order, then scenario, then
//     load level, so that consecutive windows can share a process.
// Noise windows are placed between blocks (a scenario-level group, or one target's windows of a
// round): noise window k of K goes before block floor(k * B / (K - 1)) of the B blocks, so the
// first runs before everything and the last after everything.
// start_process / stop_process: a process is kept from one window to the next only when neither
// is a noise window, fresh_process is not "window", both have the same target and round, and,
// for "cell", the same scenario.
std::vector<PlannedWindow> ExpandMatrix(const Campaign& campaign);

// The target order of one round (1-based), as ExpandMatrix uses it.
// fixed: the file's order every round. rotate: round r starts at target (r-1) mod T, so over T
// rounds every target holds every place once (a Latin square). shuffle: ShufflePermutation of the
// file's order for (seed, round), independent of every other round.
std::vector<std::string> TargetOrderForRound(const Campaign& campaign, int round);

// The portable generator behind order = "shuffle". SplitMix64 (Steele, Lea and Flood 2014):
// advances `state` and returns the next 64-bit output.
uint64_t SplitMix64(uint64_t& state);
// A permutation of 0..count-1 for (seed, round): Fisher-Yates driven by SplitMix64 seeded from
// both, with unbiased bounded draws (rejection), so no standard library distribution is involved.
std::vector<int> ShufflePermutation(uint64_t seed, int round, int count);

}  // namespace benchlab

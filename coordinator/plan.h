// Planning: expands a campaign into its windows, round by round, in the order they run, and marks
// where a target process starts and stops. Pure functions, no I/O; results are the same on every
// machine and standard library (docs/campaign.md, "The plan").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/campaign.h"

namespace benchlab {

struct PlannedWindow {
  int index = 0;     // 0-based order of execution over the whole campaign
  int round = 0;     // 1-based; 0 for a noise window
  int position = 0;  // 0-based position within its round; a noise window's ordinal 0..windows-1
  std::string target;
  std::string scenario;
  int connections = 0;        // closed loop: the level; open loop: the connections opened for it
  double rate = 0;            // requests/second of an open-loop level; 0: closed loop
  std::string tool = "benchlab";  // the load generator measuring it: benchlab, wrk or h2load
  bool noise = false;         // one of [noise]'s identical windows, not a matrix window
  bool start_process = true;  // a new target process must be started before this window
  bool stop_process = true;   // the target process must be stopped after this window
};

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

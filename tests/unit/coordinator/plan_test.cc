#include "coordinator/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace benchlab {
namespace {

Campaign MakeCampaign(std::vector<std::string> targets, std::vector<std::string> scenarios,
                      std::vector<int> connections, int rounds, Order order) {
  Campaign c;
  for (auto& name : targets) c.targets.emplace_back().name = name;
  for (auto& name : scenarios) c.scenarios.emplace_back().name = name;
  c.connections = std::move(connections);
  c.rounds = rounds;
  c.order = order;
  return c;
}

TEST(PlanTest, CountIsRoundsTimesScenariosTimesLevelsTimesTargets) {
  Campaign c = MakeCampaign({"a", "b", "c"}, {"hello", "json"}, {16, 64, 256}, 4, Order::kRotate);
  auto windows = ExpandMatrix(c);
  EXPECT_EQ(windows.size(), 4u * 2 * 3 * 3);
  // Every cell is measured once per round.
  std::set<std::tuple<int, std::string, std::string, int>> cells;
  for (const auto& w : windows) cells.insert({w.round, w.target, w.scenario, w.connections});
  EXPECT_EQ(cells.size(), windows.size());
}

TEST(PlanTest, IndicesAreSequentialAndPositionsRestartEachRound) {
  Campaign c = MakeCampaign({"a", "b"}, {"hello", "json"}, {16, 64}, 3, Order::kRotate);
  auto windows = ExpandMatrix(c);
  const int per_round = 2 * 2 * 2;
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_EQ(windows[i].index, static_cast<int>(i));
    EXPECT_EQ(windows[i].round, static_cast<int>(i) / per_round + 1);
    EXPECT_EQ(windows[i].position, static_cast<int>(i) % per_round);
  }
}

TEST(PlanTest, GroupsByScenarioThenLevelThenTarget) {
  Campaign c = MakeCampaign({"a", "b"}, {"hello", "json"}, {64, 16}, 1, Order::kFixed);
  auto windows = ExpandMatrix(c);
  std::vector<std::tuple<std::string, int, std::string>> got;
  for (const auto& w : windows) got.emplace_back(w.scenario, w.connections, w.target);
  std::vector<std::tuple<std::string, int, std::string>> want = {
      {"hello", 64, "a"}, {"hello", 64, "b"}, {"hello", 16, "a"}, {"hello", 16, "b"},
      {"json", 64, "a"},  {"json", 64, "b"},  {"json", 16, "a"},  {"json", 16, "b"}};
  EXPECT_EQ(got, want);
}

TEST(PlanTest, RotateShiftsTheStartEachRound) {
  Campaign c = MakeCampaign({"a", "b", "c"}, {"s"}, {1}, 4, Order::kRotate);
  using Names = std::vector<std::string>;
  EXPECT_EQ(TargetOrderForRound(c, 1), (Names{"a", "b", "c"}));
  EXPECT_EQ(TargetOrderForRound(c, 2), (Names{"b", "c", "a"}));
  EXPECT_EQ(TargetOrderForRound(c, 3), (Names{"c", "a", "b"}));
  EXPECT_EQ(TargetOrderForRound(c, 4), (Names{"a", "b", "c"}));
  auto windows = ExpandMatrix(c);
  ASSERT_EQ(windows.size(), 12u);
  EXPECT_EQ(windows[3].target, "b");  // round 2 starts with b
  EXPECT_EQ(windows[6].target, "c");  // round 3 starts with c
}

TEST(PlanTest, RotateIsALatinSquareOverTRounds) {
  for (int count = 1; count <= 5; ++count) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back("t" + std::to_string(i));
    Campaign c = MakeCampaign(names, {"x", "y"}, {8, 32}, count, Order::kRotate);
    // times[(target, place in its group)] over all groups and rounds.
    std::map<std::pair<std::string, int>, int> times;
    for (const auto& w : ExpandMatrix(c)) ++times[{w.target, w.position % count}];
    const int groups = 2 * 2;
    ASSERT_EQ(times.size(), static_cast<size_t>(count * count)) << count << " targets";
    for (const auto& [key, n] : times) {
      EXPECT_EQ(n, groups) << key.first << " at place " << key.second << " of " << count;
    }
  }
}

TEST(PlanTest, FixedKeepsTheFileOrder) {
  Campaign c = MakeCampaign({"c", "a", "b"}, {"s"}, {1, 2}, 3, Order::kFixed);
  for (int round = 1; round <= 3; ++round) {
    EXPECT_EQ(TargetOrderForRound(c, round), (std::vector<std::string>{"c", "a", "b"}));
  }
  auto windows = ExpandMatrix(c);
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_EQ(windows[i].target, c.targets[i % 3].name) << "window " << i;
  }
}

// The targets of the windows, in order.
std::vector<std::string> TargetsOf(const std::vector<PlannedWindow>& windows) {
  std::vector<std::string> targets;
  for (const auto& w : windows) targets.push_back(w.target);
  return targets;
}

// "s"/"n" (start, no start) then "t"/"k" (stop, keep) for each window, e.g. "st sk nt".
std::string ProcessMarks(const std::vector<PlannedWindow>& windows) {
  std::string marks;
  for (const auto& w : windows) {
    if (!marks.empty()) marks += ' ';
    marks += w.start_process ? 's' : 'n';
    marks += w.stop_process ? 't' : 'k';
  }
  return marks;
}

TEST(PlanTest, SplitMix64MatchesTheReferenceOutputs) {
  // The first outputs of the reference implementation (Vigna, splitmix64.c) from 1234567.
  uint64_t state = 1234567;
  EXPECT_EQ(SplitMix64(state), 6457827717110365317ULL);
  EXPECT_EQ(SplitMix64(state), 3203168211198807973ULL);
  EXPECT_EQ(SplitMix64(state), 9817491932198370423ULL);
  EXPECT_EQ(SplitMix64(state), 4593380528125082431ULL);
  EXPECT_EQ(SplitMix64(state), 16408922859458223821ULL);
}

TEST(PlanTest, ShuffleGoldenSequence) {
  // Computed independently (a Python transcription of docs/campaign.md's algorithm). If this
  // changes, every shuffled campaign ever planned changes order: do not update it lightly.
  using Perm = std::vector<int>;
  EXPECT_EQ(ShufflePermutation(1, 1, 5), (Perm{2, 4, 0, 3, 1}));
  EXPECT_EQ(ShufflePermutation(1, 2, 5), (Perm{4, 0, 1, 3, 2}));
  EXPECT_EQ(ShufflePermutation(1, 3, 5), (Perm{1, 2, 3, 4, 0}));
  EXPECT_EQ(ShufflePermutation(1, 4, 5), (Perm{4, 3, 1, 2, 0}));
  EXPECT_EQ(ShufflePermutation(2, 1, 5), (Perm{3, 1, 2, 4, 0}));
  EXPECT_EQ(ShufflePermutation(42, 1, 5), (Perm{0, 1, 4, 2, 3}));
  EXPECT_EQ(ShufflePermutation(1, 1, 8), (Perm{7, 1, 4, 5, 3, 0, 2, 6}));
  EXPECT_EQ(ShufflePermutation(1, 3, 8), (Perm{5, 4, 2, 6, 0, 7, 1, 3}));

  Campaign c = MakeCampaign({"a", "b", "c", "d"}, {"s"}, {1}, 4, Order::kShuffle);
  c.seed = 1;
  using Names = std::vector<std::string>;
  EXPECT_EQ(TargetOrderForRound(c, 1), (Names{"b", "a", "d", "c"}));
  EXPECT_EQ(TargetOrderForRound(c, 2), (Names{"a", "b", "c", "d"}));
  EXPECT_EQ(TargetOrderForRound(c, 3), (Names{"a", "c", "b", "d"}));
  EXPECT_EQ(TargetOrderForRound(c, 4), (Names{"b", "a", "c", "d"}));
  EXPECT_EQ(TargetsOf(ExpandMatrix(c)), (Names{"b", "a", "d", "c", "a", "b", "c", "d", "a", "c",
                                               "b", "d", "b", "a", "c", "d"}));
}

TEST(PlanTest, ShuffleDependsOnlyOnSeedAndRound) {
  Campaign c = MakeCampaign({"a", "b", "c", "d", "e"}, {"x", "y"}, {8, 32}, 6, Order::kShuffle);
  c.seed = 7;
  std::vector<PlannedWindow> six = ExpandMatrix(c);
  c.rounds = 3;
  std::vector<PlannedWindow> three = ExpandMatrix(c);
  // A round's order does not depend on how many rounds follow it.
  ASSERT_EQ(three.size() * 2, six.size());
  EXPECT_TRUE(std::equal(three.begin(), three.end(), six.begin(),
                         [](const auto& a, const auto& b) { return a.target == b.target; }));
  // Every group of a round runs the round's order, a permutation of the targets.
  for (const auto& w : six) {
    std::vector<std::string> order = TargetOrderForRound(c, w.round);
    EXPECT_EQ(w.target, order[w.position % 5]) << "window " << w.index;
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  }
  // Rounds differ from one another, and another seed gives another plan.
  std::set<std::vector<std::string>> orders;
  for (int round = 1; round <= 6; ++round) orders.insert(TargetOrderForRound(c, round));
  EXPECT_GE(orders.size(), 4u);
  Campaign other = c;
  other.seed = 8;
  EXPECT_NE(TargetsOf(ExpandMatrix(other)), TargetsOf(three));
}

TEST(PlanTest, ShuffleDrawsEveryPermutationAboutEquallyOften) {
  // Deterministic: a biased or off-by-one Fisher-Yates misses permutations or skews them far
  // beyond these bounds (the expected count is 1000, its standard deviation about 31).
  std::map<std::vector<int>, int> seen;
  for (int round = 1; round <= 24000; ++round) ++seen[ShufflePermutation(3, round, 4)];
  EXPECT_EQ(seen.size(), 24u);
  for (const auto& [permutation, n] : seen) {
    EXPECT_GT(n, 850);
    EXPECT_LT(n, 1150);
  }
}

TEST(PlanTest, RotateGivesEveryTargetEveryPlaceInEachGroup) {
  for (int count = 2; count <= 8; ++count) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back("t" + std::to_string(i));
    for (int multiple = 1; multiple <= 3; ++multiple) {
      for (FreshProcess mode : {FreshProcess::kWindow, FreshProcess::kCell, FreshProcess::kRound}) {
        Campaign c = MakeCampaign(names, {"x", "y"}, {8, 32}, count * multiple, Order::kRotate);
        c.rates = {1000};
        c.fresh_process = mode;
        // The place of each window among its (round, scenario, level) group, in running order.
        using Group = std::pair<std::string, std::string>;  // scenario, level
        std::map<std::tuple<int, std::string, std::string>, int> next_place;
        std::map<Group, std::map<std::pair<std::string, int>, int>> times;
        for (const auto& w : ExpandMatrix(c)) {
          int place = next_place[{w.round, w.scenario, LoadLevelLabel(w)}]++;
          ++times[{w.scenario, LoadLevelLabel(w)}][{w.target, place}];
        }
        const std::string what = std::to_string(count) + " targets, " + std::to_string(c.rounds) +
                                 " rounds, mode " + std::to_string(static_cast<int>(mode));
        ASSERT_EQ(times.size(), 2u * 3) << what;
        for (const auto& [group, counts] : times) {
          ASSERT_EQ(counts.size(), static_cast<size_t>(count * count)) << what;
          for (const auto& [key, n] : counts) {
            EXPECT_EQ(n, multiple) << what << ": " << key.first << " at place " << key.second
                                   << " of " << group.first << " " << group.second;
          }
        }
      }
    }
  }
}

TEST(PlanTest, LoadLevelsRunConnectionsThenRates) {
  Campaign c = MakeCampaign({"a", "b"}, {"s"}, {64, 16}, 1, Order::kFixed);
  c.rates = {5000, 2500.5};
  c.open_connections = 32;
  auto windows = ExpandMatrix(c);
  std::vector<std::tuple<int, double, std::string, std::string>> got;
  for (const auto& w : windows)
    got.emplace_back(w.connections, w.rate, LoadLevelLabel(w), w.target);
  std::vector<std::tuple<int, double, std::string, std::string>> want = {
      {64, 0, "c64", "a"},          {64, 0, "c64", "b"},         {16, 0, "c16", "a"},
      {16, 0, "c16", "b"},          {32, 5000, "r5000", "a"},    {32, 5000, "r5000", "b"},
      {32, 2500.5, "r2500.5", "a"}, {32, 2500.5, "r2500.5", "b"}};
  EXPECT_EQ(got, want);
  // Rates alone are a matrix too.
  c.connections.clear();
  EXPECT_EQ(ExpandMatrix(c).size(), 4u);
}

TEST(PlanTest, EveryToolMeasuresEveryClosedLoopLevel) {
  Campaign c = MakeCampaign({"a", "b"}, {"s"}, {64}, 1, Order::kFixed);
  c.load_tools = {"benchlab", "wrk"};
  c.rates = {5000};
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& w : ExpandMatrix(c)) got.emplace_back(LoadLevelLabel(w), w.target);
  std::vector<std::pair<std::string, std::string>> want = {
      {"c64", "a"},     {"c64", "b"},   {"c64@wrk", "a"},
      {"c64@wrk", "b"}, {"r5000", "a"}, {"r5000", "b"}};  // open loop: benchlab's only
  EXPECT_EQ(got, want);
  for (const auto& w : ExpandMatrix(c)) {
    EXPECT_EQ(w.tool, LoadLevelLabel(w).find("@wrk") != std::string::npos ? "wrk" : "benchlab");
  }
}

TEST(PlanTest, LoadLevelLabels) {
  EXPECT_EQ(LoadLevelLabel(LoadLevel{64, 0, "wrk"}), "c64@wrk");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{64, 0, "benchlab"}), "c64");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{64, 0}), "c64");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{1, 0}), "c1");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{16, 5000}), "r5000");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{16, 2500.5}), "r2500.5");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{16, 0.1}), "r0.1");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{16, 1e7}), "r10000000");
  EXPECT_EQ(LoadLevelLabel(LoadLevel{16, 123456.789}), "r123456.789");
  PlannedWindow w;
  w.connections = 16;
  w.rate = 750;
  EXPECT_EQ(LoadLevelLabel(w), "r750");
  w.rate = 0;
  EXPECT_EQ(LoadLevelLabel(w), "c16");
}

// One window as "target/scenario/round" or "N<ordinal>" for a noise window.
std::vector<std::string> Sequence(const std::vector<PlannedWindow>& windows) {
  std::vector<std::string> out;
  for (const auto& w : windows) {
    out.push_back(w.noise ? "N" + std::to_string(w.position)
                          : w.target + "/" + w.scenario + "/" + std::to_string(w.round));
  }
  return out;
}

TEST(PlanTest, NoiseWindowsSpanTheCampaignBetweenGroups) {
  Campaign c = MakeCampaign({"a", "b"}, {"s"}, {8, 32}, 2, Order::kRotate);
  c.noise = NoiseSpec{"b", "s", LoadLevel{32, 0}, 3, 0};
  auto windows = ExpandMatrix(c);
  // 4 groups of 2 windows; the 3 noise windows go before groups 0, 2 and 4 (the end).
  using Names = std::vector<std::string>;
  EXPECT_EQ(Sequence(windows), (Names{"N0", "a/s/1", "b/s/1", "a/s/1", "b/s/1", "N1", "b/s/2",
                                      "a/s/2", "b/s/2", "a/s/2", "N2"}));
  int ordinal = 0;
  int matrix_position = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    const PlannedWindow& w = windows[i];
    EXPECT_EQ(w.index, static_cast<int>(i));
    if (w.noise) {
      EXPECT_EQ(w.round, 0);
      EXPECT_EQ(w.position, ordinal++);
      EXPECT_EQ(w.target, "b");
      EXPECT_EQ(w.connections, 32);
      EXPECT_EQ(w.rate, 0);
    } else {
      // Matrix positions are unaffected by the noise windows between them.
      EXPECT_EQ(w.position, matrix_position++ % 4) << "window " << i;
    }
  }
  EXPECT_EQ(ordinal, 3);

  // More noise windows than gaps: several share a gap, still first and last at the ends.
  c.noise->windows = 10;
  EXPECT_EQ(Sequence(ExpandMatrix(c)),
            (Names{"N0", "N1", "N2", "a/s/1", "b/s/1", "N3", "N4", "a/s/1", "b/s/1", "N5", "N6",
                   "b/s/2", "a/s/2", "N7", "N8", "b/s/2", "a/s/2", "N9"}));
}

TEST(PlanTest, NoiseWindowsMayUseAnOpenLoopLevel) {
  Campaign c = MakeCampaign({"a"}, {"s"}, {}, 1, Order::kRotate);
  c.rates = {1000, 2000};
  c.noise = NoiseSpec{"a", "s", LoadLevel{16, 2000}, 2, 0};
  auto windows = ExpandMatrix(c);
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_TRUE(windows.front().noise);
  EXPECT_TRUE(windows.back().noise);
  EXPECT_EQ(LoadLevelLabel(windows.front()), "r2000");
  EXPECT_EQ(LoadLevelLabel(windows[1]), "r1000");
}

TEST(PlanTest, FreshProcessWindowStartsAndStopsEveryWindow) {
  Campaign c = MakeCampaign({"a", "b"}, {"x", "y"}, {8, 32}, 2, Order::kRotate);
  auto windows = ExpandMatrix(c);
  ASSERT_EQ(windows.size(), 16u);
  for (const auto& w : windows) {
    EXPECT_TRUE(w.start_process) << w.index;
    EXPECT_TRUE(w.stop_process) << w.index;
  }
}

TEST(PlanTest, FreshProcessRoundKeepsATargetForItsWindowsOfARound) {
  Campaign c = MakeCampaign({"a", "b"}, {"x", "y"}, {8, 32}, 2, Order::kRotate);
  c.fresh_process = FreshProcess::kRound;
  auto windows = ExpandMatrix(c);
  // Target-major: each target's 4 windows of a round run together, in the round's order.
  std::vector<std::tuple<int, std::string, std::string, int>> got;
  for (const auto& w : windows) got.emplace_back(w.round, w.target, w.scenario, w.connections);
  std::vector<std::tuple<int, std::string, std::string, int>> want = {
      {1, "a", "x", 8}, {1, "a", "x", 32}, {1, "a", "y", 8}, {1, "a", "y", 32},
      {1, "b", "x", 8}, {1, "b", "x", 32}, {1, "b", "y", 8}, {1, "b", "y", 32},
      {2, "b", "x", 8}, {2, "b", "x", 32}, {2, "b", "y", 8}, {2, "b", "y", 32},
      {2, "a", "x", 8}, {2, "a", "x", 32}, {2, "a", "y", 8}, {2, "a", "y", 32}};
  EXPECT_EQ(got, want);
  // b ends round 1 and starts round 2, yet gets a new process: rounds stay independent.
  EXPECT_EQ(ProcessMarks(windows), "sk nk nk nt sk nk nk nt sk nk nk nt sk nk nk nt");
  for (size_t i = 0; i < windows.size(); ++i)
    EXPECT_EQ(windows[i].position, static_cast<int>(i % 8));
}

TEST(PlanTest, FreshProcessCellKeepsATargetForOneScenario) {
  Campaign c = MakeCampaign({"a", "b"}, {"x", "y"}, {8, 32}, 1, Order::kFixed);
  c.fresh_process = FreshProcess::kCell;
  EXPECT_EQ(ProcessMarks(ExpandMatrix(c)), "sk nt sk nt sk nt sk nt");
  // One target and one scenario: consecutive across the round boundary, still restarted there.
  Campaign single = MakeCampaign({"a"}, {"x"}, {8, 32, 128}, 2, Order::kRotate);
  single.fresh_process = FreshProcess::kCell;
  EXPECT_EQ(ProcessMarks(ExpandMatrix(single)), "sk nk nt sk nk nt");
  single.fresh_process = FreshProcess::kRound;
  EXPECT_EQ(ProcessMarks(ExpandMatrix(single)), "sk nk nt sk nk nt");
  single.fresh_process = FreshProcess::kWindow;
  EXPECT_EQ(ProcessMarks(ExpandMatrix(single)), "st st st st st st");
}

TEST(PlanTest, NoiseWindowsAlwaysRunTheirOwnProcess) {
  Campaign c = MakeCampaign({"a", "b"}, {"x"}, {8, 32}, 2, Order::kFixed);
  c.fresh_process = FreshProcess::kRound;
  // The noise cell's target is the one right before and after it; it still gets its own process.
  c.noise = NoiseSpec{"a", "x", LoadLevel{8, 0}, 3, 0};
  auto windows = ExpandMatrix(c);
  // Blocks: a/1, b/1, a/2, b/2; noise before blocks 0, 2 and 4.
  using Names = std::vector<std::string>;
  EXPECT_EQ(Sequence(windows), (Names{"N0", "a/x/1", "a/x/1", "b/x/1", "b/x/1", "N1", "a/x/2",
                                      "a/x/2", "b/x/2", "b/x/2", "N2"}));
  EXPECT_EQ(ProcessMarks(windows), "st sk nt sk nt st sk nt sk nt st");
}

TEST(PlanTest, AProcessStopsExactlyWhereTheNextStarts) {
  for (Order order : {Order::kRotate, Order::kFixed, Order::kShuffle}) {
    for (FreshProcess mode : {FreshProcess::kWindow, FreshProcess::kCell, FreshProcess::kRound}) {
      Campaign c = MakeCampaign({"a", "b", "c"}, {"x", "y"}, {8}, 4, order);
      c.rates = {100};
      c.fresh_process = mode;
      c.noise = NoiseSpec{"c", "y", LoadLevel{16, 100}, 4, 0};
      auto windows = ExpandMatrix(c);
      ASSERT_EQ(windows.size(), 3u * 2 * 2 * 4 + 4);
      EXPECT_TRUE(windows.front().start_process);
      EXPECT_TRUE(windows.back().stop_process);
      for (size_t i = 0; i + 1 < windows.size(); ++i) {
        const PlannedWindow& a = windows[i];
        const PlannedWindow& b = windows[i + 1];
        EXPECT_EQ(a.stop_process, b.start_process) << "window " << i;
        // A kept process never changes target or round.
        if (!a.stop_process) {
          EXPECT_EQ(a.target, b.target);
          EXPECT_EQ(a.round, b.round);
          EXPECT_FALSE(a.noise || b.noise);
        }
      }
    }
  }
}

TEST(PlanTest, EmptyCampaignHasNoWindows) {
  Campaign c = MakeCampaign({}, {"s"}, {1}, 3, Order::kRotate);
  EXPECT_TRUE(ExpandMatrix(c).empty());
  EXPECT_TRUE(TargetOrderForRound(c, 1).empty());
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

TEST(PlanSizeTest, CountsWhatExpandMatrixBuilds) {
  Campaign c = MakeCampaign({"a", "b", "c"}, {"hello", "json"}, {16, 64}, 3, Order::kRotate);
  c.rates = {1000, 2000};
  c.load_tools = {"benchlab", "wrk"};
  c.noise = NoiseSpec{"a", "hello", LoadLevel{16, 0, "benchlab"}, 4, 0};
  for (FreshProcess mode : {FreshProcess::kWindow, FreshProcess::kRound}) {
    c.fresh_process = mode;
    EXPECT_EQ(SizeOfPlan(c).Total(), ExpandMatrix(c).size());
  }
  EXPECT_EQ(SizeOfPlan(c).Total(), 3u * 2 * (2 * 2 + 2) * 3 + 4);
  c.placement_pairs = {{"s1", "l1"}, {"s2", "l2"}};
  EXPECT_EQ(SizeOfPlan(c).Total(), 2 * ExpandMatrix(c).size()) << "the matrix once per pair";
}

TEST(PlanSizeTest, AnOversizedPlanIsRefusedWithItsProductSpelledOut) {
  std::vector<std::string> targets, scenarios;
  std::vector<int> levels;
  for (int i = 0; i < 10; ++i) targets.push_back("t" + std::to_string(i));
  for (int i = 0; i < 20; ++i) scenarios.push_back("s" + std::to_string(i));
  for (int i = 1; i <= 30; ++i) levels.push_back(i);
  Campaign c = MakeCampaign(targets, scenarios, levels, 200, Order::kRotate);
  c.noise = NoiseSpec{"t0", "s0", LoadLevel{1, 0, "benchlab"}, 5, 0};
  c.source_name = "campaign.toml";
  Status st = CheckPlanSize(c, kDefaultMaxWindows);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "campaign.toml: the plan has targets 10 × scenarios 20 × load levels 30 × rounds 200 "
            "(+ noise windows 5) = 1,200,005 windows, over the limit of 100,000 (--max-windows)");
  EXPECT_TRUE(CheckPlanSize(c, 1'200'005).ok());
  c.placement_pairs = {{"s1", "l1"}, {"s2", "l2"}};
  EXPECT_EQ(SizeOfPlan(c).Describe(),
            "(targets 10 × scenarios 20 × load levels 30 × rounds 200 + noise windows 5) × pairs "
            "2 = 2,400,010 windows");
}

TEST(PlanSizeTest, AProductBeyond64BitsSaturates) {
  PlanSize size{1ull << 40, 1ull << 30, 1, 1, 0, 1};
  EXPECT_EQ(size.Total(), UINT64_MAX);
}

}  // namespace
}  // namespace benchlab

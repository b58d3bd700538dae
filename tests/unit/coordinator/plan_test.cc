#include "coordinator/plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

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

TEST(PlanTest, EmptyCampaignHasNoWindows) {
  Campaign c = MakeCampaign({}, {"s"}, {1}, 3, Order::kRotate);
  EXPECT_TRUE(ExpandMatrix(c).empty());
  EXPECT_TRUE(TargetOrderForRound(c, 1).empty());
}

}  // namespace
}  // namespace benchlab

// Which windows of an adaptive campaign run next (coordinator/server/adaptive_plan.h): a round at
// a time while a cell is undecided, nothing new once it is decided, at max rounds or out of
// budget; re-runs and a round cut off by a restart are finished either way.
#include "coordinator/server/adaptive_plan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace benchlab {
namespace {

constexpr char kAdaptive[] = R"(name = "adaptive"
baseline = "a"
[matrix]
connections = [8]
rounds = { min = 3, max = 5 }
[noise]
target = "a"
scenario = "s"
windows = 3
[[target]]
name = "a"
[[target]]
name = "b"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

class AdaptivePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = ParseCampaignText(kAdaptive, "adaptive.toml", ".");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    campaign_ = *c;
    plan_ = ExpandMatrix(campaign_);
    // 2 targets x 5 rounds + 3 noise windows.
    ASSERT_EQ(plan_.size(), 13u);
    state_.assign(plan_.size(), PlannedState{true, std::nullopt});
  }

  // Stores a valid result for every window of rounds `from`..`to`: b's req/s and CPU per
  // request are `ratio` times a's, with a small alternating wobble so intervals have a spread.
  void Store(int from, int to, double ratio) {
    for (size_t i = 0; i < plan_.size(); ++i) {
      const PlannedWindow& w = plan_[i];
      if (w.noise || w.round < from || w.round > to) continue;
      Measurement m;
      m.target = w.target;
      m.scenario = w.scenario;
      m.load_level = LoadLevelLabel(w);
      m.round = w.round;
      m.position = w.position;
      m.valid = true;
      const double wobble = w.round % 2 ? 1.01 : 0.99;
      const double f = w.target == "b" ? ratio * wobble : 1.0;
      m.rps = 10000 * f;
      m.requests = m.rps;
      m.cpu_us_per_request = 10 * f;
      m.server_cpu_s = m.requests * m.cpu_us_per_request / 1e6;
      state_[i] = {false, m};
    }
  }

  // The rounds of the matrix windows selected (noise windows as round 0), in plan order.
  std::vector<int> Rounds(bool budget_spent = false) {
    std::vector<int> out;
    for (size_t i : SelectAdaptive(campaign_, plan_, state_, budget_spent)) {
      out.push_back(plan_[i].round);
    }
    return out;
  }

  size_t IndexOf(const std::string& target, int round) {
    for (size_t i = 0; i < plan_.size(); ++i) {
      if (!plan_[i].noise && plan_[i].target == target && plan_[i].round == round) return i;
    }
    ADD_FAILURE() << target << " round " << round;
    return 0;
  }

  Campaign campaign_;
  std::vector<PlannedWindow> plan_;
  std::vector<PlannedState> state_;
};

TEST_F(AdaptivePlanTest, StartsWithTheFirstRoundAndTheNoiseWindowsBeforeIt) {
  // Noise window 0 runs before everything; the others wait for their place in the plan.
  EXPECT_EQ(Rounds(), (std::vector<int>{0, 1, 1}));
}

TEST_F(AdaptivePlanTest, AnUndecidedCellTakesOneMoreRound) {
  Store(1, 3, 1.0);  // a against itself: never decided (the margin is 2%, the spread ~2%)
  state_[0].pending = false;
  const std::vector<int> next = Rounds();
  EXPECT_EQ(std::count(next.begin(), next.end(), 4), 2);
  EXPECT_EQ(std::count(next.begin(), next.end(), 5), 0);
}

TEST_F(AdaptivePlanTest, ADecidedCellAddsNoRoundAndTheNoiseWindowsFinish) {
  Store(1, 3, 2.0);  // b twice as fast and twice as costly: decided after min rounds
  state_[0].pending = false;
  EXPECT_EQ(Rounds(), (std::vector<int>{0, 0}));  // only the two noise windows left
  // Before min rounds nothing is decided, however clear.
  AdaptivePlanTest::SetUp();
  Store(1, 2, 2.0);
  const std::vector<int> next = Rounds();
  EXPECT_EQ(std::count(next.begin(), next.end(), 3), 2);
}

TEST_F(AdaptivePlanTest, MaxRoundsAndTheBudgetStopAnUndecidedCell) {
  Store(1, 5, 1.0);
  EXPECT_EQ(Rounds(), (std::vector<int>{0, 0, 0}));  // only the noise windows left

  AdaptivePlanTest::SetUp();
  Store(1, 2, 1.0);
  state_[0].pending = false;
  EXPECT_EQ(Rounds(/*budget_spent=*/true), (std::vector<int>{0, 0}));
  EXPECT_EQ(Rounds(/*budget_spent=*/false), (std::vector<int>{0, 3, 3}));
}

// The scheduler asks with the coordinator's clock (the registry's), so the boundary is exact.
TEST_F(AdaptivePlanTest, TheBudgetIsSpentOnceMaxDurationHasPassedSinceTheFirstWindow) {
  const double first_s = 1.8e9;
  const auto first = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  EXPECT_FALSE(BudgetSpent(campaign_, first_s, first + std::chrono::hours(24)))
      << "without max_duration there is no budget";
  Campaign limited = campaign_;
  limited.stats.max_duration = std::chrono::hours(1);
  EXPECT_FALSE(BudgetSpent(limited, first_s, first + std::chrono::hours(1)));
  EXPECT_TRUE(
      BudgetSpent(limited, first_s, first + std::chrono::hours(1) + std::chrono::milliseconds(1)));
  EXPECT_FALSE(BudgetSpent(limited, std::nan(""), first + std::chrono::hours(24)))
      << "no window has started";
}

TEST_F(AdaptivePlanTest, ReRunsAndARoundCutOffAreFinishedEvenWhenDecided) {
  Store(1, 3, 2.0);
  // A re-run asked for round 2's b window: pending again (its old attempt still stored).
  state_[IndexOf("b", 2)].pending = true;
  // A restart cut round 4 off after a's window: b's is still pending.
  Store(4, 4, 2.0);
  state_[IndexOf("b", 4)] = {true, std::nullopt};
  std::vector<int> matrix;
  for (int r : Rounds()) {
    if (r > 0) matrix.push_back(r);
  }
  // Round 2's re-run comes first; round 3 is then complete again only after it, so the cell
  // counts 1 complete round and is not decided: it also takes round 4's missing window.
  EXPECT_EQ(matrix, (std::vector<int>{2, 4}));
  EXPECT_EQ(std::count(matrix.begin(), matrix.end(), 5), 0);
}

TEST_F(AdaptivePlanTest, AFixedPlanRunsEveryPendingWindow) {
  auto c = ParseCampaignText(
      std::string(kAdaptive).replace(std::string(kAdaptive).find("rounds = { min = 3, max = 5 }"),
                                     29, "rounds = 5"),
      "fixed.toml", ".");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  campaign_ = *c;
  EXPECT_EQ(Rounds().size(), 13u);
}

}  // namespace
}  // namespace benchlab

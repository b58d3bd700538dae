// Rounds until decided: when a cell of an adaptive plan has decided, and what the report says
// about the rounds each cell took (docs/methodology.md, "Rounds until decided").
#include "analysis/rounds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace benchlab {
namespace {

Measurement Window(const std::string& target, int round, double rps, double cpu_us) {
  Measurement m;
  m.target = target;
  m.scenario = "plaintext";
  m.load_level = "c64";
  m.round = round;
  m.position = target == "nginx" ? 0 : 1;
  m.valid = true;
  m.rps = rps;
  m.requests = rps * 10;
  m.cpu_us_per_request = cpu_us;
  m.server_cpu_s = m.requests * cpu_us / 1e6;
  return m;
}

// hello against nginx over `rounds` rounds, hello's req/s ratio rps_ratio[r] and CPU per
// request ratio cpu_ratio[r] in round r + 1.
std::vector<Measurement> Cell(const std::vector<double>& rps_ratio,
                              const std::vector<double>& cpu_ratio) {
  std::vector<Measurement> out;
  for (size_t i = 0; i < rps_ratio.size(); ++i) {
    const int round = static_cast<int>(i) + 1;
    out.push_back(Window("nginx", round, 100000, 10));
    out.push_back(Window("hello", round, 100000 * rps_ratio[i], 10 * cpu_ratio[i]));
  }
  return out;
}

Campaign Adaptive(int min, int max) {
  Campaign c;
  c.baseline = "nginx";
  c.targets.resize(2);
  c.targets[0].name = "nginx";
  c.targets[1].name = "hello";
  c.adaptive = true;
  c.min_rounds = min;
  c.rounds = max;
  return c;
}

const std::vector<std::string> kTargets = {"nginx", "hello"};

TEST(RoundsCellDecided, EveryDecidingFigureMustBeDecided) {
  const Campaign c = Adaptive(3, 20);
  const StatsOptions o = StatsOptionsOf(c);
  // req/s 1.50 1.52 1.48 and CPU per request 0.50 0.51 0.49: both far beyond the margin even
  // at the adaptive plan's stricter level (a half width of about 0.1 on the log scale).
  const auto clear = Cell({1.50, 1.52, 1.48}, {0.50, 0.51, 0.49});
  EXPECT_TRUE(CellDecided(clear, "nginx", kTargets, DecidingMetrics(c), o, 3));
  // Only two rounds looked at: t(·, 1) is far too wide to decide anything.
  EXPECT_FALSE(CellDecided(clear, "nginx", kTargets, DecidingMetrics(c), o, 2));
  // req/s clear but CPU per request all over the place: not decided while CPU decides, decided
  // once the campaign decides on req/s alone.
  const auto mixed = Cell({1.50, 1.52, 1.48}, {0.7, 1.4, 1.0});
  EXPECT_FALSE(CellDecided(mixed, "nginx", kTargets, DecidingMetrics(c), o, 3));
  EXPECT_TRUE(CellDecided(mixed, "nginx", kTargets, {Metric::kRps}, o, 3));
}

TEST(RoundsCellDecided, InvalidWindowsAndLaterRoundsDoNotCount) {
  const Campaign c = Adaptive(3, 20);
  auto cell = Cell({1.50, 1.52, 1.48, 0.5}, {0.50, 0.51, 0.49, 2.0});
  EXPECT_TRUE(CellDecided(cell, "nginx", kTargets, DecidingMetrics(c), StatsOptionsOf(c), 3));
  // Round 2's hello window was invalid: two ratios left, not enough.
  cell[3].valid = false;
  EXPECT_FALSE(CellDecided(cell, "nginx", kTargets, DecidingMetrics(c), StatsOptionsOf(c), 3));
  // Its newer attempt counts again.
  Measurement again = cell[3];
  again.valid = true;
  again.attempt = 2;
  cell.push_back(again);
  EXPECT_TRUE(CellDecided(cell, "nginx", kTargets, DecidingMetrics(c), StatsOptionsOf(c), 3));
}

TEST(RoundsCellDecided, ABaselineAloneHasNothingToDecide) {
  const Campaign c = Adaptive(3, 20);
  EXPECT_TRUE(CellDecided({}, "nginx", {"nginx"}, DecidingMetrics(c), StatsOptionsOf(c), 3));
}

TEST(RoundsCellRoundsOf, SaysHowManyRoundsAndWhyItStopped) {
  Campaign c = Adaptive(3, 5);
  const auto clear = Cell({1.50, 1.52, 1.48}, {0.50, 0.51, 0.49});
  const auto hopeless = Cell({1.0, 1.2, 0.85, 1.1, 0.9}, {1.0, 0.8, 1.2, 0.9, 1.1});
  const auto cut = Cell({1.0, 1.2, 0.85}, {1.0, 0.8, 1.2});

  EXPECT_EQ(CellRoundsOf(clear, c, true).rounds, 3);
  EXPECT_EQ(CellRoundsOf(clear, c, true).stop, CellStop::kDecided);
  EXPECT_EQ(CellRoundsOf(hopeless, c, true).rounds, 5);
  EXPECT_EQ(CellRoundsOf(hopeless, c, true).stop, CellStop::kMaxRounds);
  EXPECT_EQ(CellRoundsOf(cut, c, false).stop, CellStop::kRunning);
  EXPECT_EQ(CellRoundsOf(cut, c, true).stop, CellStop::kStopped);
  c.stats.max_duration = std::chrono::hours(1);
  EXPECT_EQ(CellRoundsOf(cut, c, true).stop, CellStop::kBudget);
  EXPECT_STREQ(CellStopName(CellStop::kMaxRounds), "max rounds");

  Campaign fixed = c;
  fixed.adaptive = false;
  EXPECT_EQ(CellRoundsOf(hopeless, fixed, true).stop, CellStop::kFixedPlan);
  EXPECT_EQ(CellRoundsOf(hopeless, fixed, true).rounds, 5);
}

TEST(RoundsStatsOptionsOf, FollowsTheCampaign) {
  Campaign c = Adaptive(4, 9);
  c.stats.confidence = 0.9;
  c.stats.margin = 0.05;
  const StatsOptions o = StatsOptionsOf(c);
  EXPECT_DOUBLE_EQ(o.rule.confidence, 0.9);
  EXPECT_DOUBLE_EQ(o.rule.margin, 0.05);
  EXPECT_TRUE(o.plan.adaptive);
  EXPECT_EQ(o.plan.min_rounds, 4);
  EXPECT_EQ(o.plan.max_rounds, 9);
  c.adaptive = false;
  EXPECT_FALSE(StatsOptionsOf(c).plan.adaptive);
  c.stats.decide_on = {"p99_us", "rps"};
  EXPECT_EQ(DecidingMetrics(c), (std::vector<Metric>{Metric::kP99Us, Metric::kRps}));
}

}  // namespace
}  // namespace benchlab

// The intervals and verdicts of analysis/interval.h on simulated campaigns with a known true
// ratio (bench/stats_sim/sim.h; the full tables: bench/stats_sim/main.cc, bench/README.md).
// Fixed seeds: every run draws the same campaigns.
//
// Figures (docs/methodology.md): the 95% interval covers the true ratio in at least 94% of
// campaigns; at a true ratio of 1.00 at most 5% are "ahead" or "behind"; at 1.05 with margin
// 0.02 at most 5% are "close". With 2,000 campaigns a case, a share's binomial standard error
// near 0.95 is sqrt(0.95 * 0.05 / 2000) = 0.0049: coverage is asserted at >= 0.935, about one
// standard error below 0.94, and the 5% error rates are asserted as they are (the measured rates
// sit far enough below them).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "bench/stats_sim/sim.h"

namespace benchlab::stats_sim {
namespace {

constexpr int kCampaigns = 2000;
constexpr double kCoverageFloor = 0.935;

// A host ten times quieter than this one (window log SD 0.01, not measured here): intervals narrow
// enough that "close" comes out at 1.00 and the adaptive plan stops early, so the checks also
// see the looks where a campaign stops.
constexpr Figure kQuietReqPerSecond{"quiet req/s", 0.01, Better::kHigher};

std::vector<LookRule> CommittedRules() {
  return {CommittedRule(LookPlan::Fixed(3, 0.95)), CommittedRule(LookPlan::Fixed(5, 0.95)),
          CommittedRule(LookPlan::Fixed(10, 0.95)), CommittedRule(LookPlan::Adaptive(3, 20, 0.95))};
}

double Wrong(const Tally& t) {
  return t.Share(ComparisonVerdict::kBetter) + t.Share(ComparisonVerdict::kWorse);
}

TEST(StatsSimRng, SameSeedSameDraws) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 10; ++i) {
    const double x = a.Normal();
    EXPECT_EQ(x, b.Normal());
    EXPECT_NE(x, c.Normal());
  }
}

TEST(StatsSimRng, NormalHasMeanZeroAndSdOne) {
  // 100,000 draws: the mean's standard error is 0.0032, the variance's about 0.0045.
  Rng rng(1);
  double sum = 0, sum_sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.Normal();
    sum += x;
    sum_sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0, 0.015);
  EXPECT_NEAR(sum_sq / n, 1, 0.02);
}

TEST(StatsSimRng, StudentT3HasHeavierTailsThanNormal) {
  // P(|Z| > 3) = 0.0027 for a normal; P(|T3| > 3) = 0.0577.
  Rng rng(2);
  int beyond = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) beyond += std::fabs(rng.StudentT3()) > 3;
  EXPECT_NEAR(double(beyond) / n, 0.0577, 0.005);
}

TEST(StatsSimDraw, WithoutNoiseTheRatioIsTheTrueRatio) {
  const Figure quiet{"quiet", 0.0, Better::kHigher};
  Rng rng(3);
  for (double r : DrawRatios(quiet, Noise::kLognormal, 1.05, 4, rng)) EXPECT_DOUBLE_EQ(r, 1.05);
}

TEST(StatsSimDraw, DriftAlternatesWithTheRotation) {
  // The baseline goes first in odd rounds: the target, measured kDriftGapRounds later, reads
  // exp(+kDriftPerRound * gap) high; in even rounds the baseline does.
  const Figure quiet{"quiet", 0.0, Better::kHigher};
  Rng rng(4);
  const std::vector<double> ratios = DrawRatios(quiet, Noise::kDrift, 1.0, 4, rng);
  const double step = std::exp(kDriftPerRound * kDriftGapRounds);
  EXPECT_NEAR(ratios[0], step, 1e-12);
  EXPECT_NEAR(ratios[1], 1 / step, 1e-12);
  EXPECT_NEAR(ratios[2], step, 1e-12);
  EXPECT_NEAR(ratios[3], 1 / step, 1e-12);
}

TEST(StatsSimDraw, OutlierRoundIsWorseOnTheFigure) {
  const Figure quiet_rps{"quiet", 0.0, Better::kHigher};
  const Figure quiet_cpu{"quiet", 0.0, Better::kLower};
  Rng rng(5);
  const std::vector<double> rps = DrawRatios(quiet_rps, Noise::kOutlier, 1.0, 3, rng);
  const std::vector<double> cpu = DrawRatios(quiet_cpu, Noise::kOutlier, 1.0, 3, rng);
  EXPECT_DOUBLE_EQ(rps[0], 1.0);
  EXPECT_NEAR(rps[kOutlierRound - 1], kOutlierFactor, 1e-12);
  EXPECT_NEAR(cpu[kOutlierRound - 1], 1 / kOutlierFactor, 1e-12);
  EXPECT_DOUBLE_EQ(rps[2], 1.0);
}

TEST(StatsSimRules, CommittedAdaptiveLooksAfterEveryRoundAtItsCalibratedLevel) {
  const LookRule rule = CommittedRule(LookPlan::Adaptive(3, 20, 0.95));
  ASSERT_EQ(rule.rounds.size(), 18u);
  EXPECT_EQ(rule.rounds.front(), 3);
  EXPECT_EQ(rule.rounds.back(), 20);
  for (double level : rule.levels) EXPECT_DOUBLE_EQ(level, AdaptiveLookLevel(3, 20, 0.95));
  const LookRule bonferroni = BonferroniRule(EveryRound(3, 20), 0.95);
  ASSERT_EQ(bonferroni.rounds, rule.rounds);
  for (double level : bonferroni.levels) EXPECT_NEAR(level, 1 - 0.05 / 18, 1e-12);
  const LookRule fixed = CommittedRule(LookPlan::Fixed(5, 0.95));
  EXPECT_EQ(fixed.rounds, std::vector<int>{5});
  EXPECT_EQ(fixed.levels, std::vector<double>{0.95});
}

// Every committed plan under one noise model, at one true ratio.
struct Case {
  Figure figure;
  Noise noise;
  double true_ratio;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  const std::string figure = info.param.figure.window_log_sd == 0.01 ? "quiet_" : "";
  return figure + NoiseName(info.param.noise) + "_" +
         std::to_string(std::lround(info.param.true_ratio * 100));
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.figure.name << " (window log SD " << c.figure.window_log_sd << "), "
      << NoiseName(c.noise) << ", true ratio " << c.true_ratio;
}

class StatsSimErrorRates : public testing::TestWithParam<Case> {};

TEST_P(StatsSimErrorRates, CommittedPlansHoldTheFigures) {
  const Case c = GetParam();
  const std::vector<LookRule> rules = CommittedRules();
  const Scenario scenario{c.figure, c.noise, c.true_ratio, 0.02};
  const std::uint64_t seed = 1600 + 10 * static_cast<std::uint64_t>(c.noise) +
                             static_cast<std::uint64_t>(std::lround(c.true_ratio * 100));
  const std::vector<Tally> tallies = Simulate(scenario, rules, kCampaigns, seed);
  for (size_t i = 0; i < rules.size(); ++i) {
    SCOPED_TRACE(rules[i].name);
    const Tally& t = tallies[i];
    ASSERT_EQ(t.campaigns, kCampaigns);
    EXPECT_GE(t.Coverage(), kCoverageFloor);
    if (c.true_ratio == 1.00) {
      EXPECT_LE(Wrong(t), 0.05);
    }
    if (c.true_ratio == 1.05) {
      EXPECT_LE(t.Share(ComparisonVerdict::kClose), 0.05);
    }
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const Figure& figure : {kReqPerSecond, kQuietReqPerSecond}) {
    for (Noise noise : kNoises) {
      for (double ratio : {1.00, 1.01, 1.05, 1.20}) cases.push_back({figure, noise, ratio});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Noises, StatsSimErrorRates, testing::ValuesIn(AllCases()), CaseName);

TEST(StatsSimAdaptive, StopsEarlyOnAClearDifferenceAndRunsToMaxOnNone) {
  // A true ratio of 1.20 is far beyond the margin: the adaptive plan says "ahead" (for CPU per
  // request, "behind") well before its 20th round (11 on average in bench/README.md's table); at
  // 1.05 with this machine's spread almost no campaign is decided by round 20.
  const std::vector<LookRule> rules = {CommittedRule(LookPlan::Adaptive(3, 20, 0.95))};
  const Tally clear = Simulate({kReqPerSecond, Noise::kLognormal, 1.20, 0.02}, rules, 1000, 7)[0];
  EXPECT_GE(clear.Share(ComparisonVerdict::kBetter), 0.9);
  EXPECT_LT(clear.MeanRounds(), 15);
  const Tally cpu = Simulate({kCpuPerRequest, Noise::kLognormal, 1.20, 0.02}, rules, 1000, 7)[0];
  EXPECT_GE(cpu.Share(ComparisonVerdict::kWorse), 0.9);
  const Tally none = Simulate({kReqPerSecond, Noise::kLognormal, 1.05, 0.02}, rules, 1000, 7)[0];
  EXPECT_GE(none.Share(ComparisonVerdict::kInconclusive), 0.9);
  EXPECT_GT(none.MeanRounds(), 19);
}

}  // namespace
}  // namespace benchlab::stats_sim

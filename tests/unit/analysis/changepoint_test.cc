// The change-point detector and the confirmation rule of analysis/changepoint.h on fixed series
// (docs/history.md). Series are drawn from fixed seeds with a small window spread (log SD 0.02,
// 5 rounds a campaign: a campaign's log mean has an SE of about 0.009), so a 10% step is about
// ten standard errors and every expectation is exact.
#include "analysis/changepoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace benchlab {
namespace {

// A series with the given true level per campaign: each campaign 5 rounds of
// level * exp(sd * Z), its estimate their geometric mean.
std::vector<SeriesPoint> Series(const std::vector<double>& levels, uint64_t seed,
                                double sd = 0.02) {
  NormalSource rng(seed);
  std::vector<SeriesPoint> out;
  for (size_t i = 0; i < levels.size(); ++i) {
    SeriesPoint p;
    p.campaign_id = static_cast<int64_t>(100 + i);
    double log_sum = 0;
    for (int r = 0; r < 5; ++r) {
      const double l = std::log(levels[i]) + sd * rng.Normal();
      log_sum += l;
      p.rounds.push_back(std::exp(l));
    }
    p.estimate = std::exp(log_sum / 5);
    out.push_back(p);
  }
  return out;
}

// `n` campaigns at level 1, then from each step's index on the level times its factor.
std::vector<double> Levels(int n, std::vector<std::pair<int, double>> steps) {
  std::vector<double> levels(static_cast<size_t>(n), 1.0);
  for (auto [at, factor] : steps) {
    for (int i = at; i < n; ++i) levels[static_cast<size_t>(i)] *= factor;
  }
  return levels;
}

TEST(ChangePointLogSe, WorkedExample) {
  // ln 1.04 = 0.039221, ln 1.05 = 0.048790, ln 1.06 = 0.058269: sd 0.0095241, / sqrt 3.
  EXPECT_NEAR(CampaignLogSe({1.04, 1.05, 1.06}), 0.0095241 / std::sqrt(3.0), 1e-7);
  EXPECT_NEAR(CampaignLogSe({1.04, 0, -2, std::nan(""), 1.05, 1.06}), 0.0095241 / std::sqrt(3.0),
              1e-7);
  EXPECT_TRUE(std::isnan(CampaignLogSe({1.04})));
  EXPECT_TRUE(std::isnan(CampaignLogSe({})));
}

TEST(ChangePointDetect, NoStepNoChangePoint) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const ChangePointResult r = DetectChangePoints(Series(Levels(40, {}), seed), {});
    EXPECT_TRUE(r.change_points.empty());
    EXPECT_GE(r.tests, 1);
  }
}

TEST(ChangePointDetect, OneStepAtItsIndexWithItsSize) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const std::vector<SeriesPoint> series = Series(Levels(30, {{20, 1.10}}), seed);
    const ChangePointResult r = DetectChangePoints(series, {});
    ASSERT_EQ(r.change_points.size(), 1u);
    const ChangePoint& cp = r.change_points[0];
    EXPECT_EQ(cp.index, 20u);
    EXPECT_EQ(cp.campaign_id, 120);
    EXPECT_EQ(cp.old_index, 18u);
    EXPECT_EQ(cp.before_n, 20);
    EXPECT_EQ(cp.after_n, 10);
    // 199 permutations: no shuffle reaches a ten-SE step, p = 1 / 200.
    EXPECT_DOUBLE_EQ(cp.p_value, 1.0 / 200);
    EXPECT_LE(cp.size.low, 1.10);
    EXPECT_GE(cp.size.high, 1.10);
    EXPECT_NEAR(cp.size.estimate, 1.10, 0.015);
    EXPECT_GT(cp.size.low, 1.02);
    EXPECT_EQ(cp.direction, ChangeDirection::kImprovement);  // req/s up
    EXPECT_EQ(cp.verdict, ComparisonVerdict::kBetter);
  }
}

TEST(ChangePointDetect, DirectionFollowsBetter) {
  ChangePointOptions cpu;
  cpu.better = Better::kLower;  // CPU per request up 10%: a regression
  const ChangePointResult r = DetectChangePoints(Series(Levels(30, {{20, 1.10}}), 1), cpu);
  ASSERT_EQ(r.change_points.size(), 1u);
  EXPECT_EQ(r.change_points[0].direction, ChangeDirection::kRegression);
  EXPECT_EQ(r.change_points[0].verdict, ComparisonVerdict::kWorse);
}

TEST(ChangePointDetect, TwoStepsBothFound) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const ChangePointResult r =
        DetectChangePoints(Series(Levels(45, {{15, 1.10}, {30, 1 / 1.08}}), seed), {});
    ASSERT_EQ(r.change_points.size(), 2u);
    EXPECT_EQ(r.change_points[0].index, 15u);
    EXPECT_EQ(r.change_points[1].index, 30u);
    EXPECT_NEAR(r.change_points[0].size.estimate, 1.10, 0.015);
    EXPECT_NEAR(r.change_points[1].size.estimate, 1 / 1.08, 0.015);
    // Each size is measured between its neighbours: 15 before and 15 after for both.
    EXPECT_EQ(r.change_points[0].before_n, 15);
    EXPECT_EQ(r.change_points[0].after_n, 15);
    EXPECT_EQ(r.change_points[1].before_n, 15);
    EXPECT_EQ(r.change_points[1].after_n, 15);
    EXPECT_EQ(r.change_points[1].direction, ChangeDirection::kRegression);
  }
}

TEST(ChangePointDetect, OneOutlyingCampaignIsNotAStep) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    std::vector<SeriesPoint> series = Series(Levels(40, {}), seed);
    // Campaign 20 measured 30% slow in every round.
    for (double& v : series[20].rounds) v *= 0.7;
    series[20].estimate *= 0.7;
    EXPECT_TRUE(DetectChangePoints(series, {}).change_points.empty());
  }
}

TEST(ChangePointDetect, OutlierAtTheNewestCampaignIsNotAStep) {
  // min_segment 3: the newest campaign can not be a side of its own.
  std::vector<SeriesPoint> series = Series(Levels(30, {}), 3);
  for (double& v : series.back().rounds) v *= 0.7;
  series.back().estimate *= 0.7;
  EXPECT_TRUE(DetectChangePoints(series, {}).change_points.empty());
}

TEST(ChangePointDetect, TooShortSeriesHaveNone) {
  // 2 * min_segment = 6 usable campaigns at least; fewer: no test at all.
  for (int n : {0, 1, 2, 5}) {
    SCOPED_TRACE(n);
    const ChangePointResult r = DetectChangePoints(Series(Levels(n, {{n / 2, 2.0}}), 1), {});
    EXPECT_TRUE(r.change_points.empty());
    EXPECT_EQ(r.tests, 0);
  }
  // Six campaigns with a doubling after the third: one split, at 3; 6 choose 3 = 20 orders,
  // of which 2 (either side holding the three high values) reach the observed maximum:
  // p = (1 + about 2/20 of 199) / 200, far above 0.05.
  const ChangePointResult six = DetectChangePoints(Series(Levels(6, {{3, 2.0}}), 1), {});
  EXPECT_EQ(six.tests, 1);
  EXPECT_TRUE(six.change_points.empty());
}

TEST(ChangePointDetect, UnusableEstimatesAreSkipped) {
  std::vector<SeriesPoint> series = Series(Levels(30, {{20, 1.10}}), 2);
  const double inf = std::numeric_limits<double>::infinity();
  series[3].estimate = std::nan("");
  series[7].estimate = 0;
  series[11].estimate = -5;
  series[25].estimate = inf;
  const ChangePointResult r = DetectChangePoints(series, {});
  EXPECT_EQ(r.skipped, (std::vector<size_t>{3, 7, 11, 25}));
  ASSERT_EQ(r.change_points.size(), 1u);
  EXPECT_EQ(r.change_points[0].index, 20u);  // an index into the input, skipped points counted
  EXPECT_EQ(r.change_points[0].before_n, 17);
  EXPECT_EQ(r.change_points[0].after_n, 9);
  // All unusable: none, no crash.
  std::vector<SeriesPoint> none(10);
  const ChangePointResult empty = DetectChangePoints(none, {});
  EXPECT_EQ(empty.skipped.size(), 10u);
  EXPECT_TRUE(empty.change_points.empty());
}

TEST(ChangePointDetect, SameSeedSameResult) {
  const std::vector<SeriesPoint> series = Series(Levels(40, {{25, 1.04}}), 5, 0.05);
  ChangePointOptions options;
  options.seed = 42;
  const ChangePointResult a = DetectChangePoints(series, options);
  const ChangePointResult b = DetectChangePoints(series, options);
  ASSERT_EQ(a.change_points.size(), b.change_points.size());
  EXPECT_EQ(a.tests, b.tests);
  for (size_t i = 0; i < a.change_points.size(); ++i) {
    EXPECT_EQ(a.change_points[i].index, b.change_points[i].index);
    EXPECT_EQ(a.change_points[i].p_value, b.change_points[i].p_value);
    EXPECT_EQ(a.change_points[i].size.low, b.change_points[i].size.low);
  }
}

TEST(ChangePointDetect, WideCampaignIntervalsDoNotCryWolf) {
  // Twelve campaigns whose estimates rise 6% after the sixth with almost no scatter: with no
  // rounds (nothing known of each campaign's precision) the step is reported. With each
  // campaign's rounds spread +/-15% (an SE of its log mean of about 0.07), the sides' variances
  // are floored at that SE squared, the interval on the ratio spans 1, and nothing is reported.
  std::vector<SeriesPoint> bare, wide;
  for (int i = 0; i < 12; ++i) {
    const double level = (i < 6 ? 1.0 : 1.06) * (1 + 0.002 * ((i * 7) % 5 - 2));
    bare.push_back({i, level, {}});
    wide.push_back({i, level, {level * 0.85, level * 1.15, level * 0.85, level * 1.15}});
  }
  const ChangePointResult with_none = DetectChangePoints(bare, {});
  ASSERT_EQ(with_none.change_points.size(), 1u);
  EXPECT_EQ(with_none.change_points[0].index, 6u);
  EXPECT_EQ(DetectChangePoints(wide, {}).change_points.size(), 0u);
}

// --- confirmation -------------------------------------------------------------------------

ChangePoint Suspected(double estimate) {
  ChangePoint cp;
  cp.size.n = 20;
  cp.size.estimate = estimate;
  return cp;
}

RatioInterval Remeasured(int n, double low, double high, double log_sd = 0.14) {
  RatioInterval iv;
  iv.n = n;
  iv.level = 0.98;
  iv.low = low;
  iv.high = high;
  iv.estimate = std::sqrt(low * high);
  iv.log_mean = std::log(iv.estimate);
  iv.log_sd = log_sd;
  return iv;
}

TEST(ChangePointConfirm, ExcludingOneOnTheSuspectedSideConfirms) {
  const ConfirmationRule rule;  // margin 0.02, rounds 5 to 30
  EXPECT_EQ(DecideConfirmation(Remeasured(8, 1.01, 1.12), Suspected(1.06), rule).decision,
            Confirmation::kConfirmed);
  EXPECT_EQ(DecideConfirmation(Remeasured(8, 0.90, 0.99), Suspected(0.94), rule).decision,
            Confirmation::kConfirmed);
  // Real but smaller than the margin: still confirmed (tested first).
  EXPECT_EQ(DecideConfirmation(Remeasured(30, 1.005, 1.015), Suspected(1.06), rule).decision,
            Confirmation::kConfirmed);
}

TEST(ChangePointConfirm, ExcludingTheSuspectedChangeIsAFalseAlarm) {
  const ConfirmationRule rule;
  // Within the margin.
  EXPECT_EQ(DecideConfirmation(Remeasured(12, 0.99, 1.015), Suspected(1.06), rule).decision,
            Confirmation::kFalseAlarm);
  // On the other side of 1.
  EXPECT_EQ(DecideConfirmation(Remeasured(6, 0.85, 0.97), Suspected(1.06), rule).decision,
            Confirmation::kFalseAlarm);
  EXPECT_EQ(DecideConfirmation(Remeasured(6, 0.985, 1.2), Suspected(0.94), rule).decision,
            Confirmation::kFalseAlarm);
  // A fall: the low edge is 1 - margin = 0.98.
  EXPECT_EQ(DecideConfirmation(Remeasured(6, 0.975, 1.2), Suspected(0.94), rule).decision,
            Confirmation::kUndecided);
}

TEST(ChangePointConfirm, ReachingAcrossIsUndecidedUntilTheLimit) {
  const ConfirmationRule rule;
  // log_mean = ln sqrt(0.97 * 1.10) = 0.0314; the farther deciding edge is 1 (0.0314 away;
  // ln 1.02 - 0.0314 < 0). With log SD 0.05 the half width t(LevelAt(n), n - 1) * 0.05 / sqrt n
  // falls below 0.0314 at some n up to 30.
  const ConfirmationDecision d =
      DecideConfirmation(Remeasured(6, 0.97, 1.10, 0.05), Suspected(1.06), rule);
  EXPECT_EQ(d.decision, Confirmation::kUndecided);
  ASSERT_TRUE(d.rounds_needed.has_value());
  EXPECT_GT(*d.rounds_needed, 6);
  EXPECT_LE(*d.rounds_needed, 30);
  const double level = rule.plan.LevelAt(*d.rounds_needed);
  const double m = std::log(std::sqrt(0.97 * 1.10));
  EXPECT_LT(StudentT(level, *d.rounds_needed - 1) * 0.05 / std::sqrt(*d.rounds_needed), m);
  EXPECT_GE(StudentT(level, *d.rounds_needed - 2) * 0.05 / std::sqrt(*d.rounds_needed - 1), m);
  // At this spread (log SD 0.5) nothing up to 30 rounds decides it.
  EXPECT_FALSE(DecideConfirmation(Remeasured(6, 0.97, 1.10, 0.5), Suspected(1.06), rule)
                   .rounds_needed.has_value());
  // At the round limit: unconfirmed.
  EXPECT_EQ(DecideConfirmation(Remeasured(30, 0.97, 1.10), Suspected(1.06), rule).decision,
            Confirmation::kUnconfirmed);
}

TEST(ChangePointConfirm, BeforeTheFirstLookUndecided) {
  const ConfirmationRule rule;
  const ConfirmationDecision d =
      DecideConfirmation(Remeasured(4, 1.05, 1.10), Suspected(1.06), rule);
  EXPECT_EQ(d.decision, Confirmation::kUndecided);
  EXPECT_EQ(d.rounds_needed, 5);
}

TEST(ChangePointConfirm, FromRatiosUsesThePlansLevel) {
  // Five ratios of 1.10 +/- a little: low well above 1 at LevelAt(5).
  const ConfirmationRule rule;
  const std::vector<double> ratios = {1.09, 1.11, 1.10, 1.12, 1.08};
  const ConfirmationDecision d = DecideConfirmation(ratios, Suspected(1.06), rule);
  EXPECT_EQ(d.decision, Confirmation::kConfirmed);
  EXPECT_EQ(DecideConfirmation(ratios, Suspected(0.94), rule).decision, Confirmation::kFalseAlarm);
  EXPECT_EQ(DecideConfirmation(std::vector<double>{1.1, 1.1, 1.1}, Suspected(1.06), rule).decision,
            Confirmation::kUndecided);
}

}  // namespace
}  // namespace benchlab

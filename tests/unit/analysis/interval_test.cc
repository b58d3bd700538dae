// Intervals and interval verdicts against hand-computed fixtures (docs/methodology.md, "Intervals
// and verdicts"). Each expectation has its arithmetic beside it; t quantiles are from the
// standard table.
#include "analysis/interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace benchlab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(IntervalStudentT, MatchesTheTable) {
  EXPECT_NEAR(StudentT(0.95, 1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentT(0.95, 2), 4.3027, 1e-4);
  EXPECT_NEAR(StudentT(0.95, 10), 2.2281, 1e-4);
  EXPECT_NEAR(StudentT(0.99, 5), 4.0321, 1e-4);
  EXPECT_NEAR(StudentT(0.90, 30), 1.6973, 1e-4);
  EXPECT_TRUE(std::isnan(StudentT(0.95, 0)));
  EXPECT_TRUE(std::isnan(StudentT(1.0, 3)));
}

TEST(IntervalLogRatio, WorkedExample) {
  // ln 1.04 = 0.039221, ln 1.05 = 0.048790, ln 1.06 = 0.058269: mean 0.048760, sd 0.0095241.
  // Half width t(0.95, 2) · sd / √3 = 4.3027 · 0.0095241 / 1.7321 = 0.023659.
  // exp(0.048760) = 1.04997, exp(0.048760 - 0.023659) = 1.02542, exp(0.048760 + 0.023659)
  // = 1.07511.
  const RatioInterval iv = LogRatioInterval({1.04, 1.05, 1.06}, 0.95);
  EXPECT_EQ(iv.n, 3);
  EXPECT_TRUE(iv.ok());
  EXPECT_DOUBLE_EQ(iv.level, 0.95);
  EXPECT_NEAR(iv.log_mean, 0.048760, 1e-6);
  EXPECT_NEAR(iv.log_sd, 0.0095241, 1e-6);
  EXPECT_NEAR(iv.estimate, 1.04997, 1e-5);
  EXPECT_NEAR(iv.low, 1.02542, 1e-5);
  EXPECT_NEAR(iv.high, 1.07511, 1e-5);
}

TEST(IntervalLogRatio, ALevelOfNinetyNineIsWider) {
  // t(0.99, 2) = 9.9248: half width 9.9248 · 0.0095241 / 1.7321 = 0.054573.
  const RatioInterval iv = LogRatioInterval({1.04, 1.05, 1.06}, 0.99);
  EXPECT_NEAR(iv.low, std::exp(0.048760 - 0.054573), 1e-5);
  EXPECT_NEAR(iv.high, std::exp(0.048760 + 0.054573), 1e-5);
}

TEST(IntervalLogRatio, LeavesOutRatiosWithNoLogarithm) {
  // 0, -1, NaN and +inf have no finite logarithm: the interval is that of {1.04, 1.05, 1.06}.
  const RatioInterval iv = LogRatioInterval({1.04, 0, -1, std::nan(""), kInf, 1.05, 1.06}, 0.95);
  EXPECT_EQ(iv.n, 3);
  EXPECT_NEAR(iv.low, 1.02542, 1e-5);
}

TEST(IntervalLogRatio, OneRatioHasNoInterval) {
  const RatioInterval iv = LogRatioInterval({1.2}, 0.95);
  EXPECT_EQ(iv.n, 1);
  EXPECT_FALSE(iv.ok());
  EXPECT_TRUE(std::isnan(iv.low));
  EXPECT_TRUE(std::isnan(iv.estimate));
  EXPECT_EQ(JudgeInterval(iv, Better::kHigher, 0.02), ComparisonVerdict::kNotApplicable);
}

TEST(IntervalLogRatio, IsSymmetricUnderSwappingTargetAndBaseline) {
  // ln(1/r) = -ln r: the interval of the inverse ratios is [1/high, 1/low].
  const RatioInterval iv = LogRatioInterval({1.04, 1.05, 1.06}, 0.95);
  const RatioInterval inv = LogRatioInterval({1 / 1.04, 1 / 1.05, 1 / 1.06}, 0.95);
  EXPECT_NEAR(inv.low, 1 / iv.high, 1e-12);
  EXPECT_NEAR(inv.high, 1 / iv.low, 1e-12);
}

RatioInterval Iv(double low, double high) {
  RatioInterval iv;
  iv.n = 5;
  iv.low = low;
  iv.high = high;
  return iv;
}

TEST(ComparisonVerdicts, AheadAndBehindNeedTheWholeIntervalBeyondTheMargin) {
  // margin 0.02: the band is 0.98 to 1.02.
  EXPECT_EQ(JudgeInterval(Iv(1.025, 1.075), Better::kHigher, 0.02), ComparisonVerdict::kBetter);
  EXPECT_EQ(JudgeInterval(Iv(1.025, 1.075), Better::kLower, 0.02), ComparisonVerdict::kWorse);
  EXPECT_EQ(JudgeInterval(Iv(0.90, 0.97), Better::kHigher, 0.02), ComparisonVerdict::kWorse);
  EXPECT_EQ(JudgeInterval(Iv(0.90, 0.97), Better::kLower, 0.02), ComparisonVerdict::kBetter);
  // Above 1 but not beyond 1.02 at its low end: not decided.
  EXPECT_EQ(JudgeInterval(Iv(1.01, 1.075), Better::kHigher, 0.02),
            ComparisonVerdict::kInconclusive);
}

TEST(ComparisonVerdicts, CloseNeedsTheWholeIntervalInsideTheMargin) {
  EXPECT_EQ(JudgeInterval(Iv(0.985, 1.015), Better::kHigher, 0.02), ComparisonVerdict::kClose);
  EXPECT_EQ(JudgeInterval(Iv(0.985, 1.015), Better::kLower, 0.02), ComparisonVerdict::kClose);
  // Reaching past either edge: inconclusive.
  EXPECT_EQ(JudgeInterval(Iv(0.975, 1.015), Better::kHigher, 0.02),
            ComparisonVerdict::kInconclusive);
  EXPECT_EQ(JudgeInterval(Iv(0.985, 1.025), Better::kHigher, 0.02),
            ComparisonVerdict::kInconclusive);
  // A margin of 0 never calls anything close unless the interval is the single point 1.
  EXPECT_EQ(JudgeInterval(Iv(0.999, 1.001), Better::kHigher, 0), ComparisonVerdict::kInconclusive);
}

TEST(ComparisonVerdicts, RoundsToDecideFromTheObservedSpread) {
  // ln 1.00 = 0, ln 1.03 = 0.029559, ln 1.06 = 0.058269: mean 0.029276, sd 0.029135.
  // The nearer edge is ln 1.02 = 0.019803, 0.009473 away. A half width below it needs
  // t(n - 1) / √n < 0.009473 / 0.029135 = 0.32515:
  //   n = 38: t(37) = 2.0262, / 6.1644 = 0.3287 (not yet); n = 39: t(38) = 2.0244, / 6.2450 =
  //   0.3242.
  const RatioInterval iv = LogRatioInterval({1.00, 1.03, 1.06}, 0.95);
  ASSERT_EQ(JudgeInterval(iv, Better::kHigher, 0.02), ComparisonVerdict::kInconclusive);
  EXPECT_EQ(RoundsToDecide(iv, 0.02, 0.95), 39);
  EXPECT_EQ(RoundsToDecide(iv, 0.02, 0.95, 38), std::nullopt);
  // A decided interval needs no more rounds.
  EXPECT_EQ(RoundsToDecide(LogRatioInterval({1.04, 1.05, 1.06}, 0.95), 0.02, 0.95), std::nullopt);
}

TEST(IntervalLookPlan, FixedLooksOnceAtTheStatedConfidence) {
  const LookPlan plan = LookPlan::Fixed(7, 0.95);
  EXPECT_EQ(plan.Looks(), 1);
  EXPECT_DOUBLE_EQ(plan.LevelAt(7), 0.95);
  EXPECT_DOUBLE_EQ(plan.LevelAt(5), 0.95);
}

TEST(IntervalLookPlan, AdaptiveLooksAtOneStricterLevel) {
  // rounds 3 to 20: 18 looks, each at the same level, stricter than one look at 0.95 and looser
  // than Bonferroni's 1 - 0.05 / 18 = 0.99722. An independent estimate from 200,000 sequences
  // (bench/stats_sim) put it at 0.99240.
  const LookPlan plan = LookPlan::Adaptive(3, 20, 0.95);
  EXPECT_EQ(plan.Looks(), 18);
  const double level = plan.LevelAt(3);
  EXPECT_GT(level, 0.95);
  EXPECT_LT(level, 1 - 0.05 / 18);
  EXPECT_NEAR(level, 0.9924, 0.0006);
  EXPECT_DOUBLE_EQ(plan.LevelAt(20), level);
  EXPECT_DOUBLE_EQ(AdaptiveLookLevel(3, 20, 0.95), level);  // cached, deterministic
  // min == max is one look: the fixed plan's level.
  EXPECT_DOUBLE_EQ(LookPlan::Adaptive(5, 5, 0.9).LevelAt(5), 0.9);
}

TEST(IntervalLookPlan, AdaptiveLevelHoldsTheConfidenceOverAllLooksTogether) {
  // Fresh normal sequences (another seed): the share in which some look's interval at the
  // adaptive level misses the mean 0 is 1 - 0.95 = 0.05, within 3 standard errors of 20,000
  // sequences (0.0046); at one look's 0.95 the same sequences miss far more often.
  const int min = 3, max = 12, sequences = 20000;
  const double level = AdaptiveLookLevel(min, max, 0.95);
  NormalSource draws(12345);
  int missed = 0, missed_naive = 0;
  for (int i = 0; i < sequences; ++i) {
    std::vector<double> ratios;
    bool miss = false, miss_naive = false;
    for (int n = 1; n <= max; ++n) {
      ratios.push_back(std::exp(0.1 * draws.Normal()));
      if (n < min) continue;
      const RatioInterval iv = LogRatioInterval(ratios, level);
      miss = miss || iv.low > 1 || iv.high < 1;
      const RatioInterval naive = LogRatioInterval(ratios, 0.95);
      miss_naive = miss_naive || naive.low > 1 || naive.high < 1;
    }
    missed += miss;
    missed_naive += miss_naive;
  }
  EXPECT_NEAR(double(missed) / sequences, 0.05, 0.0046);
  EXPECT_GT(double(missed_naive) / sequences, 0.12);
}

TEST(IntervalJudgeRatios, StatesTheIntervalTheVerdictAndWhy) {
  const IntervalJudgement j = JudgeRatios({1.04, 1.05, 1.06}, Better::kHigher,
                                          StatsRule{0.95, 0.02}, LookPlan::Fixed(3, 0.95));
  EXPECT_EQ(j.verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(j.reason, "ratio 1.050 (95% CI 1.025 to 1.075, 3 rounds) lies beyond the margin ±2%");
  EXPECT_EQ(j.rounds_needed, std::nullopt);

  const IntervalJudgement k = JudgeRatios({1.00, 1.03, 1.06}, Better::kHigher,
                                          StatsRule{0.95, 0.02}, LookPlan::Fixed(3, 0.95));
  EXPECT_EQ(k.verdict, ComparisonVerdict::kInconclusive);
  EXPECT_EQ(k.rounds_needed, 39);
  EXPECT_NE(k.reason.find("about 39 rounds would decide it"), std::string::npos) << k.reason;

  // Under the adaptive plan the same ratios are judged at its stricter level L: wider, so a
  // 3-round interval that was ahead at 95% is not decided yet. With 2 degrees of freedom the
  // quantile is (2p - 1) / √(2p(1 - p)), p = 1 - (1 - L) / 2; at L ≈ 0.9924 that is about 11.4,
  // a half width of 11.4 · 0.0095241 / 1.7321 = 0.063 and a low end of exp(0.04876 - 0.063) < 1.
  const IntervalJudgement a = JudgeRatios({1.04, 1.05, 1.06}, Better::kHigher,
                                          StatsRule{0.95, 0.02}, LookPlan::Adaptive(3, 20, 0.95));
  EXPECT_EQ(a.verdict, ComparisonVerdict::kInconclusive);
  const double p = 1 - (1 - a.interval.level) / 2;
  const double t = (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  EXPECT_NEAR(a.interval.low, std::exp(0.048760 - t * 0.0095241 / std::sqrt(3.0)), 1e-5);
  EXPECT_LT(a.interval.low, 1.0);
}

TEST(IntervalJudgeRatios, CloseWhenTheRoundsAgreeWithinTheMargin) {
  // ln 0.995 = -0.0050125, ln 1 = 0, ln 1.005 = 0.0049875: mean -0.0000083, sd 0.0050000.
  // Half width 4.3027 · 0.005 / 1.7321 = 0.012421: exp(-0.012429) = 0.98765 to
  // exp(0.012413) = 1.01249, inside 0.98 to 1.02.
  const IntervalJudgement j = JudgeRatios({0.995, 1.0, 1.005}, Better::kLower,
                                          StatsRule{0.95, 0.02}, LookPlan::Fixed(3, 0.95));
  EXPECT_EQ(j.verdict, ComparisonVerdict::kClose);
  EXPECT_NEAR(j.interval.low, 0.98765, 1e-5);
  EXPECT_NEAR(j.interval.high, 1.01249, 1e-5);
}

}  // namespace
}  // namespace benchlab

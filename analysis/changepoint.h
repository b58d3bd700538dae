// Change points in a series of campaigns, and their confirmation by re-measurement
// (docs/history.md). Campaigns with the same name form a series; per (target, cell, figure) the
// series holds one figure per campaign, in campaign order. The detector says where the figure's
// level changed, by how much (a ratio after / before with a confidence interval), and which way
// (a regression or an improvement for the figure's Better); the confirmation rule then reads an
// interleaved re-measurement of the builds on either side of the change and says whether the
// change is real. Pure functions, no state, deterministic for a given seed: any thread may call
// them.
//
// The detector: e-divisive means (Matteson & James 2014, with alpha = 1; the method of MongoDB's
// CI, Daly et al. 2020, and of Apache Otava) on ln(estimate), by recursive bisection:
//   1. In a segment [a, b) of the series, the split tau with the largest energy statistic
//        Q(tau) = m k / (m + k) * (2/(m k) sum |x_i - y_j| - sum_{i<i'} |x_i - x_i'| / C(m, 2)
//                                                           - sum_{j<j'} |y_j - y_j'| / C(k, 2))
//      (x the m values before tau, y the k values from tau on, both at least min_segment long).
//      It compares the two sides' whole distributions with no assumption about their shape, so
//      a heavy tail or one slow campaign weighs as one value among many, not as a shift.
//   2. A permutation test of that maximum: the segment's values are shuffled `permutations`
//      times (seeded, Fisher-Yates), and each shuffle's maximum over all splits is computed the
//      same way, so the test accounts for tau having been chosen as the best split. p = (1 + the
//      shuffles at or above the observed maximum) / (1 + permutations). The test stops early
//      once p can no longer come out at or below `significance` (Besag & Clifford's sequential
//      Monte Carlo test: the same decision as all shuffles, much less work on a segment with no
//      change, which is most of them).
//   3. The size of the change: the ratio exp(mean of y - mean of x) with a Welch t interval on
//      the difference of the two sides' mean ln estimate. Each side's variance is the larger of
//      its campaigns' sample variance and the mean of their own squared standard errors (from
//      `rounds`: the sample SD of ln(round value) / sqrt(rounds)). The floor is what makes the
//      per-campaign intervals count: three campaigns that happen to agree closely can not make a
//      change look certain when each was measured to +/-10%.
//   4. A change point is kept only when the permutation test is significant AND the size
//      interval excludes 1 AND the size's estimate lies beyond the margin (above 1 + margin or
//      below 1 - margin). The permutation test alone knows nothing of how precisely each
//      campaign was measured; the interval alone ignores that tau was the best of many splits
//      (it is too narrow after that selection); the margin is by definition the smallest
//      difference worth reporting (docs/methodology.md), and a change estimated below it is not
//      worth an alarm and a re-measurement. All three must agree. A kept change point splits
//      the segment and both halves are searched again; a segment whose best split is not kept
//      is final.
//   5. Once no segment splits, each change point's size is recomputed between its final
//      neighbours (the previous and next change points, or the ends); one that is then no
//      longer kept by the interval and margin tests is dropped (the weakest first: the smallest
//      |difference| / SE; its neighbours merge) and the sizes are recomputed, until every
//      change point left passes them.
// min_segment = 3 by default: the smallest side with a sample variance of 2 degrees of freedom,
// so one outlying campaign can never be a segment of its own (in the middle of a series it is
// tested as one value of a longer side) and the newest campaign alone can not raise an alarm: a
// change at the newest campaigns is seen after its third campaign at the earliest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/interval.h"

namespace benchlab {

// One campaign of a series.
struct SeriesPoint {
  int64_t campaign_id = 0;
  double estimate = kNaN;      // the campaign's figure; > 0 and finite, else the point is skipped
  std::vector<double> rounds;  // the campaign's per-round values of the figure (may be empty)
};

struct ChangePointOptions {
  Better better = Better::kHigher;  // which way the figure improves
  double confidence = 0.95;         // of each size interval (two-sided)
  double margin = 0.02;             // smallest size reported; the verdict's (JudgeInterval)
  double significance = 0.05;       // of each permutation test
  int permutations = 199;           // per test; p can reach 1 / (1 + permutations)
  int min_segment = 3;              // campaigns on each side of a split; at least 2
  uint64_t seed = 1;                // of the permutations (mixed with the segment's bounds)
};

enum class ChangeDirection { kRegression, kImprovement };
const char* ChangeDirectionName(ChangeDirection d);  // "regression", "improvement"

struct ChangePoint {
  size_t index = 0;         // into the input series: the first campaign after the change
  int64_t campaign_id = 0;  // that campaign's
  double statistic = kNaN;  // Q at the split, in the segment it was found in
  double p_value = kNaN;    // of that segment's permutation test
  int before_n = 0;         // usable campaigns between the previous change point and this one
  int after_n = 0;          // and between this one and the next
  // after / before: exp of the difference of the two sides' mean ln estimate, with its Welch
  // interval at options.confidence. n = before_n + after_n; log_mean is the difference;
  // log_sd is not a sample SD here and is left NaN (log_se has the difference's standard error).
  RatioInterval size;
  double log_se = kNaN;
  double df = kNaN;  // Welch-Satterthwaite degrees of freedom of the interval
  // The campaign whose build a re-measurement should take as the old one: the second usable
  // campaign before `index`, so that a change point placed one campaign late (its index is the
  // second campaign after the true change) still has a build from before the change on the old
  // side; the new build is the newest campaign's.
  size_t old_index = 0;
  ChangeDirection direction = ChangeDirection::kRegression;
  ComparisonVerdict verdict = ComparisonVerdict::kNotApplicable;  // size against the margin
};

struct ChangePointResult {
  std::vector<ChangePoint> change_points;  // in series order
  std::vector<size_t> skipped;             // input indices whose estimate is not finite or <= 0
  int tests = 0;                           // permutation tests run
};

// The change points of `series` (in campaign order). Fewer than 2 * min_segment usable points:
// none. Deterministic: the same series and options give the same result.
ChangePointResult DetectChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointOptions& options);

// The standard error of a campaign's mean ln round value: the sample SD of ln(rounds) / sqrt(n)
// over the rounds that are finite and > 0; NaN with fewer than 2.
double CampaignLogSe(const std::vector<double>& rounds);

// --- confirmation by re-measurement ------------------------------------------------------------
//
// A suspected change is re-measured as an interleaved A/B: the build before the change (old)
// and the newest build (new) measured in alternating windows on the same machines, one ratio
// new / old per round, as a campaign's round ratios are (analysis/interval.h). Rounds are taken
// adaptively under a LookPlan: after each round from min to max the interval of the ratios,
// at plan.LevelAt(n) so that all looks together hold the true ratio at plan.confidence, is read:
//   confirmed:    the interval excludes 1 on the suspected side (low > 1 for a suspected rise,
//                 high < 1 for a fall): the change is real and goes the way the detector said;
//   false alarm:  the interval excludes every change of at least the margin on the suspected
//                 side (high < 1 + margin for a rise, low > 1 - margin for a fall): whatever is
//                 there, it is not the change that was reported; this includes an interval on
//                 the other side of 1 and one within the margin;
//   undecided:    neither; more rounds (rounds_needed estimates how many);
//   unconfirmed:  still neither at max rounds: counted as not confirmed, like a false alarm.
// Confirmed is tested first: an interval such as 1.005-1.015 for a suspected rise with margin
// 0.02 is a real change, only smaller than reported. One side is asked about, so a two-sided
// interval at confidence c confirms a change that is not there with probability at most
// (1 - c) / 2 over all the looks.
struct ConfirmationRule {
  double margin = 0.02;
  LookPlan plan = LookPlan::Adaptive(5, 30, 0.90);
};

// Not a ComparisonVerdict (analysis/interval.h): the question is one-sided, whether the change
// suspected in one direction is real, so a change the other way is a false alarm, not "better".
enum class Confirmation { kConfirmed, kFalseAlarm, kUndecided, kUnconfirmed };
const char* ConfirmationName(Confirmation c);  // "confirmed", "false alarm", ...

struct ConfirmationDecision {
  Confirmation decision = Confirmation::kUndecided;
  std::optional<int> rounds_needed;  // undecided only: the estimate, if any n <= max decides
  std::string reason;                // one line a person can check
};

// The decision on `remeasured` (ratios new / old, its interval at the level of this look) for a
// change point whose size estimate says which side it is on. Fewer ratios than plan.min_rounds:
// undecided without a judgement; at plan.max_rounds or more, undecided becomes unconfirmed.
ConfirmationDecision DecideConfirmation(const RatioInterval& remeasured,
                                        const ChangePoint& suspected, const ConfirmationRule& rule);

// The same from the ratios: the interval is LogRatioInterval(ratios, rule.plan.LevelAt(n)).
ConfirmationDecision DecideConfirmation(const std::vector<double>& ratios,
                                        const ChangePoint& suspected, const ConfirmationRule& rule);

}  // namespace benchlab

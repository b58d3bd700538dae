// Confidence intervals on round-paired ratios and the verdicts read from them (docs/methodology.md,
// "Intervals and verdicts"). A target's figure against the baseline's in the same round gives one
// ratio per round; the interval is a Student t interval on the mean of the ratios' logarithms,
// mapped back to the ratio scale. The verdict compares the interval with a margin: the smallest
// difference worth reporting. Pure functions, no state: any thread may call them.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace benchlab {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Which way a figure improves: req/s and requests per CPU-second are better higher; CPU per
// request, latency, start-up and memory are better lower.
enum class Better { kHigher, kLower };

// [stats] of a campaign (docs/campaign.md): the confidence of every interval, and the margin.
struct StatsRule {
  double confidence = 0.95;  // two-sided, 0.5 to 0.999
  double margin = 0.02;      // a fraction: 0.02 is 2%; 0 to 0.5
};

// A two-sided interval on the ratio target / baseline.
struct RatioInterval {
  int n = 0;               // ratios used (finite and > 0)
  double level = kNaN;     // the two-sided confidence of [low, high]
  double estimate = kNaN;  // exp(mean of ln ratio): the geometric mean of the ratios
  double low = kNaN;
  double high = kNaN;
  double log_mean = kNaN;  // mean of ln ratio
  double log_sd = kNaN;    // sample standard deviation of ln ratio (n - 1 in the denominator)
  bool ok() const { return n >= 2; }
};

// The t interval at `level` on ln(ratio): log_mean ± t(level, n - 1) · log_sd / √n, then exp().
// Ratios that are not finite or not above 0 are left out. Fewer than 2 usable ratios: n is set
// and the rest is NaN (an interval needs a spread to be estimated from).
RatioInterval LogRatioInterval(const std::vector<double>& ratios, double level);

// The two-sided Student t quantile: t such that P(|T| <= t) = level with `df` degrees of freedom
// (fractional df, as Welch's interval has, allowed). NaN unless df > 0 and 0 < level < 1.
double StudentT(double level, double df);

// The verdict of a comparison of two figures, from its interval and the margin m, for a figure
// better `higher` (req/s) or lower (CPU per request, latency, memory):
//   better:       the whole interval is beyond the margin on the better side
//                 (low > 1 + m when higher is better, high < 1 - m when lower is);
//   worse:        the whole interval is beyond the margin on the worse side;
//   close:        the whole interval lies inside [1 - m, 1 + m];
//   inconclusive: none of these (the interval reaches across an edge of the margin);
//   n/a:          no interval (fewer than 2 ratios).
// One enum for every comparison of a figure against a reference: a target against the
// campaign's baseline in a report (the interval's verdict, and the noise-floor rule's, which is
// never inconclusive), B against A in `benchlab compare` (interval and noise-floor rule alike),
// and a series' level after a change point against before it.
//
// Three verdicts stay apart, because they answer other questions:
//   - a window's Verdict (coordinator/outcome.h: valid, invalid, failed, skipped): whether it was
//     measured well, not how it compares;
//   - a re-measurement's Confirmation (analysis/changepoint.h: confirmed, false alarm, ...):
//     whether a change suspected in one direction is real, a one-sided question in which a
//     change the other way is a false alarm, not "better";
//   - a gate's GateAuditVerdict (analysis/gate_audit.h: earned, noise, undecided): whether the
//     windows it refused lay further off than those it kept.
enum class ComparisonVerdict { kNotApplicable, kClose, kBetter, kWorse, kInconclusive };
inline constexpr int kComparisonVerdictCount = 5;

// How better and worse are written, as the outputs have always written them (docs/report.md,
// docs/history.md, docs/compare.md): a report says a target is "ahead" of or "behind" the
// baseline, and a series' change point the level after it of the level before; `benchlab
// compare` says B is "better" or "worse" than A. n/a, close and inconclusive read alike.
enum class VerdictWords { kAheadBehind, kBetterWorse };
// "n/a", "close", "ahead" / "better", "behind" / "worse", "inconclusive".
const char* ComparisonVerdictName(ComparisonVerdict v,
                                  VerdictWords words = VerdictWords::kAheadBehind);

ComparisonVerdict JudgeInterval(const RatioInterval& interval, Better better, double margin);

// About how many rounds an inconclusive comparison would need, were the mean and spread of its
// log ratios to stay as measured: the smallest n (above interval.n, at most `limit`) whose half
// width t(level_at(n), n - 1) · log_sd / √n no longer reaches across the nearer edge of the
// margin from log_mean. nullopt when no n up to `limit` does (the estimate sits on an edge, or
// the spread is too large), or when the interval is not inconclusive.
std::optional<int> RoundsToDecide(const RatioInterval& interval, double margin, double level,
                                  int limit = 1000);

// Deterministic uniform and standard normal draws: std::mt19937_64 (fully specified by the
// standard) and Box–Muller, so the same seed gives the same draws with any standard library.
class NormalSource {
 public:
  explicit NormalSource(uint64_t seed) : engine_(seed) {}
  double Uniform();  // in (0, 1): 53 random bits, offset by half a step, never 0 nor 1
  double Normal();   // both values of each Box–Muller pair are used

 private:
  std::mt19937_64 engine_;
  std::optional<double> spare_;
};

// The level at which each look of an adaptive plan is taken so that the t intervals of all its
// looks, after every round from min_rounds to max_rounds, hold the true ratio together with
// probability `confidence` when the log ratios are normal (a constant boundary in the manner of
// Pocock's group-sequential tests). The t statistic's distribution depends on neither the mean
// nor the spread, so the level is a property of (min, max, confidence) alone; it is found by
// simulation: up to 100,000 sequences of standard normal draws from a fixed seed, and bisection
// on the level until the share of sequences in which some look's interval misses 0 equals
// 1 - confidence. Deterministic; computed once per (min, max, confidence) and cached
// (thread-safe). Between `confidence` (one look) and Bonferroni's 1 - (1 - confidence) / looks.
double AdaptiveLookLevel(int min_rounds, int max_rounds, double confidence);

// When comparisons are looked at, and at which confidence each look's interval is computed.
//
// A fixed plan (rounds = N) looks once, after its last round, at `confidence`.
//
// An adaptive plan (rounds = { min, max }) looks after every round from min to max and stops a
// cell once every comparison in it is decided. Looking K times at the same confidence would let
// one of K intervals miss far more often than 1 - confidence, so every look is taken at the
// stricter AdaptiveLookLevel: whatever rule picks the look at which a cell stops, the interval
// reported there misses the true ratio with probability at most 1 - confidence (exactly so for
// normal log ratios; bench/stats_sim measures heavy tails, drift and outliers).
// docs/methodology.md, "Rounds until decided".
struct LookPlan {
  int min_rounds = 3;
  int max_rounds = 3;
  double confidence = 0.95;
  bool adaptive = false;

  static LookPlan Fixed(int rounds, double confidence);
  static LookPlan Adaptive(int min_rounds, int max_rounds, double confidence);

  int Looks() const { return adaptive ? max_rounds - min_rounds + 1 : 1; }
  // The two-sided confidence of the interval after `rounds` rounds (for every rounds count: a
  // cell whose invalid windows left it fewer ratios still gets the plan's per-look level).
  double LevelAt(int rounds) const;
};

// One comparison as the report states it: the interval at the plan's level for the number of
// ratios, the verdict, and for an inconclusive one the rounds it would take.
struct IntervalJudgement {
  RatioInterval interval;
  ComparisonVerdict verdict = ComparisonVerdict::kNotApplicable;
  std::optional<int> rounds_needed;  // inconclusive only
  std::string reason;                // one line a person can check
};

IntervalJudgement JudgeRatios(const std::vector<double>& ratios, Better better,
                              const StatsRule& rule, const LookPlan& plan);

// A ratio as the verdicts' reasons write it: three decimals, "1.053".
std::string FormatRatio(double v);

}  // namespace benchlab

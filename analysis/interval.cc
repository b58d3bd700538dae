#include "analysis/interval.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numbers>
#include <tuple>
#include <utility>

#include "common/parse.h"

namespace benchlab {
namespace {

// The margin's edges on the log scale.
double LowEdge(double margin) { return std::log1p(-margin); }
double HighEdge(double margin) { return std::log1p(margin); }

// The verdict of an interval [lo, hi] on the log scale.
ComparisonVerdict JudgeLog(double lo, double hi, Better better, double margin) {
  const bool above = lo > HighEdge(margin);
  const bool below = hi < LowEdge(margin);
  if (above)
    return better == Better::kHigher ? ComparisonVerdict::kBetter : ComparisonVerdict::kWorse;
  if (below)
    return better == Better::kHigher ? ComparisonVerdict::kWorse : ComparisonVerdict::kBetter;
  if (lo >= LowEdge(margin) && hi <= HighEdge(margin)) return ComparisonVerdict::kClose;
  return ComparisonVerdict::kInconclusive;
}

}  // namespace

double StudentT(double level, double df) {
  if (!(df > 0) || !(level > 0 && level < 1)) return kNaN;
  boost::math::students_t dist(df);
  return boost::math::quantile(dist, 0.5 + level / 2);
}

RatioInterval LogRatioInterval(const std::vector<double>& ratios, double level) {
  RatioInterval out;
  out.level = level;
  std::vector<double> logs;
  for (double r : ratios) {
    if (std::isfinite(r) && r > 0) logs.push_back(std::log(r));
  }
  out.n = static_cast<int>(logs.size());
  if (out.n < 2) return out;
  double sum = 0;
  for (double l : logs) sum += l;
  const double mean = sum / out.n;
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  const double sd = std::sqrt(ss / (out.n - 1));
  const double half = StudentT(level, out.n - 1) * sd / std::sqrt(static_cast<double>(out.n));
  out.log_mean = mean;
  out.log_sd = sd;
  out.estimate = std::exp(mean);
  out.low = std::exp(mean - half);
  out.high = std::exp(mean + half);
  return out;
}

const char* ComparisonVerdictName(ComparisonVerdict v, VerdictWords words) {
  const bool ahead = words == VerdictWords::kAheadBehind;
  switch (v) {
    case ComparisonVerdict::kNotApplicable:
      return "n/a";
    case ComparisonVerdict::kClose:
      return "close";
    case ComparisonVerdict::kBetter:
      return ahead ? "ahead" : "better";
    case ComparisonVerdict::kWorse:
      return ahead ? "behind" : "worse";
    case ComparisonVerdict::kInconclusive:
      return "inconclusive";
  }
  return "n/a";
}

ComparisonVerdict JudgeInterval(const RatioInterval& interval, Better better, double margin) {
  if (!interval.ok() || !std::isfinite(interval.low) || !std::isfinite(interval.high)) {
    return ComparisonVerdict::kNotApplicable;
  }
  return JudgeLog(std::log(interval.low), std::log(interval.high), better, margin);
}

std::optional<int> RoundsToDecide(const RatioInterval& interval, double margin, double level,
                                  int limit) {
  if (!interval.ok() || !std::isfinite(interval.log_sd)) return std::nullopt;
  if (JudgeInterval(interval, Better::kHigher, margin) != ComparisonVerdict::kInconclusive) {
    return std::nullopt;
  }
  // The room between the estimate and the nearer edge of the margin: a half width below it
  // leaves the whole interval on one side of that edge (close inside it, ahead/behind beyond).
  const double m = interval.log_mean;
  const double room = std::min(std::fabs(m - HighEdge(margin)), std::fabs(m - LowEdge(margin)));
  if (!(room > 0)) return std::nullopt;
  for (int n = interval.n + 1; n <= limit; ++n) {
    const double half = StudentT(level, n - 1) * interval.log_sd / std::sqrt(double(n));
    if (half < room) return n;
  }
  return std::nullopt;
}

LookPlan LookPlan::Fixed(int rounds, double confidence) {
  return {rounds, rounds, confidence, false};
}

LookPlan LookPlan::Adaptive(int min_rounds, int max_rounds, double confidence) {
  return {min_rounds, max_rounds, confidence, true};
}

double NormalSource::Uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }

double NormalSource::Normal() {
  if (spare_) return std::exchange(spare_, std::nullopt).value();
  const double radius = std::sqrt(-2 * std::log(Uniform()));
  const double angle = 2 * std::numbers::pi * Uniform();
  spare_ = radius * std::sin(angle);
  return radius * std::cos(angle);
}

namespace {

// The share of sequences in which some look's |t| exceeds its quantile at `level`. abs_t holds
// `looks` values per sequence, look k after min_rounds + k rounds.
double MissShare(const std::vector<float>& abs_t, int looks, int min_rounds, double level) {
  std::vector<float> limit(static_cast<size_t>(looks));
  for (int k = 0; k < looks; ++k) {
    limit[static_cast<size_t>(k)] = static_cast<float>(StudentT(level, min_rounds + k - 1));
  }
  const size_t sequences = abs_t.size() / static_cast<size_t>(looks);
  size_t missed = 0;
  for (size_t i = 0; i < sequences; ++i) {
    const float* t = &abs_t[i * static_cast<size_t>(looks)];
    for (size_t k = 0; k < limit.size(); ++k) {
      if (t[k] > limit[k]) {
        ++missed;
        break;
      }
    }
  }
  return static_cast<double>(missed) / static_cast<double>(sequences);
}

double ComputeAdaptiveLookLevel(int min_rounds, int max_rounds, double confidence) {
  const int looks = max_rounds - min_rounds + 1;
  const double alpha = 1 - confidence;
  // At most 20 million |t| values (80 MB): 100,000 sequences up to 200 looks, fewer beyond.
  const size_t sequences =
      std::clamp<size_t>(20'000'000 / static_cast<size_t>(looks), 10'000, 100'000);
  std::vector<float> abs_t;
  abs_t.reserve(sequences * static_cast<size_t>(looks));
  NormalSource draws(0x62656e63686c6162);  // "benchlab"
  for (size_t i = 0; i < sequences; ++i) {
    // Welford's running mean and sum of squares: exact enough at any n.
    double mean = 0, m2 = 0;
    for (int n = 1; n <= max_rounds; ++n) {
      const double x = draws.Normal();
      const double delta = x - mean;
      mean += delta / n;
      m2 += delta * (x - mean);
      if (n < min_rounds) continue;
      const double sd = std::sqrt(m2 / (n - 1));
      abs_t.push_back(static_cast<float>(std::fabs(mean) / (sd / std::sqrt(double(n)))));
    }
  }
  // The miss share falls as the level rises: from about 1 - confidence at `confidence` times
  // the looks' dependence, down to at most alpha at Bonferroni's level.
  double lo = confidence, hi = 1 - alpha / looks;
  for (int i = 0; i < 40; ++i) {
    const double mid = (lo + hi) / 2;
    (MissShare(abs_t, looks, min_rounds, mid) > alpha ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

double AdaptiveLookLevel(int min_rounds, int max_rounds, double confidence) {
  if (min_rounds < 2 || max_rounds <= min_rounds || !(confidence > 0 && confidence < 1)) {
    return confidence;
  }
  static std::mutex mu;
  static std::map<std::tuple<int, int, double>, double> cache;
  const auto key = std::make_tuple(min_rounds, max_rounds, confidence);
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const double level = ComputeAdaptiveLookLevel(min_rounds, max_rounds, confidence);
  std::lock_guard lock(mu);
  return cache.emplace(key, level).first->second;
}

double LookPlan::LevelAt(int /*rounds*/) const {
  return adaptive ? AdaptiveLookLevel(min_rounds, max_rounds, confidence) : confidence;
}

IntervalJudgement JudgeRatios(const std::vector<double>& ratios, Better better,
                              const StatsRule& rule, const LookPlan& plan) {
  IntervalJudgement j;
  int usable = 0;
  for (double r : ratios) usable += std::isfinite(r) && r > 0;
  const double level = plan.LevelAt(usable);
  j.interval = LogRatioInterval(ratios, level);
  j.verdict = JudgeInterval(j.interval, better, rule.margin);
  const RatioInterval& iv = j.interval;
  if (j.verdict == ComparisonVerdict::kNotApplicable) {
    j.reason = "fewer than 2 rounds with a ratio (" + std::to_string(iv.n) + ")";
    return j;
  }
  const std::string ci = FormatRatio(iv.estimate) + " (" + StrFormat("%.4g%%", level * 100) +
                         " CI " + FormatRatio(iv.low) + " to " + FormatRatio(iv.high) + ", " +
                         std::to_string(iv.n) + " rounds)";
  const std::string band = FormatRatio(1 - rule.margin) + " to " + FormatRatio(1 + rule.margin);
  switch (j.verdict) {
    case ComparisonVerdict::kBetter:
    case ComparisonVerdict::kWorse:
      j.reason =
          "ratio " + ci + " lies beyond the margin ±" + StrFormat("%.4g%%", rule.margin * 100);
      break;
    case ComparisonVerdict::kClose:
      j.reason = "ratio " + ci + " lies inside the margin " + band;
      break;
    case ComparisonVerdict::kInconclusive: {
      j.rounds_needed = RoundsToDecide(iv, rule.margin, level);
      j.reason =
          "ratio " + ci + " reaches across the margin ±" + StrFormat("%.4g%%", rule.margin * 100) +
          "; " +
          (j.rounds_needed ? "about " + std::to_string(*j.rounds_needed) + " rounds would decide it"
                           : "no number of rounds up to 1000 would decide it at this spread");
      break;
    }
    case ComparisonVerdict::kNotApplicable:
      break;
  }
  return j;
}

std::string FormatRatio(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace benchlab

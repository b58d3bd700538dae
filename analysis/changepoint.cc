#include "analysis/changepoint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

#include "common/parse.h"

namespace benchlab {
namespace {

// The usable points of a series: ln estimate, the squared SE of the campaign's log mean (NaN
// when it has fewer than 2 usable rounds) and the input index.
struct Usable {
  std::vector<double> x;
  std::vector<double> se2;
  std::vector<size_t> input;
};

// Sums over the ranks below a given one, for the distance from a value to a set (Fenwick tree).
class RankSums {
 public:
  explicit RankSums(size_t n) : count_(n + 1, 0), sum_(n + 1, 0) {}
  void Clear() {
    std::fill(count_.begin(), count_.end(), 0);
    std::fill(sum_.begin(), sum_.end(), 0);
    total_count_ = 0;
    total_sum_ = 0;
  }
  void Add(size_t rank, double v) {
    for (size_t i = rank + 1; i < count_.size(); i += i & (~i + 1)) {
      ++count_[i];
      sum_[i] += v;
    }
    ++total_count_;
    total_sum_ += v;
  }
  // The sum of |v - s| over the values s added so far, v being at `rank`.
  double DistanceTo(size_t rank, double v) const {
    int below = 0;
    double below_sum = 0;
    for (size_t i = rank; i > 0; i -= i & (~i + 1)) {
      below += count_[i];
      below_sum += sum_[i];
    }
    const int above = total_count_ - below;
    const double above_sum = total_sum_ - below_sum;
    return (v * below - below_sum) + (above_sum - v * above);
  }

 private:
  std::vector<int> count_;
  std::vector<double> sum_;
  int total_count_ = 0;
  double total_sum_ = 0;
};

struct Split {
  int tau = -1;  // the first index of the second side, within the segment
  double q = -1;
};

// The split of `ranks` (a segment's values, each given by its rank in `sorted`) with the
// largest energy statistic Q, both sides at least min_segment long. O(n log n).
Split BestSplit(const std::vector<size_t>& ranks, const std::vector<double>& sorted,
                int min_segment, RankSums& sums, std::vector<double>& within_left,
                std::vector<double>& within_right) {
  const int n = static_cast<int>(ranks.size());
  within_left.assign(n + 1, 0);
  within_right.assign(n + 1, 0);
  sums.Clear();
  for (int t = 1; t <= n; ++t) {
    const size_t r = ranks[t - 1];
    within_left[t] = within_left[t - 1] + sums.DistanceTo(r, sorted[r]);
    sums.Add(r, sorted[r]);
  }
  sums.Clear();
  for (int t = n - 1; t >= 0; --t) {
    const size_t r = ranks[t];
    within_right[t] = within_right[t + 1] + sums.DistanceTo(r, sorted[r]);
    sums.Add(r, sorted[r]);
  }
  const double total = within_left[n];
  Split best;
  for (int t = min_segment; t <= n - min_segment; ++t) {
    const double m = t, k = n - t;
    const double between = total - within_left[t] - within_right[t];
    const double e = 2 * between / (m * k) - within_left[t] / (m * (m - 1) / 2) -
                     within_right[t] / (k * (k - 1) / 2);
    const double q = m * k / n * e;
    if (q > best.q) best = {t, q};
  }
  return best;
}

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Test {
  Split split;
  double p = kNaN;
};

// The best split of usable points [a, b) and its permutation test.
Test TestSegment(const std::vector<double>& x, size_t a, size_t b,
                 const ChangePointOptions& options) {
  const size_t n = b - a;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t i, size_t j) { return x[a + i] < x[a + j]; });
  std::vector<double> sorted(n);
  std::vector<size_t> ranks(n);
  for (size_t r = 0; r < n; ++r) {
    sorted[r] = x[a + order[r]] - x[a + order[0]];  // distances only: shift for precision
    ranks[order[r]] = r;
  }
  RankSums sums(n);
  std::vector<double> left, right;
  Test test;
  test.split = BestSplit(ranks, sorted, options.min_segment, sums, left, right);
  // Besag & Clifford: stop once (1 + at_or_above) / (1 + permutations) > significance.
  const int permutations = std::max(1, options.permutations);
  const double stop_at = options.significance * (1 + permutations) - 1;
  const double tolerance = 1e-12 * std::max(1.0, std::fabs(test.split.q));
  NormalSource rng(SplitMix64(options.seed ^ SplitMix64((uint64_t(a) << 32) | b)));
  int at_or_above = 0;
  int done = 0;
  while (done < permutations) {
    for (size_t i = n - 1; i > 0; --i) {
      const size_t j = std::min(i, static_cast<size_t>(rng.Uniform() * double(i + 1)));
      std::swap(ranks[i], ranks[j]);
    }
    ++done;
    const Split s = BestSplit(ranks, sorted, options.min_segment, sums, left, right);
    if (s.q >= test.split.q - tolerance) ++at_or_above;
    if (at_or_above > stop_at) break;
  }
  test.p = (1.0 + at_or_above) / (1.0 + done);
  return test;
}

struct Size {
  RatioInterval interval;
  double log_se = kNaN;
  double df = kNaN;
  int before_n = 0;
  int after_n = 0;
};

// Mean and floored variance of usable points [a, b).
std::pair<double, double> SideMoments(const Usable& u, size_t a, size_t b) {
  const double n = double(b - a);
  double sum = 0;
  for (size_t i = a; i < b; ++i) sum += u.x[i];
  const double mean = sum / n;
  double ss = 0, se2_sum = 0;
  int se2_n = 0;
  for (size_t i = a; i < b; ++i) {
    ss += (u.x[i] - mean) * (u.x[i] - mean);
    if (std::isfinite(u.se2[i])) {
      se2_sum += u.se2[i];
      ++se2_n;
    }
  }
  const double sample = b - a >= 2 ? ss / (n - 1) : 0;
  const double floor = se2_n > 0 ? se2_sum / se2_n : 0;
  return {mean, std::max(sample, floor)};
}

// The size of a change at usable index t between sides [a, t) and [t, b).
Size SizeOf(const Usable& u, size_t a, size_t t, size_t b, double confidence) {
  Size s;
  s.before_n = static_cast<int>(t - a);
  s.after_n = static_cast<int>(b - t);
  const auto [mean_b, var_b] = SideMoments(u, a, t);
  const auto [mean_a, var_a] = SideMoments(u, t, b);
  const double vb = var_b / s.before_n, va = var_a / s.after_n;
  const double d = mean_a - mean_b;
  const double v = vb + va;
  s.df = v > 0 ? v * v / (vb * vb / (s.before_n - 1) + va * va / (s.after_n - 1))
               : double(s.before_n + s.after_n - 2);
  s.log_se = std::sqrt(v);
  const double half = v > 0 ? StudentT(confidence, s.df) * s.log_se : 0;
  RatioInterval& iv = s.interval;
  iv.n = s.before_n + s.after_n;
  iv.level = confidence;
  iv.log_mean = d;
  iv.estimate = std::exp(d);
  iv.low = std::exp(d - half);
  iv.high = std::exp(d + half);
  return s;
}

// A size worth reporting: its interval excludes 1 and its estimate lies beyond the margin.
bool Reportable(const RatioInterval& iv, double margin) {
  const bool beyond = iv.estimate > 1 + margin || iv.estimate < 1 - margin;
  return (iv.low > 1 || iv.high < 1) && beyond;
}

}  // namespace

const char* ChangeDirectionName(ChangeDirection d) {
  return d == ChangeDirection::kRegression ? "regression" : "improvement";
}

double CampaignLogSe(const std::vector<double>& rounds) {
  std::vector<double> logs;
  for (double r : rounds) {
    if (std::isfinite(r) && r > 0) logs.push_back(std::log(r));
  }
  if (logs.size() < 2) return kNaN;
  const double n = double(logs.size());
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / n;
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  return std::sqrt(ss / (n - 1) / n);
}

ChangePointResult DetectChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointOptions& options) {
  ChangePointResult result;
  Usable u;
  for (size_t i = 0; i < series.size(); ++i) {
    const double e = series[i].estimate;
    if (!std::isfinite(e) || !(e > 0)) {
      result.skipped.push_back(i);
      continue;
    }
    const double se = CampaignLogSe(series[i].rounds);
    u.x.push_back(std::log(e));
    u.se2.push_back(se * se);
    u.input.push_back(i);
  }
  const size_t min_segment = static_cast<size_t>(std::max(2, options.min_segment));
  ChangePointOptions opts = options;
  opts.min_segment = static_cast<int>(min_segment);

  // Bisection: the change points found (usable indices) with their tests.
  struct Found {
    size_t t;
    Test test;
  };
  std::vector<Found> found;
  // The bisection's segments [a, b) still to search: a kept split puts both halves back.
  std::vector<std::pair<size_t, size_t>> unsearched = {{0, u.x.size()}};
  while (!unsearched.empty()) {
    const auto [a, b] = unsearched.back();
    unsearched.pop_back();
    if (b - a < 2 * min_segment) continue;
    const Test test = TestSegment(u.x, a, b, opts);
    ++result.tests;
    if (!(test.p <= options.significance)) continue;
    const size_t t = a + static_cast<size_t>(test.split.tau);
    if (!Reportable(SizeOf(u, a, t, b, options.confidence).interval, options.margin)) continue;
    found.push_back({t, test});
    unsearched.push_back({t, b});
    unsearched.push_back({a, t});
  }
  std::sort(found.begin(), found.end(), [](const Found& x, const Found& y) { return x.t < y.t; });

  // Sizes between final neighbours; the weakest change point no longer reportable goes, until
  // none is.
  std::vector<Size> sizes;
  for (;;) {
    sizes.clear();
    for (size_t i = 0; i < found.size(); ++i) {
      const size_t a = i == 0 ? 0 : found[i - 1].t;
      const size_t b = i + 1 == found.size() ? u.x.size() : found[i + 1].t;
      sizes.push_back(SizeOf(u, a, found[i].t, b, options.confidence));
    }
    std::optional<size_t> weakest;
    double weakest_z = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (Reportable(sizes[i].interval, options.margin)) continue;
      const double z = std::fabs(sizes[i].interval.log_mean) / sizes[i].log_se;
      if (!weakest || z < weakest_z) {
        weakest = i;
        weakest_z = z;
      }
    }
    if (!weakest) break;
    found.erase(found.begin() + static_cast<std::ptrdiff_t>(*weakest));
  }

  for (size_t i = 0; i < found.size(); ++i) {
    ChangePoint cp;
    cp.index = u.input[found[i].t];
    cp.campaign_id = series[cp.index].campaign_id;
    cp.old_index = u.input[found[i].t - 2];  // found[i].t >= min_segment >= 2
    cp.statistic = found[i].test.split.q;
    cp.p_value = found[i].test.p;
    cp.before_n = sizes[i].before_n;
    cp.after_n = sizes[i].after_n;
    cp.size = sizes[i].interval;
    cp.log_se = sizes[i].log_se;
    cp.df = sizes[i].df;
    const bool higher = cp.size.estimate > 1;
    cp.direction = higher == (options.better == Better::kHigher) ? ChangeDirection::kImprovement
                                                                 : ChangeDirection::kRegression;
    cp.verdict = JudgeInterval(cp.size, options.better, options.margin);
    result.change_points.push_back(cp);
  }
  return result;
}

const char* ConfirmationName(Confirmation c) {
  switch (c) {
    case Confirmation::kConfirmed:
      return "confirmed";
    case Confirmation::kFalseAlarm:
      return "false alarm";
    case Confirmation::kUndecided:
      return "undecided";
    case Confirmation::kUnconfirmed:
      return "unconfirmed";
  }
  return "?";
}

ConfirmationDecision DecideConfirmation(const RatioInterval& remeasured,
                                        const ChangePoint& suspected,
                                        const ConfirmationRule& rule) {
  ConfirmationDecision d;
  const LookPlan& plan = rule.plan;
  const bool rise = suspected.size.estimate > 1;
  const std::string side = rise ? "rise" : "fall";
  if (!remeasured.ok() || remeasured.n < plan.min_rounds || !std::isfinite(remeasured.low) ||
      !std::isfinite(remeasured.high)) {
    d.decision = Confirmation::kUndecided;
    d.rounds_needed = plan.min_rounds;
    d.reason = std::to_string(remeasured.n) + " re-measured rounds; the first look is after " +
               std::to_string(plan.min_rounds);
    return d;
  }
  const std::string ci = FormatRatio(remeasured.estimate) + " (" + FormatRatio(remeasured.low) +
                         "-" + FormatRatio(remeasured.high) + ")";
  const double lo = std::log(remeasured.low), hi = std::log(remeasured.high);
  const double edge = rise ? std::log1p(rule.margin) : std::log1p(-rule.margin);
  if (rise ? lo > 0 : hi < 0) {
    d.decision = Confirmation::kConfirmed;
    d.reason = "new/old " + ci + " excludes 1: the " + side + " is confirmed";
    return d;
  }
  if (rise ? hi < edge : lo > edge) {
    d.decision = Confirmation::kFalseAlarm;
    d.reason = "new/old " + ci + " excludes a " + side + " of " +
               StrFormat("%.4g%%", rule.margin * 100) + " or more: a false alarm";
    return d;
  }
  if (remeasured.n >= plan.max_rounds) {
    d.decision = Confirmation::kUnconfirmed;
    d.reason = "new/old " + ci + " still undecided after " + std::to_string(remeasured.n) +
               " rounds: not confirmed";
    return d;
  }
  d.decision = Confirmation::kUndecided;
  // Decided once the half width falls below the distance from the estimate to the farther of
  // the two edges that decide (1 for confirmed, 1 +/- margin for false alarm).
  const double m = remeasured.log_mean;
  const double room = rise ? std::max(m, edge - m) : std::max(-m, m - edge);
  if (std::isfinite(remeasured.log_sd) && room > 0) {
    for (int n = remeasured.n + 1; n <= plan.max_rounds; ++n) {
      const double half = StudentT(plan.LevelAt(n), n - 1) * remeasured.log_sd / std::sqrt(n);
      if (half < room) {
        d.rounds_needed = n;
        break;
      }
    }
  }
  d.reason =
      "new/old " + ci + " reaches from 1 across the margin; " +
      (d.rounds_needed ? "about " + std::to_string(*d.rounds_needed) + " rounds would decide it"
                       : "no number of rounds up to " + std::to_string(plan.max_rounds) +
                             " would decide it at this spread");
  return d;
}

ConfirmationDecision DecideConfirmation(const std::vector<double>& ratios,
                                        const ChangePoint& suspected,
                                        const ConfirmationRule& rule) {
  int n = 0;
  for (double r : ratios) n += std::isfinite(r) && r > 0;
  return DecideConfirmation(LogRatioInterval(ratios, rule.plan.LevelAt(n)), suspected, rule);
}

}  // namespace benchlab

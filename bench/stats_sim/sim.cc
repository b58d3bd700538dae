#include "bench/stats_sim/sim.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>

namespace benchlab::stats_sim {
namespace {

// One window's ln figure minus its true level, at time `time` (in rounds since the first).
double WindowNoise(const Figure& figure, Noise noise, double time, Rng& rng) {
  const double s = figure.window_log_sd;
  switch (noise) {
    case Noise::kHeavyTailed:
      return s * rng.StudentT3() / std::sqrt(3.0);
    case Noise::kDrift:
      return s * rng.Normal() + kDriftPerRound * time;
    case Noise::kLognormal:
    case Noise::kOutlier:
      break;
  }
  return s * rng.Normal();
}

// What the look after `rounds` rounds, at `level`, says.
struct Look {
  IntervalVerdict verdict;
  bool covered;
};

Look LookAt(const std::vector<double>& ratios, int rounds, double level, const Scenario& s) {
  const std::vector<double> seen(ratios.begin(), ratios.begin() + rounds);
  const RatioInterval iv = LogRatioInterval(seen, level);
  return {JudgeInterval(iv, s.figure.better, s.margin),
          iv.low <= s.true_ratio && s.true_ratio <= iv.high};
}

// Runs one campaign's looks under `rule` and adds where it stopped to `tally`.
void Judge(const std::vector<double>& ratios, const LookRule& rule, const Scenario& s,
           Tally& tally) {
  for (size_t i = 0; i < rule.rounds.size(); ++i) {
    const Look look = LookAt(ratios, rule.rounds[i], rule.levels[i], s);
    if (look.verdict != IntervalVerdict::kInconclusive || i + 1 == rule.rounds.size()) {
      ++tally.campaigns;
      tally.covered += look.covered;
      ++tally.verdicts[static_cast<size_t>(look.verdict)];
      tally.rounds += rule.rounds[i];
      return;
    }
  }
}

}  // namespace

const char* NoiseName(Noise noise) {
  switch (noise) {
    case Noise::kLognormal:
      return "lognormal";
    case Noise::kHeavyTailed:
      return "t3";
    case Noise::kDrift:
      return "drift";
    case Noise::kOutlier:
      return "outlier";
  }
  return "?";
}

double Rng::Uniform() {
  // The top 53 bits, offset by half a step: (k + 0.5) / 2^53 is never 0 nor 1.
  return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::Normal() {
  if (spare_) return std::exchange(spare_, std::nullopt).value();
  const double radius = std::sqrt(-2 * std::log(Uniform()));
  const double angle = 2 * std::numbers::pi * Uniform();
  spare_ = radius * std::sin(angle);
  return radius * std::cos(angle);
}

double Rng::StudentT3() {
  const double z = Normal();
  double chi2 = 0;
  for (int i = 0; i < 3; ++i) {
    const double x = Normal();
    chi2 += x * x;
  }
  return z / std::sqrt(chi2 / 3);
}

std::vector<double> DrawRatios(const Figure& figure, Noise noise, double true_ratio, int rounds,
                               Rng& rng) {
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(rounds));
  for (int r = 1; r <= rounds; ++r) {
    const bool baseline_first = r % 2 == 1;
    const double first = r - 1;
    const double second = first + kDriftGapRounds;
    const double baseline = WindowNoise(figure, noise, baseline_first ? first : second, rng);
    double target =
        std::log(true_ratio) + WindowNoise(figure, noise, baseline_first ? second : first, rng);
    if (noise == Noise::kOutlier && r == kOutlierRound) {
      const double worse = std::log(kOutlierFactor);
      target += figure.better == Better::kHigher ? worse : -worse;
    }
    ratios.push_back(std::exp(target - baseline));
  }
  return ratios;
}

LookRule CommittedRule(const LookPlan& plan) {
  LookRule rule;
  char name[64];
  if (plan.adaptive) {
    std::snprintf(name, sizeof name, "adaptive %d-%d", plan.min_rounds, plan.max_rounds);
  } else {
    std::snprintf(name, sizeof name, "fixed %d", plan.max_rounds);
  }
  rule.name = name;
  for (int n = plan.adaptive ? plan.min_rounds : plan.max_rounds; n <= plan.max_rounds; ++n) {
    rule.rounds.push_back(n);
    rule.levels.push_back(plan.LevelAt(n));
  }
  return rule;
}

LookRule ConstantLevelRule(int min_rounds, int max_rounds, double level) {
  LookRule rule;
  char name[64];
  std::snprintf(name, sizeof name, "constant %d-%d at %.5f", min_rounds, max_rounds, level);
  rule.name = name;
  for (int n = min_rounds; n <= max_rounds; ++n) {
    rule.rounds.push_back(n);
    rule.levels.push_back(level);
  }
  return rule;
}

LookRule BonferroniRule(std::vector<int> rounds, double confidence) {
  LookRule rule;
  rule.name = "bonferroni at";
  for (int n : rounds) rule.name += " " + std::to_string(n);
  const double level = 1 - (1 - confidence) / static_cast<double>(rounds.size());
  rule.levels.assign(rounds.size(), level);
  rule.rounds = std::move(rounds);
  return rule;
}

double CalibrateConstantLevel(int min_rounds, int max_rounds, double confidence, int sequences,
                              std::uint64_t seed) {
  std::vector<boost::math::students_t> t;
  for (int n = min_rounds; n <= max_rounds; ++n) t.emplace_back(n - 1);
  Rng rng(seed);
  std::vector<double> smallest_p;
  smallest_p.reserve(static_cast<size_t>(sequences));
  for (int i = 0; i < sequences; ++i) {
    double sum = 0, sum_sq = 0, p_min = 1;
    for (int n = 1; n <= max_rounds; ++n) {
      const double x = rng.Normal();
      sum += x;
      sum_sq += x * x;
      if (n < min_rounds) continue;
      const double mean = sum / n;
      const double sd = std::sqrt((sum_sq - n * mean * mean) / (n - 1));
      const double stat = std::fabs(mean) / (sd / std::sqrt(double(n)));
      const double p = 2 * boost::math::cdf(boost::math::complement(t[n - min_rounds], stat));
      p_min = std::min(p_min, p);
    }
    smallest_p.push_back(p_min);
  }
  // Every look covers when each look's p-value is at least its alpha: P(min p >= alpha') =
  // confidence at the (1 - confidence) quantile of min p.
  const auto k = static_cast<size_t>((1 - confidence) * sequences);
  std::nth_element(smallest_p.begin(), smallest_p.begin() + static_cast<long>(k), smallest_p.end());
  return 1 - smallest_p[k];
}

double Tally::Coverage() const { return campaigns ? double(covered) / campaigns : kNaN; }

double Tally::Share(IntervalVerdict verdict) const {
  return campaigns ? double(verdicts[static_cast<size_t>(verdict)]) / campaigns : kNaN;
}

double Tally::MeanRounds() const { return campaigns ? double(rounds) / campaigns : kNaN; }

std::vector<Tally> Simulate(const Scenario& scenario, const std::vector<LookRule>& rules,
                            int campaigns, std::uint64_t seed) {
  int rounds = 0;
  for (const LookRule& rule : rules) rounds = std::max(rounds, rule.rounds.back());
  Rng rng(seed);
  std::vector<Tally> tallies(rules.size());
  for (int c = 0; c < campaigns; ++c) {
    const std::vector<double> ratios =
        DrawRatios(scenario.figure, scenario.noise, scenario.true_ratio, rounds, rng);
    for (size_t i = 0; i < rules.size(); ++i) Judge(ratios, rules[i], scenario, tallies[i]);
  }
  return tallies;
}

}  // namespace benchlab::stats_sim

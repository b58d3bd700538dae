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
  ComparisonVerdict verdict;
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
    if (look.verdict != ComparisonVerdict::kInconclusive || i + 1 == rule.rounds.size()) {
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

std::vector<int> EveryRound(int min_rounds, int max_rounds) {
  std::vector<int> out;
  for (int n = min_rounds; n <= max_rounds; ++n) out.push_back(n);
  return out;
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

double Tally::Coverage() const { return campaigns ? double(covered) / campaigns : kNaN; }

double Tally::Share(ComparisonVerdict verdict) const {
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

// stats_sim: synthetic campaigns with a known true ratio, judged by the intervals and verdicts of
// analysis/interval.h, to measure how often the interval covers the true ratio, how often each
// verdict comes out, and how many rounds an adaptive plan spends (docs/methodology.md, "Intervals
// and verdicts" and "Rounds until decided"). Used by bench/stats_sim/main.cc (the full table) and
// by tests/unit/analysis/stats_sim_test.cc (the error-rate checks at fewer campaigns).
//
// One simulated cell: per round r = 1, 2, ... the target and the baseline are measured once each;
// a window's figure is exp(ln true level + noise + drift), the baseline's true level is 1 and the
// target's is the true ratio, and round r's ratio is target_r / baseline_r, as the coordinator
// pairs them. The rotation alternates which of the two goes first: the baseline in odd rounds,
// the target in even ones. Every draw comes from one std::mt19937_64 per call, seeded by the
// caller, with the normal and Student t draws made here (Box–Muller), so the same seed gives the
// same campaigns on every platform and standard library.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analysis/interval.h"
#include "analysis/stats.h"

namespace benchlab::stats_sim {

// --- noise measured on this machine ----------------------------------------------------------
// From the runs of record docs/results/frameworks-{bun,crosscheck,node,runtimes}.json (measured
// 2026-11-30), by bench/stats_sim/measure_spreads.py:
//
// The window's log-scale SD. The pooled sample SD of ln(ratio) over the rounds of all 73
// (cell, target) pairs of the four campaigns (133 degrees of freedom: sum((n-1) s^2) / sum(n-1))
// is 0.1399 for req/s and 0.1400 for CPU per request; a ratio is the quotient of two independent
// windows of equal spread, so one window's SD is that / sqrt(2). (The median of the pairs' SDs is
// 0.0950 and 0.0935, and the pooled SD of the five noise windows per campaign, the baseline's
// /json cell spread through each run, 0.1318 and 0.1129: the pooled figure is the widest of the
// round-to-round estimates and the one the t interval's sample variance sees.)
inline constexpr double kReqPerSecondWindowLogSd = 0.0989;
inline constexpr double kCpuPerRequestWindowLogSd = 0.0990;
// Drift. Least-squares slope of ln(window figure) minus its (cell, target) mean against the
// round, per campaign: from -0.0309 (node.json req/s) to +0.0315 (node.json CPU per request); its
// largest magnitude, per round. Against the window's position within its round the slope was at
// most 0.0095 per whole round (crosscheck.json), so taking the two windows of a cell a whole round
// apart at the steepest trend (kDriftGapRounds) overstates the within-round drift the rotation has
// to cancel.
inline constexpr double kDriftPerRound = 0.0315;
inline constexpr double kDriftGapRounds = 1.0;
// The outlier round: the target's window of this round is 30% worse (req/s x 0.7, CPU per
// request / 0.7); round 2 lies inside every plan's first look.
inline constexpr int kOutlierRound = 2;
inline constexpr double kOutlierFactor = 0.7;

// A simulated figure: its window spread and which way is better.
struct Figure {
  const char* name;
  double window_log_sd;
  Better better;
};
inline constexpr Figure kReqPerSecond{"req/s", kReqPerSecondWindowLogSd, Better::kHigher};
inline constexpr Figure kCpuPerRequest{"CPU/request", kCpuPerRequestWindowLogSd, Better::kLower};

// Noise models of a window's ln figure, each with the figure's window SD s:
//   kLognormal:   s * Z, Z standard normal;
//   kHeavyTailed: s * T / sqrt(3), T Student t with 3 degrees of freedom (variance 3), so the
//                 same SD with far heavier tails;
//   kDrift:       s * Z plus kDriftPerRound * t, t the window's time in rounds: (r - 1) for the
//                 round's first window, plus kDriftGapRounds for its second;
//   kOutlier:     s * Z, and round kOutlierRound's target window kOutlierFactor worse.
enum class Noise { kLognormal, kHeavyTailed, kDrift, kOutlier };
inline constexpr std::array<Noise, 4> kNoises = {Noise::kLognormal, Noise::kHeavyTailed,
                                                 Noise::kDrift, Noise::kOutlier};
const char* NoiseName(Noise noise);  // "lognormal", "t3", "drift", "outlier"

// Uniform, normal and Student t draws from a seeded std::mt19937_64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : source_(seed) {}
  double Uniform() { return source_.Uniform(); }  // in (0, 1), never 0
  double Normal() { return source_.Normal(); }    // NormalSource: Box–Muller on mt19937_64
  double StudentT3();                             // Z / sqrt((Z1^2 + Z2^2 + Z3^2) / 3)

 private:
  NormalSource source_;
};

// The ratios target_r / baseline_r of rounds 1..rounds of one simulated cell.
std::vector<double> DrawRatios(const Figure& figure, Noise noise, double true_ratio, int rounds,
                               Rng& rng);

// When a campaign looks at its interval and at which confidence: after rounds[i] rounds at
// levels[i], rounds ascending. A campaign stops at the first look whose verdict is not
// inconclusive, or at the last.
struct LookRule {
  std::string name;
  std::vector<int> rounds;
  std::vector<double> levels;
};
// The committed plan (analysis/interval.h): a fixed plan's one look, or an adaptive plan's looks
// after every round from min to max, each at plan.LevelAt(rounds).
LookRule CommittedRule(const LookPlan& plan);
// The rounds from min to max, for BonferroniRule.
std::vector<int> EveryRound(int min_rounds, int max_rounds);
// Looks at the given rounds only, each at 1 - (1 - confidence) / (number of looks) (Bonferroni).
LookRule BonferroniRule(std::vector<int> rounds, double confidence);

// What a set of campaigns under one rule came to.
struct Tally {
  int campaigns = 0;
  int covered = 0;                // the interval at the stopping look held the true ratio
  std::array<int, 5> verdicts{};  // indexed by ComparisonVerdict
  long long rounds = 0;           // summed over campaigns: rounds at the stopping look

  double Coverage() const;
  double Share(ComparisonVerdict verdict) const;
  double MeanRounds() const;
};

// One cell's setting: figure, noise model, true ratio and the verdicts' margin.
struct Scenario {
  Figure figure = kReqPerSecond;
  Noise noise = Noise::kLognormal;
  double true_ratio = 1.0;
  double margin = 0.02;
};

// `campaigns` campaigns of `scenario` drawn from `seed`, each judged under every rule (the same
// campaigns for every rule: a campaign's rounds are drawn once, up to the largest last look).
// One Tally per rule, in order.
std::vector<Tally> Simulate(const Scenario& scenario, const std::vector<LookRule>& rules,
                            int campaigns, std::uint64_t seed);

}  // namespace benchlab::stats_sim

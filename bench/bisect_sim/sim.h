// bisect_sim: bisections of a range of commits with one culprit of known size at a known place,
// run with the range logic and the decision rule of analysis/bisect.h (docs/methodology.md,
// "Bisection"). Used by bench/bisect_sim/main.cc (the table of bench/README.md) and by
// tests/unit/analysis/bisect_sim_test.cc (the same figures at fewer bisections).
//
// One simulated bisection: commits 0..commits-1, commit 0 good and the last bad; the commits
// from `culprit` on cost 1 + step times the CPU per request of those before it. A round at a
// candidate measures the candidate, the good end and the bad end once each; a window's ln
// figure is ln(true level) + a shift shared by the round's three windows (the machine between
// rounds, which the pairing cancels) + the window's own noise. The window noise's SD is
// pair_log_sd / sqrt(2), so that the ratio of two windows of one round has the log SD
// pair_log_sd: the "paired-round noise" of a figure. Lognormal, or Student t3 scaled to the same
// SD (stats_sim's heavy-tailed model). Each candidate takes rounds until Decide says like good,
// like bad or undecided; a commit fails to build with probability build_failure.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/bisect.h"
#include "bench/stats_sim/sim.h"

namespace benchlab::bisect_sim {

using stats_sim::Noise;
using stats_sim::Rng;

// The log SD of a round's ratio of two windows of CPU per request that the simulation assumes
// by default: 0.025, inside the 2-3% that repeated rounds of one cell's CPU per request show
// here on a quiet run (see bench/README.md, "bisect_sim", for what it rests on and what not).
inline constexpr double kDefaultPairLogSd = 0.025;

struct Setting {
  int commits = 64;
  int culprit = 32;   // the first bad commit, 1..commits-1
  double step = 0.1;  // the regression: bad / good - 1
  double pair_log_sd = kDefaultPairLogSd;
  double round_log_sd = 0.03;       // shared by a round's windows
  Noise noise = Noise::kLognormal;  // kLognormal or kHeavyTailed
  double build_failure = 0;         // chance that a commit fails to build
};

struct Outcome {
  BisectOutcome outcome = BisectOutcome::kRunning;
  bool right = false;  // found, and the culprit found is the true one
  bool wrong = false;  // found another commit
  // Unsplittable: whether the true culprit is among the commits the result leaves open (the
  // listed ones and the first bad commit).
  bool culprit_open = false;
  int measured = 0;       // candidates measured (to a decision or to undecided)
  int undecided = 0;      // of which undecided
  int wrong_steps = 0;    // decisions on the wrong side of the true culprit
  long long rounds = 0;   // rounds over all candidates (3 windows each)
  double confidence = 1;  // SearchConfidence of its decisions
};

// One bisection from `seed`.
Outcome RunBisection(const Setting& setting, const BisectRule& rule, std::uint64_t seed);

struct Tally {
  int bisections = 0;
  int right = 0;
  int wrong = 0;
  int unsplittable = 0;
  int unsplittable_open = 0;  // of which the culprit is among those left open
  long long measured = 0;
  int max_measured = 0;
  long long undecided = 0;
  long long wrong_steps = 0;
  long long rounds = 0;
  double min_confidence = 1;

  void Add(const Outcome& o);
  double RightShare() const;
  double WrongShare() const;
  double UnsplittableShare() const;
  double MeanMeasured() const;
  double MeanRounds() const;
  double UndecidedPerBisection() const;
};

// `bisections` bisections of `setting` (bisection i from seed + i), on `threads` threads; the
// same result for any number of threads.
Tally Simulate(const Setting& setting, const BisectRule& rule, int bisections, std::uint64_t seed,
               int threads = 1);

}  // namespace benchlab::bisect_sim

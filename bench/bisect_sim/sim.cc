#include "bench/bisect_sim/sim.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

namespace benchlab::bisect_sim {
namespace {

double BisectWindowNoise(const Setting& s, Rng& rng) {
  const double sd = s.pair_log_sd / std::sqrt(2.0);
  if (s.noise == Noise::kHeavyTailed) return sd * rng.StudentT3() / std::sqrt(3.0);
  return sd * rng.Normal();
}

}  // namespace

Outcome RunBisection(const Setting& s, const BisectRule& rule, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BisectCommit> commits;
  for (int i = 0; i < s.commits; ++i) commits.push_back({"c" + std::to_string(i), ""});
  BisectRange range = MakeBisectRange(std::move(commits)).value();
  const double bad_level = std::log1p(s.step);
  auto level = [&](size_t i) { return static_cast<int>(i) >= s.culprit ? bad_level : 0.0; };
  Outcome out;
  std::vector<double> errors;
  while (std::optional<size_t> next = range.Next()) {
    const size_t c = *next;
    if (s.build_failure > 0 && rng.Uniform() < s.build_failure) {
      (void)range.Mark(c, CommitState::kBuildFailed);
      continue;
    }
    std::vector<BisectRound> rounds;
    StepDecision d;
    for (int r = 1; r <= rule.max_rounds; ++r) {
      const double shift = s.round_log_sd * rng.Normal();
      BisectRound round;
      round.good = std::exp(shift + BisectWindowNoise(s, rng));
      round.candidate = std::exp(level(c) + shift + BisectWindowNoise(s, rng));
      round.bad = std::exp(bad_level + shift + BisectWindowNoise(s, rng));
      rounds.push_back(round);
      if (r < rule.min_rounds) continue;
      d = Decide(rounds, rule);
      if (d.decision != BisectDecision::kMoreRounds) break;
    }
    out.rounds += static_cast<long long>(rounds.size());
    ++out.measured;
    CommitState state = CommitState::kUndecided;
    if (d.decision == BisectDecision::kLikeGood) state = CommitState::kGood;
    if (d.decision == BisectDecision::kLikeBad) state = CommitState::kBad;
    if (state == CommitState::kUndecided) ++out.undecided;
    const bool truly_bad = static_cast<int>(c) >= s.culprit;
    if ((state == CommitState::kGood && truly_bad) || (state == CommitState::kBad && !truly_bad)) {
      ++out.wrong_steps;
    }
    errors.push_back(d.error_bound);
    (void)range.Mark(c, state);
  }
  const BisectResult result = range.Result();
  out.outcome = result.outcome;
  out.confidence = SearchConfidence(errors);
  if (result.outcome == BisectOutcome::kFound) {
    out.right = static_cast<int>(*result.culprit) == s.culprit;
    out.wrong = !out.right;
  } else if (result.outcome == BisectOutcome::kUnsplittable) {
    const auto culprit = static_cast<size_t>(s.culprit);
    out.culprit_open = culprit == result.first_bad ||
                       std::find(result.unsplittable.begin(), result.unsplittable.end(), culprit) !=
                           result.unsplittable.end();
  }
  return out;
}

void Tally::Add(const Outcome& o) {
  ++bisections;
  right += o.right;
  wrong += o.wrong;
  const bool split = o.outcome == BisectOutcome::kUnsplittable;
  unsplittable += split;
  unsplittable_open += split && o.culprit_open;
  measured += o.measured;
  max_measured = std::max(max_measured, o.measured);
  undecided += o.undecided;
  wrong_steps += o.wrong_steps;
  rounds += o.rounds;
  min_confidence = std::min(min_confidence, o.confidence);
}

double Tally::RightShare() const { return bisections ? double(right) / bisections : 0; }
double Tally::WrongShare() const { return bisections ? double(wrong) / bisections : 0; }
double Tally::UnsplittableShare() const {
  return bisections ? double(unsplittable) / bisections : 0;
}
double Tally::MeanMeasured() const { return bisections ? double(measured) / bisections : 0; }
double Tally::MeanRounds() const { return bisections ? double(rounds) / bisections : 0; }
double Tally::UndecidedPerBisection() const {
  return bisections ? double(undecided) / bisections : 0;
}

Tally Simulate(const Setting& setting, const BisectRule& rule, int bisections, std::uint64_t seed,
               int threads) {
  threads = std::max(1, threads);
  // The step's look level is computed once, before the threads share it.
  (void)rule.StepPlan().LevelAt(rule.min_rounds);
  std::vector<Outcome> outcomes(static_cast<size_t>(bisections));
  auto work = [&](int first) {
    for (int i = first; i < bisections; i += threads) {
      outcomes[static_cast<size_t>(i)] =
          RunBisection(setting, rule, seed + static_cast<std::uint64_t>(i));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  Tally tally;
  for (const Outcome& o : outcomes) tally.Add(o);
  return tally;
}

}  // namespace benchlab::bisect_sim

// bisect_sim: how the bisection of analysis/bisect.h fares on ranges of commits with one culprit
// of known size at a known place (sim.h). A benchmark of the decision rule, not a test
// (tests/unit/analysis/bisect_sim_test.cc asserts the same figures at fewer bisections): it
// prints a Markdown table.
//
//   bisect_sim [--bisections 2000] [--seed 35] [--commits 64] [--steps 0.2,0.1,0.05]
//              [--culprits 1,16,32,47,63] [--pair-sd 0.025] [--round-sd 0.03]
//              [--noise lognormal|t3] [--build-failure 0] [--min-rounds 3] [--max-rounds 30]
//              [--confidence 0.95] [--threads 1]
//
// For each step and culprit place it runs --bisections bisections and prints: the share that
// named the true culprit, the share that named another commit, the share that ended
// unsplittable (and of those, how many left the culprit among the commits they name), the mean
// and largest number of commits measured, undecided commits per bisection, rounds per bisection
// (each round 3 windows: candidate, good end, bad end), decisions on the wrong side per
// bisection, and the smallest whole-search confidence bound any of them stated.
//
// Build and run: cmake --build build --target bisect_sim && build/bin/bisect_sim
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bisect_sim/sim.h"

namespace benchlab::bisect_sim {
namespace {

void PrintBisectRow(const std::string& step, const std::string& culprit, const Tally& t) {
  std::printf(
      "| %s | %s | %d | %.4f | %.4f | %.4f (%d) | %.2f / %d | %.3f | %.1f | %.4f | %.4f |\n",
      step.c_str(), culprit.c_str(), t.bisections, t.RightShare(), t.WrongShare(),
      t.UnsplittableShare(), t.unsplittable_open, t.MeanMeasured(), t.max_measured,
      t.UndecidedPerBisection(), t.MeanRounds(),
      t.bisections ? double(t.wrong_steps) / t.bisections : 0, t.min_confidence);
  std::fflush(stdout);
}

void Merge(Tally& into, const Tally& t) {
  into.bisections += t.bisections;
  into.right += t.right;
  into.wrong += t.wrong;
  into.unsplittable += t.unsplittable;
  into.unsplittable_open += t.unsplittable_open;
  into.measured += t.measured;
  into.max_measured = std::max(into.max_measured, t.max_measured);
  into.undecided += t.undecided;
  into.wrong_steps += t.wrong_steps;
  into.rounds += t.rounds;
  into.min_confidence = std::min(into.min_confidence, t.min_confidence);
}

}  // namespace
}  // namespace benchlab::bisect_sim

int main(int argc, char** argv) {
  using namespace benchlab;
  using namespace benchlab::bisect_sim;
  CLI::App app{"bisect_sim: bisections of synthetic ranges with one culprit"};
  int bisections = 2000;
  std::uint64_t seed = 35;
  Setting base;
  std::vector<double> steps = {0.20, 0.10, 0.05};
  std::vector<int> culprits = {1, 16, 32, 47, 63};
  std::string noise = "lognormal";
  BisectRule rule;
  int threads = 1;
  app.add_option("--bisections", bisections, "bisections per row")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", seed, "seed of every draw");
  app.add_option("--commits", base.commits, "commits in the range, ends included")
      ->check(CLI::Range(3, 100000));
  app.add_option("--steps", steps, "regression sizes (fractions)")->delimiter(',');
  app.add_option("--culprits", culprits, "first bad commits")->delimiter(',');
  app.add_option("--pair-sd", base.pair_log_sd, "log SD of a round's ratio of two windows")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--round-sd", base.round_log_sd, "log SD shared by a round's windows")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--noise", noise, "window noise model")->check(CLI::IsMember({"lognormal", "t3"}));
  app.add_option("--build-failure", base.build_failure, "chance that a commit fails to build")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-rounds", rule.min_rounds, "first look at a candidate")
      ->check(CLI::Range(2, 1000));
  app.add_option("--max-rounds", rule.max_rounds, "round limit at a candidate")
      ->check(CLI::Range(2, 1000));
  app.add_option("--confidence", rule.confidence, "the whole search's confidence")
      ->check(CLI::Range(0.5, 0.999));
  app.add_option("--threads", threads, "threads")->check(CLI::Range(1, 256));
  CLI11_PARSE(app, argc, argv);
  if (rule.max_rounds < rule.min_rounds) {
    std::fprintf(stderr, "bisect_sim: --max-rounds %d is below --min-rounds %d\n", rule.max_rounds,
                 rule.min_rounds);
    return 2;
  }
  base.noise = noise == "t3" ? Noise::kHeavyTailed : Noise::kLognormal;
  const double confidence = rule.confidence;
  const int min_rounds = rule.min_rounds, max_rounds = rule.max_rounds;
  StatsOptions options;
  options.rule.confidence = confidence;
  rule = BisectRuleFor(options, static_cast<size_t>(base.commits), Better::kLower);
  rule.min_rounds = min_rounds;
  rule.max_rounds = max_rounds;

  std::printf(
      "%d commits, pair log SD %.4g, round log SD %.4g, %s noise, build failure %.3g; "
      "rule: confidence %.3g over %d planned steps (step confidence %.5f, look level "
      "%.5f), rounds %d to %d, margin %.3g; %d bisections a row, seed %llu\n\n",
      base.commits, base.pair_log_sd, base.round_log_sd, noise.c_str(), base.build_failure,
      rule.confidence, rule.planned_steps, rule.StepConfidence(),
      rule.StepPlan().LevelAt(rule.min_rounds), rule.min_rounds, rule.max_rounds, rule.margin,
      bisections, static_cast<unsigned long long>(seed));
  std::printf(
      "| step | culprit | bisections | right | wrong | unsplittable (culprit open) | measured "
      "mean / max | undecided per bisection | rounds per bisection | wrong steps per bisection | "
      "least search confidence |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (double step : steps) {
    Tally all;
    const std::string name = std::to_string(static_cast<int>(step * 100 + 0.5)) + "%";
    for (int culprit : culprits) {
      if (culprit < 1 || culprit >= base.commits) {
        std::fprintf(stderr, "bisect_sim: --culprits %d is outside 1..%d\n", culprit,
                     base.commits - 1);
        return 2;
      }
      Setting s = base;
      s.step = step;
      s.culprit = culprit;
      const Tally t = Simulate(s, rule, bisections,
                               seed + static_cast<std::uint64_t>(culprit) * 1000003ULL +
                                   static_cast<std::uint64_t>(step * 1e6),
                               threads);
      PrintBisectRow(name, std::to_string(culprit), t);
      Merge(all, t);
    }
    PrintBisectRow(name, "all", all);
  }
  return 0;
}

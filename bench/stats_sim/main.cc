// stats_sim: how the intervals and verdicts of analysis/interval.h behave on campaigns whose true
// ratio is known. A benchmark of the statistics, not a test (tests/unit/analysis/
// stats_sim_test.cc asserts the same figures at fewer campaigns): it prints Markdown tables.
//
//   stats_sim [--campaigns 10000] [--sequences 200000] [--seed 16] [--figure rps|cpu]
//             [--window-sd SD]
//
// --figure picks the window spread measured here for req/s or CPU per request (sim.h) and the
// direction that is better; --window-sd replaces that spread (a log-scale SD, e.g. 0.0578 for the
// quietest campaign here, docs/results/frameworks-bun.json) to see how the plans fare on a
// quieter or noisier host.
//
// For each noise model of bench/stats_sim/sim.h and each true ratio 1.00, 1.01, 1.05, 1.20 it
// simulates --campaigns cells at margin 0.02 and confidence 0.95 and judges the same campaigns
// under every plan:
//   table 1, the committed plans: fixed 3, 5 and 10 rounds, and adaptive {min 3, max 20}
//     (every look at AdaptiveLookLevel, analysis/interval.h);
//   table 2, other ways to spend the adaptive plan's alpha over its looks, for comparison:
//     Bonferroni over all 18 looks, and Bonferroni over looks at 3, 4, 6, 9, 13 and 20 rounds.
// Each row: the share of campaigns whose interval at the stopping look holds the true ratio,
// the share of each verdict, and the mean rounds spent. Last, the rows that miss the figures of
// docs/methodology.md: coverage below 94%, "ahead" or "behind" above 5% at a true ratio of 1.00,
// "close" above 5% at 1.05.
//
// Build and run: ninja -C build stats_sim && build/bin/stats_sim
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/stats_sim/sim.h"

namespace benchlab::stats_sim {
namespace {

constexpr double kConfidence = 0.95;
constexpr double kMargin = 0.02;
constexpr std::array<double, 4> kTrueRatios = {1.00, 1.01, 1.05, 1.20};
constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 20;

struct Row {
  Noise noise;
  double true_ratio;
  std::string plan;
  Tally tally;
};

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "| noise | true ratio | plan | coverage | ahead | behind | close | inconclusive | "
      "mean rounds |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    const Tally& t = r.tally;
    std::printf("| %s | %.2f | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f |\n",
                NoiseName(r.noise), r.true_ratio, r.plan.c_str(), t.Coverage(),
                t.Share(ComparisonVerdict::kBetter), t.Share(ComparisonVerdict::kWorse),
                t.Share(ComparisonVerdict::kClose), t.Share(ComparisonVerdict::kInconclusive),
                t.MeanRounds());
  }
}

// The rows that miss a figure, one line each; "none" when every row holds them.
void PrintMisses(const std::vector<Row>& rows) {
  int misses = 0;
  for (const Row& r : rows) {
    const Tally& t = r.tally;
    const double wrong = t.Share(ComparisonVerdict::kBetter) + t.Share(ComparisonVerdict::kWorse);
    std::string why;
    if (t.Coverage() < 0.94) why += " coverage below 0.94;";
    if (r.true_ratio == 1.00 && wrong > 0.05) why += " ahead or behind above 0.05 at 1.00;";
    if (r.true_ratio == 1.05 && t.Share(ComparisonVerdict::kClose) > 0.05) {
      why += " close above 0.05 at 1.05;";
    }
    if (why.empty()) continue;
    ++misses;
    std::printf("- %s, %.2f, %s:%s\n", NoiseName(r.noise), r.true_ratio, r.plan.c_str(),
                why.c_str());
  }
  if (misses == 0) std::printf("none\n");
}

int Run(int campaigns, std::uint64_t seed, const Figure& figure) {
  const std::vector<LookRule> committed = {
      CommittedRule(LookPlan::Fixed(3, kConfidence)),
      CommittedRule(LookPlan::Fixed(5, kConfidence)),
      CommittedRule(LookPlan::Fixed(10, kConfidence)),
      CommittedRule(LookPlan::Adaptive(kMinRounds, kMaxRounds, kConfidence)),
  };
  const std::vector<LookRule> spending = {
      BonferroniRule(EveryRound(kMinRounds, kMaxRounds), kConfidence),
      BonferroniRule({3, 4, 6, 9, 13, 20}, kConfidence),
  };
  std::vector<LookRule> rules = committed;
  rules.insert(rules.end(), spending.begin(), spending.end());

  std::vector<Row> table1, table2, all;  // all: every rule's row once
  for (size_t n = 0; n < kNoises.size(); ++n) {
    for (size_t k = 0; k < kTrueRatios.size(); ++k) {
      const Scenario scenario{figure, kNoises[n], kTrueRatios[k], kMargin};
      const std::vector<Tally> tallies = Simulate(scenario, rules, campaigns, seed + 1000 * n + k);
      for (size_t i = 0; i < rules.size(); ++i) {
        Row row{kNoises[n], kTrueRatios[k], rules[i].name, tallies[i]};
        if (i < committed.size()) table1.push_back(row);
        if (i + 1 >= committed.size()) table2.push_back(row);
        all.push_back(row);
      }
    }
  }

  std::printf(
      "stats_sim: %s, window log SD %.4f, drift %.4f per round, outlier round %d x%.2f; "
      "margin %.2f, confidence %.2f; %d campaigns per row, seed %llu\n\n",
      figure.name, figure.window_log_sd, kDriftPerRound, kOutlierRound, kOutlierFactor, kMargin,
      kConfidence, campaigns, static_cast<unsigned long long>(seed));
  std::printf("## The committed plans\n\n");
  PrintTable(table1);
  std::printf("\n## Spending alpha over the adaptive plan's looks\n\n");
  std::printf(
      "The committed adaptive plan takes each look at %.5f (AdaptiveLookLevel); Bonferroni over "
      "its looks would take %.5f.\n\n",
      AdaptiveLookLevel(kMinRounds, kMaxRounds, kConfidence),
      1 - (1 - kConfidence) / (kMaxRounds - kMinRounds + 1));
  PrintTable(table2);
  std::printf("\n## Rows that miss a figure\n\n");
  PrintMisses(all);
  return 0;
}

}  // namespace
}  // namespace benchlab::stats_sim

int main(int argc, char** argv) {
  CLI::App app{"stats_sim: intervals and verdicts on simulated campaigns"};
  int campaigns = 10000;
  std::uint64_t seed = 16;
  std::string figure = "rps";
  double window_sd = 0;
  app.add_option("--campaigns", campaigns, "campaigns per row")->check(CLI::Range(100, 10000000));
  app.add_option("--seed", seed, "seed of every draw");
  app.add_option("--figure", figure, "the simulated figure's spread and direction")
      ->check(CLI::IsMember({"rps", "cpu"}));
  app.add_option("--window-sd", window_sd, "a window's log-scale SD instead of the measured one")
      ->check(CLI::Range(0.0001, 1.0));
  CLI11_PARSE(app, argc, argv);
  using namespace benchlab::stats_sim;
  Figure f = figure == "rps" ? kReqPerSecond : kCpuPerRequest;
  if (window_sd > 0) f.window_log_sd = window_sd;
  return Run(campaigns, seed, f);
}

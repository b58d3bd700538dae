// changepoint_sim: how the change-point detector and the confirmation rule of
// analysis/changepoint.h fare on synthetic series with steps at known places (sim.h). A benchmark
// of the statistics, not a test (tests/unit/analysis/changepoint_sim_test.cc asserts the same
// figures at fewer series): it prints a Markdown table.
//
//   changepoint_sim [--series 200] [--seed 19] [--window-sd 0.0989] [--rounds 5]
//                   [--noise lognormal|t3|outlier] [--campaigns 30,60,100,200]
//                   [--confirm-min 5] [--confirm-max 30] [--confirm-confidence 0.90]
//                   [--permutations 199] [--min-segment 3] [--campaign-sd 0] [--threads 2]
//
// For each series length, each step (none, 2%, 5%, 10%) and each place of the step (at 2/3 of
// the series; among the newest 10 campaigns, at N - 10) it watches --series series online and
// prints: the share of step series whose step was raised (within 1 of its index) and the share
// also confirmed, the share of detected steps that confirmation keeps, the median and mean delay
// (campaigns from the step on when raised), false alarms per 100 campaigns before and after
// confirmation and the share removed, the same for the spurious ones alone (no change between
// the re-measured builds; the others are the step placed 2 or more campaigns off), and the mean
// rounds of a re-measurement.
//
// Build and run: ninja -C build changepoint_sim && build/bin/changepoint_sim
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/changepoint_sim/sim.h"

namespace benchlab::changepoint_sim {
namespace {

void PrintRow(const char* place, double step, int campaigns, const Tally& t) {
  std::printf("| %d | %s | %s |", campaigns,
              step == 0 ? "none" : (std::to_string(int(step * 100 + 0.5)) + "%").c_str(), place);
  if (t.step_series > 0) {
    std::printf(" %.3f | %.3f | %.3f | %.1f | %.1f |", t.DetectionRate(),
                t.ConfirmedDetectionRate(), t.KeptShare(), t.MedianDelay(), t.MeanDelay());
  } else {
    std::printf(" | | | | |");
  }
  std::printf(" %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.1f |\n", t.FalseAlarmsPer100(),
              t.ConfirmedFalseAlarmsPer100(), t.RemovedShare(), t.SpuriousPer100(),
              t.ConfirmedSpuriousPer100(), t.SpuriousRemovedShare(), t.MeanConfirmationRounds());
  std::fflush(stdout);
}

}  // namespace
}  // namespace benchlab::changepoint_sim

int main(int argc, char** argv) {
  using namespace benchlab;
  using namespace benchlab::changepoint_sim;
  CLI::App app{"changepoint_sim: change points and their confirmation on synthetic series"};
  int series = 200;
  std::uint64_t seed = 19;
  double window_sd = stats_sim::kReqPerSecondWindowLogSd;
  int rounds = 5;
  std::string noise = "lognormal";
  std::vector<int> lengths = {30, 60, 100, 200};
  std::vector<double> steps = {0, 0.02, 0.05, 0.10};
  Options options;
  int confirm_min = options.confirmation.plan.min_rounds;
  int confirm_max = options.confirmation.plan.max_rounds;
  double confirm_confidence = options.confirmation.plan.confidence;
  double campaign_sd = 0;
  int threads = 2;
  app.add_option("--series", series, "series per row")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "seed of every draw");
  app.add_option("--window-sd", window_sd, "a window's log-scale SD")->check(CLI::Range(0.0, 1.0));
  app.add_option("--rounds", rounds, "rounds per campaign")->check(CLI::Range(1, 100));
  app.add_option("--noise", noise, "window noise model")
      ->check(CLI::IsMember({"lognormal", "t3", "outlier"}));
  app.add_option("--campaigns", lengths, "series lengths")->delimiter(',');
  app.add_option("--steps", steps, "step sizes (fractions)")->delimiter(',');
  app.add_option("--confirm-min", confirm_min, "re-measurement: first look")
      ->check(CLI::Range(2, 1000));
  app.add_option("--confirm-max", confirm_max, "re-measurement: round limit")
      ->check(CLI::Range(2, 1000));
  app.add_option("--confirm-confidence", confirm_confidence, "re-measurement: confidence")
      ->check(CLI::Range(0.5, 0.999));
  app.add_option("--permutations", options.detector.permutations, "per permutation test")
      ->check(CLI::Range(19, 100000));
  app.add_option("--significance", options.detector.significance, "of a permutation test")
      ->check(CLI::Range(0.001, 0.5));
  app.add_option("--min-segment", options.detector.min_segment, "campaigns per side")
      ->check(CLI::Range(2, 50));
  app.add_option("--campaign-sd", campaign_sd, "extra campaign-to-campaign log SD")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--threads", threads, "worker threads")->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);
  if (confirm_max < confirm_min) confirm_max = confirm_min;
  options.confirmation.plan = LookPlan::Adaptive(confirm_min, confirm_max, confirm_confidence);

  Scenario base;
  base.figure.window_log_sd = window_sd;
  base.noise = noise == "t3"        ? Noise::kHeavyTailed
               : noise == "outlier" ? Noise::kOutlier
                                    : Noise::kLognormal;
  base.rounds = rounds;
  base.campaign_log_sd = campaign_sd;

  std::printf(
      "changepoint_sim: %s, window log SD %.4f, %s, %d rounds per campaign, campaign log SD "
      "%.4f; detector: %d permutations, significance %.3f, min segment %d, confidence %.2f; "
      "confirmation: rounds %d to %d at confidence %.2f (each look at %.4f), margin %.2f; %d "
      "series per row, seed %llu\n\n",
      base.figure.name, window_sd, noise.c_str(), rounds, campaign_sd,
      options.detector.permutations, options.detector.significance, options.detector.min_segment,
      options.detector.confidence, confirm_min, confirm_max, confirm_confidence,
      options.confirmation.plan.LevelAt(confirm_max), options.confirmation.margin, series,
      static_cast<unsigned long long>(seed));
  std::printf(
      "| N | step | at | detected | detected and confirmed | kept by confirmation | median "
      "delay | mean delay | false alarms / 100 | after confirmation | removed | spurious / 100 "
      "| after confirmation | removed | re-measurement rounds |\n");
  std::printf(
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
      "|\n");
  std::uint64_t row_seed = seed;
  for (int n : lengths) {
    for (double step : steps) {
      for (int place = 0; place < (step == 0 ? 1 : 2); ++place) {
        Scenario s = base;
        s.campaigns = n;
        s.step = step;
        s.step_at = step == 0 ? -1 : place == 0 ? 2 * n / 3 : n - 10;
        const char* where = step == 0 ? "" : place == 0 ? "2/3" : "N-10";
        const Tally t = Simulate(s, options, series, row_seed, threads);
        row_seed += 100000;
        PrintRow(where, step, n, t);
      }
    }
  }
  return 0;
}

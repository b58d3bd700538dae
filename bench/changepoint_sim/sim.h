// changepoint_sim: synthetic series of campaigns with steps at known places, watched by the
// change-point detector of analysis/changepoint.h as a nightly would watch them, and every alarm
// re-measured under the confirmation rule (docs/history.md). Used by
// bench/changepoint_sim/main.cc (the tables of bench/README.md) and by
// tests/unit/analysis/changepoint_sim_test.cc (the same figures at fewer series).
//
// One simulated series: campaigns 0..N-1, each of `rounds` windows of one figure. A window's ln
// figure is ln(true level) + noise, the noise drawn as bench/stats_sim draws it with the window
// log SD measured on this machine (stats_sim::kReqPerSecondWindowLogSd, 0.0989) or another.
// The true level is 1 before the step and 1 + step from it on in even-numbered series,
// 1 / (1 + step) in odd ones (both directions, as many of each). A campaign's estimate is the
// geometric mean of its windows; its rounds are the windows.
//
// Online: after each campaign from the 2 * min_segment-th on, the detector runs on the series so
// far. The step is detected the first time a change point lies within 1 of its index; any other
// change point not within 1 of an alarm already raised is a false alarm. Each alarm is
// re-measured once: rounds of paired windows of the old build (ChangePoint::old_index, the second
// campaign before the change) and the newest build (the campaign just added), with the same
// window noise, ratio new / old per round (stats_sim::DrawRatios, with its rotation), looked at
// after each round from the rule's min to its max by DecideConfirmation.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/changepoint.h"
#include "bench/stats_sim/sim.h"

namespace benchlab::changepoint_sim {

using stats_sim::Figure;
using stats_sim::Noise;
using stats_sim::Rng;

// With Noise::kOutlier, the share of campaigns one of whose windows (round
// stats_sim::kOutlierRound) is stats_sim::kOutlierFactor worse; the confirmation's re-measurement
// then has stats_sim's outlier round in every run.
inline constexpr double kOutlierCampaignShare = 0.1;

struct Scenario {
  Figure figure = stats_sim::kReqPerSecond;
  Noise noise = Noise::kLognormal;  // kLognormal, kHeavyTailed or kOutlier (not kDrift)
  int campaigns = 60;
  int rounds = 5;
  double step = 0;   // a fraction: 0.05 is a 5% step; 0 for none
  int step_at = -1;  // the first campaign after the step; -1 for none
  // An extra campaign-to-campaign SD of the ln level (each campaign's windows all shifted by
  // it): 0 by default, none having been measured here (docs/history.md).
  double campaign_log_sd = 0;
};

struct Options {
  ChangePointOptions detector;
  ConfirmationRule confirmation;
};

// The campaigns of one series (series `index` of a scenario: the step's direction alternates),
// and the true level of each.
std::vector<SeriesPoint> DrawSeries(const Scenario& scenario, int index, Rng& rng,
                                    std::vector<double>* levels = nullptr);

struct Outcome {
  bool step = false;               // the series has a step
  bool detected = false;           // an alarm within 1 of the step's index
  int delay = 0;                   // detected: campaigns from the step on when it was first raised
  bool confirmed = false;          // detected and confirmed
  int false_alarms = 0;            // alarms not within 1 of the step
  int false_alarms_confirmed = 0;  // of which confirmed
  // Of the false alarms, those whose re-measurement compares two builds at the same true level
  // (no change between them: the alarm is spurious); the others are the step itself placed 2 or
  // more campaigns off, whose old and new builds do differ.
  int spurious = 0;
  int spurious_confirmed = 0;
  int campaigns = 0;                  // campaigns in the series
  int confirmations = 0;              // re-measurements run
  long long confirmation_rounds = 0;  // their rounds, summed
};

// One series watched online, from `seed`.
Outcome WatchSeries(const Scenario& scenario, const Options& options, int index,
                    std::uint64_t seed);

struct Tally {
  int series = 0;
  int step_series = 0;
  int detected = 0;
  int detected_confirmed = 0;
  std::vector<int> delays;  // of the detected, ascending
  long long campaigns = 0;
  int false_alarms = 0;
  int false_alarms_confirmed = 0;
  int spurious = 0;
  int spurious_confirmed = 0;
  int confirmations = 0;
  long long confirmation_rounds = 0;

  void Add(const Outcome& o);
  double DetectionRate() const;           // detected / step series
  double ConfirmedDetectionRate() const;  // detected and confirmed / step series
  double KeptShare() const;               // detected and confirmed / detected
  double MedianDelay() const;
  double MeanDelay() const;
  double FalseAlarmsPer100() const;  // before confirmation
  double ConfirmedFalseAlarmsPer100() const;
  double RemovedShare() const;  // 1 - confirmed false alarms / false alarms
  double SpuriousPer100() const;
  double ConfirmedSpuriousPer100() const;
  double SpuriousRemovedShare() const;
  double MeanConfirmationRounds() const;
};

// `series` series of `scenario` (series i from seed + i), on `threads` threads; the same result
// for any number of threads.
Tally Simulate(const Scenario& scenario, const Options& options, int series, std::uint64_t seed,
               int threads = 1);

}  // namespace benchlab::changepoint_sim

// The change-point detector and the confirmation rule on synthetic series watched online
// (bench/changepoint_sim/sim.h; the full tables: bench/changepoint_sim/main.cc, bench/README.md).
// Fixed seeds: every run draws the same series. Few short series, so the bounds are loose: each
// sits well away from what bench/README.md measured at 200 series a row, and well away from what
// a broken detector or rule gives (one that never fires detects nothing; one that always fires
// raises an alarm at nearly every campaign; a rule that confirms everything removes nothing).
#include <gtest/gtest.h>

#include "bench/changepoint_sim/sim.h"

namespace benchlab::changepoint_sim {
namespace {

constexpr int kSeries = 60;

Scenario Series30(double step, double window_sd = stats_sim::kReqPerSecondWindowLogSd) {
  Scenario s;
  s.figure.window_log_sd = window_sd;
  s.campaigns = 30;
  s.step = step;
  s.step_at = step == 0 ? -1 : 20;
  return s;
}

TEST(ChangePointSimDraw, StepAlternatesDirectionAndEstimateIsTheGeometricMean) {
  Scenario s = Series30(0.10, 0.0);
  std::vector<double> levels;
  Rng rng(1);
  const std::vector<SeriesPoint> up = DrawSeries(s, 0, rng, &levels);
  ASSERT_EQ(up.size(), 30u);
  EXPECT_DOUBLE_EQ(up[19].estimate, 1.0);
  EXPECT_NEAR(up[20].estimate, 1.10, 1e-12);
  EXPECT_EQ(up[20].rounds.size(), 5u);
  const std::vector<SeriesPoint> down = DrawSeries(s, 1, rng, &levels);
  EXPECT_NEAR(down[29].estimate, 1 / 1.10, 1e-12);
  EXPECT_NEAR(levels[29], 1 / 1.10, 1e-12);
}

TEST(ChangePointSim, SameSeedSameTallyOnAnyNumberOfThreads) {
  Options options;
  const Tally a = Simulate(Series30(0.10), options, 8, 5, 1);
  const Tally b = Simulate(Series30(0.10), options, 8, 5, 2);
  EXPECT_EQ(a.detected, b.detected);
  EXPECT_EQ(a.delays, b.delays);
  EXPECT_EQ(a.false_alarms, b.false_alarms);
  EXPECT_EQ(a.confirmation_rounds, b.confirmation_rounds);
}

TEST(ChangePointSim, NoStepFalseAlarmsAreFewAndConfirmationRemovesThem) {
  // bench/README.md at 30 campaigns: 0.57 false alarms per 100 campaigns, 0 after confirmation;
  // these 60 series: 14 false alarms (0.78 per 100), 1 confirmed. A rule confirming every alarm
  // would keep all 14.
  const Tally t = Simulate(Series30(0), Options{}, kSeries, 1900, 2);
  EXPECT_EQ(t.campaigns, 30 * kSeries);
  EXPECT_EQ(t.step_series, 0);
  EXPECT_LE(t.FalseAlarmsPer100(), 2.0);
  EXPECT_LE(t.false_alarms_confirmed, 2);
}

TEST(ChangePointSim, TenPercentStepsAreFoundQuicklyAndKept) {
  // bench/README.md at 30 campaigns: 0.925 detected, median delay 4, 0.91 kept.
  const Tally t = Simulate(Series30(0.10), Options{}, kSeries, 1910, 2);
  EXPECT_EQ(t.step_series, kSeries);
  EXPECT_GE(t.DetectionRate(), 0.8);
  EXPECT_LE(t.MedianDelay(), 6);
  EXPECT_GE(t.KeptShare(), 0.75);
}

TEST(ChangePointSim, OnAQuietHostFivePercentStepsAreFoundAndKept) {
  // Window log SD 0.02 (not this machine): a campaign's SE about 0.009, a round ratio's SD 0.028.
  const Tally t = Simulate(Series30(0.05, 0.02), Options{}, kSeries, 1920, 2);
  EXPECT_GE(t.DetectionRate(), 0.9);
  EXPECT_GE(t.KeptShare(), 0.95);
  EXPECT_LE(t.MedianDelay(), 4);
}

}  // namespace
}  // namespace benchlab::changepoint_sim

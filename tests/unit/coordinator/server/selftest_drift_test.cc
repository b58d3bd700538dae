// The self-test calibration: the spread of an agent's self-tests at the campaign's start, and the
// median of its recent self-tests in the campaign.
#include <gtest/gtest.h>

#include "coordinator/server/window_runner.h"

namespace benchlab {
namespace {

TEST(SelfTestCalibrationTest, TheSpreadIsTheScaledMedianDeviationFromTheMedian) {
  // Sorted 96 98 99 100 103 104 160: median 100. Deviations 0.04 0.02 0.01 0 0.03 0.04 0.60,
  // sorted 0 0.01 0.02 0.03 0.04 0.04 0.60: median 0.03, x 1.4826 = 0.044478.
  SelftestCalibration c = CalibrateSelftest({100, 96, 104, 98, 103, 99, 160});
  EXPECT_EQ(c.runs, 7);
  EXPECT_DOUBLE_EQ(c.median_ms, 100);
  ASSERT_TRUE(c.spread.has_value());
  EXPECT_NEAR(*c.spread, 0.044478, 1e-12);
}

TEST(SelfTestCalibrationTest, ThreeDisturbedRunsDoNotInflateTheSpread) {
  // Four quiet runs and three taken while a neighbour started: sorted 97 100 101 103 | 150 180
  // 400, median 103. Deviations x 103: 6 3 2 0 47 77 297; sorted 0 2 3 6 47 77 297: median 6.
  SelftestCalibration c = CalibrateSelftest({97, 150, 100, 400, 101, 180, 103});
  EXPECT_DOUBLE_EQ(c.median_ms, 103);
  ASSERT_TRUE(c.spread.has_value());
  EXPECT_NEAR(*c.spread, 1.4826 * 6 / 103, 1e-12);  // 8.6%; their largest deviation is 288%
}

TEST(SelfTestCalibrationTest, TooFewRunsGiveNoSpreadAndRunsThatDidNotRunAreLeftOut) {
  SelftestCalibration few = CalibrateSelftest({100, 104, 96, 0});
  EXPECT_EQ(few.runs, 3);
  EXPECT_DOUBLE_EQ(few.median_ms, 100);
  EXPECT_FALSE(few.spread.has_value());
  SelftestCalibration none = CalibrateSelftest({0, -1});
  EXPECT_EQ(none.runs, 0);
  EXPECT_EQ(none.median_ms, 0);
  EXPECT_FALSE(none.spread.has_value());
  SelftestCalibration five = CalibrateSelftest({100, 0, 100, 100, 100, 100});
  EXPECT_EQ(five.runs, 5);
  EXPECT_EQ(five.spread, 0.0);
  EXPECT_EQ(Calibrate({100, 0, 90}).recent, (std::deque<double>{100, 90}));
}

TEST(SelfTestDriftTest, TheFirstWindowIsJudgedAgainstTheMedianOfEveryCalibrationRun) {
  Calibration calibration{{"load", Calibrate({100, 96, 104, 98, 103, 99, 160})}};
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 115), 0.15, 1e-12);
  // Then only the most recent kCalibrationSamples count: 98 103 99 160 115, median 103.
  EXPECT_EQ(calibration["load"].recent.size(), kCalibrationSamples);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 103), 0, 1e-12);
}

TEST(SelfTestDriftTest, DriftIsFromTheMedianOfRecentSelfTests) {
  Calibration calibration{{"load", Calibrate({100, 104, 96})}};
  auto drift = SelfTestDrift(calibration, "load", 130);
  ASSERT_TRUE(drift.has_value());
  EXPECT_NEAR(*drift, 0.30, 1e-12);  // median 100
  // The window's self-test joins the calibration: 96 100 104 130, median 102.
  EXPECT_EQ(calibration["load"].recent.size(), 4u);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 102), 0, 1e-12);
  // Faster is negative drift.
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 51), -0.5, 1e-12);  // median 102
}

TEST(SelfTestDriftTest, OnlyTheLastFiveCount) {
  Calibration calibration{{"load", Calibrate({100, 100, 100})}};
  for (int i = 0; i < 5; ++i) (void)SelfTestDrift(calibration, "load", 200);
  EXPECT_EQ(calibration["load"].recent.size(), kCalibrationSamples);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200), 0, 1e-12);  // the 100s are forgotten
}

TEST(SelfTestDriftTest, ADisturbedStartIsForgottenAfterAFewWindows) {
  // Calibrated while other processes started on the CPU: 160 ms; the quiet CPU takes 100 ms.
  Calibration calibration{{"load", Calibrate({160, 160, 160})}};
  std::vector<double> drifts;
  for (int i = 0; i < 5; ++i) drifts.push_back(*SelfTestDrift(calibration, "load", 100));
  // Three windows are judged against the disturbed start (median 160: 100 is 37.5% faster),
  // then the quiet runs are the majority of the last five (160 160 100 100 100: median 100).
  EXPECT_NEAR(drifts[0], -0.375, 1e-12);
  EXPECT_NEAR(drifts[1], -0.375, 1e-12);
  EXPECT_NEAR(drifts[2], -0.375, 1e-12);
  EXPECT_NEAR(drifts[3], 0, 1e-12);
  EXPECT_NEAR(drifts[4], 0, 1e-12);
}

TEST(SelfTestDriftTest, ALastingSlowdownBeyondTheThresholdNeverBecomesTheNorm) {
  // A competing loop on the pinned CPU doubles the self-test from the 5th window on. Runs the
  // gate refuses (slower than the median by more than 25%) do not join the recent ones, so
  // every slow window is judged against the quiet median of 100: +100% each time. Without the
  // threshold the slow runs would be the median after three windows and drift back to 0.
  Calibration calibration{{"load", Calibrate({100, 100, 100})}};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(*SelfTestDrift(calibration, "load", 100, 0.25), 0, 1e-12);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200, 0.25), 1.0, 1e-12) << "window " << i;
  }
  Calibration unguarded{{"load", Calibrate({100, 100, 100})}};
  std::vector<double> drifts;
  for (int i = 0; i < 6; ++i) drifts.push_back(*SelfTestDrift(unguarded, "load", 200));
  EXPECT_NEAR(drifts.back(), 0, 1e-12);
  // A faster run always joins: a slow start is still forgotten with the threshold in place.
  Calibration slow_start{{"load", Calibrate({160, 160, 160})}};
  for (int i = 0; i < 3; ++i) (void)SelfTestDrift(slow_start, "load", 100, 0.25);
  EXPECT_NEAR(*SelfTestDrift(slow_start, "load", 100, 0.25), 0, 1e-12);
}

TEST(SelfTestDriftTest, OneLuckyFastRunMovesNothing) {
  Calibration calibration{{"load", Calibrate({100, 101, 99})}};
  (void)SelfTestDrift(calibration, "load", 60);                                  // an outlier
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 100), 100 / 99.5 - 1, 1e-12);  // median 99.5
}

TEST(SelfTestDriftTest, EachAgentHasItsOwn) {
  Calibration calibration{{"server", Calibrate({50, 50, 50})},
                          {"load", Calibrate({100, 100, 100})}};
  EXPECT_NEAR(*SelfTestDrift(calibration, "server", 55), 0.10, 1e-12);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 90), -0.10, 1e-12);
  EXPECT_EQ(calibration["server"].recent.back(), 55);
  EXPECT_EQ(calibration["load"].recent.back(), 90);
}

// Seven back-to-back start runs within 1%; then the host wanders by up to 15% from window to
// window. The spread over the campaign is what the threshold comes from.
TEST(HostSpreadTest, TheSpreadGrowsWithTheHostsWanderOverTheCampaign) {
  Calibration calibration{{"load", Calibrate({100, 101, 99, 100, 101, 99, 100})}};
  ASSERT_TRUE(HostSpread(calibration["load"]).has_value());
  const double start = *HostSpread(calibration["load"]);
  EXPECT_NEAR(start, 1.4826 * 0.01, 1e-12);
  for (double ms : {110.0, 95.0, 105.0, 90.0, 100.0, 115.0, 85.0, 108.0, 92.0, 103.0, 97.0, 112.0,
                    88.0, 100.0, 106.0}) {
    (void)SelfTestDrift(calibration, "load", ms, 0.5);
  }
  EXPECT_EQ(calibration["load"].accepted.size(), kSpreadSamples);
  // The start runs have left the window of kSpreadSamples: median 100, median deviation 8%.
  EXPECT_NEAR(*HostSpread(calibration["load"]), 1.4826 * 0.08, 1e-12);
  EXPECT_GT(*HostSpread(calibration["load"]), start);
}

TEST(HostSpreadTest, ARefusedSelfTestNeverWidensTheSpreadThatRefusedIt) {
  Calibration calibration{{"load", Calibrate({100, 101, 99, 100, 101, 99, 100})}};
  const double start = *HostSpread(calibration["load"]);
  // A competing process: twice as slow, window after window, refused above +10% every time.
  for (int i = 0; i < 20; ++i) EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200, 0.10), 1, 0.02);
  EXPECT_DOUBLE_EQ(*HostSpread(calibration["load"]), start);
  // Never narrower than the start's spread either.
  Calibration steady{{"load", Calibrate({100, 104, 96, 100, 104, 96, 100})}};
  for (int i = 0; i < 20; ++i) (void)SelfTestDrift(steady, "load", 100, 0.5);
  EXPECT_NEAR(*HostSpread(steady["load"]), 1.4826 * 0.04, 1e-12);
  // No start spread (too few runs): none over the campaign either.
  Calibration few{{"load", Calibrate({100, 101})}};
  for (int i = 0; i < 10; ++i) (void)SelfTestDrift(few, "load", 110, 0.5);
  EXPECT_FALSE(HostSpread(few["load"]).has_value());
}

TEST(SelfTestDriftTest, NoCalibrationNoDrift) {
  Calibration calibration{{"empty", Calibrate({})}, {"zero", Calibrate({0})}};
  EXPECT_FALSE(SelfTestDrift(calibration, "other", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "empty", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "zero", 100).has_value());
}

}  // namespace
}  // namespace benchlab

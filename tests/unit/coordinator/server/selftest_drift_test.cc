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
  EXPECT_EQ(Calibrate({100, 0, 90}).accepted, (std::deque<double>{100, 90}));
}

TEST(SelfTestDriftTest, TheFirstWindowIsJudgedAgainstTheMedianOfEveryCalibrationRun) {
  Calibration calibration{{"load", Calibrate({100, 96, 104, 98, 103, 99, 160})}};
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 115), 0.15, 1e-12);
  // Then the runs and the window's: 96 98 99 100 103 104 115 160, median 101.5.
  EXPECT_EQ(calibration["load"].accepted.size(), 8u);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 103), 103 / 101.5 - 1, 1e-12);
}

TEST(SelfTestDriftTest, DriftIsFromTheMedianOfRecentSelfTests) {
  Calibration calibration{{"load", Calibrate({100, 104, 96})}};
  auto drift = SelfTestDrift(calibration, "load", 130);
  ASSERT_TRUE(drift.has_value());
  EXPECT_NEAR(*drift, 0.30, 1e-12);  // median 100
  // The window's self-test joins the calibration: 96 100 104 130, median 102.
  EXPECT_EQ(calibration["load"].accepted.size(), 4u);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 102), 0, 1e-12);
  // Faster is negative drift.
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 51), -0.5, 1e-12);  // median 102
}

TEST(SelfTestDriftTest, OnlyTheLastFifteenCount) {
  Calibration calibration{{"load", Calibrate({100, 100, 100})}};
  for (int i = 0; i < 8; ++i) (void)SelfTestDrift(calibration, "load", 150);
  for (int i = 0; i < 7; ++i) (void)SelfTestDrift(calibration, "load", 200);
  EXPECT_EQ(calibration["load"].accepted.size(), kRecentSelftests);
  // 8 x 150 and 7 x 200: the 100s are forgotten, the median is 150.
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 150), 0, 1e-12);
  EXPECT_EQ(calibration["load"].accepted.size(), kRecentSelftests);
  // Still 8 x 150 and 7 x 200; one more 200 is judged against 150 and the oldest 150 leaves:
  // 7 x 150 and 8 x 200, median 200.
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200), 200.0 / 150 - 1, 1e-12);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200), 0, 1e-12);
}

TEST(SelfTestDriftTest, ADisturbedStartIsForgottenAfterAFewWindows) {
  // Calibrated while other processes started on the CPU: 160 ms; the quiet CPU takes 100 ms.
  Calibration calibration{{"load", Calibrate({160, 160, 160})}};
  std::vector<double> drifts;
  for (int i = 0; i < 5; ++i) drifts.push_back(*SelfTestDrift(calibration, "load", 100));
  // Three windows are judged against the disturbed start (median 160: 100 is 37.5% faster),
  // the fourth against 160 160 160 100 100 100 (median 130), then the quiet runs are the
  // majority (median 100).
  EXPECT_NEAR(drifts[0], -0.375, 1e-12);
  EXPECT_NEAR(drifts[1], -0.375, 1e-12);
  EXPECT_NEAR(drifts[2], -0.375, 1e-12);
  EXPECT_NEAR(drifts[3], 100.0 / 130 - 1, 1e-12);
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
  for (int i = 0; i < 4; ++i) (void)SelfTestDrift(slow_start, "load", 100, 0.25);
  EXPECT_NEAR(*SelfTestDrift(slow_start, "load", 100, 0.25), 0, 1e-12);
}

// The load host's self-tests of an A/A campaign on the 2-core development VM, as stored
// (tests: windows.selftest_load_ms): the self-test took 7.6-7.9 ms or 10-12.8 ms for minutes at
// a time, and the windows' req/s and CPU per request did not follow. A norm of the last five
// followed the fast speed down and refused 7 of these 30 windows at +51% to +61% against the
// threshold's cap of 50%; the norm of the last fifteen refuses none. A process competing for
// the CPU afterwards (twice as slow) is still refused, window after window.
TEST(SelfTestDriftTest, AHostOfTwoSpeedsIsNotRefusedForEither) {
  Calibration calibration{{"load", Calibrate({11.2, 11.6, 11.9, 12.0, 12.2, 12.5, 12.9})}};
  const double load_ms[] = {12.04, 10.26, 10.41, 10.27, 9.88,  10.22, 11.37, 7.74,  10.61, 7.63,
                            7.97,  7.60,  7.81,  10.68, 12.53, 12.41, 12.75, 12.62, 12.50, 11.96,
                            7.66,  11.84, 11.60, 11.01, 12.20, 11.64, 11.34, 14.70, 12.10, 12.38};
  for (double ms : load_ms) {
    EXPECT_LE(*SelfTestDrift(calibration, "load", ms, 0.5), 0.5) << ms << " ms";
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_GT(*SelfTestDrift(calibration, "load", 24.0, 0.5), 0.5) << "window " << i;
  }
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
  EXPECT_EQ(calibration["server"].accepted.back(), 55);
  EXPECT_EQ(calibration["load"].accepted.back(), 90);
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
  EXPECT_EQ(calibration["load"].accepted.size(), kRecentSelftests);
  // The start runs have left the window of kRecentSelftests: median 100, median deviation 8%.
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

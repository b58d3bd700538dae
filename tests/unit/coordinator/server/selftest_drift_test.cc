// The self-test calibration: the median of an agent's recent self-tests in the campaign.
#include <gtest/gtest.h>

#include "coordinator/server/window_runner.h"

namespace benchlab {
namespace {

TEST(SelfTestDriftTest, DriftIsFromTheMedianOfRecentSelfTests) {
  Calibration calibration{{"load", {100, 104, 96}}};
  auto drift = SelfTestDrift(calibration, "load", 130);
  ASSERT_TRUE(drift.has_value());
  EXPECT_NEAR(*drift, 0.30, 1e-12);  // median 100
  // The window's self-test joins the calibration: 96 100 104 130, median 102.
  EXPECT_EQ(calibration["load"].size(), 4u);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 102), 0, 1e-12);
  // Faster is negative drift.
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 51), -0.5, 1e-12);  // median 102
}

TEST(SelfTestDriftTest, OnlyTheLastFiveCount) {
  Calibration calibration{{"load", {100, 100, 100}}};
  for (int i = 0; i < 5; ++i) (void)SelfTestDrift(calibration, "load", 200);
  EXPECT_EQ(calibration["load"].size(), kCalibrationSamples);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 200), 0, 1e-12);  // the 100s are forgotten
}

TEST(SelfTestDriftTest, ADisturbedStartIsForgottenAfterAFewWindows) {
  // Calibrated while other processes started on the CPU: 160 ms; the quiet CPU takes 100 ms.
  Calibration calibration{{"load", {160, 160, 160}}};
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

TEST(SelfTestDriftTest, OneLuckyFastRunMovesNothing) {
  Calibration calibration{{"load", {100, 101, 99}}};
  (void)SelfTestDrift(calibration, "load", 60);                                  // an outlier
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 100), 100 / 99.5 - 1, 1e-12);  // median 99.5
}

TEST(SelfTestDriftTest, EachAgentHasItsOwn) {
  Calibration calibration{{"server", {50, 50, 50}}, {"load", {100, 100, 100}}};
  EXPECT_NEAR(*SelfTestDrift(calibration, "server", 55), 0.10, 1e-12);
  EXPECT_NEAR(*SelfTestDrift(calibration, "load", 90), -0.10, 1e-12);
  EXPECT_EQ(calibration["server"].back(), 55);
  EXPECT_EQ(calibration["load"].back(), 90);
}

TEST(SelfTestDriftTest, NoCalibrationNoDrift) {
  Calibration calibration{{"empty", {}}, {"zero", {0}}};
  EXPECT_FALSE(SelfTestDrift(calibration, "other", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "empty", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "zero", 100).has_value());
}

}  // namespace
}  // namespace benchlab

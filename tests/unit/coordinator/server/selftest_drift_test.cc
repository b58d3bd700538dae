// The self-test calibration: the fastest self-test an agent has run in the campaign.
#include <gtest/gtest.h>

#include "coordinator/server/window_runner.h"

namespace benchlab {
namespace {

TEST(SelfTestDriftTest, SlowerThanTheCalibrationIsPositiveDrift) {
  Calibration calibration{{"load", 100}};
  auto drift = SelfTestDrift(calibration, "load", 130);
  ASSERT_TRUE(drift.has_value());
  EXPECT_DOUBLE_EQ(*drift, 0.30);
  EXPECT_DOUBLE_EQ(calibration["load"], 100);  // a slower self-test leaves it
}

TEST(SelfTestDriftTest, AFasterSelfTestBecomesTheCalibration) {
  // Calibrated while something else ran on the CPU: 160 ms; the quiet CPU does it in 100 ms.
  Calibration calibration{{"load", 160}};
  auto faster = SelfTestDrift(calibration, "load", 100);
  ASSERT_TRUE(faster.has_value());
  EXPECT_DOUBLE_EQ(*faster, 0);  // not -37.5%: the calibration was disturbed, not this window
  EXPECT_DOUBLE_EQ(calibration["load"], 100);
  // Later windows are judged against the quiet CPU.
  EXPECT_DOUBLE_EQ(*SelfTestDrift(calibration, "load", 125), 0.25);
}

TEST(SelfTestDriftTest, EachAgentHasItsOwn) {
  Calibration calibration{{"server", 50}, {"load", 100}};
  EXPECT_NEAR(*SelfTestDrift(calibration, "server", 55), 0.10, 1e-12);
  EXPECT_DOUBLE_EQ(*SelfTestDrift(calibration, "load", 90), 0);
  EXPECT_DOUBLE_EQ(calibration["server"], 50);
  EXPECT_DOUBLE_EQ(calibration["load"], 90);
}

TEST(SelfTestDriftTest, NoCalibrationNoDrift) {
  Calibration calibration{{"zero", 0}};
  EXPECT_FALSE(SelfTestDrift(calibration, "other", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "zero", 100).has_value());
  EXPECT_FALSE(SelfTestDrift(calibration, "zero", 0).has_value());
}

}  // namespace
}  // namespace benchlab

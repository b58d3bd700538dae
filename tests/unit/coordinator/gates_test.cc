#include "coordinator/gates.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

TEST(GatesTest, ErrorRateCountsTransportErrorsAndStatusMismatches) {
  GateInputs in;
  in.requests = 90;
  in.transport_errors = 10;
  in.status_mismatches = 5;
  EXPECT_DOUBLE_EQ(ErrorRate(in), 15.0 / 100.0);
}

TEST(GatesTest, NoTrafficHasNoErrorRate) { EXPECT_DOUBLE_EQ(ErrorRate(GateInputs{}), 0.0); }

TEST(GatesTest, CleanWindowPasses) {
  GateInputs in;
  in.requests = 1000;
  EXPECT_TRUE(EvaluateGates(in, GateThresholds{}).empty());
}

TEST(GatesTest, ErrorRateAtThresholdPassesAboveFailsWithValueAndThreshold) {
  GateInputs in;
  in.requests = 1000;
  in.status_mismatches = 10;  // exactly 1%
  EXPECT_TRUE(EvaluateGates(in, GateThresholds{0.01}).empty());
  in.status_mismatches = 11;
  auto reasons = EvaluateGates(in, GateThresholds{0.01});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], "error_rate: 1.10% > 1.00% (11 errors of 1000 attempts)");
}

}  // namespace
}  // namespace benchlab

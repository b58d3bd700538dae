// A probe's delta over an interval (docs/services.md, "Probes"): a counter's rise, and never a
// 0 invented for a reading that is missing or that fell.
#include "common/service.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

TEST(ProbeDeltaTest, TheRiseOfACounter) {
  ProbeDelta d = ProbeDeltaOf(41, 43, "");
  ASSERT_TRUE(d.delta.has_value());
  EXPECT_DOUBLE_EQ(*d.delta, 2);
  EXPECT_EQ(d.unavailable, "");
  d = ProbeDeltaOf(7.5, 7.5, "");
  ASSERT_TRUE(d.delta.has_value());
  EXPECT_DOUBLE_EQ(*d.delta, 0);
}

TEST(ProbeDeltaTest, ACounterThatFellIsAResetNotANegativeRise) {
  ProbeDelta d = ProbeDeltaOf(120, 3, "");
  EXPECT_FALSE(d.delta.has_value());
  EXPECT_EQ(d.unavailable, "counter reset: 120 before, 3 after");
}

TEST(ProbeDeltaTest, AMissingReadingIsUnavailableNeverZero) {
  ProbeDelta d = ProbeDeltaOf(std::nullopt, 5, "");
  EXPECT_FALSE(d.delta.has_value());
  EXPECT_EQ(d.unavailable, "no reading before");
  d = ProbeDeltaOf(5, std::nullopt, "");
  EXPECT_FALSE(d.delta.has_value());
  EXPECT_EQ(d.unavailable, "no reading after");
  d = ProbeDeltaOf(std::nullopt, std::nullopt, "");
  EXPECT_EQ(d.unavailable, "no reading before or after");
  d = ProbeDeltaOf(5, std::nullopt, "service \"pg\" probe \"x\": exit status 2");
  EXPECT_FALSE(d.delta.has_value());
  EXPECT_EQ(d.unavailable, "service \"pg\" probe \"x\": exit status 2");
}

}  // namespace
}  // namespace benchlab

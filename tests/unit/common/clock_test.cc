#include "common/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace benchlab {
namespace {

TEST(IsoTimeTest, ParsesWhatItFormats) {
  using namespace std::chrono;
  const system_clock::time_point t{milliseconds(1796006290123)};
  const std::string text = FormatIsoTime(t);
  EXPECT_EQ(text, "2026-11-30T02:38:10.123Z");
  EXPECT_DOUBLE_EQ(ParseIsoSeconds(text), 1796006290.123);
}

TEST(IsoTimeTest, TheStoresTimestampsWithAndWithoutAFraction) {
  EXPECT_DOUBLE_EQ(ParseIsoSeconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_DOUBLE_EQ(
      ParseIsoSeconds("2026-11-30T10:14:15.500Z") - ParseIsoSeconds("2026-11-30T10:04:15Z"), 600.5);
}

TEST(IsoTimeTest, AnythingElseIsNaN) {
  EXPECT_TRUE(std::isnan(ParseIsoSeconds("")));
  EXPECT_TRUE(std::isnan(ParseIsoSeconds("2026-11-30 10:04:15")));    // no T, no Z
  EXPECT_TRUE(std::isnan(ParseIsoSeconds("2026-11-30T10:04:15")));    // local time: no Z
  EXPECT_TRUE(std::isnan(ParseIsoSeconds("2026-11-30T10:04:15Zx")));  // trailing text
  EXPECT_TRUE(std::isnan(ParseIsoSeconds("2026-13-30T10:04:15Z")));   // month 13
}

}  // namespace
}  // namespace benchlab

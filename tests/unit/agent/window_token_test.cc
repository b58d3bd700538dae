#include "agent/window_token.h"

#include <gtest/gtest.h>

#include <set>

namespace benchlab {
namespace {

TEST(WindowTokenTest, FormIsSixteenToOneHundredTwentyEightTokenCharacters) {
  EXPECT_TRUE(IsWindowToken("0123456789abcdef"));
  EXPECT_TRUE(IsWindowToken("campaign-7:w.12_A-" + std::string(40, 'x')));
  EXPECT_TRUE(IsWindowToken(std::string(128, 'a')));
  EXPECT_FALSE(IsWindowToken(""));
  EXPECT_FALSE(IsWindowToken("0123456789abcde")) << "15 characters";
  EXPECT_FALSE(IsWindowToken(std::string(129, 'a')));
  EXPECT_FALSE(IsWindowToken("0123456789abcdef\n"));
  EXPECT_FALSE(IsWindowToken("0123456789 abcdef"));
  EXPECT_FALSE(IsWindowToken("0123456789/abcdef"));
  Status st = CheckWindowToken("window", "short");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "window: expected a window token of 16 to 128 characters of [A-Za-z0-9._:-], got 5 "
            "characters");
  EXPECT_TRUE(CheckWindowToken("window", "").message().ends_with(", got none"));
}

TEST(WindowTokenTest, EqualityIsExact) {
  EXPECT_TRUE(TokensEqual("0123456789abcdef", "0123456789abcdef"));
  EXPECT_FALSE(TokensEqual("0123456789abcdef", "0123456789abcdeF"));
  EXPECT_FALSE(TokensEqual("0123456789abcdef", "0123456789abcde"));
  EXPECT_FALSE(TokensEqual("", "x"));
}

TEST(WindowTokenTest, RandomHexIsFreshEachTime) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto hex = RandomHex(16);
    ASSERT_TRUE(hex.ok());
    EXPECT_EQ(hex->size(), 32u);
    EXPECT_EQ(hex->find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(*hex);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace benchlab

#include "coordinator/window_token.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

TEST(WindowTokenTest, IsTheHmacSha256OfTheKeyCutTo32HexDigits) {
  // RFC 4231, test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
  EXPECT_EQ(WindowToken("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c7");
}

TEST(WindowTokenTest, TheSameKeyAndSecretMakeTheSameTokenAndAnyOtherAnother) {
  const std::string secret(32, 's');
  const std::string token = WindowToken(secret, "7-nginx-hello-c64-r1-a1");
  EXPECT_EQ(token.size(), kWindowTokenHexChars);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  EXPECT_EQ(WindowToken(secret, "7-nginx-hello-c64-r1-a1"), token);
  EXPECT_NE(WindowToken(secret, "7-nginx-hello-c64-r1-a2"), token);
  EXPECT_NE(WindowToken(std::string(32, 't'), "7-nginx-hello-c64-r1-a1"), token);
}

}  // namespace
}  // namespace benchlab

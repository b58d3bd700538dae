#include "agent/server/allowed_targets.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

AllowedTargets Of(std::initializer_list<const char*> entries) {
  AllowedTargets out;
  for (const char* entry : entries) EXPECT_TRUE(out.Add(entry).ok()) << entry;
  return out;
}

TEST(AllowedTargetsTest, LoopbackByDefault) {
  AllowedTargets loopback = AllowedTargets::Loopback();
  EXPECT_EQ(loopback.entries(), (std::vector<std::string>{"127.0.0.0/8", "::1/128", "localhost"}));
  EXPECT_EQ(loopback.Check("127.0.0.1")->address, "127.0.0.1");
  EXPECT_EQ(loopback.Check("127.3.4.5")->address, "127.3.4.5");
  EXPECT_EQ(loopback.Check("::1")->address, "::1");
  EXPECT_EQ(loopback.Check("[::1]")->address, "::1");
  for (const char* outside : {"10.0.0.1", "192.0.2.1", "::2", "0.0.0.0", "169.254.169.254"}) {
    auto refused = loopback.Check(outside);
    ASSERT_FALSE(refused.ok()) << outside;
    EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(refused.status().message(),
              std::string("host ") + outside +
                  " is not in this agent's allowed_targets (127.0.0.0/8, ::1/128, localhost): it "
                  "sends requests nowhere else");
  }
}

TEST(AllowedTargetsTest, AnAddressMustFallInACidr) {
  AllowedTargets allowed = Of({"10.0.0.0/8", "192.168.7.0/24", "fd00:1::/32", "203.0.113.9"});
  EXPECT_TRUE(allowed.Check("10.255.0.1").ok());
  EXPECT_TRUE(allowed.Check("192.168.7.200").ok());
  EXPECT_FALSE(allowed.Check("192.168.8.1").ok());
  EXPECT_TRUE(allowed.Check("fd00:1:ffff::5").ok());
  EXPECT_FALSE(allowed.Check("fd00:2::5").ok());
  EXPECT_TRUE(allowed.Check("203.0.113.9").ok()) << "a single address is a /32";
  EXPECT_FALSE(allowed.Check("203.0.113.10").ok());
  // An IPv4-mapped IPv6 address is checked as the IPv4 address it is.
  auto mapped = allowed.Check("::ffff:10.1.2.3");
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->address, "10.1.2.3");
  EXPECT_FALSE(Of({"::/0"}).Check("::ffff:192.0.2.1").ok());
  // Host bits of an entry are dropped: 10.1.2.3/8 is 10.0.0.0/8.
  EXPECT_TRUE(Of({"10.1.2.3/8"}).Check("10.200.0.1").ok());
  EXPECT_TRUE(Of({"0.0.0.0/0"}).Check("198.51.100.1").ok());
}

TEST(AllowedTargetsTest, ANameIsTrustedWhenListedElseItsAddressesAreChecked) {
  // localhost resolves to loopback addresses only.
  auto listed = Of({"LocalHost"}).Check("localhost");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->name, "localhost");
  EXPECT_TRUE(listed->address == "127.0.0.1" || listed->address == "::1") << listed->address;
  auto covered = Of({"127.0.0.0/8", "::1/128"}).Check("localhost");
  ASSERT_TRUE(covered.ok()) << covered.status().ToString();
  auto refused = Of({"10.0.0.0/8"}).Check("localhost");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message().rfind("host localhost (it resolves to ", 0), 0u)
      << refused.status().message();
  EXPECT_EQ(Of({"10.0.0.0/8"}).Check("no-such-host.invalid").status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(Of({"10.0.0.0/8"}).Check("bad host\r\n").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Of({"10.0.0.0/8"}).Check("").status().code(), StatusCode::kInvalidArgument);
}

TEST(AllowedTargetsTest, EntriesThatAreNoneOfTheFormsAreRefused) {
  AllowedTargets allowed;
  for (const char* bad : {"10.0.0.0/33", "::1/129", "10.0.0.0/", "10.0.0.0/x", "not a name",
                          "host/24", "", "a..b", ".lab"}) {
    EXPECT_EQ(allowed.Add(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(allowed.Add("10.0.0.0/33").message(), "prefix length /33: expected 0 to 32");
  EXPECT_TRUE(allowed.entries().empty());
  EXPECT_FALSE(allowed.Check("127.0.0.1").ok()) << "an empty list allows nothing";
}

}  // namespace
}  // namespace benchlab

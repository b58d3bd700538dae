// How often refused handshakes are reported (rpc/handshake_refusals.h), on a fake clock.
#include "rpc/handshake_refusals.h"

#include <gtest/gtest.h>

#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

HandshakeRefusal Expired(const std::string& serial = "1A", const std::string& peer = "") {
  HandshakeRefusal r;
  r.fault = HandshakeFault::kExpired;
  r.peer = peer;
  r.identity = "benchlab://agent/srv";
  r.subject = "CN=srv,OU=agent,O=benchlab";
  r.serial = serial;
  r.message = "benchlab://agent/srv (serial " + serial + ") ended 2026-11-30T10:00:00Z";
  return r;
}

TEST(HandshakeRefusalsTest, ABurstIsOneReportAndItsCountComesWithTheNext) {
  FakeClock clock;
  HandshakeRefusals refusals(clock);
  auto first = refusals.Add(Expired());
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].suppressed, 0u);
  EXPECT_FALSE(first[0].summary);
  for (int i = 0; i < 49; ++i) {
    clock.Advance(std::chrono::milliseconds(100));
    EXPECT_TRUE(refusals.Add(Expired()).empty());
  }
  EXPECT_TRUE(refusals.Flush().empty());  // its window is still open
  clock.Advance(kRefusalWindow);
  auto next = refusals.Add(Expired());
  ASSERT_EQ(next.size(), 1u);
  EXPECT_FALSE(next[0].summary);
  EXPECT_EQ(next[0].suppressed, 49u);
  EXPECT_EQ(DescribeRefusal(next[0]),
            "expired: benchlab://agent/srv (serial 1A) ended 2026-11-30T10:00:00Z; 49 more like "
            "it before this, not reported one by one");
}

TEST(HandshakeRefusalsTest, ACountWithoutALaterRefusalIsReportedWhenItsWindowCloses) {
  FakeClock clock;
  HandshakeRefusals refusals(clock);
  ASSERT_EQ(refusals.Add(Expired()).size(), 1u);
  EXPECT_TRUE(refusals.Add(Expired()).empty());
  EXPECT_TRUE(refusals.Add(Expired()).empty());
  clock.Advance(kRefusalWindow);
  // Another kind's refusal, or a flush, reports the closed window's count.
  auto reports = refusals.Add(Expired("2B"));
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].summary);
  EXPECT_EQ(reports[0].serial, "1A");
  EXPECT_EQ(reports[0].suppressed, 2u);
  EXPECT_EQ(DescribeRefusal(reports[0]),
            "expired: benchlab://agent/srv (serial 1A) ended 2026-11-30T10:00:00Z; refused 2 "
            "more times since, not reported one by one");
  EXPECT_EQ(reports[1].serial, "2B");
  EXPECT_FALSE(reports[1].summary);
  // A window that held nothing back ends without a report; a stop reports what is held.
  EXPECT_TRUE(refusals.Add(Expired("2B")).empty());
  auto stop = refusals.Flush(/*all=*/true);
  ASSERT_EQ(stop.size(), 1u);
  EXPECT_EQ(stop[0].serial, "2B");
  EXPECT_EQ(stop[0].suppressed, 1u);
  EXPECT_TRUE(refusals.Flush(true).empty());
}

TEST(HandshakeRefusalsTest, EachPeerCertificateAndFaultIsItsOwnKind) {
  FakeClock clock;
  HandshakeRefusals refusals(clock);
  EXPECT_EQ(refusals.Add(Expired("1A", "10.0.0.5:7000")).size(), 1u);
  EXPECT_EQ(refusals.Add(Expired("1A", "10.0.0.6:7000")).size(), 1u);
  EXPECT_EQ(refusals.Add(Expired("2B", "10.0.0.5:7000")).size(), 1u);
  HandshakeRefusal role = Expired("1A", "10.0.0.5:7000");
  role.fault = HandshakeFault::kWrongRole;
  EXPECT_EQ(refusals.Add(role).size(), 1u);
  EXPECT_TRUE(refusals.Add(Expired("1A", "10.0.0.5:7000")).empty());
}

// A flood of new certificates (each one a kind of its own) cannot make a report each.
TEST(HandshakeRefusalsTest, KindsBeyondTheLimitAreCountedTogether) {
  FakeClock clock;
  HandshakeRefusals refusals(clock);
  size_t reports = 0;
  for (size_t i = 0; i < kMaxRefusalKinds + 1000; ++i) {
    reports += refusals.Add(Expired("S" + std::to_string(i))).size();
  }
  EXPECT_EQ(reports, kMaxRefusalKinds + 1);
  auto held = refusals.Flush(true);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].suppressed, 999u);
  EXPECT_NE(held[0].message.find("counted with it"), std::string::npos) << held[0].message;
}

}  // namespace
}  // namespace benchlab

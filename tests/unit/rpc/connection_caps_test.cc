#include "rpc/connection_caps.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

using Admission = ConnectionCaps::Admission;

TEST(ConnectionCapsTest, CountsByAddressAndInAll) {
  ConnectionCaps caps(3, 2);
  EXPECT_EQ(caps.Admit("10.0.0.1"), Admission::kAdmitted);
  EXPECT_EQ(caps.Admit("10.0.0.1"), Admission::kAdmitted);
  EXPECT_EQ(caps.Admit("10.0.0.1"), Admission::kAddressFull);
  EXPECT_EQ(caps.from("10.0.0.1"), 2u);
  EXPECT_EQ(caps.Admit("10.0.0.2"), Admission::kAdmitted);
  EXPECT_EQ(caps.Admit("10.0.0.3"), Admission::kTotalFull);
  EXPECT_EQ(caps.total(), 3u);
  EXPECT_EQ(caps.from("10.0.0.3"), 0u) << "a refusal counts nothing";

  caps.Release("10.0.0.1");
  EXPECT_EQ(caps.total(), 2u);
  EXPECT_EQ(caps.Admit("10.0.0.3"), Admission::kAdmitted);
  caps.Release("10.0.0.9");  // never admitted: nothing to uncount
  EXPECT_EQ(caps.total(), 3u);
  for (const char* address : {"10.0.0.1", "10.0.0.2", "10.0.0.3"}) caps.Release(address);
  EXPECT_EQ(caps.total(), 0u);
  EXPECT_EQ(caps.from("10.0.0.1"), 0u);
}

}  // namespace
}  // namespace benchlab

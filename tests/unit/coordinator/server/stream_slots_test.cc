// Streams per caller and in all (coordinator/server/stream_slots.h).
#include "coordinator/server/stream_slots.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace benchlab {
namespace {

TEST(StreamSlotsTest, ACallerBeyondItsLimitIsRefusedOthersAreNot) {
  StreamSlots slots(2, 10);
  std::vector<StreamSlots::Slot> held;
  for (int i = 0; i < 2; ++i) {
    auto slot = slots.Take("benchlab://viewer/v", "WatchCampaign streams");
    ASSERT_TRUE(slot.ok());
    held.push_back(std::move(slot).value());
  }
  auto third = slots.Take("benchlab://viewer/v", "WatchCampaign streams");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(third.status().message(),
            "benchlab://viewer/v runs 2 WatchCampaign streams, the limit per caller "
            "(kMaxWatchStreamsPerCaller); end one first");
  EXPECT_TRUE(slots.Take("benchlab://operator/o", "WatchCampaign streams").ok());
  // A slot is free again once its stream ends.
  held.pop_back();
  EXPECT_TRUE(slots.Take("benchlab://viewer/v", "WatchCampaign streams").ok());
  EXPECT_EQ(slots.running(), 1u);
}

TEST(StreamSlotsTest, TheTotalHoldsAcrossCallers) {
  StreamSlots slots(2, 3);
  std::vector<StreamSlots::Slot> held;
  for (const char* caller : {"a", "b", "c"}) {
    auto slot = slots.Take(caller, "WatchCampaign streams");
    ASSERT_TRUE(slot.ok());
    held.push_back(std::move(slot).value());
  }
  auto fourth = slots.Take("d", "WatchCampaign streams");
  ASSERT_FALSE(fourth.ok());
  EXPECT_EQ(fourth.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(fourth.status().message().find("runs 3 WatchCampaign streams in all"),
            std::string::npos)
      << fourth.status().message();
  EXPECT_NE(fourth.status().message().find("kMaxWatchStreams"), std::string::npos);
  held.clear();
  EXPECT_EQ(slots.running(), 0u);
  EXPECT_TRUE(slots.Take("d", "WatchCampaign streams").ok());
}

}  // namespace
}  // namespace benchlab

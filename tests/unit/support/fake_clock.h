// A Clock (common/clock.h) that moves only when a test advances it. Wall time follows the same
// count from the epoch. Thread-safe: the code under test may read it on its own threads while
// the test advances it (an agent's heartbeat thread, gRPC's handshake threads).
#pragma once

#include <atomic>
#include <chrono>

#include "common/clock.h"

namespace benchlab {

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(ticks_.load()));
  }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(Now().time_since_epoch()));
  }
  void Advance(std::chrono::milliseconds d) {
    ticks_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d).count();
  }

 private:
  std::atomic<std::chrono::steady_clock::duration::rep> ticks_{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::seconds(1000))
          .count()};
};

}  // namespace benchlab

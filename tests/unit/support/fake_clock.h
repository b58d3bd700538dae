// A Clock (common/clock.h) that moves only when a test advances it. Wall time follows the same
// count from the epoch. Not thread-safe: advance it from the test's thread while nothing reads it,
// or from inside a call the code under test is blocked on.
#pragma once

#include <chrono>

#include "common/clock.h"

namespace benchlab {

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now_; }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::time_point(now_.time_since_epoch());
  }
  void Advance(std::chrono::milliseconds d) { now_ += d; }

 private:
  std::chrono::steady_clock::time_point now_ =
      std::chrono::steady_clock::time_point(std::chrono::seconds(1000));
};

}  // namespace benchlab

// Clock: the injected source of time. Intervals use the monotonic clock; wall time is only for
// what a person reads (timestamps in the store). Tests use a FakeClock that nothing sleeps on.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace benchlab {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual std::chrono::system_clock::time_point WallNow() = 0;
};

class RealClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::now();
  }
};

Clock& RealClockInstance();

// "2026-11-30T02:38:10.123Z"
std::string FormatIsoTime(std::chrono::system_clock::time_point t);
// Seconds since the epoch of a UTC timestamp as FormatIsoTime and the store write it
// ("2026-11-30T02:38:10.123Z", fraction optional); NaN for any other text.
double ParseIsoSeconds(const std::string& text);

}  // namespace benchlab

#include "common/clock.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace benchlab {

Clock& RealClockInstance() {
  static RealClock clock;
  return clock;
}

std::string FormatIsoTime(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

double ParseIsoSeconds(const std::string& text) {
  std::tm tm{};
  double seconds = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lfZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &seconds, &consumed) != 6 ||
      static_cast<size_t>(consumed) != text.size() || tm.tm_mon < 1 || tm.tm_mon > 12 ||
      tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || seconds < 0 ||
      seconds >= 61) {
    return NAN;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + seconds;
}

}  // namespace benchlab

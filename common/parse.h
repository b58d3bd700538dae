// Parsers for the small value forms shared by campaign files, agent configs and the CLI:
// durations ("500ms", "2s"), CPU lists ("0-1,3") and host:port addresses; and the forms messages
// give counts and lists of names in. Pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

// "250us", "500ms", "2s", "1.5s", "1m", "2h". A bare number is rejected: the unit must be explicit.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);
// "1.5s" style, for people: the shortest exact form among us, ms, s.
std::string FormatDuration(std::chrono::nanoseconds d);

// "0", "0-3", "0,2-3". Sorted, without duplicates. Empty text is an error.
Result<std::vector<int>> ParseCpuList(std::string_view text);
std::string FormatCpuList(const std::vector<int>& cpus);

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string ToString() const;
};
// "127.0.0.1:8080", "localhost:0", "[::1]:9000". Port 0 is allowed (the kernel picks one).
Result<HostPort> ParseHostPort(std::string_view text);

// 4980 -> "4,980", for messages.
std::string FormatCount(uint64_t n);

// "a, b, c"; past `shown` names, the first `shown` and " and 4,980 more", so that an error
// listing what a file holds stays readable however much it holds. "" for none.
inline constexpr size_t kListedNames = 20;
std::string ListNames(const std::vector<std::string>& names, size_t shown = kListedNames);

}  // namespace benchlab

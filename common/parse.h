// Parsers for the small value forms shared by campaign files, agent configs and the CLI:
// durations ("500ms", "2s"), CPU lists ("0-1,3") and host:port addresses; and the forms messages
// give counts and lists of names in. Pure functions.
#pragma once

#include <charconv>
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

// `s` without its leading and trailing whitespace (as std::isspace has it): what /proc, sysfs and
// tools' output lines hold around a value.
std::string_view TrimSpace(std::string_view s);

// The whole of `s` as a T (std::from_chars): false for empty text, trailing characters, a sign T
// cannot hold or a value out of T's range; `out` is then unspecified.
template <typename T>
bool ParseNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// printf into a std::string, for messages; the compiler checks the format against the arguments.
std::string StrFormat(const char* format, ...) __attribute__((format(printf, 1, 2)));

// 4980 -> "4,980", for messages.
std::string FormatCount(uint64_t n);

// "a, b, c"; past `shown` names, the first `shown` and " and 4,980 more", so that an error
// listing what a file holds stays readable however much it holds. "" for none.
inline constexpr size_t kListedNames = 20;
std::string ListNames(const std::vector<std::string>& names, size_t shown = kListedNames);

}  // namespace benchlab

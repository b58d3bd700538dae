#include "common/parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <set>

namespace benchlab {

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("expected a duration such as \"500ms\" or \"2s\", got \"" +
                                   std::string(text) + "\"");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == 0 || i == text.size()) return bad();
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(value)) return bad();
  std::string_view unit = text.substr(i);
  double scale = 0;
  if (unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "m")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return bad();
  double ns = value * scale;
  if (ns > 1e18) return bad();
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(ns)));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  // The largest unit in which the value is at least 1, with as many decimals as exactness needs:
  // 1500ms prints as "1.5s", 250ms as "250ms". Whatever this prints, ParseDuration reads back.
  const int64_t ns = d.count();
  if (ns == 0) return "0s";
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  struct Unit {
    uint64_t scale;
    int digits;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1000000000, 9, "s"}, {1000000, 6, "ms"}, {1000, 3, "us"}};
  Unit unit{1, 0, "ns"};
  for (const Unit& u : kUnits) {
    if (mag >= u.scale) {
      unit = u;
      break;
    }
  }
  std::string out = ns < 0 ? "-" : "";
  out += std::to_string(mag / unit.scale);
  if (uint64_t frac = mag % unit.scale; frac != 0) {
    std::string decimals = std::to_string(frac);
    decimals.insert(0, static_cast<size_t>(unit.digits) - decimals.size(), '0');
    decimals.erase(decimals.find_last_not_of('0') + 1);
    out += "." + decimals;
  }
  return out + unit.name;
}

static bool ParseInt(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out >= 0;
}

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument(
        "expected a CPU list such as \"0\", \"0-3\" or \"0,2-3\", got \"" + std::string(text) +
        "\"");
  };
  if (text.empty()) return bad();
  std::set<int> cpus;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = part.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!ParseInt(part, lo)) return bad();
      hi = lo;
    } else if (!ParseInt(part.substr(0, dash), lo) || !ParseInt(part.substr(dash + 1), hi) ||
               hi < lo) {
      return bad();
    }
    if (hi >= 1024) return bad();
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string StrFormat(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

std::string FormatCount(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string ListNames(const std::vector<std::string>& names, size_t shown) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < shown; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > shown) out += " and " + FormatCount(names.size() - shown) + " more";
  return out;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

namespace {

// A host outside brackets is a DNS name or an IPv4 literal: letters, digits, '.', '-', '_'. Inside
// brackets it is an IPv6 literal: hex digits, ':' and '.', and after '%' a zone (an interface
// name). Anything else (spaces, a second ':' outside brackets, a ']' inside) would not survive
// HostPort::ToString and parse again as the same address.
bool ValidHost(std::string_view host, bool bracketed) {
  if (host.empty() || host.size() > 255) return false;
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  };
  if (!bracketed) return std::all_of(host.begin(), host.end(), name_char);
  size_t zone = host.find('%');
  std::string_view address = host.substr(0, zone);
  if (address.find(':') == std::string_view::npos) return false;
  for (char c : address) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  }
  if (zone == std::string_view::npos) return true;
  std::string_view name = host.substr(zone + 1);
  return !name.empty() && std::all_of(name.begin(), name.end(), name_char);
}

}  // namespace

Result<HostPort> ParseHostPort(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("expected HOST:PORT such as \"127.0.0.1:7700\", got \"" +
                                   std::string(text) + "\"");
  };
  HostPort hp;
  std::string_view port_text;
  const bool bracketed = !text.empty() && text.front() == '[';
  if (bracketed) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad();
    }
    hp.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return bad();
    hp.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (!ValidHost(hp.host, bracketed)) return bad();
  int port = 0;
  if (!ParseInt(port_text, port) || port > 65535) return bad();
  hp.port = static_cast<uint16_t>(port);
  return hp;
}

}  // namespace benchlab

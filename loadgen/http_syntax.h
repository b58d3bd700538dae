// HTTP/1.1 syntax helpers shared by the response parser's head, chunk and trailer code: the
// token and field-value byte classes of RFC 9110, case-insensitive comparison, list elements,
// strict lengths and hex digits, and quoting untrusted bytes for error messages. Pure functions;
// internal to loadgen/.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace benchlab::http_syntax {

// tchar of RFC 9110, as a table: header names are checked byte by byte on the hot path.
inline constexpr std::array<bool, 256> kTokenChar = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = t[c - 32] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// Bytes a field value may not hold: controls other than HTAB, and DEL.
inline constexpr std::array<bool, 256> kBadValueChar = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = c != '\t';
  t[0x7f] = true;
  return t;
}();

inline char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

inline bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls fn(element) for each non-empty, trimmed element of a comma-separated header value.
template <typename Fn>
inline void ForEachListElement(std::string_view value, Fn fn) {
  while (true) {
    const size_t comma = value.find(',');
    std::string_view element = Trim(value.substr(0, comma));
    if (!element.empty()) fn(element);
    if (comma == std::string_view::npos) return;
    value.remove_prefix(comma + 1);
  }
}

// Shows untrusted bytes in an error message: in double quotes, with bytes outside 0x20-0x7e and
// the quote and backslash themselves written as \xNN; at most kQuotedChars characters between
// the quotes (escapes included), then "..." when cut, so a quote never exceeds kQuotedChars + 5.
inline constexpr size_t kQuotedChars = 60;
inline std::string Quote(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    if (out.size() - 1 + (plain ? 1 : 4) > kQuotedChars) break;
    if (plain) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (i < s.size()) out += "...";
  return out + "\"";
}

// A byte count for messages, exact: "16 MiB", "512 KiB", "1000 bytes".
inline std::string FormatSize(uint64_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// "Name: value" with a token name and no control bytes in the value (HTAB aside).
inline bool SplitHeader(std::string_view line, std::string_view& name, std::string_view& value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = line.substr(0, colon);
  for (char c : name) {
    if (!kTokenChar[static_cast<unsigned char>(c)]) return false;
  }
  value = Trim(line.substr(colon + 1));
  for (char c : value) {
    if (kBadValueChar[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

// Strict decimal without sign or spaces; false on overflow.
inline bool ParseLength(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

inline int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace benchlab::http_syntax

#include "common/printable.h"

#include <cstdint>
#include <cstdio>

namespace benchlab {
namespace {

struct Char {
  uint32_t code = 0;
  size_t bytes = 0;  // 0: s[i] does not start well-formed UTF-8
};

// The character at s[i] (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
Char Decode(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80           ? 1
                   : (b >> 5) == 0x6  ? 2
                   : (b >> 4) == 0xE  ? 3
                   : (b >> 3) == 0x1E ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return {};
  uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (c & 0x3Fu);
  }
  constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n};
}

// What a terminal acts on instead of showing: controls, line breaks and reordering marks.
bool Acts(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string Hex(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

}  // namespace

std::string PrintableText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Char c = Decode(text, i);
    if (c.bytes == 0) {
      out += Hex("\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (c.code == '\\') {
      out += "\\\\";
    } else if (c.code == '\n') {
      out += "\\n";
    } else if (c.code == '\r') {
      out += "\\r";
    } else if (c.code == '\t') {
      out += "\\t";
    } else if (Acts(c.code)) {
      out += c.code < 0x80 ? Hex("\\x%02x", c.code) : Hex("\\u%04x", c.code);
    } else {
      out.append(text.substr(i, c.bytes));
    }
    i += c.bytes;
  }
  return out;
}

size_t FirstUnprintable(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Char c = Decode(text, i);
    if (c.bytes == 0 || Acts(c.code)) return i;
    i += c.bytes;
  }
  return std::string_view::npos;
}

std::string Truncated(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // Back to the start of a character cut in two: at most three continuation bytes, so that
  // bytes which are not UTF-8 at all cannot take the whole kept part with them.
  size_t cut = max_bytes;
  for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++k) {
    --cut;
  }
  if ((static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) cut = max_bytes;
  return std::string(text.substr(0, cut)) + "\u2026[+" + std::to_string(text.size() - cut) +
         " bytes]";
}

}  // namespace benchlab

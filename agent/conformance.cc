#include "agent/conformance.h"

#include <strings.h>

#include <cstdio>

namespace benchlab {

namespace {

// Characters between the quotes of an excerpt of what the target sent, and of a case name.
constexpr size_t kExcerpt = 48;
constexpr size_t kNameExcerpt = 40;
// Characters of an error message (which quotes its own excerpts) after the case name.
constexpr size_t kMessageExcerpt = 200;

// The escaped form of one byte: itself when printable, else \n \r \t \" \\ or \xNN.
std::string Escaped(unsigned char ch) {
  switch (ch) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    default:
      if (ch < 0x20 || ch >= 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "\\x%02x", ch);
        return hex;
      }
      return std::string(1, static_cast<char>(ch));
  }
}

// An error message as one bounded line: control and non-ASCII bytes escaped (quotes and
// backslashes kept, the message's own excerpts are already escaped), cut at `limit`.
std::string Printable(std::string_view message, size_t limit) {
  std::string out;
  for (const char c : message) {
    const std::string piece =
        c == '"' || c == '\\' ? std::string(1, c) : Escaped(static_cast<unsigned char>(c));
    if (out.size() + piece.size() > limit) return out + "...";
    out += piece;
  }
  return out;
}

std::string Who(const ContractCase& c) {
  return std::string(c.negative ? "negative " : "scenario ") + QuoteBytes(c.name, kNameExcerpt) +
         ": ";
}

}  // namespace

std::string QuoteBytes(std::string_view bytes, size_t limit) {
  std::string out = "\"";
  for (const char c : bytes) {
    const std::string piece = Escaped(static_cast<unsigned char>(c));
    if (out.size() - 1 + piece.size() > limit) return out + "...\"";
    out += piece;
  }
  return out + "\"";
}

std::string DiffResponse(const ContractCase& c, const HttpResponse& response) {
  const std::string who = Who(c);
  if (response.status != c.expect_status) {
    return who + "status: expected " + std::to_string(c.expect_status) + ", got " +
           std::to_string(response.status);
  }
  for (const auto& [name, value] : c.expect_headers) {
    const std::string* got = nullptr;
    for (const auto& [h, v] : response.headers) {
      if (strcasecmp(h.c_str(), name.c_str()) == 0) got = &v;
    }
    const std::string expected =
        "header " + Printable(name, kNameExcerpt) + ": expected " + QuoteBytes(value, kExcerpt);
    if (got == nullptr) return who + expected + ", missing";
    if (*got != value) return who + expected + ", got " + QuoteBytes(*got, kExcerpt);
  }
  if (c.expect_body && response.body != *c.expect_body) {
    const std::string& want = *c.expect_body;
    size_t at = 0;
    while (at < want.size() && at < response.body.size() && want[at] == response.body[at]) ++at;
    return who + "body differs at byte " + std::to_string(at) + ": expected " +
           QuoteBytes(want, kExcerpt) + " (" + std::to_string(want.size()) + " bytes), got " +
           QuoteBytes(response.body, kExcerpt) + " (" + std::to_string(response.body.size()) +
           " bytes)";
  }
  return "";
}

std::vector<std::string> CheckContract(const std::string& host, uint16_t port,
                                       const std::vector<ContractCase>& cases,
                                       std::chrono::milliseconds timeout, uint64_t max_body,
                                       const ProbeTls* tls) {
  std::vector<std::string> diffs;
  for (const auto& c : cases) {
    auto response = HttpRoundTrip(host, port, c.request, timeout, max_body, tls);
    if (!response.ok()) {
      diffs.push_back(Who(c) + Printable(response.status().message(), kMessageExcerpt));
      continue;
    }
    std::string diff = DiffResponse(c, *response);
    if (!diff.empty()) diffs.push_back(std::move(diff));
  }
  return diffs;
}

}  // namespace benchlab

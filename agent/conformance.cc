#include "agent/conformance.h"

#include <strings.h>

#include <cstdio>

namespace benchlab {

std::string QuoteBytes(const std::string& bytes, size_t limit) {
  std::string out = "\"";
  size_t n = 0;
  for (unsigned char ch : bytes) {
    if (n++ == limit) {
      out += "...";
      break;
    }
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (ch < 0x20 || ch >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", ch);
          out += hex;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string DiffResponse(const ContractCase& c, const HttpResponse& response) {
  std::string who = std::string(c.negative ? "negative" : "scenario") + " \"" + c.name + "\": ";
  if (response.status != c.expect_status) {
    return who + "status: expected " + std::to_string(c.expect_status) + ", got " +
           std::to_string(response.status);
  }
  for (const auto& [name, value] : c.expect_headers) {
    const std::string* got = nullptr;
    for (const auto& [h, v] : response.headers) {
      if (strcasecmp(h.c_str(), name.c_str()) == 0) got = &v;
    }
    if (got == nullptr) return who + "header " + name + ": expected " + QuoteBytes(value) + ", missing";
    if (*got != value) {
      return who + "header " + name + ": expected " + QuoteBytes(value) + ", got " + QuoteBytes(*got);
    }
  }
  if (c.expect_body && response.body != *c.expect_body) {
    const std::string& want = *c.expect_body;
    size_t at = 0;
    while (at < want.size() && at < response.body.size() && want[at] == response.body[at]) ++at;
    return who + "body differs at byte " + std::to_string(at) + ": expected " + QuoteBytes(want) +
           " (" + std::to_string(want.size()) + " bytes), got " + QuoteBytes(response.body) + " (" +
           std::to_string(response.body.size()) + " bytes)";
  }
  return "";
}

std::vector<std::string> CheckContract(const std::string& host, uint16_t port,
                                       const std::vector<ContractCase>& cases,
                                       std::chrono::milliseconds timeout) {
  std::vector<std::string> diffs;
  for (const auto& c : cases) {
    auto response = HttpRoundTrip(host, port, c.request, timeout);
    if (!response.ok()) {
      diffs.push_back(std::string(c.negative ? "negative" : "scenario") + " \"" + c.name +
                      "\": " + response.status().message());
      continue;
    }
    std::string diff = DiffResponse(c, *response);
    if (!diff.empty()) diffs.push_back(std::move(diff));
  }
  return diffs;
}

}  // namespace benchlab

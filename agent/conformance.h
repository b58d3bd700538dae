// Conformance: before any measurement, a target must answer every contract case (scenarios and
// negative cases) with the expected status, exact body bytes and named headers. The check runs
// from the load host over the same network path as the load. Pure comparison is split from I/O
// so the diff logic is unit-tested without sockets. What the target sent is untrusted: a diff
// line quotes at most a short excerpt of it, escaped (QuoteBytes), so every line stays under
// kMaxDiffLine bytes without control bytes, whatever the response. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loadgen/http_client.h"
#include "loadgen/load.h"

namespace benchlab {

struct ContractCase {
  std::string name;
  bool negative = false;
  HttpRequest request;
  int expect_status = 200;
  std::optional<std::string> expect_body;
  std::vector<std::pair<std::string, std::string>> expect_headers;  // names case-insensitive
};

// Empty when the response matches; otherwise one line naming the case and the first difference,
// e.g. scenario "hello": body differs at byte 0: expected "hello\n" (6 bytes), got "hi" (2 bytes)
std::string DiffResponse(const ContractCase& c, const HttpResponse& response);

// Runs every case against host:port; returns one diff line per failing case (empty: conformant).
// A case whose request is malformed (CheckRequestParts) fails without reaching the network; a
// response body over max_body bytes (0: no limit) is a difference, read no further. With `tls`
// every case goes over HTTPS, the target's certificate verified (ProbeTls); a failed handshake is
// each case's difference.
std::vector<std::string> CheckContract(const std::string& host, uint16_t port,
                                       const std::vector<ContractCase>& cases,
                                       std::chrono::milliseconds timeout,
                                       uint64_t max_body = LoadOptions::kDefaultMaxBody,
                                       const ProbeTls* tls = nullptr);

// Bytes as a short printable quote: "hello\n", with \n \r \t \" \\ and \xNN escapes, at most
// `limit` characters between the quotes (escapes included), then "..." when cut.
std::string QuoteBytes(std::string_view bytes, size_t limit = 60);

// No diff line is longer: a quoted case name, the difference and its excerpts.
inline constexpr size_t kMaxDiffLine = 300;

}  // namespace benchlab

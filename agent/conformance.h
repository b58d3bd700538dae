// Conformance: before any measurement, a target must answer every contract case (scenarios and
// negative cases) with the expected status, exact body bytes and named headers. The check runs
// from the load host over the same network path as the load. Pure comparison is split from I/O
// so the diff logic is unit-tested without sockets. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/http_client.h"

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
std::vector<std::string> CheckContract(const std::string& host, uint16_t port,
                                       const std::vector<ContractCase>& cases,
                                       std::chrono::milliseconds timeout);

// Bytes as a short printable quote: "hello\n", with long bodies cut to `limit` characters.
std::string QuoteBytes(const std::string& bytes, size_t limit = 60);

}  // namespace benchlab

// A blocking one-shot HTTP/1.1 client for readiness probes and conformance checks (not for
// load). Checks the request (CheckRequestParts, CheckRequestFraming) before it connects, opens a
// connection, sends one request with "Connection: close", reads one response with
// HttpResponseParser (capture on, the body bounded by max_body) and returns status, headers and
// body. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "loadgen/load.h"

namespace benchlab {

struct HttpRequest {
  std::string method = "GET";
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// A request that would not make one well-formed request is InvalidArgument, and nothing is
// sent. Connection refused, timeouts, and malformed responses come back as non-ok Status with a
// message naming what failed ("connect 127.0.0.1:8080: Connection refused"); a body of more
// than max_body bytes (0: no limit) is ResourceExhausted ("... response body larger than
// 16 MiB ..."), read no further than the limit.
Result<HttpResponse> HttpRoundTrip(const std::string& host, uint16_t port, const HttpRequest& req,
                                   std::chrono::milliseconds timeout,
                                   uint64_t max_body = LoadOptions::kDefaultMaxBody);

}  // namespace benchlab

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

// HTTPS for a probe: the server's certificate must chain to `ca_pem` (PEM text, not a path) and
// name `server_name`, which is also sent as SNI. TLS 1.2 at least.
struct ProbeTls {
  std::string ca_pem;
  std::string server_name = "localhost";
};

// A request that would not make one well-formed request is InvalidArgument, and nothing is
// sent. Connection refused, timeouts, and malformed responses come back as non-ok Status with a
// message naming what failed ("connect 127.0.0.1:8080: Connection refused"); a body of more
// than max_body bytes (0: no limit) is ResourceExhausted ("... response body larger than
// 16 MiB ..."), read no further than the limit. With `tls` the request goes over TLS after a
// handshake within the same timeout; a server that does not speak TLS, or whose certificate does
// not verify, is Unavailable ("TLS handshake with 127.0.0.1:8443: ...").
Result<HttpResponse> HttpRoundTrip(const std::string& host, uint16_t port, const HttpRequest& req,
                                   std::chrono::milliseconds timeout,
                                   uint64_t max_body = LoadOptions::kDefaultMaxBody,
                                   const ProbeTls* tls = nullptr);

}  // namespace benchlab

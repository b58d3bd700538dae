// BuildRequest: the bytes of one HTTP/1.1 request, built once and reused (the load engine sends
// the same string on every connection; the one-shot client sends it once). Pure; thread-safe.
// Headers the caller supplies win over the ones added here (Host, Content-Length, Connection).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace benchlab {

struct RequestSpec {
  std::string_view method = "GET";
  std::string_view path = "/";
  std::string_view host;  // a name or an IP literal (IPv6 without brackets)
  uint16_t port = 80;
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
  std::string_view body;
  bool connection_close = false;
};

std::string BuildRequest(const RequestSpec& spec);

// "host", "host:8080", "[::1]:8080": the Host header value (port omitted when it is 80).
std::string HostHeaderValue(std::string_view host, uint16_t port);

// Whether method, path and headers make one well-formed request head, so that nothing a caller
// sends can become a second request line or header (docs/security.md): the method is a token of
// at most kMaxMethod bytes; the path starts with '/' and holds only visible ASCII (0x21-0x7e),
// at most kMaxPath bytes; at most kMaxHeaders headers, each name a token of at most
// kMaxHeaderName bytes, each value without control bytes other than HTAB (no CR, LF or NUL), at
// most kMaxHeaderValue bytes. InvalidArgument names `where`, the part and the rule broken, and
// quotes at most a short, escaped excerpt of the offending bytes.
Status CheckRequestParts(std::string_view where, std::string_view method, std::string_view path,
                         const std::vector<std::pair<std::string, std::string>>& headers);
// Whether the body stays one body: BuildRequest frames it with Content-Length, so a caller's
// Content-Length must be its exact length and Transfer-Encoding is refused (either could turn
// the body's bytes into a second request). InvalidArgument names `where` and the header.
Status CheckRequestFraming(std::string_view where,
                           const std::vector<std::pair<std::string, std::string>>& headers,
                           std::string_view body);
inline constexpr size_t kMaxMethod = 32;
inline constexpr size_t kMaxPath = 8192;
inline constexpr size_t kMaxHeaders = 100;
inline constexpr size_t kMaxHeaderName = 256;
inline constexpr size_t kMaxHeaderValue = 8192;

}  // namespace benchlab

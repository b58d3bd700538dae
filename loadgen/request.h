// BuildRequest: the bytes of one HTTP/1.1 request, built once and reused (the load engine sends
// the same string on every connection; the one-shot client sends it once). Pure; thread-safe.
// Headers the caller supplies win over the ones added here (Host, Content-Length, Connection).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

}  // namespace benchlab

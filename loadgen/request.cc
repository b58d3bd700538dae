#include "loadgen/request.h"

namespace benchlab {

namespace {

bool HasHeader(const std::vector<std::pair<std::string, std::string>>* headers,
               std::string_view name) {
  if (headers == nullptr) return false;
  for (const auto& [n, v] : *headers) {
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < n.size() && same; ++i) {
      same = (n[i] | 0x20) == (name[i] | 0x20);  // names here are letters and '-'
    }
    if (same) return true;
  }
  return false;
}

}  // namespace

std::string HostHeaderValue(std::string_view host, uint16_t port) {
  std::string out;
  const bool ipv6 = host.find(':') != std::string_view::npos;
  if (ipv6) out += '[';
  out += host;
  if (ipv6) out += ']';
  if (port != 80) out += ":" + std::to_string(port);
  return out;
}

std::string BuildRequest(const RequestSpec& spec) {
  std::string out;
  out.reserve(128 + spec.body.size());
  out.append(spec.method).append(" ").append(spec.path).append(" HTTP/1.1\r\n");
  if (!HasHeader(spec.headers, "host")) {
    out.append("Host: ").append(HostHeaderValue(spec.host, spec.port)).append("\r\n");
  }
  if (spec.headers != nullptr) {
    for (const auto& [name, value] : *spec.headers) {
      out.append(name).append(": ").append(value).append("\r\n");
    }
  }
  if (!spec.body.empty() && !HasHeader(spec.headers, "content-length")) {
    out.append("Content-Length: ").append(std::to_string(spec.body.size())).append("\r\n");
  }
  if (spec.connection_close && !HasHeader(spec.headers, "connection")) {
    out.append("Connection: close\r\n");
  }
  out.append("\r\n").append(spec.body);
  return out;
}

}  // namespace benchlab

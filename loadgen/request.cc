#include "loadgen/request.h"

#include "loadgen/http_syntax.h"

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

Status CheckRequestParts(std::string_view where, std::string_view method, std::string_view path,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  using http_syntax::kBadValueChar;
  using http_syntax::kTokenChar;
  using http_syntax::Quote;
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument(std::string(where) + ": " + what);
  };
  auto token = [](std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
      if (!kTokenChar[static_cast<unsigned char>(c)]) return false;
    }
    return true;
  };
  if (method.size() > kMaxMethod || !token(method)) {
    return bad("method " + Quote(method) + ": expected an HTTP token (letters, digits, " +
               "!#$%&'*+-.^_`|~) of 1 to " + std::to_string(kMaxMethod) + " bytes");
  }
  bool path_ok = !path.empty() && path.size() <= kMaxPath && path.front() == '/';
  for (size_t i = 0; path_ok && i < path.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    path_ok = c >= 0x21 && c <= 0x7e;
  }
  if (!path_ok) {
    return bad("path " + Quote(path) + ": expected '/' then visible ASCII (no spaces or control " +
               "bytes; percent-encode the rest), at most " + std::to_string(kMaxPath) + " bytes");
  }
  if (headers.size() > kMaxHeaders) {
    return bad(std::to_string(headers.size()) + " headers: at most " + std::to_string(kMaxHeaders) +
               " are allowed");
  }
  for (const auto& [name, value] : headers) {
    if (name.size() > kMaxHeaderName || !token(name)) {
      return bad("header name " + Quote(name) + ": expected an HTTP token of 1 to " +
                 std::to_string(kMaxHeaderName) + " bytes");
    }
    bool value_ok = value.size() <= kMaxHeaderValue;
    for (size_t i = 0; value_ok && i < value.size(); ++i) {
      value_ok = !kBadValueChar[static_cast<unsigned char>(value[i])];
    }
    if (!value_ok) {
      return bad("header " + Quote(name) + " value " + Quote(value) +
                 ": expected no control bytes (CR, LF, NUL, ...) and at most " +
                 std::to_string(kMaxHeaderValue) + " bytes");
    }
  }
  return Status::Ok();
}

Status CheckRequestFraming(std::string_view where,
                           const std::vector<std::pair<std::string, std::string>>& headers,
                           std::string_view body) {
  using http_syntax::IEquals;
  using http_syntax::Quote;
  const std::string length = std::to_string(body.size());
  for (const auto& [name, value] : headers) {
    if (IEquals(name, "transfer-encoding")) {
      return Status::InvalidArgument(std::string(where) + ": header " + name +
                                     ": not allowed; the body is sent with Content-Length");
    }
    if (IEquals(name, "content-length") && value != length) {
      return Status::InvalidArgument(std::string(where) + ": header " + name + " " + Quote(value) +
                                     ": expected the body's length, " + length);
    }
  }
  return Status::Ok();
}

}  // namespace benchlab

// ParseUrlInto: "http[s]://host[:port][/path][?query]" into LoadOptions' host, port, path and
// whether it is HTTPS.
#include <cctype>
#include <charconv>

#include "loadgen/load.h"

namespace benchlab {

Status ParseUrlInto(const std::string& url, LoadOptions& options) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(why + " in \"" + url +
                                   "\"; expected a URL such as \"http://127.0.0.1:8080/path\"");
  };
  const size_t sep = url.find("://");
  if (sep == std::string::npos) return bad("missing \"http://\"");
  std::string scheme = url.substr(0, sep);
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("expected an http:// or https:// URL, got \"" + url + "\"");
  }
  const bool https = scheme == "https";
  const std::string_view rest = std::string_view(url).substr(sep + 3);
  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  std::string path(authority_end == std::string_view::npos ? "" : rest.substr(authority_end));
  path = path.substr(0, path.find('#'));  // fragments never reach the server
  if (path.empty() || path.front() == '?') path.insert(0, "/");
  if (path.find_first_of(" \t\r\n") != std::string::npos) return bad("whitespace in the path");

  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  std::string_view host = authority, port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port_text = after.substr(1);
      if (port_text.empty()) return bad("empty port");
    }
  } else if (const size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
    if (port_text.empty()) return bad("empty port");
  }
  if (host.empty()) return bad("missing host");
  int port = https ? 443 : 80;
  if (!port_text.empty()) {
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      return bad("port must be 1-65535, got \"" + std::string(port_text) + "\"");
    }
  }
  options.host = std::string(host);
  options.port = static_cast<uint16_t>(port);
  options.path = std::move(path);
  // https keeps options the caller set before (a campaign's [load] tls); plain http has none.
  if (https && !options.tls) options.tls.emplace();
  if (!https) options.tls.reset();
  return Status::Ok();
}

}  // namespace benchlab

// HttpApi's checks of who asks (http_api.h): the Host and Origin a request may carry, the
// dashboard's callers (DashboardAuth) and the audit rows of their calls.
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string_view>

#include "common/clock.h"
#include "coordinator/server/dashboard_auth.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/http_api_internal.h"
#include "spdlog/spdlog.h"

namespace benchlab {

using http_detail::ReplyError;

namespace {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF.
bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0) low = 0xa0;
      if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0) low = 0x90;
      if (lead == 0xf4) high = 0x8f;
    } else {
      return false;
    }
    if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return false;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return false;
    }
    i += length;
  }
  return true;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// A Host header's form: a name or IPv4 address ("example.com"), or an IPv6 address in
// brackets ("[::1]"), with an optional ":PORT". *has_port tells which.
bool IsHostValue(std::string_view value, bool* has_port) {
  std::string_view host = value, rest;
  if (value.starts_with('[')) {
    const size_t close = value.find(']');
    if (close == std::string_view::npos || close < 2) return false;
    const std::string_view inner = value.substr(1, close - 1);
    if (inner.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
      return false;
    }
    host = value.substr(0, close + 1);
    rest = value.substr(close + 1);
  } else {
    const size_t colon = value.find(':');
    host = value.substr(0, colon);
    rest = colon == std::string_view::npos ? "" : value.substr(colon);
    const bool name = std::all_of(host.begin(), host.end(), [](unsigned char c) {
      return std::isalnum(c) != 0 || c == '-' || c == '.';
    });
    if (host.empty() || !name) return false;
  }
  *has_port = !rest.empty();
  if (rest.empty()) return true;
  const std::string_view port = rest.substr(1);
  return rest[0] == ':' && !port.empty() && port.size() <= 5 &&
         port.find_first_not_of("0123456789") == std::string_view::npos;
}

// 127.0.0.0/8, localhost, ::1, and the wildcard addresses, which reach loopback too.
bool ServesLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "0.0.0.0" ||
         host == "::" || host.empty();
}
}  // namespace

Result<std::set<std::string>> AllowedHosts(const HostPort& bound,
                                           const std::vector<std::string>& names) {
  const std::string port = std::to_string(bound.port);
  std::set<std::string> hosts;
  if (bound.host != "0.0.0.0" && bound.host != "::" && !bound.host.empty()) {
    hosts.insert(Lower(bound.ToString()));
  }
  if (ServesLoopback(bound.host)) {
    for (const char* loopback : {"127.0.0.1:", "localhost:", "[::1]:"}) {
      hosts.insert(loopback + port);
    }
  }
  for (const std::string& name : names) {
    bool has_port = false;
    if (!IsHostValue(name, &has_port)) {
      return Status::InvalidArgument(
          "--http-host: expected a host name or address with an optional :PORT, such as "
          "\"bench.example.com\" or \"10.0.0.7:8080\", got \"" +
          name + "\"");
    }
    hosts.insert(Lower(name));
    if (!has_port) hosts.insert(Lower(name) + ":" + port);
  }
  return hosts;
}

bool HttpApi::Refused(const httplib::Request& req, httplib::Response& res) const {
  const std::string host = Lower(req.get_header_value("Host"));
  if (hosts_.count(host) == 0) {
    ReplyError(res, 421,
               "Host \"" + host +
                   "\" is not one this dashboard serves; start the coordinator "
                   "with --http-host NAME to serve it under another name (docs/api.md)");
    return true;
  }
  if (req.method != "GET" && req.method != "HEAD" && req.has_header("Origin")) {
    const std::string origin = Lower(req.get_header_value("Origin"));
    const std::string prefix = scheme_ + "://";
    if (origin.rfind(prefix, 0) != 0 || hosts_.count(origin.substr(prefix.size())) == 0) {
      ReplyError(res, 403, "Origin \"" + origin + "\" may not change anything here");
      return true;
    }
  }
  bool utf8 = IsUtf8(req.path);
  for (const auto& [key, value] : req.params) utf8 = utf8 && IsUtf8(key) && IsUtf8(value);
  if (!utf8) {
    ReplyError(res, 400, "the request's path or query is not UTF-8");
    return true;
  }
  return false;
}

bool HttpApi::Screened(const httplib::Request& req, httplib::Response& res) {
  if (Refused(req, res)) return true;
  // Every read of the API and of /metrics is checked here; the one change (re-run) and the
  // session calls check their callers themselves. The page's own files hold no data and are
  // served to all.
  const bool read =
      (req.path.rfind("/api/", 0) == 0 && req.path != "/api/v1/session") || req.path == "/metrics";
  if (req.method == "GET" && read) {
    auto caller = Caller(req, res, "DashboardRead");
    if (!caller) return true;
    if (Status may = auth_->MayRead(*caller); !may.ok()) {
      Audit(req, *caller, "DashboardRead", req.path, may);
      res.set_header("WWW-Authenticate", "Bearer");
      ReplyError(res, 401, may.message());
      return true;
    }
  }
  return false;
}

std::optional<DashboardCaller> HttpApi::Caller(const httplib::Request& req, httplib::Response& res,
                                               const std::string& call) {
  auto caller =
      auth_->Identify(req.get_header_value("Authorization"), req.get_header_value("Cookie"));
  if (caller.ok()) return *caller;
  Audit(req, DashboardCaller{}, call, req.path, caller.status());
  res.set_header("WWW-Authenticate", "Bearer");
  ReplyError(res, caller.status().code() == StatusCode::kUnauthenticated ? 401 : 500,
             Answerable(caller.status().message()));
  return std::nullopt;
}

void HttpApi::Audit(const httplib::Request& req, const DashboardCaller& caller,
                    const std::string& call, const std::string& subject, const Status& outcome) {
  AuditRow row;
  row.at = FormatIsoTime(store_.clock().WallNow());
  row.identity = caller.anonymous() ? "dashboard:anonymous" : "dashboard:" + caller.name;
  row.role = caller.role;
  row.peer = req.remote_addr + ":" + std::to_string(req.remote_port);
  row.call = call;
  row.subject = subject;
  const bool refused = outcome.code() == StatusCode::kUnauthenticated ||
                       outcome.code() == StatusCode::kPermissionDenied;
  row.outcome = outcome.ok() ? "ok" : refused ? "refused" : "failed";
  row.reason = outcome.ok() ? "" : outcome.message();
  if (Status st = store_.AppendAudit(row); !st.ok()) {
    spdlog::warn("dashboard: {} not audited: {}", call, st.message());
  }
}
}  // namespace benchlab

// HttpApi's routes (http_api.h): the table of paths and their handlers, the answers' headers and
// errors, and starting and stopping the server. The documents are built in http_api_docs.cc,
// the Host, Origin and caller checks are in http_api_hosts.cc.
#include "coordinator/server/http_api.h"

#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/report_format.h"
#include "common/clock.h"
#include "coordinator/rerun.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/agents_json.h"
#include "coordinator/server/dashboard_auth.h"
#include "coordinator/server/http_api_internal.h"
#include "coordinator/server/metrics.h"
#include "coordinator/server/scheduler.h"
#include "rpc/http_server.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"
#include "tls/https.h"

namespace benchlab {

using http_detail::CampaignDocAfter;
using http_detail::Nullable;
using http_detail::ojson;
using http_detail::ReadCampaignHead;
using http_detail::ReplyError;

namespace {

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    default:
      return 500;
  }
}

// JSON text of a document: bytes that are not UTF-8 (a name taken from a request path) become
// U+FFFD rather than an exception.
std::string Dump(const ojson& doc) {
  return doc.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

void ReplyJson(httplib::Response& res, int status, const ojson& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(Dump(body), "application/json");
}
}  // namespace

namespace http_detail {

void ReplyError(httplib::Response& res, int status, const std::string& message) {
  ReplyJson(res, status, ojson{{"error", message}});
}
}  // namespace http_detail

namespace {

// Every answer's (docs/api.md, "Security headers"). The page is web/'s bundle: one script
// and one stylesheet of its own, no inline code or style (elements are styled through the
// CSSOM, which style-src does not govern), an icon that is a data: URL, and calls to its own
// origin only. No other site may frame it (frame-ancestors; X-Frame-Options for browsers
// without CSP 2), browsers take the content types as given, and its URLs (campaign names) are
// never sent to other sites as Referer.
const httplib::Headers& SecurityHeaders() {
  static const httplib::Headers headers = {
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
       "form-action 'self'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
  };
  return headers;
}

// POST /api/v1/rerun's body, checked field by field.
Result<RerunSelection> ParseRerunBody(const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Status::InvalidArgument("body: expected a JSON object");
  }
  RerunSelection selection;
  for (auto& [key, value] : json.items()) {
    if (key == "window_ids") {
      if (!value.is_array()) return Status::InvalidArgument("window_ids: expected an array");
      for (const auto& id : value) {
        if (!id.is_number_integer() || id.get<int64_t>() <= 0) {
          return Status::InvalidArgument("window_ids: expected positive integer ids, got " +
                                         id.dump());
        }
        selection.window_ids.push_back(id.get<int64_t>());
      }
    } else if (key == "invalid" || key == "failed") {
      if (!value.is_boolean()) return Status::InvalidArgument(key + ": expected true or false");
      (key == "invalid" ? selection.invalid : selection.failed) = value.get<bool>();
    } else if (key == "campaign") {
      if (!value.is_string()) return Status::InvalidArgument("campaign: expected a string");
      selection.campaign = value.get<std::string>();
    } else {
      return Status::InvalidArgument("unknown field \"" + key +
                                     "\" (expected window_ids, invalid, failed, campaign)");
    }
  }
  return selection;
}

// What an error the HTTP layer answered by itself (a request it cannot parse) was.
std::string StatusWords(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 413:
      return "payload too large";
    case 414:
      return "URI too long";
    default:
      return "HTTP error " + std::to_string(status);
  }
}

constexpr const char* kNoDashboard =
    "<!doctype html><meta charset=utf-8><title>benchlab</title>"
    "<h1>benchlab coordinator</h1><p>The dashboard's files are not built, or --web-root does "
    "not point at them. Build them with <code>make build</code> (they land in "
    "<code>build/web</code>), or read the JSON API under <a href=\"/api/v1/campaigns\">"
    "/api/v1</a> (docs/api.md).</p>";

// An ETag for a version: quoted, of characters an ETag allows whatever the names hold.
std::string ETagOf(const std::string& version) {
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char ch : version) {
    hash ^= ch;
    hash *= 1099511628211ULL;
  }
  char text[24];
  std::snprintf(text, sizeof text, "\"%016llx\"", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace

std::string HttpApi::Answerable(const std::string& message) const {
  const std::string& db = metrics_.db_path();
  if (db.empty()) return message;
  std::string out = message;
  for (size_t at; (at = out.find(db + ": ")) != std::string::npos;) out.erase(at, db.size() + 2);
  for (size_t at; (at = out.find(db)) != std::string::npos;)
    out.replace(at, db.size(), "the store");
  return out;
}

void HttpApi::ReplyStatus(httplib::Response& res, const Status& status) const {
  const int code = HttpStatusOf(status);
  if (code == 500) spdlog::warn("http api: {}", status.message());
  ReplyError(res, code, Answerable(status.message()));
}

void HttpApi::ReplyDoc(httplib::Response& res, const Result<ojson>& doc) const {
  if (doc.ok()) return ReplyJson(res, 200, *doc);
  ReplyStatus(res, doc.status());
}

HttpApi::HttpApi(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                 CoordinatorMetrics& metrics)
    : store_(store), agents_(agents), scheduler_(scheduler), metrics_(metrics) {}

HttpApi::~HttpApi() { Stop(); }

namespace {

// What the HTTP layer refused by itself (a request it cannot parse) is answered in JSON too.
httplib::Server::HandlerResponse AnswerHttpError(const httplib::Request&, httplib::Response& res) {
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  ReplyError(res, res.status, StatusWords(res.status));
  return httplib::Server::HandlerResponse::Handled;
}

// The dashboard's files from `web_root`; without them, / says how to build them.
void ServePage(httplib::Server& s, const std::string& web_root) {
  const bool have_page =
      !web_root.empty() && std::filesystem::exists(std::filesystem::path(web_root) / "index.html");
  if (have_page && s.set_mount_point("/", web_root)) {
    spdlog::info("dashboard files from {}", web_root);
    // Revalidated on every load, so a rebuilt page is never served from a stale cache.
    s.set_file_request_handler([](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-cache");
    });
  } else {
    spdlog::warn("no dashboard files at '{}': / explains how to build them", web_root);
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content(kNoDashboard, "text/html; charset=utf-8");
    });
  }
}

}  // namespace

void HttpApi::Routes(const std::string& web_root) {
  enum class Method { kGet, kPost, kDelete };
  struct Route {
    Method method;
    const char* path;  // a regular expression the whole path must match
    void (HttpApi::*handler)(const httplib::Request&, httplib::Response&);
  };
  // docs/api.md. Of a method's routes the first whose path matches answers, so the catch-alls
  // of /api/ come last.
  static const Route kRoutes[] = {
      {Method::kGet, "/api/v1/campaigns", &HttpApi::GetCampaigns},
      {Method::kGet, R"(/api/v1/campaigns/([^/]+))", &HttpApi::GetCampaign},
      {Method::kGet, R"(/api/v1/campaigns/([^/]+)/report)", &HttpApi::GetReport},
      {Method::kGet, R"(/api/v1/campaigns/([^/]+)/profile)", &HttpApi::GetProfile},
      {Method::kGet, R"(/api/v1/campaigns/([^/]+)/profile-diff)", &HttpApi::GetProfileDiff},
      {Method::kGet, R"(/api/v1/series/([^/]+))", &HttpApi::GetSeries},
      {Method::kGet, R"(/api/v1/windows/(\d{1,18}))", &HttpApi::GetWindow},
      {Method::kGet, "/api/v1/bisections", &HttpApi::GetBisections},
      {Method::kGet, R"(/api/v1/bisections/(\d{1,18}))", &HttpApi::GetBisection},
      {Method::kGet, "/api/v1/agents", &HttpApi::GetAgents},
      {Method::kGet, "/metrics", &HttpApi::GetMetrics},
      {Method::kGet, "/api/v1/session", &HttpApi::GetSession},
      {Method::kPost, "/api/v1/session", &HttpApi::LogIn},
      {Method::kDelete, "/api/v1/session", &HttpApi::LogOut},
      {Method::kPost, "/api/v1/rerun", &HttpApi::Rerun},
      {Method::kGet, R"(/api/.*)", &HttpApi::UnknownPath},
      {Method::kPost, R"(/api/.*)", &HttpApi::UnknownPath},
      {Method::kDelete, R"(/api/.*)", &HttpApi::UnknownPath},
  };
  httplib::Server& s = server_->routes();
  server_->SetAnswerHeaders(SecurityHeaders());
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return Screened(req, res) ? httplib::Server::HandlerResponse::Handled
                              : httplib::Server::HandlerResponse::Unhandled;
  });
  // Whatever fails, and whatever the HTTP layer itself refuses, is answered in JSON too.
  s.set_exception_handler([this](const httplib::Request& req, httplib::Response& res,
                                 std::exception_ptr error) { AnswerException(req, res, error); });
  s.set_error_handler(httplib::Server::HandlerWithResponse(AnswerHttpError));
  for (const Route& route : kRoutes) {
    httplib::Server::Handler handler = [this, member = route.handler](const httplib::Request& req,
                                                                      httplib::Response& res) {
      (this->*member)(req, res);
    };
    switch (route.method) {
      case Method::kGet:
        s.Get(route.path, std::move(handler));
        break;
      case Method::kPost:
        s.Post(route.path, std::move(handler));
        break;
      case Method::kDelete:
        s.Delete(route.path, std::move(handler));
        break;
    }
  }
  ServePage(s, web_root);
}

void HttpApi::AnswerException(const httplib::Request& req, httplib::Response& res,
                              std::exception_ptr error) const {
  std::string what = "unknown error";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  spdlog::warn("http api: {} {}: {}", req.method, req.path, what);
  ReplyError(res, 500, "internal error: " + Answerable(what));
}

void HttpApi::GetCampaigns(const httplib::Request&, httplib::Response& res) {
  ReplyDoc(res, CampaignListDoc(store_));
}

void HttpApi::GetCampaign(const httplib::Request& req, httplib::Response& res) {
  // A page polls this while a campaign runs: unchanged, it costs a few small queries
  // and a 304 instead of the whole run of record (the browser revalidates by itself).
  auto head = ReadCampaignHead(store_, req.matches[1].str());
  if (!head.ok()) return ReplyStatus(res, head.status());
  const std::string etag = ETagOf(head->version);
  if (req.get_header_value("If-None-Match") == etag) {
    res.status = 304;
    res.set_header("ETag", etag);
    res.set_header("Cache-Control", "no-cache");
    return;
  }
  auto doc = CampaignDocAfter(store_, *head);
  if (!doc.ok()) return ReplyStatus(res, doc.status());
  // The browser keeps it and asks again with If-None-Match (no-cache, not no-store).
  res.status = 200;
  res.set_header("ETag", etag);  // the document's own progress.version
  res.set_header("Cache-Control", "no-cache");
  res.set_content(Dump(*doc), "application/json");
}

void HttpApi::GetReport(const httplib::Request& req, httplib::Response& res) {
  const std::string format = req.has_param("format") ? req.get_param_value("format") : "md";
  auto input = LoadReportInput(store_, req.matches[1].str());
  if (!input.ok()) return ReplyStatus(res, input.status());
  auto text = FormatReport(*input, format);
  if (!text.ok()) return ReplyError(res, 400, text.status().message());
  const char* type = format == "json"  ? "application/json"
                     : format == "csv" ? "text/csv; charset=utf-8"
                                       : "text/markdown; charset=utf-8";
  res.set_header("Cache-Control", "no-store");
  res.set_content(*text, type);
}

void HttpApi::GetProfile(const httplib::Request& req, httplib::Response& res) {
  ProfileQuery query;
  query.target = req.get_param_value("target");
  query.cell = req.get_param_value("cell");
  query.window = req.get_param_value("window");
  ReplyDoc(res, ProfileDoc(store_, req.matches[1].str(), query));
}

void HttpApi::GetProfileDiff(const httplib::Request& req, httplib::Response& res) {
  ReplyDoc(res, ProfileDiffDoc(store_, req.matches[1].str(), req.get_param_value("base"),
                               req.get_param_value("new"), req.get_param_value("cell")));
}

void HttpApi::GetSeries(const httplib::Request& req, httplib::Response& res) {
  const std::string figure = req.has_param("figure") ? req.get_param_value("figure") : "rps";
  ReplyDoc(res, SeriesDoc(store_, req.matches[1].str(), figure));
}

void HttpApi::GetWindow(const httplib::Request& req, httplib::Response& res) {
  ReplyDoc(res, WindowDoc(store_, std::stoll(req.matches[1].str())));
}

void HttpApi::GetBisections(const httplib::Request&, httplib::Response& res) {
  ReplyDoc(res, BisectionListDoc(store_));
}

void HttpApi::GetBisection(const httplib::Request& req, httplib::Response& res) {
  ReplyDoc(res, BisectionDoc(store_, std::stoll(req.matches[1].str())));
}

void HttpApi::GetAgents(const httplib::Request&, httplib::Response& res) {
  ReplyJson(res, 200, AgentsToJson(agents_.List()));
}

void HttpApi::GetMetrics(const httplib::Request&, httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  res.set_content(metrics_.Scrape(store_, agents_), kMetricsContentType);
}

void HttpApi::GetSession(const httplib::Request& req, httplib::Response& res) {
  auto caller = Caller(req, res, "DashboardSession");
  if (!caller) return;
  ReplyJson(res, 200,
            ojson{{"name", Nullable(caller->name)},
                  {"role", Nullable(caller->role)},
                  {"reads_open", auth_->reads_open()},
                  {"can_rerun", auth_->MayChange(*caller).ok()}});
}

void HttpApi::LogIn(const httplib::Request& req, httplib::Response& res) {
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    return ReplyError(res, 415, "Content-Type: expected application/json");
  }
  const ojson body = ojson::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("token") || !body["token"].is_string()) {
    return ReplyError(res, 400, "expected {\"token\": \"blt_...\"}");
  }
  auto login = auth_->LogIn(body["token"].get<std::string>());
  if (!login.ok()) {
    Audit(req, DashboardCaller{}, "DashboardLogIn", "", login.status());
    res.set_header("WWW-Authenticate", "Bearer");
    return ReplyError(res, 401, Answerable(login.status().message()));
  }
  Audit(req, login->caller, "DashboardLogIn", "", Status::Ok());
  res.set_header("Set-Cookie", login->set_cookie);
  ReplyJson(res, 200,
            ojson{{"name", login->caller.name},
                  {"role", login->caller.role},
                  {"reads_open", auth_->reads_open()},
                  {"can_rerun", auth_->MayChange(login->caller).ok()}});
}

void HttpApi::LogOut(const httplib::Request& req, httplib::Response& res) {
  res.set_header("Set-Cookie", auth_->LogOut(req.get_header_value("Cookie")));
  ReplyJson(res, 200, ojson{{"logged_out", true}});
}

void HttpApi::Rerun(const httplib::Request& req, httplib::Response& res) {
  auto caller = Caller(req, res, "DashboardRerun");
  if (!caller) return;
  if (Status may = auth_->MayChange(*caller); !may.ok()) {
    Audit(req, *caller, "DashboardRerun", "", may);
    if (may.code() == StatusCode::kUnauthenticated) {
      res.set_header("WWW-Authenticate", "Bearer");
      return ReplyError(res, 401, may.message());
    }
    return ReplyError(res, 403, may.message());
  }
  // Only JSON: a cross-origin page cannot send it without a preflight, which is never
  // answered, so another site in the user's browser cannot queue re-runs.
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    return ReplyError(res, 415, "Content-Type: expected application/json");
  }
  auto selection = ParseRerunBody(req.body);
  if (!selection.ok()) return ReplyError(res, 400, selection.status().message());
  auto requested = RequestRerun(store_, *selection);
  std::string subject = "windows";
  for (int64_t id : selection->window_ids) subject += " " + std::to_string(id);
  if (!requested.ok()) {
    Audit(req, *caller, "DashboardRerun", subject, requested.status());
    return ReplyStatus(res, requested.status());
  }
  Audit(req, *caller, "DashboardRerun", subject, Status::Ok());
  scheduler_.Notify();
  ReplyJson(res, 202,
            ojson{{"window_ids", requested->window_ids}, {"campaigns", requested->campaigns}});
}

void HttpApi::UnknownPath(const httplib::Request& req, httplib::Response& res) {
  ReplyError(res, 404, "no such API path: " + req.method + " " + req.path + " (docs/api.md)");
}

Result<HostPort> HttpApi::Start(const HostPort& listen, const std::string& web_root,
                                const std::vector<std::string>& http_hosts, const HttpTls& tls) {
  if (server_) return Status::FailedPrecondition("the HTTP server is already started");
  BENCHLAB_RETURN_IF_ERROR(AllowedHosts(listen, http_hosts).status());
  const bool https = !tls.cert.empty() || !tls.key.empty();
  if (!https && !IsLoopbackHost(listen.host)) {
    if (!tls.insecure) {
      return Status::FailedPrecondition(
          "the dashboard would listen on " + listen.host +
          " in plain HTTP, where its tokens and session cookies could be read on the way: give "
          "it a certificate (--http-tls-cert/--http-tls-key, or the coordinator's own --tls-cert "
          "and --tls-key), listen on loopback, or pass --insecure (docs/security.md, \"The "
          "dashboard\")");
    }
    spdlog::warn(
        "dashboard: plain HTTP on {} (--insecure): its tokens and cookies cross the "
        "network in clear",
        listen.host);
  }
  server_ = std::make_unique<HttpServer>();
  scheme_ = https ? "https" : "http";
  if (https) {
    Status loaded = Status::Internal("HTTPS: the server's TLS context was not set up");
    server_->UseTls([&](SSL_CTX& ctx) {
      loaded = LoadHttpsKeyPair(ctx, tls.cert, tls.key);
      return loaded.ok();
    });
    if (!loaded.ok()) {
      server_.reset();
      return loaded;
    }
  }
  auth_ = std::make_unique<DashboardAuth>(store_, RealClockInstance(), IsLoopbackHost(listen.host),
                                          https);
  Routes(web_root);
  auto port = server_->Bind(listen);
  if (!port.ok()) {
    server_.reset();
    return Status::Unavailable("dashboard " + port.status().message() +
                               " (address in use or not local?)");
  }
  HostPort bound{listen.host, *port};
  hosts_ = *AllowedHosts(bound, http_hosts);
  server_->Serve();
  spdlog::info("dashboard on {}://{}/ ({})", scheme_, bound.ToString(),
               auth_->reads_open() ? "reads open on loopback, re-runs need an operator's token"
                                   : "every call needs a token");
  return bound;
}

void HttpApi::Stop() {
  if (!server_) return;
  server_->Stop();
  server_.reset();
  auth_.reset();
}

}  // namespace benchlab

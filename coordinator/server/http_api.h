// HttpApi: the coordinator's web face. It serves the dashboard's static files and a JSON API
// under /api/v1 (docs/api.md) from the same store, agent registry and scheduler as the gRPC
// service, with cpp-httplib's routes behind the HTTP front of rpc/http_server.h. Re-runs go through
// RequestRerun, the path of the RerunWindows call. The documents are built by free functions below
// so tests can check them without a socket.
//
// http_api.cc holds the routes and their answers, http_api_docs.cc the documents, and
// http_api_hosts.cc the Host and Origin checks and the dashboard's callers and their audit.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/parse.h"
#include "common/status.h"
#include "coordinator/store.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace benchlab {

class AgentRegistry;
class CoordinatorMetrics;
class DashboardAuth;
class HttpServer;
class Scheduler;
struct DashboardCaller;

// HTTPS for the dashboard (docs/security.md, "The dashboard"): a certificate chain and its key
// in PEM files; both empty for plain HTTP, which Start allows on loopback only unless `insecure`.
struct HttpTls {
  std::string cert;
  std::string key;
  bool insecure = false;
};

// GET /api/v1/campaigns: every campaign, newest first, with counts over newest attempts.
Result<nlohmann::ordered_json> CampaignListDoc(Store& store);
// GET /api/v1/campaigns/NAME: {"record": run of record, "progress": {...}, "series": {"name",
// "position", "campaigns"}} (the campaign is the position-th of its series' campaigns, oldest
// first). NotFound names the campaigns there are.
Result<nlohmann::ordered_json> CampaignDoc(Store& store, const std::string& name);
// The campaign document's `progress.version` without building the document (no window or
// sample is read): it changes with the campaign's state, a stored attempt, a claim, a re-run
// request or a campaign joining its series. It is the document's ETag, so a page polling a
// campaign gets 304 while nothing moved.
Result<std::string> CampaignVersion(Store& store, const std::string& name);
// GET /api/v1/series/NAME?figure=F: the series' history of figure F (rps, cpu, p99 or a report
// metric) as FormatHistoryJson writes it, each point with its target's `version`, and its
// `changes` as FormatChangesJson lists them. InvalidArgument for an unknown figure, NotFound for
// a series the store does not hold (naming those it holds).
Result<nlohmann::ordered_json> SeriesDoc(Store& store, const std::string& name,
                                         const std::string& figure);
// GET /api/v1/windows/ID: the attempt, every attempt of its window, its samples and histogram.
Result<nlohmann::ordered_json> WindowDoc(Store& store, int64_t id);
// GET /api/v1/campaigns/NAME/profile?target=T&cell=SCENARIO/LEVEL&window=ID (docs/api.md): the
// selected valid windows' CPU profiles merged (MergeSelected) as {"target", "cell", "window",
// "windows", "samples", "frequency_hz", "truncated", "cpu_us_per_request", "unprofiled",
// "tree": FlameTree}. Empty fields select all. NotFound for an unknown campaign or one never
// profiled; InvalidArgument for a malformed cell or window, or a selection that matches nothing
// or holds several targets.
struct ProfileQuery {
  std::string target;
  std::string cell;
  std::string window;
};
Result<nlohmann::ordered_json> ProfileDoc(Store& store, const std::string& name,
                                          const ProfileQuery& query);
// GET /api/v1/campaigns/NAME/profile-diff?base=A&new=B&cell=SCENARIO/LEVEL: {"base", "new",
// "cell", "base_samples", "new_samples", "diff": the cell's entry of ProfileDiffJson (functions
// by Δ self µs per request with intervals), "tree": DiffFlameTree of the two targets' merged
// profiles in the cell}. The cell is required. Errors as ProfileDoc's, and InvalidArgument when
// the two targets have no paired profiled round in the cell.
Result<nlohmann::ordered_json> ProfileDiffDoc(Store& store, const std::string& name,
                                              const std::string& base, const std::string& next,
                                              const std::string& cell);
// GET /api/v1/bisections: {"bisections": [...]}, newest first, each {"id", "created_at",
// "target", "cell", "figure", "state", "commits", "culprit" (null unless found), "change" (the
// confirmations row it bisects, null when named by hand), "steps" (how many), "line":
// CulpritLine}.
Result<nlohmann::ordered_json> BisectionListDoc(Store& store);
// GET /api/v1/bisections/ID: BisectionJson of the search with its steps, each step also with
// "campaign_names" (its campaigns' names, null for one no longer stored), and "line":
// CulpritLine. NotFound naming the id when no bisection has it.
Result<nlohmann::ordered_json> BisectionDoc(Store& store, int64_t id);
// The Host header values the dashboard answers (lower case): the address it listens on as
// HOST:PORT; with a loopback or wildcard address also 127.0.0.1:PORT, localhost:PORT and
// [::1]:PORT; and each of `names` (`--http-host`) as given and, when it has no port, with
// :PORT. InvalidArgument for a name that is not a host name or address (with an optional port).
Result<std::set<std::string>> AllowedHosts(const HostPort& bound,
                                           const std::vector<std::string>& names);

// A serialised histogram as {"count", "buckets": [{"from_us", "to_us", "count"}],
// "percentiles"}, its non-empty buckets merged into at most `max_buckets` bins of equal width
// on a log scale; null for an empty text. InvalidArgument for text that does not parse.
Result<nlohmann::ordered_json> HistogramDoc(const std::string& serialized,
                                            size_t max_buckets = 200);

class HttpApi {
 public:
  // /metrics serves `metrics` (docs/metrics.md), readable by whoever may read the API.
  HttpApi(Store& store, AgentRegistry& agents, Scheduler& scheduler, CoordinatorMetrics& metrics);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds (port 0: the kernel picks one) and serves on threads of its own, behind the HTTP
  // front's deadlines and connection caps (rpc/http_server.h, HttpLimits). `web_root` is the
  // dashboard's directory (index.html, assets/); when it has no index.html, / says how to build
  // it and the API still works. Only requests whose Host is one of AllowedHosts(bound address,
  // http_hosts) are answered (else 421), and a POST whose Origin is present must be
  // http://<one of them> (else 403): a page of another site, even one whose name resolves to
  // this machine (DNS rebinding), reads and changes nothing. With `tls` it serves HTTPS. Who
  // may read and re-run is DashboardAuth's: reads are open only on a loopback address, re-runs
  // need an operator's token. Every answer, files and errors too, carries the security headers
  // of docs/api.md. FailedPrecondition for plain HTTP beyond loopback without `tls.insecure`;
  // InvalidArgument for a certificate or key that does not load. Returns the bound address.
  Result<HostPort> Start(const HostPort& listen, const std::string& web_root,
                         const std::vector<std::string>& http_hosts = {}, const HttpTls& tls = {});
  // Stops serving; requests in flight finish first. Safe to call twice.
  void Stop();

 private:
  // The table of paths and their handlers (docs/api.md), the answers' headers, and the page.
  void Routes(const std::string& web_root);
  // The handlers of Routes' table (http_api.cc).
  void GetCampaigns(const httplib::Request& req, httplib::Response& res);
  void GetCampaign(const httplib::Request& req, httplib::Response& res);
  void GetReport(const httplib::Request& req, httplib::Response& res);
  void GetProfile(const httplib::Request& req, httplib::Response& res);
  void GetProfileDiff(const httplib::Request& req, httplib::Response& res);
  void GetSeries(const httplib::Request& req, httplib::Response& res);
  void GetWindow(const httplib::Request& req, httplib::Response& res);
  void GetBisections(const httplib::Request& req, httplib::Response& res);
  void GetBisection(const httplib::Request& req, httplib::Response& res);
  void GetAgents(const httplib::Request& req, httplib::Response& res);
  void GetMetrics(const httplib::Request& req, httplib::Response& res);
  void GetSession(const httplib::Request& req, httplib::Response& res);
  void LogIn(const httplib::Request& req, httplib::Response& res);
  void LogOut(const httplib::Request& req, httplib::Response& res);
  void Rerun(const httplib::Request& req, httplib::Response& res);
  void UnknownPath(const httplib::Request& req, httplib::Response& res);
  // A handler's exception: logged, and answered 500 in JSON.
  void AnswerException(const httplib::Request& req, httplib::Response& res,
                       std::exception_ptr error) const;

  // Before any route (http_api_hosts.cc): answers a request Refused, and a read of the API or of
  // /metrics whose caller may not read; true when it answered.
  bool Screened(const httplib::Request& req, httplib::Response& res);
  // Refuses a request for another host, from another origin or with a path that is not UTF-8;
  // true when it answered.
  bool Refused(const httplib::Request& req, httplib::Response& res) const;
  // The caller of an API request, or an answer already sent (401) and nullopt.
  std::optional<DashboardCaller> Caller(const httplib::Request& req, httplib::Response& res,
                                        const std::string& call);
  // One row of the audit trail for a dashboard call (docs/security.md, "Audit").
  void Audit(const httplib::Request& req, const DashboardCaller& caller, const std::string& call,
             const std::string& subject, const Status& outcome);
  // `message` for an answer: without the database's path, which the store's messages begin
  // with (ReplyStatus logs a 500's whole message).
  std::string Answerable(const std::string& message) const;
  // A JSON error answer of `status`: its HTTP code and Answerable message; a 500 is logged.
  void ReplyStatus(httplib::Response& res, const Status& status) const;
  // The document, or ReplyStatus of its error.
  void ReplyDoc(httplib::Response& res, const Result<nlohmann::ordered_json>& doc) const;

  Store& store_;
  AgentRegistry& agents_;
  Scheduler& scheduler_;
  CoordinatorMetrics& metrics_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<DashboardAuth> auth_;
  std::string scheme_ = "http";  // or "https"
  std::set<std::string> hosts_;  // AllowedHosts of the bound address
};

}  // namespace benchlab

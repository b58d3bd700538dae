#include "coordinator/server/http_api.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/profile_export.h"
#include "analysis/profile_report.h"
#include "analysis/regressions.h"
#include "analysis/report_format.h"
#include "analysis/series.h"
#include "common/clock.h"
#include "common/histogram.h"
#include "coordinator/rerun.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/agents_json.h"
#include "coordinator/server/dashboard_auth.h"
#include "coordinator/server/metrics.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/series_store.h"
#include "rpc/http_server.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

using ojson = nlohmann::ordered_json;

template <typename T>
ojson Opt(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

ojson Nullable(const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); }

// Each window's newest attempt, by key.
std::map<WindowKey, const WindowRow*> NewestByKey(const std::vector<WindowRow>& windows) {
  std::map<WindowKey, const WindowRow*> newest;
  for (const WindowRow& w : windows) {
    auto [it, fresh] = newest.emplace(w.Key(), &w);
    if (!fresh && w.attempt > it->second->attempt) it->second = &w;
  }
  return newest;
}

struct Counts {
  int windows = 0, valid = 0, invalid = 0, failed = 0, skipped = 0;
};

Counts CountNewest(const std::vector<WindowRow>& windows) {
  Counts c;
  for (const auto& [key, w] : NewestByKey(windows)) {
    ++c.windows;
    if (w->verdict == "valid") ++c.valid;
    if (w->verdict == "invalid") ++c.invalid;
    if (w->verdict == "failed") ++c.failed;
    if (w->verdict == "skipped") ++c.skipped;
  }
  return c;
}

ojson ClaimJson(const WindowClaim& c) {
  return {{"pair", c.key.pair},
          {"target", c.key.target},
          {"scenario", c.key.scenario},
          {"load_level", c.key.load_level},
          {"round", c.key.round},
          {"position", c.key.position},
          {"noise", c.noise},
          {"attempt", c.attempt},
          {"server_agent", c.server_agent},
          {"load_agent", c.load_agent},
          {"started_at", c.started_at}};
}

// The window's name first, then the run of record's attempt.
ojson AttemptDoc(const WindowRow& w, bool newest, const SampleSummary* samples,
                 std::optional<double> services_cpu_s) {
  ojson doc = {{"pair", w.pair},
               {"target", w.target},
               {"scenario", w.scenario},
               {"load_level", w.load_level},
               {"connections", w.connections},
               {"round", w.round},
               {"position", w.position},
               {"noise", w.noise != 0}};
  const ojson record = AttemptRecordJson(w, newest, samples, services_cpu_s);
  for (auto it = record.begin(); it != record.end(); ++it) doc[it.key()] = it.value();
  return doc;
}

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

void ReplyError(httplib::Response& res, int status, const std::string& message) {
  ReplyJson(res, status, ojson{{"error", message}});
}

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

constexpr const char* kNoDashboard =
    "<!doctype html><meta charset=utf-8><title>benchlab</title>"
    "<h1>benchlab coordinator</h1><p>The dashboard's files are not built, or --web-root does "
    "not point at them. Build them with <code>make build</code> (they land in "
    "<code>build/web</code>), or read the JSON API under <a href=\"/api/v1/campaigns\">"
    "/api/v1</a> (docs/api.md).</p>";

}  // namespace

Result<ojson> CampaignListDoc(Store& store) {
  auto campaigns = store.ListCampaigns();
  if (!campaigns.ok()) return campaigns.status();
  ojson list = ojson::array();
  for (auto it = campaigns->rbegin(); it != campaigns->rend(); ++it) {
    const CampaignRow& c = *it;
    WindowFilter filter;
    filter.campaign = c.name;
    auto windows = store.ListWindows(filter);
    if (!windows.ok()) return windows.status();
    auto claims = store.ListClaims(c.id);
    if (!claims.ok()) return claims.status();
    const Counts n = CountNewest(*windows);
    list.push_back({{"id", c.id},
                    {"name", c.name},
                    {"series", c.series},
                    {"state", c.state},
                    {"baseline", Nullable(c.baseline)},
                    {"source", c.source},
                    {"created_at", c.created_at},
                    {"finished_at", Nullable(c.finished_at)},
                    {"total_windows", c.total_windows},
                    {"windows", n.windows},
                    {"valid", n.valid},
                    {"invalid", n.invalid},
                    {"failed", n.failed},
                    {"skipped", n.skipped},
                    {"running", claims->size()},
                    {"error", Nullable(c.error)}});
  }
  return ojson{{"campaigns", std::move(list)}};
}

namespace {

// The campaign, its claims and re-run requests, and the version they and the stored attempts
// make together: everything that decides whether a page's copy is still current.
struct CampaignHead {
  CampaignRow row;
  std::vector<WindowClaim> claims;
  std::vector<WindowKey> reruns;
  int series_position = 0;  // 1-based, oldest first
  int series_campaigns = 0;
  std::string version;
};

Result<CampaignHead> ReadCampaignHead(Store& store, const std::string& name) {
  auto row = store.FindCampaign(name);
  if (!row.ok()) return row.status();
  if (!*row) return LoadReportInput(store, name).status();  // NotFound naming the campaigns
  CampaignHead head;
  head.row = **row;
  auto tally = store.CountWindows(head.row.id);
  if (!tally.ok()) return tally.status();
  auto claims = store.ListClaims(head.row.id);
  if (!claims.ok()) return claims.status();
  auto reruns = store.ListRerunRequests(head.row.id);
  if (!reruns.ok()) return reruns.status();
  auto series = store.ListSeries(head.row.series);
  if (!series.ok()) return series.status();
  head.claims = std::move(*claims);
  head.reruns = std::move(*reruns);
  head.series_campaigns = static_cast<int>(series->size());
  for (size_t i = 0; i < series->size(); ++i) {
    if ((*series)[i].id == head.row.id) head.series_position = static_cast<int>(i) + 1;
  }
  // A campaign joining the series changes "campaign k of N".
  head.version = head.row.state + "/" + std::to_string(tally->first) + "/" +
                 std::to_string(tally->second) + "/" + std::to_string(head.reruns.size()) + "/s" +
                 std::to_string(head.series_campaigns);
  for (const WindowClaim& c : head.claims) {
    head.version += "/" + c.key.target + "." + c.key.scenario + "." + c.key.load_level + "." +
                    std::to_string(c.key.round) + "." + std::to_string(c.attempt);
  }
  return head;
}

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

Result<std::string> CampaignVersion(Store& store, const std::string& name) {
  auto head = ReadCampaignHead(store, name);
  if (!head.ok()) return head.status();
  return head->version;
}

namespace {

// The document of a campaign whose head was read first: built after it, the document may only
// be newer than the head's version, so a page never keeps a copy older than its version says.
Result<ojson> CampaignDocAfter(Store& store, const CampaignHead& head) {
  auto input = LoadReportInput(store, head.row.name);
  if (!input.ok()) return input.status();

  const Counts n = CountNewest(input->windows);
  ojson running = ojson::array();
  for (const WindowClaim& c : head.claims) running.push_back(ClaimJson(c));
  ojson progress = {{"total", input->campaign.total_windows},
                    {"done", n.windows},
                    {"valid", n.valid},
                    {"invalid", n.invalid},
                    {"failed", n.failed},
                    {"skipped", n.skipped},
                    {"reruns_pending", head.reruns.size()},
                    {"running", std::move(running)},
                    {"version", head.version}};
  return ojson{{"record", ojson::parse(FormatReportJson(*input))},
               {"progress", std::move(progress)},
               {"series",
                {{"name", head.row.series},
                 {"position", head.series_position},
                 {"campaigns", head.series_campaigns}}}};
}

}  // namespace

Result<ojson> CampaignDoc(Store& store, const std::string& name) {
  auto head = ReadCampaignHead(store, name);
  if (!head.ok()) return head.status();
  return CampaignDocAfter(store, *head);
}

Result<ojson> SeriesDoc(Store& store, const std::string& name, const std::string& figure) {
  const std::optional<Metric> metric = ParseFigure(figure);
  if (!metric) {
    return Status::InvalidArgument(
        "figure: expected rps, cpu, p99 or a report metric such as p50_us, got \"" + figure + "\"");
  }
  auto loaded = LoadStoredSeries(store, name);
  if (!loaded.ok()) return loaded.status();
  const Series series = BuildSeries(name, loaded->inputs, *metric);
  auto stored_changes = FindStoredSeriesChanges(store, series, {});
  if (!stored_changes.ok()) return stored_changes.status();
  const std::vector<SeriesChange>& changes = *stored_changes;
  // The history as `benchlab history --json` writes it, each point with its target's version,
  // and the changes as `benchlab regressions --format json` lists them, whatever fields they
  // carry.
  ojson doc = ojson::parse(FormatHistoryJson(series));
  std::map<int64_t, const SeriesCampaign*> by_id;
  for (const SeriesCampaign& c : series.campaigns) by_id[c.id] = &c;
  for (ojson& line : doc["lines"]) {
    const std::string target = line["target"].get<std::string>();
    for (ojson& point : line["points"]) {
      ojson version = nullptr;
      if (auto c = by_id.find(point["campaign_id"].get<int64_t>()); c != by_id.end()) {
        auto v = c->second->versions.find(target);
        if (v != c->second->versions.end()) version = v->second;
      }
      point["version"] = std::move(version);
    }
  }
  ojson found =
      ojson::parse(FormatChangesJson(name, changes, static_cast<int>(loaded->campaigns.size())));
  doc["changes"] = std::move(found["changes"]);
  return doc;
}

namespace {

// The campaign's profiles; a campaign never profiled has none to serve (NotFound, with the
// message saying how to take them).
Result<CampaignProfiles> LoadProfilesFor(Store& store, const std::string& campaign) {
  auto profiles = LoadCampaignProfiles(store, campaign);
  if (!profiles.ok() && profiles.status().code() == StatusCode::kFailedPrecondition) {
    return Status::NotFound(profiles.status().message());
  }
  return profiles;
}

}  // namespace

Result<ojson> ProfileDoc(Store& store, const std::string& name, const ProfileQuery& query) {
  ProfileSelection selection;
  if (!query.cell.empty()) {
    if (Status st = ParseCell(query.cell, selection); !st.ok()) return st;
  }
  if (!query.target.empty()) selection.target = query.target;
  if (!query.window.empty()) {
    int64_t id = 0;
    const auto* end = query.window.data() + query.window.size();
    const auto [at, ec] = std::from_chars(query.window.data(), end, id);
    if (ec != std::errc() || at != end || id <= 0) {
      return Status::InvalidArgument("window: expected a positive window id, got \"" +
                                     query.window + "\"");
    }
    selection.window_id = id;
  }
  auto profiles = LoadProfilesFor(store, name);
  if (!profiles.ok()) return profiles.status();
  auto merged = MergeSelected(*profiles, selection);
  if (!merged.ok()) return merged.status();
  return ojson{
      {"target", merged->targets.front()},
      {"cell", Nullable(query.cell)},
      {"window", Opt(selection.window_id)},
      {"windows", merged->windows},
      {"samples", merged->profile.samples()},
      {"frequency_hz", merged->frequency_hz},
      {"truncated", merged->profile.truncated},
      {"cpu_us_per_request",
       merged->requests > 0 ? ojson(merged->cpu_s * 1e6 / merged->requests) : ojson(nullptr)},
      {"unprofiled", profiles->unprofiled.size()},
      {"tree", ojson(FlameTree(merged->profile))}};
}

Result<ojson> ProfileDiffDoc(Store& store, const std::string& name, const std::string& base,
                             const std::string& next, const std::string& cell) {
  if (base.empty() || next.empty()) {
    return Status::InvalidArgument(
        "base, new: expected the two targets to compare (?base=A&new=B)");
  }
  if (cell.empty()) {
    return Status::InvalidArgument("cell: expected SCENARIO/LEVEL, the cell to compare in");
  }
  ProfileSelection selection;
  if (Status st = ParseCell(cell, selection); !st.ok()) return st;
  auto profiles = LoadProfilesFor(store, name);
  if (!profiles.ok()) return profiles.status();
  auto cells = DiffTargets(*profiles, base, next, selection);
  if (!cells.ok()) return cells.status();
  ProfileSelection side = selection;
  side.target = base;
  auto merged_base = MergeSelected(*profiles, side);
  if (!merged_base.ok()) return merged_base.status();
  side.target = next;
  auto merged_next = MergeSelected(*profiles, side);
  if (!merged_next.ok()) return merged_next.status();
  ojson diff = ojson(ProfileDiffJson(*cells));
  return ojson{{"base", base},
               {"new", next},
               {"cell", cell},
               {"base_samples", merged_base->profile.samples()},
               {"new_samples", merged_next->profile.samples()},
               {"diff", diff.empty() ? ojson(nullptr) : diff.front()},
               {"tree", ojson(DiffFlameTree(merged_base->profile, merged_next->profile))}};
}

Result<ojson> WindowDoc(Store& store, int64_t id) {
  WindowFilter one;
  one.after_id = id - 1;
  one.limit = 1;
  auto found = store.ListWindows(one);
  if (!found.ok()) return found.status();
  if (found->empty() || found->front().id != id) {
    return Status::NotFound("no window with id " + std::to_string(id));
  }
  const WindowRow& row = found->front();
  WindowFilter same_campaign;
  same_campaign.campaign = row.campaign;
  auto campaign_windows = store.ListWindows(same_campaign);
  if (!campaign_windows.ok()) return campaign_windows.status();

  std::vector<const WindowRow*> attempts;
  for (const WindowRow& w : *campaign_windows) {
    if (w.Key() == row.Key()) attempts.push_back(&w);
  }
  std::sort(attempts.begin(), attempts.end(),
            [](const WindowRow* a, const WindowRow* b) { return a->attempt < b->attempt; });
  const WindowRow* newest = attempts.empty() ? &row : attempts.back();

  ojson attempt_docs = ojson::array();
  ojson window_doc;
  std::vector<SampleRow> window_samples;
  std::vector<ServiceRow> window_services;
  for (const WindowRow* w : attempts) {
    auto samples = store.ListSamples(w->id);
    if (!samples.ok()) return samples.status();
    auto services = store.ListWindowServices(w->id);
    if (!services.ok()) return services.status();
    std::optional<double> services_cpu_s;
    for (const ServiceRow& s : *services) {
      services_cpu_s = services_cpu_s.value_or(0) + s.cpu_user_s + s.cpu_sys_s;
    }
    const SampleSummary summary = SummariseSamples(*samples);
    ojson doc = AttemptDoc(*w, w == newest, &summary, services_cpu_s);
    if (w->id == id) {
      window_doc = doc;
      window_samples = std::move(*samples);
      window_services = std::move(*services);
    }
    attempt_docs.push_back(std::move(doc));
  }
  auto probes = store.ListWindowProbes(id);
  if (!probes.ok()) return probes.status();
  ojson services = ojson::array();
  for (const ServiceRow& s : window_services) {
    services.push_back(
        {{"service", s.service},
         {"cpu_user_s", s.cpu_user_s},
         {"cpu_sys_s", s.cpu_sys_s},
         {"cpu_us_per_request", row.requests > 0 ? ojson((s.cpu_user_s + s.cpu_sys_s) * 1e6 /
                                                         static_cast<double>(row.requests))
                                                 : ojson(nullptr)},
         {"rss_mean_kb", s.rss_mean_kb},
         {"rss_peak_kb", s.rss_peak_kb},
         {"cpu_accounting", s.cpu_accounting},
         {"alive", s.alive},
         {"exit", s.exit},
         {"started", s.started},
         {"startup_ms", Opt(s.startup_ms)},
         {"reset_ms", Opt(s.reset_ms)}});
  }
  ojson probe_docs = ojson::array();
  for (const ProbeRow& p : *probes) {
    probe_docs.push_back({{"service", p.service},
                          {"probe", p.probe},
                          {"before", Opt(p.before)},
                          {"after", Opt(p.after)},
                          {"delta", Opt(p.delta)},
                          {"unavailable", p.unavailable}});
  }

  ojson server = ojson::array(), load = ojson::array();
  double previous_load_t = 0;
  for (const SampleRow& s : window_samples) {
    if (s.source == "server") {
      server.push_back({{"t_s", s.t_s},
                        {"cpu_pct", s.cpu_pct},
                        {"rss_kb", s.rss_kb},
                        {"host_busy_pct", Opt(s.host_busy_pct)},
                        {"foreign_pct", Opt(s.foreign_pct)},
                        {"steal_pct", Opt(s.steal_pct)}});
    } else {
      const double period = s.t_s - previous_load_t;
      previous_load_t = s.t_s;
      load.push_back(
          {{"t_s", s.t_s},
           {"requests", s.requests},
           {"rps", period > 0 ? ojson(static_cast<double>(s.requests) / period) : ojson(nullptr)},
           {"p99_us", Opt(s.p99_us)}});
    }
  }
  auto histogram = HistogramDoc(row.histogram);
  if (!histogram.ok()) return histogram.status();
  // The attempt's CPU profile row (docs/profiles.md): null for a window not profiled; the flame
  // graph itself is /campaigns/NAME/profile?window=ID's.
  auto profile_row = store.FindProfile(id);
  if (!profile_row.ok()) return profile_row.status();
  ojson profile = nullptr;
  if (*profile_row) {
    const ProfileRow& p = **profile_row;
    profile = {{"samples", p.samples},
               {"frequency_hz", p.frequency_hz},
               {"error", p.error.empty() ? ojson(nullptr) : ojson(p.error)}};
  }
  const bool rerunnable = newest->verdict == "invalid" || newest->verdict == "failed";
  return ojson{{"campaign", row.campaign},
               {"window", std::move(window_doc)},
               {"attempts", std::move(attempt_docs)},
               {"samples", {{"server", std::move(server)}, {"load", std::move(load)}}},
               {"histogram", std::move(*histogram)},
               {"services", std::move(services)},
               {"probes", std::move(probe_docs)},
               {"profile", std::move(profile)},
               {"rerunnable", rerunnable}};
}

Result<ojson> HistogramDoc(const std::string& serialized, size_t max_buckets) {
  if (serialized.empty()) return ojson(nullptr);
  auto h = Histogram::Deserialize(serialized);
  if (!h.ok()) return Status::InvalidArgument("stored histogram: " + h.status().message());
  const auto buckets = h->NonEmptyBuckets();
  ojson bins = ojson::array();
  if (!buckets.empty()) {
    // Bin k of n holds the buckets whose lowest value lies in [lo * r^k, lo * r^(k+1)), with
    // r = (hi / lo)^(1/n): equal widths on a log axis.
    const double lo = static_cast<double>(std::max<uint64_t>(buckets.front().low_us, 1));
    const double hi = static_cast<double>(buckets.back().high_us + 1);
    const double span = std::log(hi / lo);
    const size_t n = std::max<size_t>(max_buckets, 1);
    auto bin_of = [&](uint64_t low) -> size_t {
      if (buckets.size() <= n || span <= 0) return 0;  // unused: no merging needed
      const double k = std::floor(static_cast<double>(n) *
                                  std::log(std::max(static_cast<double>(low), lo) / lo) / span);
      return std::min(static_cast<size_t>(std::max(k, 0.0)), n - 1);
    };
    const bool merge = buckets.size() > n;
    size_t current_bin = SIZE_MAX;
    for (const auto& b : buckets) {
      const size_t bin = merge ? bin_of(b.low_us) : bins.size();
      if (merge && bin == current_bin) {
        ojson& last = bins.back();
        last["to_us"] = b.high_us;
        last["count"] = last["count"].get<uint64_t>() + b.count;
        continue;
      }
      current_bin = bin;
      bins.push_back({{"from_us", b.low_us}, {"to_us", b.high_us}, {"count", b.count}});
    }
  }
  ojson percentiles = ojson::object();
  for (const auto& [label, pct] : std::vector<std::pair<const char*, double>>{
           {"50", 50}, {"90", 90}, {"99", 99}, {"99.9", 99.9}, {"100", 100}}) {
    percentiles[label] = h->ValueAtPercentile(pct);
  }
  return ojson{
      {"count", h->Count()}, {"buckets", std::move(bins)}, {"percentiles", std::move(percentiles)}};
}

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

namespace {

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "no detail from OpenSSL";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return text;
}

// HTTPS on `server` with the certificate chain and key in these PEM files, TLS 1.2 at least.
Status UseHttps(HttpServer& server, const std::string& cert, const std::string& key) {
  if (cert.empty() || key.empty()) {
    return Status::InvalidArgument(
        "HTTPS needs both a certificate and its key (--http-tls-cert and --http-tls-key)");
  }
  std::string error;
  const bool loaded = server.UseTls([&](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, cert.c_str()) != 1) {
      error = cert + ": not a PEM certificate chain that loads (" + OpenSslError() + ")";
      return false;
    }
    if (SSL_CTX_use_PrivateKey_file(&ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      error = key + ": not a PEM private key that loads, or not the key of " + cert + " (" +
              OpenSslError() + ")";
      return false;
    }
    if (SSL_CTX_check_private_key(&ctx) != 1) {
      error = key + ": is not the key of the certificate in " + cert;
      return false;
    }
    return true;
  });
  if (!loaded) return Status::InvalidArgument(error.empty() ? "HTTPS: " + OpenSslError() : error);
  return Status::Ok();
}

}  // namespace

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

void HttpApi::Audit(const httplib::Request& req, const DashboardCaller& caller,
                    const std::string& call, const std::string& subject, const Status& outcome) {
  AuditRow row;
  row.at = FormatIsoTime(std::chrono::system_clock::now());
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

HttpApi::HttpApi(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                 CoordinatorMetrics& metrics)
    : store_(store), agents_(agents), scheduler_(scheduler), metrics_(metrics) {}

HttpApi::~HttpApi() { Stop(); }

void HttpApi::Routes(const std::string& web_root) {
  httplib::Server& s = server_->routes();
  server_->SetAnswerHeaders(SecurityHeaders());
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (Refused(req, res)) return httplib::Server::HandlerResponse::Handled;
    // Every read of the API and of /metrics is checked here; the one change (re-run) and the
    // session calls check their callers themselves. The page's own files hold no data and are
    // served to all.
    const bool read = (req.path.rfind("/api/", 0) == 0 && req.path != "/api/v1/session") ||
                      req.path == "/metrics";
    if (req.method == "GET" && read) {
      auto caller = Caller(req, res, "DashboardRead");
      if (!caller) return httplib::Server::HandlerResponse::Handled;
      if (Status may = auth_->MayRead(*caller); !may.ok()) {
        Audit(req, *caller, "DashboardRead", req.path, may);
        res.set_header("WWW-Authenticate", "Bearer");
        ReplyError(res, 401, may.message());
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Whatever fails, and whatever the HTTP layer itself refuses, is answered in JSON too.
  s.set_exception_handler(
      [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::warn("http api: {} {}: {}", req.method, req.path, what);
        ReplyError(res, 500, "internal error: " + Answerable(what));
      });
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        ReplyError(res, res.status, StatusWords(res.status));
        return httplib::Server::HandlerResponse::Handled;
      }));

  s.Get("/api/v1/campaigns", [this](const httplib::Request&, httplib::Response& res) {
    ReplyDoc(res, CampaignListDoc(store_));
  });
  s.Get(R"(/api/v1/campaigns/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
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
        });
  s.Get(R"(/api/v1/campaigns/([^/]+)/report)",
        [this](const httplib::Request& req, httplib::Response& res) {
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
        });
  s.Get(R"(/api/v1/campaigns/([^/]+)/profile)",
        [this](const httplib::Request& req, httplib::Response& res) {
          ProfileQuery query;
          query.target = req.get_param_value("target");
          query.cell = req.get_param_value("cell");
          query.window = req.get_param_value("window");
          ReplyDoc(res, ProfileDoc(store_, req.matches[1].str(), query));
        });
  s.Get(R"(/api/v1/campaigns/([^/]+)/profile-diff)",
        [this](const httplib::Request& req, httplib::Response& res) {
          ReplyDoc(res, ProfileDiffDoc(store_, req.matches[1].str(), req.get_param_value("base"),
                                       req.get_param_value("new"), req.get_param_value("cell")));
        });
  s.Get(R"(/api/v1/series/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string figure = req.has_param("figure") ? req.get_param_value("figure") : "rps";
    ReplyDoc(res, SeriesDoc(store_, req.matches[1].str(), figure));
  });
  s.Get(R"(/api/v1/windows/(\d{1,18}))",
        [this](const httplib::Request& req, httplib::Response& res) {
          ReplyDoc(res, WindowDoc(store_, std::stoll(req.matches[1].str())));
        });
  s.Get("/api/v1/agents", [this](const httplib::Request&, httplib::Response& res) {
    ReplyJson(res, 200, AgentsToJson(agents_.List()));
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(metrics_.Scrape(store_, agents_), kMetricsContentType);
  });
  s.Get("/api/v1/session", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Caller(req, res, "DashboardSession");
    if (!caller) return;
    ReplyJson(res, 200,
              ojson{{"name", Nullable(caller->name)},
                    {"role", Nullable(caller->role)},
                    {"reads_open", auth_->reads_open()},
                    {"can_rerun", auth_->MayChange(*caller).ok()}});
  });
  s.Post("/api/v1/session", [this](const httplib::Request& req, httplib::Response& res) {
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
  });
  s.Delete("/api/v1/session", [this](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Set-Cookie", auth_->LogOut(req.get_header_value("Cookie")));
    ReplyJson(res, 200, ojson{{"logged_out", true}});
  });
  s.Post("/api/v1/rerun", [this](const httplib::Request& req, httplib::Response& res) {
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
  });
  auto unknown = [](const httplib::Request& req, httplib::Response& res) {
    ReplyError(res, 404, "no such API path: " + req.method + " " + req.path + " (docs/api.md)");
  };
  s.Get(R"(/api/.*)", unknown);
  s.Post(R"(/api/.*)", unknown);
  s.Delete(R"(/api/.*)", unknown);

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
    if (Status loaded = UseHttps(*server_, tls.cert, tls.key); !loaded.ok()) {
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

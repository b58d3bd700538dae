// The JSON documents of the coordinator's API (http_api.h, docs/api.md), built from the store
// alone so that tests check them without a socket.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "analysis/bisect_report.h"
#include "analysis/figure.h"
#include "analysis/profile_export.h"
#include "analysis/profile_report.h"
#include "analysis/regressions.h"
#include "analysis/report_format.h"
#include "analysis/series.h"
#include "common/histogram.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/http_api_internal.h"
#include "coordinator/server/series_store.h"

namespace benchlab {

using http_detail::CampaignDocAfter;
using http_detail::CampaignHead;
using http_detail::Nullable;
using http_detail::ojson;
using http_detail::ReadCampaignHead;

namespace {

template <typename T>
ojson Opt(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

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

// The gate mode the campaign's windows were judged in (the run of record's
// `campaign.gates_in_force`): "enforce", "warn", or null when not known.
ojson GatesInForceJson(const CampaignRow& c) {
  const std::optional<std::string> mode = CampaignGatesInForce(c);
  return mode ? ojson(*mode) : ojson(nullptr);
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
                    {"gates_in_force", GatesInForceJson(c)},
                    {"error", Nullable(c.error)}});
  }
  return ojson{{"campaigns", std::move(list)}};
}
namespace http_detail {

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
}  // namespace http_detail

Result<std::string> CampaignVersion(Store& store, const std::string& name) {
  auto head = ReadCampaignHead(store, name);
  if (!head.ok()) return head.status();
  return head->version;
}
namespace http_detail {

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
}  // namespace http_detail

Result<ojson> CampaignDoc(Store& store, const std::string& name) {
  auto head = ReadCampaignHead(store, name);
  if (!head.ok()) return head.status();
  return CampaignDocAfter(store, *head);
}

Result<ojson> SeriesDoc(Store& store, const std::string& name, const std::string& figure) {
  const std::optional<Metric> metric = ParseFigure(figure);
  if (!metric) return FigureError("figure", figure);
  auto loaded = LoadStoredSeries(store, name);
  if (!loaded.ok()) return loaded.status();
  const Series series = BuildSeries(name, loaded->inputs, *metric);
  auto stored_changes = FindStoredSeriesChanges(store, series, {});
  if (!stored_changes.ok()) return stored_changes.status();
  const std::vector<SeriesChange>& changes = *stored_changes;
  // The history as `benchlab history --json` writes it, each campaign and point with the gate
  // mode its windows were judged in and each point with its target's version, and the changes as
  // `benchlab regressions --format json` lists them, whatever fields they carry.
  ojson doc = ojson::parse(FormatHistoryJson(series));
  std::map<int64_t, const SeriesCampaign*> by_id;
  for (const SeriesCampaign& c : series.campaigns) by_id[c.id] = &c;
  std::map<int64_t, ojson> gates_by_id;
  for (const CampaignRow& c : loaded->campaigns) gates_by_id[c.id] = GatesInForceJson(c);
  for (ojson& c : doc["campaigns"]) c["gates_in_force"] = gates_by_id[c["id"].get<int64_t>()];
  for (ojson& line : doc["lines"]) {
    const std::string target = line["target"].get<std::string>();
    for (ojson& point : line["points"]) {
      const int64_t campaign_id = point["campaign_id"].get<int64_t>();
      ojson version = nullptr;
      if (auto c = by_id.find(campaign_id); c != by_id.end()) {
        auto v = c->second->versions.find(target);
        if (v != c->second->versions.end()) version = v->second;
      }
      point["version"] = std::move(version);
      point["gates_in_force"] = gates_by_id[campaign_id];
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
  // Whether its campaign's gates judged it: a valid window of a warn-mode campaign was not judged.
  auto campaign = store.FindCampaign(row.campaign);
  if (!campaign.ok()) return campaign.status();
  ojson gates = *campaign ? GatesInForceJson(**campaign) : ojson(nullptr);
  return ojson{{"campaign", row.campaign},
               {"gates_in_force", std::move(gates)},
               {"window", std::move(window_doc)},
               {"attempts", std::move(attempt_docs)},
               {"samples", {{"server", std::move(server)}, {"load", std::move(load)}}},
               {"histogram", std::move(*histogram)},
               {"services", std::move(services)},
               {"probes", std::move(probe_docs)},
               {"profile", std::move(profile)},
               {"rerunnable", rerunnable}};
}

Result<ojson> BisectionListDoc(Store& store) {
  auto rows = store.ListBisections();
  if (!rows.ok()) return rows.status();
  ojson list = ojson::array();
  for (auto it = rows->rbegin(); it != rows->rend(); ++it) {
    auto record = store.LoadBisection(it->id);
    if (!record.ok()) return record.status();
    if (!*record) continue;  // deleted between the two reads
    const BisectionRow& b = (*record)->bisection;
    const bool found = b.state == "found" && !b.culprit.empty();
    list.push_back({{"id", b.id},
                    {"created_at", b.created_at},
                    {"target", b.target},
                    {"cell", b.cell},
                    {"figure", b.figure},
                    {"state", b.state},
                    {"commits", b.commits},
                    {"culprit", found ? ojson(b.culprit) : ojson(nullptr)},
                    {"change", b.change_id > 0 ? ojson(b.change_id) : ojson(nullptr)},
                    {"steps", (*record)->steps.size()},
                    {"line", CulpritLine(**record)}});
  }
  return ojson{{"bisections", std::move(list)}};
}

Result<ojson> BisectionDoc(Store& store, int64_t id) {
  auto record = store.LoadBisection(id);
  if (!record.ok()) return record.status();
  if (!*record) return Status::NotFound("no bisection with id " + std::to_string(id));
  ojson doc = ojson(BisectionJson(**record));
  // Each step's campaigns by name, for links to their pages: null for one no longer stored.
  std::map<int64_t, ojson> names;
  for (const BisectStepRow& step : (*record)->steps) {
    for (int64_t campaign : step.campaigns) {
      if (names.count(campaign)) continue;
      auto row = store.FindCampaignById(campaign);
      if (!row.ok()) return row.status();
      names[campaign] = *row ? ojson((*row)->name) : ojson(nullptr);
    }
  }
  ojson& steps = doc["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    ojson campaign_names = ojson::array();
    for (int64_t campaign : (*record)->steps[i].campaigns)
      campaign_names.push_back(names[campaign]);
    steps[i]["campaign_names"] = std::move(campaign_names);
  }
  doc["line"] = CulpritLine(**record);
  return doc;
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
}  // namespace benchlab

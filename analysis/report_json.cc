// The JSON run of record (docs/report.md), versioned.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/gate_audit.h"
#include "analysis/report_detail.h"
#include "analysis/report_format.h"
#include "coordinator/campaign.h"

namespace benchlab {

using namespace report_detail;  // the report's own shared helpers

// --- JSON -----------------------------------------------------------------------------------

namespace {

ojson SummaryJson(const Summary& s) {
  return {{"n", s.n},          {"ignored", s.ignored}, {"median", Num(s.median)},
          {"min", Num(s.min)}, {"max", Num(s.max)},    {"spread_pct", Num(s.spread_pct)}};
}

ojson ComparisonJson(const Comparison& c) {
  ojson rounds = ojson::array();
  for (const RoundRatio& r : c.rounds) {
    rounds.push_back({{"round", r.round},
                      {"target", Num(r.target)},
                      {"baseline", Num(r.baseline)},
                      {"ratio", Num(r.ratio)}});
  }
  const RatioInterval& iv = c.interval;
  ojson interval =
      iv.ok()
          ? ojson{{"n", iv.n},          {"level", Num(iv.level)}, {"estimate", Num(iv.estimate)},
                  {"low", Num(iv.low)}, {"high", Num(iv.high)},   {"log_sd", Num(iv.log_sd)}}
          : ojson();
  return {
      {"verdict", ComparisonVerdictName(c.verdict)},
      {"reason", c.reason},
      {"interval", interval},
      {"rounds_needed", c.rounds_needed ? ojson(*c.rounds_needed) : ojson()},
      {"noise_rule",
       {{"verdict", ComparisonVerdictName(c.noise_rule.verdict)}, {"reason", c.noise_rule.reason}}},
      {"ratio", SummaryJson(c.ratio)},
      {"rounds_won", c.rounds_won},
      {"rounds_lost", c.rounds_lost},
      {"noise_floor", Opt(c.noise_floor)},
      {"rounds", rounds}};
}

}  // namespace

nlohmann::ordered_json AttemptRecordJson(const WindowRow& w, bool newest, const SampleSummary* s,
                                         std::optional<double> services_cpu_s) {
  ojson reasons = ojson::array();
  for (const std::string& r : Reasons(w)) reasons.push_back(r);
  ojson samples = s ? ojson{{"count", s->count},
                            {"server_count", s->server_count},
                            {"server_cpu_pct_mean", Num(s->server_cpu_pct_mean)},
                            {"server_cpu_pct_max", Num(s->server_cpu_pct_max)},
                            {"rss_max_kb", s->rss_max_kb}}
                    : ojson{{"count", 0},
                            {"server_count", 0},
                            {"server_cpu_pct_mean", nullptr},
                            {"server_cpu_pct_max", nullptr},
                            {"rss_max_kb", 0}};
  ojson out = {
      {"id", w.id},
      {"attempt", w.attempt},
      {"newest", newest},
      {"verdict", w.verdict},
      {"reasons", reasons},
      {"started_at", w.started_at},
      {"ended_at", w.ended_at},
      {"server_agent", w.server_agent},
      {"load_agent", w.load_agent},
      {"requests", w.requests},
      {"duration_s", w.duration_s},
      {"rps", w.rps},
      {"throughput_rps", Opt(w.throughput_rps)},
      {"p50_us", w.p50_us},
      {"p90_us", w.p90_us},
      {"p99_us", w.p99_us},
      {"p999_us", w.p999_us},
      {"max_us", w.max_us},
      {"mean_us", w.mean_us},
      {"p99_uncorrected_us", Opt(w.p99_uncorrected_us)},
      {"errors", w.errors},
      {"errors_connect", w.errors_connect},
      {"errors_read", w.errors_read},
      {"errors_write", w.errors_write},
      {"errors_timeout", w.errors_timeout},
      {"errors_parse", w.errors_parse},
      {"errors_body_too_large", w.errors_body_too_large},
      {"errors_status", w.errors_status},
      {"errors_mismatch", w.errors_mismatch},
      {"status_counts", ParseJson(w.status_counts, ojson::object())},
      {"server_cpu_s", w.server_cpu_s},
      {"cpu_us_per_request", w.cpu_us_per_request},
      {"requests_per_cpu_s", Num(MetricValue(ToMeasurement(w), Metric::kRequestsPerCpuSecond))},
      {"cpu_accounting", w.cpu_accounting},
      {"rss_peak_kb", w.rss_peak_kb},
      {"rss_mean_kb", w.rss_mean_kb},
      {"startup_ms", w.startup_ms},
      {"first_request_ms", w.first_request_ms},
      {"idle_rss_kb", w.idle_rss_kb},
      {"threads", w.threads},
      {"ctx_switches_voluntary", w.ctx_switches_voluntary},
      {"ctx_switches_involuntary", w.ctx_switches_involuntary},
      {"target_version", w.target_version},
      {"load_cpu_s", w.load_cpu_s},
      {"load_depth", w.load_depth},
      {"load_rate", Opt(w.load_rate)},
      {"sent", Opt(w.sent)},
      {"dropped", Opt(w.dropped)},
      {"generator_bound", w.generator_bound != 0},
      {"align_error_ms", w.align_error_ms},
      {"selftest_server_ms", Opt(w.selftest_server_ms)},
      {"selftest_load_ms", Opt(w.selftest_load_ms)},
      {"selftest_drift", Opt(w.selftest_drift)},
      {"server_busy_pct", Opt(w.server_busy_pct)},
      {"server_steal_pct", Opt(w.server_steal_pct)},
      {"server_foreign_cpu_pct", Opt(w.server_foreign_cpu_pct)},
      {"server_foreign_cpu_max_pct", Opt(w.server_foreign_cpu_max_pct)},
      {"server_top_foreign", ParseJson(w.server_top_foreign, ojson::array())},
      {"load_busy_pct", Opt(w.load_busy_pct)},
      {"load_steal_pct", Opt(w.load_steal_pct)},
      {"load_foreign_cpu_pct", Opt(w.load_foreign_cpu_pct)},
      {"load_foreign_cpu_max_pct", Opt(w.load_foreign_cpu_max_pct)},
      {"load_top_foreign", ParseJson(w.load_top_foreign, ojson::array())},
      {"max_temp_c", Opt(w.max_temp_c)},
      {"throttle_events", Opt(w.throttle_events)},
      {"min_freq_ratio", Opt(w.min_freq_ratio)},
      {"swap_in_pages", Opt(w.swap_in_pages)},
      {"swap_out_pages", Opt(w.swap_out_pages)},
      {"samples", samples},
      {"load_record", ParseJson(w.load_record, ojson::object())},
      {"histogram", w.histogram},
      {"histogram_uncorrected", w.histogram_uncorrected},
  };
  // Only an attempt that ran with side services has their figures: without services there is
  // no such cost to state, and a 0 would claim one was measured.
  if (services_cpu_s) {
    const Measurement m = ToMeasurement(w, services_cpu_s);
    out["services_cpu_s"] = *services_cpu_s;
    out["service_cpu_us_per_request"] = Num(MetricValue(m, Metric::kServiceCpuUsPerRequest));
    out["total_cpu_us_per_request"] = Num(MetricValue(m, Metric::kTotalCpuUsPerRequest));
  }
  return out;
}

namespace {

// The mode the campaign's windows were judged in: --gates's override, else the file's [gates]
// mode; nullopt when the stored text no longer parses and nothing overrode it.
std::optional<std::string> GatesInForceOf(const CampaignRow& c,
                                          const std::optional<Campaign>& spec) {
  if (!c.gates_mode.empty()) return c.gates_mode;
  if (!spec) return std::nullopt;
  return spec->gates.mode == GateMode::kWarn ? "warn" : "enforce";
}

// Host facts: one entry per role, agent and distinct facts, with the attempts that saw them.
ojson HostsJson(const ReportInput& in) {
  ojson hosts = ojson::array();
  std::map<std::tuple<std::string, std::string, std::string>, size_t> host_index;
  auto add_host = [&](const std::string& role, const std::string& agent, const std::string& text,
                      int64_t id) {
    ojson facts = ParseJson(text, ojson::object());
    if (facts.is_object() && facts.empty()) return;
    auto [it, fresh] = host_index.emplace(std::make_tuple(role, agent, facts.dump()), hosts.size());
    if (fresh) {
      hosts.push_back(
          {{"role", role}, {"agent", agent}, {"facts", facts}, {"windows", ojson::array()}});
    }
    hosts[it->second]["windows"].push_back(id);
  };
  for (const WindowRow& w : in.windows) {
    add_host("server", w.server_agent, w.server_host, w.id);
    add_host("load", w.load_agent, w.load_host, w.id);
  }
  return hosts;
}

ojson CalibrationsJson(const ReportInput& in) {
  ojson calibrations = ojson::array();
  for (const SelftestCalibrationRow& k : in.calibrations) {
    calibrations.push_back({{"agent", k.agent},
                            {"runs", k.runs},
                            {"median_ms", k.median_ms},
                            {"spread", k.spread ? ojson(*k.spread) : ojson()},
                            {"threshold_pct", k.threshold_pct},
                            {"threshold_source", k.threshold_source}});
  }
  return calibrations;
}

ojson NoiseFloorsJson(const Context& cx) {
  ojson noise = ojson::array();
  for (const std::string& pair : cx.stats.pairs) {
    const NoiseFloors& nf = cx.stats.noise.at(pair);
    ojson metrics = ojson::object();
    for (Metric m : kAllMetrics) {
      if (IsServiceMetric(m) && !cx.stats.services) continue;
      const auto& f = nf.of(m);
      metrics[MetricName(m)] =
          f ? ojson{{"fraction", f->fraction}, {"values", SummaryJson(f->values)}} : ojson();
    }
    noise.push_back(
        {{"pair", pair}, {"windows", nf.windows}, {"valid", nf.valid}, {"metrics", metrics}});
  }

  return noise;
}

ojson CellsJson(const Context& cx, const CampaignRow& c) {
  ojson cells = ojson::array();
  for (const CellStats& cell : cx.stats.cells) {
    ojson targets = ojson::array();
    for (const TargetStats& t : cell.targets) {
      ojson metrics = ojson::object();
      for (Metric m : kAllMetrics) {
        if (IsServiceMetric(m) && !cx.stats.services) continue;
        ojson one = SummaryJson(t.of(m));
        one["vs_baseline"] = ComparisonJson(t.compared(m));
        metrics[MetricName(m)] = one;
      }
      targets.push_back({{"target", t.target},
                         {"baseline", t.target == c.baseline},
                         {"windows", t.windows},
                         {"valid", t.valid},
                         {"metrics", metrics}});
    }
    auto rounds = cx.cell_rounds.find(cell.cell);
    cells.push_back(
        {{"pair", cell.cell.pair},
         {"scenario", cell.cell.scenario},
         {"load_level", cell.cell.load_level},
         {"rounds", rounds == cx.cell_rounds.end() ? ojson() : ojson(rounds->second.rounds)},
         {"stopped",
          rounds == cx.cell_rounds.end() ? ojson() : ojson(CellStopName(rounds->second.stop))},
         {"targets", targets}});
  }
  return cells;
}

ojson TargetFactsJson(const Context& cx) {
  ojson facts = ojson::array();
  for (const TargetFacts& f : cx.stats.facts) {
    facts.push_back({{"pair", f.pair},
                     {"target", f.target},
                     {"startup_ms", SummaryJson(f.startup_ms)},
                     {"first_request_ms", SummaryJson(f.first_request_ms)},
                     {"idle_rss_kb", SummaryJson(f.idle_rss_kb)},
                     {"rss_peak_kb", SummaryJson(f.rss_peak_kb)}});
  }

  return facts;
}

// Windows in the order their first attempt was stored, each with every attempt.
ojson WindowsJson(const ReportInput& in, const Context& cx) {
  ojson windows = ojson::array();
  std::map<WindowKey, size_t> window_index;
  for (const WindowRow& w : in.windows) {
    auto [it, fresh] = window_index.emplace(w.Key(), windows.size());
    if (fresh) {
      windows.push_back({{"pair", w.pair},
                         {"target", w.target},
                         {"scenario", w.scenario},
                         {"load_level", ToMeasurement(w).load_level},
                         {"connections", w.connections},
                         {"round", w.round},
                         {"position", w.position},
                         {"noise", w.noise != 0},
                         {"attempts", ojson::array()}});
    }
    windows[it->second]["attempts"].push_back(AttemptRecordJson(
        w, cx.newest.count(w.id) > 0, SamplesOf(in, w.id), ServicesCpuOf(in, w.id)));
  }

  return windows;
}

// benchlab's generator against external tools on the same cells (empty without [load] tool).
ojson LoadToolsJson(const Context& cx) {
  ojson tools = ojson::array();
  for (const ToolCell& cell : CompareTools(cx)) {
    ojson targets = ojson::array();
    for (const ToolTarget& t : cell.targets) {
      auto rounds_json = [](const std::vector<ToolRound>& rounds) {
        ojson list = ojson::array();
        for (const ToolRound& r : rounds) {
          list.push_back({{"round", r.round}, {"ratio", Num(r.ratio)}, {"gap_s", Num(r.gap_s)}});
        }
        return list;
      };
      targets.push_back({{"target", t.target},
                         {"benchlab_rps", SummaryJson(t.benchlab_rps)},
                         {"tool_rps", SummaryJson(t.tool_rps)},
                         {"ratio", SummaryJson(t.ratio)},
                         {"rounds", rounds_json(t.rounds)},
                         {"rounds_apart", rounds_json(t.apart)},
                         {"benchlab_p99_us", SummaryJson(t.benchlab_p99_us)},
                         {"tool_p99_us", SummaryJson(t.tool_p99_us)},
                         {"benchlab_cpu_us_per_request", SummaryJson(t.benchlab_cpu_us)},
                         {"tool_cpu_us_per_request", SummaryJson(t.tool_cpu_us)}});
    }
    tools.push_back({{"pair", cell.pair},
                     {"scenario", cell.scenario},
                     {"load_level", cell.load_level},
                     {"tool", cell.tool},
                     {"targets", targets}});
  }
  return tools;
}

}  // namespace

std::optional<std::string> CampaignGatesInForce(const CampaignRow& campaign) {
  if (!campaign.gates_mode.empty()) return campaign.gates_mode;  // no need to parse the file
  auto parsed = ParseCampaignText(campaign.spec_toml, campaign.source, ".");
  return GatesInForceOf(campaign, parsed.ok() ? std::optional<Campaign>(std::move(*parsed))
                                              : std::optional<Campaign>());
}

std::string FormatReportJson(const ReportInput& in) {
  const Context cx = Analyse(in);
  const CampaignRow& c = in.campaign;
  ojson out;
  out["format"] = "benchlab-run-of-record";
  out["version"] = 2;
  out["generated_by"] = in.generated_by;
  const std::optional<std::string> gates_in_force = GatesInForceOf(c, cx.spec);
  out["campaign"] = {{"id", c.id},
                     {"name", c.name},
                     {"state", c.state},
                     {"baseline", c.baseline.empty() ? ojson() : ojson(c.baseline)},
                     {"source", c.source},
                     {"created_at", c.created_at},
                     {"finished_at", c.finished_at.empty() ? ojson() : ojson(c.finished_at)},
                     {"total_windows", c.total_windows},
                     {"error", c.error.empty() ? ojson() : ojson(c.error)},
                     {"gates_mode", c.gates_mode},
                     {"gates_in_force", gates_in_force ? ojson(*gates_in_force) : ojson()},
                     {"placement", ParseJson(c.placement, ojson::object())}};
  // Stored redacted since schema 4; a campaign stored before is redacted here (a text that no
  // longer parses is shown as stored).
  auto spec = RedactCampaignText(c.spec_toml, c.source);
  out["spec"] = spec.ok() ? *spec : c.spec_toml;
  out["targets"] = TargetOrder(in);
  const LookPlan& plan = cx.options.plan;
  out["stats"] = {{"confidence", cx.options.rule.confidence},
                  {"margin", cx.options.rule.margin},
                  {"plan", plan.adaptive ? "adaptive" : "fixed"},
                  {"min_rounds", plan.min_rounds},
                  {"max_rounds", plan.max_rounds},
                  {"looks", plan.Looks()},
                  {"level_per_look", plan.LevelAt(plan.max_rounds)},
                  {"max_duration_s",
                   cx.spec && cx.spec->stats.max_duration
                       ? ojson(std::chrono::duration<double>(*cx.spec->stats.max_duration).count())
                       : ojson()},
                  {"decide_on", cx.spec ? ojson(cx.spec->stats.decide_on) : ojson()}};

  out["hosts"] = HostsJson(in);
  out["selftest_calibrations"] = CalibrationsJson(in);
  out["gate_audit"] = GateAuditJson(AuditGates(AuditWindowsOf(in, "")));
  const Remeasured again = CountRemeasured(in.windows);
  ojson by_gate = ojson::object();
  for (const auto& [gate, n] : again.by_gate) by_gate[gate] = n;
  out["remeasured"] = {{"windows", again.windows}, {"by_gate", by_gate}};

  out["noise_floor"] = NoiseFloorsJson(cx);
  out["cells"] = CellsJson(cx, c);
  // A profiled campaign's target-against-baseline profile diffs (docs/profiles.md); absent when
  // the campaign was not profiled.
  if (in.profiled) {
    ojson unprofiled = ojson::array();
    for (const UnprofiledWindow& u : in.unprofiled) {
      unprofiled.push_back({{"window_id", u.row.id}, {"error", u.error}});
    }
    out["profiles"] = {{"diffs", ojson::parse(ProfileDiffJson(in.profile_diffs).dump())},
                       {"unprofiled", unprofiled}};
  }

  out["target_facts"] = TargetFactsJson(cx);
  out["windows"] = WindowsJson(in, cx);
  out["load_tools"] = LoadToolsJson(cx);
  return out.dump(2) + "\n";
}

}  // namespace benchlab

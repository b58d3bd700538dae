#include "analysis/report_format.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/report_detail.h"
#include "common/clock.h"
#include "coordinator/campaign.h"

namespace benchlab {
namespace report_detail {

// --- numbers --------------------------------------------------------------------------------

// Shortest plain decimal that reads back as the same double (100000, never 1e+05); "" for NaN
// (CSV's empty field).
std::string Exact(double v) {
  if (!std::isfinite(v)) return "";
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "";
}

ojson Num(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

std::string Pct(double pct) { return std::isfinite(pct) ? StrFormat("%.1f%%", pct) : kMissing; }
std::string Ratio(double r) { return std::isfinite(r) ? StrFormat("%.2f×", r) : kMissing; }
std::string Ms(double ms) { return Micros(ms * 1000); }
std::string Kib(double kb) {
  if (!std::isfinite(kb)) return kMissing;
  if (kb < 1024) return StrFormat("%.0f KiB", kb);
  if (kb < 1024 * 1024) return StrFormat("%.1f MiB", kb / 1024);
  return StrFormat("%.2f GiB", kb / (1024 * 1024));
}
std::string CpuUs(double us) {
  if (!std::isfinite(us)) return kMissing;
  return us < 10 ? StrFormat("%.2f", us) : StrFormat("%.1f", us);
}
std::string Duration(std::chrono::nanoseconds d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count();
  return ms < 1000 ? Exact(ms) + " ms" : Exact(ms / 1000) + " s";
}

// --- stored JSON ----------------------------------------------------------------------------

ojson ParseJson(const std::string& text, ojson fallback) {
  ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

std::vector<std::string> Reasons(const WindowRow& w) {
  ojson j = ParseJson(w.reasons, ojson::array());
  std::vector<std::string> out;
  if (!j.is_array()) return {w.reasons};
  for (const auto& r : j) out.push_back(r.is_string() ? r.get<std::string>() : r.dump());
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// --- the campaign around the windows --------------------------------------------------------

Context Analyse(const ReportInput& in) {
  Context cx{in, std::nullopt, "", {}, {}, {}, {}};
  auto parsed = ParseCampaignText(in.campaign.spec_toml, in.campaign.source, ".");
  if (parsed.ok()) {
    cx.spec = std::move(*parsed);
  } else {
    cx.spec_error = parsed.status().message();
  }
  std::map<WindowKey, const WindowRow*> newest;
  for (const WindowRow& w : in.windows) {
    const WindowRow*& n = newest[w.Key()];
    if (!n || w.attempt > n->attempt) n = &w;
  }
  for (const auto& [key, w] : newest) cx.newest.insert(w->id);
  std::vector<Measurement> ms;
  for (const WindowRow& w : in.windows) ms.push_back(ToMeasurement(w, ServicesCpuOf(in, w.id)));
  if (cx.spec) cx.options = StatsOptionsOf(*cx.spec);
  cx.stats = AnalyseCampaign(ms, in.campaign.baseline, TargetOrder(in), cx.options);
  if (cx.spec) {
    const bool finished =
        !in.campaign.Is(CampaignState::kRunning) && !in.campaign.Is(CampaignState::kQueued);
    for (const auto& [key, cell] : GroupByCell(NewestAttempts(ms))) {
      cx.cell_rounds[key] = CellRoundsOf(cell, *cx.spec, finished);
    }
  }
  // Cells in the campaign file's order: scenarios, then load levels as they run.
  std::map<std::string, int> scenario_rank, level_rank;
  if (cx.spec) {
    for (const auto& s : cx.spec->scenarios) scenario_rank.emplace(s.name, scenario_rank.size());
    for (const auto& l : cx.spec->LoadLevels()) {
      level_rank.emplace(LoadLevelLabel(l), level_rank.size());
    }
  }
  auto rank = [](const std::map<std::string, int>& m, const std::string& k) {
    auto it = m.find(k);
    return std::make_pair(it == m.end() ? 1 << 30 : it->second, k);
  };
  std::stable_sort(cx.stats.cells.begin(), cx.stats.cells.end(),
                   [&](const CellStats& a, const CellStats& b) {
                     return std::make_tuple(a.cell.pair, rank(scenario_rank, a.cell.scenario),
                                            rank(level_rank, a.cell.load_level)) <
                            std::make_tuple(b.cell.pair, rank(scenario_rank, b.cell.scenario),
                                            rank(level_rank, b.cell.load_level));
                   });
  return cx;
}

std::vector<ToolCell> CompareTools(const Context& cx) {
  // The newest valid matrix windows, by (pair, scenario, level, target, tool, round): one
  // target's rounds under one tool are adjacent.
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, int>;
  std::map<Key, const WindowRow*> windows;
  for (const WindowRow& w : cx.in.windows) {
    if (!cx.newest.count(w.id) || w.noise || w.verdict != "valid") continue;
    const std::string level = ToMeasurement(w).load_level;
    const size_t at = level.find('@');
    windows[{w.pair, w.scenario, level.substr(0, at), w.target, LoadTool(level), w.round}] = &w;
  }
  auto gap_s = [](const WindowRow& a, const WindowRow& b) {
    return std::abs(ParseIsoSeconds(a.started_at) - ParseIsoSeconds(b.started_at));
  };
  // How far apart the first pass put a round's two windows: both first attempts, as planned.
  double first_pass_gap_s = -1;
  for (const auto& [key, w] : windows) {
    const auto& [pair, scenario, base, target, tool, round] = key;
    if (tool == "benchlab" || w->attempt != 1) continue;
    auto mine = windows.find({pair, scenario, base, target, "benchlab", round});
    if (mine == windows.end() || mine->second->attempt != 1) continue;
    const double gap = gap_s(*w, *mine->second);
    if (std::isfinite(gap)) first_pass_gap_s = std::max(first_pass_gap_s, gap);
  }

  std::vector<ToolCell> out;
  for (const CellStats& cell : cx.stats.cells) {
    const std::string& level = cell.cell.load_level;
    const size_t at = level.find('@');
    if (at == std::string::npos) continue;
    ToolCell tc{cell.cell.pair, cell.cell.scenario, level.substr(0, at), level.substr(at + 1), {}};
    for (const TargetStats& t : cell.targets) {
      ToolTarget tt;
      tt.target = t.target;
      std::vector<double> b_rps, t_rps, b_p99, t_p99, b_cpu, t_cpu, ratios;
      const Key first{tc.pair, tc.scenario, tc.load_level, t.target, tc.tool, INT_MIN};
      for (auto it = windows.lower_bound(first); it != windows.end(); ++it) {
        const auto& [pair, scenario, base, target, tool, round] = it->first;
        if (pair != tc.pair || scenario != tc.scenario || base != tc.load_level ||
            target != t.target || tool != tc.tool) {
          break;
        }
        const WindowRow& w = *it->second;
        const Measurement tool_m = ToMeasurement(w);
        t_rps.push_back(tool_m.rps);
        t_p99.push_back(tool_m.p99_us);
        t_cpu.push_back(w.cpu_us_per_request > 0 ? w.cpu_us_per_request : kNaN);
        auto mine = windows.find({pair, scenario, base, target, "benchlab", round});
        if (mine == windows.end()) continue;
        const WindowRow& own_w = *mine->second;
        const Measurement own = ToMeasurement(own_w);
        b_rps.push_back(own.rps);
        b_p99.push_back(own.p99_us);
        b_cpu.push_back(own_w.cpu_us_per_request > 0 ? own_w.cpu_us_per_request : kNaN);
        if (tool_m.rps <= 0) continue;
        const ToolRound r{round, own.rps / tool_m.rps, gap_s(w, own_w)};
        // Unreadable starts, or no first pass to judge by: taken as measured together.
        const bool apart =
            first_pass_gap_s >= 0 && std::isfinite(r.gap_s) && r.gap_s > first_pass_gap_s + 1.0;
        if (apart) {
          tt.apart.push_back(r);
        } else {
          ratios.push_back(r.ratio);
          tt.rounds.push_back(r);
        }
      }
      if (t_rps.empty() && b_rps.empty()) continue;
      tt.benchlab_rps = Summarize(b_rps);
      tt.tool_rps = Summarize(t_rps);
      tt.benchlab_p99_us = Summarize(b_p99);
      tt.tool_p99_us = Summarize(t_p99);
      tt.benchlab_cpu_us = Summarize(b_cpu);
      tt.tool_cpu_us = Summarize(t_cpu);
      tt.ratio = Summarize(ratios);
      tc.targets.push_back(std::move(tt));
    }
    if (!tc.targets.empty()) out.push_back(std::move(tc));
  }
  return out;
}

std::string LevelWords(const std::string& level) {
  const size_t at = level.find('@');
  if (at != std::string::npos) return LevelWords(level.substr(0, at)) + ", " + level.substr(at + 1);
  if (level.size() > 1 && level[0] == 'c') return level.substr(1) + " connections";
  if (level.size() > 1 && level[0] == 'r') {
    return "open loop at " + Thousands(std::atof(level.c_str() + 1)) + " req/s";
  }
  return level;
}

std::string WindowName(const WindowRow& w) {
  std::string name = w.pair.empty() ? "" : w.pair + " · ";
  name += w.noise ? StrFormat("noise %d", w.position + 1) : StrFormat("round %d", w.round);
  return name + " · " + w.target + " · " + w.scenario + " · " + w.load_level;
}

const SampleSummary* SamplesOf(const ReportInput& in, int64_t id) {
  auto it = in.samples.find(id);
  return it == in.samples.end() ? nullptr : &it->second;
}

}  // namespace report_detail

std::vector<std::string> UnavailableFigures(const WindowRow& w) {
  std::vector<std::string> out;
  if (w.load_record.find("unavailable") == std::string::npos) return out;  // the common case
  auto record = nlohmann::json::parse(w.load_record, nullptr, false);
  if (!record.is_object() || !record.contains("unavailable")) return out;
  for (const auto& column : record["unavailable"]) {
    if (column.is_string()) out.push_back(column.get<std::string>());
  }
  return out;
}

std::string LoadTool(const std::string& level) {
  const size_t at = level.find('@');
  return at == std::string::npos ? "benchlab" : level.substr(at + 1);
}

using report_detail::kMissing;

// --- shared helpers -------------------------------------------------------------------------

SampleSummary SummariseSamples(const std::vector<SampleRow>& samples) {
  SampleSummary s;
  double sum = 0;
  for (const SampleRow& r : samples) {
    ++s.count;
    if (r.source != "server") continue;
    ++s.server_count;
    sum += r.cpu_pct;
    s.server_cpu_pct_max =
        s.server_count == 1 ? r.cpu_pct : std::max(s.server_cpu_pct_max, r.cpu_pct);
    s.rss_max_kb = std::max(s.rss_max_kb, r.rss_kb);
  }
  if (s.server_count > 0) s.server_cpu_pct_mean = sum / s.server_count;
  return s;
}

std::optional<double> ServicesCpuOf(const ReportInput& in, int64_t id) {
  auto it = in.services_cpu_s.find(id);
  if (it == in.services_cpu_s.end()) return std::nullopt;
  return it->second;
}

Measurement ToMeasurement(const WindowRow& w, std::optional<double> services_cpu_s) {
  Measurement m;
  m.pair = w.pair;
  m.target = w.target;
  m.scenario = w.scenario;
  m.load_level = w.load_level.empty() ? "c" + std::to_string(w.connections) : w.load_level;
  m.round = w.round;
  m.position = w.position;
  m.attempt = w.attempt;
  m.noise = w.noise != 0;
  m.valid = w.verdict == "valid";
  m.rps = w.rps;
  m.requests = static_cast<double>(w.requests);
  m.server_cpu_s = w.server_cpu_s;
  m.cpu_us_per_request = w.cpu_us_per_request;
  m.p50_us = static_cast<double>(w.p50_us);
  m.p99_us = static_cast<double>(w.p99_us);
  // An external load generator lists what it could not measure: unavailable, not 0.
  for (const std::string& column : UnavailableFigures(w)) {
    if (column == "p50_us") m.p50_us = kNaN;
    if (column == "p99_us") m.p99_us = kNaN;
  }
  m.startup_ms = w.startup_ms;
  m.first_request_ms = w.first_request_ms;
  m.idle_rss_kb = static_cast<double>(w.idle_rss_kb);
  m.rss_peak_kb = static_cast<double>(w.rss_peak_kb);
  m.has_services = services_cpu_s.has_value();
  m.services_cpu_s = services_cpu_s.value_or(0);
  return m;
}

std::vector<std::string> TargetOrder(const ReportInput& in) {
  std::vector<std::string> order;
  auto parsed = ParseCampaignText(in.campaign.spec_toml, in.campaign.source, ".");
  if (parsed.ok()) {
    for (const auto& t : parsed->targets) order.push_back(t.name);
  }
  for (const WindowRow& w : in.windows) {
    if (std::find(order.begin(), order.end(), w.target) == order.end()) order.push_back(w.target);
  }
  return order;
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Thousands(double value) {
  if (!std::isfinite(value)) return kMissing;
  long long n = std::llround(value);
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Micros(double us) {
  if (!std::isfinite(us)) return kMissing;
  if (us < 1000) return StrFormat("%.0f µs", us);
  if (us < 1e6) return StrFormat("%.2f ms", us / 1e3);
  return StrFormat("%.2f s", us / 1e6);
}

namespace {

// Every target against the baseline, from the campaign's profiles; nothing for a campaign that
// was not profiled. A pair of targets without a paired profiled round has no table.
Status LoadProfileDiffs(Store& store, ReportInput& input) {
  auto profiles = LoadCampaignProfiles(store, input.campaign.name);
  if (!profiles.ok()) {
    return profiles.status().code() == StatusCode::kFailedPrecondition ? Status::Ok()
                                                                       : profiles.status();
  }
  input.profiled = true;
  input.unprofiled = profiles->unprofiled;
  const std::string& base = input.campaign.baseline;
  if (base.empty()) return Status::Ok();
  for (const std::string& target : TargetOrder(input)) {
    if (target == base) continue;
    auto cells = DiffTargets(*profiles, base, target, {});
    if (!cells.ok()) continue;
    for (auto& c : *cells) input.profile_diffs.push_back(std::move(c));
  }
  return Status::Ok();
}

}  // namespace

Result<ReportInput> LoadReportInput(Store& store, const std::string& campaign) {
  BENCHLAB_ASSIGN_OR_RETURN(const std::optional<CampaignRow> row, store.FindCampaign(campaign));
  if (!row) {
    BENCHLAB_ASSIGN_OR_RETURN(const std::vector<CampaignRow> all, store.ListCampaigns());
    std::string names;
    for (const CampaignRow& c : all) names += (names.empty() ? "" : ", ") + c.name;
    return Status::NotFound("no campaign \"" + campaign +
                            "\" (campaigns: " + (names.empty() ? "none" : names) + ")");
  }
  ReportInput input;
  input.campaign = *row;
  input.generated_by = std::string("benchlab ") + BENCHLAB_VERSION;
  WindowFilter filter;
  filter.campaign = campaign;
  BENCHLAB_ASSIGN_OR_RETURN(input.windows, store.ListWindows(filter));
  for (const WindowRow& w : input.windows) {
    BENCHLAB_ASSIGN_OR_RETURN(const std::vector<SampleRow> samples, store.ListSamples(w.id));
    input.samples[w.id] = SummariseSamples(samples);
  }
  BENCHLAB_ASSIGN_OR_RETURN(input.services_cpu_s, store.SumServiceCpuByWindow(input.campaign.id));
  BENCHLAB_ASSIGN_OR_RETURN(input.calibrations, store.ListSelftestCalibrations(input.campaign.id));
  BENCHLAB_RETURN_IF_ERROR(LoadProfileDiffs(store, input));
  return input;
}

Result<std::string> FormatReport(const ReportInput& input, const std::string& format) {
  if (format == "md" || format == "markdown") return FormatReportMarkdown(input);
  if (format == "json") return FormatReportJson(input);
  if (format == "csv") return FormatReportCsv(input);
  return Status::InvalidArgument("format: expected md (or markdown), json or csv, got \"" + format +
                                 "\"");
}

}  // namespace benchlab

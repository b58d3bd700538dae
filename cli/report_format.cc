#include "cli/report_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "cli/report_lines.h"
#include "coordinator/campaign.h"

namespace benchlab {
namespace {

using ojson = nlohmann::ordered_json;

std::string Printf(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

constexpr const char* kMissing = "–";  // a figure that could not be computed
constexpr const char* kNone = "—";     // a figure that does not apply (the baseline's ratio)

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
template <typename T>
ojson Opt(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

std::string Pct(double pct) { return std::isfinite(pct) ? Printf("%.1f%%", pct) : kMissing; }
std::string Ratio(double r) { return std::isfinite(r) ? Printf("%.2f×", r) : kMissing; }
std::string Ms(double ms) { return Micros(ms * 1000); }
std::string Kib(double kb) {
  if (!std::isfinite(kb)) return kMissing;
  if (kb < 1024) return Printf("%.0f KiB", kb);
  if (kb < 1024 * 1024) return Printf("%.1f MiB", kb / 1024);
  return Printf("%.2f GiB", kb / (1024 * 1024));
}
std::string CpuUs(double us) {
  if (!std::isfinite(us)) return kMissing;
  return us < 10 ? Printf("%.2f", us) : Printf("%.1f", us);
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

struct Context {
  const ReportInput& in;
  std::optional<Campaign> spec;  // nullopt: the stored text no longer parses
  std::string spec_error;
  std::set<int64_t> newest;  // ids of the attempts that count
  CampaignStats stats;
};

Context Analyse(const ReportInput& in) {
  Context cx{in, std::nullopt, "", {}, {}};
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
  for (const WindowRow& w : in.windows) ms.push_back(ToMeasurement(w));
  cx.stats = AnalyseCampaign(ms, in.campaign.baseline, TargetOrder(in));
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

std::string LevelWords(const std::string& level) {
  if (level.size() > 1 && level[0] == 'c') return level.substr(1) + " connections";
  if (level.size() > 1 && level[0] == 'r') {
    return "open loop at " + Thousands(std::atof(level.c_str() + 1)) + " req/s";
  }
  return level;
}

std::string WindowName(const WindowRow& w) {
  std::string name = w.pair.empty() ? "" : w.pair + " · ";
  name += w.noise ? Printf("noise %d", w.position + 1) : Printf("round %d", w.round);
  return name + " · " + w.target + " · " + w.scenario + " · " + w.load_level;
}

}  // namespace

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

Measurement ToMeasurement(const WindowRow& w) {
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
  m.startup_ms = w.startup_ms;
  m.first_request_ms = w.first_request_ms;
  m.idle_rss_kb = static_cast<double>(w.idle_rss_kb);
  m.rss_peak_kb = static_cast<double>(w.rss_peak_kb);
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
  return std::isfinite(value) ? WithThousands(value) : kMissing;
}

std::string Micros(double us) {
  if (!std::isfinite(us)) return kMissing;
  if (us < 1000) return Printf("%.0f µs", us);
  if (us < 1e6) return Printf("%.2f ms", us / 1e3);
  return Printf("%.2f s", us / 1e6);
}

// --- Markdown -------------------------------------------------------------------------------

namespace {

// Columns as wide as their widest cell (in characters, not bytes), so the text reads as a table
// before it is rendered.
size_t Width(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

std::string Table(const std::vector<std::string>& header, const std::string& align,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size(), 3);
  for (size_t i = 0; i < header.size(); ++i) w[i] = std::max(w[i], Width(header[i]));
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], Width(r[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string c = i < cells.size() ? cells[i] : "";
      const std::string pad(w[i] - Width(c), ' ');
      out += " " + (align[i] == 'r' ? pad + c : c + pad) + " |";
    }
    return out + "\n";
  };
  std::string out = line(header) + "|";
  for (size_t i = 0; i < w.size(); ++i) {
    out += align[i] == 'r' ? " " + std::string(w[i] - 1, '-') + ": |"
                           : " " + std::string(w[i], '-') + " |";
  }
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string EscapeCell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.insert(i, "\\");
  return s;
}

std::string VsBaseline(const Comparison& c) {
  if (c.ratio.n == 0) return kMissing;
  if (c.ratio.n == 1) return Ratio(c.ratio.median);
  return Ratio(c.ratio.median) + " (" + Printf("%.2f", c.ratio.min) + "–" +
         Printf("%.2f", c.ratio.max) + ")";
}

std::string CellTable(const Context& cx, const CellStats& cell) {
  const std::string& base = cx.stats.baseline;
  std::vector<std::vector<std::string>> rows;
  std::string notes;
  for (const TargetStats& t : cell.targets) {
    if (t.windows == 0) continue;
    const bool is_base = t.target == base;
    const Summary& rps = t.of(Metric::kRps);
    const Comparison& c = t.compared(Metric::kRps);
    std::string rps_text = Thousands(rps.median);
    if (rps.n >= 2) rps_text += " (" + Pct(rps.spread_pct) + ")";
    rows.push_back({is_base ? t.target + " (baseline)" : t.target, rps_text,
                    Micros(t.of(Metric::kP50Us).median), Micros(t.of(Metric::kP99Us).median),
                    CpuUs(t.of(Metric::kCpuUsPerRequest).median),
                    Thousands(t.of(Metric::kRequestsPerCpuSecond).median),
                    is_base ? kNone : VsBaseline(c),
                    is_base            ? kNone
                    : c.rounds.empty() ? kMissing
                                       : Printf("%d/%zu", c.rounds_won, c.rounds.size()),
                    is_base ? "baseline" : ComparisonVerdictName(c.verdict),
                    Printf("%d/%d", t.valid, t.windows)});
    if (is_base || base.empty()) continue;
    std::vector<std::string> parts;
    for (Metric m : {Metric::kCpuUsPerRequest, Metric::kP99Us}) {
      const Comparison& o = t.compared(m);
      if (o.rounds.empty()) continue;
      parts.push_back(std::string(m == Metric::kP99Us ? "p99" : "CPU µs/request") + " " +
                      VsBaseline(o) + ", won " + Printf("%d/%zu", o.rounds_won, o.rounds.size()) +
                      ", " + ComparisonVerdictName(o.verdict));
    }
    if (c.verdict == ComparisonVerdict::kNotApplicable) parts.push_back("req/s: " + c.reason);
    if (!parts.empty()) notes += "- " + t.target + ": " + Join(parts, "; ") + "\n";
  }
  std::string out = Table({"target", "req/s (spread)", "p50", "p99", "CPU µs/req", "req/CPU-s",
                           "vs " + (base.empty() ? std::string("baseline") : base) + " (range)",
                           "rounds won", "verdict", "valid"},
                          "lrrrrrrrlr", rows);
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

std::string NoiseSection(const Context& cx) {
  std::string out = "## Noise floor\n\n";
  for (const std::string& pair : cx.stats.pairs) {
    const NoiseFloors& nf = cx.stats.noise.at(pair);
    if (!pair.empty()) out += "### Pair " + pair + "\n\n";
    if (nf.windows == 0) {
      out +=
          "No noise floor: the campaign measured no noise windows (no `[noise]` table), so a "
          "comparison is called close only when its round ratios straddle 1.\n\n";
      continue;
    }
    std::string cell;
    for (const WindowRow& w : cx.in.windows) {
      if (w.noise && w.pair == pair) {
        cell = w.target + " · " + w.scenario + " · " + w.load_level;
        break;
      }
    }
    out += Printf("%d noise windows of %s, spread through the run; %d valid.", nf.windows,
                  cell.c_str(), nf.valid);
    if (!nf.of(Metric::kRps)) {
      out += " No noise floor: at least 2 valid noise windows with a usable figure are needed.\n\n";
      continue;
    }
    out += " The floor is (max − min) / median over them.\n\n";
    std::vector<std::vector<std::string>> rows;
    auto row = [&](const char* name, Metric m, std::string (*fmt)(double)) {
      const auto& f = nf.of(m);
      if (!f) return rows.push_back({name, "none", kMissing, kMissing, kMissing});
      rows.push_back({name, Pct(f->fraction * 100), fmt(f->values.min), fmt(f->values.median),
                      fmt(f->values.max)});
    };
    row("req/s", Metric::kRps, Thousands);
    row("CPU µs/request", Metric::kCpuUsPerRequest, CpuUs);
    row("req/CPU-s", Metric::kRequestsPerCpuSecond, Thousands);
    row("p50", Metric::kP50Us, Micros);
    row("p99", Metric::kP99Us, Micros);
    out += Table({"figure", "floor", "min", "median", "max"}, "lrrrr", rows) + "\n";
  }
  return out;
}

std::string FactsSection(const Context& cx) {
  std::vector<std::vector<std::string>> rows;
  for (const TargetFacts& f : cx.stats.facts) {
    if (f.startup_ms.n == 0) continue;
    rows.push_back({f.pair.empty() ? f.target : f.pair + " · " + f.target, Ms(f.startup_ms.median),
                    Ms(f.first_request_ms.median), Kib(f.idle_rss_kb.median),
                    Kib(f.rss_peak_kb.median), std::to_string(f.startup_ms.n)});
  }
  if (rows.empty()) return "";
  return "## Start-up and memory\n\nMedians over each target's valid matrix windows.\n\n" +
         Table({"target", "start-up", "first request", "idle RSS", "peak RSS", "windows"}, "lrrrrr",
               rows) +
         "\n";
}

// Each agent's host facts as its newest attempt reported them; a load host with several agents
// ({"agents": {...}}) contributes one column per agent.
std::string HostsSection(const Context& cx) {
  std::vector<std::pair<std::string, ojson>> hosts;  // column name, facts
  auto add = [&](const std::string& name, const ojson& facts) {
    if (!facts.is_object() || facts.empty()) return;
    for (auto& h : hosts) {
      if (h.first == name) return void(h.second = facts);
    }
    hosts.emplace_back(name, facts);
  };
  for (const WindowRow& w : cx.in.windows) {
    add("server: " + w.server_agent, ParseJson(w.server_host, ojson::object()));
    ojson load = ParseJson(w.load_host, ojson::object());
    if (load.contains("agents") && load["agents"].is_object()) {
      for (const auto& [agent, facts] : load["agents"].items()) add("load: " + agent, facts);
    } else {
      add("load: " + w.load_agent, load);
    }
  }
  if (hosts.empty()) return "";
  std::vector<std::string> keys;
  for (const auto& h : hosts) {
    for (const auto& [k, v] : h.second.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  std::vector<std::string> header = {"fact"};
  std::string align = "l";
  for (const auto& h : hosts) header.push_back(h.first), align += 'l';
  std::vector<std::vector<std::string>> rows;
  for (const std::string& k : keys) {
    std::vector<std::string> r = {k};
    for (const auto& h : hosts) {
      const ojson v = h.second.contains(k) ? h.second[k] : ojson();
      const bool kb = k.size() > 3 && k.ends_with("_kb") && v.is_number();
      std::string text = v.is_string() ? v.get<std::string>()
                         : kb          ? Kib(v.get<double>())
                         : v.is_null() ? kMissing
                                       : v.dump();
      r.push_back(EscapeCell(text));
    }
    rows.push_back(std::move(r));
  }
  return "## Hosts\n\nAs each agent reported its machine (`windows.server_host`, "
         "`windows.load_host`).\n\n" +
         Table(header, align, rows) + "\n";
}

std::string MethodSection(const Context& cx) {
  const CampaignRow& c = cx.in.campaign;
  std::string out = "## Method\n\n";
  out += "- Campaign `" + c.name + "` from `" + c.source + "`, submitted " + c.created_at +
         (c.finished_at.empty() ? "" : ", finished " + c.finished_at) + "; state " + c.state +
         (c.error.empty() ? "" : " (" + c.error + ")") + ".\n";
  if (!cx.spec) {
    out += "- The stored campaign file no longer parses: " + cx.spec_error + "\n";
  } else {
    const Campaign& s = *cx.spec;
    const char* order = s.order == Order::kRotate  ? "rotate (the targets' order turns every round)"
                        : s.order == Order::kFixed ? "fixed (the file's order every round)"
                                                   : "shuffle (a seeded random order per round)";
    const char* fresh = s.fresh_process == FreshProcess::kWindow ? "every window"
                        : s.fresh_process == FreshProcess::kCell ? "every cell"
                                                                 : "every round";
    out += Printf(
        "- %d rounds, order %s; each window warms up for %s and measures %s; a fresh "
        "target process for %s.\n",
        s.rounds, order, Duration(s.warmup).c_str(), Duration(s.duration).c_str(), fresh);
    std::vector<std::string> levels;
    for (const LoadLevel& l : s.LoadLevels()) levels.push_back(LevelWords(LoadLevelLabel(l)));
    std::string cpus;
    for (int cpu : s.load_cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
    out += Printf("- Load: %d thread%s%s, %d request%s in flight per connection%s; levels: %s.\n",
                  s.load_threads, s.load_threads == 1 ? "" : "s",
                  cpus.empty() ? "" : (" on CPU " + cpus).c_str(), s.load_depth,
                  s.load_depth == 1 ? "" : "s", s.load_poisson ? ", Poisson arrivals" : "",
                  Join(levels, ", ").c_str());
    std::vector<std::string> targets, scenarios;
    for (const TargetDef& t : s.targets) {
      std::string pin;
      for (int cpu : t.cpus) pin += (pin.empty() ? "" : ",") + std::to_string(cpu);
      targets.push_back(t.name + (pin.empty() ? "" : " (CPU " + pin + ")"));
    }
    for (const ScenarioDef& sc : s.scenarios) {
      scenarios.push_back(sc.name + ": `" + sc.method + " " + sc.path + "` expecting " +
                          std::to_string(sc.expect.status) +
                          (sc.expect.body ? " and its body" : ""));
    }
    out += "- Targets: " + Join(targets, ", ") + ". Scenarios: " + Join(scenarios, "; ") + ".\n";
    // `run --gates` / `submit --gates` store a mode that overrides the file's.
    const bool warn =
        c.gates_mode.empty() ? s.gates.mode == GateMode::kWarn : c.gates_mode == "warn";
    out += std::string("- Gates (docs/gates.md): ") +
           (warn ? "warn: windows are judged and their reasons stored, but none is invalidated"
                 : "enforce: a window a gate fails is invalid and left out") +
           (c.gates_mode.empty() ? "" : " (set by --gates, over the file's [gates] mode)") + ".\n";
  }
  out +=
      "- Figures are medians over each target's valid rounds (the newest attempt of each "
      "window); spread = (max − min) / median; ratios are target / baseline within each round, "
      "then summarised (docs/methodology.md).\n";
  out += "- Written by " + cx.in.generated_by + ".\n\n";
  return out;
}

// Every attempt that did not count, and every valid one that carries reasons (gates in warn mode).
std::string InvalidSection(const Context& cx) {
  std::map<WindowKey, std::string> newest_verdict;
  for (const WindowRow& w : cx.in.windows) {
    if (cx.newest.count(w.id)) {
      newest_verdict[w.Key()] = Printf("replaced by attempt %d (%s)", w.attempt, w.verdict.c_str());
    }
  }
  std::vector<std::vector<std::string>> rows;
  int invalid = 0, warned = 0;
  for (const WindowRow& w : cx.in.windows) {
    const std::vector<std::string> reasons = Reasons(w);
    const bool valid = w.verdict == "valid";
    if (valid && reasons.empty()) continue;
    ++(valid ? warned : invalid);
    const bool newest = cx.newest.count(w.id) > 0;
    rows.push_back({std::to_string(w.id), WindowName(w), std::to_string(w.attempt),
                    valid ? "valid (warn)" : w.verdict, EscapeCell(Join(reasons, "; ")),
                    !newest ? newest_verdict[w.Key()]
                    : valid ? "newest: counts"
                            : "newest: left out"});
  }
  std::string out = "## Invalid windows and warnings\n\n";
  if (rows.empty()) return out + "Every attempt was valid, with no gate reason.\n";
  out += invalid ? Printf("%d of %zu attempts were not valid", invalid, cx.in.windows.size())
                 : Printf("All %zu attempts were valid", cx.in.windows.size());
  if (warned) {
    out += Printf("; %d valid attempt%s carr%s gate reasons (gates in warn mode)", warned,
                  warned == 1 ? "" : "s", warned == 1 ? "ies" : "y");
  }
  out += ". A window re-run gets a new attempt and only the newest counts (`benchlab rerun`).\n\n";
  return out + Table({"id", "window", "attempt", "verdict", "reasons", "outcome"}, "llrlll", rows);
}

}  // namespace

std::string FormatReportMarkdown(const ReportInput& in) {
  const Context cx = Analyse(in);
  const CampaignRow& c = in.campaign;
  const std::string& base = cx.stats.baseline;
  int counted = 0, valid = 0, warned = 0, reruns = 0;
  for (const WindowRow& w : in.windows) {
    if (w.attempt > 1) ++reruns;
    if (!cx.newest.count(w.id)) continue;
    ++counted;
    if (w.verdict != "valid") continue;
    ++valid;
    if (!Reasons(w).empty()) ++warned;
  }
  std::string out = "# " + c.name + ": benchlab report\n\n";
  std::string date = c.created_at.substr(0, 10);
  out += "Campaign **" + c.name + "**, " + date + ", " + c.state + ". ";
  if (cx.spec) {
    out += Printf(
        "%zu targets, %zu scenario%s × %zu load level%s × %d rounds, order %s; "
        "%s warm-up and %s measured per window. ",
        cx.spec->targets.size(), cx.spec->scenarios.size(),
        cx.spec->scenarios.size() == 1 ? "" : "s", cx.spec->LoadLevels().size(),
        cx.spec->LoadLevels().size() == 1 ? "" : "s", cx.spec->rounds,
        cx.spec->order == Order::kRotate  ? "rotated"
        : cx.spec->order == Order::kFixed ? "fixed"
                                          : "shuffled",
        Duration(cx.spec->warmup).c_str(), Duration(cx.spec->duration).c_str());
  }
  out += Printf("%d windows of %d planned, %d valid", counted, c.total_windows, valid);
  out += reruns ? Printf(", %d re-run attempt%s.", reruns, reruns == 1 ? "" : "s") : ".";
  if (counted > valid) {
    out += Printf(" **%d window%s did not count** (not valid; reasons below).", counted - valid,
                  counted - valid == 1 ? "" : "s");
  }
  if (warned) {
    out += Printf(" **%d valid window%s carr%s gate reasons** (gates in warn mode; listed below).",
                  warned, warned == 1 ? "" : "s", warned == 1 ? "ies" : "y");
  }
  out += "\n\n";
  if (!base.empty()) {
    const auto& rps_floor = cx.stats.noise.begin()->second.of(Metric::kRps);
    out += "Baseline **" + base + "**; " +
           (cx.stats.pairs.size() > 1 ? std::string("noise floor per pair, below")
            : rps_floor               ? "noise floor (req/s) " + Pct(rps_floor->fraction * 100)
                                      : std::string("no noise floor")) +
           ".\n\n";
  }
  out += "*req/s (spread)*: median over the valid rounds, spread = (max − min) / median. *vs " +
         (base.empty() ? std::string("baseline") : base) +
         "*: median of the round-by-round req/s ratios (min–max). *close*: within the noise floor "
         "of the baseline, or the rounds disagree (ratios on both sides of 1), so not ranked; "
         "*ahead*/*behind*: outside both; *n/a*: fewer than 2 rounds to compare.\n\n";
  for (const CellStats& cell : cx.stats.cells) {
    out += "## " + (cell.cell.pair.empty() ? "" : "Pair " + cell.cell.pair + " · ") +
           cell.cell.scenario + " · " + LevelWords(cell.cell.load_level) + "\n\n";
    out += CellTable(cx, cell) + "\n";
  }
  if (cx.stats.cells.empty()) out += "No matrix window has been stored yet.\n\n";
  out += NoiseSection(cx) + FactsSection(cx) + HostsSection(cx) + MethodSection(cx) +
         InvalidSection(cx);
  return out;
}

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
  return {{"verdict", ComparisonVerdictName(c.verdict)},
          {"reason", c.reason},
          {"ratio", SummaryJson(c.ratio)},
          {"rounds_won", c.rounds_won},
          {"rounds_lost", c.rounds_lost},
          {"noise_floor", Opt(c.noise_floor)},
          {"rounds", rounds}};
}

ojson AttemptJson(const WindowRow& w, bool newest, const SampleSummary* s) {
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
  return {
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
}

const SampleSummary* SamplesOf(const ReportInput& in, int64_t id) {
  auto it = in.samples.find(id);
  return it == in.samples.end() ? nullptr : &it->second;
}

}  // namespace

std::string FormatReportJson(const ReportInput& in) {
  const Context cx = Analyse(in);
  const CampaignRow& c = in.campaign;
  ojson out;
  out["format"] = "benchlab-run-of-record";
  out["version"] = 1;
  out["generated_by"] = in.generated_by;
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
                     {"placement", ParseJson(c.placement, ojson::object())}};
  out["spec"] = c.spec_toml;
  out["targets"] = TargetOrder(in);

  // Host facts: one entry per role, agent and distinct facts, with the attempts that saw them.
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
  out["hosts"] = hosts;

  ojson noise = ojson::array();
  for (const std::string& pair : cx.stats.pairs) {
    const NoiseFloors& nf = cx.stats.noise.at(pair);
    ojson metrics = ojson::object();
    for (Metric m : kAllMetrics) {
      const auto& f = nf.of(m);
      metrics[MetricName(m)] =
          f ? ojson{{"fraction", f->fraction}, {"values", SummaryJson(f->values)}} : ojson();
    }
    noise.push_back(
        {{"pair", pair}, {"windows", nf.windows}, {"valid", nf.valid}, {"metrics", metrics}});
  }
  out["noise_floor"] = noise;

  ojson cells = ojson::array();
  for (const CellStats& cell : cx.stats.cells) {
    ojson targets = ojson::array();
    for (const TargetStats& t : cell.targets) {
      ojson metrics = ojson::object();
      for (Metric m : kAllMetrics) {
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
    cells.push_back({{"pair", cell.cell.pair},
                     {"scenario", cell.cell.scenario},
                     {"load_level", cell.cell.load_level},
                     {"targets", targets}});
  }
  out["cells"] = cells;

  ojson facts = ojson::array();
  for (const TargetFacts& f : cx.stats.facts) {
    facts.push_back({{"pair", f.pair},
                     {"target", f.target},
                     {"startup_ms", SummaryJson(f.startup_ms)},
                     {"first_request_ms", SummaryJson(f.first_request_ms)},
                     {"idle_rss_kb", SummaryJson(f.idle_rss_kb)},
                     {"rss_peak_kb", SummaryJson(f.rss_peak_kb)}});
  }
  out["target_facts"] = facts;

  // Windows in the order their first attempt was stored, each with every attempt.
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
    windows[it->second]["attempts"].push_back(
        AttemptJson(w, cx.newest.count(w.id) > 0, SamplesOf(in, w.id)));
  }
  out["windows"] = windows;
  return out.dump(2) + "\n";
}

// --- CSV ------------------------------------------------------------------------------------

std::string FormatReportCsv(const ReportInput& in) {
  const Context cx = Analyse(in);
  using Field = std::pair<const char*, std::string (*)(const WindowRow&)>;
  static const Field kFields[] = {
      {"id", [](const WindowRow& w) { return std::to_string(w.id); }},
      {"campaign", [](const WindowRow& w) { return w.campaign; }},
      {"pair", [](const WindowRow& w) { return w.pair; }},
      {"target", [](const WindowRow& w) { return w.target; }},
      {"scenario", [](const WindowRow& w) { return w.scenario; }},
      {"load_level", [](const WindowRow& w) { return ToMeasurement(w).load_level; }},
      {"connections", [](const WindowRow& w) { return std::to_string(w.connections); }},
      {"round", [](const WindowRow& w) { return std::to_string(w.round); }},
      {"position", [](const WindowRow& w) { return std::to_string(w.position); }},
      {"noise", [](const WindowRow& w) { return std::to_string(w.noise); }},
      {"attempt", [](const WindowRow& w) { return std::to_string(w.attempt); }},
      {"verdict", [](const WindowRow& w) { return w.verdict; }},
      {"reasons", [](const WindowRow& w) { return Join(Reasons(w), "; "); }},
      {"started_at", [](const WindowRow& w) { return w.started_at; }},
      {"ended_at", [](const WindowRow& w) { return w.ended_at; }},
      {"server_agent", [](const WindowRow& w) { return w.server_agent; }},
      {"load_agent", [](const WindowRow& w) { return w.load_agent; }},
      {"requests", [](const WindowRow& w) { return std::to_string(w.requests); }},
      {"duration_s", [](const WindowRow& w) { return Exact(w.duration_s); }},
      {"rps", [](const WindowRow& w) { return Exact(w.rps); }},
      {"throughput_rps",
       [](const WindowRow& w) { return w.throughput_rps ? Exact(*w.throughput_rps) : ""; }},
      {"p50_us", [](const WindowRow& w) { return std::to_string(w.p50_us); }},
      {"p90_us", [](const WindowRow& w) { return std::to_string(w.p90_us); }},
      {"p99_us", [](const WindowRow& w) { return std::to_string(w.p99_us); }},
      {"p999_us", [](const WindowRow& w) { return std::to_string(w.p999_us); }},
      {"max_us", [](const WindowRow& w) { return std::to_string(w.max_us); }},
      {"mean_us", [](const WindowRow& w) { return Exact(w.mean_us); }},
      {"errors", [](const WindowRow& w) { return std::to_string(w.errors); }},
      {"errors_mismatch", [](const WindowRow& w) { return std::to_string(w.errors_mismatch); }},
      {"server_cpu_s", [](const WindowRow& w) { return Exact(w.server_cpu_s); }},
      {"cpu_us_per_request", [](const WindowRow& w) { return Exact(w.cpu_us_per_request); }},
      {"requests_per_cpu_s",
       [](const WindowRow& w) {
         return Exact(MetricValue(ToMeasurement(w), Metric::kRequestsPerCpuSecond));
       }},
      {"cpu_accounting", [](const WindowRow& w) { return w.cpu_accounting; }},
      {"rss_peak_kb", [](const WindowRow& w) { return std::to_string(w.rss_peak_kb); }},
      {"startup_ms", [](const WindowRow& w) { return Exact(w.startup_ms); }},
      {"first_request_ms", [](const WindowRow& w) { return Exact(w.first_request_ms); }},
      {"idle_rss_kb", [](const WindowRow& w) { return std::to_string(w.idle_rss_kb); }},
      {"load_cpu_s", [](const WindowRow& w) { return Exact(w.load_cpu_s); }},
      {"load_depth", [](const WindowRow& w) { return std::to_string(w.load_depth); }},
      {"load_rate", [](const WindowRow& w) { return w.load_rate ? Exact(*w.load_rate) : ""; }},
      {"dropped", [](const WindowRow& w) { return w.dropped ? std::to_string(*w.dropped) : ""; }},
      {"generator_bound", [](const WindowRow& w) { return std::to_string(w.generator_bound); }},
      {"selftest_drift",
       [](const WindowRow& w) { return w.selftest_drift ? Exact(*w.selftest_drift) : ""; }},
      {"server_foreign_cpu_pct",
       [](const WindowRow& w) {
         return w.server_foreign_cpu_pct ? Exact(*w.server_foreign_cpu_pct) : "";
       }},
      {"server_steal_pct",
       [](const WindowRow& w) { return w.server_steal_pct ? Exact(*w.server_steal_pct) : ""; }},
      {"target_version", [](const WindowRow& w) { return w.target_version; }},
  };
  std::string out;
  for (const Field& f : kFields) out += std::string(out.empty() ? "" : ",") + f.first;
  out += ",newest,samples,server_cpu_pct_mean,server_cpu_pct_max,samples_rss_max_kb\r\n";
  for (const WindowRow& w : in.windows) {
    std::string line;
    for (const Field& f : kFields) line += (line.empty() ? "" : ",") + CsvField(f.second(w));
    const SampleSummary* s = SamplesOf(in, w.id);
    line += cx.newest.count(w.id) ? ",1" : ",0";
    line += "," + std::to_string(s ? s->count : 0) + "," +
            Exact(s ? s->server_cpu_pct_mean : kNaN) + "," +
            Exact(s ? s->server_cpu_pct_max : kNaN) + "," +
            (s && s->server_count ? std::to_string(s->rss_max_kb) : "");
    out += line + "\r\n";
  }
  return out;
}

}  // namespace benchlab

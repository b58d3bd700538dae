// The Markdown report: per-cell tables a person reads like a published write-up.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/gate_audit.h"
#include "analysis/report_detail.h"
#include "analysis/report_format.h"
#include "common/printable.h"

namespace benchlab {

using namespace report_detail;  // the report's own shared helpers

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

// Text from outside the report (a reason an agent sent, a host fact, a file name) as one table
// cell: made printable (common/printable.h), so it cannot end the row or reach a terminal as a
// control character, and with its pipes escaped, so it cannot end the cell.
std::string EscapeCell(const std::string& text) {
  std::string s = PrintableText(text);
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.insert(i, "\\");
  return s;
}

// The ratio with its interval, "1.05× (1.03–1.08)"; the median ratio alone when there is no
// interval (one round).
std::string VsBaseline(const Comparison& c) {
  if (c.ratio.n == 0) return kMissing;
  if (!c.interval.ok()) return Ratio(c.ratio.median);
  return Ratio(c.interval.estimate) + " (" + StrFormat("%.2f", c.interval.low) + "–" +
         StrFormat("%.2f", c.interval.high) + ")";
}

// "inconclusive (~12 rounds)" for an undecided comparison that more rounds would settle.
std::string VerdictWords(const Comparison& c) {
  std::string out = ComparisonVerdictName(c.verdict);
  if (c.rounds_needed) out += StrFormat(" (~%d rounds)", *c.rounds_needed);
  return out;
}

// A campaign with side services: what a request costs the target, its services and both
// together, and the total compared with the baseline's round by round.
std::string ServicesTable(const Context& cx, const CellStats& cell) {
  const std::string& base = cx.stats.baseline;
  std::vector<std::vector<std::string>> rows;
  for (const TargetStats& t : cell.targets) {
    if (t.windows == 0) continue;
    const bool is_base = t.target == base;
    const Comparison& c = t.compared(Metric::kTotalCpuUsPerRequest);
    rows.push_back({is_base ? t.target + " (baseline)" : t.target,
                    CpuUs(t.of(Metric::kCpuUsPerRequest).median),
                    CpuUs(t.of(Metric::kServiceCpuUsPerRequest).median),
                    CpuUs(t.of(Metric::kTotalCpuUsPerRequest).median),
                    is_base ? kNone : VsBaseline(c),
                    is_base            ? kNone
                    : c.rounds.empty() ? kMissing
                                       : StrFormat("%d/%zu", c.rounds_won, c.rounds.size()),
                    is_base ? "baseline" : VerdictWords(c)});
  }
  return "CPU per request with the side services: the target's, its services', and their total "
         "(the cost of a request, database included), each a median over the valid rounds.\n\n" +
         Table({"target", "target CPU µs/req", "services CPU µs/req", "total CPU µs/req",
                "total vs " + (base.empty() ? std::string("baseline") : base) + " (" +
                    StrFormat("%g", cx.options.rule.confidence * 100) + "% CI)",
                "rounds won", "verdict"},
               "lrrrrrl", rows);
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
    rows.push_back(
        {is_base ? t.target + " (baseline)" : t.target, rps_text,
         Micros(t.of(Metric::kP50Us).median), Micros(t.of(Metric::kP99Us).median),
         CpuUs(t.of(Metric::kCpuUsPerRequest).median),
         Thousands(t.of(Metric::kRequestsPerCpuSecond).median), is_base ? kNone : VsBaseline(c),
         is_base            ? kNone
         : c.rounds.empty() ? kMissing
                            : StrFormat("%d/%zu", c.rounds_won, c.rounds.size()),
         is_base ? "baseline" : VerdictWords(c), StrFormat("%d/%d", t.valid, t.windows)});
    if (is_base || base.empty()) continue;
    std::vector<std::string> parts;
    // The services' CPU has rounds to compare only when both the target and the baseline ran
    // with services; otherwise it is left out like any figure without rounds.
    for (Metric m : {Metric::kCpuUsPerRequest, Metric::kServiceCpuUsPerRequest, Metric::kP99Us}) {
      const Comparison& o = t.compared(m);
      if (o.rounds.empty()) continue;
      const char* label = m == Metric::kP99Us                    ? "p99"
                          : m == Metric::kServiceCpuUsPerRequest ? "services CPU µs/request"
                                                                 : "CPU µs/request";
      parts.push_back(std::string(label) + " " + VsBaseline(o) + ", won " +
                      StrFormat("%d/%zu", o.rounds_won, o.rounds.size()) + ", " + VerdictWords(o));
    }
    if (c.verdict == ComparisonVerdict::kNotApplicable) parts.push_back("req/s: " + c.reason);
    if (c.noise_rule.verdict != ComparisonVerdict::kNotApplicable) {
      parts.push_back(std::string("noise-floor rule on req/s: ") +
                      ComparisonVerdictName(c.noise_rule.verdict));
    }
    if (!parts.empty()) notes += "- " + t.target + ": " + Join(parts, "; ") + "\n";
  }
  std::string out = Table({"target", "req/s (spread)", "p50", "p99", "CPU µs/req", "req/CPU-s",
                           "vs " + (base.empty() ? std::string("baseline") : base) + " (" +
                               StrFormat("%g", cx.options.rule.confidence * 100) + "% CI)",
                           "rounds won", "verdict", "valid"},
                          "lrrrrrrrlr", rows);
  if (cx.stats.services) out += "\n" + ServicesTable(cx, cell);
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

// benchlab's generator against each external tool on the same cells (docs/load.md).
std::string ToolsSection(const Context& cx) {
  const std::vector<ToolCell> cells = CompareTools(cx);
  if (cells.empty()) return "";
  std::set<std::string> tools;
  for (const ToolCell& c : cells) tools.insert(c.tool);
  std::string out = "## benchlab against " +
                    Join(std::vector<std::string>(tools.begin(), tools.end()), " and ") +
                    "\n\nThe same targets and load levels measured by benchlab's generator and "
                    "by the external tool, pinned alike, over valid windows. *benchlab / tool*: "
                    "the median of the round-by-round req/s ratios, with their range: 1.05× "
                    "means benchlab counted 5% more requests per second. A round counts when its "
                    "two windows were measured together, no further apart than the campaign's "
                    "first pass put them; a window re-run later met another machine, so its "
                    "round is listed apart. Latency is each tool's own; *server CPU µs/req* is "
                    "the target's, under each generator. `–`: not measured (h2load prints no "
                    "percentiles).\n\n";
  for (const ToolCell& c : cells) {
    out += "### " + (c.pair.empty() ? "" : "Pair " + c.pair + " · ") + c.scenario + " · " +
           LevelWords(c.load_level) + " · benchlab against " + c.tool + "\n\n";
    std::vector<std::vector<std::string>> rows;
    std::string apart;
    for (const ToolTarget& t : c.targets) {
      for (const ToolRound& r : t.apart) {
        apart += "- " + t.target + ", round " + StrFormat("%d", r.round) + ": " + Ratio(r.ratio) +
                 ", its two windows started " + StrFormat("%.0f", r.gap_s) +
                 " s apart (a re-run): not in the ratio.\n";
      }
      std::string ratio = kMissing;
      if (t.ratio.n == 1) ratio = Ratio(t.ratio.median);
      if (t.ratio.n > 1) {
        ratio = Ratio(t.ratio.median) + " (" + StrFormat("%.2f", t.ratio.min) + "–" +
                StrFormat("%.2f", t.ratio.max) + ")";
      }
      rows.push_back({t.target, Thousands(t.benchlab_rps.median), Thousands(t.tool_rps.median),
                      ratio,
                      t.apart.empty() ? StrFormat("%d", t.ratio.n)
                                      : StrFormat("%d (+%zu apart)", t.ratio.n, t.apart.size()),
                      Micros(t.benchlab_p99_us.median), Micros(t.tool_p99_us.median),
                      CpuUs(t.benchlab_cpu_us.median), CpuUs(t.tool_cpu_us.median)});
    }
    out +=
        Table({"target", "benchlab req/s", c.tool + " req/s", "benchlab / " + c.tool, "rounds",
               "p99 benchlab", "p99 " + c.tool, "server CPU µs/req (benchlab)", "(" + c.tool + ")"},
              "lrrrrrrrr", rows) +
        "\n";
    if (!apart.empty()) out += apart + "\n";
  }
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
    out += StrFormat("%d noise windows of %s, spread through the run; %d valid.", nf.windows,
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
    if (cx.stats.services) {
      row("services CPU µs/request", Metric::kServiceCpuUsPerRequest, CpuUs);
      row("total CPU µs/request", Metric::kTotalCpuUsPerRequest, CpuUs);
    }
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
  // The host check's findings (docs/host.md) become rows of their own: "check: governor".
  for (auto& h : hosts) {
    if (!h.second.contains("findings") || !h.second["findings"].is_array()) continue;
    const ojson findings = h.second["findings"];  // a copy: the rows below are added to h
    h.second.erase("findings");
    for (const ojson& f : findings) {
      if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) continue;
      h.second["check: " + f["name"].get<std::string>()] =
          f.value("value", "") + (f.value("status", "") == "warn" ? " (warn)" : "");
    }
  }
  std::vector<std::string> keys;
  for (const auto& h : hosts) {
    for (const auto& [k, v] : h.second.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  std::vector<std::string> header = {"fact"};
  std::string align = "l";
  for (const auto& h : hosts) header.push_back(EscapeCell(h.first)), align += 'l';
  std::vector<std::vector<std::string>> rows;
  for (const std::string& k : keys) {
    std::vector<std::string> r = {EscapeCell(k)};
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
  std::string out =
      "## Hosts\n\nAs each agent reported its machine (`windows.server_host`, "
      "`windows.load_host`).\n\n" +
      Table(header, align, rows) + "\n";
  if (!cx.in.calibrations.empty()) {
    std::vector<std::vector<std::string>> cal;
    for (const SelftestCalibrationRow& c : cx.in.calibrations) {
      cal.push_back({EscapeCell(c.agent), StrFormat("%d", c.runs),
                     StrFormat("%.2f ms", c.median_ms),
                     c.spread ? StrFormat("%.1f%%", *c.spread * 100) : std::string(kMissing),
                     StrFormat("%.1f%%", c.threshold_pct), c.threshold_source});
    }
    out +=
        "Self-test calibration at the campaign's start: the `selftest_drift` threshold each "
        "host was judged against, the larger of the configured one and a multiple of the "
        "host's own spread (docs/gates.md).\n\n" +
        Table({"agent", "runs", "median", "spread", "threshold", "from"}, "lrrrrl", cal) + "\n";
  }
  return out;
}

std::string MethodSection(const Context& cx) {
  const CampaignRow& c = cx.in.campaign;
  std::string out = "## Method\n\n";
  // The source is the file name the submitter gave and the error may quote an agent: both are
  // made printable, as everything from outside benchlab is (docs/security.md).
  out += "- Campaign `" + PrintableText(c.name) + "` from `" + PrintableText(c.source) +
         "`, submitted " + c.created_at +
         (c.finished_at.empty() ? "" : ", finished " + c.finished_at) + "; state " + c.state +
         (c.error.empty() ? "" : " (" + PrintableText(c.error) + ")") + ".\n";
  if (!cx.spec) {
    out += "- The stored campaign file no longer parses: " + PrintableText(cx.spec_error) + "\n";
  } else {
    const Campaign& s = *cx.spec;
    const char* order = s.order == Order::kRotate  ? "rotate (the targets' order turns every round)"
                        : s.order == Order::kFixed ? "fixed (the file's order every round)"
                                                   : "shuffle (a seeded random order per round)";
    const char* fresh = s.fresh_process == FreshProcess::kWindow ? "every window"
                        : s.fresh_process == FreshProcess::kCell ? "every cell"
                                                                 : "every round";
    const std::string rounds =
        s.adaptive ? StrFormat("%d to %d rounds until decided (adaptive)", s.min_rounds, s.rounds)
                   : StrFormat("%d rounds", s.rounds);
    out += StrFormat(
        "- %s, order %s; each window warms up for %s and measures %s; a fresh "
        "target process for %s.\n",
        rounds.c_str(), order, Duration(s.warmup).c_str(), Duration(s.duration).c_str(), fresh);
    out += StrFormat(
        "- Verdicts: %g%% intervals on the round ratios' logarithms (Student t), margin "
        "±%g%%%s.\n",
        s.stats.confidence * 100, s.stats.margin * 100,
        s.adaptive ? (", deciding on " + Join(s.stats.decide_on, ", ") +
                      (s.stats.max_duration ? ", budget " + Duration(*s.stats.max_duration)
                                            : std::string()))
                         .c_str()
                   : "");
    std::vector<std::string> levels;
    for (const LoadLevel& l : s.LoadLevels()) levels.push_back(LevelWords(LoadLevelLabel(l)));
    std::string cpus;
    for (int cpu : s.load_cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
    out += StrFormat(
        "- Load: %d thread%s%s, %d request%s in flight per connection%s; levels: %s.\n",
        s.load_threads, s.load_threads == 1 ? "" : "s",
        cpus.empty() ? "" : (" on CPU " + cpus).c_str(), s.load_depth, s.load_depth == 1 ? "" : "s",
        s.load_poisson ? ", Poisson arrivals" : "", Join(levels, ", ").c_str());
    std::vector<std::string> targets, scenarios;
    for (const TargetDef& t : s.targets) {
      std::string pin;
      for (int cpu : t.cpus) pin += (pin.empty() ? "" : ",") + std::to_string(cpu);
      targets.push_back(t.name + (pin.empty() ? "" : " (CPU " + pin + ")"));
    }
    for (const ScenarioDef& sc : s.scenarios) {
      scenarios.push_back(sc.name + ": `" + PrintableText(sc.method + " " + sc.path) +
                          "` expecting " + std::to_string(sc.expect.status) +
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
  if (cx.stats.services) {
    out +=
        "- Side services (docs/services.md) run in cgroups of their own: their CPU is measured "
        "apart from the target's. *services CPU µs/req* is theirs together per request, *total* "
        "the target's and theirs; a target without services has neither (`–`), so its total is "
        "not compared.\n";
  }
  out +=
      "- Figures are medians over each target's valid rounds (the newest attempt of each "
      "window); spread = (max − min) / median; ratios are target / baseline within each round, "
      "then summarised (docs/methodology.md).\n";
  out += "- Written by " + cx.in.generated_by + ".\n\n";
  return out;
}

// Each gate's refusals against the valid windows (analysis/gate_audit.h), and the windows
// measured again because a gate refused them.
std::string GateAuditSection(const Context& cx) {
  const std::vector<GateAudit> audit = AuditGates(AuditWindowsOf(cx.in, ""));
  const Remeasured again = CountRemeasured(cx.in.windows);
  if (audit.empty() && again.windows == 0) return "";
  std::string out =
      "## Gate audit\n\nEvery refused window is still measured: here each gate's refusals are "
      "compared with the valid windows. *Off*: how far a window's figure lay from the median of "
      "its cell's valid windows (a valid window: of the others), median over the windows; "
      "*shift*: refused minus valid in points of %, with its 95% interval (Hodges-Lehmann). "
      "*earned*: the refused windows lay clearly further off; *noise*: no further off than "
      "valid windows, and twice as far is ruled out (docs/gates.md, \"Every gate audits "
      "itself\").\n\n";
  std::vector<std::vector<std::string>> rows;
  auto shift = [](const ShiftInterval& s) {
    return s.bounded ? StrFormat("%+.1f [%+.1f, %+.1f]", s.estimate, s.low, s.high)
                     : std::string(kMissing);
  };
  for (const GateAudit& a : audit) {
    rows.push_back({a.gate, a.host.empty() ? "window" : EscapeCell(a.host),
                    StrFormat("%d of %d", a.refused, a.windows),
                    Pct(a.rps.refused_pct.median) + " vs " + Pct(a.rps.clean_pct.median),
                    shift(a.rps.shift),
                    Pct(a.cpu.refused_pct.median) + " vs " + Pct(a.cpu.clean_pct.median),
                    shift(a.cpu.shift), GateAuditVerdictName(a.verdict)});
  }
  if (!rows.empty()) {
    out += Table({"gate", "host", "refused", "req/s off", "shift", "CPU/request off", "shift",
                  "verdict"},
                 "llrrrrrl", rows) +
           "\n";
    for (const GateAudit& a : audit) out += "- " + EscapeCell(a.words) + "\n";
    out += "\n";
  }
  if (again.windows > 0) {
    std::string why;
    for (const auto& [gate, n] : again.by_gate) {
      why += (why.empty() ? "" : ", ") + gate + StrFormat(" %d", n);
    }
    out += StrFormat("%d window%s measured again after a gate refused them (", again.windows,
                     again.windows == 1 ? " was" : "s were") +
           why + ").\n\n";
  }
  return out;
}

// Every attempt that did not count, and every valid one that carries reasons (gates in warn mode).
std::string InvalidSection(const Context& cx) {
  std::map<WindowKey, std::string> newest_verdict;
  for (const WindowRow& w : cx.in.windows) {
    if (cx.newest.count(w.id)) {
      newest_verdict[w.Key()] =
          StrFormat("replaced by attempt %d (%s)", w.attempt, w.verdict.c_str());
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
  out += invalid ? StrFormat("%d of %zu attempts were not valid", invalid, cx.in.windows.size())
                 : StrFormat("All %zu attempts were valid", cx.in.windows.size());
  if (warned) {
    out += StrFormat("; %d valid attempt%s carr%s gate reasons (gates in warn mode)", warned,
                     warned == 1 ? "" : "s", warned == 1 ? "ies" : "y");
  }
  out += ". A window re-run gets a new attempt and only the newest counts (`benchlab rerun`).\n\n";
  return out + Table({"id", "window", "attempt", "verdict", "reasons", "outcome"}, "llrlll", rows);
}

// A profiled campaign's CPU profiles: per cell, each target against the baseline, the functions
// whose CPU µs per request differ most (docs/profiles.md).
std::string ProfileSection(const ReportInput& in) {
  if (!in.profiled) return "";
  std::string out = "## CPU profiles\n\n";
  out +=
      "Per cell, each target against " + PrintableText(in.campaign.baseline) +
      ": the functions whose own (self) CPU µs per request differ most, with a 95% interval over "
      "the paired rounds and their share of the whole difference; `benchlab profile` shows "
      "more (docs/profiles.md).\n\n";
  if (in.profile_diffs.empty()) {
    out += "No target has a profiled valid round paired with the baseline's.\n\n";
  } else {
    // One level below the section's heading.
    std::string tables = FormatProfileDiffMarkdown(in.profile_diffs, 10);
    for (size_t at = 0; (at = tables.find("### ", at)) != std::string::npos; at += 5) {
      if (at == 0 || tables[at - 1] == '\n') tables.insert(at, "#");
    }
    out += tables;
  }
  if (!in.unprofiled.empty()) {
    out +=
        StrFormat("%zu valid window%s ha%s no profile; window %lld: %s\n\n", in.unprofiled.size(),
                  in.unprofiled.size() == 1 ? "" : "s", in.unprofiled.size() == 1 ? "s" : "ve",
                  static_cast<long long>(in.unprofiled.front().row.id),
                  EscapeCell(PrintableText(in.unprofiled.front().error)).c_str());
  }
  return out;
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
  std::string out = "# " + PrintableText(c.name) + ": benchlab report\n\n";
  std::string date = c.created_at.substr(0, 10);
  out += "Campaign **" + PrintableText(c.name) + "**, " + date + ", " + c.state + ". ";
  if (cx.spec) {
    out += StrFormat(
        "%zu target%s, %zu scenario%s × %zu load level%s × %d round%s, order %s; "
        "%s warm-up and %s measured per window. ",
        cx.spec->targets.size(), cx.spec->targets.size() == 1 ? "" : "s", cx.spec->scenarios.size(),
        cx.spec->scenarios.size() == 1 ? "" : "s", cx.spec->LoadLevels().size(),
        cx.spec->LoadLevels().size() == 1 ? "" : "s", cx.spec->rounds,
        cx.spec->rounds == 1 ? "" : "s",
        cx.spec->order == Order::kRotate  ? "rotated"
        : cx.spec->order == Order::kFixed ? "fixed"
                                          : "shuffled",
        Duration(cx.spec->warmup).c_str(), Duration(cx.spec->duration).c_str());
  }
  out += StrFormat("%d windows of %d planned, %d valid", counted, c.total_windows, valid);
  out += reruns ? StrFormat(", %d re-run attempt%s.", reruns, reruns == 1 ? "" : "s") : ".";
  if (counted > valid) {
    out += StrFormat(" **%d window%s did not count** (not valid; reasons below).", counted - valid,
                     counted - valid == 1 ? "" : "s");
  }
  if (warned) {
    out +=
        StrFormat(" **%d valid window%s carr%s gate reasons** (gates in warn mode; listed below).",
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
  const StatsOptions& o = cx.options;
  out += "*req/s (spread)*: median over the valid rounds, spread = (max − min) / median. *vs " +
         (base.empty() ? std::string("baseline") : base) +
         "*: the geometric mean of the round-by-round req/s ratios with its " +
         StrFormat("%g", o.rule.confidence * 100) + "% confidence interval" +
         (o.plan.adaptive
              ? StrFormat(" (over the whole adaptive plan: each of its %d looks at %.2f%%)",
                          o.plan.Looks(), o.plan.LevelAt(o.plan.max_rounds) * 100)
              : std::string()) +
         ". Margin ±" + StrFormat("%g", o.rule.margin * 100) +
         "%: *ahead*/*behind*: the whole interval lies beyond the margin; *close*: the whole "
         "interval lies inside it; *inconclusive*: neither, with about how many rounds would "
         "decide it; *n/a*: fewer than 2 rounds to compare (docs/methodology.md).\n\n";
  for (const CellStats& cell : cx.stats.cells) {
    out += "## " + (cell.cell.pair.empty() ? "" : "Pair " + cell.cell.pair + " · ") +
           cell.cell.scenario + " · " + LevelWords(cell.cell.load_level) + "\n\n";
    auto rounds = cx.cell_rounds.find(cell.cell);
    if (o.plan.adaptive && rounds != cx.cell_rounds.end()) {
      out += StrFormat("%d round%s of %d–%d: %s.\n\n", rounds->second.rounds,
                       rounds->second.rounds == 1 ? "" : "s", o.plan.min_rounds, o.plan.max_rounds,
                       CellStopName(rounds->second.stop));
    }
    out += CellTable(cx, cell) + "\n";
  }
  if (cx.stats.cells.empty()) out += "No matrix window has been stored yet.\n\n";
  out += ProfileSection(in);
  out += ToolsSection(cx) + NoiseSection(cx) + FactsSection(cx) + HostsSection(cx) +
         MethodSection(cx) + GateAuditSection(cx) + InvalidSection(cx);
  return out;
}

}  // namespace benchlab

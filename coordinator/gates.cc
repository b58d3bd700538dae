#include "coordinator/gates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "common/config_fields.h"
#include "coordinator/gates_toml.h"

namespace benchlab {
namespace {

std::string ErrorRateText(uint64_t errors, uint64_t attempts, double max) {
  double rate = attempts == 0 ? 0 : static_cast<double>(errors) / static_cast<double>(attempts);
  // Two decimals, more where the rate would otherwise print the same as the threshold.
  int decimals = 2;
  char value[64], threshold[64];
  do {
    std::snprintf(value, sizeof(value), "%.*f", decimals, rate * 100);
    std::snprintf(threshold, sizeof(threshold), "%.*f", decimals, max * 100);
  } while (std::string_view(value) == threshold && ++decimals <= 6);
  char buf[200];
  std::snprintf(buf, sizeof(buf), "error_rate: %s%% > %s%% (%llu errors of %llu attempts)", value,
                threshold, static_cast<unsigned long long>(errors),
                static_cast<unsigned long long>(attempts));
  return buf;
}

// `v` with `decimals` decimals, trailing zeros and a trailing '.' dropped: 212, 7.1, 0.62.
std::string Number(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

// A failing value and its threshold as text, with enough decimals to tell them apart.
std::pair<std::string, std::string> Compared(double value, double threshold, int decimals) {
  std::string v = Number(value, decimals), t = Number(threshold, decimals);
  while (v == t && decimals < 6) {
    ++decimals;
    v = Number(value, decimals);
    t = Number(threshold, decimals);
  }
  return {v, t};
}

// A percentage with one decimal, or up to three where one would print a positive value as 0.
std::string SmallPct(double pct) {
  std::string s = Number(pct, 1);
  for (int decimals = 2; s == "0" && pct > 0 && decimals <= 3; ++decimals) {
    s = Number(pct, decimals);
  }
  return s;
}

const char* HostName(bool server) { return server ? "server" : "load"; }

class Judge {
 public:
  Judge(const WindowMeasures& m, const GateConfig& c) : m_(m), c_(c) {}

  std::vector<GateReason> Run() {
    if (c_.conformance.enabled) {
      for (const auto& diff : m_.conformance_diffs) Add("conformance", diff, 1, 0);
    }
    if (c_.target_exited.enabled && m_.target_exited) TargetExited();
    if (c_.background_scheduling.enabled) {
      for (const auto& failure : m_.scheduling_failures) {
        std::string_view prefix = "background_scheduling: ";
        std::string text =
            std::string_view(failure).starts_with(prefix) ? failure.substr(prefix.size()) : failure;
        Add("background_scheduling", text, 1, 0);
      }
    }
    for (bool server : {true, false}) OnBattery(server);
    for (bool server : {true, false}) SelftestDrift(server);
    for (bool server : {true, false}) {
      if (c_.foreign_cpu.enabled) {
        AbovePct("foreign_cpu", server, Host(server).foreign_mean_pct, c_.foreign_cpu.max_pct);
      }
    }
    for (bool server : {true, false}) {
      if (c_.steal.enabled) AbovePct("steal", server, Host(server).steal_pct, c_.steal.max_pct);
    }
    for (bool server : {true, false}) Throttling(server);
    for (bool server : {true, false}) Frequency(server);
    for (bool server : {true, false}) Swap(server);
    GeneratorBound();
    ErrorRateGate();
    if (c_.service_exited.enabled) {
      for (const auto& exit : m_.service_exits) Add("service_exited", exit, 1, 0);
    }
    Probes();
    return std::move(reasons_);
  }

 private:
  const HostMeasures& Host(bool server) const { return server ? m_.server : m_.load; }

  void Add(const char* gate, const std::string& detail, double value, double threshold,
           const char* host = "") {
    reasons_.push_back({gate, std::string(gate) + ": " + detail, value, threshold, host});
  }

  // "<gate>: <host> host <value>% > <max>%" when value > max.
  void AbovePct(const char* gate, bool server, const std::optional<double>& value, double max) {
    if (!value || !(*value > max)) return;
    auto [v, t] = Compared(*value, max, 1);
    Add(gate, std::string(HostName(server)) + " host " + v + "% > " + t + "%", *value, max,
        HostName(server));
  }

  // Each bounded probe, on a window whose target ran with side services.
  void Probes() {
    if (!m_.has_services) return;
    for (const auto& [name, max] : c_.probe_max) {
      const std::string gate = "probe." + name;
      bool seen = false;
      for (const auto& p : m_.probes) {
        if (p.name != name) continue;
        seen = true;
        if (!p.delta) {
          reasons_.push_back(
              {gate, gate + ": service " + p.service + " unavailable (" + p.unavailable + ")", 0,
               max, ""});
        } else if (*p.delta > max) {
          auto [v, t] = Compared(*p.delta, max, 2);
          reasons_.push_back({gate, gate + ": service " + p.service + " rose by " + v + " > " + t,
                              *p.delta, max, ""});
        }
      }
      if (!seen) {
        reasons_.push_back({gate, gate + ": no service of the target reports it", 0, max, ""});
      }
    }
  }

  void TargetExited() {
    std::string text = m_.target_exit_text + " during the window";
    std::string lines;
    for (const auto& line : m_.target_last_log_lines) lines += (lines.empty() ? "" : " | ") + line;
    if (!lines.empty()) text += "; last log lines: " + lines;
    Add("target_exited", text, 1, 0);
  }

  void OnBattery(bool server) {
    if (!c_.on_battery.enabled || !Host(server).on_battery.value_or(false)) return;
    Add("on_battery", std::string(HostName(server)) + " host is on battery power", 1, 0,
        HostName(server));
  }

  void SelftestDrift(bool server) {
    const HostMeasures& h = Host(server);
    const auto& drift = h.selftest_drift;
    if (!c_.selftest_drift.enabled || !drift) return;
    const DriftThreshold threshold = SelftestDriftThreshold(c_.selftest_drift, h.selftest_spread);
    double pct = *drift * 100, max = threshold.max_pct;
    // Only slower fails: a self-test cannot run faster than its CPU allows, so one faster than
    // the calibration says the calibration was slowed (processes starting, a neighbour), not
    // this window (docs/gates.md, "selftest_drift").
    // Compared as fractions: 0.07 * 100 is 7.000000000000001, which would fail a drift of
    // exactly 7% against a 7% threshold; 7 / 100.0 is the double nearest 0.07, as the drift is.
    if (!(*drift > max / 100)) return;
    auto [v, t] = Compared(std::abs(pct), max, 1);
    std::string host = std::string(HostName(server)) + " host ";
    std::string source;
    if (threshold.calibrated) {
      source = " (calibrated: " + Number(c_.selftest_drift.spread_multiple, 2) + " x spread " +
               SmallPct(*h.selftest_spread * 100) + "%" +
               (threshold.capped ? ", capped at " + Number(max, 1) + "%" : std::string()) + ")";
    }
    if (h.selftest_descheduled) {
      source += "; off its CPU in every pass: a process competes for the pinned CPU";
    }
    Add("selftest_drift", host + "+" + v + "% > " + t + "%" + source, pct, max, HostName(server));
  }

  void Throttling(bool server) {
    const auto& events = Host(server).throttle_events;
    if (!c_.throttling.enabled || !events || *events == 0) return;
    Add("throttling",
        std::string(HostName(server)) + " host " + std::to_string(*events) + " throttle events > 0",
        static_cast<double>(*events), 0, HostName(server));
  }

  void Frequency(bool server) {
    const auto& ratio = Host(server).min_freq_ratio;
    double min = c_.frequency.min_ratio;
    if (!c_.frequency.enabled || !ratio || !(*ratio < min)) return;
    auto [v, t] = Compared(*ratio, min, 2);
    Add("frequency", std::string(HostName(server)) + " host cur/max " + v + " < " + t, *ratio, min,
        HostName(server));
  }

  void Swap(bool server) {
    const HostMeasures& h = Host(server);
    if (!c_.swap.enabled || (!h.swap_in_pages && !h.swap_out_pages)) return;
    // A count the machine does not offer is left out of the sum, not read as 0 swapped.
    uint64_t pages = h.swap_in_pages.value_or(0) + h.swap_out_pages.value_or(0);
    if (pages <= c_.swap.max_pages) return;
    std::string parts;
    if (h.swap_in_pages) parts = std::to_string(*h.swap_in_pages) + " in";
    if (h.swap_out_pages) {
      parts += (parts.empty() ? "" : ", ") + std::to_string(*h.swap_out_pages) + " out";
    }
    Add("swap",
        std::string(HostName(server)) + " host " + std::to_string(pages) + " pages > " +
            std::to_string(c_.swap.max_pages) + " (" + parts + ")",
        static_cast<double>(pages), static_cast<double>(c_.swap.max_pages), HostName(server));
  }

  void GeneratorBound() {
    if (!c_.generator_bound.enabled) return;
    if (m_.generator_bound) {
      Add("generator_bound", "the load generator set the pace, not the target", 1, 0);
    }
    const auto& busy = m_.load.busy_pct;
    double max = c_.generator_bound.load_busy_max_pct;
    if (busy && *busy > max) {
      auto [v, t] = Compared(*busy, max, 1);
      Add("generator_bound", "load host " + v + "% busy > " + t + "%", *busy, max, "load");
    }
  }

  void ErrorRateGate() {
    if (!c_.error_rate.enabled) return;
    uint64_t errors = m_.transport_errors + m_.mismatches;
    uint64_t attempts = m_.requests + m_.transport_errors;
    if (attempts == 0) return;
    double rate = static_cast<double>(errors) / static_cast<double>(attempts);
    if (!(rate > c_.error_rate.max)) return;
    std::string text = ErrorRateText(errors, attempts, c_.error_rate.max);
    reasons_.push_back({"error_rate", text, rate * 100, c_.error_rate.max * 100, ""});
  }

  const WindowMeasures& m_;
  const GateConfig& c_;
  std::vector<GateReason> reasons_;
};

// --- [gates] in a campaign file. ---

using config::Table;
using config::Value;

std::optional<bool> ReadBool(Table& t, std::string_view sub, const Value& v) {
  if (v.is_boolean()) return v.as_boolean();
  t.Expect(v, sub, "true or false");
  return std::nullopt;
}

// An integer or a float in [lo, hi]; NaN and infinities fail the range check.
std::optional<double> ReadNumber(Table& t, std::string_view sub, const Value& v, double lo,
                                 double hi, std::string_view form) {
  double x = std::nan("");
  if (v.is_floating()) x = v.as_floating();
  if (v.is_integer()) x = static_cast<double>(v.as_integer());
  if (x >= lo && x <= hi) return x;
  t.Expect(v, sub, form);
  return std::nullopt;
}

void ReadSwitch(Table& t, std::string_view key, bool& enabled) {
  if (const Value* x = t.Get(key)) {
    if (auto b = ReadBool(t, key, *x)) enabled = *b;
  }
}

void ReadLimit(Table& t, std::string_view key, double lo, double hi, std::string_view form,
               double& out) {
  if (const Value* x = t.Get(key)) {
    if (auto n = ReadNumber(t, key, *x, lo, hi, form)) out = *n;
  }
}

}  // namespace

DriftThreshold SelftestDriftThreshold(const SelftestDriftGate& gate, std::optional<double> spread) {
  DriftThreshold t{gate.max_pct, false, false};
  if (!spread) return t;
  const double from_spread = gate.spread_multiple * *spread * 100;
  const double calibrated = std::min(from_spread, kSelftestDriftCalibratedMaxPct);
  if (calibrated > gate.max_pct) t = {calibrated, true, from_spread > calibrated};
  return t;
}

int RemeasureBudget(const GateConfig& config, int planned_windows) {
  if (config.remeasure_max) return *config.remeasure_max;
  return std::max(2, (planned_windows + 3) / 4);
}

std::vector<GateReason> JudgeWindow(const WindowMeasures& m, const GateConfig& config) {
  return Judge(m, config).Run();
}

void ReadGatesTable(const config::Value& table, config::Issues& issues, GateConfig& out) {
  if (!table.is_table()) {
    issues.Add(table, "gates: expected a table ([gates]), got " + config::Describe(table));
    return;
  }
  Table g(table, "gates",
          {"mode",
           "conformance",
           "target_exited",
           "background_scheduling",
           "allow_battery",
           "selftest_drift",
           "selftest_drift_max_pct",
           "selftest_drift_spread_multiple",
           "foreign_cpu",
           "foreign_cpu_max_pct",
           "steal",
           "steal_max_pct",
           "throttling",
           "frequency",
           "min_freq_ratio",
           "swap",
           "swap_max_pages",
           "generator_bound",
           "load_busy_max_pct",
           "error_rate",
           "error_rate_max",
           "service_exited",
           "probe",
           "remeasure_max"},
          issues);
  if (const Value* x = g.Get("mode")) {
    if (x->is_string() && x->as_string().str == "enforce") {
      out.mode = GateMode::kEnforce;
    } else if (x->is_string() && x->as_string().str == "warn") {
      out.mode = GateMode::kWarn;
    } else {
      g.Expect(*x, "mode", "\"enforce\" or \"warn\"");
    }
  }
  ReadSwitch(g, "conformance", out.conformance.enabled);
  ReadSwitch(g, "target_exited", out.target_exited.enabled);
  ReadSwitch(g, "background_scheduling", out.background_scheduling.enabled);
  if (const Value* x = g.Get("allow_battery")) {
    if (auto b = ReadBool(g, "allow_battery", *x)) out.on_battery.enabled = !*b;
  }
  ReadSwitch(g, "selftest_drift", out.selftest_drift.enabled);
  ReadLimit(g, "selftest_drift_max_pct", 0, 1000, "a number from 0 to 1000",
            out.selftest_drift.max_pct);
  ReadLimit(g, "selftest_drift_spread_multiple", 0, 100, "a number from 0 to 100 such as 4",
            out.selftest_drift.spread_multiple);
  ReadSwitch(g, "foreign_cpu", out.foreign_cpu.enabled);
  ReadLimit(g, "foreign_cpu_max_pct", 0, 10000, "a number from 0 to 10000",
            out.foreign_cpu.max_pct);
  ReadSwitch(g, "steal", out.steal.enabled);
  ReadLimit(g, "steal_max_pct", 0, 100, "a number from 0 to 100", out.steal.max_pct);
  ReadSwitch(g, "throttling", out.throttling.enabled);
  ReadSwitch(g, "frequency", out.frequency.enabled);
  ReadLimit(g, "min_freq_ratio", 0, 1, "a number from 0 to 1 such as 0.75",
            out.frequency.min_ratio);
  ReadSwitch(g, "swap", out.swap.enabled);
  if (const Value* x = g.Get("swap_max_pages")) {
    if (auto n = config::ReadInt(g, "swap_max_pages", *x, 0, 1000000000,
                                 "a whole number of pages from 0 to 1000000000")) {
      out.swap.max_pages = static_cast<uint64_t>(*n);
    }
  }
  ReadSwitch(g, "generator_bound", out.generator_bound.enabled);
  ReadLimit(g, "load_busy_max_pct", 0, 100, "a number from 0 to 100",
            out.generator_bound.load_busy_max_pct);
  ReadSwitch(g, "error_rate", out.error_rate.enabled);
  ReadLimit(g, "error_rate_max", 0, 1, "a fraction from 0 to 1 such as 0.01", out.error_rate.max);
  ReadSwitch(g, "service_exited", out.service_exited.enabled);
  if (const Value* x = g.Get("remeasure_max")) {
    if (auto n = config::ReadInt(g, "remeasure_max", *x, 0, 100000,
                                 "a whole number of windows from 0 to 100000")) {
      out.remeasure_max = static_cast<int>(*n);
    }
  }
  if (const Value* x = g.Get("probe")) {
    const char* form = "probe.NAME.max = N: a table of probe names, each { max = N }";
    if (!x->is_table()) {
      g.Expect(*x, "probe", form);
    } else {
      for (const auto& [name, bound] : config::EntriesInFileOrder(*x)) {
        const std::string sub = "probe." + config::KeyForPath(name);
        if (!config::IsName(name)) {
          g.Fail(*bound, sub, "expected a probe name of lowercase letters, digits and '-'");
          continue;
        }
        if (!bound->is_table()) {
          g.Expect(*bound, sub, "a table such as { max = 0 }");
          continue;
        }
        Table b(*bound, "gates." + sub, {"max"}, issues);
        const Value* max = b.Require("max", "a number such as 0");
        if (max == nullptr) continue;
        if ((max->is_integer() || max->is_floating()) &&
            (max->is_integer() ? static_cast<double>(max->as_integer()) : max->as_floating()) >=
                0) {
          out.probe_max[name] =
              max->is_integer() ? static_cast<double>(max->as_integer()) : max->as_floating();
        } else {
          b.Expect(*max, "max", "a number of 0 or more");
        }
      }
    }
  }
}

}  // namespace benchlab

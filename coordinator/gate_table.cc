#include "coordinator/gate_table.h"

#include <cmath>
#include <cstdio>
#include <type_traits>
#include <utility>

namespace benchlab {
namespace {

// --- How numbers are written (docs/gates.md, "How numbers are written"). ---

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

// "<value>% > <max>%" when value > max.
void AbovePct(const std::optional<double>& value, double max, GateReasons& out) {
  if (!value || !(*value > max)) return;
  auto [v, t] = Compared(*value, max, 1);
  out.Add(v + "% > " + t + "%", *value, max);
}

// --- Each gate's judging, with the text of its reasons. ---

// conformance: <diff>, one per difference the load agent found.
void Conformance(const WindowMeasures& m, const GateConfig&, GateReasons& out) {
  for (const auto& diff : m.conformance_diffs) out.Add(diff, 1, 0);
}

// target_exited: <exit text> during the window[; last log lines: <l1> | <l2>]
void TargetExited(const WindowMeasures& m, const GateConfig&, GateReasons& out) {
  if (!m.target_exited) return;
  std::string text = m.target_exit_text + " during the window";
  std::string lines;
  for (const auto& line : m.target_last_log_lines) lines += (lines.empty() ? "" : " | ") + line;
  if (!lines.empty()) text += "; last log lines: " + lines;
  out.Add(text, 1, 0);
}

// background_scheduling: <what the agent reported>, one per failure; the prefix is added when
// the agent's text lacks it.
void BackgroundScheduling(const WindowMeasures& m, const GateConfig&, GateReasons& out) {
  for (const auto& failure : m.scheduling_failures) {
    std::string_view prefix = "background_scheduling: ";
    out.Add(std::string_view(failure).starts_with(prefix) ? failure.substr(prefix.size()) : failure,
            1, 0);
  }
}

// on_battery: <host> host is on battery power
void OnBattery(const HostMeasures& h, const GateConfig&, GateReasons& out) {
  if (h.on_battery.value_or(false)) out.Add("is on battery power", 1, 0);
}

// selftest_drift: <host> host +14.2% > 10%                 (slower than calibration; a faster
//                                                           self-test never fails)
// selftest_drift: <host> host +34% > 24.8% (calibrated: 4 x spread 6.2%)
// selftest_drift: <host> host +100% > 50% (calibrated: 4 x spread 15%, capped at 50%)
//                                     (when the host's spread set the threshold, as
//                                      SelftestDriftThreshold says)
// selftest_drift: <host> host +98% > 10%; off its CPU in every pass: a process competes for
//                 the pinned CPU                           (when the self-test said so)
void SelftestDrift(const HostMeasures& h, const GateConfig& c, GateReasons& out) {
  const auto& drift = h.selftest_drift;
  if (!drift) return;
  const DriftThreshold threshold = SelftestDriftThreshold(c.selftest_drift, h.selftest_spread);
  double pct = *drift * 100, max = threshold.max_pct;
  // Only slower fails: a self-test cannot run faster than its CPU allows, so one faster than
  // the calibration says the calibration was slowed (processes starting, a neighbour), not
  // this window (docs/gates.md, "selftest_drift").
  // Compared as fractions: 0.07 * 100 is 7.000000000000001, which would fail a drift of
  // exactly 7% against a 7% threshold; 7 / 100.0 is the double nearest 0.07, as the drift is.
  if (!(*drift > max / 100)) return;
  auto [v, t] = Compared(std::abs(pct), max, 1);
  std::string source;
  if (threshold.calibrated) {
    source = " (calibrated: " + Number(c.selftest_drift.spread_multiple, 2) + " x spread " +
             SmallPct(*h.selftest_spread * 100) + "%" +
             (threshold.capped ? ", capped at " + Number(max, 1) + "%" : std::string()) + ")";
  }
  if (h.selftest_descheduled) {
    source += "; off its CPU in every pass: a process competes for the pinned CPU";
  }
  out.Add("+" + v + "% > " + t + "%" + source, pct, max);
}

// foreign_cpu: <host> host 212% > 25%
void ForeignCpu(const HostMeasures& h, const GateConfig& c, GateReasons& out) {
  AbovePct(h.foreign_mean_pct, c.foreign_cpu.max_pct, out);
}

// steal: <host> host 7.1% > 5%
void Steal(const HostMeasures& h, const GateConfig& c, GateReasons& out) {
  AbovePct(h.steal_pct, c.steal.max_pct, out);
}

// throttling: <host> host 3 throttle events > 0
void Throttling(const HostMeasures& h, const GateConfig&, GateReasons& out) {
  if (!h.throttle_events || *h.throttle_events == 0) return;
  out.Add(std::to_string(*h.throttle_events) + " throttle events > 0",
          static_cast<double>(*h.throttle_events), 0);
}

// frequency: <host> host cur/max 0.62 < 0.75
void Frequency(const HostMeasures& h, const GateConfig& c, GateReasons& out) {
  const auto& ratio = h.min_freq_ratio;
  double min = c.frequency.min_ratio;
  if (!ratio || !(*ratio < min)) return;
  auto [v, t] = Compared(*ratio, min, 2);
  out.Add("cur/max " + v + " < " + t, *ratio, min);
}

// swap: <host> host 120 pages > 0 (100 in, 20 out)          (only the counts available)
void Swap(const HostMeasures& h, const GateConfig& c, GateReasons& out) {
  if (!h.swap_in_pages && !h.swap_out_pages) return;
  // A count the machine does not offer is left out of the sum, not read as 0 swapped.
  uint64_t pages = h.swap_in_pages.value_or(0) + h.swap_out_pages.value_or(0);
  if (pages <= c.swap.max_pages) return;
  std::string parts;
  if (h.swap_in_pages) parts = std::to_string(*h.swap_in_pages) + " in";
  if (h.swap_out_pages) {
    parts += (parts.empty() ? "" : ", ") + std::to_string(*h.swap_out_pages) + " out";
  }
  out.Add(
      std::to_string(pages) + " pages > " + std::to_string(c.swap.max_pages) + " (" + parts + ")",
      static_cast<double>(pages), static_cast<double>(c.swap.max_pages));
}

// generator_bound: the load generator set the pace, not the target
// generator_bound: load host 97.3% busy > 90%
void GeneratorBound(const WindowMeasures& m, const GateConfig& c, GateReasons& out) {
  if (m.generator_bound) out.Add("the load generator set the pace, not the target", 1, 0);
  const auto& busy = m.load.busy_pct;
  double max = c.generator_bound.load_busy_max_pct;
  if (busy && *busy > max) {
    auto [v, t] = Compared(*busy, max, 1);
    out.AddOnHost("load", v + "% busy > " + t + "%", *busy, max);
  }
}

// error_rate: 2.31% > 1.00% (23 errors of 996 attempts): two decimals, more where the rate would
// otherwise print the same as the threshold. Value and threshold in %.
void ErrorRate(const WindowMeasures& m, const GateConfig& c, GateReasons& out) {
  uint64_t errors = m.transport_errors + m.mismatches;
  uint64_t attempts = m.requests + m.transport_errors;
  if (attempts == 0) return;
  double rate = static_cast<double>(errors) / static_cast<double>(attempts);
  const double max = c.error_rate.max;
  if (!(rate > max)) return;
  int decimals = 2;
  char value[64], threshold[64];
  do {
    std::snprintf(value, sizeof(value), "%.*f", decimals, rate * 100);
    std::snprintf(threshold, sizeof(threshold), "%.*f", decimals, max * 100);
  } while (std::string_view(value) == threshold && ++decimals <= 6);
  out.Add(std::string(value) + "% > " + threshold + "% (" + std::to_string(errors) + " errors of " +
              std::to_string(attempts) + " attempts)",
          rate * 100, max * 100);
}

// service_exited: pg exit status 1 during the window; last log lines: ...  (one per service)
void ServiceExited(const WindowMeasures& m, const GateConfig&, GateReasons& out) {
  for (const auto& exit : m.service_exits) out.Add(exit, 1, 0);
}

// Each bounded probe, on a window whose target ran with side services:
//   probe.checkpoints: service pg rose by 1 > 0
//   probe.checkpoints: service pg unavailable (no reading after: ...)  (a bound that cannot be
//                                        checked refuses the window: it promised a bound)
//   probe.checkpoints: no service of the target reports it
void Probes(const WindowMeasures& m, const GateConfig& c, GateReasons& out) {
  if (!m.has_services) return;
  for (const auto& [name, max] : c.probe_max) {
    const std::string gate = "probe." + name;
    bool seen = false;
    for (const auto& p : m.probes) {
      if (p.name != name) continue;
      seen = true;
      if (!p.delta) {
        out.AddAs(gate, "service " + p.service + " unavailable (" + p.unavailable + ")", 0, max);
      } else if (*p.delta > max) {
        auto [v, t] = Compared(*p.delta, max, 2);
        out.AddAs(gate, "service " + p.service + " rose by " + v + " > " + t, *p.delta, max);
      }
    }
    if (!seen) out.AddAs(gate, "no service of the target reports it", 0, max);
  }
}

// --- The keys. ---

// GateConfig's field at the end of a path of members, by a fold over `.*`:
// GateField<&GateConfig::steal, &StealGate::max_pct>() refers to c.steal.max_pct.
template <auto... kPath>
auto& Get(GateConfig& c) {
  return (c.*....*kPath);
}
template <auto... kPath>
const auto& Read(const GateConfig& c) {
  return (c.*....*kPath);
}
template <auto... kPath>
auto GateField() {
  using T = std::remove_cvref_t<decltype(Get<kPath...>(std::declval<GateConfig&>()))>;
  return GateFieldRef<T>{&Get<kPath...>, &Read<kPath...>};
}

// A gate's switch: `name = true|false`.
template <auto... kPath>
GateKey Switch(std::string_view name) {
  return {.name = name, .field = GateField<kPath...>()};
}
// A switch that turns its gate off when true (allow_battery).
template <auto... kPath>
GateKey Allow(std::string_view name) {
  return {.name = name, .field = GateField<kPath...>(), .inverted = true};
}
// A threshold from min to max.
template <auto... kPath>
GateKey Limit(std::string_view name, double min, double max, std::string_view noun = "number",
              std::optional<double> example = std::nullopt) {
  return {.name = name,
          .field = GateField<kPath...>(),
          .min = min,
          .max = max,
          .noun = noun,
          .example = example};
}

using C = GateConfig;

std::vector<GateSpec> MakeTable() {
  return {
      {.name = "conformance",
       .keys = {Switch<&C::conformance, &GateSwitch::enabled>("conformance")},
       .enforce = Verdict::kSkipped,  // the target is not measured: it does other work
       .warn = Verdict::kSkipped,
       .judge_window = Conformance},
      {.name = "target_exited",
       .keys = {Switch<&C::target_exited, &GateSwitch::enabled>("target_exited")},
       .enforce = Verdict::kFailed,  // nothing of the target was measured after it died
       .warn = Verdict::kFailed,
       .judge_window = TargetExited},
      {.name = "background_scheduling",
       .keys = {Switch<&C::background_scheduling, &GateSwitch::enabled>("background_scheduling")},
       .judge_window = BackgroundScheduling},
      {.name = "on_battery",
       .keys = {Allow<&C::on_battery, &GateSwitch::enabled>("allow_battery")},
       .judge_host = OnBattery},
      {.name = "selftest_drift",
       .keys = {Switch<&C::selftest_drift, &SelftestDriftGate::enabled>("selftest_drift"),
                Limit<&C::selftest_drift, &SelftestDriftGate::max_pct>("selftest_drift_max_pct", 0,
                                                                       1000),
                Limit<&C::selftest_drift, &SelftestDriftGate::spread_multiple>(
                    "selftest_drift_spread_multiple", 0, 100, "number", 4)},
       .judge_host = SelftestDrift},
      {.name = "foreign_cpu",
       .keys = {Switch<&C::foreign_cpu, &ForeignCpuGate::enabled>("foreign_cpu"),
                Limit<&C::foreign_cpu, &ForeignCpuGate::max_pct>("foreign_cpu_max_pct", 0, 10000)},
       .judge_host = ForeignCpu},
      {.name = "steal",
       .keys = {Switch<&C::steal, &StealGate::enabled>("steal"),
                Limit<&C::steal, &StealGate::max_pct>("steal_max_pct", 0, 100)},
       .judge_host = Steal},
      {.name = "throttling",
       .keys = {Switch<&C::throttling, &GateSwitch::enabled>("throttling")},
       .judge_host = Throttling},
      {.name = "frequency",
       .keys = {Switch<&C::frequency, &FrequencyGate::enabled>("frequency"),
                Limit<&C::frequency, &FrequencyGate::min_ratio>("min_freq_ratio", 0, 1, "number",
                                                                0.75)},
       .judge_host = Frequency},
      {.name = "swap",
       .keys = {Switch<&C::swap, &SwapGate::enabled>("swap"),
                Limit<&C::swap, &SwapGate::max_pages>("swap_max_pages", 0, 1000000000,
                                                      "whole number of pages")},
       .judge_host = Swap},
      {.name = "generator_bound",
       .keys = {Switch<&C::generator_bound, &GeneratorBoundGate::enabled>("generator_bound"),
                Limit<&C::generator_bound, &GeneratorBoundGate::load_busy_max_pct>(
                    "load_busy_max_pct", 0, 100)},
       .judge_window = GeneratorBound},
      {.name = "error_rate",
       .keys = {Switch<&C::error_rate, &ErrorRateGate::enabled>("error_rate"),
                Limit<&C::error_rate, &ErrorRateGate::max>("error_rate_max", 0, 1, "fraction",
                                                           0.01)},
       .judge_window = ErrorRate},
      {.name = "service_exited",
       .keys = {Switch<&C::service_exited, &GateSwitch::enabled>("service_exited")},
       .enforce = Verdict::kFailed,  // the requests after a service died measured errors
       .warn = Verdict::kFailed,
       .judge_window = ServiceExited},
      {.name = "probe",
       .keys = {{.name = "probe", .field = GateField<&C::probe_max>()}},
       .judge_window = Probes},
  };
}

}  // namespace

void GateReasons::AddOnHost(std::string_view host, const std::string& detail, double value,
                            double threshold) {
  std::string text = std::string(gate_) + ": ";
  if (!host.empty()) text += std::string(host) + " host ";
  out_.push_back({std::string(gate_), text + detail, value, threshold, std::string(host)});
}

void GateReasons::AddAs(const std::string& gate, const std::string& detail, double value,
                        double threshold) {
  out_.push_back({gate, gate + ": " + detail, value, threshold, ""});
}

const std::vector<GateSpec>& GateTable() {
  static const std::vector<GateSpec> table = MakeTable();
  return table;
}

const GateSpec* FindGate(std::string_view reason_gate) {
  // A family's reasons are "<entry>.<member>"; no gate's own name has a dot.
  const std::string_view name = reason_gate.substr(0, reason_gate.find('.'));
  for (const GateSpec& gate : GateTable()) {
    if (gate.name == name) return &gate;
  }
  return nullptr;
}

bool GateApplies(const GateSpec& gate, const GateConfig& config) {
  if (gate.keys.empty()) return true;
  const auto* flag = std::get_if<GateFieldRef<bool>>(&gate.keys.front().field);
  return flag == nullptr || flag->read(config);
}

Verdict GateVerdict(std::string_view reason_gate, GateMode mode) {
  const GateSpec* gate = FindGate(reason_gate);
  if (gate == nullptr) return mode == GateMode::kEnforce ? Verdict::kInvalid : Verdict::kValid;
  return mode == GateMode::kEnforce ? gate->enforce : gate->warn;
}

std::vector<const GateKey*> GatesTableKeys() {
  static const GateKey mode{.name = "mode", .field = GateField<&C::mode>()};
  static const GateKey remeasure_max =
      Limit<&C::remeasure_max>("remeasure_max", 0, 100000, "whole number of windows");
  std::vector<const GateKey*> keys = {&mode};
  for (const GateSpec& gate : GateTable()) {
    for (const GateKey& key : gate.keys) keys.push_back(&key);
  }
  keys.push_back(&remeasure_max);
  return keys;
}

}  // namespace benchlab

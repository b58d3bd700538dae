#include "analysis/gate_audit.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/parse.h"
#include "coordinator/outcome.h"

namespace benchlab {
namespace {

// The median by analysis/stats.h's one definition; NaN for none.
double MedianOf(std::vector<double> v) { return Summarize(std::move(v)).median; }

// |x / median - 1| in %; NaN when either is not a usable figure.
double DistancePct(double x, double median) {
  if (!std::isfinite(x) || !std::isfinite(median) || !(median > 0) || !(x >= 0)) return kNaN;
  return std::abs(x / median - 1) * 100;
}

// "6.1%": one decimal below 10, none above.
std::string PctText(double pct) {
  if (!std::isfinite(pct)) return "–";
  return StrFormat(pct < 10 ? "%.1f%%" : "%.0f%%", pct);
}
std::string PointsText(double points) { return StrFormat("%+.1f", points); }

std::string ShiftText(const ShiftInterval& s) {
  if (!s.bounded) return "no interval";
  return "[" + PointsText(s.low) + ", " + PointsText(s.high) + "] points";
}

// The distances of one figure: each refused window's from its cell's median of clean windows,
// each clean window's from the median of the other clean windows of its cell.
struct Distances {
  std::vector<double> refused, clean;
};

FigureAudit AuditFigure(const Distances& d, double level) {
  FigureAudit f;
  f.refused_pct = Summarize(d.refused);
  f.clean_pct = Summarize(d.clean);
  std::vector<double> refused, clean;
  for (double v : d.refused)
    if (std::isfinite(v)) refused.push_back(v);
  for (double v : d.clean)
    if (std::isfinite(v)) clean.push_back(v);
  if (static_cast<int>(refused.size()) >= kGateAuditMinWindows &&
      static_cast<int>(clean.size()) >= kGateAuditMinWindows) {
    f.shift = HodgesLehmannShift(refused, clean, level);
  }
  return f;
}

// Noise: the interval holds 0 (or lies below it) and its top is no more than the clean windows'
// own median distance: refused windows twice as far off as clean ones are ruled out.
bool RulesOutTwiceAsFar(const FigureAudit& f) {
  return f.shift.bounded && f.shift.high <= std::max(f.clean_pct.median, 0.5);
}

std::string AuditWords(const GateAudit& a) {
  std::string who = a.gate + " refused " + std::to_string(a.refused) + " of " +
                    std::to_string(a.windows) + " windows" +
                    (a.host.empty() ? "" : " on host " + a.host);
  std::string figures = "; their req/s lay " + PctText(a.rps.refused_pct.median) +
                        " from their cell's median against valid windows' " +
                        PctText(a.rps.clean_pct.median) + " (" + ShiftText(a.rps.shift) +
                        "), CPU per request " + PctText(a.cpu.refused_pct.median) + " against " +
                        PctText(a.cpu.clean_pct.median) + " (" + ShiftText(a.cpu.shift) + ")";
  switch (a.verdict) {
    case GateAuditVerdict::kEarned:
      return who + figures + ": clearly further off than valid windows; the gate earned them.";
    case GateAuditVerdict::kNoise:
      return who + figures +
             ": no further off than valid windows; on this host the gate refuses noise, not "
             "disturbed windows.";
    case GateAuditVerdict::kUndecided:
      break;
  }
  const int clean_n = std::max(a.rps.clean_pct.n, a.cpu.clean_pct.n);
  const int refused_n = std::max(a.rps.refused_pct.n, a.cpu.refused_pct.n);
  if (refused_n == 0) {
    return who +
           ": no cell had a valid window to compare them with, so nothing can be said of "
           "the gate here.";
  }
  if (refused_n < kGateAuditMinWindows || clean_n < kGateAuditMinWindows) {
    return who + figures + ": too few windows to tell (" + std::to_string(kGateAuditMinWindows) +
           " refused and " + std::to_string(kGateAuditMinWindows) + " valid are needed).";
  }
  return who + figures +
         ": not clearly further off, but the interval is too wide to call it noise.";
}

}  // namespace

ShiftInterval HodgesLehmannShift(const std::vector<double>& x, const std::vector<double>& y,
                                 double level) {
  ShiftInterval s;
  if (x.empty() || y.empty()) return s;
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double a : x)
    for (double b : y) d.push_back(a - b);
  std::sort(d.begin(), d.end());
  const size_t mid = d.size() / 2;  // d is sorted: its median directly
  s.estimate = d.size() % 2 ? d[mid] : (d[mid - 1] + d[mid]) / 2;
  const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size());
  const double z =
      boost::math::quantile(boost::math::normal(), 1 - (1 - std::clamp(level, 0.5, 0.9999)) / 2);
  // The count of differences below the interval: nm/2 - z sqrt(nm(n+m+1)/12), rounded down.
  const double k = std::floor(n * m / 2 - z * std::sqrt(n * m * (n + m + 1) / 12));
  if (k < 1) return s;
  const size_t lo = static_cast<size_t>(k) - 1;  // the k-th smallest, 1-based
  const size_t hi = d.size() - static_cast<size_t>(k);
  s.low = d[lo];
  s.high = d[hi];
  s.bounded = true;
  return s;
}

const char* GateAuditVerdictName(GateAuditVerdict v) {
  switch (v) {
    case GateAuditVerdict::kEarned:
      return "earned";
    case GateAuditVerdict::kNoise:
      return "noise";
    case GateAuditVerdict::kUndecided:
      break;
  }
  return "undecided";
}

std::vector<AuditWindow> AuditWindowsOf(const ReportInput& input, const std::string& cell_prefix) {
  std::vector<AuditWindow> out;
  for (const WindowRow& w : input.windows) {
    const auto verdict = ParseVerdict(w.verdict);
    if (verdict != Verdict::kValid && verdict != Verdict::kInvalid) continue;  // not measured
    AuditWindow a;
    a.cell = cell_prefix + "\x1f" + w.pair + "\x1f" + w.target + "\x1f" + w.scenario + "\x1f" +
             (w.load_level.empty() ? "c" + std::to_string(w.connections) : w.load_level) + "\x1f" +
             std::to_string(w.noise);
    a.rps = w.requests > 0 ? w.rps : kNaN;
    a.cpu_us = w.requests > 0 && w.cpu_us_per_request > 0 ? w.cpu_us_per_request : kNaN;
    std::set<std::pair<std::string, std::string>> seen;
    for (const WindowReason& r : ParseOutcome(w.outcome, w.reasons)) {
      if (r.kind != ReasonKind::kGate) continue;
      std::string host = r.host;
      if (host == "server" && !w.server_agent.empty()) host += " (agent " + w.server_agent + ")";
      if (host == "load" && !w.load_agent.empty()) host += " (agent " + w.load_agent + ")";
      if (seen.insert({r.name, host}).second) a.refused_by.emplace_back(r.name, host);
    }
    // A window refused for something other than a gate (none are measured, but an old row may
    // say otherwise) is neither clean nor any gate's.
    if (verdict == Verdict::kInvalid && a.refused_by.empty()) continue;
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<GateAudit> AuditGates(const std::vector<AuditWindow>& windows, double level) {
  // Each cell's clean figures, then each window's distance.
  std::map<std::string, std::vector<double>> clean_rps, clean_cpu;
  for (const AuditWindow& w : windows) {
    if (!w.refused_by.empty()) continue;
    if (std::isfinite(w.rps)) clean_rps[w.cell].push_back(w.rps);
    if (std::isfinite(w.cpu_us)) clean_cpu[w.cell].push_back(w.cpu_us);
  }
  auto median_without = [](const std::vector<double>& all, double self) {
    std::vector<double> rest = all;
    auto it = std::find(rest.begin(), rest.end(), self);
    if (it != rest.end()) rest.erase(it);
    return MedianOf(std::move(rest));
  };
  auto median_of = [](const std::map<std::string, std::vector<double>>& by_cell,
                      const std::string& cell) {
    auto it = by_cell.find(cell);
    return it == by_cell.end() ? kNaN : MedianOf(it->second);
  };
  Distances clean_rps_d, clean_cpu_d;
  std::map<std::pair<std::string, std::string>, std::pair<Distances, Distances>> refused;
  std::map<std::pair<std::string, std::string>, int> refused_count;
  for (const AuditWindow& w : windows) {
    if (w.refused_by.empty()) {
      auto rps_it = clean_rps.find(w.cell);
      auto cpu_it = clean_cpu.find(w.cell);
      if (std::isfinite(w.rps) && rps_it->second.size() >= 2) {
        clean_rps_d.clean.push_back(DistancePct(w.rps, median_without(rps_it->second, w.rps)));
      }
      if (std::isfinite(w.cpu_us) && cpu_it->second.size() >= 2) {
        clean_cpu_d.clean.push_back(
            DistancePct(w.cpu_us, median_without(cpu_it->second, w.cpu_us)));
      }
      continue;
    }
    const double rps = DistancePct(w.rps, median_of(clean_rps, w.cell));
    const double cpu = DistancePct(w.cpu_us, median_of(clean_cpu, w.cell));
    for (const auto& by : w.refused_by) {
      ++refused_count[by];
      auto& [r, c] = refused[by];
      if (std::isfinite(rps)) r.refused.push_back(rps);
      if (std::isfinite(cpu)) c.refused.push_back(cpu);
    }
  }
  std::vector<GateAudit> out;
  for (auto& [by, distances] : refused) {
    GateAudit a;
    a.gate = by.first;
    a.host = by.second;
    a.refused = refused_count[by];
    a.windows = static_cast<int>(windows.size());
    distances.first.clean = clean_rps_d.clean;
    distances.second.clean = clean_cpu_d.clean;
    a.rps = AuditFigure(distances.first, level);
    a.cpu = AuditFigure(distances.second, level);
    const bool earned = (a.rps.shift.bounded && a.rps.shift.low > 0) ||
                        (a.cpu.shift.bounded && a.cpu.shift.low > 0);
    // Noise needs every figure that has one to rule out twice as far, and at least one figure.
    const bool any = a.rps.shift.bounded || a.cpu.shift.bounded;
    const bool noise = any && (!a.rps.shift.bounded || RulesOutTwiceAsFar(a.rps)) &&
                       (!a.cpu.shift.bounded || RulesOutTwiceAsFar(a.cpu));
    a.verdict = earned  ? GateAuditVerdict::kEarned
                : noise ? GateAuditVerdict::kNoise
                        : GateAuditVerdict::kUndecided;
    a.words = AuditWords(a);
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::ordered_json GateAuditJson(const std::vector<GateAudit>& audit) {
  using AuditJson = nlohmann::ordered_json;
  auto num = [](double v) { return std::isfinite(v) ? AuditJson(v) : AuditJson(); };
  auto figure = [&](const FigureAudit& f) {
    return AuditJson{{"refused_off_pct", num(f.refused_pct.median)},
                     {"refused_n", f.refused_pct.n},
                     {"valid_off_pct", num(f.clean_pct.median)},
                     {"valid_n", f.clean_pct.n},
                     {"shift_points", num(f.shift.estimate)},
                     {"shift_low", num(f.shift.low)},
                     {"shift_high", num(f.shift.high)}};
  };
  AuditJson out = AuditJson::array();
  for (const GateAudit& a : audit) {
    out.push_back({{"gate", a.gate},
                   {"host", a.host},
                   {"refused", a.refused},
                   {"windows", a.windows},
                   {"verdict", GateAuditVerdictName(a.verdict)},
                   {"rps", figure(a.rps)},
                   {"cpu_us_per_request", figure(a.cpu)},
                   {"words", a.words}});
  }
  return out;
}

Remeasured CountRemeasured(const std::vector<WindowRow>& windows) {
  // Each window's attempts by number, to find the one before.
  std::map<std::pair<WindowKey, int>, const WindowRow*> by_attempt;
  for (const WindowRow& w : windows) by_attempt[{w.Key(), w.attempt}] = &w;
  Remeasured out;
  std::map<std::string, int> by_gate;
  for (const auto& [key, w] : by_attempt) {
    if (key.second <= 1) continue;
    auto prev = by_attempt.find({key.first, key.second - 1});
    if (prev == by_attempt.end() || prev->second->verdict != "invalid") continue;
    std::string gate;
    for (const WindowReason& r : ParseOutcome(prev->second->outcome, prev->second->reasons)) {
      if (r.kind == ReasonKind::kGate) {
        gate = r.name;
        break;
      }
    }
    if (gate.empty()) continue;
    ++out.windows;
    ++by_gate[gate];
  }
  out.by_gate.assign(by_gate.begin(), by_gate.end());
  return out;
}

}  // namespace benchlab

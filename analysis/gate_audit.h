// The gates' own audit (docs/gates.md, "Every gate audits itself"): a refused window is still
// measured and stored, so the lab can ask of each gate whether the windows it refused were any
// further from their cell's typical figure than the windows it let through. A gate whose
// refusals lie no further off than valid windows refuses noise, and throws away pairs for
// nothing; a gate whose refusals lie clearly further off earned them. Pure functions of stored
// rows: any thread may call them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/report_format.h"
#include "analysis/stats.h"

namespace benchlab {

// How far a shift between two samples can be said to lie: the Hodges-Lehmann estimate of
// x - y (the median of every difference x_i - y_j) and its distribution-free confidence interval
// from the Mann-Whitney statistic's normal approximation (Hollander & Wolfe, "Nonparametric
// Statistical Methods", 4.3). `bounded` is false when the samples are too small for an interval
// at this level (low and high are then NaN).
struct ShiftInterval {
  double estimate = kNaN;
  double low = kNaN;
  double high = kNaN;
  bool bounded = false;
};
ShiftInterval HodgesLehmannShift(const std::vector<double>& x, const std::vector<double>& y,
                                 double level = 0.95);

// One measured window attempt as the audit sees it. Windows that were not measured (failed,
// skipped) are not audit windows.
struct AuditWindow {
  std::string cell;  // names its cell (campaign, pair, target, scenario, load level, noise)
  // The gates that refused it (or, in warn mode, flagged it): (gate, host) with host as
  // "server" / "load" and the agent, or "" for the window's own gates (error_rate). Empty: clean.
  std::vector<std::pair<std::string, std::string>> refused_by;
  double rps = kNaN;     // NaN when the window has no such figure
  double cpu_us = kNaN;  // server CPU µs per request
};

// The windows of one campaign (every measured attempt) as audit windows. `cell_prefix` tells
// campaigns apart when several are audited together (a series).
std::vector<AuditWindow> AuditWindowsOf(const ReportInput& input, const std::string& cell_prefix);

// One figure of one gate: how far its refused windows lay from their cell's median of clean
// windows, against how far the clean windows themselves lay from the median of the others in
// their cell (leave-one-out, so that a window never counts toward its own median). Distances are
// |x / median - 1| in %.
struct FigureAudit {
  Summary refused_pct;  // distances of the refused windows
  Summary clean_pct;    // distances of the clean windows
  ShiftInterval shift;  // refused - clean, in points of %
};

// Not a ComparisonVerdict (analysis/interval.h): it judges a gate's refusals against the windows
// it kept, not one figure against a reference.
enum class GateAuditVerdict {
  kEarned,     // the refused windows lay clearly further off, in one figure or both
  kNoise,      // no further off, and an interval narrow enough to rule out twice as far
  kUndecided,  // too few windows, or an interval too wide to tell
};
const char* GateAuditVerdictName(GateAuditVerdict v);  // "earned", "noise", "undecided"

struct GateAudit {
  std::string gate;
  std::string host;  // "load (agent l1)", "server (agent s1)", or "" for the window's own gates
  int refused = 0;   // measured windows it refused
  int windows = 0;   // measured windows audited (all gates, clean included)
  FigureAudit rps;
  FigureAudit cpu;
  GateAuditVerdict verdict = GateAuditVerdict::kUndecided;
  std::string words;  // the audit in a sentence, as the report prints it
};

// The fewest refused windows, and clean windows, an audit judges from.
inline constexpr int kGateAuditMinWindows = 3;

// Every gate and host that refused at least one measured window, by gate then host.
std::vector<GateAudit> AuditGates(const std::vector<AuditWindow>& windows, double level = 0.95);

// The audit as the run of record and the history's JSON hold it (docs/report.md): one object per
// gate and host with refused, windows, verdict, words, and per figure ("rps", "cpu_us_per_request")
// the refused and valid windows' median distance in %, their counts and the shift's interval.
nlohmann::ordered_json GateAuditJson(const std::vector<GateAudit>& audit);

// Windows measured again because a gate refused their previous attempt (docs/gates.md, "A
// refusal costs a window"): how many, and by the gate that refused the attempt before.
struct Remeasured {
  int windows = 0;
  std::vector<std::pair<std::string, int>> by_gate;  // gate, count; by gate name
};
Remeasured CountRemeasured(const std::vector<WindowRow>& windows);

}  // namespace benchlab

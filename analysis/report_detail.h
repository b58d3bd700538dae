// What the report's three formats share: number formatting, the stored JSON fields, and the
// campaign analysed once (analysis/report_format.cc). Internal to the report;
// report_format.h is its interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/report_format.h"
#include "analysis/rounds.h"
#include "common/parse.h"
#include "coordinator/campaign.h"

namespace benchlab::report_detail {

using ojson = nlohmann::ordered_json;

inline constexpr const char* kMissing = "–";  // a figure that could not be computed
inline constexpr const char* kNone = "—";     // a figure that does not apply (the baseline's ratio)

// Shortest plain decimal that reads back as the same double (100000, never 1e+05); "" for NaN
// (CSV's empty field).
std::string Exact(double v);
ojson Num(double v);  // null for NaN and infinities
template <typename T>
ojson Opt(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}
std::string Pct(double pct);
std::string Ratio(double r);
std::string Ms(double ms);
std::string Kib(double kb);
std::string CpuUs(double us);
std::string Duration(std::chrono::nanoseconds d);

ojson ParseJson(const std::string& text, ojson fallback);
std::vector<std::string> Reasons(const WindowRow& w);
std::string Join(const std::vector<std::string>& parts, const std::string& sep);

// The campaign around the windows, analysed once for every format.
struct Context {
  const ReportInput& in;
  std::optional<Campaign> spec;  // nullopt: the stored text no longer parses
  std::string spec_error;
  std::set<int64_t> newest;  // ids of the attempts that count
  StatsOptions options;      // the spec's [stats] and rounds; the defaults without a spec
  CampaignStats stats;
  std::map<CellKey, CellRounds> cell_rounds;  // with a spec: each cell's rounds and why
};
Context Analyse(const ReportInput& in);

std::string LevelWords(const std::string& level);  // "c64" -> "64 connections"
std::string WindowName(const WindowRow& w);        // "round 2 · nginx · hello · c64"
// One target in one cell measured by benchlab's generator and by an external tool (the same
// pair, scenario and level, "c64" and "c64@wrk"): the valid newest windows' figures side by side
// and the round-by-round ratio benchlab / tool. A round's ratio counts only when its two windows
// were measured together: no further apart than the campaign's first pass put any round's two
// windows (both first attempts). A window re-run minutes later met another machine; its round
// is listed apart, not in the ratio.
struct ToolRound {
  int round = 0;
  double ratio = 0;  // benchlab rps / tool rps
  double gap_s = 0;  // between the two windows' starts; NaN when a start is unreadable
};
struct ToolTarget {
  std::string target;
  Summary benchlab_rps, tool_rps;
  Summary benchlab_p99_us, tool_p99_us;  // the tool's NaN where it cannot measure p99
  Summary benchlab_cpu_us, tool_cpu_us;  // server CPU µs per request under each generator
  Summary ratio;                         // of the rounds measured together
  std::vector<ToolRound> rounds;         // measured together, in round order
  std::vector<ToolRound> apart;          // left out of the ratio
};
struct ToolCell {
  std::string pair, scenario, load_level, tool;  // load_level without the tool: "c64"
  std::vector<ToolTarget> targets;
};
// Every cell an external tool measured, in the campaign's cell order.
std::vector<ToolCell> CompareTools(const Context& cx);

// The samples summary of a window attempt; nullptr when it has none.
const SampleSummary* SamplesOf(const ReportInput& in, int64_t id);

}  // namespace benchlab::report_detail

// Statistics of benchlab's reports, as pure functions: medians with their spread, ratios to the
// baseline computed round by round, rounds won, the noise floor and the verdict that respects it.
// docs/methodology.md states the rules in plain words with a worked example. No I/O and no state:
// every function may be called from any thread. The input is a plain value (Measurement), so
// the statistics depend on neither the store nor the protocol; the report
// (analysis/report_format.cc) maps WindowRows onto it.
#pragma once

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/figure.h"
#include "analysis/interval.h"

namespace benchlab {

// --- one list of numbers --------------------------------------------------------------------

// The summary of one figure over windows (usually the rounds of one target in one cell).
// Non-finite values (NaN, +-inf: a figure that could not be computed) are left out and counted
// in `ignored`. With no finite value, n is 0 and every statistic is NaN.
struct Summary {
  int n = 0;             // finite values summarised
  int ignored = 0;       // non-finite values left out
  double median = kNaN;  // the middle value; for even n the mean of the two middle values
  double min = kNaN;
  double max = kNaN;
  // (max - min) / |median| * 100: the whole range as a percentage of the median. 0 when every
  // value is the same (n = 1 included); NaN when n = 0, or when the values differ around a
  // median of 0 (no scale to express them against).
  double spread_pct = kNaN;
};

Summary Summarize(std::vector<double> values);

// --- one target against the baseline, round by round ----------------------------------------

// One figure of one target in one cell, by round (1-based; a round holds one window per target).
using RoundValues = std::map<int, double>;

struct RoundRatio {
  int round = 0;
  double target = 0;    // the target's figure in the round
  double baseline = 0;  // the baseline's figure in the same round
  double ratio = 0;     // target / baseline
};

// The rounds in which both have a usable figure (finite, target >= 0, baseline > 0), ascending.
// A round that either lacks (missing, invalid, NaN) has no ratio: it is never filled in from
// another round, because the ratio is only fair between windows measured close in time.
std::vector<RoundRatio> RoundRatios(const RoundValues& target, const RoundValues& baseline);

// Rounds the target beat the baseline in: ratio > 1 when higher is better, < 1 when lower is.
// A ratio of exactly 1 is a tie and counts for neither side.
int RoundsWon(const std::vector<RoundRatio>& rounds, Better better);

// The noise floor of one figure: the spread of that figure over the campaign's noise windows
// (identical windows of one cell spread through the run), as a fraction: (max - min) / median,
// 0.04 meaning 4%. It is the largest difference that noise alone produced between two windows
// that should have measured the same thing.
struct NoiseFloor {
  Summary values;       // the noise windows' figure
  double fraction = 0;  // values.spread_pct / 100
};

// nullopt is "no noise floor": no noise phase, fewer than 2 usable noise windows, or a spread
// with no scale (see Summary). It is a state of its own, never a floor of 0.
std::optional<NoiseFloor> MeasureNoiseFloor(const std::vector<double>& noise_values);

// The noise-floor rule's verdict of a comparison with the baseline is a ComparisonVerdict
// (analysis/interval.h) that is never inconclusive. A report prints it as context; the verdict is
// the interval's.

// A verdict needs at least this many rounds with a ratio.
inline constexpr int kMinRoundsForVerdict = 2;

struct Judgement {
  ComparisonVerdict verdict = ComparisonVerdict::kNotApplicable;
  std::string reason;  // one line a person can check, e.g. "round ratios straddle 1 (0.97 to 1.04)"
};

// The noise-floor verdict, in this order:
//   1. fewer than kMinRoundsForVerdict ratios: n/a;
//   2. a noise floor, and |median ratio - 1| <= floor: close;
//   3. the ratios straddle 1 (min < 1 < max): close;
//   4. median ratio 1 exactly: close (a tie);
//   5. otherwise ahead or behind, by `better`.
// Without a noise floor only rules 3 and 4 can make it close.
Judgement Judge(const std::vector<RoundRatio>& rounds, Better better,
                const std::optional<NoiseFloor>& noise_floor);

// How comparisons are judged: the rule (confidence, margin) and the plan that sets each look's
// level (analysis/interval.h). The default: a fixed plan at 95%, margin 2%.
struct StatsOptions {
  StatsRule rule;
  LookPlan plan = LookPlan::Fixed(3, 0.95);
};

// Everything a report says about one target against the baseline for one figure.
struct Comparison {
  std::vector<RoundRatio> rounds;     // RoundRatios(target, baseline)
  Summary ratio;                      // median, min and max of rounds[].ratio
  int rounds_won = 0;                 // RoundsWon(rounds, better)
  int rounds_lost = 0;                // RoundsWon from the baseline's side; ties are the rest
  std::optional<double> noise_floor;  // the fraction the noise rule judged against; nullopt: none
  // The verdict: the interval of the round ratios against the margin (JudgeRatios).
  ComparisonVerdict verdict = ComparisonVerdict::kNotApplicable;
  std::string reason;
  RatioInterval interval;
  std::optional<int> rounds_needed;  // inconclusive: about how many rounds would decide it
  Judgement noise_rule;              // the noise-floor rule (Judge), printed as context
};

Comparison Compare(const RoundValues& target, const RoundValues& baseline, Better better,
                   const std::optional<NoiseFloor>& noise_floor, const StatsOptions& options = {});

// --- windows, cells and campaigns -----------------------------------------------------------

// One window as the statistics see it: the name of the window, whether it counts, and its
// figures. The report builds it from the store's WindowRow (docs/store.md), one per attempt.
struct Measurement {
  std::string pair;  // fleet campaigns: the pair's server agent; "" otherwise
  std::string target;
  std::string scenario;
  std::string load_level;  // "c64", "r5000"
  int round = 0;           // 1-based; 0 for a noise window
  int position = 0;        // place in the round; a noise window's ordinal
  int attempt = 1;         // the newest attempt of a window is the one that counts
  bool noise = false;      // a noise-phase window
  bool valid = false;      // verdict "valid": only valid windows are summarised
  double rps = 0;
  double requests = 0;
  double server_cpu_s = 0;
  double cpu_us_per_request = 0;
  double p50_us = 0;
  double p99_us = 0;
  double startup_ms = 0;
  double first_request_ms = 0;
  double idle_rss_kb = 0;
  double rss_peak_kb = 0;
  // Side services beside the target (docs/services.md): whether the window's target ran with
  // any, and their CPU seconds together (user + system, every service) over the measured
  // interval, measured apart from the target's server_cpu_s.
  bool has_services = false;
  double services_cpu_s = 0;
};

// The window's figure (analysis/figure.h lists them; a report summarises each per cell and
// compares it with the baseline). Requests per server CPU-second is requests / server_cpu_s, NaN
// when no CPU time was measured (server_cpu_s <= 0), so it is left out rather than infinite. The
// services' CPU per request is services_cpu_s * 1e6 / requests and the total is (server_cpu_s +
// services_cpu_s) * 1e6 / requests: both NaN for a window without services (a target without a
// database has no database cost to count, not a cost of 0), without requests, and the total
// also when the target's own CPU was not measured.
double MetricValue(const Measurement& m, Metric metric);
// The figures of side services: NaN for every window without services, so a report of a
// campaign without services leaves them out altogether rather than print a column of gaps.
bool IsServiceMetric(Metric metric);

// Of each window (pair, target, scenario, load level, round, position), its newest attempt only,
// ordered by that name.
std::vector<Measurement> NewestAttempts(std::vector<Measurement> windows);

// A cell of a report: scenario x load level, on one pair (fleet campaigns report each pair apart).
struct CellKey {
  std::string pair;
  std::string scenario;
  std::string load_level;
  auto operator<=>(const CellKey&) const = default;
};
CellKey CellOf(const Measurement& m);

// The matrix windows (noise windows left out) by cell, each cell's windows in input order.
std::map<CellKey, std::vector<Measurement>> GroupByCell(const std::vector<Measurement>& windows);

// The noise floor of every metric, from the valid noise windows of one pair.
struct NoiseFloors {
  int windows = 0;  // noise windows of the pair (newest attempts)
  int valid = 0;    // of which valid: the ones measured from
  std::array<std::optional<NoiseFloor>, kMetricCount> by_metric;
  const std::optional<NoiseFloor>& of(Metric m) const { return by_metric[static_cast<int>(m)]; }
};
NoiseFloors MeasureNoiseFloors(const std::vector<Measurement>& windows, const std::string& pair);

// One target in one cell: every metric summarised over its valid rounds and compared with the
// baseline round by round.
struct TargetStats {
  std::string target;
  int windows = 0;  // matrix windows of the target in the cell (newest attempts)
  int valid = 0;    // of which valid: the ones summarised
  std::array<Summary, kMetricCount> summary;
  std::array<Comparison, kMetricCount> vs_baseline;  // n/a for the baseline itself
  const Summary& of(Metric m) const { return summary[static_cast<int>(m)]; }
  const Comparison& compared(Metric m) const { return vs_baseline[static_cast<int>(m)]; }
};

struct CellStats {
  CellKey cell;
  std::vector<TargetStats> targets;
};

// Start-up, first request, idle and peak RSS of one target on one pair, over all its valid
// matrix windows (these describe the target more than the cell).
struct TargetFacts {
  std::string pair;
  std::string target;
  Summary startup_ms;
  Summary first_request_ms;
  Summary idle_rss_kb;
  Summary rss_peak_kb;
};

struct CampaignStats {
  std::string baseline;
  bool services = false;                     // some attempt ran with side services
  std::vector<std::string> pairs;            // "" alone for a campaign on one pair
  std::map<std::string, NoiseFloors> noise;  // by pair
  std::vector<CellStats> cells;              // by (pair, scenario, load level)
  std::vector<TargetFacts> facts;            // by pair, then target order
};

// The whole campaign from its stored windows (every attempt; only the newest of each window
// counts). Targets appear in `target_order` (the campaign file's order) and then any others by
// name. Comparisons are n/a with a reason when the baseline is empty or has no window in a cell.
CampaignStats AnalyseCampaign(const std::vector<Measurement>& windows, const std::string& baseline,
                              const std::vector<std::string>& target_order = {},
                              const StatsOptions& options = {});

}  // namespace benchlab

// `benchlab compare A B`: two runs of record (docs/report.md, "JSON: the run of record") compared
// cell by cell, each figure's median in B against A with a verdict that respects both noise
// floors (docs/compare.md). Pure functions of parsed JSON: no I/O; cli/cmd_compare.cc reads the
// files, databases and coordinators. Any thread may call them.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/stats.h"
#include "common/status.h"

namespace benchlab {

// The figures compared: the run of record's `rps`, `cpu_us_per_request` and `p99_us`.
enum class CompareMetric { kRps, kCpu, kP99 };
inline constexpr int kCompareMetricCount = 3;
inline constexpr std::array<CompareMetric, kCompareMetricCount> kCompareMetrics = {
    CompareMetric::kRps, CompareMetric::kCpu, CompareMetric::kP99};
const char* CompareMetricFlag(CompareMetric m);   // "rps", "cpu", "p99" (--metric)
const char* CompareMetricKey(CompareMetric m);    // "rps", "cpu_us_per_request", "p99_us"
const char* CompareMetricLabel(CompareMetric m);  // "req/s", "CPU µs/req", "p99"
bool HigherIsBetter(CompareMetric m);             // req/s only
std::optional<CompareMetric> ParseCompareMetric(const std::string& flag);

// B's figure against A's: better or worse by the figure's direction, close, or n/a.
enum class DeltaVerdict { kNotApplicable, kClose, kBetter, kWorse };
const char* DeltaVerdictName(DeltaVerdict v);  // "n/a", "close", "better", "worse"

// One side's figure in one cell: the run of record's SUMMARY over the target's valid rounds,
// and that side's noise floor of the figure on the cell's pair (nullopt: none measured).
struct SideFigure {
  int n = 0;
  double median = kNaN;
  double min = kNaN;
  double max = kNaN;
  double spread_pct = kNaN;
  std::optional<double> noise_floor;  // fraction, 0.04 is 4%
};

struct MetricDelta {
  SideFigure a, b;
  double delta = kNaN;         // b.median / a.median - 1; NaN when n/a
  double threshold = kNaN;     // the fraction |delta| was judged against
  std::string threshold_from;  // "noise floor of A", "spread of B", ...; "" when none
  DeltaVerdict verdict = DeltaVerdict::kNotApplicable;
  std::string reason;  // one line a person can check
};

// The verdict rule of docs/compare.md, in this order:
//   1. a side without a valid figure, or A's median not above 0: n/a;
//   2. threshold = the larger noise floor of A and B; without either, the larger spread of the
//      two cells, unless both have one round only (then n/a: nothing to judge against);
//   3. |delta| <= threshold: close;
//   4. the ranges (min to max) of A and B overlap: close;
//   5. otherwise better or worse, by the metric's direction.
MetricDelta JudgeDelta(const SideFigure& a, const SideFigure& b, CompareMetric metric);

// A row of the comparison: one target in one cell (pair, scenario, load level), matched by name.
enum class Presence { kBoth, kOnlyA, kOnlyB };
struct CellDelta {
  std::string pair;  // "" outside fleet campaigns
  std::string scenario;
  std::string load_level;  // "c64", "r5000"
  std::string target;
  Presence presence = Presence::kBoth;
  std::array<MetricDelta, kCompareMetricCount> metrics;  // figures of the side(s) present
  const MetricDelta& of(CompareMetric m) const { return metrics[static_cast<int>(m)]; }
};

// What the header says about one side.
struct CompareSide {
  std::string source;  // where it was read: "file a.json", "bench.db", "coordinator host:7700"
  std::string campaign;
  std::string created_at;
  std::string state;
  std::string generated_by;
  struct PairFloors {
    std::string pair;
    std::array<std::optional<double>, kCompareMetricCount> floors;
  };
  std::vector<PairFloors> noise_floors;  // one entry per pair, as the record lists them
  std::vector<std::string> hosts;        // "server: AMD EPYC, 2 cores, kernel 6.1.0", distinct
};

struct RecordComparison {
  CompareSide a, b;
  std::vector<CellDelta> cells;  // A's cells and targets in A's order, then what only B has
};

// Compares two runs of record that ParseRunOfRecord accepted. Missing or null figures count as
// no valid value; nothing is dropped: a target or cell on one side only is a kOnlyA/kOnlyB row.
RecordComparison CompareRecords(const nlohmann::json& a, const nlohmann::json& b,
                                const std::string& a_source, const std::string& b_source);

struct CompareOptions {
  std::vector<CompareMetric> metrics = {kCompareMetrics.begin(), kCompareMetrics.end()};
  std::optional<double> fail_on_regression_pct;  // percent, e.g. 5 for 5%
};

// The metrics `--fail-on-regression` judges: req/s and CPU µs/request, of those selected.
std::vector<CompareMetric> GatedMetrics(const std::vector<CompareMetric>& selected);

struct Regression {
  std::string cell;  // "hello · c8 · nginx" (pair first in a fleet campaign)
  std::string pair, scenario, load_level, target;
  CompareMetric metric = CompareMetric::kRps;
  double delta = kNaN;
  std::string reason;
};
// Cells present in both whose gated metric is worse (not close, not n/a) by more than `pct`
// percent: |delta| * 100 > pct.
std::vector<Regression> FindRegressions(const RecordComparison& c,
                                        const std::vector<CompareMetric>& selected, double pct);

// The terminal's tables, Markdown, or {"format": "benchlab-compare", "version": 1, ...}.
std::string FormatCompareText(const RecordComparison& c, const CompareOptions& options);
std::string FormatCompareMarkdown(const RecordComparison& c, const CompareOptions& options);
std::string FormatCompareJson(const RecordComparison& c, const CompareOptions& options);

// Parses a run of record's text and checks `format` and `version`; `origin` (a file name, a
// campaign) starts every error message: "b.json: not a run of record (format \"x\")".
Result<nlohmann::json> ParseRunOfRecord(const std::string& text, const std::string& origin);

// "c64" -> "64 connections", "r5000" -> "open loop at 5,000 req/s" (as the report says).
std::string LoadLevelWords(const std::string& level);

}  // namespace benchlab

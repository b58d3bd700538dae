// `benchlab compare A B`: two runs of record (docs/report.md, "JSON: the run of record") compared
// cell by cell: each figure's ratio B / A with an unpaired (Welch) confidence interval from the
// two runs' rounds, a verdict from that interval and a margin, and the noise-floor rule beside it
// as context (docs/compare.md). Pure functions of parsed JSON: no I/O; cli/cmd_compare.cc reads
// the files, databases and coordinators. Any thread may call them.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/interval.h"
#include "analysis/stats.h"
#include "common/status.h"
#include "common/text_table.h"

namespace benchlab {

// The figures compared (analysis/figure.h): the run of record's `rps`, `cpu_us_per_request` and
// `p99_us`, by default all three; --figure (alias --metric) chooses among them by short or full
// name. Per-figure arrays below are indexed by Metric and hold only these.
inline constexpr int kComparedMetricCount = 3;
inline constexpr std::array<Metric, kComparedMetricCount> kComparedMetrics = {
    Metric::kRps, Metric::kCpuUsPerRequest, Metric::kP99Us};
bool IsCompared(Metric m);

// B's figure against A's is a ComparisonVerdict (analysis/interval.h), written "better" or
// "worse" by the figure's direction (VerdictWords::kBetterWorse); the noise-floor rule's is never
// inconclusive.

// --- the interval between two runs (docs/compare.md, "The interval") ---------------------------

// An unpaired interval on the ratio B / A. The rounds of two runs were not measured together, so
// they are not paired: it is Welch's t interval on mean(ln B) − mean(ln A), with the
// Welch–Satterthwaite degrees of freedom, mapped back with exp().
//   ratio.estimate = exp(mean ln B − mean ln A), ratio.low / high its ends, ratio.level the
//   two-sided confidence, ratio.log_mean = mean ln B − mean ln A, ratio.n = n_a + n_b, and
//   ratio.log_sd NaN (two samples have no single spread: `se` holds it).
struct UnpairedInterval {
  int n_a = 0;       // values of A used (finite and > 0)
  int n_b = 0;       // values of B used
  double df = kNaN;  // Welch–Satterthwaite degrees of freedom (fractional)
  double se = kNaN;  // standard error of mean(ln B) − mean(ln A)
  RatioInterval ratio;
  bool ok() const { return n_a >= 2 && n_b >= 2; }
};

// With s² the sample variances of the logs (n − 1 in the denominator) and v = s² / n per side:
//   se = √(v_a + v_b),  df = (v_a + v_b)² / (v_a² / (n_a − 1) + v_b² / (n_b − 1)),
//   ln ratio = mean ln B − mean ln A ± t(level, df) · se.
// Values that are not finite or not above 0 are left out. Fewer than 2 values on a side: the
// counts are set and the rest is NaN (no interval). Both sides without any spread (se = 0):
// df is n_a + n_b − 2 and the interval is the estimate alone (any t times 0 is 0).
UnpairedInterval WelchLogInterval(const std::vector<double>& a_values,
                                  const std::vector<double>& b_values, double level);

// What the interval of a row is on:
//   absolute: the target's per-round figures in A and in B;
//   baseline: the target's per-round ratios to the campaign's baseline (target / baseline in the
//             same round) in A and in B, which cancels what moved both alike between the runs.
enum class IntervalBasis { kAbsolute, kBaseline };
const char* IntervalBasisName(IntervalBasis b);  // "absolute", "baseline"

// --basis: auto takes the baseline basis when A and B name the same baseline (for every target
// but the baseline itself, whose rows stay absolute), absolute otherwise.
enum class BasisChoice { kAuto, kAbsolute, kBaseline };
std::optional<BasisChoice> ParseBasisChoice(const std::string& flag);  // "auto", ...

// The baseline both records name (`campaign.baseline`), or "" when either names none or they
// differ.
std::string SharedBaseline(const nlohmann::json& a, const nlohmann::json& b);

// B's `stats` (confidence, margin) where present and in range, else StatsRule's defaults.
StatsRule RecordStatsRule(const nlohmann::json& record);

// How rows are judged: --confidence, --margin (nullopt: B's record's, see RecordStatsRule) and
// --basis.
struct CompareRule {
  std::optional<double> confidence;
  std::optional<double> margin;
  BasisChoice basis = BasisChoice::kAuto;
};

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

// The noise-floor rule's judgement of the medians: context beside the interval's verdict.
struct NoiseRule {
  double delta = kNaN;         // b.median / a.median - 1; NaN when n/a
  double threshold = kNaN;     // the fraction |delta| was judged against
  std::string threshold_from;  // "noise floor of A", "spread of B", ...; "" when none
  ComparisonVerdict verdict = ComparisonVerdict::kNotApplicable;  // never kInconclusive
  std::string reason;                                             // one line a person can check
};

// One figure of one row.
struct MetricDelta {
  SideFigure a, b;
  double delta = kNaN;  // b.median / a.median - 1 (shown beside the interval); NaN when n/a
  IntervalBasis basis = IntervalBasis::kAbsolute;
  UnpairedInterval interval;
  ComparisonVerdict verdict =
      ComparisonVerdict::kNotApplicable;  // the interval's, against the margin
  std::string reason;                     // one line a person can check
  NoiseRule noise_rule;
};

// The interval's verdict against `margin`, by the figure's direction: the whole interval beyond
// the margin on the better side is better, on the worse side worse; inside ±margin close;
// reaching across an edge of it inconclusive; no interval n/a (JudgeInterval's rule).
ComparisonVerdict JudgeUnpaired(const UnpairedInterval& interval, Metric metric, double margin);

// The noise-floor rule (docs/compare.md, "The noise-floor rule"), in this order:
//   1. a side without a valid figure, or A's median not above 0: n/a;
//   2. threshold = the larger noise floor of A and B; without either, the larger spread of the
//      two cells, unless both have one round only (then n/a: nothing to judge against);
//   3. |delta| <= threshold: close;
//   4. the ranges (min to max) of A and B overlap: close;
//   5. otherwise better or worse, by the metric's direction.
NoiseRule JudgeByNoiseFloor(const SideFigure& a, const SideFigure& b, Metric metric);

// A row of the comparison: one target in one cell (pair, scenario, load level), matched by name.
enum class Presence { kBoth, kOnlyA, kOnlyB };
struct CellDelta {
  std::string pair;  // "" outside fleet campaigns
  std::string scenario;
  std::string load_level;  // "c64", "r5000"
  std::string target;
  Presence presence = Presence::kBoth;
  std::array<MetricDelta, kMetricCount> metrics;  // figures of the side(s) present
  const MetricDelta& of(Metric m) const { return metrics[static_cast<int>(m)]; }
};

// What the header says about one side.
struct CompareSide {
  std::string source;  // where it was read: "file a.json", "bench.db", "coordinator host:7700"
  std::string campaign;
  std::string created_at;
  std::string state;
  std::string generated_by;
  // The mode the campaign's gates were in: "enforce", "warn" (reasons recorded, no window
  // refused), or "" for a record that does not say (the run of record's gates_in_force).
  std::string gates_mode;
  struct PairFloors {
    std::string pair;
    std::array<std::optional<double>, kMetricCount> floors;
  };
  std::vector<PairFloors> noise_floors;  // one entry per pair, as the record lists them
  std::vector<std::string> hosts;        // "server: AMD EPYC, 2 cores, kernel 6.1.0", distinct
};

struct RecordComparison {
  CompareSide a, b;
  StatsRule rule;  // the confidence and margin every row was judged at
  BasisChoice basis = BasisChoice::kAuto;
  std::string baseline;  // the baseline of the baseline basis; "" when every row is absolute
  std::vector<CellDelta> cells;  // A's cells and targets in A's order, then what only B has
};

// Compares two runs of record that ParseRunOfRecord accepted. Medians come from the cells'
// SUMMARYs; the intervals from `windows` (the newest attempt of each matrix window, when valid).
// Missing or null figures count as no valid value; nothing is dropped: a target or cell on one
// side only is a kOnlyA/kOnlyB row. BasisChoice::kBaseline without a shared baseline judges every
// row on the absolute basis (the CLI refuses that choice first).
RecordComparison CompareRecords(const nlohmann::json& a, const nlohmann::json& b,
                                const std::string& a_source, const std::string& b_source,
                                const CompareRule& rule = {});

struct CompareOptions {
  std::vector<Metric> metrics = {kComparedMetrics.begin(), kComparedMetrics.end()};
  std::optional<double> fail_on_regression_pct;  // percent, e.g. 5 for 5%
  int width = kDefaultTextWidth;  // text: the columns every line fits (common/text_table.h)
};

// The metrics `--fail-on-regression` judges: req/s and CPU µs/request, of those selected.
std::vector<Metric> GatedMetrics(const std::vector<Metric>& selected);

struct Regression {
  std::string cell;  // "hello · c8 · nginx" (pair first in a fleet campaign)
  std::string pair, scenario, load_level, target;
  Metric metric = Metric::kRps;
  double change = kNaN;  // the interval's estimate - 1: -0.06 is B at 94% of A
  std::string reason;
};
// Rows present in both whose gated metric's verdict is worse (the whole interval beyond the
// margin on the worse side) and whose estimate is worse than A by more than `pct` percent:
// (1 - estimate) * 100 > pct for req/s, (estimate - 1) * 100 > pct for CPU µs/request.
std::vector<Regression> FindRegressions(const RecordComparison& c,
                                        const std::vector<Metric>& selected, double pct);

// The terminal's text (header lines wrapped, a table per cell with a row per target and figure,
// every line within options.width), Markdown (a row per target, a column per figure), or
// {"format": "benchlab-compare", "version": 2, ...}.
std::string FormatCompareText(const RecordComparison& c, const CompareOptions& options);
std::string FormatCompareMarkdown(const RecordComparison& c, const CompareOptions& options);
std::string FormatCompareJson(const RecordComparison& c, const CompareOptions& options);

// Parses a run of record's text and checks `format` and `version`; `origin` (a file name, a
// campaign) starts every error message: "b.json: not a run of record (format \"x\")".
Result<nlohmann::json> ParseRunOfRecord(const std::string& text, const std::string& origin);

// "c64" -> "64 connections", "r5000" -> "open loop at 5,000 req/s" (as the report says).
std::string LoadLevelWords(const std::string& level);

}  // namespace benchlab

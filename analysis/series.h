// A campaign series (docs/history.md): the campaigns of one `series`, oldest first, and for each
// (pair, scenario, load level, target) the chosen figure of each campaign with its interval. What
// `benchlab history` prints and what change points are looked for in. Pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/gate_audit.h"
#include "analysis/interval.h"
#include "analysis/report_format.h"
#include "analysis/stats.h"
#include "common/text_table.h"

namespace benchlab {

// One campaign of a series.
struct SeriesCampaign {
  int64_t id = 0;
  std::string name;
  std::string created_at;
  std::string state;
  // Each target's version: its label when the campaign gives one ([labels] or --label), else as
  // its windows recorded it (the catalogue's `version` command), several different ones joined
  // with ", "; a target with neither is absent.
  std::map<std::string, std::string> versions;
  // The campaign's [labels] (coordinator/campaign.h): the targets whose version is a label.
  std::map<std::string, std::string> labels;
};

// One line of a series: a target in a cell, on one pair ("" outside fleets).
struct SeriesKey {
  std::string pair;
  std::string scenario;
  std::string load_level;
  std::string target;
  auto operator<=>(const SeriesKey&) const = default;
};
std::string SeriesKeyLabel(const SeriesKey& key);  // "json c64 nginx" ("on srv-1" when a pair)

// A campaign's figure on one line: its valid matrix windows' values (newest attempts), their
// median, and the t interval on the mean of their logarithms (the geometric mean), at the
// series' confidence. A line has a point only for campaigns with at least one valid value.
struct HistoryPoint {
  size_t campaign = 0;         // index into Series::campaigns
  std::vector<double> values;  // one per valid round, in round order
  Summary summary;
  RatioInterval interval;  // estimate = geometric mean; low/high NaN with fewer than 2 values
};

struct Series {
  std::string name;
  Metric metric = Metric::kRps;
  double confidence = 0.95;
  std::vector<SeriesCampaign> campaigns;
  std::map<SeriesKey, std::vector<HistoryPoint>> lines;
  // Every gate's refusals over all the series' campaigns against their valid windows, each
  // window judged within its own campaign's cell (analysis/gate_audit.h).
  std::vector<GateAudit> gate_audit;
};

// The series of `metric` over `inputs` (one campaign each, oldest first).
Series BuildSeries(const std::string& name, const std::vector<ReportInput>& inputs, Metric metric,
                   double confidence = 0.95);

// Which lines `benchlab history` shows: every field that is set must match.
struct SeriesFilter {
  std::string scenario;
  std::string load_level;
  std::string target;
  bool Matches(const SeriesKey& key) const;
};

// A table per line: campaign, when, median, the interval, n, the target's version ("(label)"
// after one the campaign's labels gave); every line within `width` columns (the version is cut
// first, then the creation time loses its time of day, then campaign names are cut, then n and
// the interval are left out).
std::string FormatHistoryText(const Series& series, const SeriesFilter& filter = {},
                              int width = kDefaultTextWidth);
// The same as Markdown, for an issue or a pull request: a heading, then a table per line and the
// gate audit as a list.
std::string FormatHistoryMarkdown(const Series& series, const SeriesFilter& filter = {});
// {"series", "figure", "better", "confidence", "campaigns": [{"id", "name", "created_at", "state",
// "versions", "labels"}], "gate_audit": [...as the run of record's...], "lines": [{..., "points":
// [{"campaign_id", "campaign", "n", "median", "estimate", "low", "high", "values"}]}]}; NaN is
// null.
std::string FormatHistoryJson(const Series& series, const SeriesFilter& filter = {});

}  // namespace benchlab

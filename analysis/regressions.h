// Change points of a campaign series (docs/history.md): every line of a Series handed to the
// detector (analysis/changepoint.h), each change found named by its campaigns and versions, and
// written for people (text), for a pull request (Markdown) or for tools (JSON). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/changepoint.h"
#include "analysis/series.h"

namespace benchlab {

// One change point on one line of a series.
struct SeriesChange {
  SeriesKey key;
  Metric metric = Metric::kRps;
  ChangePoint point;  // point.index is into the line's points, not the series' campaigns
  const SeriesCampaign* before = nullptr;     // the last campaign before the change
  const SeriesCampaign* after = nullptr;      // the first campaign after it
  const SeriesCampaign* old_build = nullptr;  // the campaign a re-measurement takes as the old
  // "suspected": found in the history and not re-measured (docs/history.md, "Confirmation by
  // re-measurement", says what is and is not built).
  std::string status = "suspected";
};

struct ChangeSearch {
  ChangePointOptions options;  // better is set per figure
  int64_t since_id = 0;        // only changes whose first campaign after has an id >= this
};

// Every line of `series`: the campaigns' medians with their rounds, oldest first. The pointers
// of each SeriesChange point into `series`, which must outlive the result.
std::vector<SeriesChange> FindSeriesChanges(const Series& series, const ChangeSearch& search,
                                            const SeriesFilter& filter = {});

// A heading and one paragraph per change.
std::string FormatChangesText(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns);
// A comment for a pull request: a table of the changes, each campaign linked to its dashboard
// page when `dashboard` is the dashboard's base URL ("https://lab.example/"; "" for no links).
std::string FormatChangesMarkdown(const std::string& series,
                                  const std::vector<SeriesChange>& changes, int campaigns,
                                  const std::string& dashboard);
std::string FormatChangesJson(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns);

}  // namespace benchlab

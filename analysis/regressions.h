// Change points of a campaign series (docs/history.md): every line of a Series handed to the
// detector (analysis/changepoint.h), each change found named by its campaigns and versions, and
// written for people (text), for a pull request (Markdown) or for tools (JSON). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/changepoint.h"
#include "analysis/series.h"

namespace benchlab {

// What re-measuring a change showed (docs/history.md, "Confirmation by re-measurement"): the old
// build against the new one, interleaved on one pair by a campaign of its own.
struct Remeasurement {
  std::string campaign;         // the campaign that measured them; "" when none could run
  int64_t old_campaign_id = 0;  // whose build was measured as the old one
  int64_t new_campaign_id = 0;  // and as the new one
  int rounds = 0;
  RatioInterval interval;  // new / old at the level of its last look; NaN without two rounds
  std::string detail;      // the decision's reason, or why nothing was measured
  int64_t id = 0;          // its confirmations row: `benchlab bisect --change ID`
};

// One change point on one line of a series.
struct SeriesChange {
  SeriesKey key;
  Metric metric = Metric::kRps;
  ChangePoint point;  // point.index is into the line's points, not the series' campaigns
  const SeriesCampaign* before = nullptr;     // the last campaign before the change
  const SeriesCampaign* after = nullptr;      // the first campaign after it
  const SeriesCampaign* old_build = nullptr;  // the campaign a re-measurement takes as the old
  // "suspected": found in the history, not re-measured; else the re-measurement's status:
  // "measuring", "confirmed", "false alarm", "undecided", "unconfirmed" or "not measured".
  std::string status = "suspected";
  std::optional<Remeasurement> remeasured;
  // A regression that re-measurement confirmed: what `benchlab regressions --fail-on regression`
  // fails on.
  bool ConfirmedRegression() const {
    return status == "confirmed" && point.direction == ChangeDirection::kRegression;
  }
};

struct ChangeSearch {
  ChangePointOptions options;  // better is set per figure
  int64_t since_id = 0;        // only changes whose first campaign after has an id >= this
};

// Every line of `series`: the campaigns' medians with their rounds, oldest first. The pointers
// of each SeriesChange point into `series`, which must outlive the result.
std::vector<SeriesChange> FindSeriesChanges(const Series& series, const ChangeSearch& search,
                                            const SeriesFilter& filter = {});

// The change that re-measurement looks at on each line: the newest campaign's build is compared
// with the build before the line's last change point, so only the last change of a line is
// re-measured (an earlier one lies between two builds neither of which is the newest). Indexes
// into `changes`, in order.
std::vector<size_t> LastChangeOfEachLine(const std::vector<SeriesChange>& changes);

// A ratio with its interval as signed percentages: "+6.1% [+2.3%, +10.0%]" ("-" where NaN).
std::string FormatChangeSize(const RatioInterval& size);

// A heading and one paragraph per change, wrapped at spaces to `width` columns.
std::string FormatChangesText(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns, int width = kDefaultTextWidth);
// A comment for a pull request: a table of the changes, each campaign linked to its dashboard
// page when `dashboard` is the dashboard's base URL ("https://lab.example/"; "" for no links).
std::string FormatChangesMarkdown(const std::string& series,
                                  const std::vector<SeriesChange>& changes, int campaigns,
                                  const std::string& dashboard);
std::string FormatChangesJson(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns);

}  // namespace benchlab

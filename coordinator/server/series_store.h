// A campaign series read from a store (docs/history.md): its campaigns, oldest first, each with
// its report's input, and the change points found in it. What `benchlab history`, `benchlab
// regressions` and the dashboard's GET /api/v1/series/NAME (docs/api.md) share.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/regressions.h"
#include "analysis/report_format.h"
#include "analysis/series.h"
#include "common/status.h"
#include "coordinator/store.h"

namespace benchlab {

struct StoredSeries {
  std::vector<CampaignRow> campaigns;  // oldest first
  std::vector<ReportInput> inputs;     // one per campaign, in the same order
};

// The campaigns of `series` with their report inputs. NotFound for a series the store does not
// hold, naming the series it holds: "no series \"nighty\" in lab.db (series: nightly, other)",
// where " in lab.db" is `store_name` when it is given.
Result<StoredSeries> LoadStoredSeries(Store& store, const std::string& series,
                                      const std::string& store_name = "");

// The change points of `series` (built from `store`'s campaigns) with each one's status from the
// re-measurements recorded for it (coordinator/server/confirmation.h), searched with the newest
// campaign's margin (SeriesMargin; search.options.margin is replaced). Every reader of a series'
// changes goes through here, so they all see the same changes and statuses.
Result<std::vector<SeriesChange>> FindStoredSeriesChanges(Store& store, const Series& series,
                                                          ChangeSearch search,
                                                          const SeriesFilter& filter = {});

// The changes of a series that a re-measurement looks at (docs/history.md, "Confirmation by
// re-measurement"): the last change of each line and figure (LastChangeOfEachLine) that has an
// old build and that `judged` does not accept, grouped by line and campaigns so that one campaign
// re-measures every figure of a line that changed at the same campaign.
struct RemeasureGroup {
  std::vector<SeriesChange> changes;       // one per figure: the same line, after and old build
  const CampaignRow* old_build = nullptr;  // into ChangesToRemeasure::stored.campaigns
  const ReportInput* old_input = nullptr;  // and its report input
};
struct ChangesToRemeasure {
  StoredSeries stored;        // newest last
  std::deque<Series> series;  // one per figure; the changes point into these
  std::vector<RemeasureGroup> groups;
  const CampaignRow& newest() const { return stored.campaigns.back(); }
  const ReportInput& newest_input() const { return stored.inputs.back(); }
};
// `judged(change)`: true when the change needs no re-measurement (one was recorded that stands).
// No groups when the series has fewer than two campaigns or its newest file does not parse (nothing
// a series search could use). Held by pointer: the groups point into it.
Result<std::unique_ptr<ChangesToRemeasure>> FindChangesToRemeasure(
    Store& store, const std::string& series, const std::vector<Metric>& figures,
    const std::function<bool(const SeriesChange&)>& judged);

// "<newest>-remeasure-<k>" with the first k the store holds no campaign of, at most 64
// characters: the name of a re-measurement campaign after the series' newest campaign.
Result<std::string> FreshRemeasureName(Store& store, const std::string& newest);

}  // namespace benchlab

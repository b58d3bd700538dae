// A campaign series read from a store (docs/history.md): its campaigns, oldest first, each with
// its report's input, and the change points found in it. What `benchlab history`, `benchlab
// regressions` and the dashboard's GET /api/v1/series/NAME (docs/api.md) share.
#pragma once

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

}  // namespace benchlab

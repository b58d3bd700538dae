#include "coordinator/server/series_store.h"

#include <set>
#include <utility>

namespace benchlab {

Result<StoredSeries> LoadStoredSeries(Store& store, const std::string& series,
                                      const std::string& store_name) {
  auto rows = store.ListSeries(series);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    std::set<std::string> names;
    if (auto all = store.ListCampaigns(); all.ok()) {
      for (const CampaignRow& c : *all) names.insert(c.series);
    }
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound(
        "no series \"" + series + "\"" + (store_name.empty() ? "" : " in " + store_name) +
        (known.empty() ? " (it holds no campaign)" : " (series: " + known + ")"));
  }
  StoredSeries out;
  for (const CampaignRow& row : *rows) {
    auto input = LoadReportInput(store, row.name);
    if (!input.ok()) return input.status();
    out.inputs.push_back(std::move(*input));
  }
  out.campaigns = std::move(*rows);
  return out;
}

std::vector<SeriesChange> FindStoredSeriesChanges([[maybe_unused]] Store& store,
                                                  const Series& series, const ChangeSearch& search,
                                                  const SeriesFilter& filter) {
  std::vector<SeriesChange> changes = FindSeriesChanges(series, search, filter);
  // hook: each change's status from its re-measurements in `store` is set here.
  return changes;
}

}  // namespace benchlab

#include "coordinator/server/series_store.h"

#include <set>
#include <utility>

#include "coordinator/server/confirmation.h"

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

Result<std::vector<SeriesChange>> FindStoredSeriesChanges(Store& store, const Series& series,
                                                          ChangeSearch search,
                                                          const SeriesFilter& filter) {
  if (!series.campaigns.empty()) {
    auto newest = store.FindCampaignById(series.campaigns.back().id);
    if (!newest.ok()) return newest.status();
    if (*newest) search.options.margin = SeriesMargin(**newest);
  }
  std::vector<SeriesChange> changes = FindSeriesChanges(series, search, filter);
  auto recorded = store.ListConfirmations(series.name);
  if (!recorded.ok()) return recorded.status();
  ApplyConfirmations(changes, *recorded);
  return changes;
}

}  // namespace benchlab

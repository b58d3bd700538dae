#include "coordinator/server/series_store.h"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "coordinator/campaign.h"
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

Result<std::unique_ptr<ChangesToRemeasure>> FindChangesToRemeasure(
    Store& store, const std::string& series, const std::vector<Metric>& figures,
    const std::function<bool(const SeriesChange&)>& judged) {
  auto out = std::make_unique<ChangesToRemeasure>();
  auto rows = store.ListSeries(series);
  if (!rows.ok()) return rows.status();
  if (rows->size() < 2) return out;
  if (!ParseCampaignText(rows->back().spec_toml, rows->back().source, "").ok()) return out;
  auto stored = LoadStoredSeries(store, series);
  if (!stored.ok()) return stored.status();
  out->stored = std::move(stored).value();
  using GroupKey = std::tuple<SeriesKey, int64_t, int64_t>;
  std::map<GroupKey, RemeasureGroup> groups;
  for (Metric metric : figures) {
    out->series.push_back(BuildSeries(series, out->stored.inputs, metric));
    auto changes = FindStoredSeriesChanges(store, out->series.back(), {});
    if (!changes.ok()) return changes.status();
    for (size_t i : LastChangeOfEachLine(*changes)) {
      const SeriesChange& c = (*changes)[i];
      if (c.old_build == nullptr || c.after == nullptr || judged(c)) continue;
      RemeasureGroup& group = groups[{c.key, c.after->id, c.old_build->id}];
      group.changes.push_back(c);
      for (size_t k = 0; k < out->stored.campaigns.size(); ++k) {
        if (out->stored.campaigns[k].id != c.old_build->id) continue;
        group.old_build = &out->stored.campaigns[k];
        group.old_input = &out->stored.inputs[k];
      }
    }
  }
  for (auto& [key, group] : groups) {
    if (group.old_build != nullptr) out->groups.push_back(std::move(group));
  }
  return out;
}

Result<std::string> FreshRemeasureName(Store& store, const std::string& newest) {
  for (int k = 1; k < 1000; ++k) {
    const std::string suffix = "-remeasure-" + std::to_string(k);
    std::string name = newest.substr(0, 64 - suffix.size()) + suffix;
    auto found = store.FindCampaign(name);
    if (!found.ok()) return found.status();
    if (!*found) return name;
  }
  return Status::AlreadyExists("no free re-measurement name after " + newest);
}

}  // namespace benchlab

#include "coordinator/server/series_views.h"

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/bisect_report.h"
#include "analysis/figure.h"
#include "analysis/profile_report.h"
#include "analysis/regressions.h"
#include "analysis/series.h"
#include "common/config_fields.h"
#include "coordinator/server/bisect_plan.h"
#include "coordinator/server/series_store.h"

namespace benchlab {
namespace {

Status CheckViewSeries(const std::string& series) {
  if (config::IsName(series)) return Status::Ok();
  return Status::InvalidArgument(
      "series: expected a name (lowercase letters, digits and -, 1 to 64 characters), got \"" +
      series.substr(0, 64) + (series.size() > 64 ? "...\"" : "\""));
}

Status CheckViewLength(const std::string& name, const std::string& value, size_t limit) {
  if (value.size() <= limit) return Status::Ok();
  return Status::InvalidArgument(name + ": expected at most " + std::to_string(limit) +
                                 " bytes, got " + std::to_string(value.size()));
}

// --cell "SCENARIO" or "SCENARIO/LEVEL", and --target, as a filter of a series' lines.
Result<SeriesFilter> ViewFilter(const std::string& cell, const std::string& target,
                                QueryFields fields) {
  const std::string cell_name = QueryFieldName(fields, "--cell", "cell");
  if (Status st = CheckViewLength(cell_name, cell, kMaxQueryFieldBytes); !st.ok()) return st;
  if (Status st = CheckViewLength(QueryFieldName(fields, "--target", "target"), target,
                                  kMaxQueryFieldBytes);
      !st.ok()) {
    return st;
  }
  SeriesFilter filter;
  filter.target = target;
  if (cell.empty()) return filter;
  const size_t slash = cell.find('/');
  filter.scenario = cell.substr(0, slash);
  if (slash != std::string::npos) filter.load_level = cell.substr(slash + 1);
  if (filter.scenario.empty() || (slash != std::string::npos && filter.load_level.empty())) {
    return Status::InvalidArgument(
        cell_name + ": expected SCENARIO or SCENARIO/LEVEL such as json/c64, got \"" + cell + "\"");
  }
  return filter;
}

Status CheckViewFormat(const std::string& format, QueryFields fields) {
  if (format == "text" || format == "md" || format == "json") return Status::Ok();
  return Status::InvalidArgument(QueryFieldName(fields, "--format", "format") +
                                 ": expected text, md or json, got \"" + format.substr(0, 64) +
                                 "\"");
}

Status CheckViewWidth(int width, QueryFields fields) {
  if (width >= kMinTextWidth && width <= kMaxTextWidth) return Status::Ok();
  return Status::InvalidArgument(
      QueryFieldName(fields, "--width", "width") + ": expected " + std::to_string(kMinTextWidth) +
      " to " + std::to_string(kMaxTextWidth) + " columns, got " + std::to_string(width));
}

// Where the CPU of a confirmed change went (docs/profiles.md): the re-measurement's old build
// (its baseline) against the new one in the change's cell, when that campaign was profiled.
struct ConfirmedChangeProfile {
  size_t change = 0;  // index into the changes
  std::vector<CellProfileDiff> cells;
};

std::vector<ConfirmedChangeProfile> ProfilesOfConfirmedChanges(
    Store& store, const std::vector<SeriesChange>& changes) {
  std::vector<ConfirmedChangeProfile> out;
  for (size_t i = 0; i < changes.size(); ++i) {
    const SeriesChange& c = changes[i];
    if (c.status != "confirmed" || !c.remeasured || c.remeasured->campaign.empty()) continue;
    auto profiles = LoadCampaignProfiles(store, c.remeasured->campaign);
    if (!profiles.ok()) continue;  // not profiled (or gone): the change stands on its figures
    ProfileSelection cell;
    cell.scenario = c.key.scenario;
    cell.load_level = c.key.load_level;
    auto cells = DiffTargets(*profiles, profiles->campaign.baseline, c.key.target, cell);
    if (cells.ok()) out.push_back({i, std::move(*cells)});
  }
  return out;
}

std::string ConfirmedProfilesText(const std::vector<SeriesChange>& changes,
                                  const std::vector<ConfirmedChangeProfile>& profiles,
                                  bool markdown) {
  if (profiles.empty()) return "";
  std::string out = markdown ? "\n### Where the CPU went\n\n" : "\nWhere the CPU went\n\n";
  for (const ConfirmedChangeProfile& p : profiles) {
    const SeriesChange& c = changes[p.change];
    const std::string what = SeriesKeyLabel(c.key) + " (" + MetricName(c.metric) + "), " +
                             c.remeasured->campaign + ": " + ProfileHeadline(p.cells.front());
    out += (markdown ? "**" + what + "**\n\n" : what + "\n");
    out += markdown ? FormatProfileDiffMarkdown(p.cells, 10) : FormatProfileDiffText(p.cells, 10);
    out += "\n";
  }
  return out;
}

// The newest bisection of each confirmed change that has one (`benchlab bisect --change ID`,
// docs/methodology.md "Bisection"): where it stands, or the commit it found.
struct ChangeBisection {
  size_t change = 0;  // index into the changes
  BisectionRecord record;
};

Result<std::vector<ChangeBisection>> BisectionsOfChanges(Store& store,
                                                         const std::vector<SeriesChange>& changes) {
  std::vector<ChangeBisection> out;
  bool any = false;
  for (const SeriesChange& c : changes) any = any || (c.remeasured && c.remeasured->id > 0);
  if (!any) return out;
  auto rows = store.ListBisections();
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < changes.size(); ++i) {
    const SeriesChange& c = changes[i];
    if (!c.remeasured || c.remeasured->id <= 0) continue;
    int64_t newest = 0;
    for (const BisectionRow& row : *rows) {
      if (row.change_id == c.remeasured->id) newest = std::max(newest, row.id);
    }
    if (newest == 0) continue;
    auto record = store.LoadBisection(newest);
    if (!record.ok()) return record.status();
    if (record->has_value()) out.push_back({i, std::move(**record)});
  }
  return out;
}

std::string BisectionsText(Store& store, const std::vector<SeriesChange>& changes,
                           const std::vector<ChangeBisection>& bisections, bool markdown) {
  if (bisections.empty()) return "";
  std::string out = markdown ? "\n### Bisections\n\n" : "\nBisections\n\n";
  for (const ChangeBisection& b : bisections) {
    const SeriesChange& c = changes[b.change];
    const std::string what = SeriesKeyLabel(c.key) + " (" + MetricName(c.metric) + "), change " +
                             std::to_string(c.remeasured->id);
    out += markdown ? "- **" + what + "**: " + CulpritLine(b.record) + "\n"
                    : what + ": " + CulpritLine(b.record) + "\n";
    // The culprit against its parent, when that look was profiled.
    out += CulpritProfileText(store, b.record, /*in_report=*/true, markdown);
  }
  return out;
}

}  // namespace

Status CheckHistoryQuery(const HistoryQuery& query, QueryFields fields) {
  if (Status st = CheckViewSeries(query.series); !st.ok()) return st;
  if (auto filter = ViewFilter(query.cell, query.target, fields); !filter.ok()) {
    return filter.status();
  }
  if (!ParseFigure(query.figure)) {
    return FigureError(QueryFieldName(fields, "--figure", "figure"), query.figure.substr(0, 64));
  }
  if (Status st = CheckViewFormat(query.format, fields); !st.ok()) return st;
  return CheckViewWidth(query.width, fields);
}

Status CheckRegressionsQuery(const RegressionsQuery& query, QueryFields fields) {
  if (Status st = CheckViewSeries(query.series); !st.ok()) return st;
  if (!query.since.empty() && !config::IsName(query.since)) {
    return Status::InvalidArgument(
        QueryFieldName(fields, "--since", "since") +
        ": expected a campaign's name (lowercase letters, digits and -, 1 to 64 characters), "
        "got \"" +
        query.since.substr(0, 64) + (query.since.size() > 64 ? "...\"" : "\""));
  }
  if (auto filter = ViewFilter(query.cell, query.target, fields); !filter.ok()) {
    return filter.status();
  }
  const std::string figure = QueryFieldName(fields, "--figure", "figures");
  if (query.figures.empty() || query.figures.size() > kMaxQueryFigures) {
    return Status::InvalidArgument(figure + ": expected 1 to " + std::to_string(kMaxQueryFigures) +
                                   " figures, got " + std::to_string(query.figures.size()));
  }
  for (const std::string& f : query.figures) {
    if (!ParseFigure(f)) return FigureError(figure, f.substr(0, 64));
  }
  if (Status st = CheckViewFormat(query.format, fields); !st.ok()) return st;
  const std::string dashboard = QueryFieldName(fields, "--dashboard", "dashboard");
  if (Status st = CheckViewLength(dashboard, query.dashboard, kMaxDashboardUrlBytes); !st.ok()) {
    return st;
  }
  for (char ch : query.dashboard) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      return Status::InvalidArgument(dashboard + ": expected a URL without control characters");
    }
  }
  return CheckViewWidth(query.width, fields);
}

Result<std::string> HistoryText(Store& store, const HistoryQuery& query,
                                const std::string& store_name) {
  if (Status st = CheckHistoryQuery(query); !st.ok()) return st;
  auto filter = ViewFilter(query.cell, query.target, QueryFields::kOptions);
  if (!filter.ok()) return filter.status();
  auto loaded = LoadStoredSeries(store, query.series, store_name);
  if (!loaded.ok()) return loaded.status();
  const Series series = BuildSeries(query.series, loaded->inputs, *ParseFigure(query.figure));
  if (query.format == "json") return FormatHistoryJson(series, *filter);
  if (query.format == "md") return FormatHistoryMarkdown(series, *filter);
  return FormatHistoryText(series, *filter, query.width);
}

Result<RegressionsView> RegressionsText(Store& store, const RegressionsQuery& query,
                                        const std::string& store_name) {
  if (Status st = CheckRegressionsQuery(query); !st.ok()) return st;
  auto filter = ViewFilter(query.cell, query.target, QueryFields::kOptions);
  if (!filter.ok()) return filter.status();
  auto loaded = LoadStoredSeries(store, query.series, store_name);
  if (!loaded.ok()) return loaded.status();
  ChangeSearch search;
  if (!query.since.empty()) {
    for (const CampaignRow& row : loaded->campaigns) {
      if (row.name == query.since) search.since_id = row.id;
    }
    if (search.since_id == 0) {
      return Status::InvalidArgument("--since: no campaign \"" + query.since + "\" in series \"" +
                                     query.series + "\"");
    }
  }
  std::deque<Series> kept;  // the changes point into their series
  std::vector<SeriesChange> changes;
  for (const std::string& figure : query.figures) {
    kept.push_back(BuildSeries(query.series, loaded->inputs, *ParseFigure(figure)));
    auto found = FindStoredSeriesChanges(store, kept.back(), search, *filter);
    if (!found.ok()) return found.status();
    for (SeriesChange& c : *found) changes.push_back(std::move(c));
  }
  const int campaigns = static_cast<int>(loaded->campaigns.size());
  const std::vector<ConfirmedChangeProfile> profiles = ProfilesOfConfirmedChanges(store, changes);
  auto bisections = BisectionsOfChanges(store, changes);
  if (!bisections.ok()) return bisections.status();
  RegressionsView view;
  if (query.format == "md") {
    view.text = FormatChangesMarkdown(query.series, changes, campaigns, query.dashboard) +
                BisectionsText(store, changes, *bisections, true) +
                ConfirmedProfilesText(changes, profiles, true);
  } else if (query.format == "json") {
    view.text = FormatChangesJson(query.series, changes, campaigns);
    if (!profiles.empty() || !bisections->empty()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(view.text);
      for (const ConfirmedChangeProfile& p : profiles) {
        j["changes"][p.change]["profile"] = {
            {"headline", ProfileHeadline(p.cells.front())},
            {"cells", nlohmann::ordered_json::parse(ProfileDiffJson(p.cells).dump())}};
      }
      for (const ChangeBisection& b : *bisections) {
        nlohmann::json record = BisectionJson(b.record);
        record.erase("steps");
        record["steps"] = b.record.steps.size();
        record["line"] = CulpritLine(b.record);
        if (auto cells = CulpritProfileDiff(store, b.record); cells.ok()) {
          record["profile"] = {{"headline", ProfileHeadline(cells->front())},
                               {"cells", ProfileDiffJson(*cells)}};
        }
        j["changes"][b.change]["bisection"] = nlohmann::ordered_json::parse(record.dump());
      }
      view.text = j.dump(2) + "\n";
    }
  } else {
    view.text = FormatChangesText(query.series, changes, campaigns, query.width) +
                BisectionsText(store, changes, *bisections, false) +
                ConfirmedProfilesText(changes, profiles, false);
  }
  for (const SeriesChange& c : changes) {
    view.confirmed_regression = view.confirmed_regression || c.ConfirmedRegression();
  }
  return view;
}

}  // namespace benchlab

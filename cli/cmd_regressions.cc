// `benchlab regressions SERIES --db FILE`: the change points of a campaign series, per line and
// figure, with what re-measuring them showed, as text, a pull request's Markdown or JSON
// (docs/history.md). Reads the database, never writes it. With --fail-on regression, exit status
// 3 (kExitRegression) when a regression is confirmed (a suspected one is not enough), as `benchlab
// compare --fail-on-regression` does.
#include <cstdio>
#include <deque>
#include <memory>

#include "analysis/profile_report.h"
#include "analysis/regressions.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/series_input.h"
#include "cli/text_width.h"
#include "coordinator/server/series_store.h"

namespace benchlab {
namespace {

struct RegressionsArgs {
  std::string series;
  std::string db;
  std::string since;  // a campaign of the series
  std::vector<std::string> figures = {"rps", "cpu"};
  std::string cell;
  std::string target;
  std::string format = "text";
  std::string dashboard;
  std::string output;
  std::string fail_on;  // "regression": kExitRegression on a confirmed regression
};

// Where the CPU of a confirmed change went (docs/profiles.md): the re-measurement's old build
// (its baseline) against the new one in the change's cell, when that campaign was profiled.
struct ChangeProfile {
  size_t change = 0;  // index into the changes
  std::vector<CellProfileDiff> cells;
};

std::vector<ChangeProfile> ProfilesOfConfirmed(Store& store,
                                               const std::vector<SeriesChange>& changes) {
  std::vector<ChangeProfile> out;
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

std::string ProfilesText(const std::vector<SeriesChange>& changes,
                         const std::vector<ChangeProfile>& profiles, bool markdown) {
  if (profiles.empty()) return "";
  std::string out = markdown ? "\n### Where the CPU went\n\n" : "\nWhere the CPU went\n\n";
  for (const ChangeProfile& p : profiles) {
    const SeriesChange& c = changes[p.change];
    const std::string what = SeriesKeyLabel(c.key) + " (" + MetricName(c.metric) + "), " +
                             c.remeasured->campaign + ": " + ProfileHeadline(p.cells.front());
    out += (markdown ? "**" + what + "**\n\n" : what + "\n");
    out += markdown ? FormatProfileDiffMarkdown(p.cells, 10) : FormatProfileDiffText(p.cells, 10);
    out += "\n";
  }
  return out;
}

int RunRegressions(const RegressionsArgs& args) {
  std::vector<Metric> metrics;
  for (const std::string& figure : args.figures) {
    auto metric = ParseFigure(figure);
    if (!metric)
      return CommandError("regressions", kExitUsage, FigureError("--figure", figure).message());
    metrics.push_back(*metric);
  }
  SeriesFilter filter;
  if (int bad = ParseSeriesFilter("regressions", args.cell, args.target, filter)) return bad;
  SeriesInput loaded;
  if (int bad = LoadSeriesInput("regressions", args.db, args.series, loaded)) return bad;
  ChangeSearch search;
  if (!args.since.empty()) {
    for (const CampaignRow& row : loaded.campaigns) {
      if (row.name == args.since) search.since_id = row.id;
    }
    if (search.since_id == 0) {
      return CommandError(
          "regressions", kExitUsage,
          "--since: no campaign \"" + args.since + "\" in series \"" + args.series + "\"");
    }
  }
  std::deque<Series> kept;  // the changes point into their series
  std::vector<SeriesChange> changes;
  for (Metric metric : metrics) {
    kept.push_back(BuildSeries(args.series, loaded.inputs, metric));
    auto found = FindStoredSeriesChanges(*loaded.store, kept.back(), search, filter);
    if (!found.ok()) return CommandError("regressions", kExitFailure, found.status().message());
    for (SeriesChange& c : *found) changes.push_back(std::move(c));
  }
  const int campaigns = static_cast<int>(loaded.campaigns.size());
  const std::vector<ChangeProfile> profiles = ProfilesOfConfirmed(*loaded.store, changes);
  std::string text;
  if (args.format == "md") {
    text = FormatChangesMarkdown(args.series, changes, campaigns, args.dashboard) +
           ProfilesText(changes, profiles, true);
  } else if (args.format == "json") {
    text = FormatChangesJson(args.series, changes, campaigns);
    if (!profiles.empty()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
      for (const ChangeProfile& p : profiles) {
        j["changes"][p.change]["profile"] = {
            {"headline", ProfileHeadline(p.cells.front())},
            {"cells", nlohmann::ordered_json::parse(ProfileDiffJson(p.cells).dump())}};
      }
      text = j.dump(2) + "\n";
    }
  } else {
    text = FormatChangesText(args.series, changes, campaigns, OutputWidth()) +
           ProfilesText(changes, profiles, false);
  }
  if (int bad = WriteCommandOutput("regressions", text, args.output)) return bad;
  if (args.fail_on == "regression") {
    for (const SeriesChange& c : changes) {
      if (c.ConfirmedRegression()) return kExitRegression;
    }
  }
  return kExitOk;
}

}  // namespace

CommandRunner AddRegressionsCommand(CLI::App& root) {
  auto args = std::make_shared<RegressionsArgs>();
  CLI::App* cmd = root.add_subcommand(
      "regressions", "Change points of a series, per cell, target and figure (docs/history.md).");
  cmd->add_option("series", args->series, "the series (see `benchlab history`)")->required();
  cmd->add_option("--db", args->db, "the SQLite database to read (never written)")->required();
  cmd->add_option("--since", args->since,
                  "only changes first seen at this campaign of the series or later");
  cmd->add_option("--figure", args->figures,
                  "figures to search: rps, cpu, p99 or a figure's full name (p50_us, ...); "
                  "repeat it or use commas; default rps and cpu")
      ->delimiter(',');
  cmd->add_option("--cell", args->cell, "only this cell: SCENARIO or SCENARIO/LEVEL (json/c64)");
  cmd->add_option("--target", args->target, "only this target");
  AddFormatOption(cmd, &args->format, {"text", "md", "json"},
                  "text (default), md (a PR comment; markdown is the same) or json");
  AddWidthOption(cmd);
  cmd->add_option("--dashboard", args->dashboard,
                  "md: link each campaign to its page under this dashboard URL");
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  cmd->add_option("--fail-on", args->fail_on,
                  "regression: exit 3 when a regression is confirmed by re-measurement (a "
                  "suspected, unconfirmed or withdrawn one does not fail)")
      ->check(CLI::IsMember({"regression"}));
  return [args] { return RunRegressions(*args); };
}

}  // namespace benchlab

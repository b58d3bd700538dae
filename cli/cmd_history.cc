// `benchlab history SERIES --db FILE`: a figure of every line of a campaign series over its
// campaigns, with intervals (docs/history.md). Reads the database, never writes it.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "analysis/series.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct HistoryArgs {
  std::string series;
  std::string db;
  std::string cell;  // "SCENARIO" or "SCENARIO/LEVEL"
  std::string target;
  std::string figure = "rps";
  bool json = false;
};

int RunHistory(const HistoryArgs& args) {
  auto metric = ParseFigure(args.figure);
  if (!metric) {
    return CommandError("history", 2,
                        "--figure: expected rps, cpu, p99 or a report metric such as p50_us, "
                        "got \"" +
                            args.figure + "\"");
  }
  SeriesFilter filter;
  filter.target = args.target;
  if (!args.cell.empty()) {
    const size_t slash = args.cell.find('/');
    filter.scenario = args.cell.substr(0, slash);
    if (slash != std::string::npos) filter.load_level = args.cell.substr(slash + 1);
    if (filter.scenario.empty() || (slash != std::string::npos && filter.load_level.empty())) {
      return CommandError("history", 2,
                          "--cell: expected SCENARIO or SCENARIO/LEVEL such as json/c64, got \"" +
                              args.cell + "\"");
    }
  }
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) {
    return CommandError("history", 2, "--db: no database at " + args.db);
  }
  auto store = Store::Open(args.db);
  if (!store.ok()) return CommandError("history", 1, store.status().message());
  auto rows = (*store)->ListSeries(args.series);
  if (!rows.ok()) return CommandError("history", 1, rows.status().message());
  if (rows->empty()) {
    std::set<std::string> names;
    if (auto all = (*store)->ListCampaigns(); all.ok()) {
      for (const CampaignRow& c : *all) names.insert(c.series);
    }
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return CommandError(
        "history", 2,
        "no series \"" + args.series + "\" in " + args.db +
            (known.empty() ? " (it holds no campaign)" : " (series: " + known + ")"));
  }
  std::vector<ReportInput> inputs;
  for (const CampaignRow& row : *rows) {
    auto input = LoadReportInput(**store, row.name);
    if (!input.ok()) return CommandError("history", 1, input.status().message());
    inputs.push_back(std::move(*input));
  }
  const Series series = BuildSeries(args.series, inputs, *metric);
  const std::string text =
      args.json ? FormatHistoryJson(series, filter) : FormatHistoryText(series, filter);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : CommandError("history", 1, "writing to stdout failed");
}

}  // namespace

CommandRunner AddHistoryCommand(CLI::App& root) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* cmd = root.add_subcommand(
      "history", "A figure over the campaigns of a series, per cell and target, with intervals.");
  cmd->add_option("series", args->series,
                  "the series: the campaigns whose `series` key (else their file's name) is this")
      ->required();
  cmd->add_option("--db", args->db, "the SQLite database to read (never written)")->required();
  cmd->add_option("--cell", args->cell, "only this cell: SCENARIO or SCENARIO/LEVEL (json/c64)");
  cmd->add_option("--target", args->target, "only this target");
  cmd->add_option("--figure", args->figure,
                  "rps (default), cpu (CPU per request), p99, or a report metric (p50_us, ...)");
  cmd->add_flag("--json", args->json, "JSON instead of tables");
  return [args] { return RunHistory(*args); };
}

}  // namespace benchlab

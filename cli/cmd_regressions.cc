// `benchlab regressions SERIES --db FILE`: the change points of a campaign series, per line and
// figure, as text, a pull request's Markdown or JSON (docs/history.md). Reads the database, never
// writes it.
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "analysis/regressions.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "coordinator/store.h"

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
};

int Write(const std::string& text, const std::string& output) {
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : CommandError("regressions", 1, "writing stdout failed");
  }
  // Beside the destination and renamed over it: a reader never sees half a comment.
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return CommandError("regressions", 2, "--output: cannot write " + output);
    out << text;
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      return CommandError("regressions", 1, "writing " + output + " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, output, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    return CommandError("regressions", 1, "writing " + output + ": " + ec.message());
  }
  return 0;
}

int RunRegressions(const RegressionsArgs& args) {
  std::vector<Metric> metrics;
  for (const std::string& figure : args.figures) {
    auto metric = ParseFigure(figure);
    if (!metric) {
      return CommandError("regressions", 2,
                          "--figure: expected rps, cpu, p99 or a report metric such as p50_us, "
                          "got \"" +
                              figure + "\"");
    }
    metrics.push_back(*metric);
  }
  SeriesFilter filter;
  filter.target = args.target;
  if (!args.cell.empty()) {
    const size_t slash = args.cell.find('/');
    filter.scenario = args.cell.substr(0, slash);
    if (slash != std::string::npos) filter.load_level = args.cell.substr(slash + 1);
    if (filter.scenario.empty() || (slash != std::string::npos && filter.load_level.empty())) {
      return CommandError("regressions", 2,
                          "--cell: expected SCENARIO or SCENARIO/LEVEL such as json/c64, got \"" +
                              args.cell + "\"");
    }
  }
  if (!std::filesystem::exists(args.db)) {
    return CommandError("regressions", 2, "--db: no database at " + args.db);
  }
  auto store = Store::Open(args.db);
  if (!store.ok()) return CommandError("regressions", 1, store.status().message());
  auto rows = (*store)->ListSeries(args.series);
  if (!rows.ok()) return CommandError("regressions", 1, rows.status().message());
  if (rows->empty()) {
    std::set<std::string> names;
    if (auto all = (*store)->ListCampaigns(); all.ok()) {
      for (const CampaignRow& c : *all) names.insert(c.series);
    }
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return CommandError(
        "regressions", 2,
        "no series \"" + args.series + "\" in " + args.db +
            (known.empty() ? " (it holds no campaign)" : " (series: " + known + ")"));
  }
  ChangeSearch search;
  if (!args.since.empty()) {
    for (const CampaignRow& row : *rows) {
      if (row.name == args.since) search.since_id = row.id;
    }
    if (search.since_id == 0) {
      return CommandError(
          "regressions", 2,
          "--since: no campaign \"" + args.since + "\" in series \"" + args.series + "\"");
    }
  }
  std::vector<ReportInput> inputs;
  for (const CampaignRow& row : *rows) {
    auto input = LoadReportInput(**store, row.name);
    if (!input.ok()) return CommandError("regressions", 1, input.status().message());
    inputs.push_back(std::move(*input));
  }
  std::deque<Series> kept;  // the changes point into their series
  std::vector<SeriesChange> changes;
  for (Metric metric : metrics) {
    kept.push_back(BuildSeries(args.series, inputs, metric));
    for (SeriesChange& c : FindSeriesChanges(kept.back(), search, filter)) {
      changes.push_back(std::move(c));
    }
  }
  const int campaigns = static_cast<int>(rows->size());
  std::string text;
  if (args.format == "markdown") {
    text = FormatChangesMarkdown(args.series, changes, campaigns, args.dashboard);
  } else if (args.format == "json") {
    text = FormatChangesJson(args.series, changes, campaigns);
  } else {
    text = FormatChangesText(args.series, changes, campaigns);
  }
  return Write(text, args.output);
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
                  "figures to search (repeatable): rps, cpu, p99 or a report metric; default rps "
                  "and cpu");
  cmd->add_option("--cell", args->cell, "only this cell: SCENARIO or SCENARIO/LEVEL (json/c64)");
  cmd->add_option("--target", args->target, "only this target");
  cmd->add_option("--format", args->format, "text (default), markdown (a PR comment) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  cmd->add_option("--dashboard", args->dashboard,
                  "markdown: link each campaign to its page under this dashboard URL");
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  return [args] { return RunRegressions(*args); };
}

}  // namespace benchlab

// `benchlab history SERIES --db FILE`: a figure of every line of a campaign series over its
// campaigns, with intervals (docs/history.md). Reads the database, never writes it.
#include <cstdio>
#include <memory>

#include "analysis/series.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/series_input.h"
#include "cli/text_width.h"

namespace benchlab {
namespace {

struct HistoryArgs {
  std::string series;
  std::string db;
  std::string cell;  // "SCENARIO" or "SCENARIO/LEVEL"
  std::string target;
  std::string figure = "rps";
  std::string format = "text";
  bool json = false;  // --json: --format json
};

int RunHistory(const HistoryArgs& args) {
  auto metric = ParseFigure(args.figure);
  if (!metric)
    return CommandError("history", kExitUsage, FigureError("--figure", args.figure).message());
  SeriesFilter filter;
  if (int bad = ParseSeriesFilter("history", args.cell, args.target, filter)) return bad;
  SeriesInput loaded;
  if (int bad = LoadSeriesInput("history", args.db, args.series, loaded)) return bad;
  const Series series = BuildSeries(args.series, loaded.inputs, *metric);
  const std::string format = args.json ? "json" : args.format;
  const std::string text = format == "json" ? FormatHistoryJson(series, filter)
                           : format == "md" ? FormatHistoryMarkdown(series, filter)
                                            : FormatHistoryText(series, filter, OutputWidth());
  return WriteCommandOutput("history", text, "");
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
                  "rps (default), cpu (CPU µs per request), p99, or a figure's full name "
                  "(p50_us, cpu_us_per_request, ...)");
  CLI::Option* format =
      AddFormatOption(cmd, &args->format, {"text", "md", "json"},
                      "text (default: tables), md (markdown is the same) or json");
  cmd->add_flag("--json", args->json, "the same as --format json")->excludes(format);
  AddWidthOption(cmd);
  return [args] { return RunHistory(*args); };
}

}  // namespace benchlab

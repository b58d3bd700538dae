// `benchlab history SERIES --db FILE | --coordinator HOST:PORT`: a figure of every line of a
// campaign series over its campaigns, with intervals (docs/history.md). Reads the database, never
// writes it, or asks a running coordinator (GetHistory), which makes the same text from its own:
// HistoryText (coordinator/server/series_views.h) either way.
#include <cstdio>
#include <memory>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/series_input.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "coordinator/server/series_views.h"

namespace benchlab {
namespace {

struct HistoryArgs {
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  HistoryQuery query;
  bool json = false;  // --json: --format json
};

// The history from the coordinator at `address`: its GetHistory reply's text.
int HistoryFromCoordinator(const HistoryArgs& args, const HistoryQuery& query, std::string& text) {
  v1::GetHistoryRequest req;
  req.set_series(query.series);
  req.set_cell(query.cell);
  req.set_target(query.target);
  req.set_figure(query.figure);
  req.set_format(query.format);
  req.set_width(query.width);
  v1::GetHistoryReply reply;
  if (Status called = CallCoordinator(args.coordinator, args.tls, 30,
                                      &v1::Coordinator::Stub::GetHistory, req, &reply);
      !called.ok()) {
    return CommandError("history", called);
  }
  text = reply.text();
  return kExitOk;
}

int RunHistory(const HistoryArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    return CommandError("history", kExitUsage,
                        "give exactly one of --db FILE and --coordinator HOST:PORT");
  }
  HistoryQuery query = args.query;
  if (args.json) query.format = "json";
  query.width = OutputWidth();
  if (Status bad = CheckHistoryQuery(query); !bad.ok()) return CommandError("history", bad);
  std::string text;
  if (!args.coordinator.empty()) {
    if (int failed = HistoryFromCoordinator(args, query, text)) return failed;
  } else {
    std::unique_ptr<Store> store;
    if (int bad = OpenExistingStore("history", args.db, store)) return bad;
    auto made = HistoryText(*store, query, args.db);
    if (!made.ok()) return CommandError("history", made.status());
    text = std::move(*made);
  }
  return WriteCommandOutput("history", text, "");
}

}  // namespace

CommandRunner AddHistoryCommand(CLI::App& root) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* cmd = root.add_subcommand(
      "history", "A figure over the campaigns of a series, per cell and target, with intervals.");
  cmd->add_option("series", args->query.series,
                  "the series: the campaigns whose `series` key (else their file's name) is this")
      ->required();
  CLI::Option* db =
      cmd->add_option("--db", args->db, "the SQLite database to read (never written)");
  cmd->add_option("--coordinator", args->coordinator,
                  "instead of --db: ask the coordinator at HOST:PORT, which reads its database")
      ->excludes(db);
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--cell", args->query.cell,
                  "only this cell: SCENARIO or SCENARIO/LEVEL (json/c64)");
  cmd->add_option("--target", args->query.target, "only this target");
  cmd->add_option("--figure", args->query.figure,
                  "rps (default), cpu (CPU µs per request), p99, or a figure's full name "
                  "(p50_us, cpu_us_per_request, ...)");
  CLI::Option* format =
      AddFormatOption(cmd, &args->query.format, {"text", "md", "json"},
                      "text (default: tables), md (markdown is the same) or json");
  cmd->add_flag("--json", args->json, "the same as --format json")->excludes(format);
  AddWidthOption(cmd);
  return [args] { return RunHistory(*args); };
}

}  // namespace benchlab

// `benchlab regressions SERIES --db FILE | --coordinator HOST:PORT`: the change points of a
// campaign series, per line and figure, with what re-measuring them showed, as text, a pull
// request's Markdown or JSON (docs/history.md). Reads the database, never writes it, or asks a
// running coordinator (GetRegressions), which makes the same text from its own: RegressionsText
// (coordinator/server/series_views.h) either way. With --fail-on regression, exit status 3
// (kExitRegression) when a regression is confirmed (a suspected one is not enough), as `benchlab
// compare --fail-on-regression` does.
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

struct RegressionsArgs {
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  RegressionsQuery query;
  std::string output;
  std::string fail_on;  // "regression": kExitRegression on a confirmed regression
};

// The changes from the coordinator at `address`: its GetRegressions reply.
int RegressionsFromCoordinator(const RegressionsArgs& args, const RegressionsQuery& query,
                               RegressionsView& view) {
  v1::GetRegressionsRequest req;
  req.set_series(query.series);
  req.set_since(query.since);
  for (const std::string& figure : query.figures) req.add_figures(figure);
  req.set_cell(query.cell);
  req.set_target(query.target);
  req.set_format(query.format);
  req.set_dashboard(query.dashboard);
  req.set_width(query.width);
  v1::GetRegressionsReply reply;
  if (Status called = CallCoordinator(args.coordinator, args.tls, 30,
                                      &v1::Coordinator::Stub::GetRegressions, req, &reply);
      !called.ok()) {
    return CommandError("regressions", called);
  }
  view.text = reply.text();
  view.confirmed_regression = reply.confirmed_regression();
  return kExitOk;
}

int RunRegressions(const RegressionsArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    return CommandError("regressions", kExitUsage,
                        "give exactly one of --db FILE and --coordinator HOST:PORT");
  }
  RegressionsQuery query = args.query;
  query.width = OutputWidth();
  if (Status bad = CheckRegressionsQuery(query); !bad.ok()) return CommandError("regressions", bad);
  RegressionsView view;
  if (!args.coordinator.empty()) {
    if (int failed = RegressionsFromCoordinator(args, query, view)) return failed;
  } else {
    std::unique_ptr<Store> store;
    if (int bad = OpenExistingStore("regressions", args.db, store)) return bad;
    auto made = RegressionsText(*store, query, args.db);
    if (!made.ok()) return CommandError("regressions", made.status());
    view = std::move(*made);
  }
  if (int bad = WriteCommandOutput("regressions", view.text, args.output)) return bad;
  if (args.fail_on == "regression" && view.confirmed_regression) return kExitRegression;
  return kExitOk;
}

}  // namespace

CommandRunner AddRegressionsCommand(CLI::App& root) {
  auto args = std::make_shared<RegressionsArgs>();
  CLI::App* cmd = root.add_subcommand(
      "regressions", "Change points of a series, per cell, target and figure (docs/history.md).");
  cmd->add_option("series", args->query.series, "the series (see `benchlab history`)")->required();
  CLI::Option* db =
      cmd->add_option("--db", args->db, "the SQLite database to read (never written)");
  cmd->add_option("--coordinator", args->coordinator,
                  "instead of --db: ask the coordinator at HOST:PORT, which reads its database")
      ->excludes(db);
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--since", args->query.since,
                  "only changes first seen at this campaign of the series or later");
  cmd->add_option("--figure", args->query.figures,
                  "figures to search: rps, cpu, p99 or a figure's full name (p50_us, ...); "
                  "repeat it or use commas; default rps and cpu")
      ->delimiter(',');
  cmd->add_option("--cell", args->query.cell,
                  "only this cell: SCENARIO or SCENARIO/LEVEL (json/c64)");
  cmd->add_option("--target", args->query.target, "only this target");
  AddFormatOption(cmd, &args->query.format, {"text", "md", "json"},
                  "text (default), md (a PR comment; markdown is the same) or json");
  AddWidthOption(cmd);
  cmd->add_option("--dashboard", args->query.dashboard,
                  "md: link each campaign to its page under this dashboard URL");
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  cmd->add_option("--fail-on", args->fail_on,
                  "regression: exit 3 when a regression is confirmed by re-measurement (a "
                  "suspected, unconfirmed or withdrawn one does not fail)")
      ->check(CLI::IsMember({"regression"}));
  return [args] { return RunRegressions(*args); };
}

}  // namespace benchlab

// `benchlab remeasure SERIES --db FILE`: re-measures, on the embedded lab, each suspected change
// of a series that no re-measurement has judged (docs/history.md, "Confirmation by
// re-measurement"). `benchlab run` does the same after every campaign unless --no-remeasure; this
// command is for a series whose newest campaign ran without it, or whose re-measurement was cut
// off. With --coordinator instead, the coordinator that ran the series looks at it now
// (RemeasureSeries, docs/history.md "On a coordinator") and queues what it re-measures.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/remeasure.h"
#include "cli/tls_options.h"

namespace benchlab {
namespace {

struct RemeasureArgs {
  std::string series;
  std::string db;
  std::string coordinator;  // HOST:PORT: the coordinator looks, instead of an embedded lab
  TlsFiles tls;             // --tls-*: mutual TLS to the coordinator
  int rounds = RemeasureSettings{}.max_rounds;
  bool rounds_given = false;
  std::string campaign_dir = ".";
  bool keep_work_dir = false;
  std::string progress = "auto";
};

// Asks the coordinator to look at the series, and prints what it did for each line.
int RunOnCoordinator(const RemeasureArgs& args) {
  // A malformed address or unreadable TLS files: bad input (cli/commands.h, ExitCode).
  auto coordinator = ConnectCoordinator(args.coordinator, args.tls);
  if (!coordinator.ok()) {
    return CommandError("remeasure", kExitUsage, std::string(coordinator.status().message()));
  }
  v1::RemeasureSeriesRequest req;
  req.set_series(args.series);
  if (args.rounds_given) req.set_max_rounds(args.rounds);
  v1::RemeasureSeriesReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 30);
  grpc::Status status = (*coordinator)->RemeasureSeries(&ctx, req, &reply);
  if (!status.ok()) {
    return CommandError("remeasure", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  if (reply.lines().empty()) {
    std::printf("series %s: no suspected change awaits re-measurement\n", args.series.c_str());
  }
  for (const auto& line : reply.lines()) {
    if (line.status() == "measuring") {
      std::printf(
          "series %s: %s: queued campaign %s; `benchlab regressions` shows the outcome "
          "once it ends\n",
          args.series.c_str(), line.line().c_str(), line.campaign().c_str());
    } else {
      std::printf("series %s: %s: %s: %s\n", args.series.c_str(), line.line().c_str(),
                  line.status().c_str(), line.detail().c_str());
    }
  }
  return kExitOk;
}

int RunRemeasure(const RemeasureArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    return CommandError("remeasure", kExitUsage,
                        "expected one of --db FILE (re-measure on the embedded lab) and "
                        "--coordinator HOST:PORT (the coordinator that ran the series)");
  }
  if (!args.coordinator.empty()) return RunOnCoordinator(args);
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) {
    return CommandError("remeasure", kExitUsage, "--db: no database at " + args.db);
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(args.campaign_dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return CommandError("remeasure", kExitUsage,
                        "--campaign-dir: no directory " + args.campaign_dir);
  }
  RemeasureJob job;
  job.command = "remeasure";
  job.db = args.db;
  job.series = args.series;
  job.settings.max_rounds = args.rounds;
  job.campaign_dir = dir.string();
  job.keep_work_dir = args.keep_work_dir;
  job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
  return RemeasureSuspectedChanges(job);
}

}  // namespace

CommandRunner AddRemeasureCommand(CLI::App& root) {
  auto args = std::make_shared<RemeasureArgs>();
  CLI::App* cmd = root.add_subcommand(
      "remeasure",
      "Re-measure a series' suspected changes: the build before each change against the newest, "
      "interleaved on one cell, until confirmed or withdrawn; on the embedded lab (--db), or "
      "queued by the coordinator that ran the series (--coordinator) (docs/history.md).");
  cmd->add_option("series", args->series, "the series (see `benchlab history`)")->required();
  cmd->add_option("--db", args->db, "the SQLite database of the series: re-measure here");
  cmd->add_option("--coordinator", args->coordinator,
                  "the coordinator's HOST:PORT: it re-measures on the series' own agents");
  cmd->add_option("--rounds", args->rounds,
                  "the most rounds a re-measurement takes before it calls a change unconfirmed "
                  "(with --coordinator: its --remeasure-rounds unless given)")
      ->check(CLI::Range(RemeasureSettings{}.min_rounds, 1000))
      ->capture_default_str()
      ->each([args](const std::string&) { args->rounds_given = true; });
  cmd->add_option("--campaign-dir", args->campaign_dir,
                  "the directory that fills {campaign_dir} in the stored campaign files")
      ->capture_default_str();
  cmd->add_option("--progress", args->progress, "auto, tty, plain or off, as for `benchlab run`")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  cmd->add_flag("--keep-work-dir", args->keep_work_dir, "keep the lab's logs and run directories");
  AddTlsOptions(cmd, &args->tls);
  return [args] { return RunRemeasure(*args); };
}

}  // namespace benchlab

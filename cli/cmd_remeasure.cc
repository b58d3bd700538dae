// `benchlab remeasure SERIES --db FILE`: re-measures, on the embedded lab, each suspected change
// of a series that no re-measurement has judged (docs/history.md, "Confirmation by
// re-measurement"). `benchlab run` does the same after every campaign unless --no-remeasure; this
// command is for a series whose newest campaign ran without it, or whose re-measurement was cut
// off.
#include <filesystem>
#include <memory>

#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/remeasure.h"

namespace benchlab {
namespace {

struct RemeasureArgs {
  std::string series;
  std::string db;
  int rounds = RemeasureSettings{}.max_rounds;
  std::string campaign_dir = ".";
  bool keep_work_dir = false;
  std::string progress = "auto";
};

int RunRemeasure(const RemeasureArgs& args) {
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) {
    return CommandError("remeasure", 2, "--db: no database at " + args.db);
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(args.campaign_dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return CommandError("remeasure", 2, "--campaign-dir: no directory " + args.campaign_dir);
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
      "Re-measure a series' suspected changes on the embedded lab: the build before each change "
      "against the newest, interleaved on one cell, until confirmed or withdrawn "
      "(docs/history.md).");
  cmd->add_option("series", args->series, "the series (see `benchlab history`)")->required();
  cmd->add_option("--db", args->db, "the SQLite database of the series")->required();
  cmd->add_option("--rounds", args->rounds,
                  "the most rounds a re-measurement takes before it calls a change unconfirmed")
      ->check(CLI::Range(RemeasureSettings{}.min_rounds, 1000))
      ->capture_default_str();
  cmd->add_option("--campaign-dir", args->campaign_dir,
                  "the directory that fills {campaign_dir} in the stored campaign files")
      ->capture_default_str();
  cmd->add_option("--progress", args->progress, "auto, tty, plain or off, as for `benchlab run`")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  cmd->add_flag("--keep-work-dir", args->keep_work_dir, "keep the lab's logs and run directories");
  return [args] { return RunRemeasure(*args); };
}

}  // namespace benchlab

// `benchlab bisect CAMPAIGN.toml --target T --good REV --bad REV --db FILE`: finds the commit
// that made a target slower on one cell, on the embedded lab (cli/bisect_run.h; docs/cli.md;
// docs/methodology.md, "Bisection"). `--status ID` prints a stored search.
#include <cstdio>
#include <memory>

#include "cli/bisect_run.h"
#include "cli/command_error.h"
#include "cli/commands.h"

namespace benchlab {
namespace {

struct BisectArgs {
  BisectJob job;
  std::string progress = "auto";
  std::string format = "text";
  int64_t status_id = 0;
};

int RunBisectCommand(BisectArgs& args) {
  args.job.json = args.format == "json";
  if (args.status_id > 0) {
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--status needs --db FILE");
    return ShowBisection(args.job.db, args.status_id, args.job.json);
  }
  if (args.job.resume > 0) {
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--resume needs --db FILE");
    args.job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
    return RunBisection(args.job);
  }
  if (args.job.change > 0) {
    // The change names the line, the figure and both builds.
    for (const auto& [flag, value] :
         {std::pair{"CAMPAIGN", &args.job.campaign_path}, std::pair{"--target", &args.job.target},
          std::pair{"--good", &args.job.good}, std::pair{"--bad", &args.job.bad},
          std::pair{"--cell", &args.job.cell}}) {
      if (!value->empty()) {
        return CommandError("bisect", kExitUsage,
                            std::string(flag) + ": not with --change, which names it");
      }
    }
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--change needs --db FILE");
  } else {
    for (const auto& [flag, value] :
         {std::pair{"CAMPAIGN", &args.job.campaign_path}, std::pair{"--target", &args.job.target},
          std::pair{"--good", &args.job.good}, std::pair{"--bad", &args.job.bad},
          std::pair{"--db", &args.job.db}}) {
      if (value->empty()) {
        return CommandError(
            "bisect", kExitUsage,
            std::string(flag) + " is required (or --change ID, or --status ID, with --db)");
      }
    }
  }
  args.job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
  return RunBisection(args.job);
}

}  // namespace

CommandRunner AddBisectCommand(CLI::App& root) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bisect",
      "Find the commit that made a target worse on one cell: each commit between --good and "
      "--bad is built by the server agent and measured against both ends, interleaved, until "
      "it is like one of them, on the embedded lab (docs/methodology.md, \"Bisection\").");
  cmd->add_option("campaign", args->job.campaign_path,
                  "the campaign file: its target (with `source` and `build`), cell and settings");
  cmd->add_option("--target", args->job.target, "the target to bisect");
  cmd->add_option("--good", args->job.good, "a revision of the target's source that is good");
  cmd->add_option("--bad", args->job.bad, "a later revision on its first-parent line that is bad");
  cmd->add_option("--cell", args->job.cell,
                  "SCENARIO/LEVEL, such as json/c64; needed when the campaign has several");
  cmd->add_option("--figure", args->job.figure, "rps, cpu, p99 or a figure's full name")
      ->capture_default_str();
  args->job.figure = "cpu";
  cmd->add_option("--db", args->job.db, "the SQLite database the search and its windows go to");
  cmd->add_option("--max-rounds", args->job.max_rounds,
                  "rounds at one commit before it is called undecided")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  cmd->add_option("--change", args->job.change,
                  "bisect this confirmed change (`benchlab regressions` lists them): its line, "
                  "figure and the versions its builds recorded, revisions of the target's source")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--campaign-dir", args->job.campaign_dir,
                  "with --change: the directory that fills {campaign_dir} in the stored file")
      ->capture_default_str();
  cmd->add_option("--resume", args->job.resume,
                  "go on with the stored bisection of this id from its last decided step")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--status", args->status_id, "print the stored bisection of this id and exit")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", args->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--progress", args->progress, "auto, tty, plain or off, as for `benchlab run`")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  cmd->add_flag("--keep-work-dir", args->job.keep_work_dir,
                "keep the labs' logs and run directories");
  return [args] { return RunBisectCommand(*args); };
}

}  // namespace benchlab

// `benchlab run`: the embedded lab. Starts a coordinator and two agents (server and load) as
// separate processes on this machine, talking gRPC over loopback on ports the kernel picks; runs
// the campaign; prints each window with live progress (cli/progress.h) and a summary; stops
// every process it started.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/campaign_check.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/embedded_lab.h"
#include "cli/labels.h"
#include "cli/progress.h"
#include "cli/remeasure.h"
#include "cli/text_width.h"
#include "common/sysenv.h"
#include "coordinator/campaign.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::string campaign;
  std::string db = "benchlab.db";
  std::string name;  // overrides the campaign's name
  bool keep_work_dir = false;
  bool resume = false;              // continue the campaign of this name already in --db
  std::string gates;                // "warn" | "enforce": overrides the file's [gates] mode
  bool profile = false;             // --profile: profile every window
  std::string progress = "auto";    // auto | tty | plain | off (cli/progress.h)
  std::vector<std::string> labels;  // --label TARGET=VALUE, added to the text's [labels]
  bool no_remeasure = false;        // leave the series' suspected changes suspected
  int remeasure_rounds = RemeasureSettings{}.max_rounds;
  std::string fail_on;  // "invalid": kExitInvalid when a window's newest attempt is invalid
};

int RunLab(const RunArgs& args) {
  auto parsed = ParseCampaignFile(args.campaign);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  Campaign campaign = std::move(parsed).value();
  // Before any process starts: a target that cannot start would fail its every window.
  if (auto problems = LocalCampaignProblems(campaign, RealSysEnv()); !problems.empty()) {
    ErrorLine(FormatCampaignProblems(campaign.source_name, problems));
    return kExitUsage;
  }
  std::string spec_text = campaign.text;
  if (!args.name.empty()) {
    auto renamed = RenameCampaignText(campaign, args.name);
    if (!renamed.ok()) {
      std::fprintf(stderr, "benchlab run: --name: %s\n", renamed.status().message().c_str());
      return kExitUsage;
    }
    spec_text = *renamed;
    campaign.name = args.name;
  }
  // Labels are part of the text submitted, so a resumed run must be given the same ones.
  auto labelled = LabelCampaignText(campaign, spec_text, args.labels);
  if (!labelled.ok()) {
    std::fprintf(stderr, "benchlab run: --label %s\n", labelled.status().message().c_str());
    return kExitUsage;
  }
  if (*labelled != spec_text) {
    spec_text = std::move(*labelled);
    campaign.labels = CampaignTextLabels(spec_text);
  }
  int total_windows = 0;
  {
    // A name already in the database is bad input: say so before starting anything.
    auto store = Store::Open(args.db);
    if (!store.ok()) return CommandError("run", kExitFailure, store.status().message());
    auto existing = (*store)->FindCampaign(campaign.name);
    if (!existing.ok()) return CommandError("run", kExitFailure, existing.status().message());
    if (args.resume) {
      if (!*existing) {
        std::fprintf(stderr, "benchlab run: --resume: no campaign \"%s\" in %s to resume\n",
                     campaign.name.c_str(), args.db.c_str());
        return kExitUsage;
      }
      // The store holds the text with env values redacted (docs/campaign.md); the file has them.
      auto redacted = RedactCampaignText(spec_text, campaign.source_name);
      if (!redacted.ok() || (*existing)->spec_toml != *redacted) {
        std::fprintf(stderr,
                     "benchlab run: --resume: campaign \"%s\" in %s was submitted from a "
                     "different file or with other --label values; resume it with the file and "
                     "the --label values it was run with\n",
                     campaign.name.c_str(), args.db.c_str());
        return kExitUsage;
      }
      total_windows = (*existing)->total_windows;
    } else if (*existing) {
      std::fprintf(stderr,
                   "benchlab run: campaign \"%s\" already exists in %s; give another --db or "
                   "--name\n",
                   campaign.name.c_str(), args.db.c_str());
      return kExitUsage;
    }
  }

  LabJob job;
  job.campaign = std::move(campaign);
  job.submit_text = args.resume ? "" : spec_text;
  job.total_windows = total_windows;
  job.db = args.db;
  job.keep_work_dir = args.keep_work_dir;
  job.verb = "run";
  job.gates_mode = args.gates;
  job.profile = args.profile;
  job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
  job.fail_on_invalid = args.fail_on == "invalid";
  const int status = RunOnEmbeddedLab(job);
  // Invalid windows are a measured campaign all the same: its series' changes are re-measured.
  if ((status != kExitOk && status != kExitInvalid) || args.no_remeasure) return status;
  // The campaign is the newest of its series: what the series' history now suspects is measured
  // again before anyone reads it as a regression (docs/history.md).
  RemeasureJob remeasure;
  remeasure.db = args.db;
  remeasure.series = job.campaign.series;
  remeasure.settings.max_rounds = args.remeasure_rounds;
  remeasure.campaign_dir = job.campaign.campaign_dir;
  remeasure.keep_work_dir = args.keep_work_dir;
  remeasure.progress = job.progress;
  const int remeasured = RemeasureSuspectedChanges(remeasure);
  return remeasured != kExitOk ? remeasured : status;
}

}  // namespace

CommandRunner AddRunCommand(CLI::App& root) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = root.add_subcommand(
      "run",
      "Run a campaign on the embedded lab: a coordinator, a server agent and a load agent "
      "on this machine, as separate processes over loopback gRPC.");
  cmd->add_option("campaign", args->campaign, "campaign file (TOML, see docs/campaign.md)")
      ->required();
  cmd->add_option("--db", args->db, "SQLite database the windows are stored in")
      ->capture_default_str();
  cmd->add_option("--name", args->name, "store the campaign under this name instead of its own");
  cmd->add_option("--gates", args->gates,
                  "warn: record every gate's reasons without invalidating windows; enforce: "
                  "judge them whatever the file's [gates] mode says")
      ->check(CLI::IsMember({"warn", "enforce"}));
  cmd->add_flag("--profile", args->profile,
                "sample the server's target and side services over every window's measured "
                "interval (a CPU profile per window, docs/profiles.md), whatever the file's "
                "[profile] enabled says");
  cmd->add_option("--progress", args->progress,
                  "progress on stdout: tty (a status line redrawn in place), plain (a progress "
                  "line after each window, no control characters), off, or auto: tty when "
                  "stdout is a terminal, else plain")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  AddWidthOption(cmd);
  cmd->add_option("--label", args->labels,
                  "TARGET=VALUE: the version of TARGET this campaign measures (a release or a "
                  "git commit), added to the file's [labels]; the history shows it as the "
                  "target's version. Repeatable; a target the file labels already is refused")
      ->allow_extra_args(false)  // one value each time: `--label a=1 campaign.toml`
      ->take_all()
      ->type_name("TARGET=VALUE");
  cmd->add_flag("--resume", args->resume,
                "continue the campaign of this name in --db where it stopped: windows stored are "
                "kept, a window cut off is measured again");
  cmd->add_flag("--no-remeasure", args->no_remeasure,
                "do not re-measure the series' suspected changes after the campaign (by "
                "default, each one no re-measurement has judged is measured again: the old "
                "build against the new, docs/history.md)");
  cmd->add_option("--remeasure-rounds", args->remeasure_rounds,
                  "the most rounds a re-measurement takes before it calls a change unconfirmed")
      ->check(CLI::Range(RemeasureSettings{}.min_rounds, 1000))
      ->capture_default_str();
  cmd->add_option(
         "--fail-on", args->fail_on,
         "invalid: exit 4 when every window was measured and the gates refused one (its newest "
         "attempt is invalid); a campaign not finished or a window not measured is 1 "
         "whatever this says (docs/cli.md, \"Exit status\")")
      ->check(CLI::IsMember({"invalid"}));
  cmd->add_flag("--keep-work-dir", args->keep_work_dir,
                "keep the lab's logs and run directories even when every window was measured");
  return [args] { return RunLab(*args); };
}

}  // namespace benchlab

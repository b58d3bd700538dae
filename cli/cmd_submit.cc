// `benchlab submit`: sends a campaign file to a coordinator, and with --wait follows it.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/labels.h"
#include "cli/progress.h"
#include "cli/signals.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "coordinator/campaign.h"

namespace benchlab {
namespace {

struct SubmitArgs {
  std::string campaign;
  std::string coordinator = "127.0.0.1:7700";
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  bool wait = false;
  std::string gates;                // "warn" | "enforce": overrides the file's [gates] mode
  bool profile = false;             // --profile: profile every window
  std::string progress = "auto";    // auto | tty | plain | off (cli/progress.h), with --wait
  std::vector<std::string> labels;  // --label TARGET=VALUE, added to the text's [labels]
  std::string fail_on;              // "invalid", with --wait: kExitInvalid on an invalid window
  std::string name;                 // --name: submit the campaign under this name
};

int RunSubmit(const SubmitArgs& args) {
  // Checked here first, so a bad file is reported with file:line before any network call.
  auto campaign = ParseCampaignFile(args.campaign);
  if (!campaign.ok()) {
    std::fprintf(stderr, "%s\n", campaign.status().message().c_str());
    return kExitUsage;
  }
  std::string text = campaign->text;
  if (!args.name.empty()) {
    auto renamed = RenameCampaignText(*campaign, args.name);
    if (!renamed.ok()) {
      return CommandError("submit", kExitUsage, "--name: " + renamed.status().message());
    }
    text = std::move(*renamed);
    campaign->name = args.name;
  }
  auto labelled = LabelCampaignText(*campaign, text, args.labels);
  if (!labelled.ok()) {
    std::fprintf(stderr, "benchlab submit: --label %s\n", labelled.status().message().c_str());
    return kExitUsage;
  }
  // A coordinator runs targets from its agents' catalogues, never from the file: the file's env
  // secrets need not leave this machine, and are sent as the hashes the store keeps.
  auto redacted = RedactCampaignText(*labelled, campaign->source_name);
  if (!redacted.ok()) {
    std::fprintf(stderr, "%s\n", redacted.status().message().c_str());
    return kExitUsage;
  }
  auto stub = ConnectCoordinator(args.coordinator, args.tls);
  if (!stub.ok()) {
    std::fprintf(stderr, "benchlab submit: %s\n", stub.status().message().c_str());
    return kExitUsage;
  }
  BlockTerminationSignals();
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(*redacted);
  req.set_source(campaign->source_name);
  req.set_campaign_dir(campaign->campaign_dir);
  req.set_gates_mode(args.gates);
  req.set_profile(args.profile);
  v1::SubmitCampaignReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 10);
  grpc::Status status = (*stub)->SubmitCampaign(&ctx, req, &reply);
  if (!status.ok()) {
    return CommandError("submit", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  std::printf("campaign %s submitted to %s: %s\n", reply.name().c_str(), args.coordinator.c_str(),
              PlannedWindows(*campaign, reply.total_windows()).c_str());
  std::fflush(stdout);
  if (!args.wait) return kExitOk;

  WatchCanceller canceller;
  SignalWatcher watcher([&canceller](int) { canceller.Cancel(); });
  auto printer = MakeStdoutProgress(ParseProgressMode(args.progress).value_or(ProgressMode::kAuto),
                                    reply.total_windows(), campaign->adaptive);
  auto outcome = WatchCampaign(**stub, reply.name(), canceller, *printer);
  if (canceller.cancelled()) {
    std::fprintf(stderr, "benchlab submit: interrupted; the campaign goes on at the coordinator\n");
    return kExitInterrupted;
  }
  if (!outcome.ok()) {
    std::fprintf(stderr, "benchlab submit: %s\n", outcome.status().message().c_str());
    return kExitFailure;
  }
  return ReportOutcome(*outcome, campaign->baseline, reply.total_windows(), campaign->adaptive,
                       args.fail_on == "invalid");
}

}  // namespace

CommandRunner AddSubmitCommand(CLI::App& root) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* cmd = root.add_subcommand("submit", "Submit a campaign file to a coordinator.");
  cmd->add_option("campaign", args->campaign, "campaign file (TOML, see docs/campaign.md)")
      ->required();
  cmd->add_option("--coordinator", args->coordinator, "the coordinator's HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--name", args->name,
                  "submit the campaign under this name instead of its own (a coordinator refuses "
                  "a name it holds already)");
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--gates", args->gates,
                  "warn: record every gate's reasons without invalidating windows; enforce: "
                  "judge them whatever the file's [gates] mode says")
      ->check(CLI::IsMember({"warn", "enforce"}));
  cmd->add_flag("--profile", args->profile,
                "sample the server's target and side services over every window's measured "
                "interval (a CPU profile per window, docs/profiles.md), whatever the file's "
                "[profile] enabled says");
  cmd->add_option("--label", args->labels,
                  "TARGET=VALUE: the version of TARGET this campaign measures (a release or a "
                  "git commit), added to the file's [labels]; the history shows it as the "
                  "target's version. Repeatable; a target the file labels already is refused")
      ->allow_extra_args(false)  // one value each time: `--label a=1 campaign.toml`
      ->take_all()
      ->type_name("TARGET=VALUE");
  CLI::Option* wait =
      cmd->add_flag("--wait", args->wait,
                    "follow the campaign: print each window as it finishes and a summary; exit 0 "
                    "only when every window was measured");
  cmd->add_option("--fail-on", args->fail_on,
                  "with --wait, invalid: exit 4 when every window was measured and the gates "
                  "refused one (its newest attempt is invalid); a campaign not finished or a "
                  "window not measured is 1 whatever this says (docs/cli.md, \"Exit status\")")
      ->check(CLI::IsMember({"invalid"}))
      ->needs(wait);
  cmd->add_option("--progress", args->progress,
                  "with --wait, progress on stdout: tty (a status line redrawn in place), plain "
                  "(a progress line after each window, no control characters), off, or auto: "
                  "tty when stdout is a terminal, else plain")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  AddWidthOption(cmd);
  return [args] { return RunSubmit(*args); };
}

}  // namespace benchlab

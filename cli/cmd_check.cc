// `benchlab check`: what would keep a campaign file from running, before anything starts
// (docs/cli.md, "benchlab check"): on this machine's embedded lab, or with --coordinator on the
// agents registered there.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/campaign_check.h"
#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/tls_options.h"
#include "common/sysenv.h"
#include "coordinator/campaign.h"
#include "coordinator/plan.h"

namespace benchlab {
namespace {

struct CheckArgs {
  std::string campaign;
  std::string coordinator;  // empty: the embedded lab of this machine
  TlsFiles tls;
};

// The coordinator's own check (CheckCampaign): the file as it would parse it, and where its
// registered agents would run it. The file's env values are sent redacted, as `submit` sends
// them.
int CheckOnCoordinator(const CheckArgs& args, const Campaign& campaign) {
  auto redacted = RedactCampaignText(campaign.text, campaign.source_name);
  if (!redacted.ok()) return CommandError("check", kExitUsage, redacted.status().message());
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(*redacted);
  req.set_source(campaign.source_name);
  req.set_campaign_dir(campaign.campaign_dir);
  v1::CheckCampaignReply reply;
  if (Status called = CallCoordinator(args.coordinator, args.tls, 10,
                                      &v1::Coordinator::Stub::CheckCampaign, req, &reply);
      !called.ok()) {
    return CommandError("check", called);
  }
  if (reply.problems_size() > 0) {
    std::vector<std::string> problems(reply.problems().begin(), reply.problems().end());
    ErrorLine(FormatCampaignProblems(campaign.source_name, problems));
    return kExitUsage;
  }
  std::printf("%s: no problems found: %s on the agents of %s\n", campaign.source_name.c_str(),
              PlannedWindows(campaign, reply.total_windows()).c_str(), args.coordinator.c_str());
  return kExitOk;
}

int CheckCampaignFile(const CheckArgs& args) {
  auto campaign = ParseCampaignFile(args.campaign);
  if (!campaign.ok()) return CommandError("check", kExitUsage, campaign.status().message());
  if (!args.coordinator.empty()) return CheckOnCoordinator(args, *campaign);
  std::vector<std::string> problems = LocalCampaignProblems(*campaign, RealSysEnv());
  if (!problems.empty()) {
    ErrorLine(FormatCampaignProblems(campaign->source_name, problems));
    return kExitUsage;
  }
  auto size = SizeOfPlan(*campaign).Total();
  std::printf("%s: no problems found: %s on this machine's embedded lab (benchlab run)\n",
              campaign->source_name.c_str(),
              PlannedWindows(*campaign, static_cast<int>(size)).c_str());
  return kExitOk;
}

}  // namespace

CommandRunner AddCheckCommand(CLI::App& root) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = root.add_subcommand(
      "check",
      "Check a campaign file before it runs: the file, and every target and side service "
      "against what would run it (their executables, templates, CPUs and ports on this "
      "machine's embedded lab; with --coordinator, the catalogues and hosts of the agents "
      "registered there). Exit 0 when nothing was found, 2 with the list of problems.");
  cmd->add_option("campaign", args->campaign, "campaign file (TOML, see docs/campaign.md)")
      ->required();
  cmd->add_option("--coordinator", args->coordinator,
                  "check against the agents of the coordinator at HOST:PORT instead of this "
                  "machine's embedded lab");
  AddTlsOptions(cmd, &args->tls);
  return [args] { return CheckCampaignFile(*args); };
}

}  // namespace benchlab

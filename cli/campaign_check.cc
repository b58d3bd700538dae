#include "cli/campaign_check.h"

#include <algorithm>

#include "agent/start_check.h"
#include "common/parse.h"

namespace benchlab {

std::vector<std::string> LocalCampaignProblems(const Campaign& campaign, SysEnv& env) {
  std::vector<std::string> problems;
  if (Status commands = RequireCommands(campaign); !commands.ok()) {
    problems.push_back(commands.message());
  }
  StartCheckOptions options;
  options.ports = true;
  if (auto cpus = env.GetAffinity(0); cpus.ok()) options.cpus = *cpus;
  for (const StartProblem& p : CheckStartable(campaign.targets, campaign.services, options)) {
    problems.push_back(FormatStartProblem(campaign.source_name, p));
  }
  for (int cpu : campaign.load_cpus) {
    if (!options.cpus.empty() &&
        std::find(options.cpus.begin(), options.cpus.end(), cpu) == options.cpus.end()) {
      problems.push_back(campaign.source_name + ": load.cpus: CPU " + std::to_string(cpu) +
                         " is not one this host offers (" + FormatCpuList(options.cpus) + ")");
    }
  }
  return problems;
}

std::string FormatCampaignProblems(const std::string& source,
                                   const std::vector<std::string>& problems) {
  std::string out = source + ": " + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem:" : " problems:");
  for (const std::string& problem : problems) out += "\n  " + problem;
  return out;
}

}  // namespace benchlab

// What keeps a campaign file from running, found before anything starts (docs/cli.md,
// "benchlab check"): `benchlab check` lists it, and `run` refuses to start with it.
#pragma once

#include <string>
#include <vector>

#include "common/sysenv.h"
#include "coordinator/campaign.h"

namespace benchlab {

// On this machine's embedded lab, whose agents run the file's own targets and side services:
// a target without a command (RequireCommands), what agent/start_check.h finds with this
// process's CPUs and a fixed port already taken here, and [load] cpus this process may not run
// on. One "file:line: ..." line each; empty when the campaign could run.
std::vector<std::string> LocalCampaignProblems(const Campaign& campaign, SysEnv& env);

// "<source>: 2 problems:" and then each problem on a line of its own, indented, as one text for
// stderr.
std::string FormatCampaignProblems(const std::string& source,
                                   const std::vector<std::string>& problems);

}  // namespace benchlab

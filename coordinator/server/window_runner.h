// WindowRunner: carries out the window protocol of design.md for one window on a placed pair of
// agents: start the target on the server agent, check conformance from the load agent, run the
// load while the server agent samples exactly the measured interval, stop the target, apply the
// gates. Every step has a deadline; a step that fails or times out fails the window with the
// step named. Nothing here writes to the store. Called from the scheduler thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/store.h"

namespace benchlab {

struct WindowOutcome {
  WindowRow row;
  std::vector<SampleRow> samples;
  // Results the agents spooled for this window: (agent, key), acknowledged once it is stored.
  std::vector<std::pair<std::string, std::string>> spooled;
};

// The campaign's self-test calibration per agent: the first self-test an agent ran in the
// campaign; later windows record their drift from it. Owned by the scheduler, one per campaign.
using Calibration = std::map<std::string, double>;

WindowOutcome RunWindow(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                        const Campaign& campaign, int64_t campaign_id,
                        const PlannedWindow& planned, int attempt, Calibration& calibration);

// "<campaign id>-<target>-<scenario>-c<connections>-r<round>-a<attempt>": names a window's
// results in the agents' spools.
std::string SpoolKey(int64_t campaign_id, const PlannedWindow& planned, int attempt);

}  // namespace benchlab

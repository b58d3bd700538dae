// WindowRunner: carries out the window protocol of design.md for one window on a placed pair of
// agents: start the target on the server agent, check conformance from the load agent, run the
// load while the server agent samples exactly the measured interval, stop the target, apply the
// gates. Every step has a deadline; a step that fails or times out fails the window with the
// step named. Nothing here writes to the store. Called from the scheduler thread.
#pragma once

#include <string>
#include <vector>

#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/store.h"

namespace benchlab {

struct WindowOutcome {
  WindowRow row;
  std::vector<SampleRow> samples;
};

WindowOutcome RunWindow(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                        const Campaign& campaign, const PlannedWindow& planned, int attempt);

}  // namespace benchlab

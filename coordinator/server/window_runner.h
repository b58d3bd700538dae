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

// A target process kept from one window to the next (fresh_process = "cell" | "round"). Empty
// handle: none is running. The scheduler owns one per pair and calls EndSession when a campaign
// stops, so no process outlives it.
struct TargetSession {
  std::string target;
  std::string handle;
  int port = 0;
};

// Runs one window. The target process is started unless `session` holds one of the same target
// and the plan does not ask for a fresh one; it is stopped afterwards when the plan says so or
// the window did not end valid/invalid, else left in `session`. The conformance gate runs once
// per fresh process.
WindowOutcome RunWindow(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                        const Campaign& campaign, int64_t campaign_id,
                        const PlannedWindow& planned, int attempt, Calibration& calibration,
                        TargetSession& session);

// Stops the process a session holds, if any (best effort, with a deadline).
void EndSession(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                TargetSession& session);

// The name of a window's attempt in the agents' spools:
// "<campaign id>-<target>-<scenario>-<load level>-r<round>[-n<noise position>]-a<attempt>".
std::string SpoolKey(int64_t campaign_id, const PlannedWindow& planned, int attempt);

// The store's name for a planned window.
WindowKey KeyOf(const PlannedWindow& planned);

}  // namespace benchlab

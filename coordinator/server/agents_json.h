// The fleet as JSON, from the messages the coordinator sends about it (v1::AgentInfo): for
// `benchlab agents --json`, GET /api/v1/agents and the host facts stored with every window.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "benchlab/v1/coordinator.pb.h"

namespace benchlab {

// Host facts as stored with every window and shown by `benchlab agents --json`.
nlohmann::json HostFactsToJson(const v1::HostFacts& facts);
// {"agents": [{"name", "state", "roles", "labels", "address", "lease_age_ms", "catalogue",
// "versions", "host" (only when sent)}]}: `benchlab agents --json` and GET /api/v1/agents.
nlohmann::ordered_json AgentsToJson(const std::vector<v1::AgentInfo>& agents);

}  // namespace benchlab

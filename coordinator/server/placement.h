// Where a campaign runs: which agents it may use (PlacementSpec, from its file) and the agents it
// was placed on (Placement, by AgentRegistry::Place). Value types, apart from the registry so
// that the scheduler's and the window protocol's headers need neither gRPC nor JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

// Which agents a campaign may use. Each entry selects agents by name ("server-1") or by label
// ("label:rack-1": every agent carrying the label "rack-1"; the text after "label:" is compared
// with the agent's labels as written). Empty lists select every agent of the role.
// host_require: the campaign's [host] require (docs/host.md); an agent whose registered host
// findings do not meet one of them is not placed, on either side.
struct PlacementSpec {
  std::vector<std::string> server;
  std::vector<std::string> load;
  std::vector<std::string> host_require = {};
};
// InvalidArgument naming the bad entry when one is empty, "label:" without a label, or holds
// whitespace. `where` prefixes the message ("campaign.toml: placement").
Status ValidatePlacementSpec(const PlacementSpec& spec, std::string_view where);

// The agents a campaign was placed on.
struct Placement {
  std::string server_agent;
  std::string server_host;  // where the load agents reach the server's targets
  std::string load_agent;   // the first of load_agents
  std::vector<std::string> load_agents;
};

}  // namespace benchlab

// The agent's configuration file (TOML, documented in docs/agent.md): its name, roles, listen
// address, coordinator and catalogue of [[target]] tables, the only targets it will ever start.
// Errors name file:line, the key and the expected form, as campaign files do.
#pragma once

#include <string>

#include "agent/server/agent_daemon.h"
#include "agent/server/agent_state.h"
#include "common/status.h"

namespace benchlab {

// Directories left out default to the agent's state directory (agent/server/agent_state.h, from
// `env`): state_dir, then run_root = <state_dir>/run and spool_dir = <state_dir>/spool.
Result<AgentConfig> ParseAgentConfigText(const std::string& text, const std::string& source_name,
                                         const std::string& config_dir,
                                         const StateEnv& env = StateEnv::FromProcess());
Result<AgentConfig> LoadAgentConfig(const std::string& path);

// Writes a configuration that LoadAgentConfig reads back to the same AgentConfig; a target's
// {campaign_dir} is written out as the directory it stood for. Used by the embedded lab.
Status WriteAgentConfig(const AgentConfig& config, const std::string& path);

}  // namespace benchlab

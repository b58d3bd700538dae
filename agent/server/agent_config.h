// The agent's configuration file (TOML, documented in docs/agent.md): its name, roles, listen
// address, coordinator and catalogue of [[target]] tables, the only targets it will ever start.
// Errors name file:line, the key and the expected form, as campaign files do.
#pragma once

#include <string>

#include "agent/server/agent_daemon.h"
#include "common/status.h"

namespace benchlab {

Result<AgentConfig> ParseAgentConfigText(const std::string& text, const std::string& source_name,
                                         const std::string& config_dir);
Result<AgentConfig> LoadAgentConfig(const std::string& path);

// Writes a configuration that LoadAgentConfig reads back to the same AgentConfig; a target's
// {campaign_dir} is written out as the directory it stood for. Used by the embedded lab.
Status WriteAgentConfig(const AgentConfig& config, const std::string& path);

}  // namespace benchlab

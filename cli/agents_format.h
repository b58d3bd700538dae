// What `benchlab agents` prints: a table of the coordinator's agents for people, or JSON for
// machines, from a ListAgents reply. Pure formatting of protocol messages; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "benchlab/v1/coordinator.pb.h"
#include "common/text_table.h"

namespace benchlab {

// How long since the agent was last heard of: "350ms", "4.2s", "3m05s", "2h07m".
std::string FormatLeaseAge(int64_t ms);
// "box 8c/16t" (hostname, physical cores/logical CPUs); "-" when the agent sent no host facts.
std::string FormatHostSummary(const v1::AgentInfo& agent);
// The agent's host findings whose status is "warn", escaped for a terminal (PrintableText,
// common/printable.h): "governor=powersave (warn), thp=always (warn)"; empty when none.
std::string FormatHostWarnings(const v1::AgentInfo& agent);
// A header and one row per agent (name, state, roles, labels, address, lease age, targets,
// host), each column as wide as its widest cell, then "NAME host: WARNINGS" for each agent with
// host warnings (FormatHostWarnings), wrapped; "no agents registered\n" when there are none. Every
// string the agents sent is escaped for a terminal (common/text_table.h), so each agent is one
// line. Wider than `width`, the host, the certificate's date, the address and the roles give way
// first, then labels, targets and names are cut with "…".
std::string FormatAgentTable(const std::vector<v1::AgentInfo>& agents,
                             int width = kDefaultTextWidth);
// {"agents": [{"name", "state", "roles", "labels", "address", "lease_age_ms", "catalogue",
// "versions", "host" (only when sent)}]}, indented, ending with a newline.
std::string FormatAgentsJson(const std::vector<v1::AgentInfo>& agents);

// One line for each agent whose certificate ends within kExpiryWarning (14 days) of `now`, or has
// ended: "warning: agent server-1's certificate ends 2026-12-10T00:00:00Z, in 9 days".
std::string CertificateWarnings(const std::vector<v1::AgentInfo>& agents,
                                std::chrono::system_clock::time_point now);

}  // namespace benchlab

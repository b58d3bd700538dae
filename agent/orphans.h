// Orphan cleanup: every process an agent starts carries a cookie in its environment,
// BENCHLAB_AGENT=<agent name>:<instance>. An agent that starts after a crash of its predecessor
// (same name, another instance that is no longer running) finds the processes still carrying the
// old cookie and stops their process groups, so a crashed agent never leaves targets running into
// the next campaign.
// Reads /proc and signals through SysEnv. Called once at agent start.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/sysenv.h"

namespace benchlab {

constexpr const char* kAgentCookieVar = "BENCHLAB_AGENT";

// "<name>:<instance>"
std::string AgentCookie(const std::string& agent_name, const std::string& instance);

// An agent process's instance: "<pid>.<start time in clock ticks>", which names that process and
// no later one that reuses its pid.
std::string AgentInstance(SysEnv& env, pid_t agent_pid);

// Pids whose environment holds this agent name's cookie with another instance whose agent process
// is gone. Agents of the same name that are still running (two on one machine, as tests do) keep
// their targets.
std::vector<pid_t> FindOrphans(SysEnv& env, const std::string& agent_name,
                               const std::string& instance);

// SIGTERM to each orphan's process group, up to `grace` for them to go, then SIGKILL. Returns the
// pids it found.
std::vector<pid_t> StopOrphans(SysEnv& env, const std::string& agent_name,
                               const std::string& instance, std::chrono::milliseconds grace);

}  // namespace benchlab

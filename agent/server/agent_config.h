// The agent's configuration file (TOML, documented in docs/agent.md): its name, roles, listen
// address, coordinator and catalogue of [[target]] tables, the only targets it will ever start.
// Errors name file:line, the key and the expected form, as campaign files do.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "agent/build_cache.h"
#include "agent/server/agent_state.h"
#include "agent/server/allowed_targets.h"
#include "agent/server/limits.h"
#include "common/parse.h"
#include "common/service.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"
#include "tls/files.h"

namespace benchlab {

// LoadAgentConfig fills every directory (docs/agent.md); a daemon built in process from this
// struct uses what is set: no spool without spool_dir, and without state_dir an instance proof
// that lives only as long as the daemon. run_root, spool_dir and state_dir must be private
// (agent/private_dir.h): Start() refuses them otherwise.
struct AgentConfig {
  std::string name;
  std::vector<std::string> roles;  // "server" and/or "load"
  HostPort listen{"127.0.0.1", 0};
  // Where /metrics is served in Prometheus's text format (docs/metrics.md): plain HTTP, so a
  // loopback address only; unset: not served.
  std::optional<HostPort> metrics_listen;
  std::string advertise;    // address given to the coordinator; default: the bound one
  std::string coordinator;  // HOST:PORT
  std::string state_dir;    // holds instance_proof
  std::string run_root;     // per-window run directories and logs
  // Where a service that runs as another user (run_as) gets its directory: a shared directory
  // every parent of which that user may enter (docs/services.md, "Running as another user").
  std::string service_dir = "/var/tmp";
  std::vector<TargetDef> catalogue;
  std::vector<ServiceDef> services;  // [[service]]: side services targets name (docs/services.md)
  std::vector<std::string> labels;   // for placement by label
  std::vector<int> allowed_cpus;     // CPUs targets and load may use; empty: the agent's own
  // CPUs the agent's own threads run on, apart from allowed_cpus; empty: not pinned (PinAgent).
  std::vector<int> agent_cpus;
  // [build_cache]: where builds of catalogue targets' commits are kept (agent/build_cache.h),
  // default <state_dir>/builds, and their total size.
  std::string build_cache_dir;
  uint64_t build_cache_max_bytes = kDefaultBuildCacheBytes;
  std::string spool_dir;         // window results awaiting the coordinator's acknowledgement
  std::vector<pid_t> own_roots;  // other process trees whose CPU is not foreign (the lab's)
  std::string cgroup_parent;     // set at start by PrepareCgroupParent (agent/cgroup.h), not read
  std::chrono::milliseconds sample_period{100};  // the samplers' period over a measured interval
  // Where load and conformance requests may go (load role).
  AllowedTargets allowed_targets = AllowedTargets::Loopback();
  AgentLimits limits;      // per-CPU defaults resolved at start (ResolveLimits)
  std::string config_dir;  // the configuration file's directory: templates may come from there
  // [tls]: the fleet CA, this agent's certificate and key, and the CA's revocation list
  // (docs/agent.md, docs/security.md "Mutual TLS"). Empty: plaintext, which the agent allows
  // only on loopback unless `insecure` ([tls] insecure = true).
  TlsFiles tls;
  bool insecure = false;
};

// The host load agents reach this agent's targets at: the advertised address's host, else the
// one it listens on; 127.0.0.1 when that is every address (0.0.0.0, ::) or unreadable.
std::string TargetHost(const AgentConfig& config);

// Directories left out default to the agent's state directory (agent/server/agent_state.h, from
// `env`): state_dir, then run_root = <state_dir>/run and spool_dir = <state_dir>/spool.
Result<AgentConfig> ParseAgentConfigText(const std::string& text, const std::string& source_name,
                                         const std::string& config_dir,
                                         const StateEnv& env = StateEnv::FromProcess());
Result<AgentConfig> LoadAgentConfig(const std::string& path);

// Pins the calling thread to config.agent_cpus, so that every thread the agent starts afterwards
// (gRPC's, the spawner's) runs there and not on the benchmark's CPUs; call it before any other
// thread exists. When allowed_cpus is empty it becomes the affinity the process had, less
// agent_cpus (docs/agent.md, "The agent's own CPUs"). Nothing to do without agent_cpus.
Status PinAgent(SysEnv& env, AgentConfig& config);

// Writes a configuration that LoadAgentConfig reads back to the same AgentConfig; a target's
// {campaign_dir} is written out as the directory it stood for. Used by the embedded lab.
Status WriteAgentConfig(const AgentConfig& config, const std::string& path);

}  // namespace benchlab

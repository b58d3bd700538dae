// `benchlab agent`: the agent daemon.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "agent/cgroup.h"
#include "agent/server/agent_config.h"
#include "agent/server/agent_daemon.h"
#include "agent/supervisor.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/log.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

struct AgentArgs {
  std::string config;
  int parent_pid = 0;
};

int RunAgent(const AgentArgs& args) {
  auto config = LoadAgentConfig(args.config);
  if (!config.ok()) {
    ErrorLine(config.status().message());
    return kExitUsage;
  }
  // Before any thread exists, so that all of the agent's threads inherit its CPUs.
  Status pinned = PinAgent(RealSysEnv(), *config);
  if (!pinned.ok()) {
    ErrorLine(args.config + ": " + pinned.message());
    return kExitUsage;
  }
  SetLogAgent(config->name);
  // Targets' cgroups go in the service's delegated subtree where systemd gave one.
  std::string cgroup_note;
  config->cgroup_parent = PrepareCgroupParent(RealSysEnv(), getpid(), &cgroup_note);
  if (!config->cgroup_parent.empty()) {
    spdlog::info("agent: targets' cgroups in {}{}", config->cgroup_parent,
                 cgroup_note.empty() ? "" : " (" + cgroup_note + ")");
  } else {
    spdlog::debug("agent: targets' cgroups in the default place: {}", cgroup_note);
  }
  if (args.parent_pid != 0) {
    if (!ExitWithParent(args.parent_pid)) return kExitFailure;
    // The embedded lab's processes (coordinator, the other agent) are its own, not foreign.
    config->own_roots.push_back(args.parent_pid);
  }
  BlockTerminationSignals();
  // Targets' orphaned children are reparented to the agent, which reaps them.
  Status subreaper = BecomeSubreaper();
  if (!subreaper.ok()) spdlog::warn("agent: {}", subreaper.message());
  AgentDaemon daemon(RealSysEnv(), *config);
  auto bound = daemon.Start();
  if (!bound.ok()) {
    return CommandError("agent", kExitFailure, bound.status().message());
  }
  int sig = WaitForTerminationSignal();
  // SIGHUP re-reads the [tls] files and keeps running (docs/security.md, "Mutual TLS").
  while (sig == SIGHUP) {
    Status reloaded = daemon.ReloadTls();
    if (reloaded.ok()) {
      spdlog::info("agent {}: TLS files read again on SIGHUP", config->name);
    } else {
      spdlog::error("agent {}: SIGHUP: {}; the previous TLS files stay in force", config->name,
                    reloaded.message());
    }
    sig = WaitForTerminationSignal();
  }
  spdlog::info("agent {} stopping on signal {}", config->name, sig);
  daemon.Shutdown();
  return kExitOk;
}

}  // namespace

CommandRunner AddAgentCommand(CLI::App& root) {
  auto args = std::make_shared<AgentArgs>();
  CLI::App* cmd =
      root.add_subcommand("agent",
                          "Run an agent daemon: it registers with the coordinator named in its "
                          "configuration and starts only the targets of its own catalogue.");
  cmd->add_option("--config", args->config, "agent configuration (TOML, see docs/agent.md)")
      ->required();
  cmd->add_option("--parent-pid", args->parent_pid,
                  "exit when this parent process exits (used by benchlab run)")
      ->group("");
  return [args] { return RunAgent(*args); };
}

}  // namespace benchlab

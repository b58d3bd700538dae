// The agent's state directory and what it keeps there (docs/agent.md, "Where the agent
// writes"): by default the work directory (<state>/run) and the spool (<state>/spool) are below
// it, and the file <state>/instance_proof holds the agent's instance proof, a secret that lets a
// restarted agent take its own name back from the coordinator at once (proto: RegisterAgent).
#pragma once

#include <string>

#include "common/status.h"

namespace benchlab {

// What the default state directory depends on, read from the process by FromProcess().
struct StateEnv {
  std::string state_directory;  // $STATE_DIRECTORY (systemd's StateDirectory=): ':'-separated
  std::string xdg_state_home;   // $XDG_STATE_HOME
  std::string home;             // $HOME
  bool root = false;            // effective uid 0

  static StateEnv FromProcess();
};

// The first absolute path of $STATE_DIRECTORY; else /var/lib/benchlab/agent-NAME for root; else
// $XDG_STATE_HOME/benchlab/agent-NAME, with $HOME/.local/state for an unset or relative
// $XDG_STATE_HOME. FailedPrecondition when none applies (no $HOME): set state_dir.
Result<std::string> DefaultStateDir(const std::string& agent_name, const StateEnv& env);

// The instance proof kept in <state_dir>/instance_proof (64 hex digits): read when the file
// exists, else made from 32 random bytes and written 0600 (create-exclusive, fsynced). A file
// that is a symbolic link, not the agent's own, readable or writable by others, or not 64 hex
// digits is refused with an error naming it. The proof is a secret: never log it.
Result<std::string> LoadInstanceProof(const std::string& state_dir);

}  // namespace benchlab

// The embedded lab: a coordinator, a server agent and a load agent started as separate processes
// on this machine (loopback gRPC, kernel-chosen ports), all stopped when the job ends.
#pragma once

#include <string>

#include "cli/progress_mode.h"
#include "coordinator/campaign.h"

namespace benchlab {

struct LabJob {
  Campaign campaign;        // its targets become the server agent's catalogue
  std::string submit_text;  // submitted first when set; empty: it is in the database already
  int total_windows = 0;    // of a campaign already in the database
  std::string db;           // the SQLite file the coordinator uses
  bool keep_work_dir = false;
  std::string verb = "run";  // the command, for messages
  std::string gates_mode;    // "warn" | "enforce" overrides [gates] mode when submitting
  bool profile = false;      // `--profile`: profile every window
  ProgressMode progress = ProgressMode::kAuto;  // how the watch shows progress on stdout
  bool fail_on_invalid = false;  // `--fail-on invalid`: kExitInvalid when a window is invalid
  // The server agent's build cache ([build_cache] dir, docs/agent.md "Builds"): kept across
  // labs when set, so a commit is built once for a whole bisection; empty: inside the lab's
  // work directory, gone with it.
  std::string build_cache_dir;
};

// Starts the lab, submits the campaign when asked, follows it to its end printing each window
// and a summary, and stops the lab. Returns the exit status (cli/commands.h): kExitOk when every
// window of the campaign was measured, kExitInterrupted when interrupted, kExitFailure otherwise;
// with fail_on_invalid, kExitInvalid in place of kExitOk when one of them is invalid.
int RunOnEmbeddedLab(const LabJob& job);

}  // namespace benchlab

// TargetProcess: one running target, started with Boost.Process v2 in its own process group,
// pinned to its CPUs (checked after start with sched_getaffinity), with stdout and stderr in a
// per-window log file. Stop() sends SIGTERM to the group, waits a grace period, then SIGKILLs
// the group, and always reaps. The destructor stops a process that is still running. Owned by
// one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/cancel.h"
#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

// The program argv[0] = `name` starts, found as a spawn finds it: without a '/', in `env`'s
// PATH, or this process's when `env` has none (execvp's rule); with one, a relative path is
// relative to `cwd`. NotFound saying why ("target command \"x\" not found in PATH").
Result<std::string> FindExecutable(const std::string& name, const std::string& cwd,
                                   const std::map<std::string, std::string>& env);

struct SpawnSpec {
  // argv[0] is looked up in env's PATH (the agent's when env has none) when it has no '/';
  // a relative path with a '/' is relative to cwd.
  std::vector<std::string> argv;
  std::string cwd;                         // must exist
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::vector<int> cpus;                   // empty: inherit
  std::string log_path;                    // stdout+stderr, created/truncated, mode 0600
  std::string stdin_path;                  // opened by the agent for the child; empty: /dev/null
  // PR_SET_PDEATHSIG: the child is killed when the thread that spawned it ends, so spawn from a
  // thread that lives as long as the agent (SpawnThread).
  bool die_with_parent = false;
  std::string cgroup_procs;  // a cgroup.procs the child joins before exec; empty: none
  // The user and group the child runs as (its only group is gid); -1: the agent's own. Changing
  // them takes an agent running as root (a service's run_as, docs/services.md).
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  // The agent's ambient capabilities (CAP_PERFMON from its unit, docs/profiles.md) are cleared
  // before exec, so no target or service inherits them; only perf keeps them.
  bool keep_ambient_capabilities = false;
};

struct ExitInfo {
  bool exited = false;           // it ended (by itself or by our signals)
  int exit_code = -1;            // when it exited normally
  int signal = 0;                // when a signal ended it
  std::string Describe() const;  // "exit status 1", "killed by signal 9 (SIGKILL)"
};

class TargetProcess {
 public:
  static Result<std::unique_ptr<TargetProcess>> Spawn(SysEnv& env, const SpawnSpec& spec);
  ~TargetProcess();
  TargetProcess(const TargetProcess&) = delete;
  TargetProcess& operator=(const TargetProcess&) = delete;

  pid_t pid() const;
  // Non-blocking: has the process exited? Fills exit info when it has (and reaps it).
  bool Exited(ExitInfo* info = nullptr);
  // Blocks until the process exits (true, reaped, info filled) or `deadline` passes (false),
  // asleep in between: it waits on a pidfd, so a run being measured is not disturbed by a
  // waiting thread that wakes up to look (a 2 ms poll cost an external load tool ~10% of its
  // throughput on a 2-core VM). Where pidfds are unavailable it looks every 50 ms. With `cancel`
  // it also returns false as soon as that flag is set (its fd wakes the wait).
  bool WaitExit(std::chrono::steady_clock::time_point deadline, ExitInfo* info = nullptr,
                const CancelFlag* cancel = nullptr);
  // SIGTERM to the group, up to `grace`, then SIGKILL to the group; reaps. Returns how it ended.
  ExitInfo Stop(std::chrono::milliseconds grace);
  // The last n lines of the log file.
  std::vector<std::string> LastLogLines(size_t n) const;

 private:
  struct Impl;
  explicit TargetProcess(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so orphaned grandchildren
// of targets are reparented to it and can be reaped instead of lingering as zombies.
Status BecomeSubreaper();
// Reaps any exited children that no TargetProcess owns (orphans reparented to us). Non-blocking.
// Any other child the agent means to wait for itself must not be started outside TargetProcess.
// Stops early at a zombie a TargetProcess owns (waitid cannot skip it); its owner reaps it soon.
void ReapOrphans();

}  // namespace benchlab

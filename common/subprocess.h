// RunArgv: one short-lived program run to its end by argv (fork and execve, never a shell), in
// its own process group, with exactly the environment given, stdin from /dev/null, its output
// captured or appended to a file, and a time limit past which the whole group is killed. For
// commands benchlab runs itself (git), not for targets (agent/supervisor.h). Thread-safe.
//
// The pids of children whose owner waits for them are kept in one registry (OwnedChildren), so
// that an agent reaping orphans as a subreaper (agent/supervisor.h, ReapOrphans) leaves them to
// their owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace benchlab {

// Children a caller will wait for itself. Hold the mutex from fork until the pid is inserted,
// so that a child that dies at once is never taken for an orphan; erase it once reaped.
std::mutex& OwnedChildrenMutex();
std::set<pid_t>& OwnedChildren();

struct RunSpec {
  // argv[0] without a '/' is looked up in env's PATH (this process's when env has none).
  std::vector<std::string> argv;
  std::string cwd;                         // empty: this process's
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::chrono::milliseconds time_limit{10'000};
  // Empty: stdout and stderr are captured into RunOutcome::output, at most max_output bytes
  // (the rest is read and dropped). Else both are appended to this file (created 0600).
  std::string output_path;
  size_t max_output = 1 << 20;
};

struct RunOutcome {
  bool timed_out = false;  // killed (with its group) at the time limit
  int exit_code = -1;      // when it exited by itself
  int signal = 0;          // when a signal ended it
  std::string output;      // captured stdout and stderr (output_path empty)
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit status 1", "killed by signal 9 (SIGKILL)", "still running after 10 s (killed)".
  std::string Describe(std::chrono::milliseconds limit) const;
};

// Runs spec.argv to its end or its time limit. Whatever the program does, every process left in
// its group when it ends (a background grandchild) is killed too. Errors only when the program
// cannot be started (not found, cwd missing, output file not writable); how it ended is in the
// outcome.
Result<RunOutcome> RunArgv(const RunSpec& spec);

// The program `name` runs as, resolved as execvp would in `path` (a PATH value); NotFound when
// none is an executable file.
Result<std::string> FindProgram(const std::string& name, const std::string& path);

}  // namespace benchlab

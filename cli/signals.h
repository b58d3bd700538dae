// Termination signals for the CLI's long-running commands. BlockTerminationSignals() must run
// before any thread starts, so SIGINT/SIGTERM/SIGHUP reach only the thread that waits for them.
#pragma once

#include <functional>
#include <thread>

namespace benchlab {

void BlockTerminationSignals();
// Blocks the calling thread until SIGINT, SIGTERM or SIGHUP; returns the signal.
int WaitForTerminationSignal();

// Runs `on_signal` on its own thread when a termination signal arrives; stopped (without
// calling it) by destruction.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void(int)> on_signal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::thread thread_;
};

// Dies with SIGTERM when the parent process exits (prctl PR_SET_PDEATHSIG), so daemons started
// by `benchlab run` never outlive it. Returns false when the parent is already gone.
bool ExitWithParent(int parent_pid);

}  // namespace benchlab

// SpawnThread: one long-lived thread that forks every target. A child asked to die with its
// parent (PR_SET_PDEATHSIG) is tied to the thread that forked it, not to the process, and gRPC's
// handler threads come and go; forking here ties targets to the agent's lifetime instead.
// Run() may be called from any thread; calls are served one at a time.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace benchlab {

class SpawnThread {
 public:
  SpawnThread();
  ~SpawnThread();
  SpawnThread(const SpawnThread&) = delete;
  SpawnThread& operator=(const SpawnThread&) = delete;

  // Runs fn on the spawn thread and returns when it has.
  void Run(const std::function<void()>& fn);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace benchlab

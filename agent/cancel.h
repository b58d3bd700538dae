// CancelFlag: "stop what you are doing", set once from any thread and seen both by code that
// polls (the load generator reads flag() through LoadOptions::stop) and by code that sleeps in
// poll(2) (fd() turns readable once the flag is set), so a sleeping wait ends at once instead of
// waking up periodically to look. The agent sets one per call when the caller cancels, its
// deadline passes or the agent shuts down (docs/agent.md, "Cancellation"). Thread-safe.
#pragma once

#include <atomic>

namespace benchlab {

class CancelFlag {
 public:
  CancelFlag();
  ~CancelFlag();
  CancelFlag(const CancelFlag&) = delete;
  CancelFlag& operator=(const CancelFlag&) = delete;

  void Cancel();
  bool cancelled() const { return flag_.load(std::memory_order_relaxed); }
  const std::atomic<bool>* flag() const { return &flag_; }
  // An eventfd that is readable once Cancel() ran; -1 if none could be made (then only the
  // flag tells).
  int fd() const { return fd_; }

 private:
  std::atomic<bool> flag_{false};
  int fd_ = -1;
};

}  // namespace benchlab

// Scheduler: turns submitted campaigns into windows. Campaigns queue in the store; one scheduler
// thread takes them in order, places them on a server/load agent pair, runs their windows in
// plan order and writes each window (with its samples) in one transaction. A campaign found
// "running" at start-up (the coordinator stopped mid-way) resumes: windows already stored are
// kept and not run again. Submit and the watchers' calls are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/store.h"

namespace benchlab {

struct Submission {
  int64_t campaign_id = 0;
  std::string name;
  int total_windows = 0;
};

class Scheduler {
 public:
  Scheduler(Store& store, AgentRegistry& agents);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();
  // Finishes the window in progress, then returns; the campaign stays "running" and resumes on
  // the next start.
  void Stop();

  // Validates the whole campaign before anything is stored. InvalidArgument (file:line errors)
  // or AlreadyExists (name taken).
  Result<Submission> Submit(const std::string& spec_toml, const std::string& source,
                            const std::string& campaign_dir);

  // A counter that grows whenever a window is stored or a campaign changes state; watchers wait
  // for it to move past what they have seen.
  uint64_t version();
  // Wakes the scheduler and watchers (e.g. an agent registered).
  void Notify() { Bump(); }
  void WaitForChange(uint64_t seen, std::chrono::milliseconds timeout);

 private:
  void Loop();
  void RunCampaign(const CampaignRow& row);
  // Tells the agents their spooled results for a stored window may go.
  void Acknowledge(const std::vector<std::pair<std::string, std::string>>& spooled);
  void Bump();
  bool stopping() const { return stopping_.load(); }

  Store& store_;
  AgentRegistry& agents_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t version_ = 0;
};

}  // namespace benchlab

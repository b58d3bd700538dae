// IntervalSampler: measures a target's whole process tree over exactly one measured interval.
// Begin() takes a sample at once (the interval's start) and starts a background thread that
// samples every period (10 Hz by default); End() takes a final sample at once and returns the
// interval's CPU user+sys, RSS mean and peak, and the per-period series. The interval is bounded
// by the Begin/End calls themselves, not by the sampling grid. Begin/End from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/cgroup.h"
#include "agent/host_watch.h"
#include "agent/proc.h"
#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct IntervalSample {
  double t_s = 0;      // since Begin
  double cpu_pct = 0;  // % of one core over the period ending at t_s
  uint64_t rss_kb = 0;
};

struct IntervalFigures {
  double interval_s = 0;
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  uint64_t rss_mean_kb = 0;
  uint64_t rss_peak_kb = 0;
  bool target_alive = true;  // false when the tree's root was gone at End
  std::vector<IntervalSample> samples;
  int64_t threads = 0;                   // the tree's threads at the end
  uint64_t voluntary_ctxt_switches = 0;  // over the interval, by live members
  uint64_t nonvoluntary_ctxt_switches = 0;
  std::optional<HostWindow> host;   // with a HostWatch: the whole machine over the interval
  std::string host_error;           // why the host figures are missing, when they are
  std::string cpu_source = "proc";  // "cgroup" when the cgroup's cpu.stat measured the CPU
};

class IntervalSampler {
 public:
  // With `host`, the machine is sampled on the same ticks as the tree. A root of 0 samples the
  // host alone (the load agent).
  // With `cgroup` (the target's own), CPU comes from its cpu.stat, to the microsecond and
  // including every process that ever ran in it; otherwise from the /proc tree walk.
  IntervalSampler(SysEnv& env, pid_t root,
                  std::chrono::milliseconds period = std::chrono::milliseconds(100),
                  std::unique_ptr<HostWatch> host = nullptr, WindowCgroup* cgroup = nullptr);
  ~IntervalSampler();
  IntervalSampler(const IntervalSampler&) = delete;
  IntervalSampler& operator=(const IntervalSampler&) = delete;

  Status Begin();
  Result<IntervalFigures> End();

 private:
  void Loop();
  // Takes one sample and appends it to the series; caller holds mu_.
  void TakeSampleLocked(std::chrono::steady_clock::time_point now);
  void StopThread();

  std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;
  std::thread thread_;
  ProcTreeSampler tree_;
  const bool has_tree_;
  std::unique_ptr<HostWatch> host_;
  Status host_status_;
  WindowCgroup* const cgroup_;
  CgroupCpu cg_first_, cg_last_;
  bool cg_ok_ = false;
  std::chrono::steady_clock::time_point begin_time_;
  std::chrono::steady_clock::time_point last_time_;
  TreeSample first_;
  TreeSample last_;
  bool root_gone_ = false;
  std::vector<IntervalSample> samples_;
  uint64_t rss_sum_ = 0;
  uint64_t rss_count_ = 0;
  uint64_t rss_peak_ = 0;
};

}  // namespace benchlab

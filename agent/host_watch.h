// HostWatch: watches the whole machine over one measured interval, for the gates that decide
// whether a window was clean. Begin() takes the baseline, each Sample() one snapshot (the
// caller's sampling thread drives the pace, e.g. 10 Hz; nothing here sleeps or reads a clock:
// elapsed time comes from /proc/stat's tick totals and /proc/uptime), End() a final snapshot
// and the figures:
// host busy/idle/iowait/steal, foreign CPU (busy CPU not used by the "own" process trees: the
// target, the load generator, the agent), the largest foreign users by name, temperature,
// throttle counters, CPU frequency of the pinned CPUs and swap traffic. A reading the machine
// does not offer is std::nullopt ("unavailable"), never 0. All reads go through SysEnv.
// Owned and called by one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/host_sensors.h"
#include "agent/host_stat.h"
#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct HostWatchOptions {
  // Roots of the own process trees; each root's descendants, including ones started later and
  // ones reparented away after being seen, are own. A root that is not running at Begin() is
  // ignored (its figures stay 0).
  std::vector<pid_t> own_roots;
  // CPUs whose current frequency is compared with their maximum; empty means every online CPU.
  std::vector<int> pinned_cpus;
  // Own processes and processes new since the last snapshot are read at every Sample(); the
  // other (foreign) ones only at every foreign_scan_every-th Sample() and at Begin/End, which
  // keeps the agent's own cost low. A sample's foreign CPU is host busy minus own (the busy
  // counters miss ticks, so it is a lower bound); the interval's also counts every foreign
  // process's exact CPU (see HostWindow). The CPU a foreign process used after its last read
  // and before it exited is named after the process that reaped it.
  int foreign_scan_every = 10;
  // HostWindow::foreign_max_pct is the largest foreign CPU over a rolling window of samples:
  // for each sample, the shortest run ending there that lasts at least this long. /proc/stat
  // counts in ticks (10 ms), so one 100 ms sample reads +-10% of one core from rounding alone;
  // 0 takes the max over single samples.
  double foreign_max_span_s = 1.0;
};

// One period between two snapshots. CPU figures are % of one core (2 busy cores = 200%).
struct HostSample {
  double t_s = 0;       // end of the period, since Begin()
  double period_s = 0;  // length of the period
  double busy_pct = 0;  // user+nice+system+irq+softirq (the counters; see HostWindow)
  double idle_pct = 0;
  double iowait_pct = 0;
  double steal_pct = 0;
  double own_pct = 0;
  double foreign_pct = 0;                // max(0, busy - own)
  std::optional<double> max_temp_c;      // hottest thermal zone at the end of the period
  std::optional<double> min_freq_ratio;  // lowest scaling_cur_freq / cpuinfo_max_freq
};

// A process name (comm) and the foreign CPU its processes used over the interval.
struct ForeignUser {
  std::string comm;
  double cpu_pct = 0;  // % of one core over the interval
};

struct HostWindow {
  double interval_s = 0;  // from /proc/stat ticks (and the unticked time)
  int cpus = 0;           // online CPUs
  // busy_pct is the larger of the kernel's busy counters and the CPU charged to every process
  // (own and foreign), at most the counters plus unticked_pct: the wall time no CPU counter
  // took (UntickedTicks in agent/host_stat.h; 0 without /proc/uptime). The counters sample at
  // timer ticks and miss busy time on a CPU that keeps going idle and busy.
  double busy_pct = 0, idle_pct = 0, iowait_pct = 0, steal_pct = 0, unticked_pct = 0;
  double irq_pct = 0;  // irq+softirq, part of busy and of foreign: no process owns it
  double own_pct = 0;
  std::vector<double> own_pct_by_root;  // in the order of HostWatchOptions::own_roots
  double foreign_mean_pct = 0;          // max(0, busy - own) over the whole interval
  double foreign_max_pct = 0;  // over runs of foreign_max_span_s (see options); >= the mean
  std::vector<ForeignUser> top_foreign;             // at most 3, largest first, only those above 0
  std::optional<double> max_temp_c;                 // over all samples
  std::optional<uint64_t> throttle_core_events;     // sum over CPUs of the increase
  std::optional<uint64_t> throttle_package_events;  // largest increase seen on any CPU
  std::optional<double> min_freq_ratio;             // over all samples and pinned CPUs
  std::optional<uint64_t> swap_in_pages, swap_out_pages;
  std::vector<HostSample> samples;
};

class HostWatch {
 public:
  HostWatch(SysEnv& env, HostWatchOptions options);
  HostWatch(const HostWatch&) = delete;
  HostWatch& operator=(const HostWatch&) = delete;

  // Starts an interval (discarding any earlier one): discovers the thermal zones, throttle
  // counters and frequency files, and takes the baseline snapshot.
  Status Begin();
  // Takes one snapshot. A period shorter than one tick per CPU is merged into the next one.
  // An error (e.g. /proc/stat unreadable) spoils the interval: End() returns the first one.
  Status Sample();
  // Takes the final snapshot and returns the interval's figures. FailedPrecondition before
  // Begin() or when the interval lasted less than one clock tick per CPU.
  Result<HostWindow> End();

 private:
  // What the watch remembers of one process between snapshots (ticks are USER_HZ).
  struct Proc {
    uint64_t starttime = 0;
    pid_t ppid = 0;
    uint64_t run = 0, prev_run = 0;        // utime + stime
    uint64_t reaped = 0, prev_reaped = 0;  // cutime + cstime
    uint64_t charged = 0;     // last-seen ticks of vanished descendants it may have reaped
    uint64_t carry = 0;       // charge not yet matched by reaped ticks, kept one snapshot
    uint64_t generation = 0;  // snapshot in which it was last seen
    uint64_t resolved = 0;    // snapshot in which `owner` was last worked out
    int owner = -1;           // index of the own root whose tree it is in; -1 = foreign
    bool fresh = false;       // first seen in the current snapshot
    bool refreshed = false;   // its stat was read in the current snapshot
    std::string comm;
  };

  // Reads /proc/stat and every process, and (when `attribute`) adds each process's CPU since
  // the previous snapshot to its own root or to its name's foreign total.
  Status Snapshot(bool attribute, bool full);
  Status ReadProcesses(bool full, bool list);
  Status ReadOne(pid_t pid, const std::string& name);
  void MarkUnread(Proc& p);
  Status TakeSample(bool full);
  int RootIndex(pid_t pid, const Proc& p) const;
  int ResolveOwner(pid_t pid);
  void ChargeVanished(const Proc& gone);
  void EmitSample();
  std::optional<SwapCounters> ReadSwap();

  SysEnv& env_;
  HostWatchOptions options_;
  bool begun_ = false;
  Status first_error_;
  uint64_t generation_ = 0;
  int samples_taken_ = 0;
  std::vector<std::optional<uint64_t>> root_starttime_;  // identity of each own root at Begin
  std::unordered_map<pid_t, Proc> procs_;
  std::vector<Proc> reused_;     // records displaced by a reused pid in this snapshot
  std::vector<Proc*> chain_;     // scratch for ResolveOwner
  std::vector<pid_t> own_pids_;  // scratch for ReadProcesses
  std::optional<uint64_t> last_forks_;
  std::optional<pid_t> last_pid_;  // the last pid handed out, at the last listing
  ProcBrief scratch_;
  std::string path_;

  SystemStat begin_stat_;   // at Begin
  SystemStat period_stat_;  // at the end of the last emitted sample
  SystemStat last_stat_;    // at the latest snapshot
  std::vector<uint64_t> own_ticks_by_root_;
  uint64_t period_own_ticks_ = 0;
  std::unordered_map<std::string, uint64_t> foreign_ticks_by_comm_;
  std::vector<HostSample> samples_;
  std::vector<PeriodTicks> sample_ticks_;  // parallel to samples_
  std::optional<HostSensors> sensors_;
  ThrottleReading throttle_begin_;
  std::optional<SwapCounters> swap_begin_;
};

}  // namespace benchlab

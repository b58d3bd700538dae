// Parsers for the host-wide kernel counters the agent watches: /proc/stat (CPU time by kind,
// total and per CPU), /proc/vmstat (swap traffic), /proc/loadavg (the last pid) and the few
// per-process fields of /proc/<pid>/stat that host watching and the scheduling checks need. Pure
// functions of text, no I/O; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

// One "cpu" line of /proc/stat, in clock ticks (USER_HZ). guest and guest_nice are already
// included in user and nice by the kernel, so no sum below adds them again.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  uint64_t steal = 0, guest = 0, guest_nice = 0;

  // CPU this operating system spent running something. Excludes idle and iowait (nothing ran)
  // and steal (the hypervisor ran someone else: the time was taken, not used).
  uint64_t Busy() const { return user + nice + system + irq + softirq; }
  // Every tick of wall time the CPUs went through, whatever they did.
  uint64_t Total() const { return Busy() + idle + iowait + steal; }
};

// Counter growth from `then` to `now`, field by field; a field that went back (a CPU taken
// offline between the two readings) reads 0.
CpuTimes CpuDelta(const CpuTimes& now, const CpuTimes& then);

// One sampling period's ticks: its length on each CPU, host busy (with the unticked time, see
// UntickedTicks; it may be a tick under the counters' own figure in one period and over it in
// the next, so it is kept signed and only a run of periods is clamped) and own CPU.
struct PeriodTicks {
  double per_cpu = 0;
  double busy = 0;
  uint64_t own = 0;
};
// The largest foreign CPU, max(0, busy - own) in % of one core, over a rolling window: for each
// period, the shortest run of periods ending there lasting at least `span_ticks` per CPU (the
// whole series when it is shorter). span_ticks 0 gives the largest single period.
double MaxForeignOverSpans(const std::vector<PeriodTicks>& periods, double span_ticks);

struct SystemStat {
  CpuTimes total;                 // the "cpu" line: all CPUs summed
  std::vector<CpuTimes> cpus;     // "cpuN" lines, indexed by N (online CPUs only; gaps are zero)
  std::vector<int> online;        // the N of each "cpuN" line, in order
  int online_cpus = 0;            // number of "cpuN" lines
  std::optional<uint64_t> forks;  // "processes": forks since boot
  // Not part of /proc/stat: the first field of /proc/uptime read right after it (the wall
  // clock the CPU counters should add up to), when it could be read.
  std::optional<double> uptime_s;
};

// Seconds since boot, the first field of /proc/uptime ("350735.47 234388.90").
Result<double> ParseUptimeSeconds(std::string_view text);

// Ticks of wall time from `then` to `now` that no CPU counter took, summed over the CPUs online
// at both readings: each CPU's growth of the wall clock (uptime_s, in ticks) minus the growth of
// its counters' Total(). The kernel counts idle and iowait exactly from the clock, but busy time
// by sampling at each timer tick; a CPU that goes idle and busy again thousands of times a
// second (a load generator, a server's network path) misses ticks, and its busy time falls
// short of what its processes were charged (utime+stime come from the scheduler's exact
// runtime). On a 2-core VM a load generator's CPU counted 88 busy ticks in 3 s while its
// processes were charged 149 and the CPU's counters, idle included, summed to 236 of 302
// ticks. That unticked time was busy. Signed (a reading lands up to a tick either side), and 0
// when either reading has no uptime.
double UntickedTicks(const SystemStat& now, const SystemStat& then, double ticks_per_second);

// Kernels before 2.6.11 had no steal column and before 2.6.24 no guest: missing trailing
// columns read as 0. Fewer than four numbers (user nice system idle) is an error.
Result<SystemStat> ParseSystemStat(std::string_view text);

// Pages swapped in and out since boot (/proc/vmstat pswpin, pswpout).
struct SwapCounters {
  uint64_t pages_in = 0;
  uint64_t pages_out = 0;
};
Result<SwapCounters> ParseVmStatSwap(std::string_view text);

// The last pid the kernel handed out: the last field of /proc/loadavg
// ("0.20 0.18 0.12 1/80 11206").
Result<pid_t> ParseLoadAvgLastPid(std::string_view text);

// The fields of /proc/<pid>/stat used for host watching and scheduling checks, parsed without
// allocating beyond `comm` (which reuses its capacity when the caller reuses the struct).
struct ProcBrief {
  pid_t pid = 0;
  std::string comm;
  pid_t ppid = 0;
  uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;  // clock ticks
  int64_t nice = 0;                                       // field 19
  uint64_t starttime = 0;                                 // field 22, clock ticks after boot
  int64_t policy = -1;  // field 41 (SCHED_*); -1 when the kernel's line is too short
};
// Fills `out`; on error `out` is unspecified.
Status ParseProcBrief(std::string_view text, ProcBrief& out);

// "SCHED_OTHER", "SCHED_FIFO", ..., or "policy N".
std::string SchedPolicyName(int64_t policy);

}  // namespace benchlab

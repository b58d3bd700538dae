// Parsers for the /proc files the agent reads, and ProcTreeSampler, which follows a target's
// whole process tree (every descendant, including ones started later) through SysEnv. Parsers
// are pure; the sampler is owned by one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

// /proc/<pid>/stat. comm may contain spaces and parentheses; fields are in clock ticks / pages.
struct ProcStat {
  pid_t pid = 0;
  std::string comm;
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;  // clock ticks
  int64_t num_threads = 0;
  uint64_t starttime = 0;  // clock ticks after boot
  uint64_t rss_pages = 0;
};
Result<ProcStat> ParseProcStat(std::string_view text);

// The fields of /proc/<pid>/status the agent uses.
struct ProcStatus {
  uint64_t vm_rss_kb = 0;
  uint64_t vm_hwm_kb = 0;
  int64_t threads = 0;
  uint64_t voluntary_ctxt_switches = 0;
  uint64_t nonvoluntary_ctxt_switches = 0;
};
Result<ProcStatus> ParseProcStatus(std::string_view text);

// Cumulative figures of a process tree at one instant.
struct TreeSample {
  double cpu_user_s = 0;  // monotone: includes processes of the tree that have since exited
  double cpu_sys_s = 0;
  uint64_t rss_kb = 0;    // sum over live processes of the tree
  int processes = 0;      // live processes in the tree
  int64_t threads = 0;
  uint64_t voluntary_ctxt_switches = 0;
  uint64_t nonvoluntary_ctxt_switches = 0;
};

// Samples the tree rooted at `root`: the root and every live process whose ppid chain reaches
// it. CPU is accumulated per process (keyed by pid and start time, so a reused pid is a new
// process) and kept after a process exits, so the total never goes backwards; the CPU of
// children reaped by a member shows up in that member's cutime/cstime and is counted too.
class ProcTreeSampler {
 public:
  ProcTreeSampler(SysEnv& env, pid_t root);
  // NotFound when the root itself is gone.
  Result<TreeSample> Sample();

 private:
  struct Seen {
    uint64_t starttime = 0;
    uint64_t user_ticks = 0;  // utime + cutime
    uint64_t sys_ticks = 0;   // stime + cstime
  };
  SysEnv& env_;
  pid_t root_;
  std::map<pid_t, Seen> live_;           // processes seen in the last sample
  uint64_t exited_user_ticks_ = 0;       // last known CPU of processes that have exited
  uint64_t exited_sys_ticks_ = 0;
};

}  // namespace benchlab

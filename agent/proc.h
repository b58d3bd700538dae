// Parsers for the /proc files the agent reads, and ProcTreeSampler, which follows a target's
// whole process tree (every descendant, including ones started later) through SysEnv. Parsers
// are pure; the sampler is owned by one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
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
  uint64_t rss_kb = 0;  // sum over live processes of the tree
  int processes = 0;    // live processes in the tree
  int64_t threads = 0;
  uint64_t voluntary_ctxt_switches = 0;
  uint64_t nonvoluntary_ctxt_switches = 0;
  std::vector<pid_t> pids;  // the live members, root first
};

// Samples the tree rooted at `root`: the root, every live process whose ppid chain reaches it,
// and every process that was a member in an earlier sample and is still alive (so a grandchild
// reparented to a subreaper after its parent died, or a daemonised server, stays in the tree).
// Processes are keyed by pid and start time, so a reused pid is a new process. Processes
// vanish between listing /proc and reading it, so a stat that is missing or unparsable is
// skipped (except the root's); a member without a readable status adds CPU but no RSS.
//
// CPU accounting rule. A live member counts utime+cutime (user) and stime+cstime (sys); the
// total is that sum over live members plus the last-seen figures of members that have exited.
// When members vanish, each one is charged to its nearest ancestor that is still a member (same
// pid and start time, found through the last-seen ppids of vanished members): if that ancestor
// reaped it, its CPU reappears in the ancestor's cutime/cstime, so the vanished group adds only
// max(0, group's last-seen ticks - growth of the ancestor's cutime/cstime) to the exited totals.
// Vanished members with no surviving ancestor (or whose ancestor does not reap them, e.g. it
// ignores SIGCHLD) are added in full. This gives, per user and per sys separately:
//  - never backwards: per process the counters only grow, and what leaves the live sum is
//    either re-added to exited or already present in a live ancestor's cutime/cstime;
//  - no double counting of a child reaped by a member (its ticks are in the reaper's cutime);
//  - the CPU of a member that exits between samples is kept once it was seen; if a member reaped
//    it, even the CPU it used after the last sample, and that of children never seen, is kept.
// The root's cutime at the first sample holds children it reaped before sampling began; that
// constant cancels out in the differences a window takes. When the kernel splits a reaped
// child's time between user and sys differently from its last sample, one figure may gain a
// tick.
//
// Cost. Listing /proc and reading every process is what a sample costs on a busy machine, so a
// sample lists /proc only when a process may have been created since the previous one: the last
// pid the kernel handed out (the fifth field of /proc/loadavg, per pid namespace) is read first,
// and while it is unchanged no process or thread exists that was not there before, so the tree
// can only have lost members and reading the known members is exact. The first sample, a
// changed or unreadable last pid, always list /proc.
class ProcTreeSampler {
 public:
  ProcTreeSampler(SysEnv& env, pid_t root);
  // NotFound when the root itself is gone (or its pid now names another process).
  Result<TreeSample> Sample();
  // Samples that listed /proc (for tests and benchmarks).
  int full_scans() const { return full_scans_; }

 private:
  struct Seen {
    uint64_t starttime = 0;
    pid_t ppid = 0;
    uint64_t user_ticks = 0;  // utime + cutime
    uint64_t sys_ticks = 0;   // stime + cstime
    uint64_t cutime = 0, cstime = 0;
  };
  struct Snapshot;

  // The steps of Sample, in order.
  // The pids whose stat the sample reads: all of /proc, or the known members only while the last
  // pid is unchanged (see "Cost" above).
  Result<std::vector<std::string>> PidsToRead();
  // Reads their stats into `now`, skipping processes that vanished; the root's must be readable.
  Status ReadStats(const std::vector<std::string>& names, Snapshot& now);
  // NotFound when the root is not among them, or its pid now names another process.
  Status CheckRoot(const Snapshot& now);
  // The root, its descendants and the earlier members still alive.
  void FindMembers(Snapshot& now) const;
  // Adds the CPU of the members that vanished to the exited totals (the accounting rule above).
  void ChargeVanished(const Snapshot& now);
  // The members' figures; they become live_.
  Result<TreeSample> SumMembers(const Snapshot& now);
  // Adds a member's /proc/<pid>/status figures, when it still has one.
  Status AddStatus(pid_t pid, TreeSample& sample);
  // "target process <root> is gone".
  std::string RootGone() const;

  SysEnv& env_;
  pid_t root_;
  bool root_seen_ = false;
  uint64_t root_starttime_ = 0;
  std::map<pid_t, Seen> live_;     // members seen in the last sample
  std::optional<pid_t> last_pid_;  // /proc/loadavg's last pid at the previous sample
  int full_scans_ = 0;
  uint64_t exited_user_ticks_ = 0;  // last known CPU of members that have exited
  uint64_t exited_sys_ticks_ = 0;
};

// Checks that every thread of every given process may run only on `cpus` (Cpus_allowed_list of
// /proc/<pid>/task/<tid>/status), so a target that re-pins itself or a thread is caught. Processes
// and threads that exit while being read are skipped. FailedPrecondition names the first
// offender: "thread 1235 of pid 1234 (nginx) may run on CPUs 0-1, not only on 0".
Status CheckThreadAffinity(SysEnv& env, const std::vector<pid_t>& pids,
                           const std::vector<int>& cpus);

}  // namespace benchlab

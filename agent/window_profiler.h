// WindowProfiler: samples a target's processes on-CPU, with call stacks, over exactly a measured
// window's interval, and folds what it took on the agent (docs/profiles.md). It runs Debian's
// `perf record` (linux-perf) on the PMU's cycles where the host has one and on the software
// cpu-clock event where it has none (virtual machines; SamplingEvent), frame-pointer call
// chains, at a fixed frequency. Sampling is switched off
// as soon as perf has started, then on and off through its control FIFOs (--control), each
// switch acknowledged, so the samples cover the interval between Enable and Disable and none of
// perf's own wind-down; perf's tracking of new mappings (a dummy event) stays on throughout, so
// code mapped before the window is named. Then `perf script`
// symbolises on the agent (C/C++ demangled, shared libraries, the kernel where kptr_restrict
// allows, JIT code through /tmp/perf-PID.map) and common/folded_profile.h folds it, so no raw
// address leaves the agent. perf is a child of the agent, pinned to the agent's own CPUs, so the
// host watch counts its CPU as the lab's own, never as foreign CPU.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/folded_profile.h"
#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

class TargetProcess;

struct ProfileSpec {
  std::vector<pid_t> pids;               // processes to sample (every thread of each)
  std::vector<int> cpus;                 // where perf itself runs; empty: inherit the agent's
  int frequency_hz = kDefaultProfileHz;  // samples per second per CPU the processes run on
  std::string scratch_dir;    // made 0700; holds perf.data and perf's log; must not exist
  std::string perf = "perf";  // the perf command, looked up in PATH
  std::string event;          // the sampling event; empty: SamplingEvent's
};

// The event perf samples on: the PMU's `cycles` where the host has a core PMU
// (/sys/bus/event_source/devices/cpu), else the software `cpu-clock`, which every kernel has
// (docs/profiles.md, "Sampling a window").
std::string SamplingEvent(SysEnv& env);

class WindowProfiler {
 public:
  // Starts perf and switches its sampling off, returning once perf acknowledged it.
  // Unavailable when perf cannot be started (not installed); FailedPrecondition with perf's own
  // words when it exited (the kernel refused: perf_event_paranoid, no CAP_PERFMON; or a process
  // is gone); DeadlineExceeded when it did not answer within `timeout`.
  static Result<std::unique_ptr<WindowProfiler>> Start(SysEnv& env, const ProfileSpec& spec,
                                                       std::chrono::milliseconds timeout);
  ~WindowProfiler();  // stops perf if Finish was not called; removes the scratch directory
  WindowProfiler(const WindowProfiler&) = delete;
  WindowProfiler& operator=(const WindowProfiler&) = delete;

  // Switches sampling on, returning once perf acknowledged it; errors as Start's.
  Status Enable(std::chrono::milliseconds timeout);
  // Switches sampling off (acknowledged), then stops perf and folds the samples. `timeout`
  // bounds the whole: switch, stop and symbolisation.
  Result<FoldedProfile> Finish(std::chrono::milliseconds timeout);

 private:
  WindowProfiler(SysEnv& env, ProfileSpec spec, std::unique_ptr<TargetProcess> record, int ack_fd);
  // Writes a control command ("enable cpu-clock", ...) and waits for perf's "ack".
  Status Command(const std::string& command, std::chrono::steady_clock::time_point deadline);
  Status PerfExited();  // the error when perf is no longer running

  SysEnv& env_;
  ProfileSpec spec_;
  std::unique_ptr<TargetProcess> record_;
  int ctl_fd_ = -1;  // the control FIFO, opened once perf reads it
  int ack_fd_ = -1;  // the acknowledgement FIFO
  bool enabled_ = false;
};

}  // namespace benchlab

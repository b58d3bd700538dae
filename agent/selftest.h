// Self-test: a fixed CPU-bound calibration (SHA-256 over a fixed buffer, a few tens of ms) run
// on a dedicated thread pinned to given CPUs, timed by wall clock and by the thread's own CPU
// clock. Run at the start of a campaign (the calibration) and before each window; a window's
// drift from the calibration catches throttling and background scheduling (a self-test that
// took 85 ms by hand and 230 ms under cron). RunSelfTest blocks its caller until the work is
// done; it may be called from any thread, and concurrent calls do not share state.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct SelfTestResult {
  double wall_ms = 0;
  double cpu_ms = 0;          // CPU time of the self-test thread
  uint64_t checksum = 0;      // of the work: the same on every run and machine
  std::vector<int> affinity;  // as read back inside the thread after pinning
};

// Runs `rounds` passes of the calibration work (the default takes a few tens of ms on a 2020s
// server core), timed, after the same work once untimed to bring the core out of idle. Pins the
// thread through env.SetAffinity; an empty `cpus` leaves it unpinned.
Result<SelfTestResult> RunSelfTest(SysEnv& env, const std::vector<int>& cpus, int rounds = 0);

// The work itself, without threads or timing: the checksum after `rounds` passes.
uint64_t SelfTestWork(int rounds);

// Relative drift of a self-test from the campaign's calibration: t / t0 - 1 (0.25 = 25% slower).
// InvalidArgument when a duration is not positive.
Result<double> SelfTestDrift(double t_ms, double calibration_ms);

}  // namespace benchlab

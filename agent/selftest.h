// Self-test: a fixed CPU-bound calibration (SHA-256 over a fixed buffer) run on a dedicated
// thread pinned to given CPUs. Run at the start of a campaign (the calibration) and before each
// window; a window's drift from the calibration catches throttling, background scheduling and a
// competing process on the pinned CPU (a self-test that took 85 ms by hand and 230 ms under
// cron). It runs several short passes, each timed by the wall clock and by the thread's own CPU
// clock, and splits the two things that slow it: how fast the CPU runs the work (the fastest
// pass's CPU time) and how much of the CPU the thread gets (the median pass's CPU time over its
// wall time). A moment of interference (a hypervisor's sibling vCPU busy for a few ms, a timer,
// a neighbour's burst) slows one pass or two and moves neither; a lasting slowdown (throttling, a
// process sharing the pinned CPU, background scheduling) moves one of them in every pass
// (docs/gates.md, "selftest_drift"). RunSelfTest blocks its caller until the work is done; it may
// be called from any thread, and concurrent calls do not share state.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct SelfTestResult {
  // What the gate judges: the fastest pass's CPU time divided by the median pass's share of its
  // wall time on the CPU, i.e. how long a pass takes on this CPU at the share of it the thread
  // gets. Equal to the wall time of an undisturbed pass.
  double time_ms = 0;
  double cpu_ms = 0;          // the fastest pass's CPU time
  double on_cpu = 0;          // the median pass's CPU time / wall time (0 to 1)
  int passes = 0;             // timed passes run, repeated ones included
  int descheduled = 0;        // of which the thread was off its CPU for part of the pass
  uint64_t checksum = 0;      // of one pass's work: the same on every run and machine
  std::vector<int> affinity;  // as read back inside the thread after pinning
};

// One timed pass: its wall and thread CPU times.
struct SelfTestPass {
  double wall_ms = 0;
  double cpu_ms = 0;
};

// The self-test's policy apart from its clock: kSelfTestPasses passes of `pass`, a pass during
// which the thread was descheduled (its CPU time under kOnCpuShare of its wall time) run again,
// up to kSelfTestExtraPasses repeats in all; then the result's time from every pass run. Under
// a process competing for the pinned CPU every pass is descheduled, the repeats run out and the
// median share stays low, so the time stays long however lucky one pass was.
inline constexpr int kSelfTestPasses = 7;
inline constexpr int kSelfTestExtraPasses = 5;
inline constexpr double kOnCpuShare = 0.97;
SelfTestResult JudgePasses(const std::function<SelfTestPass()>& pass);

// Runs the self-test: 4 x `rounds` rounds of the work untimed to bring the core out of idle,
// then JudgePasses over passes of `rounds` rounds each (the default pass takes about 8 ms on a
// 2020s server core). Pins the thread through env.SetAffinity; an empty `cpus` leaves it
// unpinned.
Result<SelfTestResult> RunSelfTest(SysEnv& env, const std::vector<int>& cpus, int rounds = 0);

// The work itself, without threads or timing: the checksum after `rounds` passes.
uint64_t SelfTestWork(int rounds);

// Relative drift of a self-test from the campaign's calibration: t / t0 - 1 (0.25 = 25% slower).
// InvalidArgument when a duration is not positive.
Result<double> SelfTestDrift(double t_ms, double calibration_ms);

}  // namespace benchlab

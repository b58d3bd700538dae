#include "agent/selftest.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <vector>

namespace benchlab {
namespace {

// A CPU this process may run on; the last one, so pinning is visible when there are several.
int SomeAllowedCpu() {
  Result<std::vector<int>> cpus = RealSysEnv().GetAffinity(0);
  return cpus.ok() && !cpus->empty() ? cpus->back() : 0;
}

TEST(SelfTestTest, RunsPinnedAndReadsBackItsAffinity) {
  const int cpu = SomeAllowedCpu();
  Result<SelfTestResult> r = RunSelfTest(RealSysEnv(), {cpu}, 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->affinity, std::vector<int>{cpu});
  EXPECT_GT(r->time_ms, 0);
  EXPECT_GT(r->cpu_ms, 0);
  // A thread cannot use more CPU than the time it ran for: the share is at most 1, and the time
  // at least the CPU time.
  EXPECT_GT(r->on_cpu, 0);
  EXPECT_LE(r->on_cpu, 1);
  EXPECT_GE(r->time_ms, r->cpu_ms);
}

TEST(SelfTestTest, LeavesTheCallersAffinityAlone) {
  Result<std::vector<int>> before = RealSysEnv().GetAffinity(0);
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(RunSelfTest(RealSysEnv(), {SomeAllowedCpu()}, 1).ok());
  Result<std::vector<int>> after = RealSysEnv().GetAffinity(0);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*before, *after);
}

TEST(SelfTestTest, TheWorkIsDeterministicAndCannotBeSkipped) {
  // Pinned values: a change to the work would silently change every campaign's calibration.
  EXPECT_EQ(SelfTestWork(1), SelfTestWork(1));
  EXPECT_NE(SelfTestWork(1), SelfTestWork(2));
  EXPECT_EQ(SelfTestWork(0), 0x6a09e667bb67ae85u) << "no rounds: SHA-256's initial state";
  EXPECT_EQ(SelfTestWork(1), 0xdff23732b0d8cf45u);
  Result<SelfTestResult> a = RunSelfTest(RealSysEnv(), {}, 3);
  Result<SelfTestResult> b = RunSelfTest(RealSysEnv(), {}, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->checksum, SelfTestWork(3));
  EXPECT_EQ(a->checksum, b->checksum);
  EXPECT_FALSE(a->affinity.empty()) << "unpinned: the inherited set is read back";
}

TEST(SelfTestTest, RepeatedRunsAgreeWithinALooseFactor) {
  // Behaviour, not speed: the same work costs about the same CPU on the same machine; the
  // bound is loose enough for a shared VM.
  Result<SelfTestResult> a = RunSelfTest(RealSysEnv(), {SomeAllowedCpu()}, 8);
  Result<SelfTestResult> b = RunSelfTest(RealSysEnv(), {SomeAllowedCpu()}, 8);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GT(a->cpu_ms, 0);
  ASSERT_GT(b->cpu_ms, 0);
  EXPECT_LT(a->cpu_ms / b->cpu_ms, 20);
  EXPECT_LT(b->cpu_ms / a->cpu_ms, 20);
}

TEST(SelfTestTest, PinningToACpuOutsideTheMachineIsAnError) {
  EXPECT_FALSE(RunSelfTest(RealSysEnv(), {CPU_SETSIZE + 1}, 1).ok());
}

// JudgePasses over a canned sequence of passes: each call returns the next (the last repeats).
SelfTestResult Judge(std::vector<SelfTestPass> passes) {
  size_t next = 0;
  return JudgePasses([&] { return passes[std::min(next++, passes.size() - 1)]; });
}

TEST(SelfTestPolicyTest, AnUndisturbedRunIsItsFastestPass) {
  SelfTestResult r =
      Judge({{10.4, 10.4}, {10, 10}, {13, 13}, {10.2, 10.2}, {16, 16}, {10.3, 10.3}, {11, 11}});
  EXPECT_EQ(r.passes, kSelfTestPasses);
  EXPECT_EQ(r.descheduled, 0);
  EXPECT_DOUBLE_EQ(r.cpu_ms, 10);
  EXPECT_DOUBLE_EQ(r.on_cpu, 1);
  EXPECT_DOUBLE_EQ(r.time_ms, 10);
}

TEST(SelfTestPolicyTest, ADescheduledPassIsRepeatedAndMovesNothing) {
  // The first pass spent half its wall time off the CPU (a burst of something else): it is run
  // again, and the time is the CPU's speed, not the scheduler's.
  SelfTestResult r = Judge({{20, 10},
                            {10.5, 10.5},
                            {10.1, 10.1},
                            {10.3, 10.3},
                            {10.2, 10.2},
                            {10.4, 10.4},
                            {10.6, 10.6},
                            {10.2, 10.2}});
  EXPECT_EQ(r.passes, kSelfTestPasses + 1);
  EXPECT_EQ(r.descheduled, 1);
  EXPECT_DOUBLE_EQ(r.on_cpu, 1);
  EXPECT_DOUBLE_EQ(r.time_ms, 10);
}

TEST(SelfTestPolicyTest, ACompetingProcessIsNotRepeatedAwayNorHiddenByALuckyPass) {
  // A busy loop sharing the pinned CPU: the thread gets half of it in most passes, all of it in
  // a lucky one (it ran inside one of its time slices). The repeats run out; the median share
  // stays at a half, and the time is twice the undisturbed pass.
  SelfTestResult r = Judge({{10, 10}, {20, 10}});
  EXPECT_EQ(r.passes, kSelfTestPasses + kSelfTestExtraPasses);
  EXPECT_EQ(r.descheduled, r.passes - 1);
  EXPECT_DOUBLE_EQ(r.cpu_ms, 10);
  EXPECT_DOUBLE_EQ(r.on_cpu, 0.5);
  EXPECT_DOUBLE_EQ(r.time_ms, 20);
}

TEST(SelfTestPolicyTest, ASlowCpuSlowsEveryPass) {
  // Throttled, or a frequency halved: on the CPU throughout, and twice as slow every time.
  SelfTestResult r =
      Judge({{20, 20}, {20.5, 20.5}, {21, 21}, {20.2, 20.2}, {20.1, 20.1}, {20.3, 20.3}});
  EXPECT_EQ(r.descheduled, 0);
  EXPECT_DOUBLE_EQ(r.time_ms, 20);
}

TEST(SelfTestPolicyTest, OnCpuWithinTheShareIsNotDescheduled) {
  SelfTestResult r = Judge({{10, 10 * kOnCpuShare}});
  EXPECT_EQ(r.descheduled, 0);
  EXPECT_EQ(r.passes, kSelfTestPasses);
  EXPECT_NEAR(r.time_ms, 10, 1e-9);
}

TEST(SelfTestTest, RunsSeveralTimedPasses) {
  Result<SelfTestResult> r = RunSelfTest(RealSysEnv(), {SomeAllowedCpu()}, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(r->passes, kSelfTestPasses);
  EXPECT_LE(r->passes, kSelfTestPasses + kSelfTestExtraPasses);
  EXPECT_LE(r->descheduled, r->passes);
}

TEST(SelfTestTest, Drift) {
  Result<double> cron = SelfTestDrift(230, 85);
  ASSERT_TRUE(cron.ok());
  EXPECT_NEAR(*cron, 230.0 / 85 - 1, 1e-12);
  EXPECT_DOUBLE_EQ(*SelfTestDrift(85, 85), 0);
  EXPECT_DOUBLE_EQ(*SelfTestDrift(80, 100), -0.2);
  EXPECT_FALSE(SelfTestDrift(0, 85).ok());
  EXPECT_FALSE(SelfTestDrift(85, -1).ok());
}

}  // namespace
}  // namespace benchlab

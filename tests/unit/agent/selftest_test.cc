#include "agent/selftest.h"

#include <gtest/gtest.h>
#include <sched.h>

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
  EXPECT_GT(r->wall_ms, 0);
  EXPECT_GT(r->cpu_ms, 0);
  // A thread cannot use more CPU than the time it ran for (with slack for clock granularity).
  EXPECT_LE(r->cpu_ms, r->wall_ms * 1.05 + 1);
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

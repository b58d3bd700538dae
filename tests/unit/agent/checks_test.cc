#include "agent/checks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

std::string Joined(const CheckResult& r) {
  std::string out;
  for (const std::string& reason : r.reasons) out += reason + "\n";
  return out;
}

class PowerCheckTest : public ::testing::Test {
 protected:
  FakeProcRoot fake_;
  RootedSysEnv env_{fake_.root()};
};

TEST_F(PowerCheckTest, OnBatteryWhenMainsIsOffline) {
  fake_.PutPowerSupply("AC", "Mains", "0");
  fake_.PutPowerSupply("BAT0", "Battery", "Discharging");
  CheckResult r = CheckPower(env_);
  EXPECT_EQ(r.outcome, CheckOutcome::kFail);
  ASSERT_EQ(r.reasons.size(), 2u) << Joined(r);
  EXPECT_EQ(r.reasons[0], "on_battery: mains supply AC online 0 (expected 1)");
  EXPECT_EQ(r.reasons[1], "on_battery: battery BAT0 status Discharging");
}

TEST_F(PowerCheckTest, PassesOnMainsEvenWithASecondOfflineMains) {
  fake_.PutPowerSupply("AC", "Mains", "1");
  fake_.PutPowerSupply("ucsi-source-psy-1", "Mains", "0");  // an empty USB-C port
  fake_.PutPowerSupply("BAT0", "Battery", "Charging");
  CheckResult r = CheckPower(env_);
  EXPECT_EQ(r.outcome, CheckOutcome::kPass) << Joined(r);
  EXPECT_TRUE(r.reasons.empty());
}

TEST_F(PowerCheckTest, BatteryOnlyMachineFailsWhileDischarging) {
  fake_.PutPowerSupply("BAT0", "Battery", "Discharging");
  CheckResult r = CheckPower(env_);
  EXPECT_EQ(r.outcome, CheckOutcome::kFail);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0], "on_battery: no mains supply and battery BAT0 status Discharging");

  fake_.PutPowerSupply("BAT0", "Battery", "Full");
  EXPECT_EQ(CheckPower(env_).outcome, CheckOutcome::kPass);
}

TEST_F(PowerCheckTest, UnavailableWithoutSupplies) {
  CheckResult none = CheckPower(env_);
  EXPECT_EQ(none.outcome, CheckOutcome::kUnavailable);
  EXPECT_EQ(Joined(none), "power: no /sys/class/power_supply\n");

  fake_.PutPowerSupply("usb", "USB", "1");  // neither mains nor battery
  CheckResult usb = CheckPower(env_);
  EXPECT_EQ(usb.outcome, CheckOutcome::kUnavailable);
  EXPECT_FALSE(usb.failed());
  EXPECT_STREQ(CheckOutcomeName(usb.outcome), "unavailable");
}

class SchedulingCheckTest : public ::testing::Test {
 protected:
  SchedulingCheckTest() {
    target_.pid = 1234;
    target_.comm = "nginx";
    fake_.Put(target_);
  }
  CheckResult Check() {
    Result<CheckResult> r = CheckScheduling(env_, 1234);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CheckResult{};
  }
  void V2Cgroup(const std::string& path) {
    fake_.Write("/proc/1234/cgroup", "0::" + path + "\n");
    fake_.Write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  }

  FakeProcRoot fake_;
  RootedSysEnv env_{fake_.root()};
  FakeProcess target_;
};

TEST_F(SchedulingCheckTest, AnOrdinaryProcessPasses) {
  V2Cgroup("/system.slice/nginx.service");
  fake_.Write("/sys/fs/cgroup/system.slice/nginx.service/cpu.max", "max 100000\n");
  fake_.Write("/sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
  target_.nice = -5;  // a negative nice is a higher priority, not background
  fake_.Put(target_);
  CheckResult r = Check();
  EXPECT_EQ(r.outcome, CheckOutcome::kPass) << Joined(r);
}

TEST_F(SchedulingCheckTest, ANiceTarget) {
  target_.nice = 10;
  fake_.Put(target_);
  CheckResult r = Check();
  EXPECT_EQ(r.outcome, CheckOutcome::kFail);
  EXPECT_EQ(Joined(r), "background_scheduling: pid 1234 (nginx) nice 10 > 0\n");
}

TEST_F(SchedulingCheckTest, SchedIdleAndSchedBatch) {
  target_.policy = 5;
  fake_.Put(target_);
  EXPECT_EQ(Joined(Check()), "background_scheduling: pid 1234 (nginx) SCHED_IDLE\n");
  target_.policy = 3;
  fake_.Put(target_);
  EXPECT_EQ(Joined(Check()), "background_scheduling: pid 1234 (nginx) SCHED_BATCH\n");
  target_.policy = 1;  // SCHED_FIFO: real-time, not background
  fake_.Put(target_);
  EXPECT_EQ(Check().outcome, CheckOutcome::kPass);
}

TEST_F(SchedulingCheckTest, AThreadOfItsOwnIsCheckedToo) {
  FakeProcess thread = target_;
  thread.pid = 1240;
  thread.comm = "worker";
  thread.policy = 5;
  fake_.Write("/proc/1234/task/1234/stat", FormatFakeStat(target_));
  fake_.Write("/proc/1234/task/1240/stat", FormatFakeStat(thread));
  EXPECT_EQ(Joined(Check()),
            "background_scheduling: pid 1234 (nginx) thread 1240 (worker) SCHED_IDLE\n");
}

TEST_F(SchedulingCheckTest, ACgroupV2Quota) {
  V2Cgroup("/system.slice/x");
  fake_.Write("/sys/fs/cgroup/system.slice/x/cpu.max", "50000 100000\n");
  CheckResult r = Check();
  EXPECT_EQ(r.outcome, CheckOutcome::kFail);
  EXPECT_EQ(Joined(r),
            "background_scheduling: pid 1234 (nginx) cgroup /system.slice/x cpu.max "
            "50000/100000 caps it at 0.50 CPU\n");
}

TEST_F(SchedulingCheckTest, AnAncestorsQuotaCapsItToo) {
  V2Cgroup("/user.slice/user-0.slice/session-1.scope");
  fake_.Write("/sys/fs/cgroup/user.slice/user-0.slice/session-1.scope/cpu.max", "max 100000\n");
  fake_.Write("/sys/fs/cgroup/user.slice/cpu.max", "150000 100000\n");
  EXPECT_EQ(Joined(Check()),
            "background_scheduling: pid 1234 (nginx) cgroup /user.slice cpu.max 150000/100000 "
            "caps it at 1.50 CPU\n");
}

TEST_F(SchedulingCheckTest, AnIdleCgroup) {
  V2Cgroup("/batch");
  fake_.Write("/sys/fs/cgroup/batch/cpu.idle", "1\n");
  EXPECT_EQ(Joined(Check()),
            "background_scheduling: pid 1234 (nginx) cgroup /batch cpu.idle 1 (SCHED_IDLE "
            "group)\n");
}

TEST_F(SchedulingCheckTest, ACgroupV1QuotaOnAHybridHost) {
  fake_.Write("/proc/1234/cgroup", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/docker/abc\n");
  fake_.Write("/sys/fs/cgroup/unified/cgroup.controllers", "");
  fake_.Write("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "25000\n");
  fake_.Write("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  fake_.Write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  fake_.Write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(Joined(Check()),
            "background_scheduling: pid 1234 (nginx) cgroup /docker/abc "
            "cpu.cfs_quota_us/cpu.cfs_period_us 25000/100000 caps it at 0.25 CPU\n");
}

TEST_F(SchedulingCheckTest, EveryReasonIsReported) {
  target_.nice = 19;
  target_.policy = 3;
  fake_.Put(target_);
  V2Cgroup("/x");
  fake_.Write("/sys/fs/cgroup/x/cpu.max", "10000 100000\n");
  CheckResult r = Check();
  ASSERT_EQ(r.reasons.size(), 3u) << Joined(r);
  EXPECT_TRUE(r.failed());
}

TEST_F(SchedulingCheckTest, AGoneProcessIsNotFound) {
  EXPECT_EQ(CheckScheduling(env_, 999).status().code(), StatusCode::kNotFound);
}

TEST(SchedulingCheckRealTest, ThisTestProcessReadsWithoutError) {
  Result<CheckResult> r = CheckScheduling(RealSysEnv(), getpid());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->outcome, CheckOutcome::kUnavailable);
}

TEST(CpuMaxTest, Parses) {
  Result<std::optional<double>> none = ParseCpuMax("max 100000\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<double>> half = ParseCpuMax("50000 100000");
  ASSERT_TRUE(half.ok());
  EXPECT_DOUBLE_EQ(half->value(), 0.5);
  Result<std::optional<double>> no_period = ParseCpuMax("max");
  ASSERT_TRUE(no_period.ok());
  EXPECT_FALSE(no_period->has_value());
  EXPECT_FALSE(ParseCpuMax("lots 100000").ok());
  EXPECT_FALSE(ParseCpuMax("50000 0").ok());
  EXPECT_FALSE(ParseCpuMax("").ok());
}

}  // namespace
}  // namespace benchlab

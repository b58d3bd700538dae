#include "agent/host_stat.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

// Copied from a 2-vCPU VM (kernel 6.x), with steal; trailing lines cut.
constexpr const char* kRealStat =
    "cpu  103152 268559 36357 145019 802 0 2744 472 0 0\n"
    "cpu0 49930 135107 17536 74217 66 0 1460 235 0 0\n"
    "cpu1 53221 133451 18820 70802 735 0 1283 237 0 0\n"
    "intr 1785654 0 0 0\nctxt 3784728\nbtime 1764460000\nprocesses 21000\n";

TEST(SystemStatTest, ParsesTotalAndEachCpu) {
  Result<SystemStat> stat = ParseSystemStat(kRealStat);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->online_cpus, 2);
  ASSERT_EQ(stat->cpus.size(), 2u);
  EXPECT_EQ(stat->total.user, 103152u);
  EXPECT_EQ(stat->total.nice, 268559u);
  EXPECT_EQ(stat->total.softirq, 2744u);
  EXPECT_EQ(stat->total.steal, 472u);
  EXPECT_EQ(stat->cpus[1].iowait, 735u);
  EXPECT_EQ(stat->cpus[0].steal, 235u);
  ASSERT_TRUE(stat->forks.has_value());
  EXPECT_EQ(*stat->forks, 21000u);
}

TEST(SystemStatTest, StealIsNeitherBusyNorIdleAndGuestIsNotCountedTwice) {
  CpuTimes t;
  t.user = 100;  // includes guest 30
  t.guest = 30;
  t.nice = 10;
  t.guest_nice = 5;
  t.system = 20;
  t.irq = 1;
  t.softirq = 2;
  t.idle = 50;
  t.iowait = 7;
  t.steal = 40;
  EXPECT_EQ(t.Busy(), 133u);
  EXPECT_EQ(t.Total(), 133u + 50 + 7 + 40);
}

TEST(SystemStatTest, OldKernelsWithoutStealOrGuestColumnsReadZero) {
  Result<SystemStat> stat = ParseSystemStat("cpu 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->total.softirq, 7u);
  EXPECT_EQ(stat->total.steal, 0u);
  EXPECT_EQ(stat->total.guest, 0u);
  EXPECT_FALSE(stat->forks.has_value());
}

TEST(SystemStatTest, OfflineCpusLeaveGaps) {
  Result<SystemStat> stat = ParseSystemStat("cpu 2 0 0 2\ncpu0 1 0 0 1\ncpu3 1 0 0 1\n");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->online_cpus, 2);
  ASSERT_EQ(stat->cpus.size(), 4u);
  EXPECT_EQ(stat->cpus[3].user, 1u);
  EXPECT_EQ(stat->cpus[1].Total(), 0u);
  EXPECT_EQ(stat->online, (std::vector<int>{0, 3}));
}

TEST(SystemStatTest, MatchesTheFakeRootFormat) {
  FakeCpu a, b;
  a.user = 10, a.steal = 3, b.idle = 20, b.guest = 1;
  Result<SystemStat> stat = ParseSystemStat(FormatFakeSystemStat({a, b}));
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->total.Total(), 33u);
  EXPECT_EQ(stat->cpus[1].guest, 1u);
}

TEST(SystemStatTest, RejectsGarbage) {
  EXPECT_FALSE(ParseSystemStat("").ok());
  EXPECT_FALSE(ParseSystemStat("intr 1 2 3\n").ok());
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 3\ncpu0 1 2 3\n").ok()) << "fewer than 4 columns";
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 x 4\ncpu0 1 2 3 4\n").ok());
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 3 4\n").ok()) << "no per-CPU line";
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 3 4\ncpuX 1 2 3 4\n").ok());
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 3 4\ncpu0 1 2 3 4\nprocesses many\n").ok());
}

TEST(SystemStatTest, DeltaNeverGoesNegative) {
  CpuTimes then, now;
  then.user = 10, then.idle = 50;
  now.user = 15, now.idle = 40;  // a CPU went offline between the readings
  CpuTimes d = CpuDelta(now, then);
  EXPECT_EQ(d.user, 5u);
  EXPECT_EQ(d.idle, 0u);
}

TEST(MaxForeignOverSpansTest, RollingWindows) {
  // Ten periods of 10 ticks per CPU: busy 10, own 10, except one period with 5 foreign ticks.
  std::vector<PeriodTicks> periods(10, PeriodTicks{10, 10, 10});
  periods[4].busy = 15;
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 0), 50) << "the single worst period";
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 20), 25) << "two periods";
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 100), 5) << "the whole series is one span";
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 1000), 5) << "shorter than a span: its mean";
  periods[5].own = 20;  // own ahead of busy: never negative, and it offsets within a span
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 20), 25);
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 100), 0);
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans({}, 100), 0);
}

TEST(MaxForeignOverSpansTest, SignedBusyTelescopesOverARun) {
  // Unticked time read a tick late in one period and a tick early in the next: -1 and +1
  // cancel within a span, while the single periods see them.
  std::vector<PeriodTicks> periods(4, PeriodTicks{10, 10, 10});
  periods[1].busy = 9;
  periods[2].busy = 11;
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 0), 10);
  EXPECT_DOUBLE_EQ(MaxForeignOverSpans(periods, 40), 0);
}

TEST(UptimeTest, FirstFieldInSeconds) {
  Result<double> s = ParseUptimeSeconds("350735.47 234388.90\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(*s, 350735.47);
  EXPECT_FALSE(ParseUptimeSeconds("").ok());
  EXPECT_FALSE(ParseUptimeSeconds("12x 3\n").ok());
  EXPECT_FALSE(ParseUptimeSeconds("-1 3\n").ok());
  EXPECT_FALSE(ParseUptimeSeconds("nan 3\n").ok());
}

SystemStat TwoCpus(uint64_t busy0, uint64_t idle0, uint64_t busy1, uint64_t idle1,
                   std::optional<double> uptime_s) {
  SystemStat s;
  s.cpus.resize(2);
  s.cpus[0].user = busy0;
  s.cpus[0].idle = idle0;
  s.cpus[1].user = busy1;
  s.cpus[1].idle = idle1;
  s.online = {0, 1};
  s.online_cpus = 2;
  s.uptime_s = uptime_s;
  return s;
}

TEST(UntickedTicksTest, WallTimeTheCountersMissedOnEachCpu) {
  // One second at 100 ticks/s: CPU 0 counted all 100 ticks, CPU 1 only 70 (30 busy ticks lost).
  const SystemStat then = TwoCpus(1000, 1000, 1000, 1000, 50.0);
  const SystemStat now = TwoCpus(1100, 1000, 1020, 1050, 51.0);
  EXPECT_DOUBLE_EQ(UntickedTicks(now, then, 100), 30);
  // A counter a tick ahead of the clock reads negative (the caller decides where to clamp).
  const SystemStat ahead = TwoCpus(1101, 1000, 1000, 1100, 51.0);
  EXPECT_DOUBLE_EQ(UntickedTicks(ahead, then, 100), -1);
  // No uptime at either end: nothing is known, 0.
  EXPECT_DOUBLE_EQ(UntickedTicks(TwoCpus(1100, 1000, 1020, 1050, std::nullopt), then, 100), 0);
  EXPECT_DOUBLE_EQ(UntickedTicks(now, TwoCpus(1000, 1000, 1000, 1000, std::nullopt), 100), 0);
}

TEST(UntickedTicksTest, CpusOfflineAtEitherReadingAreLeftOut) {
  SystemStat then = TwoCpus(1000, 1000, 0, 0, 50.0);
  then.online = {0};  // CPU 1 offline: a gap of zeros
  then.online_cpus = 1;
  const SystemStat now = TwoCpus(1080, 1000, 500, 500, 51.0);
  EXPECT_DOUBLE_EQ(UntickedTicks(now, then, 100), 20);
}

TEST(VmStatTest, ReadsSwapCounters) {
  Result<SwapCounters> swap = ParseVmStatSwap(
      "nr_free_pages 1\npswpin 12\npswpout 345\npswpin_extra 9\nzone_reclaim_failed 0\n");
  ASSERT_TRUE(swap.ok()) << swap.status().ToString();
  EXPECT_EQ(swap->pages_in, 12u);
  EXPECT_EQ(swap->pages_out, 345u);
  EXPECT_FALSE(ParseVmStatSwap("nr_free_pages 1\n").ok());
  EXPECT_FALSE(ParseVmStatSwap("pswpin x\npswpout 1\n").ok());
}

TEST(LoadAvgTest, LastPid) {
  Result<pid_t> pid = ParseLoadAvgLastPid("5.63 5.43 4.74 5/106 451\n");
  ASSERT_TRUE(pid.ok());
  EXPECT_EQ(*pid, 451);
  EXPECT_FALSE(ParseLoadAvgLastPid("").ok());
  EXPECT_FALSE(ParseLoadAvgLastPid("5.63 5.43 4.74 5/106\n").ok());
}

TEST(ProcBriefTest, ReadsTimesNiceAndPolicy) {
  FakeProcess p;
  p.pid = 4321;
  p.ppid = 7;
  p.comm = "a (b) c)";
  p.utime = 11, p.stime = 22, p.cutime = 33, p.cstime = 44;
  p.starttime = 5555;
  p.nice = 10;
  p.policy = 5;
  ProcBrief b;
  ASSERT_TRUE(ParseProcBrief(FormatFakeStat(p), b).ok());
  EXPECT_EQ(b.pid, 4321);
  EXPECT_EQ(b.comm, "a (b) c)");
  EXPECT_EQ(b.ppid, 7);
  EXPECT_EQ(b.utime, 11u);
  EXPECT_EQ(b.stime, 22u);
  EXPECT_EQ(b.cutime, 33u);
  EXPECT_EQ(b.cstime, 44u);
  EXPECT_EQ(b.starttime, 5555u);
  EXPECT_EQ(b.nice, 10);
  EXPECT_EQ(b.policy, 5);
}

TEST(ProcBriefTest, ReadsARealLine) {
  ProcBrief b;
  ASSERT_TRUE(ParseProcBrief("21577 (cat) R 21569 21569 20586 0 -1 4194304 100 0 0 0 3 1 0 0 30 "
                             "10 1 0 279448 3133440 407 18446744073709551615 94039349297152 "
                             "94039349317033 140728104806288 0 0 0 0 0 0 0 0 0 17 0 0 3 0 0 0 "
                             "94039349333040 94039349334656 94039593152512 140728104811146 "
                             "140728104811166 140728104811166 140728104812523 0\n",
                             b)
                  .ok());
  EXPECT_EQ(b.utime, 3u);
  EXPECT_EQ(b.nice, 10);
  EXPECT_EQ(b.starttime, 279448u);
  EXPECT_EQ(b.policy, 3);
}

TEST(ProcBriefTest, NegativeNiceAndShortOldKernelLines) {
  FakeProcess p;
  p.pid = 9;
  p.nice = -5;
  ProcBrief b;
  ASSERT_TRUE(ParseProcBrief(FormatFakeStat(p), b).ok());
  EXPECT_EQ(b.nice, -5);
  std::string text = FormatFakeStat(p);
  // Cut after field 30: no policy column.
  size_t pos = text.find(')');
  for (int field = 2; field < 31; ++field) pos = text.find(' ', pos + 1);
  ASSERT_TRUE(ParseProcBrief(text.substr(0, pos), b).ok());
  EXPECT_EQ(b.policy, -1);
  EXPECT_FALSE(ParseProcBrief("9 (x) S 1 2 3", b).ok());
  EXPECT_FALSE(ParseProcBrief("garbage", b).ok());
  EXPECT_EQ(SchedPolicyName(5), "SCHED_IDLE");
  EXPECT_EQ(SchedPolicyName(3), "SCHED_BATCH");
  EXPECT_EQ(SchedPolicyName(42), "policy 42");
}

}  // namespace
}  // namespace benchlab

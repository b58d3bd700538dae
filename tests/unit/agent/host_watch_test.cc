#include "agent/host_watch.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <map>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

// Counts the reads of each file, passing everything else through.
class CountingSysEnv : public RootedSysEnv {
 public:
  using RootedSysEnv::RootedSysEnv;
  Result<std::string> ReadFile(const std::string& path) override {
    ++reads[path];
    return RootedSysEnv::ReadFile(path);
  }
  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    ++lists[path];
    return RootedSysEnv::ListDir(path);
  }
  std::map<std::string, int> reads;
  std::map<std::string, int> lists;
};

// A fake 2-CPU host. Host time advances only through Advance(); processes run only through
// Run(); the two are set independently so each test states the host's and the processes' view.
class HostWatchTest : public ::testing::Test {
 protected:
  HostWatchTest() { Spawn(1, 0, "init"); }

  // Adds ticks summed over both CPUs (split evenly) to the host's counters.
  void Advance(uint64_t user, uint64_t idle, uint64_t steal = 0, uint64_t iowait = 0,
               uint64_t softirq = 0) {
    for (int i = 0; i < 2; ++i) {
      cpus_[i].user += user / 2 + (i == 0 ? user % 2 : 0);
      cpus_[i].idle += idle / 2 + (i == 0 ? idle % 2 : 0);
      cpus_[i].steal += steal / 2 + (i == 0 ? steal % 2 : 0);
      cpus_[i].iowait += iowait / 2 + (i == 0 ? iowait % 2 : 0);
      cpus_[i].softirq += softirq / 2 + (i == 0 ? softirq % 2 : 0);
    }
    fake_.PutSystemStat(cpus_, forks_);
  }
  // One second of both CPUs with `busy` ticks busy (out of 200).
  void Second(uint64_t busy) { Advance(busy, 200 - busy); }

  // A fork: the kernel's fork count in /proc/stat goes up.
  void Spawn(pid_t pid, pid_t ppid, const std::string& comm, uint64_t starttime = 1000) {
    fake_.PutSystemStat(cpus_, ++forks_);
    fake_.PutLoadAvg(pid);
    FakeProcess& p = procs_[pid];
    p.pid = pid;
    p.ppid = ppid;
    p.comm = comm;
    p.starttime = starttime;
    fake_.Put(p);
  }
  void Run(pid_t pid, uint64_t user_ticks) {
    procs_.at(pid).utime += user_ticks;
    fake_.Put(procs_.at(pid));
  }
  void Reparent(pid_t pid, pid_t ppid) {
    procs_.at(pid).ppid = ppid;
    fake_.Put(procs_.at(pid));
  }
  // The process exits having used `more` ticks since its last Run; `reaper` waits for it, so
  // its whole CPU shows in the reaper's cutime, as the kernel does.
  void Exit(pid_t pid, uint64_t more, pid_t reaper) {
    FakeProcess p = procs_.at(pid);
    p.utime += more;
    procs_.erase(pid);
    fake_.Remove(pid);
    if (reaper != 0) {
      procs_.at(reaper).cutime += p.utime + p.cutime;
      procs_.at(reaper).cstime += p.stime + p.cstime;
      fake_.Put(procs_.at(reaper));
    }
  }

  double TicksToSeconds(double ticks) {
    return ticks / static_cast<double>(env_.ClockTicksPerSecond());  // 100 on Linux: exact
  }

  FakeProcRoot fake_;
  RootedSysEnv env_{fake_.root()};
  std::vector<FakeCpu> cpus_{2};
  std::map<pid_t, FakeProcess> procs_;
  uint64_t forks_ = 100;
};

TEST_F(HostWatchTest, ForeignIsHostBusyMinusOwnTrees) {
  Spawn(100, 1, "benchlab");  // the agent: own root
  Spawn(101, 100, "server");  // the target, a child of the agent: own
  Spawn(200, 1, "stress");
  Spawn(300, 2, "kworker/0:1");
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());

  Second(150);  // host busy 150% of one core
  Run(100, 10);
  Run(101, 90);  // own: 100%
  Run(200, 45);
  Run(300, 5);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();

  EXPECT_DOUBLE_EQ(w->interval_s, TicksToSeconds(100));
  EXPECT_EQ(w->cpus, 2);
  EXPECT_DOUBLE_EQ(w->busy_pct, 150);
  EXPECT_DOUBLE_EQ(w->idle_pct, 50);
  EXPECT_DOUBLE_EQ(w->own_pct, 100);
  ASSERT_EQ(w->own_pct_by_root.size(), 1u);
  EXPECT_DOUBLE_EQ(w->own_pct_by_root[0], 100);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 50);
  EXPECT_DOUBLE_EQ(w->foreign_max_pct, 50);
  ASSERT_EQ(w->top_foreign.size(), 2u);
  EXPECT_EQ(w->top_foreign[0].comm, "stress");
  EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 45);
  EXPECT_EQ(w->top_foreign[1].comm, "kworker/0:1");
  EXPECT_DOUBLE_EQ(w->top_foreign[1].cpu_pct, 5);
  ASSERT_EQ(w->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 50);
}

TEST_F(HostWatchTest, ForeignProcessesCountInFullWhenTheCountersMissedTicks) {
  // The kernel samples busy time at timer ticks; a CPU that keeps going idle and busy (a load
  // generator) misses some, while every process is charged its exact runtime. Busy minus own
  // alone would read the loop beside the target at 70% instead of its whole core.
  Spawn(100, 1, "benchlab");  // the agent and its load generator, on CPU 1
  Spawn(200, 1, "stress");    // a busy loop on CPU 0
  fake_.PutUptime(5000.00);
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());

  cpus_[0].user += 100;  // CPU 0: all 100 ticks of the second busy
  cpus_[1].user += 20;   // CPU 1: 20 busy + 50 idle counted, 30 ticks of wall time missed
  cpus_[1].idle += 50;
  fake_.PutSystemStat(cpus_, forks_);
  fake_.PutUptime(5001.00);
  Run(100, 50);   // the generator ran 50 ticks
  Run(200, 100);  // the loop all of CPU 0
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();

  EXPECT_DOUBLE_EQ(w->interval_s, TicksToSeconds(100));  // the wall clock's, not the counters' 85
  EXPECT_DOUBLE_EQ(w->unticked_pct, 30);
  EXPECT_DOUBLE_EQ(w->busy_pct, 150);  // what the processes were charged
  EXPECT_DOUBLE_EQ(w->idle_pct, 50);
  EXPECT_DOUBLE_EQ(w->own_pct, 50);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 100);
  EXPECT_DOUBLE_EQ(w->foreign_max_pct, 100);  // never below the mean
  ASSERT_EQ(w->samples.size(), 1u);
  // A sample sees foreign processes only at full scans: the counters' figure, a lower bound.
  EXPECT_DOUBLE_EQ(w->samples[0].busy_pct, 120);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 70);
  EXPECT_DOUBLE_EQ(w->samples[0].t_s, 1.0);
}

TEST_F(HostWatchTest, MissedTicksAreNotForeignWhenNoForeignProcessRan) {
  // The counters missed 30 ticks of wall time on CPU 1, of which the load generator ran 20
  // (the rest was idle the counters missed too): nothing foreign ran, so nothing is foreign.
  Spawn(100, 1, "benchlab");
  Spawn(101, 100, "server");
  fake_.PutUptime(5000.00);
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  cpus_[0].user += 100;
  cpus_[1].user += 20;
  cpus_[1].idle += 50;
  fake_.PutSystemStat(cpus_, forks_);
  fake_.PutUptime(5001.00);
  Run(101, 100);
  Run(100, 40);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->busy_pct, 140);
  EXPECT_DOUBLE_EQ(w->idle_pct, 60);  // 50 counted + the 10 missed ticks nothing was charged
  EXPECT_DOUBLE_EQ(w->own_pct, 140);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 0);
  EXPECT_DOUBLE_EQ(w->foreign_max_pct, 0);
}

TEST_F(HostWatchTest, ChargedTimeNeverExceedsWhatTheClockLeavesRoom) {
  // Processes charged more than the counters plus the wall time they missed: busy stops at that
  // bound, give or take a tick either side of each CPU's two readings (2 CPUs: 4 ticks).
  Spawn(100, 1, "benchlab");
  Spawn(200, 1, "stress");
  fake_.PutUptime(5000.00);
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(100);  // 100 busy + 100 idle counted, nothing missed
  fake_.PutUptime(5001.00);
  Run(100, 60);
  Run(200, 43);  // 103 charged: within a tick per reading, taken as it is
  ASSERT_TRUE(watch.Sample().ok());
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->unticked_pct, 0);
  EXPECT_DOUBLE_EQ(w->busy_pct, 103);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 43);

  ASSERT_TRUE(watch.Begin().ok());
  Second(100);
  fake_.PutUptime(5002.00);
  Run(100, 60);
  Run(200, 50);  // 110 charged: more than the clock leaves room for
  w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->busy_pct, 104);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 44);
}

TEST_F(HostWatchTest, CountersThatKeepUpWithTheClockAreTakenAsTheyAre) {
  Spawn(100, 1, "benchlab");
  fake_.PutUptime(5000.00);
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(40);
  fake_.PutUptime(5001.00);
  Run(100, 40);
  ASSERT_TRUE(watch.Sample().ok());
  // A second period whose counters ran a tick ahead of the uptime read: clamped to nothing
  // missed over the window, not to a negative busy.
  cpus_[0].user += 101;
  cpus_[1].idle += 100;
  fake_.PutSystemStat(cpus_, forks_);
  fake_.PutUptime(5002.00);
  Run(100, 101);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->unticked_pct, 0);
  EXPECT_NEAR(w->busy_pct, 100.0 * 141 / 200.5, 1e-9);  // per CPU: 201 counted, 200 wall
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 0);
  ASSERT_EQ(w->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(w->samples[0].busy_pct, 40);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 0);
}

TEST_F(HostWatchTest, NestedRootsSplitOwnCpuByNearestRoot) {
  Spawn(100, 1, "benchlab");
  Spawn(101, 100, "server");
  Spawn(102, 101, "server-worker");
  HostWatch watch(env_, {.own_roots = {100, 101}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(100);
  Run(100, 4);
  Run(101, 16);
  Run(102, 80);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->own_pct_by_root.size(), 2u);
  EXPECT_DOUBLE_EQ(w->own_pct_by_root[0], 4);
  EXPECT_DOUBLE_EQ(w->own_pct_by_root[1], 96);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 0);
  EXPECT_TRUE(w->top_foreign.empty());
}

TEST_F(HostWatchTest, OwnProcessesExitingMidIntervalStayOwn) {
  Spawn(100, 1, "benchlab");
  Spawn(101, 100, "server");
  Spawn(102, 101, "server-child");
  Spawn(200, 1, "cron");
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());

  Second(80);
  Run(100, 10);
  Run(101, 30);
  Run(200, 40);
  ASSERT_TRUE(watch.Sample().ok());

  // 101 uses 20 more ticks and exits; the agent reaps it. Its child 102 is orphaned to init
  // and keeps working; a short-lived child the agent started and reaped between two samples
  // used 7 ticks. None of it is foreign.
  Second(70);
  Run(100, 5);
  Exit(101, 20, /*reaper=*/100);
  Reparent(102, 1);
  Run(102, 8);
  Spawn(103, 100, "curl", 2000);
  Exit(103, 7, /*reaper=*/100);
  Run(200, 30);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();

  // Own: 10 + 30 (first second), 5 + 20 + 8 + 7 (second) = 80 ticks over 200 per CPU.
  EXPECT_DOUBLE_EQ(w->own_pct, 40);
  EXPECT_DOUBLE_EQ(w->busy_pct, 75);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 35);
  ASSERT_EQ(w->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(w->samples[0].own_pct, 40);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 40);
  EXPECT_DOUBLE_EQ(w->samples[1].own_pct, 40);
  EXPECT_DOUBLE_EQ(w->samples[1].foreign_pct, 30);
  ASSERT_EQ(w->top_foreign.size(), 1u) << "init's reaped ticks are not new: none";
  EXPECT_EQ(w->top_foreign[0].comm, "cron");
  EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 35);
}

TEST_F(HostWatchTest, AReusedPidIsANewProcess) {
  Spawn(100, 1, "benchlab");
  Spawn(300, 1, "old", 1000);
  Run(300, 500);
  Spawn(32000, 1, "late");  // the last pid handed out before the window
  CountingSysEnv env(fake_.root());
  HostWatch watch(env, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(20);
  Exit(300, 0, 0);
  Spawn(300, 100, "new", 5000);  // pids wrapped: same pid, later start, now in the own tree
  Run(300, 20);
  ASSERT_TRUE(watch.Sample().ok());  // not a full scan, yet the new process is seen
  EXPECT_EQ(env.reads["/proc/32000/stat"], 1) << "outside the pids handed out: not read";
  Second(20);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(w->samples[0].own_pct, 20);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 0);
  EXPECT_TRUE(w->top_foreign.empty());
}

TEST_F(HostWatchTest, TopThreeForeignUsersAggregateByName) {
  Spawn(100, 1, "benchlab");
  Spawn(101, 100, "server");
  for (pid_t pid : {201, 202, 203, 204, 205}) Spawn(pid, 1, pid <= 202 ? "cc1plus" : "x");
  procs_.at(203).comm = "node";
  procs_.at(204).comm = "cron";
  procs_.at(205).comm = "sshd";
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(190);
  Run(101, 60);  // the busiest process of all is own: never listed
  Run(201, 30);
  Run(202, 25);
  Run(203, 40);
  Run(204, 20);
  Run(205, 15);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->top_foreign.size(), 3u);
  EXPECT_EQ(w->top_foreign[0].comm, "cc1plus");
  EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 55);
  EXPECT_EQ(w->top_foreign[1].comm, "node");
  EXPECT_EQ(w->top_foreign[2].comm, "cron");
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 130);
}

TEST_F(HostWatchTest, ForeignIsNeverNegativeAndMaxIsOverSamples) {
  Spawn(100, 1, "benchlab");
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(40);
  Run(100, 50);  // tick rounding can show more own CPU than host busy
  ASSERT_TRUE(watch.Sample().ok());
  Second(100);
  Run(100, 20);
  ASSERT_TRUE(watch.Sample().ok());
  Second(30);
  Run(100, 30);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->samples.size(), 3u);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 0);
  EXPECT_DOUBLE_EQ(w->samples[1].foreign_pct, 80);
  EXPECT_DOUBLE_EQ(w->samples[2].foreign_pct, 0);
  EXPECT_DOUBLE_EQ(w->foreign_max_pct, 80);
  EXPECT_NEAR(w->foreign_mean_pct, (170.0 - 100.0) / 3, 1e-9);
  EXPECT_NEAR(w->samples[2].t_s, TicksToSeconds(300), 1e-9);
}

TEST_F(HostWatchTest, ForeignMaxIsOverSpansOfAtLeastASecond) {
  Spawn(100, 1, "benchlab");
  // 100 ms samples (20 ticks over 2 CPUs): the own target is steady at 100% of one core but
  // tick rounding splits it 9/11 between the host's view and the process's, every other time.
  auto run = [&](HostWatch& watch, int samples) {
    EXPECT_TRUE(watch.Begin().ok());
    for (int i = 0; i < samples; ++i) {
      Advance(10, 10);
      Run(100, i % 2 ? 11 : 9);
      if (i == 12) Advance(10, 0);  // and once, something foreign used a whole 100 ms
      if (i + 1 < samples) {
        EXPECT_TRUE(watch.Sample().ok());
      }
    }
    Result<HostWindow> w = watch.End();
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? *w : HostWindow{};
  };
  HostWatch per_second(env_, {.own_roots = {100}, .pinned_cpus = {}});
  HostWindow w = run(per_second, 30);
  ASSERT_EQ(w.samples.size(), 30u);
  EXPECT_DOUBLE_EQ(w.samples[0].foreign_pct, 10) << "rounding alone";
  EXPECT_NEAR(w.samples[12].foreign_pct, 100.0 * 11 / 15, 1e-9);
  // The busiest second: ten samples, 105 ticks per CPU, in which rounding cancels out and the
  // foreign 10 ticks remain.
  EXPECT_NEAR(w.foreign_max_pct, 100.0 * 10 / 105, 1e-9);
  EXPECT_NEAR(w.foreign_mean_pct, 100.0 * 10 / 305, 1e-9);

  HostWatch per_sample(env_, {.own_roots = {100}, .pinned_cpus = {}, .foreign_max_span_s = 0});
  EXPECT_NEAR(run(per_sample, 30).foreign_max_pct, 100.0 * 11 / 15, 1e-9);

  HostWatch short_interval(env_, {.own_roots = {100}, .pinned_cpus = {}});
  HostWindow brief = run(short_interval, 3);
  EXPECT_NEAR(brief.foreign_max_pct, brief.foreign_mean_pct, 1e-9) << "shorter than a span";
}

TEST_F(HostWatchTest, StealIsReportedApartFromBusy) {
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Advance(/*user=*/120, /*idle=*/20, /*steal=*/60);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->interval_s, TicksToSeconds(100)) << "stolen time is still wall time";
  EXPECT_DOUBLE_EQ(w->steal_pct, 60);
  EXPECT_DOUBLE_EQ(w->busy_pct, 120);
  EXPECT_DOUBLE_EQ(w->idle_pct, 20);
  EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 120) << "no own roots: all busy CPU is foreign";
  EXPECT_DOUBLE_EQ(w->samples.at(0).steal_pct, 60);
}

TEST_F(HostWatchTest, IowaitAndInterruptsAreSplitOut) {
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Advance(/*user=*/50, /*idle=*/100, /*steal=*/0, /*iowait=*/30, /*softirq=*/20);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->iowait_pct, 30);
  EXPECT_DOUBLE_EQ(w->irq_pct, 20);
  EXPECT_DOUBLE_EQ(w->busy_pct, 70);
}

TEST_F(HostWatchTest, ThrottleCounterIncrements) {
  fake_.PutThrottleCounts(0, 5, 2);
  fake_.PutThrottleCounts(1, 7, 2);
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  fake_.PutThrottleCounts(0, 8, 4);
  fake_.PutThrottleCounts(1, 9, 4);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->throttle_core_events.has_value());
  EXPECT_EQ(*w->throttle_core_events, 5u);
  ASSERT_TRUE(w->throttle_package_events.has_value());
  EXPECT_EQ(*w->throttle_package_events, 2u) << "one package, seen by both CPUs";
}

TEST_F(HostWatchTest, UnchangedThrottleCountersReadZeroNotUnavailable) {
  fake_.PutThrottleCounts(0, 5, 2);
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->throttle_core_events.has_value());
  EXPECT_EQ(*w->throttle_core_events, 0u);
}

TEST_F(HostWatchTest, FrequencyDropOnAPinnedCpu) {
  fake_.PutCpuFreq(0, 1000000, 3000000);  // not pinned: ignored
  fake_.PutCpuFreq(1, 3000000, 3000000);
  HostWatch watch(env_, {.own_roots = {}, .pinned_cpus = {1}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  fake_.PutCpuFreq(1, 1500000, 3000000);
  ASSERT_TRUE(watch.Sample().ok());
  Second(10);
  fake_.PutCpuFreq(1, 2900000, 3000000);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->min_freq_ratio.has_value());
  EXPECT_DOUBLE_EQ(*w->min_freq_ratio, 0.5);
  ASSERT_EQ(w->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*w->samples[0].min_freq_ratio, 0.5);
  EXPECT_NEAR(*w->samples[1].min_freq_ratio, 2.9 / 3, 1e-9);
}

TEST_F(HostWatchTest, WithoutPinnedCpusEveryCpuIsWatched) {
  fake_.PutCpuFreq(0, 1000000, 3000000);
  fake_.PutCpuFreq(1, 3000000, 3000000);
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->min_freq_ratio.has_value());
  EXPECT_NEAR(*w->min_freq_ratio, 1.0 / 3, 1e-9);
}

TEST_F(HostWatchTest, ThermalPresent) {
  fake_.PutThermalZone(0, 45000);
  fake_.PutThermalZone(1, 61500);
  fake_.Write("/sys/class/thermal/thermal_zone2/temp", "");  // a zone that fails to read
  fake_.Write("/sys/class/thermal/cooling_device0/cur_state", "0\n");
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  fake_.PutThermalZone(1, 71500);
  ASSERT_TRUE(watch.Sample().ok());
  Second(10);
  fake_.PutThermalZone(1, 66000);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->max_temp_c.has_value());
  EXPECT_DOUBLE_EQ(*w->max_temp_c, 71.5);
  EXPECT_DOUBLE_EQ(*w->samples.at(1).max_temp_c, 66);
}

TEST_F(HostWatchTest, MachineWithoutSensorsSaysUnavailable) {
  fake_.Write("/sys/class/thermal/.keep", "");  // the directory exists but holds no zone
  fake_.Write("/sys/devices/system/cpu/cpufreq/.keep", "");
  fake_.Write("/sys/devices/system/cpu/cpu0/uevent", "");
  HostWatch watch(env_, {.own_roots = {}, .pinned_cpus = {0, 1}});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(w->max_temp_c.has_value());
  EXPECT_FALSE(w->min_freq_ratio.has_value());
  EXPECT_FALSE(w->throttle_core_events.has_value());
  EXPECT_FALSE(w->throttle_package_events.has_value());
  EXPECT_FALSE(w->swap_in_pages.has_value()) << "no /proc/vmstat";
  EXPECT_FALSE(w->samples.at(0).max_temp_c.has_value());
}

TEST_F(HostWatchTest, SwapActivity) {
  fake_.PutVmStat(100, 7);
  HostWatch watch(env_, {});
  ASSERT_TRUE(watch.Begin().ok());
  Second(10);
  fake_.PutVmStat(150, 27);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->swap_in_pages.has_value());
  EXPECT_EQ(*w->swap_in_pages, 50u);
  EXPECT_EQ(*w->swap_out_pages, 20u);
}

TEST_F(HostWatchTest, APeriodShorterThanATickIsMergedIntoTheNext) {
  Spawn(100, 1, "benchlab");
  HostWatch watch(env_, {.own_roots = {100}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  Run(100, 1);  // the process moved on, the host's counters did not
  ASSERT_TRUE(watch.Sample().ok());
  Second(50);
  Run(100, 9);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(w->samples[0].own_pct, 10);
  EXPECT_DOUBLE_EQ(w->samples[0].foreign_pct, 40);
}

TEST_F(HostWatchTest, MisuseAndMissingFilesAreErrors) {
  HostWatch watch(env_, {});
  EXPECT_EQ(watch.Sample().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(watch.End().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(watch.Begin().ok());
  EXPECT_EQ(watch.End().status().code(), StatusCode::kFailedPrecondition)
      << "an interval without a single tick has no figures";

  ASSERT_TRUE(watch.Begin().ok());
  fake_.Write("/proc/stat", "garbage\n");
  EXPECT_FALSE(watch.Sample().ok());
  fake_.PutSystemStat(cpus_);
  Second(10);
  EXPECT_FALSE(watch.End().ok()) << "a failed snapshot spoils the interval";

  FakeProcRoot empty;
  RootedSysEnv empty_env(empty.root());
  HostWatch no_stat(empty_env, {});
  EXPECT_EQ(no_stat.Begin().code(), StatusCode::kNotFound);
}

TEST_F(HostWatchTest, ProcIsListedOnlyAfterAFork) {
  Spawn(100, 1, "benchlab");
  Spawn(200, 1, "cron");
  CountingSysEnv env(fake_.root());
  HostWatch watch(env, {.own_roots = {100}, .pinned_cpus = {}, .foreign_scan_every = 100});
  ASSERT_TRUE(watch.Begin().ok());
  EXPECT_EQ(env.lists["/proc"], 1);
  Second(50);
  Run(100, 10);
  ASSERT_TRUE(watch.Sample().ok());
  EXPECT_EQ(env.lists["/proc"], 1) << "no fork: nothing new to find";
  EXPECT_EQ(env.reads["/proc/100/stat"], 2);
  EXPECT_EQ(env.reads["/proc/200/stat"], 1);
  Spawn(101, 100, "server", 2000);
  Run(101, 30);
  Second(50);
  ASSERT_TRUE(watch.Sample().ok());
  EXPECT_EQ(env.lists["/proc"], 2);
  Second(50);
  Run(101, 20);
  Exit(200, 0, 0);  // exits need no listing: found gone at the next one
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(env.lists["/proc"], 3) << "End is a full scan";
  ASSERT_EQ(w->samples.size(), 3u);
  EXPECT_DOUBLE_EQ(w->samples[0].own_pct, 10);
  EXPECT_DOUBLE_EQ(w->samples[1].own_pct, 30);
  EXPECT_DOUBLE_EQ(w->samples[2].own_pct, 20);
}

TEST_F(HostWatchTest, ForeignProcessesAreReadOnlyAtFullScans) {
  Spawn(100, 1, "benchlab");
  Spawn(200, 1, "cron");
  CountingSysEnv env(fake_.root());
  HostWatch watch(env, {.own_roots = {100}, .pinned_cpus = {}, .foreign_scan_every = 3});
  ASSERT_TRUE(watch.Begin().ok());
  for (int i = 1; i <= 4; ++i) {
    Second(50);
    Run(100, 10);
    Run(200, 40);
    if (i == 2) Spawn(201, 200, "sh", 3000);  // new: read once when it appears
    ASSERT_TRUE(watch.Sample().ok());
  }
  EXPECT_EQ(env.reads["/proc/100/stat"], 5) << "own: Begin and every sample";
  EXPECT_EQ(env.reads["/proc/200/stat"], 2) << "foreign: Begin and the third sample";
  EXPECT_EQ(env.reads["/proc/201/stat"], 2) << "when first seen and at the third sample";
  Second(50);
  Run(100, 10);
  Run(200, 40);
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(env.reads["/proc/200/stat"], 3) << "End reads everything";
  ASSERT_EQ(w->samples.size(), 5u);
  for (const HostSample& s : w->samples) {
    EXPECT_DOUBLE_EQ(s.own_pct, 10);
    EXPECT_DOUBLE_EQ(s.foreign_pct, 40) << "exact at every sample, from /proc/stat";
  }
  ASSERT_EQ(w->top_foreign.size(), 1u);
  EXPECT_EQ(w->top_foreign[0].comm, "cron");
  EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 40);
}

TEST_F(HostWatchTest, AForeignProcessExitingBetweenReadsIsNamedAfterItsReaper) {
  Spawn(300, 1, "make");
  Spawn(301, 300, "cc1plus");
  for (int every : {1, 10}) {
    HostWatch watch(env_, {.own_roots = {}, .pinned_cpus = {}, .foreign_scan_every = every});
    ASSERT_TRUE(watch.Begin().ok());
    Second(40);
    Run(301, 40);
    ASSERT_TRUE(watch.Sample().ok());
    Second(10);
    Exit(301, 10, /*reaper=*/300);
    Result<HostWindow> w = watch.End();
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    // Two seconds: 50 ticks of 200 per CPU are 25% of one core.
    if (every == 1) {
      ASSERT_EQ(w->top_foreign.size(), 2u);
      EXPECT_EQ(w->top_foreign[0].comm, "cc1plus");
      EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 20);
      EXPECT_EQ(w->top_foreign[1].comm, "make");
      EXPECT_DOUBLE_EQ(w->top_foreign[1].cpu_pct, 5);
    } else {
      ASSERT_EQ(w->top_foreign.size(), 1u);
      EXPECT_EQ(w->top_foreign[0].comm, "make");
      EXPECT_DOUBLE_EQ(w->top_foreign[0].cpu_pct, 25);
    }
    EXPECT_DOUBLE_EQ(w->foreign_mean_pct, 25);
    Spawn(301, 300, "cc1plus", 1000 + every);  // again for the next round
  }
}

// The real machine: sane figures, no speed asserted.
TEST(HostWatchRealTest, SaneOnThisMachine) {
  HostWatch watch(RealSysEnv(), {.own_roots = {getpid()}, .pinned_cpus = {}});
  ASSERT_TRUE(watch.Begin().ok());
  for (int i = 0; i < 4; ++i) {
    // Burn 60 ms of this thread's CPU, then sample.
    timespec start{}, now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile uint64_t sink = 0;
    do {
      for (int j = 0; j < 10000; ++j) sink = sink + j;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 60000000L);
    ASSERT_TRUE(watch.Sample().ok());
  }
  Result<HostWindow> w = watch.End();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const double max_pct = 100.0 * w->cpus;
  EXPECT_GT(w->cpus, 0);
  EXPECT_GT(w->interval_s, 0);
  EXPECT_GE(w->busy_pct, 0);
  EXPECT_LE(w->busy_pct, max_pct);
  EXPECT_NEAR(w->busy_pct + w->idle_pct + w->iowait_pct + w->steal_pct, max_pct, 1e-6);
  EXPECT_GT(w->own_pct, 0) << "this test burnt CPU in its own tree";
  EXPECT_GE(w->foreign_mean_pct, 0);
  EXPECT_LE(w->foreign_mean_pct, max_pct);
  EXPECT_GE(w->foreign_max_pct, 0);
  EXPECT_LE(w->top_foreign.size(), 3u);
  for (const HostSample& s : w->samples) {
    EXPECT_GE(s.busy_pct, 0);
    EXPECT_LE(s.busy_pct, max_pct);
    EXPECT_GE(s.foreign_pct, 0);
  }
}

}  // namespace
}  // namespace benchlab

// The process_* metrics read from a fake /proc (rpc/process_metrics.h), and from this process's.
#include "rpc/process_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <map>
#include <string>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

std::map<std::string, double> Values(const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, double> out;
  for (const auto& f : families) {
    EXPECT_EQ(f.metric.size(), 1u) << f.name;
    out[f.name] = f.type == prometheus::MetricType::Counter ? f.metric[0].counter.value
                                                            : f.metric[0].gauge.value;
  }
  return out;
}

TEST(ProcessMetricsTest, ReadsStatLimitsAndFdsOfTheProcess) {
  FakeProcRoot root;
  FakeProcess p;
  p.pid = 4321;
  p.comm = "bench lab (x)";  // spaces and parentheses in the name, as a process may have them
  p.utime = 250;
  p.stime = 50;
  p.starttime = 1000;
  p.rss_kb = 8192;  // 2048 pages of 4 KiB
  root.Put(p);
  root.PutSystemStat({FakeCpu{}});  // btime 1700000000
  root.Write("/proc/4321/limits",
             "Limit                     Soft Limit           Hard Limit           Units     \n"
             "Max cpu time              unlimited            unlimited            seconds   \n"
             "Max open files            1024                 524288               files     \n");
  for (const char* fd : {"0", "1", "2", "7"}) root.Write(std::string("/proc/4321/fd/") + fd, "");
  RootedSysEnv env(root.root());
  const double ticks = static_cast<double>(env.ClockTicksPerSecond());
  const std::map<std::string, double> v = Values(ProcessFamilies(env, 4321));
  EXPECT_DOUBLE_EQ(v.at("process_cpu_seconds_total"), 300 / ticks);
  EXPECT_DOUBLE_EQ(v.at("process_resident_memory_bytes"),
                   2048.0 * static_cast<double>(env.PageSizeBytes()));
  EXPECT_DOUBLE_EQ(v.at("process_virtual_memory_bytes"), 12345678);  // FormatFakeStat's vsize
  EXPECT_DOUBLE_EQ(v.at("process_start_time_seconds"), 1700000000 + 1000 / ticks);
  EXPECT_DOUBLE_EQ(v.at("process_open_fds"), 4);
  EXPECT_DOUBLE_EQ(v.at("process_max_fds"), 1024);
}

TEST(ProcessMetricsTest, WhatCannotBeReadIsLeftOutNotZero) {
  FakeProcRoot root;
  root.Write("/proc/77/stat", "77 (x) S garbage\n");
  root.Write("/proc/77/limits",
             "Max open files            unlimited            unlimited   files\n");
  RootedSysEnv env(root.root());
  EXPECT_TRUE(Values(ProcessFamilies(env, 77)).empty());
  EXPECT_TRUE(Values(ProcessFamilies(env, 78)).empty()) << "no such process";
}

TEST(ProcessMetricsTest, ThisProcessHasEveryOne) {
  // A process just started may not have used one clock tick of CPU yet: use some.
  volatile uint64_t spin = 0;
  for (timespec cpu{}; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0 &&
                       cpu.tv_nsec < 30'000'000 && cpu.tv_sec == 0;) {
    spin = spin + 1;
  }
  const std::map<std::string, double> v = Values(ProcessFamilies(RealSysEnv(), getpid()));
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_start_time_seconds",
                           "process_open_fds", "process_max_fds"}) {
    ASSERT_EQ(v.count(name), 1u) << name;
    EXPECT_GT(v.at(name), 0) << name;
  }
}

}  // namespace
}  // namespace benchlab

#include "agent/host_facts.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

constexpr const char* kCpuInfo =
    "processor\t: 0\nmodel name\t: Example CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 0\n"
    "flags\t\t: fpu sse2 hypervisor avx2\n\n"
    "processor\t: 1\nmodel name\t: Example CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 0\n"
    "flags\t\t: fpu sse2 hypervisor avx2\n\n"
    "processor\t: 2\nmodel name\t: Example CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 1\n"
    "flags\t\t: fpu sse2 hypervisor avx2\n\n"
    "processor\t: 3\nmodel name\t: Example CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 1\n"
    "flags\t\t: fpu sse2 hypervisor avx2\n";

TEST(HostFactsTest, CpuInfoGivesModelCoresSmtAndHypervisor) {
  HostFacts facts;
  ParseCpuInfo(kCpuInfo, facts);
  EXPECT_EQ(facts.cpu_model, "Example CPU @ 3.00GHz");
  EXPECT_EQ(facts.logical_cores, 4);
  EXPECT_EQ(facts.physical_cores, 2);
  EXPECT_TRUE(facts.smt);
  EXPECT_TRUE(facts.hypervisor);
}

TEST(HostFactsTest, FakeRootWithGovernor) {
  FakeProcRoot root;
  root.Write("/proc/cpuinfo", kCpuInfo);
  root.Write("/proc/meminfo", "MemTotal:       24576000 kB\nMemFree:        1000 kB\n");
  root.Write("/proc/sys/kernel/osrelease", "6.1.0-test\n");
  root.Write("/proc/sys/kernel/hostname", "bench-1\n");
  root.Write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  root.Write("/sys/devices/system/cpu/smt/active", "0\n");
  RootedSysEnv env(root.root());
  HostFacts facts = ReadHostFacts(env);
  EXPECT_EQ(facts.hostname, "bench-1");
  EXPECT_EQ(facts.kernel, "6.1.0-test");
  EXPECT_EQ(facts.memory_kb, 24576000u);
  EXPECT_EQ(facts.governor, "performance");
  EXPECT_FALSE(facts.smt) << "the kernel's smt/active overrides the sibling count";
}

TEST(HostFactsTest, MissingFactsAreUnavailableNotInvented) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  HostFacts facts = ReadHostFacts(env);
  EXPECT_EQ(facts.cpu_model, "unavailable");
  EXPECT_EQ(facts.governor, "unavailable");
  EXPECT_EQ(facts.kernel, "unavailable");
  EXPECT_EQ(facts.logical_cores, 0);
  EXPECT_EQ(facts.memory_kb, 0u);
}

}  // namespace
}  // namespace benchlab

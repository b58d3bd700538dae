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

TEST(HostFactsTest, TurboFromIntelPstateOrCpufreqBoost) {
  FakeProcRoot intel;
  intel.Write("/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
  RootedSysEnv intel_env(intel.root());
  EXPECT_EQ(ReadHostFacts(intel_env).turbo, "off");
  intel.Write("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
  EXPECT_EQ(ReadHostFacts(intel_env).turbo, "on");

  FakeProcRoot amd;
  amd.Write("/sys/devices/system/cpu/cpufreq/boost", "1\n");
  RootedSysEnv amd_env(amd.root());
  EXPECT_EQ(ReadHostFacts(amd_env).turbo, "on");
  amd.Write("/sys/devices/system/cpu/cpufreq/boost", "0\n");
  EXPECT_EQ(ReadHostFacts(amd_env).turbo, "off");

  FakeProcRoot none;
  none.Write("/sys/devices/system/cpu/cpufreq/.keep", "");  // an empty cpufreq, as on a VM
  RootedSysEnv none_env(none.root());
  EXPECT_EQ(ReadHostFacts(none_env).turbo, "unavailable");
}

TEST(HostFactsTest, StealAndVirtualization) {
  FakeProcRoot root;
  root.Write("/proc/cpuinfo", kCpuInfo);
  FakeCpu cpu;
  cpu.user = 100;
  cpu.steal = 7;
  root.PutSystemStat({cpu, FakeCpu{}});
  root.Write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
  RootedSysEnv env(root.root());
  HostFacts facts = ReadHostFacts(env);
  EXPECT_TRUE(facts.steal_present);
  EXPECT_EQ(facts.virtualization, "virtual machine (QEMU; hypervisor flag; steal present)");

  cpu.steal = 0;
  root.PutSystemStat({cpu});
  facts = ReadHostFacts(env);
  EXPECT_FALSE(facts.steal_present);
  EXPECT_EQ(facts.virtualization, "virtual machine (QEMU; hypervisor flag; no steal so far)");
}

TEST(HostFactsTest, DescribeVirtualization) {
  HostFacts facts;
  EXPECT_EQ(DescribeVirtualization(facts, ""), "unavailable");
  facts.logical_cores = 8;
  EXPECT_EQ(DescribeVirtualization(facts, ""), "bare metal (no hypervisor flag, no steal)");
  facts.steal_present = true;
  EXPECT_EQ(DescribeVirtualization(facts, ""),
            "virtual machine (no hypervisor flag; steal present)");
}

TEST(HostFactsTest, ThisMachine) {
  HostFacts facts = ReadHostFacts(RealSysEnv());
  EXPECT_GT(facts.logical_cores, 0);
  EXPECT_NE(facts.virtualization, "unavailable");
  EXPECT_TRUE(facts.turbo == "on" || facts.turbo == "off" || facts.turbo == "unavailable");
}

}  // namespace
}  // namespace benchlab

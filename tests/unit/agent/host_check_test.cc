#include "agent/host_check.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

const HostFinding& Get(const std::vector<HostFinding>& findings, const std::string& name) {
  for (const auto& f : findings) {
    if (f.name == name) return f;
  }
  static const HostFinding missing{"", "", "", ""};
  ADD_FAILURE() << "no finding " << name;
  return missing;
}

// A bare-metal host with 4 CPUs (0,2 and 1,3 are SMT siblings) that is noisy in every way.
void PutNoisyHost(FakeProcRoot& root) {
  const std::string cpu = "/sys/devices/system/cpu/";
  root.Write(cpu + "online", "0-3\n");
  for (int i = 0; i < 4; ++i) {
    const std::string dir = cpu + "cpu" + std::to_string(i) + "/";
    root.Write(dir + "cpufreq/scaling_governor", i == 1 ? "powersave\n" : "performance\n");
    root.Write(dir + "cpufreq/scaling_min_freq", "800000\n");
    root.Write(dir + "cpufreq/scaling_max_freq", "3000000\n");
    root.Write(dir + "cpufreq/cpuinfo_min_freq", "800000\n");
    root.Write(dir + "cpufreq/cpuinfo_max_freq", "3500000\n");
    root.Write(dir + "topology/thread_siblings_list", i % 2 == 0 ? "0,2\n" : "1,3\n");
    root.Write(dir + "cpuidle/state0/name", "POLL\n");
    root.Write(dir + "cpuidle/state0/disable", "0\n");
    root.Write(dir + "cpuidle/state1/name", "C1\n");
    root.Write(dir + "cpuidle/state1/disable", "0\n");
    root.Write(dir + "cpuidle/state2/name", "C6\n");
    root.Write(dir + "cpuidle/state2/disable", "0\n");
  }
  root.Write(cpu + "intel_pstate/no_turbo", "0\n");
  root.Write(cpu + "isolated", "\n");
  root.Write(cpu + "nohz_full", "(null)\n");
  root.Write("/sys/module/intel_idle/parameters/max_cstate", "9\n");
  root.Write("/proc/sys/kernel/randomize_va_space", "2\n");
  root.Write("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  root.Write("/sys/kernel/mm/transparent_hugepage/defrag", "always defer [madvise] never\n");
  root.Write("/proc/irq/default_smp_affinity", "f\n");
  root.Write("/proc/irq/1/smp_affinity_list", "0-3\n");
  root.Write("/proc/irq/2/smp_affinity_list", "2\n");
  root.Write("/proc/irq/3/smp_affinity_list", "1\n");
  root.Write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n");
  root.Write("/proc/swaps",
             "Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition 1000 0 -2\n");
  root.Write("/proc/sys/vm/swappiness", "60\n");
  root.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  root.Write("/proc/self/status", "Name:\tbenchlab\nUid:\t1000\t1000\t1000\t1000\n");
  root.Write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  root.Write("/sys/fs/cgroup/cgroup.subtree_control", "memory pids\n");
  root.Write("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2\n");
  root.Write("/sys/class/dmi/id/sys_vendor", "Example Inc.\n");
  root.PutSystemStat({FakeCpu{.user = 100, .idle = 900}});
}

TEST(HostCheckTest, ReportsEveryNameOnceWithAKnownStatusAndAReason) {
  FakeProcRoot root;
  PutNoisyHost(root);
  RootedSysEnv env(root.root());
  auto findings = CheckHost(env, {0, 1});
  ASSERT_EQ(findings.size(), HostFindingNames().size());
  for (size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(findings[i].name, HostFindingNames()[i]);
    EXPECT_TRUE(findings[i].status == "ok" || findings[i].status == "warn") << findings[i].name;
    EXPECT_FALSE(findings[i].why.empty()) << findings[i].name;
  }
}

TEST(HostCheckTest, NoisyHostWarnsWithTheValuesAsRead) {
  FakeProcRoot root;
  PutNoisyHost(root);
  RootedSysEnv env(root.root());
  auto f = CheckHost(env, {0, 1});
  EXPECT_EQ(Get(f, "governor").value, "cpu0:performance, cpu1:powersave");
  EXPECT_EQ(Get(f, "governor").status, "warn");
  EXPECT_EQ(Get(f, "min_freq").status, "warn") << "cpu1 is not at performance and may drop";
  EXPECT_EQ(Get(f, "max_freq").value, "3000000 kHz (hardware maximum 3500000)");
  EXPECT_EQ(Get(f, "max_freq").status, "warn");
  EXPECT_EQ(Get(f, "turbo").value, "on");
  EXPECT_EQ(Get(f, "turbo").status, "warn");
  EXPECT_EQ(Get(f, "smt_siblings").value, "siblings 2-3 outside the pinned CPUs");
  EXPECT_EQ(Get(f, "smt_siblings").status, "warn");
  EXPECT_EQ(Get(f, "cstates").value, "deep states enabled: C6; intel_idle.max_cstate=9");
  EXPECT_EQ(Get(f, "cstates").status, "warn");
  EXPECT_EQ(Get(f, "aslr").value, "2");
  EXPECT_EQ(Get(f, "aslr").status, "warn");
  EXPECT_EQ(Get(f, "thp").value, "always");
  EXPECT_EQ(Get(f, "thp").status, "warn");
  EXPECT_EQ(Get(f, "thp_defrag").value, "madvise");
  EXPECT_EQ(Get(f, "thp_defrag").status, "ok");
  EXPECT_EQ(Get(f, "irq_affinity").value,
            "2 of 3 IRQs may run on CPUs 0-1; default_smp_affinity f");
  EXPECT_EQ(Get(f, "irq_affinity").status, "warn");
  EXPECT_EQ(Get(f, "isolcpus").value, "none");
  EXPECT_EQ(Get(f, "isolcpus").status, "warn");
  EXPECT_EQ(Get(f, "nohz_full").value, "none");
  EXPECT_EQ(Get(f, "rcu_nocbs").value, "none");
  EXPECT_EQ(Get(f, "swap").value, "1 swap areas; swappiness 60");
  EXPECT_EQ(Get(f, "swap").status, "warn");
  EXPECT_EQ(Get(f, "perf_event_paranoid").value, "2");
  EXPECT_EQ(Get(f, "perf_event_paranoid").status, "warn") << "not root, paranoid 2";
  // The package's agent: not root, CAP_PERFMON (bit 38) among its effective capabilities.
  root.Write("/proc/self/status",
             "Name:\tbenchlab\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t0000004000000000\n");
  auto perfmon = CheckHost(env, {});
  EXPECT_EQ(Get(perfmon, "perf_event_paranoid").value, "2 (the agent has CAP_PERFMON)");
  EXPECT_EQ(Get(perfmon, "perf_event_paranoid").status, "ok");
  EXPECT_EQ(Get(f, "cgroup").value, "v2; subtree_control: memory pids");
  EXPECT_EQ(Get(f, "cgroup").status, "warn");
  EXPECT_EQ(Get(f, "virtualization").status, "ok");
  EXPECT_EQ(Get(f, "steal").value, "0.00% of CPU time since boot");
  EXPECT_EQ(Get(f, "steal").status, "ok");
}

TEST(HostCheckTest, QuietHostIsOk) {
  FakeProcRoot root;
  PutNoisyHost(root);
  const std::string cpu = "/sys/devices/system/cpu/";
  for (int i = 0; i < 4; ++i) {
    const std::string dir = cpu + "cpu" + std::to_string(i) + "/";
    root.Write(dir + "cpufreq/scaling_governor", "performance\n");
    root.Write(dir + "cpufreq/scaling_max_freq", "3500000\n");
    root.Write(dir + "cpuidle/state2/disable", "1\n");
    root.Write(dir + "topology/thread_siblings_list", std::to_string(i) + "\n");
  }
  root.Write(cpu + "intel_pstate/no_turbo", "1\n");
  root.Write(cpu + "isolated", "2-3\n");
  root.Write(cpu + "nohz_full", "2-3\n");
  root.Write("/proc/cmdline", "quiet isolcpus=domain,managed_irq,2-3 rcu_nocbs=2-3\n");
  root.Write("/proc/sys/kernel/randomize_va_space", "0\n");
  root.Write("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
  root.Write("/proc/irq/1/smp_affinity_list", "0-1\n");
  root.Write("/proc/irq/2/smp_affinity_list", "0\n");
  root.Write("/proc/irq/default_smp_affinity", "3\n");
  root.Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
  root.Write("/proc/self/status", "Name:\tbenchlab\nUid:\t0\t0\t0\t0\n");
  root.Write("/sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu memory\n");
  RootedSysEnv env(root.root());
  for (const auto& f : CheckHost(env, {2, 3})) {
    EXPECT_EQ(f.status, "ok") << f.name << " = " << f.value;
  }
}

// A virtual machine without cpufreq, cpuidle, thermal or intel_pstate: those checks say
// "unavailable" and nothing is invented for them.
TEST(HostCheckTest, MissingFilesAreUnavailableNeverInvented) {
  FakeProcRoot root;
  root.Write("/sys/devices/system/cpu/online", "0-1\n");
  root.Write("/proc/sys/kernel/randomize_va_space", "2\n");
  root.Write("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor\n");
  root.Write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
  root.PutSystemStat({FakeCpu{.user = 90, .idle = 900, .steal = 10}});
  RootedSysEnv env(root.root());
  auto f = CheckHost(env, {});
  for (const char* name : {"governor", "min_freq", "max_freq", "turbo", "smt_siblings", "cstates",
                           "thp", "thp_defrag", "irq_affinity", "isolcpus", "nohz_full",
                           "rcu_nocbs", "swap", "perf_event_paranoid", "cgroup"}) {
    EXPECT_EQ(Get(f, name).value, "unavailable") << name;
    EXPECT_EQ(Get(f, name).status, "unavailable") << name;
  }
  EXPECT_EQ(Get(f, "aslr").value, "2");
  EXPECT_EQ(Get(f, "virtualization").status, "warn");
  EXPECT_NE(Get(f, "virtualization").value.find("QEMU"), std::string::npos);
  EXPECT_EQ(Get(f, "steal").value, "1.00% of CPU time since boot");
  EXPECT_EQ(Get(f, "steal").status, "warn");
}

TEST(HostCheckTest, EmptyTreeIsAllUnavailable) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  for (const auto& f : CheckHost(env, {0})) {
    EXPECT_EQ(f.status, "unavailable") << f.name;
    EXPECT_EQ(f.value, "unavailable") << f.name;
  }
}

TEST(HostCheckTest, NoPinnedCpusMeansEveryOnlineOne) {
  FakeProcRoot root;
  PutNoisyHost(root);
  RootedSysEnv env(root.root());
  EXPECT_EQ(CheckedCpus(env, {}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(CheckedCpus(env, {1}), std::vector<int>{1});
  auto f = CheckHost(env, {});
  EXPECT_EQ(Get(f, "smt_siblings").value, "all siblings pinned");
  EXPECT_EQ(Get(f, "smt_siblings").status, "ok");
}

TEST(HostCheckTest, ValuesAreCappedForTheWire) {
  FakeProcRoot root;
  std::string online = "0-99";
  root.Write("/sys/devices/system/cpu/online", online + "\n");
  for (int i = 0; i < 100; ++i) {
    root.Write("/sys/devices/system/cpu/cpu" + std::to_string(i) + "/cpufreq/scaling_governor",
               i % 2 ? "powersave\n" : "performance\n");
  }
  RootedSysEnv env(root.root());
  for (const auto& f : CheckHost(env, {})) {
    EXPECT_LE(f.value.size(), kMaxFindingValueBytes) << f.name;
  }
}

TEST(HostCheckTest, ChoiceAndMaskForms) {
  EXPECT_EQ(SelectedChoice("always [madvise] never\n"), "madvise");
  EXPECT_EQ(SelectedChoice(" 2\n"), "2");
  EXPECT_EQ(CpusOfMask("f"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(CpusOfMask("00000001,00000002"), (std::vector<int>{1, 32}));
}

// The real machine: only what holds on any Linux host.
TEST(HostCheckTest, RealMachine) {
  auto findings = CheckHost(RealSysEnv(), {});
  ASSERT_EQ(findings.size(), HostFindingNames().size());
  const std::set<std::string> statuses = {"ok", "warn", "unavailable"};
  for (const auto& f : findings) EXPECT_EQ(statuses.count(f.status), 1u) << f.name;
  EXPECT_NE(Get(findings, "aslr").value, "unavailable")
      << "/proc/sys/kernel/randomize_va_space exists on every Linux host";
}

}  // namespace
}  // namespace benchlab

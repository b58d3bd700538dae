// CheckHost: what on this machine makes measurements noisy (frequency scaling, turbo, SMT
// siblings, C-states, ASLR, transparent huge pages, interrupts, isolation, swap, profiling
// permission, cgroups, virtualisation and steal), one finding per check (docs/host.md). Every
// file is read through SysEnv, so a fake root tests any machine; a file the machine does not
// have gives the value "unavailable", never an invented one. Thread-safe (no state).
#pragma once

#include <string>
#include <vector>

#include "common/host_requirement.h"
#include "common/sysenv.h"

namespace benchlab {

// The longest value a finding carries (the coordinator accepts at most 256 bytes).
inline constexpr size_t kMaxFindingValueBytes = 200;

// One finding per name of HostFindingNames(), in that order. `pinned_cpus` are the CPUs the
// measurements run on; empty means every online CPU.
std::vector<HostFinding> CheckHost(SysEnv& env, const std::vector<int>& pinned_cpus);

// The CPUs CheckHost looks at: `pinned_cpus`, or when empty the online ones
// (/sys/devices/system/cpu/online, else /proc/stat's cpuN lines); empty when neither is there.
std::vector<int> CheckedCpus(SysEnv& env, const std::vector<int>& pinned_cpus);

// The root of the kernel's CPU files, and a file of one CPU there:
// CpuFile(2, "cpufreq/scaling_governor") is /sys/devices/system/cpu/cpu2/cpufreq/scaling_governor.
inline constexpr std::string_view kCpuRoot = "/sys/devices/system/cpu/";
std::string CpuFile(int cpu, const std::string& rest);

// The CPUs of a hex cpumask as the kernel writes it: "ff", "00000000,000000ff".
std::vector<int> CpusOfMask(const std::string& mask);

// The selected word of a sysfs choice file ("always [madvise] never" gives "madvise"), or the
// text trimmed when it has no brackets.
std::string SelectedChoice(const std::string& text);

}  // namespace benchlab

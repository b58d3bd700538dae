// HostFacts: what an agent reports about its machine at registration and with every window.
// Read through SysEnv, so a fake root tests any machine; a fact the machine does not have is
// "unavailable", never an invented value. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/sysenv.h"

namespace benchlab {

struct HostFacts {
  std::string hostname = "unavailable";
  std::string cpu_model = "unavailable";
  int logical_cores = 0;
  int physical_cores = 0;
  bool smt = false;
  std::string governor = "unavailable";
  std::string kernel = "unavailable";
  uint64_t memory_kb = 0;
  bool hypervisor = false;
  // "on", "off" (intel_pstate/no_turbo, or cpufreq/boost) or "unavailable".
  std::string turbo = "unavailable";
  bool steal_present = false;  // /proc/stat's steal column is non-zero
  // A person's summary of hypervisor flag, steal and the vendor, e.g. "virtual machine (QEMU;
  // hypervisor flag; steal present)" or "bare metal (no hypervisor flag, no steal)".
  std::string virtualization = "unavailable";
};

// From /proc/cpuinfo text: model, logical and physical cores, hypervisor flag.
void ParseCpuInfo(std::string_view text, HostFacts& facts);

// Summarises virtualisation from the facts' hypervisor and steal_present and a vendor name
// (empty when unknown); "unavailable" when cpuinfo was not read (no cores known).
std::string DescribeVirtualization(const HostFacts& facts, std::string_view vendor);

HostFacts ReadHostFacts(SysEnv& env);

}  // namespace benchlab

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
};

// From /proc/cpuinfo text: model, logical and physical cores, hypervisor flag.
void ParseCpuInfo(std::string_view text, HostFacts& facts);

HostFacts ReadHostFacts(SysEnv& env);

}  // namespace benchlab

#include "agent/host_facts.h"

#include <set>
#include <sstream>
#include <utility>

#include "agent/host_stat.h"
#include "common/parse.h"

namespace benchlab {

void ParseCpuInfo(std::string_view text, HostFacts& facts) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id = "0";
  int logical = 0;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = std::string(TrimSpace(std::string_view(line).substr(0, colon)));
    std::string value = std::string(TrimSpace(std::string_view(line).substr(colon + 1)));
    if (key == "processor") {
      ++logical;
    } else if (key == "model name" && facts.cpu_model == "unavailable") {
      facts.cpu_model = value;
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      cores.insert({physical_id, value});
    } else if (key == "flags" && (" " + value + " ").find(" hypervisor ") != std::string::npos) {
      facts.hypervisor = true;
    }
  }
  facts.logical_cores = logical;
  facts.physical_cores = cores.empty() ? logical : static_cast<int>(cores.size());
  facts.smt = facts.physical_cores > 0 && logical > facts.physical_cores;
}

HostFacts ReadHostFacts(SysEnv& env) {
  HostFacts facts;
  if (auto cpuinfo = env.ReadFile("/proc/cpuinfo"); cpuinfo.ok()) ParseCpuInfo(*cpuinfo, facts);
  if (auto smt = env.ReadFile("/sys/devices/system/cpu/smt/active"); smt.ok()) {
    facts.smt = TrimSpace(*smt) == "1";
  }
  if (auto host = env.ReadFile("/proc/sys/kernel/hostname"); host.ok())
    facts.hostname = std::string(TrimSpace(*host));
  if (auto kernel = env.ReadFile("/proc/sys/kernel/osrelease"); kernel.ok()) {
    facts.kernel = std::string(TrimSpace(*kernel));
  }
  if (auto gov = env.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); gov.ok()) {
    facts.governor = std::string(TrimSpace(*gov));
  }
  if (auto meminfo = env.ReadFile("/proc/meminfo"); meminfo.ok()) {
    std::istringstream in(*meminfo);
    std::string key;
    uint64_t kb = 0;
    while (in >> key >> kb) {
      if (key == "MemTotal:") {
        facts.memory_kb = kb;
        break;
      }
      in.ignore(1 << 20, '\n');
    }
  }
  if (auto no_turbo = env.ReadFile("/sys/devices/system/cpu/intel_pstate/no_turbo");
      no_turbo.ok() && (TrimSpace(*no_turbo) == "0" || TrimSpace(*no_turbo) == "1")) {
    facts.turbo = TrimSpace(*no_turbo) == "1" ? "off" : "on";
  } else if (auto boost = env.ReadFile("/sys/devices/system/cpu/cpufreq/boost");
             boost.ok() && (TrimSpace(*boost) == "0" || TrimSpace(*boost) == "1")) {
    facts.turbo = TrimSpace(*boost) == "1" ? "on" : "off";
  }
  if (auto stat = env.ReadFile("/proc/stat"); stat.ok()) {
    if (auto parsed = ParseSystemStat(*stat); parsed.ok()) {
      facts.steal_present = parsed->total.steal > 0;
    }
  }
  std::string vendor;
  if (auto v = env.ReadFile("/sys/class/dmi/id/sys_vendor"); v.ok()) {
    vendor = std::string(TrimSpace(*v));
  } else if (auto xen = env.ReadFile("/sys/hypervisor/type"); xen.ok()) {
    vendor = std::string(TrimSpace(*xen));
  }
  facts.virtualization = DescribeVirtualization(facts, vendor);
  return facts;
}

std::string DescribeVirtualization(const HostFacts& facts, std::string_view vendor) {
  if (facts.logical_cores == 0 && !facts.steal_present) return "unavailable";
  if (!facts.hypervisor && !facts.steal_present) {
    return "bare metal (no hypervisor flag, no steal)";
  }
  std::string out = "virtual machine (";
  if (!vendor.empty()) out += std::string(vendor) + "; ";
  out += facts.hypervisor ? "hypervisor flag; " : "no hypervisor flag; ";
  out += facts.steal_present ? "steal present)" : "no steal so far)";
  return out;
}

}  // namespace benchlab

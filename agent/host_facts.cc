#include "agent/host_facts.h"

#include <set>
#include <sstream>
#include <utility>

namespace benchlab {
namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

void ParseCpuInfo(std::string_view text, HostFacts& facts) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id = "0";
  int logical = 0;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(std::string_view(line).substr(0, colon));
    std::string value = Trim(std::string_view(line).substr(colon + 1));
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
    facts.smt = Trim(*smt) == "1";
  }
  if (auto host = env.ReadFile("/proc/sys/kernel/hostname"); host.ok()) facts.hostname = Trim(*host);
  if (auto kernel = env.ReadFile("/proc/sys/kernel/osrelease"); kernel.ok()) {
    facts.kernel = Trim(*kernel);
  }
  if (auto gov = env.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); gov.ok()) {
    facts.governor = Trim(*gov);
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
  return facts;
}

}  // namespace benchlab

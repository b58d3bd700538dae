#include "agent/host_check.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "agent/host_facts.h"
#include "agent/host_stat.h"
#include "common/parse.h"

namespace benchlab {
namespace {

const std::string kUnavailable(kFindingUnavailable);

std::optional<std::string> Read(SysEnv& env, const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  return std::string(TrimSpace(*text));
}

// At most kMaxFindingValueBytes of printable ASCII: the coordinator refuses anything else.
std::string Capped(std::string value) {
  for (char& c : value) {
    if (c < 0x20 || c >= 0x7f) c = '?';
  }
  if (value.size() > kMaxFindingValueBytes) {
    value.resize(kMaxFindingValueBytes - 3);
    value += "...";
  }
  return value;
}

HostFinding Finding(const std::string& name, std::string value, bool ok, const char* why) {
  return {name, Capped(std::move(value)), std::string(ok ? kFindingOk : kFindingWarn), why};
}

HostFinding Unavailable(const std::string& name, const char* why) {
  return {name, kUnavailable, kUnavailable, why};
}

// "performance" when every CPU has it, else "cpu0:performance, cpu1:powersave".
std::string PerCpu(const std::vector<std::pair<int, std::string>>& values) {
  bool same = std::all_of(values.begin(), values.end(),
                          [&](const auto& v) { return v.second == values.front().second; });
  if (same) return values.front().second;
  std::string out;
  for (const auto& [cpu, value] : values) {
    if (!out.empty()) out += ", ";
    out += "cpu" + std::to_string(cpu) + ":" + value;
  }
  return out;
}

bool AllIn(const std::vector<int>& cpus, const std::vector<int>& set) {
  return !cpus.empty() && std::all_of(cpus.begin(), cpus.end(), [&](int c) {
    return std::find(set.begin(), set.end(), c) != set.end();
  });
}

// The value of `key=` on the kernel's command line, nullopt when absent.
std::optional<std::string> CmdlineParam(const std::string& cmdline, const std::string& key) {
  std::istringstream in(cmdline);
  std::string word;
  std::optional<std::string> found;
  while (in >> word) {
    if (word.rfind(key + "=", 0) == 0) found = word.substr(key.size() + 1);
  }
  return found;
}

// The CPU list of isolcpus=, nohz_full= or rcu_nocbs=, past flags such as "domain,managed_irq,".
std::vector<int> CpusOfParam(const std::string& value) {
  std::string list = value;
  while (!list.empty() && std::isalpha(static_cast<unsigned char>(list.front()))) {
    size_t comma = list.find(',');
    list = comma == std::string::npos ? "" : list.substr(comma + 1);
  }
  auto cpus = ParseCpuList(list);
  return cpus.ok() ? *cpus : std::vector<int>{};
}

HostFinding CheckGovernor(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "A governor other than performance changes the clock with the load, so the same work takes "
      "a different time from one window to the next.";
  std::vector<std::pair<int, std::string>> values;
  for (int cpu : cpus) {
    if (auto g = Read(env, CpuFile(cpu, "cpufreq/scaling_governor"))) values.push_back({cpu, *g});
  }
  if (values.empty()) return Unavailable("governor", why);
  bool ok = std::all_of(values.begin(), values.end(),
                        [](const auto& v) { return v.second == "performance"; });
  return Finding("governor", PerCpu(values), ok, why);
}

HostFinding CheckMinFreq(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "A CPU allowed below its maximum frequency slows down between bursts of requests, so "
      "latency depends on how busy it was just before.";
  std::vector<std::pair<int, std::string>> values;
  bool ok = true;
  for (int cpu : cpus) {
    auto min = Read(env, CpuFile(cpu, "cpufreq/scaling_min_freq"));
    if (!min) continue;
    auto max = Read(env, CpuFile(cpu, "cpufreq/scaling_max_freq"));
    auto hw = Read(env, CpuFile(cpu, "cpufreq/cpuinfo_min_freq"));
    auto gov = Read(env, CpuFile(cpu, "cpufreq/scaling_governor"));
    values.push_back({cpu, *min + " kHz" + (hw ? " (hardware minimum " + *hw + ")" : "")});
    if (!(gov && *gov == "performance") && !(max && *max == *min)) ok = false;
  }
  if (values.empty()) return Unavailable("min_freq", why);
  return Finding("min_freq", PerCpu(values), ok, why);
}

HostFinding CheckMaxFreq(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "A maximum frequency capped below the hardware's makes results differ from hosts without "
      "the cap.";
  std::vector<std::pair<int, std::string>> values;
  bool ok = true;
  for (int cpu : cpus) {
    auto max = Read(env, CpuFile(cpu, "cpufreq/scaling_max_freq"));
    if (!max) continue;
    auto hw = Read(env, CpuFile(cpu, "cpufreq/cpuinfo_max_freq"));
    values.push_back({cpu, *max + " kHz" + (hw ? " (hardware maximum " + *hw + ")" : "")});
    if (hw && *hw != *max) ok = false;
  }
  if (values.empty()) return Unavailable("max_freq", why);
  return Finding("max_freq", PerCpu(values), ok, why);
}

HostFinding CheckTurbo(SysEnv& env) {
  const char* why =
      "Turbo frequencies depend on temperature and on how many cores are busy, so results vary "
      "with the room and with other work on the machine.";
  if (auto no_turbo = Read(env, std::string(kCpuRoot) + "intel_pstate/no_turbo");
      no_turbo && (*no_turbo == "0" || *no_turbo == "1")) {
    return Finding("turbo", *no_turbo == "1" ? "off" : "on", *no_turbo == "1", why);
  }
  if (auto boost = Read(env, std::string(kCpuRoot) + "cpufreq/boost");
      boost && (*boost == "0" || *boost == "1")) {
    return Finding("turbo", *boost == "1" ? "on" : "off", *boost == "0", why);
  }
  return Unavailable("turbo", why);
}

HostFinding CheckSmtSiblings(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "An SMT sibling shares the core's execution units and caches, so whatever runs on a sibling "
      "outside the pinned CPUs slows the measured one.";
  bool any = false, smt = false;
  std::set<int> outside;
  for (int cpu : cpus) {
    auto text = Read(env, CpuFile(cpu, "topology/thread_siblings_list"));
    if (!text) continue;
    auto siblings = ParseCpuList(*text);
    if (!siblings.ok()) continue;
    any = true;
    for (int s : *siblings) {
      if (s == cpu) continue;
      smt = true;
      if (std::find(cpus.begin(), cpus.end(), s) == cpus.end()) outside.insert(s);
    }
  }
  if (!any) return Unavailable("smt_siblings", why);
  if (!outside.empty()) {
    return Finding(
        "smt_siblings",
        "siblings " + FormatCpuList({outside.begin(), outside.end()}) + " outside the pinned CPUs",
        false, why);
  }
  return Finding("smt_siblings", smt ? "all siblings pinned" : "no SMT", true, why);
}

HostFinding CheckCStates(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "Waking from a deep C-state takes tens to hundreds of microseconds, which shows as latency "
      "on a CPU that idles between requests.";
  bool any = false;
  std::set<std::string> enabled;  // states deeper than state1 left enabled
  for (int cpu : cpus) {
    auto states = env.ListDir(CpuFile(cpu, "cpuidle"));
    if (!states.ok()) continue;
    any = true;
    for (const auto& state : *states) {
      if (state.rfind("state", 0) != 0) continue;
      int index = std::atoi(state.c_str() + 5);
      if (index < 2) continue;
      const std::string dir = CpuFile(cpu, "cpuidle/" + state + "/");
      auto disable = Read(env, dir + "disable");
      if (disable && *disable == "1") continue;
      enabled.insert(Read(env, dir + "name").value_or(state));
    }
  }
  if (!any) return Unavailable("cstates", why);
  std::string value;
  for (const auto& name : enabled) value += (value.empty() ? "" : ",") + name;
  value = enabled.empty() ? "deep states disabled" : "deep states enabled: " + value;
  if (auto max = Read(env, "/sys/module/intel_idle/parameters/max_cstate")) {
    value += "; intel_idle.max_cstate=" + *max;
  }
  return Finding("cstates", value, enabled.empty(), why);
}

HostFinding CheckAslr(SysEnv& env) {
  const char* why =
      "Address-space randomisation lays code and data out differently in every process, so "
      "cache and TLB behaviour change from one start of the server to the next.";
  auto v = Read(env, "/proc/sys/kernel/randomize_va_space");
  if (!v) return Unavailable("aslr", why);
  return Finding("aslr", *v, *v == "0", why);
}

HostFinding CheckChoice(SysEnv& env, const std::string& name, const std::string& path,
                        const char* why) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return Unavailable(name, why);
  const std::string value = SelectedChoice(*text);
  return Finding(name, value, value != "always", why);
}

HostFinding CheckIrqAffinity(SysEnv& env, const std::vector<int>& cpus) {
  const char* why =
      "Interrupts handled on a measured CPU take time from the server or the load generator in "
      "bursts.";
  auto entries = env.ListDir("/proc/irq");
  if (!entries.ok()) return Unavailable("irq_affinity", why);
  int total = 0, overlapping = 0;
  for (const auto& entry : *entries) {
    if (entry.empty() || !std::all_of(entry.begin(), entry.end(), ::isdigit)) continue;
    auto text = Read(env, "/proc/irq/" + entry + "/smp_affinity_list");
    if (!text) continue;
    auto list = ParseCpuList(*text);
    if (!list.ok()) continue;
    ++total;
    if (std::any_of(list->begin(), list->end(),
                    [&](int c) { return std::find(cpus.begin(), cpus.end(), c) != cpus.end(); })) {
      ++overlapping;
    }
  }
  std::string value = std::to_string(overlapping) + " of " + std::to_string(total) +
                      " IRQs may run on CPUs " + (cpus.empty() ? "-" : FormatCpuList(cpus));
  bool default_overlaps = false;
  if (auto def = Read(env, "/proc/irq/default_smp_affinity")) {
    const std::vector<int> mask = CpusOfMask(*def);
    default_overlaps = std::any_of(mask.begin(), mask.end(), [&](int c) {
      return std::find(cpus.begin(), cpus.end(), c) != cpus.end();
    });
    value += "; default_smp_affinity " + *def;
  }
  return Finding("irq_affinity", value, overlapping == 0 && !default_overlaps, why);
}

// isolcpus, nohz_full and rcu_nocbs: ok when every checked CPU is in the kernel's set.
HostFinding CheckCpuSet(const std::string& name, std::optional<std::vector<int>> set,
                        const std::vector<int>& cpus, const char* why) {
  if (!set) return Unavailable(name, why);
  return Finding(name, set->empty() ? "none" : FormatCpuList(*set), AllIn(cpus, *set), why);
}

std::vector<HostFinding> CheckIsolation(SysEnv& env, const std::vector<int>& cpus) {
  const auto cmdline = Read(env, "/proc/cmdline");
  // The sysfs file when the kernel has it; else the command line; else nothing is known.
  auto from = [&](const std::optional<std::string>& sysfs,
                  const std::string& param) -> std::optional<std::vector<int>> {
    if (sysfs) return *sysfs == "(null)" ? std::vector<int>{} : CpusOfParam(*sysfs);
    if (!cmdline) return std::nullopt;
    auto value = CmdlineParam(*cmdline, param);
    return value ? CpusOfParam(*value) : std::vector<int>{};
  };
  return {
      CheckCpuSet("isolcpus", from(Read(env, std::string(kCpuRoot) + "isolated"), "isolcpus"), cpus,
                  "A CPU not isolated runs other tasks whenever the scheduler picks it, which "
                  "interrupts the measured process."),
      CheckCpuSet("nohz_full", from(Read(env, std::string(kCpuRoot) + "nohz_full"), "nohz_full"),
                  cpus,
                  "Without nohz_full the timer tick interrupts a busy CPU hundreds of times a "
                  "second."),
      CheckCpuSet("rcu_nocbs", from(std::nullopt, "rcu_nocbs"), cpus,
                  "RCU callbacks run on every CPU not offloaded with rcu_nocbs, adding bursts of "
                  "kernel work on the measured CPUs."),
  };
}

HostFinding CheckSwap(SysEnv& env) {
  const char* why = "A server whose pages are swapped out measures the disk, not itself.";
  auto swaps = env.ReadFile("/proc/swaps");
  if (!swaps.ok()) return Unavailable("swap", why);
  std::istringstream in(*swaps);
  std::string line;
  int areas = -1;  // the first line is the header
  while (std::getline(in, line)) {
    if (!TrimSpace(line).empty()) ++areas;
  }
  areas = std::max(areas, 0);
  std::string value = areas == 0 ? "no swap areas" : std::to_string(areas) + " swap areas";
  if (auto swappiness = Read(env, "/proc/sys/vm/swappiness")) {
    value += "; swappiness " + *swappiness;
  }
  return Finding("swap", value, areas == 0, why);
}

bool RunningAsRoot(SysEnv& env) {
  auto status = env.ReadFile("/proc/self/status");
  if (!status.ok()) return false;
  std::istringstream in(*status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream uids(line.substr(4));
    std::string real, effective;
    uids >> real >> effective;
    return effective == "0";
  }
  return false;
}

// CAP_PERFMON in the effective set (/proc/self/status CapEff, bit 38): what the package's agent
// unit gives the agent for profiles (docs/profiles.md).
bool HasPerfmon(SysEnv& env) {
  auto status = env.ReadFile("/proc/self/status");
  if (!status.ok()) return false;
  std::istringstream in(*status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    unsigned long long caps = 0;
    if (std::sscanf(line.c_str() + 7, "%llx", &caps) != 1) return false;
    return (caps >> 38) & 1;
  }
  return false;
}

HostFinding CheckPerfParanoid(SysEnv& env) {
  const char* why =
      "Profiles of a window ([profile], docs/profiles.md) need perf_event_paranoid at most 1, or "
      "an agent with CAP_PERFMON (the package's unit gives it) or root; otherwise perf cannot "
      "sample the server.";
  auto v = Read(env, "/proc/sys/kernel/perf_event_paranoid");
  if (!v) return Unavailable("perf_event_paranoid", why);
  int level = 2;
  std::sscanf(v->c_str(), "%d", &level);
  const bool root = RunningAsRoot(env);
  const bool perfmon = !root && HasPerfmon(env);
  return Finding("perf_event_paranoid", *v + (perfmon ? " (the agent has CAP_PERFMON)" : ""),
                 level <= 1 || root || perfmon, why);
}

HostFinding CheckCgroup(SysEnv& env) {
  const char* why =
      "Without cgroup v2 and its cpu and cpuset controllers delegated, targets cannot be "
      "confined to their CPUs and measured apart.";
  if (!env.Exists("/sys/fs/cgroup")) return Unavailable("cgroup", why);
  if (!env.Exists("/sys/fs/cgroup/cgroup.controllers")) return Finding("cgroup", "v1", false, why);
  auto subtree = Read(env, "/sys/fs/cgroup/cgroup.subtree_control");
  std::set<std::string> controllers;
  if (subtree) {
    std::istringstream in(*subtree);
    std::string c;
    while (in >> c) controllers.insert(c);
  }
  const bool delegated = controllers.count("cpu") > 0 && controllers.count("cpuset") > 0;
  std::string value = "v2; subtree_control: ";
  value += !subtree ? kUnavailable : subtree->empty() ? "none" : *subtree;
  return Finding("cgroup", value, delegated, why);
}

std::vector<HostFinding> CheckVirtualization(SysEnv& env) {
  HostFacts facts;
  if (auto cpuinfo = env.ReadFile("/proc/cpuinfo"); cpuinfo.ok()) ParseCpuInfo(*cpuinfo, facts);
  std::optional<CpuTimes> total;
  if (auto stat = env.ReadFile("/proc/stat"); stat.ok()) {
    if (auto parsed = ParseSystemStat(*stat); parsed.ok()) total = parsed->total;
  }
  facts.steal_present = total && total->steal > 0;
  auto hypervisor_type = Read(env, "/sys/hypervisor/type");
  std::string vendor =
      Read(env, "/sys/class/dmi/id/sys_vendor").value_or(hypervisor_type.value_or(""));
  if (hypervisor_type && !hypervisor_type->empty()) facts.hypervisor = true;
  const char* vm_why =
      "On a virtual machine the hypervisor may run other guests on the same cores, so results "
      "depend on neighbours benchlab cannot see.";
  const char* steal_why =
      "Steal is time the hypervisor gave to someone else; steal during a window makes it slower "
      "than the machine is.";
  std::vector<HostFinding> out;
  const std::string described = DescribeVirtualization(facts, vendor);
  out.push_back(described == kUnavailable
                    ? Unavailable("virtualization", vm_why)
                    : Finding("virtualization", described, !facts.hypervisor, vm_why));
  if (!total || total->Total() == 0) {
    out.push_back(Unavailable("steal", steal_why));
  } else {
    char pct[64];
    std::snprintf(pct, sizeof(pct), "%.2f%% of CPU time since boot",
                  100.0 * static_cast<double>(total->steal) / static_cast<double>(total->Total()));
    out.push_back(Finding("steal", pct, total->steal == 0, steal_why));
  }
  return out;
}

}  // namespace

std::string CpuFile(int cpu, const std::string& rest) {
  return std::string(kCpuRoot) + "cpu" + std::to_string(cpu) + "/" + rest;
}

std::vector<int> CpusOfMask(const std::string& mask) {
  std::vector<int> cpus;
  int bit = 0;
  for (auto it = mask.rbegin(); it != mask.rend(); ++it) {
    if (*it == ',') continue;
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(*it)));
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
    for (int b = 0; b < 4; ++b) {
      if (digit >> b & 1) cpus.push_back(bit + b);
    }
    bit += 4;
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::string SelectedChoice(const std::string& text) {
  size_t open = text.find('[');
  size_t close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return std::string(TrimSpace(text));
  return text.substr(open + 1, close - open - 1);
}

std::vector<int> CheckedCpus(SysEnv& env, const std::vector<int>& pinned_cpus) {
  if (!pinned_cpus.empty()) return pinned_cpus;
  if (auto online = Read(env, std::string(kCpuRoot) + "online")) {
    if (auto cpus = ParseCpuList(*online); cpus.ok()) return *cpus;
  }
  if (auto stat = env.ReadFile("/proc/stat"); stat.ok()) {
    if (auto parsed = ParseSystemStat(*stat); parsed.ok()) return parsed->online;
  }
  return {};
}

std::vector<HostFinding> CheckHost(SysEnv& env, const std::vector<int>& pinned_cpus) {
  const std::vector<int> cpus = CheckedCpus(env, pinned_cpus);
  std::vector<HostFinding> out = {
      CheckGovernor(env, cpus),
      CheckMinFreq(env, cpus),
      CheckMaxFreq(env, cpus),
      CheckTurbo(env),
      CheckSmtSiblings(env, cpus),
      CheckCStates(env, cpus),
      CheckAslr(env),
      CheckChoice(env, "thp", "/sys/kernel/mm/transparent_hugepage/enabled",
                  "With transparent huge pages always on, khugepaged compacts and collapses "
                  "memory in the background, adding latency at unpredictable moments."),
      CheckChoice(env, "thp_defrag", "/sys/kernel/mm/transparent_hugepage/defrag",
                  "With defrag always, an allocation may stall while the kernel compacts "
                  "memory."),
      CheckIrqAffinity(env, cpus),
  };
  for (auto& f : CheckIsolation(env, cpus)) out.push_back(std::move(f));
  out.push_back(CheckSwap(env));
  out.push_back(CheckPerfParanoid(env));
  out.push_back(CheckCgroup(env));
  for (auto& f : CheckVirtualization(env)) out.push_back(std::move(f));
  return out;
}

}  // namespace benchlab

#include "common/host_requirement.h"

#include <algorithm>

namespace benchlab {
namespace {

constexpr std::string_view kSmtIdle = "smt_siblings_idle";

bool KnownName(std::string_view name) {
  const auto& names = HostFindingNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

const HostFinding* Find(const std::vector<HostFinding>& findings, std::string_view name) {
  for (const auto& f : findings) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& HostFindingNames() {
  static const std::vector<std::string> names = {
      "governor", "min_freq",       "max_freq",  "turbo",      "smt_siblings",
      "cstates",  "aslr",           "thp",       "thp_defrag", "irq_affinity",
      "isolcpus", "nohz_full",      "rcu_nocbs", "swap",       "perf_event_paranoid",
      "cgroup",   "virtualization", "steal"};
  return names;
}

bool KnownRequirement(const std::string& requirement) {
  const size_t eq = requirement.find('=');
  if (eq == std::string::npos) return requirement == kSmtIdle || KnownName(requirement);
  return eq + 1 < requirement.size() && KnownName(std::string_view(requirement).substr(0, eq));
}

std::string KnownRequirementNames() {
  std::string out;
  for (const auto& name : HostFindingNames()) out += name + ", ";
  return out + std::string(kSmtIdle);
}

std::optional<std::string> UnmetRequirement(const std::vector<HostFinding>& findings,
                                            const std::string& requirement) {
  if (!KnownRequirement(requirement)) return "unknown requirement " + requirement;
  const size_t eq = requirement.find('=');
  std::string name = requirement.substr(0, eq);
  if (name == kSmtIdle) name = "smt_siblings";
  const HostFinding* f = Find(findings, name);
  if (f == nullptr) return name + " was not reported";
  if (eq != std::string::npos) {
    if (f->value == requirement.substr(eq + 1)) return std::nullopt;
    return name + " is " + f->value;
  }
  if (f->status == kFindingOk) return std::nullopt;
  if (f->status == kFindingUnavailable) return name + " is unavailable";
  return name + " is " + f->value + " (" + f->status + ")";
}

}  // namespace benchlab

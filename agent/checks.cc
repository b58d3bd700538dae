#include "agent/checks.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "agent/host_stat.h"
#include "common/parse.h"

namespace benchlab {
namespace {

std::optional<std::string> ReadTrimmed(SysEnv& env, const std::string& path) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  return std::string(TrimSpace(*text));
}

std::string FormatCpus(double cpus) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", cpus);
  return buf;
}

// "/a/b/c" -> "/a/b/c", "/a/b", "/a", "/": the cgroup and each ancestor up to the root.
std::vector<std::string> SelfAndAncestors(std::string path) {
  if (path.empty() || path[0] != '/') path = "/" + path;
  std::vector<std::string> out;
  while (true) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    out.push_back(path);
    if (path == "/") break;
    path.resize(std::max<size_t>(path.rfind('/'), 1));
  }
  return out;
}

std::string Join(const std::string& base, const std::string& cgroup, const char* file) {
  return base + (cgroup == "/" ? "" : cgroup) + "/" + file;
}

// Quota and idle flags of one cgroup hierarchy, from the process's cgroup up to the root.
void CheckCgroupChain(SysEnv& env, const std::string& base, const std::string& cgroup, bool v2,
                      const std::string& who, std::vector<std::string>& reasons) {
  for (const std::string& group : SelfAndAncestors(cgroup)) {
    if (v2) {
      if (auto max = ReadTrimmed(env, Join(base, group, "cpu.max"))) {
        Result<std::optional<double>> cap = ParseCpuMax(*max);
        if (cap.ok() && cap->has_value()) {
          std::string quota = *max;
          std::replace(quota.begin(), quota.end(), ' ', '/');
          reasons.push_back(who + " cgroup " + group + " cpu.max " + quota + " caps it at " +
                            FormatCpus(**cap) + " CPU");
        }
      }
    } else {
      auto quota = ReadTrimmed(env, Join(base, group, "cpu.cfs_quota_us"));
      auto period = ReadTrimmed(env, Join(base, group, "cpu.cfs_period_us"));
      int64_t q = 0, p = 0;
      if (quota && period && ParseNumber(*quota, q) && ParseNumber(*period, p) && q > 0 && p > 0) {
        reasons.push_back(who + " cgroup " + group + " cpu.cfs_quota_us/cpu.cfs_period_us " +
                          *quota + "/" + *period + " caps it at " +
                          FormatCpus(static_cast<double>(q) / static_cast<double>(p)) + " CPU");
      }
    }
    if (auto idle = ReadTrimmed(env, Join(base, group, "cpu.idle")); idle && *idle == "1") {
      reasons.push_back(who + " cgroup " + group + " cpu.idle 1 (SCHED_IDLE group)");
    }
  }
}

void CheckCgroups(SysEnv& env, pid_t pid, const std::string& who,
                  std::vector<std::string>& reasons) {
  Result<std::string> text = env.ReadFile("/proc/" + std::to_string(pid) + "/cgroup");
  if (!text.ok()) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    // "hierarchy-ID:controller-list:cgroup-path"; the path may itself hold ':'.
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string_view id = line.substr(0, c1);
    std::string controllers(line.substr(c1 + 1, c2 - c1 - 1));
    std::string path(line.substr(c2 + 1));
    if (id == "0" && controllers.empty()) {
      // Pure v2 mounts the hierarchy at /sys/fs/cgroup; hybrid systems at .../unified.
      std::string base = env.Exists("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup"
                                                                         : "/sys/fs/cgroup/unified";
      CheckCgroupChain(env, base, path, /*v2=*/true, who, reasons);
      continue;
    }
    bool has_cpu = ("," + controllers + ",").find(",cpu,") != std::string::npos;
    if (!has_cpu) continue;
    std::string base = "/sys/fs/cgroup/" + controllers;
    if (!env.Exists(base)) base = "/sys/fs/cgroup/cpu";
    CheckCgroupChain(env, base, path, /*v2=*/false, who, reasons);
  }
}

}  // namespace

const char* CheckOutcomeName(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kPass:
      return "pass";
    case CheckOutcome::kFail:
      return "fail";
    case CheckOutcome::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

CheckResult CheckPower(SysEnv& env) {
  const std::string dir = "/sys/class/power_supply";
  CheckResult result;
  Result<std::vector<std::string>> supplies = env.ListDir(dir);
  if (!supplies.ok()) {
    result.outcome = CheckOutcome::kUnavailable;
    result.reasons.push_back("power: no " + dir);
    return result;
  }
  std::sort(supplies->begin(), supplies->end());
  std::vector<std::string> mains_offline, discharging;
  bool any_mains = false, mains_online = false, any_battery = false;
  for (const std::string& name : *supplies) {
    std::string type = ReadTrimmed(env, dir + "/" + name + "/type").value_or("");
    if (type == "Mains") {
      any_mains = true;
      std::string online = ReadTrimmed(env, dir + "/" + name + "/online").value_or("?");
      if (online == "1") {
        mains_online = true;
      } else {
        mains_offline.push_back("mains supply " + name + " online " + online + " (expected 1)");
      }
    } else if (type == "Battery") {
      any_battery = true;
      std::string status = ReadTrimmed(env, dir + "/" + name + "/status").value_or("?");
      if (status == "Discharging") {
        discharging.push_back("battery " + name + " status Discharging");
      }
    }
  }
  if (!any_mains && !any_battery) {
    result.outcome = CheckOutcome::kUnavailable;
    result.reasons.push_back("power: no mains or battery supply in " + dir);
  } else if (any_mains && !mains_online) {
    result.outcome = CheckOutcome::kFail;
    for (std::string& r : mains_offline) result.reasons.push_back("on_battery: " + r);
    for (std::string& r : discharging) result.reasons.push_back("on_battery: " + r);
  } else if (!any_mains && !discharging.empty()) {
    result.outcome = CheckOutcome::kFail;
    for (std::string& r : discharging) {
      result.reasons.push_back("on_battery: no mains supply and " + r);
    }
  }
  return result;
}

Result<CheckResult> CheckScheduling(SysEnv& env, pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  Result<std::string> text = env.ReadFile(proc + "/stat");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("background_scheduling: process " + std::to_string(pid) + " is gone");
    }
    return text.status();
  }
  ProcBrief st;
  BENCHLAB_RETURN_IF_ERROR(ParseProcBrief(*text, st));
  const std::string who =
      "background_scheduling: pid " + std::to_string(pid) + " (" + st.comm + ")";
  CheckResult result;
  auto judge = [&](const ProcBrief& task, const std::string& prefix) {
    if (task.nice > 0) {
      result.reasons.push_back(prefix + " nice " + std::to_string(task.nice) + " > 0");
    }
    if (task.policy == 3 || task.policy == 5) {
      result.reasons.push_back(prefix + " " + SchedPolicyName(task.policy));
    }
  };
  judge(st, who);
  // Threads may be reniced or given a policy of their own (nice and policy are per thread).
  if (auto tasks = env.ListDir(proc + "/task"); tasks.ok()) {
    std::sort(tasks->begin(), tasks->end());
    ProcBrief task;
    for (const std::string& tid : *tasks) {
      if (tid == std::to_string(pid)) continue;
      Result<std::string> task_text = env.ReadFile(proc + "/task/" + tid + "/stat");
      if (!task_text.ok() || !ParseProcBrief(*task_text, task).ok()) continue;  // exited
      judge(task, who + " thread " + tid + " (" + task.comm + ")");
    }
  }
  CheckCgroups(env, pid, who, result.reasons);
  if (!result.reasons.empty()) result.outcome = CheckOutcome::kFail;
  return result;
}

Result<std::optional<double>> ParseCpuMax(std::string_view text) {
  text = TrimSpace(text);
  size_t space = text.find(' ');
  std::string_view quota = text.substr(0, space);
  std::string_view period =
      space == std::string_view::npos ? "100000" : TrimSpace(text.substr(space));
  int64_t p = 0, q = 0;
  if (!ParseNumber(period, p) || p <= 0) {
    return Status::InvalidArgument("cpu.max: bad period in \"" + std::string(text) + "\"");
  }
  if (quota == "max") return std::optional<double>();
  if (!ParseNumber(quota, q) || q <= 0) {
    return Status::InvalidArgument("cpu.max: bad quota in \"" + std::string(text) + "\"");
  }
  return std::optional<double>(static_cast<double>(q) / static_cast<double>(p));
}

}  // namespace benchlab

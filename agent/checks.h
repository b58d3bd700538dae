// Checks an agent runs before a window: is the machine on battery power, and is a process (the
// target, the load generator, the agent itself) scheduled as background work. Each returns a
// verdict with reasons a person can act on, naming the value found and the threshold. All reads
// go through SysEnv, so fake roots test any machine. Stateless; safe from any thread when the
// SysEnv is.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

enum class CheckOutcome {
  kPass,
  kFail,         // reasons say why
  kUnavailable,  // the machine does not offer what the check reads; reasons say what
};

struct CheckResult {
  CheckOutcome outcome = CheckOutcome::kPass;
  std::vector<std::string> reasons;
  bool failed() const { return outcome == CheckOutcome::kFail; }
};

const char* CheckOutcomeName(CheckOutcome outcome);

// /sys/class/power_supply: fails ("on_battery: ...") when the machine has mains supplies and
// none is online, or has none and a battery is discharging. Unavailable without any mains or
// battery supply (desktops, servers, VMs).
CheckResult CheckPower(SysEnv& env);

// Fails ("background_scheduling: pid N (comm) ...") when the process or any of its threads has
// a positive nice or the SCHED_IDLE or SCHED_BATCH policy (/proc/<pid>/stat fields 19 and 41),
// or when its CPU cgroup or an ancestor caps it with a quota (v2 cpu.max, v1
// cpu.cfs_quota_us) or marks it idle (cpu.idle). NotFound when the process is gone.
Result<CheckResult> CheckScheduling(SysEnv& env, pid_t pid);

// A cgroup v2 cpu.max ("max 100000" or "<quota> <period>") as CPUs: nullopt when unlimited.
Result<std::optional<double>> ParseCpuMax(std::string_view text);

}  // namespace benchlab

#include "agent/host_tune.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/host_check.h"
#include "common/parse.h"

namespace benchlab {
namespace {

// A file's value as it is compared and written back: the selected word of a choice file, else
// the text trimmed.
std::optional<std::string> Current(SysEnv& env, const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  return SelectedChoice(*text);
}

bool Contains(const std::vector<int>& cpus, int cpu) {
  return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

// The kernel's cpumask format: 32-bit groups of hex digits, most significant first.
std::string FormatMask(const std::vector<int>& cpus) {
  int groups = 1;
  for (int cpu : cpus) groups = std::max(groups, cpu / 32 + 1);
  std::vector<uint32_t> words(static_cast<size_t>(groups), 0);
  for (int cpu : cpus) words[static_cast<size_t>(cpu / 32)] |= uint32_t{1} << (cpu % 32);
  std::string out;
  for (size_t i = words.size(); i-- > 0;) {
    char word[16];
    std::snprintf(word, sizeof(word), "%08x", words[i]);
    out += (out.empty() ? "" : ",") + std::string(word);
  }
  return out;
}

std::vector<int> Without(const std::vector<int>& cpus, const std::vector<int>& tuned) {
  std::vector<int> out;
  for (int cpu : cpus) {
    if (!Contains(tuned, cpu)) out.push_back(cpu);
  }
  return out;
}

// Adds a change of `path` to `value` when the file is there and holds something else.
void Plan(SysEnv& env, const std::string& path, const std::string& value,
          std::vector<TuneChange>& out) {
  auto old = Current(env, path);
  if (old && *old != value) out.push_back({path, *old, value});
}

void PlanIrqs(SysEnv& env, const std::vector<int>& cpus, std::vector<TuneChange>& out,
              std::vector<std::string>* skipped) {
  const std::string def = "/proc/irq/default_smp_affinity";
  if (auto old = Current(env, def)) {
    const std::vector<int> mask = CpusOfMask(*old);
    const std::vector<int> rest = Without(mask, cpus);
    if (rest.empty()) {
      skipped->push_back(def + ": no CPU would be left for new interrupts");
    } else if (rest.size() != mask.size()) {
      out.push_back({def, *old, FormatMask(rest)});
    }
  }
  auto entries = env.ListDir("/proc/irq");
  if (!entries.ok()) return;
  std::sort(entries->begin(), entries->end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& entry : *entries) {
    if (entry.empty() || !std::all_of(entry.begin(), entry.end(), ::isdigit)) continue;
    const std::string path = "/proc/irq/" + entry + "/smp_affinity_list";
    auto old = Current(env, path);
    if (!old) continue;
    auto list = ParseCpuList(*old);
    if (!list.ok()) continue;
    const std::vector<int> rest = Without(*list, cpus);
    if (rest.size() == list->size()) continue;
    if (rest.empty()) {
      skipped->push_back(path + ": its only CPUs (" + *old + ") are the tuned ones");
      continue;
    }
    out.push_back({path, *old, FormatCpuList(rest)});
  }
}

std::string StateText(const std::vector<int>& cpus, const std::vector<TuneChange>& changes) {
  nlohmann::ordered_json saved = nlohmann::ordered_json::array();
  for (const auto& c : changes) saved.push_back({{"path", c.path}, {"value", c.old_value}});
  return nlohmann::ordered_json{
             {"version", 1}, {"cpus", FormatCpuList(cpus)}, {"saved", std::move(saved)}}
             .dump(2) +
         "\n";
}

// Writes the state file whole or not at all: a temporary file (0600) beside it, then rename.
Status WriteState(SysEnv& env, const std::string& state_path, const std::string& text) {
  const std::filesystem::path real(env.RealPath(state_path));
  std::error_code ec;
  if (real.has_parent_path()) std::filesystem::create_directories(real.parent_path(), ec);
  if (ec) return Status::IoError(state_path + ": creating its directory: " + ec.message());
  const std::string tmp = real.string() + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::IoError(tmp + ": " + std::strerror(errno));
  bool ok = fchmod(fd, 0600) == 0 &&
            write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            fsync(fd) == 0;
  const int err = errno;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), real.c_str()) != 0) {
    const std::string why = std::strerror(ok ? errno : err);
    unlink(tmp.c_str());
    return Status::IoError(state_path + ": writing the saved values: " + why);
  }
  return Status::Ok();
}

}  // namespace

std::vector<TuneChange> PlanTune(SysEnv& env, const std::vector<int>& cpus,
                                 std::vector<std::string>* skipped) {
  std::vector<TuneChange> out;
  for (int cpu : cpus) {
    const std::string governor = CpuFile(cpu, "cpufreq/scaling_governor");
    if (auto offered = env.ReadFile(CpuFile(cpu, "cpufreq/scaling_available_governors"));
        offered.ok() && (" " + *offered + " ").find(" performance") == std::string::npos) {
      skipped->push_back(governor + ": the kernel does not offer the performance governor");
    } else {
      Plan(env, governor, "performance", out);
    }
  }
  if (env.Exists(std::string(kCpuRoot) + "intel_pstate/no_turbo")) {
    Plan(env, std::string(kCpuRoot) + "intel_pstate/no_turbo", "1", out);
  } else {
    Plan(env, std::string(kCpuRoot) + "cpufreq/boost", "0", out);
  }
  Plan(env, "/proc/sys/kernel/randomize_va_space", "0", out);
  Plan(env, "/sys/kernel/mm/transparent_hugepage/enabled", "never", out);
  Plan(env, "/sys/kernel/mm/transparent_hugepage/defrag", "never", out);
  PlanIrqs(env, cpus, out, skipped);
  // C-states deeper than state1 (POLL and C1 stay: their exit latency is a microsecond or two).
  for (int cpu : cpus) {
    auto states = env.ListDir(CpuFile(cpu, "cpuidle"));
    if (!states.ok()) continue;
    std::sort(states->begin(), states->end());
    for (const auto& state : *states) {
      if (state.rfind("state", 0) != 0 || std::atoi(state.c_str() + 5) < 2) continue;
      Plan(env, CpuFile(cpu, "cpuidle/" + state + "/disable"), "1", out);
    }
  }
  return out;
}

Result<TuneReport> Tune(SysEnv& env, const std::vector<int>& cpus, const std::string& state_path) {
  if (cpus.empty()) return Status::InvalidArgument("no CPUs to tune: give --cpus LIST");
  if (env.Exists(state_path)) {
    return Status::FailedPrecondition(
        state_path + " exists: the host is tuned already; run benchlab host reset first");
  }
  TuneReport report;
  const std::vector<TuneChange> plan = PlanTune(env, cpus, &report.skipped);
  BENCHLAB_RETURN_IF_ERROR(WriteState(env, state_path, StateText(cpus, plan)));
  for (const auto& change : plan) {
    if (Status st = env.WriteFile(change.path, change.new_value); !st.ok()) {
      report.failed.push_back(change.path + ": " + st.message());
      continue;
    }
    auto now = Current(env, change.path);
    if (!now || *now != change.new_value) {
      report.failed.push_back(change.path + ": wrote " + change.new_value + ", reads back " +
                              now.value_or("nothing"));
      continue;
    }
    report.applied.push_back(change);
  }
  return report;
}

Result<ResetReport> Reset(SysEnv& env, const std::string& state_path) {
  auto text = env.ReadFile(state_path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(state_path + ": no saved values: the host is not tuned by benchlab");
    }
    return text.status();
  }
  nlohmann::json state = nlohmann::json::parse(*text, nullptr, false);
  if (!state.is_object() || !state.contains("saved") || !state["saved"].is_array()) {
    return Status::InvalidArgument(state_path +
                                   ": expected a JSON object with a \"saved\" array, as benchlab "
                                   "host tune writes it");
  }
  ResetReport report;
  for (const auto& entry : state["saved"]) {
    ++report.total;
    if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string() ||
        !entry.contains("value") || !entry["value"].is_string()) {
      report.failures.push_back("entry " + std::to_string(report.total) +
                                ": expected {\"path\", \"value\"} strings");
      continue;
    }
    const std::string path = entry["path"].get<std::string>();
    const std::string value = entry["value"].get<std::string>();
    if ((path.rfind("/proc/", 0) != 0 && path.rfind("/sys/", 0) != 0) ||
        path.find("/../") != std::string::npos) {
      report.failures.push_back(path + ": not under /proc or /sys, left alone");
      continue;
    }
    if (auto now = Current(env, path); now && *now == value) {
      ++report.restored;
      continue;
    }
    if (Status st = env.WriteFile(path, value); !st.ok()) {
      report.failures.push_back(path + ": writing " + value + ": " + st.message());
      continue;
    }
    auto now = Current(env, path);
    if (!now || *now != value) {
      report.failures.push_back(path + ": wrote " + value + ", reads back " +
                                now.value_or("nothing"));
      continue;
    }
    ++report.restored;
  }
  if (report.failures.empty()) {
    if (unlink(env.RealPath(state_path).c_str()) != 0) {
      report.failures.push_back(
          state_path + ": every value is restored, but removing it: " + std::strerror(errno));
    } else {
      report.state_removed = true;
    }
  }
  return report;
}

}  // namespace benchlab

#include "rpc/process_metrics.h"

#include <sstream>
#include <string>
#include <string_view>

#include "common/parse.h"

namespace benchlab {
namespace {

prometheus::MetricFamily ProcessFamily(const std::string& name, const std::string& help,
                                       prometheus::MetricType type, double value) {
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return prometheus::MetricFamily{name, help, type, {metric}};
}

// /proc/PID/stat's fields from the third (state) on: the second, the command's name in
// parentheses, may hold spaces and parentheses itself, so the fields start after the last ')'.
std::vector<std::string_view> StatFields(std::string_view stat) {
  std::vector<std::string_view> fields;
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return fields;
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  return fields;
}

// /proc/stat's btime: the boot time in seconds since the epoch.
bool BootTime(SysEnv& env, double& out) {
  auto text = env.ReadFile("/proc/stat");
  if (!text.ok()) return false;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("btime ")) continue;
    uint64_t seconds = 0;
    if (!ParseNumber(TrimSpace(std::string_view(line).substr(6)), seconds)) return false;
    out = static_cast<double>(seconds);
    return true;
  }
  return false;
}

// The soft limit of /proc/PID/limits' "Max open files" line ("Max open files  1024  4096  files").
bool MaxOpenFiles(SysEnv& env, const std::string& proc, double& out) {
  auto text = env.ReadFile(proc + "/limits");
  if (!text.ok()) return false;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("Max open files")) continue;
    std::istringstream words(line.substr(14));
    std::string soft;
    words >> soft;
    uint64_t n = 0;
    if (!ParseNumber(soft, n)) return false;  // "unlimited" is no number: left out
    out = static_cast<double>(n);
    return true;
  }
  return false;
}

}  // namespace

std::vector<prometheus::MetricFamily> ProcessFamilies(SysEnv& env, pid_t pid) {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const std::string proc = "/proc/" + std::to_string(pid);
  const double ticks = static_cast<double>(env.ClockTicksPerSecond());
  if (auto stat = env.ReadFile(proc + "/stat"); stat.ok() && ticks > 0) {
    // Fields 14 utime, 15 stime, 22 starttime (clock ticks after boot), 23 vsize (bytes), 24 rss
    // (pages): indices 11, 12, 19, 20 and 21 from the third field on.
    const std::vector<std::string_view> f = StatFields(*stat);
    uint64_t utime = 0, stime = 0, start = 0, vsize = 0, rss = 0;
    if (f.size() > 21 && ParseNumber(f[11], utime) && ParseNumber(f[12], stime) &&
        ParseNumber(f[19], start) && ParseNumber(f[20], vsize) && ParseNumber(f[21], rss)) {
      out.push_back(ProcessFamily("process_cpu_seconds_total",
                                  "Total user and system CPU time spent in seconds.",
                                  MetricType::Counter, static_cast<double>(utime + stime) / ticks));
      out.push_back(ProcessFamily(
          "process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
          static_cast<double>(rss) * static_cast<double>(env.PageSizeBytes())));
      out.push_back(ProcessFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                  MetricType::Gauge, static_cast<double>(vsize)));
      if (double boot = 0; BootTime(env, boot)) {
        out.push_back(ProcessFamily("process_start_time_seconds",
                                    "Start time of the process since unix epoch in seconds.",
                                    MetricType::Gauge, boot + static_cast<double>(start) / ticks));
      }
    }
  }
  if (auto fds = env.ListDir(proc + "/fd"); fds.ok()) {
    out.push_back(ProcessFamily("process_open_fds", "Number of open file descriptors.",
                                MetricType::Gauge, static_cast<double>(fds->size())));
  }
  if (double max = 0; MaxOpenFiles(env, proc, max)) {
    out.push_back(ProcessFamily("process_max_fds", "Maximum number of open file descriptors.",
                                MetricType::Gauge, max));
  }
  return out;
}

}  // namespace benchlab

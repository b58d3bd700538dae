#include "agent/host_sensors.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace benchlab {
namespace {

// The first whitespace-free word of a sysfs file's text, as a number.
template <typename T>
std::optional<T> ReadNumber(SysEnv& env, const std::string& path) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  std::string_view s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

bool HasPrefix(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

HostSensors HostSensors::Discover(SysEnv& env, const std::vector<int>& cpus) {
  HostSensors sensors;
  if (auto zones = env.ListDir("/sys/class/thermal"); zones.ok()) {
    std::sort(zones->begin(), zones->end());
    for (const std::string& zone : *zones) {
      if (!HasPrefix(zone, "thermal_zone")) continue;
      std::string file = "/sys/class/thermal/" + zone + "/temp";
      if (env.Exists(file)) sensors.temp_files_.push_back(std::move(file));
    }
  }
  if (auto entries = env.ListDir("/sys/devices/system/cpu"); entries.ok()) {
    std::sort(entries->begin(), entries->end());
    for (const std::string& entry : *entries) {
      if (!HasPrefix(entry, "cpu") || entry.size() == 3 ||
          !std::all_of(entry.begin() + 3, entry.end(),
                       [](char c) { return c >= '0' && c <= '9'; })) {
        continue;
      }
      std::string dir = "/sys/devices/system/cpu/" + entry + "/thermal_throttle/";
      for (bool package : {false, true}) {
        std::string file = dir + (package ? "package" : "core") + "_throttle_count";
        if (!env.Exists(file)) continue;
        sensors.throttle_files_.push_back(std::move(file));
        sensors.throttle_is_package_.push_back(package);
      }
    }
  }
  for (int cpu : cpus) {
    std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
    std::optional<uint64_t> max_khz = ReadNumber<uint64_t>(env, dir + "cpuinfo_max_freq");
    if (!max_khz || *max_khz == 0 || !env.Exists(dir + "scaling_cur_freq")) continue;
    sensors.freq_.push_back({dir + "scaling_cur_freq", *max_khz});
  }
  return sensors;
}

std::optional<double> HostSensors::MaxTempC(SysEnv& env) const {
  std::optional<double> hottest;
  for (const std::string& file : temp_files_) {
    // Some zones fail to read (a sensor asleep, -ENODATA); the others still count.
    std::optional<int64_t> millideg = ReadNumber<int64_t>(env, file);
    if (!millideg) continue;
    double c = static_cast<double>(*millideg) / 1000.0;
    if (!hottest || c > *hottest) hottest = c;
  }
  return hottest;
}

std::optional<double> HostSensors::MinFreqRatio(SysEnv& env) const {
  std::optional<double> lowest;
  for (const Freq& f : freq_) {
    std::optional<uint64_t> cur = ReadNumber<uint64_t>(env, f.cur_file);
    if (!cur) continue;
    double ratio = static_cast<double>(*cur) / static_cast<double>(f.max_khz);
    if (!lowest || ratio < *lowest) lowest = ratio;
  }
  return lowest;
}

ThrottleReading HostSensors::ReadThrottle(SysEnv& env) const {
  ThrottleReading reading;
  reading.reserve(throttle_files_.size());
  for (const std::string& file : throttle_files_) {
    reading.push_back(ReadNumber<uint64_t>(env, file));
  }
  return reading;
}

ThrottleIncrease HostSensors::Increase(const ThrottleReading& begin,
                                       const ThrottleReading& end) const {
  ThrottleIncrease inc;
  for (size_t i = 0; i < throttle_files_.size() && i < begin.size() && i < end.size(); ++i) {
    if (!begin[i] || !end[i]) continue;
    // A counter never goes back; if it did (a CPU re-plugged), the window saw no increase.
    uint64_t delta = *end[i] > *begin[i] ? *end[i] - *begin[i] : 0;
    std::optional<uint64_t>& out = throttle_is_package_[i] ? inc.package_events : inc.core_events;
    if (!out) {
      out = delta;
    } else if (throttle_is_package_[i]) {
      out = std::max(*out, delta);
    } else {
      *out += delta;
    }
  }
  return inc;
}

}  // namespace benchlab

// HostSensors: the machine's thermal zones, thermal-throttle counters and CPU frequency files,
// found once per window (Discover) and then read cheaply at each sample through SysEnv. A
// machine without them (a VM, a container) reads std::nullopt: "unavailable", never 0.
// Immutable after Discover; the reads are safe from any thread when the SysEnv is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sysenv.h"

namespace benchlab {

// Throttle counter values, one per counter file in HostSensors' order; nullopt when unreadable.
using ThrottleReading = std::vector<std::optional<uint64_t>>;

struct ThrottleIncrease {
  std::optional<uint64_t> core_events;     // sum over CPUs
  std::optional<uint64_t> package_events;  // largest on any CPU (all CPUs of a package agree)
};

class HostSensors {
 public:
  // Looks for /sys/class/thermal/thermal_zone*/temp, every
  // /sys/devices/system/cpu/cpuN/thermal_throttle/{core,package}_throttle_count, and
  // cpuN/cpufreq/{scaling_cur_freq,cpuinfo_max_freq} for each CPU in `cpus`.
  static HostSensors Discover(SysEnv& env, const std::vector<int>& cpus);

  // The hottest zone in degrees Celsius (the kernel writes millidegrees).
  std::optional<double> MaxTempC(SysEnv& env) const;
  // The lowest scaling_cur_freq / cpuinfo_max_freq among the CPUs given to Discover.
  std::optional<double> MinFreqRatio(SysEnv& env) const;
  ThrottleReading ReadThrottle(SysEnv& env) const;
  // Compares two readings of the same HostSensors; a counter unreadable in either is skipped.
  ThrottleIncrease Increase(const ThrottleReading& begin, const ThrottleReading& end) const;

  bool has_thermal() const { return !temp_files_.empty(); }
  bool has_frequency() const { return !freq_.empty(); }
  bool has_throttle() const { return !throttle_files_.empty(); }

 private:
  struct Freq {
    std::string cur_file;
    uint64_t max_khz = 0;
  };
  std::vector<std::string> temp_files_;
  std::vector<std::string> throttle_files_;
  std::vector<bool> throttle_is_package_;
  std::vector<Freq> freq_;
};

}  // namespace benchlab

// FakeProcRoot: a temporary directory standing in for "/", holding canned /proc/<pid>/stat and
// /proc/<pid>/status files, /proc/stat, /proc/vmstat and /sys sensors and power supplies in the
// kernel's formats, for use through RootedSysEnv(root()).
// Header-only so any test can use it. Not thread-safe; removes its directory when destroyed.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchlab {

// One process as the fake /proc shows it. Times are in clock ticks.
struct FakeProcess {
  pid_t pid = 0;
  pid_t ppid = 1;
  std::string comm = "fake";
  char state = 'S';
  uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;
  uint64_t starttime = 1000;
  int64_t threads = 1;
  uint64_t rss_kb = 0;  // absent from status when 0 and omit_vm_rss is set (kernel threads)
  uint64_t hwm_kb = 0;
  uint64_t voluntary_ctxt_switches = 0;
  uint64_t nonvoluntary_ctxt_switches = 0;
  bool omit_vm_rss = false;
  int nice = 0;    // field 19 (priority, field 18, follows as 20 + nice)
  int policy = 0;  // field 41: 0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE
};

// /proc/<pid>/stat as the kernel writes it (52 fields; the ones benchlab reads are filled in).
inline std::string FormatFakeStat(const FakeProcess& p) {
  const uint64_t rss_pages = p.rss_kb / 4;
  std::string s = std::to_string(p.pid) + " (" + p.comm + ") " + p.state + " " +
                  std::to_string(p.ppid) + " " + std::to_string(p.pid) +  // pgrp
                  " " + std::to_string(p.pid) + " 0 -1 4194304 100 0 0 0 " +
                  std::to_string(p.utime) + " " + std::to_string(p.stime) + " " +
                  std::to_string(p.cutime) + " " + std::to_string(p.cstime) + " " +
                  std::to_string(20 + p.nice) + " " + std::to_string(p.nice) + " " +
                  std::to_string(p.threads) + " 0 " + std::to_string(p.starttime) + " 12345678 " +
                  std::to_string(rss_pages);
  // Fields 25..52: limits, addresses, signals, exit code; only the policy (41) matters here.
  for (int field = 25; field <= 52; ++field) {
    s += field == 41 ? " " + std::to_string(p.policy) : std::string(" 0");
  }
  return s + "\n";
}

inline std::string FormatFakeStatus(const FakeProcess& p) {
  std::string s = "Name:\t" + p.comm + "\nUmask:\t0022\nState:\t" + p.state +
                  " (sleeping)\nTgid:\t" + std::to_string(p.pid) + "\nPid:\t" +
                  std::to_string(p.pid) + "\nPPid:\t" + std::to_string(p.ppid) + "\n";
  if (!p.omit_vm_rss) {
    s += "VmPeak:\t  100000 kB\nVmSize:\t  90000 kB\nVmHWM:\t" + std::to_string(p.hwm_kb) +
         " kB\nVmRSS:\t" + std::to_string(p.rss_kb) + " kB\n";
  }
  s += "Threads:\t" + std::to_string(p.threads) + "\nSigQ:\t0/7823\n";
  s += "voluntary_ctxt_switches:\t" + std::to_string(p.voluntary_ctxt_switches) + "\n";
  s += "nonvoluntary_ctxt_switches:\t" + std::to_string(p.nonvoluntary_ctxt_switches) + "\n";
  return s;
}

// One CPU's line of /proc/stat, in clock ticks.
struct FakeCpu {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  uint64_t steal = 0, guest = 0, guest_nice = 0;
};

// /proc/stat as the kernel writes it: the "cpu" line sums the "cpuN" lines; `forks` is the
// "processes" line (forks since boot).
inline std::string FormatFakeSystemStat(const std::vector<FakeCpu>& cpus, uint64_t forks = 4242) {
  auto line = [](const std::string& label, const FakeCpu& c) {
    std::string s = label;
    for (uint64_t v : {c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal,
                       c.guest, c.guest_nice}) {
      s += " " + std::to_string(v);
    }
    return s + "\n";
  };
  FakeCpu total;
  for (const FakeCpu& c : cpus) {
    total.user += c.user, total.nice += c.nice, total.system += c.system, total.idle += c.idle;
    total.iowait += c.iowait, total.irq += c.irq, total.softirq += c.softirq;
    total.steal += c.steal, total.guest += c.guest, total.guest_nice += c.guest_nice;
  }
  std::string s = line("cpu ", total);
  for (size_t i = 0; i < cpus.size(); ++i) s += line("cpu" + std::to_string(i), cpus[i]);
  return s + "intr 12345 0 0\nctxt 67890\nbtime 1700000000\nprocesses " + std::to_string(forks) +
         "\nprocs_running 1\nprocs_blocked 0\nsoftirq 100 0 50 0 0 0 0 50 0 0 0\n";
}

class FakeProcRoot {
 public:
  FakeProcRoot() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fake_proc.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
    std::filesystem::create_directories(root_ + "/proc");
  }
  ~FakeProcRoot() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeProcRoot(const FakeProcRoot&) = delete;
  FakeProcRoot& operator=(const FakeProcRoot&) = delete;

  // The directory to hand to RootedSysEnv.
  const std::string& root() const { return root_; }

  // Creates or replaces /proc/<pid>/stat and /proc/<pid>/status.
  void Put(const FakeProcess& p) {
    std::string dir = ProcDir(p.pid);
    std::filesystem::create_directories(dir);
    WriteFile(dir + "/stat", FormatFakeStat(p));
    WriteFile(dir + "/status", FormatFakeStatus(p));
  }
  // The process exits (and is reaped): its /proc directory disappears.
  void Remove(pid_t pid) { std::filesystem::remove_all(ProcDir(pid)); }
  // Host-wide files: /proc/stat from per-CPU times, /proc/vmstat's swap counters.
  void PutSystemStat(const std::vector<FakeCpu>& cpus, uint64_t forks = 4242) {
    Write("/proc/stat", FormatFakeSystemStat(cpus, forks));
  }
  // /proc/uptime: seconds since boot (two decimals, as the kernel writes it) and idle seconds.
  void PutUptime(double seconds) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.2f 0.00\n", seconds);
    Write("/proc/uptime", text);
  }
  // /proc/loadavg, whose last field is the last pid handed out.
  void PutLoadAvg(pid_t last_pid) {
    Write("/proc/loadavg", "0.20 0.18 0.12 1/80 " + std::to_string(last_pid) + "\n");
  }
  void PutVmStat(uint64_t pswpin, uint64_t pswpout) {
    Write("/proc/vmstat", "nr_free_pages 123456\npgpgin 1000\npgpgout 2000\npswpin " +
                              std::to_string(pswpin) + "\npswpout " + std::to_string(pswpout) +
                              "\npgfault 99999\n");
  }
  // Sensors under /sys, in the kernel's units (millidegrees Celsius, kHz).
  void PutThermalZone(int zone, int64_t millidegrees) {
    std::string dir = "/sys/class/thermal/thermal_zone" + std::to_string(zone);
    Write(dir + "/type", "x86_pkg_temp\n");
    Write(dir + "/temp", std::to_string(millidegrees) + "\n");
  }
  void PutThrottleCounts(int cpu, uint64_t core, uint64_t package) {
    std::string dir = CpuDir(cpu) + "/thermal_throttle/";
    Write(dir + "core_throttle_count", std::to_string(core) + "\n");
    Write(dir + "package_throttle_count", std::to_string(package) + "\n");
  }
  void PutCpuFreq(int cpu, uint64_t cur_khz, uint64_t max_khz) {
    std::string dir = CpuDir(cpu) + "/cpufreq/";
    Write(dir + "scaling_cur_freq", std::to_string(cur_khz) + "\n");
    Write(dir + "cpuinfo_max_freq", std::to_string(max_khz) + "\n");
  }
  // /sys/class/power_supply/<name>: type "Mains" with `value` as online, or "Battery" with
  // `value` as status ("Discharging", "Charging", "Full").
  void PutPowerSupply(const std::string& name, const std::string& type, const std::string& value) {
    std::string dir = "/sys/class/power_supply/" + name;
    Write(dir + "/type", type + "\n");
    Write(dir + (type == "Battery" ? "/status" : "/online"), value + "\n");
  }
  // Writes any file under the root, e.g. WriteFile("/proc/7/stat", "garbage").
  void Write(const std::string& path, const std::string& content) {
    std::filesystem::path full = root_ + path;
    std::filesystem::create_directories(full.parent_path());
    WriteFile(full.string(), content);
  }

 private:
  std::string ProcDir(pid_t pid) const { return root_ + "/proc/" + std::to_string(pid); }
  static std::string CpuDir(int cpu) { return "/sys/devices/system/cpu/cpu" + std::to_string(cpu); }
  static void WriteFile(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  std::string root_;
};

}  // namespace benchlab

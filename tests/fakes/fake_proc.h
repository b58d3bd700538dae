// FakeProcRoot: a temporary directory standing in for "/", holding canned /proc/<pid>/stat and
// /proc/<pid>/status files in the kernel's formats, for use through RootedSysEnv(root()).
// Header-only so any test can use it. Not thread-safe; removes its directory when destroyed.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

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
};

// /proc/<pid>/stat as the kernel writes it (52 fields; the ones benchlab reads are filled in).
inline std::string FormatFakeStat(const FakeProcess& p) {
  const uint64_t rss_pages = p.rss_kb / 4;
  std::string s = std::to_string(p.pid) + " (" + p.comm + ") " + p.state + " " +
                  std::to_string(p.ppid) + " " + std::to_string(p.pid) +  // pgrp
                  " " + std::to_string(p.pid) + " 0 -1 4194304 100 0 0 0 " +
                  std::to_string(p.utime) + " " + std::to_string(p.stime) + " " +
                  std::to_string(p.cutime) + " " + std::to_string(p.cstime) + " 20 0 " +
                  std::to_string(p.threads) + " 0 " + std::to_string(p.starttime) + " 12345678 " +
                  std::to_string(rss_pages);
  // Fields 25..52: limits, addresses, signals, exit code; their values do not matter here.
  for (int field = 25; field <= 52; ++field) s += " 0";
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
  // Writes any file under the root, e.g. WriteFile("/proc/7/stat", "garbage").
  void Write(const std::string& path, const std::string& content) {
    std::filesystem::path full = root_ + path;
    std::filesystem::create_directories(full.parent_path());
    WriteFile(full.string(), content);
  }

 private:
  std::string ProcDir(pid_t pid) const { return root_ + "/proc/" + std::to_string(pid); }
  static void WriteFile(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  std::string root_;
};

}  // namespace benchlab

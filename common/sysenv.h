// SysEnv: the one seam between benchlab and the machine. Every read of /proc and /sys, every
// affinity call and every signal the benchlab binary sends to a process goes through it, so
// tests can swap in a fake root of canned files (RootedSysEnv) or a fake that records calls.
// Not through it: the death signal a child asks the kernel for (PR_SET_PDEATHSIG), which no
// process sends, and cli/signals.cc's wake-up of a thread of benchlab's own process
// (pthread_kill). Implementations are thread-safe.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace benchlab {

class SysEnv {
 public:
  virtual ~SysEnv() = default;

  // Reads a whole file, e.g. "/proc/1234/stat". Paths are absolute as on a real host.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  // Names of the entries of a directory, without "." and "..", in no particular order.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;
  // Writes (truncating) a whole file, e.g. a cgroup's control file.
  virtual Status WriteFile(const std::string& path, const std::string& content) = 0;
  virtual Status MakeDir(const std::string& path) = 0;    // one level; AlreadyExists is an error
  virtual Status RemoveDir(const std::string& path) = 0;  // an empty directory (or a cgroup)
  // The real path behind `path` (the fake root prefixed in tests), for code that must hand a
  // path to the kernel or to a child process.
  virtual std::string RealPath(const std::string& path) = 0;

  // sysconf(_SC_CLK_TCK) and the page size, as the kernel reports them.
  virtual long ClockTicksPerSecond() = 0;
  virtual long PageSizeBytes() = 0;

  virtual Status SetAffinity(pid_t pid, const std::vector<int>& cpus) = 0;
  virtual Result<std::vector<int>> GetAffinity(pid_t pid) = 0;
  // Sends a signal; a negative pid names a process group, as kill(2) does.
  virtual Status Signal(pid_t pid, int signal) = 0;
};

// The real machine, or a directory that stands in for "/" (files only: affinity and signals
// still act on real processes).
class RootedSysEnv : public SysEnv {
 public:
  explicit RootedSysEnv(std::string root = "");

  Result<std::string> ReadFile(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  bool Exists(const std::string& path) override;
  Status WriteFile(const std::string& path, const std::string& content) override;
  Status MakeDir(const std::string& path) override;
  Status RemoveDir(const std::string& path) override;
  std::string RealPath(const std::string& path) override { return Resolve(path); }
  long ClockTicksPerSecond() override;
  long PageSizeBytes() override;
  Status SetAffinity(pid_t pid, const std::vector<int>& cpus) override;
  Result<std::vector<int>> GetAffinity(pid_t pid) override;
  Status Signal(pid_t pid, int signal) override;

 private:
  std::string Resolve(const std::string& path) const { return root_ + path; }
  std::string root_;
};

// The process-wide real SysEnv.
SysEnv& RealSysEnv();

}  // namespace benchlab

// WindowCgroup: a cgroup v2 per target process, created by the agent where the machine lets it
// (a writable cgroup2 mount). The target joins it before exec, so its whole tree, including
// children started later and ones that daemonise or are reparented, is accounted in cpu.stat to
// the microsecond; memory.peak/memory.current are read where the memory controller is enabled.
// Where no cgroup can be made, the agent falls back to walking /proc (ProcTreeSampler). All
// access goes through SysEnv. Owned by one thread at a time; the destructor kills whatever is
// left in the cgroup (cgroup.kill) and removes it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct CgroupCpu {
  uint64_t usage_usec = 0;
  uint64_t user_usec = 0;
  uint64_t system_usec = 0;
};

// From a cgroup v2 cpu.stat text.
Result<CgroupCpu> ParseCgroupCpuStat(std::string_view text);

// The cgroup2 mount point named in /proc/mounts text ("" when there is none).
std::string FindCgroup2Mount(std::string_view mounts);

// The cgroup v2 path of process `pid` ("0::<path>" in /proc/<pid>/cgroup); "" when it has none.
std::string OwnCgroupPath(std::string_view proc_cgroup);

// Where the agent makes its targets' cgroups, decided once at start (docs/agent.md, "Where the
// agent writes"). When the agent runs in a systemd service's cgroup that it may create groups in
// (Delegate=yes), that is its own cgroup: it moves itself (`self`, every thread) into
// <own>/agent first, because cgroup v2 gives controllers only to children of a group with no
// processes of its own, then enables cpu, memory and pids for the children, and returns <own>.
// Elsewhere (a shell, a scope, cgroup v1) it returns "": WindowCgroup::Create then uses
// <cgroup2 mount>/benchlab. The reasons it fell back go to `note`.
std::string PrepareCgroupParent(SysEnv& env, pid_t self, std::string* note = nullptr);

class WindowCgroup {
 public:
  // <parent>/<name>, or <cgroup2 mount>/benchlab/<name> when parent is "" (made if missing);
  // FailedPrecondition (with why) when the machine has no writable cgroup2 mount: the caller
  // then falls back to /proc.
  static Result<std::unique_ptr<WindowCgroup>> Create(SysEnv& env, const std::string& name,
                                                      const std::string& parent = "");
  ~WindowCgroup();
  WindowCgroup(const WindowCgroup&) = delete;
  WindowCgroup& operator=(const WindowCgroup&) = delete;

  const std::string& path() const { return path_; }
  // The real path of cgroup.procs, which the child writes "0" to before exec to join.
  std::string procs_path() const;
  Result<CgroupCpu> ReadCpu();
  std::optional<uint64_t> MemoryPeakKb();  // nullopt: the memory controller is not enabled
  std::optional<uint64_t> MemoryCurrentKb();

 private:
  WindowCgroup(SysEnv& env, std::string path) : env_(env), path_(std::move(path)) {}
  std::optional<uint64_t> ReadBytesAsKb(const std::string& file);
  SysEnv& env_;
  std::string path_;
};

}  // namespace benchlab

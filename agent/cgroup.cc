#include "agent/cgroup.h"

#include <charconv>
#include <sstream>
#include <thread>

namespace benchlab {
namespace {

bool ParseU64(std::string_view s, uint64_t& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<CgroupCpu> ParseCgroupCpuStat(std::string_view text) {
  CgroupCpu cpu;
  bool have_usage = false;
  std::istringstream in{std::string(text)};
  std::string key, value;
  while (in >> key >> value) {
    uint64_t n = 0;
    if (!ParseU64(value, n)) continue;
    if (key == "usage_usec") {
      cpu.usage_usec = n;
      have_usage = true;
    } else if (key == "user_usec") {
      cpu.user_usec = n;
    } else if (key == "system_usec") {
      cpu.system_usec = n;
    }
  }
  if (!have_usage) return Status::InvalidArgument("cpu.stat has no usage_usec");
  return cpu;
}

std::string FindCgroup2Mount(std::string_view mounts) {
  std::istringstream in{std::string(mounts)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, mount_point, type;
    if (fields >> device >> mount_point >> type && type == "cgroup2") return mount_point;
  }
  return "";
}

Result<std::unique_ptr<WindowCgroup>> WindowCgroup::Create(SysEnv& env, const std::string& name) {
  auto mounts = env.ReadFile("/proc/mounts");
  if (!mounts.ok()) return Status::FailedPrecondition("cannot read /proc/mounts");
  std::string mount = FindCgroup2Mount(*mounts);
  if (mount.empty()) return Status::FailedPrecondition("no cgroup2 mount on this machine");
  std::string parent = mount + "/benchlab";
  Status made = env.MakeDir(parent);
  if (!made.ok() && made.code() != StatusCode::kAlreadyExists) {
    return Status::FailedPrecondition("cannot create " + parent + ": " + made.message());
  }
  std::string path = parent + "/" + name;
  made = env.MakeDir(path);
  if (made.code() == StatusCode::kAlreadyExists && env.RemoveDir(path).ok()) {
    // Left by an agent killed before it could remove it; rmdir succeeds only on an empty group,
    // so a group with processes in it is never taken over.
    made = env.MakeDir(path);
  }
  if (!made.ok())
    return Status::FailedPrecondition("cannot create " + path + ": " + made.message());
  return std::unique_ptr<WindowCgroup>(new WindowCgroup(env, path));
}

WindowCgroup::~WindowCgroup() {
  // Nothing of the target may outlive its window: kill what is left, then remove the group once
  // the kernel has emptied it.
  (void)env_.WriteFile(path_ + "/cgroup.kill", "1");
  for (int i = 0; i < 100; ++i) {
    if (env_.RemoveDir(path_).ok()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string WindowCgroup::procs_path() const { return env_.RealPath(path_ + "/cgroup.procs"); }

Result<CgroupCpu> WindowCgroup::ReadCpu() {
  auto text = env_.ReadFile(path_ + "/cpu.stat");
  if (!text.ok()) return text.status();
  return ParseCgroupCpuStat(*text);
}

std::optional<uint64_t> WindowCgroup::ReadBytesAsKb(const std::string& file) {
  auto text = env_.ReadFile(path_ + "/" + file);
  if (!text.ok()) return std::nullopt;
  std::string value = *text;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  uint64_t bytes = 0;
  if (!ParseU64(value, bytes)) return std::nullopt;
  return bytes / 1024;
}

std::optional<uint64_t> WindowCgroup::MemoryPeakKb() { return ReadBytesAsKb("memory.peak"); }
std::optional<uint64_t> WindowCgroup::MemoryCurrentKb() { return ReadBytesAsKb("memory.current"); }

}  // namespace benchlab

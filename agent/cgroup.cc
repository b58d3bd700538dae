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

std::string OwnCgroupPath(std::string_view proc_cgroup) {
  std::istringstream in{std::string(proc_cgroup)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

std::string PrepareCgroupParent(SysEnv& env, pid_t self, std::string* note) {
  auto say = [&](std::string why) {
    if (note != nullptr) *note = std::move(why);
    return std::string();
  };
  auto mounts = env.ReadFile("/proc/mounts");
  std::string mount = mounts.ok() ? FindCgroup2Mount(*mounts) : "";
  if (mount.empty()) return say("no cgroup2 mount on this machine");
  auto mine = env.ReadFile("/proc/" + std::to_string(self) + "/cgroup");
  std::string path = mine.ok() ? OwnCgroupPath(*mine) : "";
  // Only a service's own cgroup can be delegated to it; a session's scope or the root is not the
  // agent's to divide.
  const std::string_view kService = ".service";
  if (path.size() <= kService.size() ||
      path.compare(path.size() - kService.size(), kService.size(), kService) != 0) {
    return say("the agent's cgroup " + (path.empty() ? "(none)" : path) +
               " is not a service's (Delegate=yes)");
  }
  std::string own = mount + path;
  Status made = env.MakeDir(own + "/agent");
  if (!made.ok() && made.code() != StatusCode::kAlreadyExists) {
    return say("cannot create " + own + "/agent (no Delegate=yes?): " + made.message());
  }
  Status moved = env.WriteFile(own + "/agent/cgroup.procs", std::to_string(self));
  if (!moved.ok()) return say("cannot move the agent into " + own + "/agent: " + moved.message());
  // Controllers the unit's group was given; each is enabled on its own, so that one the kernel
  // refuses does not take the others with it.
  auto offered = env.ReadFile(own + "/cgroup.controllers");
  std::istringstream words(offered.ok() ? *offered : "");
  std::string controller;
  std::string refused;
  while (words >> controller) {
    if (controller != "cpu" && controller != "memory" && controller != "pids") continue;
    Status enabled = env.WriteFile(own + "/cgroup.subtree_control", "+" + controller);
    if (!enabled.ok()) refused += (refused.empty() ? "" : ", ") + controller;
  }
  if (!refused.empty()) say("could not enable " + refused + " for the targets' cgroups");
  return own;
}

Result<std::unique_ptr<WindowCgroup>> WindowCgroup::Create(SysEnv& env, const std::string& name,
                                                           const std::string& given_parent) {
  std::string parent = given_parent;
  if (parent.empty()) {
    auto mounts = env.ReadFile("/proc/mounts");
    if (!mounts.ok()) return Status::FailedPrecondition("cannot read /proc/mounts");
    std::string mount = FindCgroup2Mount(*mounts);
    if (mount.empty()) return Status::FailedPrecondition("no cgroup2 mount on this machine");
    parent = mount + "/benchlab";
    Status made = env.MakeDir(parent);
    if (!made.ok() && made.code() != StatusCode::kAlreadyExists) {
      return Status::FailedPrecondition("cannot create " + parent + ": " + made.message());
    }
  }
  std::string path = parent + "/" + name;
  Status made = env.MakeDir(path);
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

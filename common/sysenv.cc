#include "common/sysenv.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace benchlab {

RootedSysEnv::RootedSysEnv(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

Result<std::string> RootedSysEnv::ReadFile(const std::string& path) {
  std::ifstream in(Resolve(path), std::ios::binary);
  if (!in) {
    int err = errno;
    if (err == ENOENT || err == ESRCH) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": " + std::strerror(err));
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  return out.str();
}

Result<std::vector<std::string>> RootedSysEnv::ListDir(const std::string& path) {
  DIR* dir = opendir(Resolve(path).c_str());
  if (dir == nullptr) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such directory");
    return Status::IoError(path + ": " + std::strerror(err));
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  closedir(dir);
  return names;
}

bool RootedSysEnv::Exists(const std::string& path) {
  struct stat st;
  return stat(Resolve(path).c_str(), &st) == 0;
}

Status RootedSysEnv::WriteFile(const std::string& path, const std::string& content) {
  int fd = open(Resolve(path).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path + ": " + std::strerror(errno));
  // One write: control files take a value per write call.
  ssize_t n = write(fd, content.data(), content.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(content.size())) {
    return Status::IoError(path + ": write: " + std::strerror(n < 0 ? err : EIO));
  }
  return Status::Ok();
}

Status RootedSysEnv::MakeDir(const std::string& path) {
  if (mkdir(Resolve(path).c_str(), 0755) != 0) {
    if (errno == EEXIST) return Status::AlreadyExists(path + ": exists");
    return Status::IoError(path + ": mkdir: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status RootedSysEnv::RemoveDir(const std::string& path) {
  if (rmdir(Resolve(path).c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such directory");
    return Status::IoError(path + ": rmdir: " + std::strerror(errno));
  }
  return Status::Ok();
}

long RootedSysEnv::ClockTicksPerSecond() { return sysconf(_SC_CLK_TCK); }
long RootedSysEnv::PageSizeBytes() { return sysconf(_SC_PAGESIZE); }

Status RootedSysEnv::SetAffinity(pid_t pid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return Status::InvalidArgument("cpu out of range");
    CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(pid, sizeof(set), &set) != 0) {
    return Status::IoError("sched_setaffinity(" + std::to_string(pid) +
                           "): " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<std::vector<int>> RootedSysEnv::GetAffinity(pid_t pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(pid, sizeof(set), &set) != 0) {
    return Status::IoError("sched_getaffinity(" + std::to_string(pid) +
                           "): " + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

Status RootedSysEnv::Signal(pid_t pid, int signal) {
  if (kill(pid, signal) != 0) {
    if (errno == ESRCH) return Status::NotFound("no process " + std::to_string(pid));
    return Status::IoError("kill(" + std::to_string(pid) + "): " + std::strerror(errno));
  }
  return Status::Ok();
}

SysEnv& RealSysEnv() {
  static RootedSysEnv env("");
  return env;
}

}  // namespace benchlab

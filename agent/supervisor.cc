#include "agent/supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/process/v2.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "common/parse.h"
#include "common/subprocess.h"

namespace benchlab {
namespace bp = boost::process::v2;

namespace {

// Pids of children that live TargetProcess objects (and RunArgv, common/subprocess.h) will
// reap; ReapOrphans must leave them. Spawn holds the lock from fork until the pid is registered,
// so a child that dies at once is never mistaken for an orphan.
std::mutex& OwnedMutex() { return OwnedChildrenMutex(); }
std::set<pid_t>& OwnedPids() { return OwnedChildren(); }
void Disown(pid_t pid) {
  std::lock_guard<std::mutex> lock(OwnedMutex());
  OwnedPids().erase(pid);
}

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> FindExecutable(const std::string& name, const std::string& cwd,
                                   const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' ? name : cwd + "/" + name;
    if (!IsExecutableFile(path)) {
      return Status::NotFound("target command \"" + name + "\" is not an executable file");
    }
    return path;
  }
  std::string search;
  if (auto it = env.find("PATH"); it != env.end()) {
    search = it->second;
  } else if (const char* agent_path = getenv("PATH")) {
    search = agent_path;
  }
  size_t start = 0;
  while (start <= search.size()) {
    size_t colon = std::min(search.find(':', start), search.size());
    std::string dir = search.substr(start, colon - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = colon + 1;
  }
  return Status::NotFound("target command \"" + name + "\" not found in PATH");
}

namespace {

// argv[0] without a '/' is looked up in the target's own PATH, or the agent's when the target
// is given none (execvp's rule); with a '/', a relative path is relative to the target's cwd.
Result<std::string> ResolveExecutable(const SpawnSpec& spec) {
  return FindExecutable(spec.argv[0], spec.cwd, spec.env);
}

// Runs in the child between fork and exec, so it only makes system calls (no allocation: the
// agent has other threads, whose locks the child inherits held).
struct TargetSetup {
  const char* cwd;
  const cpu_set_t* cpus;               // null: inherit
  pid_t die_with = 0;                  // the parent whose end kills the child; 0: none
  int cgroup_fd = -1;                  // an open cgroup.procs to join; -1: none
  uid_t uid = static_cast<uid_t>(-1);  // -1: keep the agent's
  gid_t gid = static_cast<gid_t>(-1);
  bool keep_ambient = false;

  template <typename Launcher>
  bp::error_code on_exec_setup(Launcher&, const bp::filesystem::path&, const char* const*&) {
    // Its own group, so Stop() can signal the target and everything it starts at once.
    if (setpgid(0, 0) != 0) return {errno, bp::system_category()};
    // Joined before exec, so every process the target ever starts is in the window's cgroup.
    if (cgroup_fd >= 0 && write(cgroup_fd, "0", 1) != 1) return {errno, bp::system_category()};
    // Another user: the group first (setgid needs root), and before PR_SET_PDEATHSIG, which a
    // change of credentials clears.
    if (gid != static_cast<gid_t>(-1) && (setgroups(1, &gid) != 0 || setgid(gid) != 0)) {
      return {errno, bp::system_category()};
    }
    if (uid != static_cast<uid_t>(-1) && setuid(uid) != 0) return {errno, bp::system_category()};
    if (die_with != 0) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return {errno, bp::system_category()};
      // The parent may have ended before prctl took effect.
      if (getppid() != die_with) return {ESRCH, bp::system_category()};
    }
    // A kernel without ambient capabilities (before 4.3) has none to clear: EINVAL.
    if (!keep_ambient && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
        errno != EINVAL) {
      return {errno, bp::system_category()};
    }
    if (chdir(cwd) != 0) return {errno, bp::system_category()};
    if (cpus != nullptr && sched_setaffinity(0, sizeof(*cpus), cpus) != 0) {
      return {errno, bp::system_category()};
    }
    // The agent's blocked or ignored signals (SIGPIPE for its sockets) would otherwise survive
    // exec and change how the target behaves.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    }
    return {};
  }
};

// Starts the target and gives up Boost's handle on it: from then on the pid is the caller's to
// wait for (Boost's handle would kill it when destroyed). `forked` is the child's pid even when
// exec failed, so the caller can reap it.
//
// GCC 12 flags Boost's own reset of its fd whitelist (a vector assigned {0, 1, 2}) once it is
// inlined here; that code is correct and the warnings are known false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wrestrict"
pid_t Launch(const std::string& exe, const char** argv, const char* const* envp, int in_fd,
             int log_fd, TargetSetup setup, bp::error_code& ec, pid_t* forked) {
  boost::asio::io_context ctx;
  bp::posix::default_launcher launcher;
  launcher.env = envp;  // exactly the spec's environment: nothing inherited from the agent
  try {
    // A const char** argv is passed through as is, so the target sees its own argv[0].
    auto proc = launcher(ctx.get_executor(), ec, bp::filesystem::path(exe), argv,
                         bp::process_stdio{in_fd, log_fd, log_fd}, setup);
    *forked = launcher.pid;
    pid_t pid = ec ? -1 : proc.id();
    proc.detach();
    return pid;
  } catch (...) {
    *forked = launcher.pid;
    throw;
  }
}
#pragma GCC diagnostic pop

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

ExitInfo FromWaitStatus(int status) {
  ExitInfo info;
  info.exited = true;
  if (WIFEXITED(status)) info.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) info.signal = WTERMSIG(status);
  return info;
}

// Signal 0 probes without sending (kill(2)): only "no such process group" means it is gone; a
// group the agent may not signal (EPERM) still exists.
bool GroupAlive(SysEnv& env, pid_t pgid) {
  return env.Signal(-pgid, 0).code() != StatusCode::kNotFound;
}

}  // namespace

std::string ExitInfo::Describe() const {
  if (!exited) return "still running";
  if (signal != 0) {
    const char* abbrev = sigabbrev_np(signal);
    std::string name = abbrev != nullptr ? std::string("SIG") + abbrev : strsignal(signal);
    return "killed by signal " + std::to_string(signal) + " (" + name + ")";
  }
  if (exit_code >= 0) return "exit status " + std::to_string(exit_code);
  return "exited with an unknown status";
}

struct TargetProcess::Impl {
  Impl(SysEnv& e, pid_t p, std::string log) : env(e), pid(p), log_path(std::move(log)) {}
  SysEnv& env;
  pid_t pid;  // also the process group id
  std::string log_path;
  bool reaped = false;
  ExitInfo exit;

  // Non-blocking (or blocking) reap of the leader; true once it has been reaped.
  bool Reap(bool block) {
    if (reaped) return true;
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    reaped = true;
    // ECHILD: something else reaped it (it is gone either way); the status is lost.
    exit = r == pid ? FromWaitStatus(status) : ExitInfo{true, -1, 0};
    Disown(pid);
    return true;
  }
};

TargetProcess::TargetProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TargetProcess::~TargetProcess() {
  if (!impl_->reaped) Stop(std::chrono::milliseconds(1000));
}

pid_t TargetProcess::pid() const { return impl_->pid; }

Result<std::unique_ptr<TargetProcess>> TargetProcess::Spawn(SysEnv& env, const SpawnSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::InvalidArgument("target command is empty");
  }
  struct stat st;
  if (stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::NotFound("target working directory \"" + spec.cwd + "\" does not exist");
  }
  Result<std::string> exe = ResolveExecutable(spec);
  if (!exe.ok()) return exe.status();

  cpu_set_t cpu_set;
  CPU_ZERO(&cpu_set);
  std::vector<int> want_cpus = spec.cpus;
  std::sort(want_cpus.begin(), want_cpus.end());
  want_cpus.erase(std::unique(want_cpus.begin(), want_cpus.end()), want_cpus.end());
  for (int cpu : want_cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return Status::InvalidArgument("CPU " + std::to_string(cpu) + " is out of range");
    }
    CPU_SET(cpu, &cpu_set);
  }

  // 0600: a target's log may hold what its environment holds; it is the agent's to read.
  Fd log(open(spec.log_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (log.get() < 0) return Status::IoError(ErrnoText("target log " + spec.log_path));
  const std::string in_path = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path;
  Fd stdin_fd(open(in_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (stdin_fd.get() < 0) return Status::IoError(ErrnoText("target stdin " + in_path));
  Fd cgroup(spec.cgroup_procs.empty() ? -1 : open(spec.cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC));
  if (!spec.cgroup_procs.empty() && cgroup.get() < 0) {
    return Status::IoError(ErrnoText("cgroup " + spec.cgroup_procs));
  }

  std::vector<std::string> env_strings;
  for (const auto& [key, value] : spec.env) env_strings.push_back(key + "=" + value);
  std::vector<const char*> envp;
  for (const std::string& s : env_strings) envp.push_back(s.c_str());
  envp.push_back(nullptr);
  std::vector<const char*> argv;
  for (const std::string& s : spec.argv) argv.push_back(s.c_str());
  argv.push_back(nullptr);

  const std::string what = "starting target \"" + spec.argv[0] + "\"";
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> lock(OwnedMutex());
    pid_t forked = -1;
    try {
      bp::error_code ec;
      pid = Launch(*exe, argv.data(), envp.data(), stdin_fd.get(), log.get(),
                   TargetSetup{spec.cwd.c_str(), want_cpus.empty() ? nullptr : &cpu_set,
                               spec.die_with_parent ? getpid() : 0, cgroup.get(), spec.uid,
                               spec.gid, spec.keep_ambient_capabilities},
                   ec, &forked);
      if (ec) {
        // The child got as far as fork; it wrote why it failed and exited, and is ours to reap.
        if (forked > 0) waitpid(forked, nullptr, 0);
        return Status::IoError(what + ": " + ec.message());
      }
    } catch (const std::exception& e) {
      if (forked > 0) {
        (void)env.Signal(forked, SIGKILL);
        waitpid(forked, nullptr, 0);
      }
      return Status::Internal(what + ": " + e.what());
    }
    OwnedPids().insert(pid);
  }
  auto target = std::unique_ptr<TargetProcess>(
      new TargetProcess(std::make_unique<Impl>(env, pid, spec.log_path)));

  if (!want_cpus.empty()) {
    Result<std::vector<int>> got = env.GetAffinity(pid);
    Status bad;
    if (!got.ok()) {
      bad = got.status();
    } else if (*got != want_cpus) {
      bad = Status::FailedPrecondition("target " + std::to_string(pid) +
                                       " should be pinned to CPUs " + FormatCpuList(want_cpus) +
                                       " but may run on " + FormatCpuList(*got));
    }
    if (!bad.ok()) {
      target->Stop(std::chrono::milliseconds(0));
      return bad;
    }
  }
  return target;
}

bool TargetProcess::Exited(ExitInfo* info) {
  if (!impl_->Reap(false)) return false;
  if (info != nullptr) *info = impl_->exit;
  return true;
}

bool TargetProcess::WaitExit(std::chrono::steady_clock::time_point deadline, ExitInfo* info,
                             const CancelFlag* cancel) {
  using std::chrono::milliseconds;
  // The pid is ours until it is reaped (Reap is the only waitpid on it), so the pidfd cannot
  // name a recycled pid. A pidfd (close-on-exec) turns readable when the process exits.
  Fd pidfd(impl_->reaped ? -1 : static_cast<int>(syscall(SYS_pidfd_open, impl_->pid, 0)));
  const int cancel_fd = cancel != nullptr ? cancel->fd() : -1;
  while (!Exited(info)) {
    if (cancel != nullptr && cancel->cancelled()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    // Rounded up, so the last wait does not end just short of the deadline and spin.
    const auto left = std::chrono::ceil<milliseconds>(deadline - now);
    if (pidfd.get() >= 0 && (cancel == nullptr || cancel_fd >= 0)) {
      pollfd p[2] = {{pidfd.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
      const int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 60'000));
      if (poll(p, cancel_fd >= 0 ? 2 : 1, wait_ms) < 0 && errno != EINTR) pidfd.reset();
    } else {
      std::this_thread::sleep_for(std::min<milliseconds>(left, milliseconds(50)));
    }
  }
  return true;
}

ExitInfo TargetProcess::Stop(std::chrono::milliseconds grace) {
  Impl& t = *impl_;
  if (!t.Reap(false)) {
    // Errors here mean the group is already gone; the reap below tells how it ended.
    (void)t.env.Signal(-t.pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (!t.Reap(false) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!t.reaped) {
      (void)t.env.Signal(-t.pid, SIGKILL);
      t.Reap(true);
    }
  }
  // The leader is gone, but members of its group may not be (one that ignored SIGTERM, or a
  // whole group left behind by a leader that exited by itself): they must not outlive the window.
  if (GroupAlive(t.env, t.pid)) (void)t.env.Signal(-t.pid, SIGKILL);
  return t.exit;
}

std::vector<std::string> TargetProcess::LastLogLines(size_t n) const {
  std::vector<std::string> lines;
  if (n == 0) return lines;
  Fd fd(open(impl_->log_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return lines;
  off_t end = lseek(fd.get(), 0, SEEK_END);
  if (end <= 0) return lines;
  // Read backwards in chunks until n+1 newlines are in hand, so a huge log costs little.
  std::string tail;
  off_t pos = end;
  constexpr off_t kChunk = 64 * 1024;
  while (pos > 0 && static_cast<size_t>(std::count(tail.begin(), tail.end(), '\n')) <= n) {
    off_t len = std::min(kChunk, pos);
    pos -= len;
    std::string chunk(static_cast<size_t>(len), '\0');
    ssize_t got = pread(fd.get(), chunk.data(), chunk.size(), pos);
    if (got < 0) return lines;
    chunk.resize(static_cast<size_t>(got));
    tail.insert(0, chunk);
  }
  if (!tail.empty() && tail.back() == '\n') tail.pop_back();
  size_t stop = tail.size();
  while (lines.size() < n) {
    size_t nl = stop == 0 ? std::string::npos : tail.rfind('\n', stop - 1);
    size_t begin = nl == std::string::npos ? 0 : nl + 1;
    lines.push_back(tail.substr(begin, stop - begin));
    if (nl == std::string::npos) break;
    stop = nl;
  }
  // Every line returned is whole: either the file was read from its start, or more than n
  // newlines were read.
  std::reverse(lines.begin(), lines.end());
  return lines;
}

Status BecomeSubreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return Status::Internal(ErrnoText("prctl(PR_SET_CHILD_SUBREAPER)"));
  }
  return Status::Ok();
}

void ReapOrphans() {
  std::lock_guard<std::mutex> lock(OwnedMutex());
  for (;;) {
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    // Peek first (WNOWAIT): the next zombie may belong to a TargetProcess, whose exit status is
    // its owner's to collect. waitid offers no way past it, so stop there; the owner reaps soon.
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD: no children at all
    }
    pid_t pid = info.si_pid;
    if (pid == 0) return;  // children exist, none has exited
    if (OwnedPids().count(pid) != 0) return;
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace benchlab

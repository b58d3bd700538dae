#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace benchlab {
namespace {

// Closes on scope exit.
class RunFd {
 public:
  explicit RunFd(int fd = -1) : fd_(fd) {}
  ~RunFd() { reset(); }
  RunFd(const RunFd&) = delete;
  RunFd& operator=(const RunFd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

bool IsRunnableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

// Runs in the child between fork and execve: system calls only, no allocation (other threads'
// locks are inherited held).
[[noreturn]] void ExecChild(const char* exe, char* const* argv, char* const* envp, int in_fd,
                            int out_fd, const char* cwd, int error_fd) {
  setpgid(0, 0);
  // Handlers first, then the mask: an inherited handler must not run here once unblocked.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int err = 0;
  // dup2 onto the same number keeps close-on-exec: cleared by hand (an agent started with
  // 0, 1 or 2 closed gets its pipes at those numbers).
  auto to = [](int fd, int target) {
    return fd == target ? fcntl(fd, F_SETFD, 0) : dup2(fd, target);
  };
  if (to(in_fd, 0) < 0 || to(out_fd, 1) < 0 || to(out_fd, 2) < 0) err = errno;
  if (err == 0 && cwd != nullptr && chdir(cwd) != 0) err = errno;
  if (err == 0) {
    execve(exe, argv, envp);
    err = errno;
  }
  // The parent reads why from the close-on-exec pipe.
  ssize_t ignored = write(error_fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

pid_t ReapChild(pid_t pid, bool block, int* status) {
  pid_t r;
  do {
    r = waitpid(pid, status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

std::mutex& OwnedChildrenMutex() {
  static std::mutex m;
  return m;
}

std::set<pid_t>& OwnedChildren() {
  static std::set<pid_t> pids;
  return pids;
}

std::string RunOutcome::Describe(std::chrono::milliseconds limit) const {
  if (timed_out) {
    return "still running after " + std::to_string(limit.count()) + " ms (its process group " +
           "was killed)";
  }
  if (signal != 0) {
    const char* abbrev = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) +
           (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  if (exit_code >= 0) return "exit status " + std::to_string(exit_code);
  return "ended with an unknown status";
}

Result<std::string> FindProgram(const std::string& name, const std::string& path) {
  if (name.empty()) return Status::InvalidArgument("empty program name");
  if (name.find('/') != std::string::npos) {
    if (IsRunnableFile(name)) return name;
    return Status::NotFound("program \"" + name + "\" is not an executable file");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = std::min(path.find(':', start), path.size());
    std::string dir = path.substr(start, colon - start);
    start = colon + 1;
    // Only absolute entries: the child changes directory before exec, so a relative one would
    // name a different file there (a program of the same name in the checkout).
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate = dir + "/" + name;
    if (IsRunnableFile(candidate)) return candidate;
  }
  return Status::NotFound("program \"" + name + "\" not found in PATH");
}

Result<RunOutcome> RunArgv(const RunSpec& spec) {
  using Clock = std::chrono::steady_clock;
  if (spec.argv.empty()) return Status::InvalidArgument("empty command");
  std::string search;
  if (auto it = spec.env.find("PATH"); it != spec.env.end()) {
    search = it->second;
  } else if (const char* own = std::getenv("PATH")) {
    search = own;
  }
  std::string exe_name = spec.argv[0];
  if (exe_name.find('/') != std::string::npos && exe_name[0] != '/' && !spec.cwd.empty()) {
    exe_name = spec.cwd + "/" + exe_name;
  }
  BENCHLAB_ASSIGN_OR_RETURN(const std::string exe, FindProgram(exe_name, search));
  if (!spec.cwd.empty()) {
    struct stat st;
    if (stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::NotFound("working directory \"" + spec.cwd + "\" does not exist");
    }
  }

  RunFd in(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return Status::IoError(ErrnoMessage("/dev/null", errno));
  RunFd out_read, out_write;
  if (spec.output_path.empty()) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(ErrnoMessage("pipe", errno));
    out_read.reset(fds[0]);
    out_write.reset(fds[1]);
  } else {
    out_write.reset(open(spec.output_path.c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (out_write.get() < 0) return Status::IoError(ErrnoMessage(spec.output_path, errno));
  }
  int error_fds[2];
  if (pipe2(error_fds, O_CLOEXEC) != 0) return Status::IoError(ErrnoMessage("pipe", errno));
  RunFd error_read(error_fds[0]), error_write(error_fds[1]);

  std::vector<std::string> env_strings;
  for (const auto& [key, value] : spec.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = spec.argv;
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  const std::string what = "running \"" + spec.argv[0] + "\"";
  const auto start = Clock::now();
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(OwnedChildrenMutex());
    pid = fork();
    if (pid < 0) return Status::IoError(ErrnoMessage(what, errno));
    if (pid == 0) {
      ExecChild(exe.c_str(), argv.data(), envp.data(), in.get(), out_write.get(), cwd,
                error_write.get());
    }
    OwnedChildren().insert(pid);
  }
  setpgid(pid, pid);  // also in the child: whichever runs first, the group exists before a kill
  out_write.reset();
  error_write.reset();
  auto disown = [pid] {
    std::lock_guard<std::mutex> lock(OwnedChildrenMutex());
    OwnedChildren().erase(pid);
  };

  int exec_errno = 0;
  if (read(error_read.get(), &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
    ReapChild(pid, true, nullptr);
    disown();
    return Status::IoError(ErrnoMessage(what, exec_errno));
  }

  RunOutcome outcome;
  RunFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  const auto deadline = start + spec.time_limit;
  int status = 0;
  bool reaped = false;
  char buffer[16 * 1024];
  auto take = [&](size_t n) {
    size_t room = spec.max_output - std::min(spec.max_output, outcome.output.size());
    outcome.output.append(buffer, std::min(n, room));
  };
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) {
      kill(-pid, SIGKILL);
      reaped = ReapChild(pid, true, &status) == pid;
      outcome.timed_out = true;
      break;
    }
    // Seen exited but not reaped (WNOWAIT): while it is a zombie its process group id cannot
    // be reused, so what it left running in its group is killed before the reap, never after.
    siginfo_t info{};
    const int seen = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (seen < 0 && errno != EINTR) break;  // ECHILD: something else reaped it; status lost
    if (seen == 0 && info.si_pid == pid) {
      kill(-pid, SIGKILL);
      reaped = ReapChild(pid, true, &status) == pid;
      break;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd p[2];
    nfds_t n = 0;
    if (out_read.get() >= 0) p[n++] = {out_read.get(), POLLIN, 0};
    if (pidfd.get() >= 0) p[n++] = {pidfd.get(), POLLIN, 0};
    const int wait_ms = pidfd.get() >= 0 ? static_cast<int>(std::min<int64_t>(left, 60'000))
                                         : static_cast<int>(std::min<int64_t>(left, 20));
    if (poll(p, n, wait_ms) < 0 && errno != EINTR) pidfd.reset();
    if (out_read.get() >= 0 && n > 0 && (p[0].revents & (POLLIN | POLLHUP)) != 0) {
      ssize_t got = read(out_read.get(), buffer, sizeof(buffer));
      if (got > 0) {
        take(static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        out_read.reset();  // every writer closed it
      }
    }
  }
  disown();
  if (out_read.get() >= 0) {
    // The group is gone, so the pipe ends soon; a process that left the group could hold it
    // open, so the rest is read for one second at most.
    const auto drain_end = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < drain_end) {
      pollfd p{out_read.get(), POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t got = read(out_read.get(), buffer, sizeof(buffer));
      if (got > 0) {
        take(static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        break;
      }
    }
  }
  if (reaped && !outcome.timed_out) {
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace benchlab

#include "agent/window_profiler.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/private_dir.h"
#include "agent/supervisor.h"

namespace benchlab {

namespace fs = std::filesystem;

namespace {

// What the agent passes to perf: only PATH (docs/security.md, "No inherited environment").
std::map<std::string, std::string> PerfEnvironment() {
  const char* path = std::getenv("PATH");
  return {{"PATH", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"}};
}

// perf (or the shell that runs perf script) in the scratch directory, where the agent's own
// threads run, its output in `log`.
SpawnSpec PerfSpawn(std::vector<std::string> argv, const ProfileSpec& spec,
                    const std::string& log) {
  SpawnSpec s;
  s.argv = std::move(argv);
  s.cwd = spec.scratch_dir;
  s.env = PerfEnvironment();
  s.cpus = spec.cpus;
  s.log_path = spec.scratch_dir + "/" + log;
  // An agent that is not root samples with its unit's CAP_PERFMON, which perf needs kept.
  s.keep_ambient_capabilities = true;
  return s;
}

std::string LastLines(const TargetProcess& process) {
  std::string out;
  for (const auto& line : process.LastLogLines(4)) {
    if (line.empty() || line.rfind("[ perf record:", 0) == 0) continue;
    out += (out.empty() ? "" : " / ") + line;
  }
  return out.empty() ? "no message" : out;
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string SamplingEvent(SysEnv& env) {
  // A hybrid CPU's PMUs are cpu_core and cpu_atom, where `cycles` names two events; its
  // cpu-clock is one.
  return env.Exists("/sys/bus/event_source/devices/cpu") ? "cycles" : "cpu-clock";
}

WindowProfiler::WindowProfiler(SysEnv& env, ProfileSpec spec, std::unique_ptr<TargetProcess> record,
                               int ack_fd)
    : env_(env), spec_(std::move(spec)), record_(std::move(record)), ack_fd_(ack_fd) {}

WindowProfiler::~WindowProfiler() {
  if (record_) record_->Stop(std::chrono::milliseconds(500));
  if (ctl_fd_ >= 0) close(ctl_fd_);
  if (ack_fd_ >= 0) close(ack_fd_);
  std::error_code ignored;
  fs::remove_all(spec_.scratch_dir, ignored);
}

Result<std::unique_ptr<WindowProfiler>> WindowProfiler::Start(SysEnv& env, const ProfileSpec& spec,
                                                              std::chrono::milliseconds timeout) {
  if (spec.pids.empty()) return Status::InvalidArgument("profile: no process to sample");
  if (spec.frequency_hz < 1 || spec.frequency_hz > kMaxProfileHz) {
    return Status::InvalidArgument("profile: frequency " + std::to_string(spec.frequency_hz) +
                                   " Hz is outside 1 to " + std::to_string(kMaxProfileHz));
  }
  BENCHLAB_RETURN_IF_ERROR(MakePrivateDir(spec.scratch_dir));
  const std::string ctl = spec.scratch_dir + "/control";
  const std::string ack = spec.scratch_dir + "/ack";
  if (mkfifo(ctl.c_str(), 0600) != 0 || mkfifo(ack.c_str(), 0600) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove_all(spec.scratch_dir, ignored);
    return Status::IoError("profile: cannot make perf's control FIFOs in " + spec.scratch_dir +
                           ": " + why);
  }
  // Open for reading now: a FIFO read end without a writer yet simply has nothing to read.
  const int ack_fd = open(ack.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (ack_fd < 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove_all(spec.scratch_dir, ignored);
    return Status::IoError("profile: " + ack + ": " + why);
  }
  std::string pids;
  for (pid_t pid : spec.pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
  ProfileSpec with_event = spec;
  if (with_event.event.empty()) with_event.event = SamplingEvent(env);
  // The sampling event (SamplingEvent); -g: frame-pointer call chains.
  // The first event, a dummy that samples nothing, carries perf's tracking of mappings and stays
  // on from the start: code mapped between now and the window (a JIT's code, a library loaded
  // during warm-up) keeps its object file and perf-map names. perf's own -D would hold the
  // tracking back with the sampling (perf 6.1: 9% of a Node target's frames unnamed).
  const SpawnSpec s = PerfSpawn({spec.perf, "record", "-e", "dummy", "-e", with_event.event, "-F",
                                 std::to_string(spec.frequency_hz), "-g", "-p", pids, "--control",
                                 "fifo:" + ctl + "," + ack, "-o", spec.scratch_dir + "/perf.data"},
                                spec, "record.log");
  auto record = TargetProcess::Spawn(env, s);
  if (!record.ok()) {
    close(ack_fd);
    std::error_code ignored;
    fs::remove_all(spec.scratch_dir, ignored);
    return Status::Unavailable("profile: perf could not start (" + record.status().message() +
                               "); install linux-perf (docs/profiles.md)");
  }
  std::unique_ptr<WindowProfiler> profiler(
      new WindowProfiler(env, std::move(with_event), std::move(*record), ack_fd));
  // Sampling off until Enable: the few milliseconds from perf's start to this acknowledgement
  // are of a target that is ready and not yet loaded.
  BENCHLAB_RETURN_IF_ERROR(profiler->Command("disable " + profiler->spec_.event,
                                             std::chrono::steady_clock::now() + timeout));
  return profiler;
}

Status WindowProfiler::PerfExited() {
  ExitInfo exit;
  if (!record_ || !record_->Exited(&exit)) return Status::Ok();
  const std::string why = LastLines(*record_);
  record_.reset();
  return Status::FailedPrecondition("profile: perf record " + exit.Describe() + ": " + why);
}

Status WindowProfiler::Command(const std::string& command,
                               std::chrono::steady_clock::time_point deadline) {
  const std::string ctl = spec_.scratch_dir + "/control";
  // perf opens its control FIFO once its events are set up; until then a non-blocking open for
  // writing fails with ENXIO.
  while (ctl_fd_ < 0) {
    ctl_fd_ = open(ctl.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (ctl_fd_ >= 0) break;
    if (errno != ENXIO) return Status::IoError("profile: " + ctl + ": " + std::strerror(errno));
    BENCHLAB_RETURN_IF_ERROR(PerfExited());
    if (!record_) return Status::FailedPrecondition("profile: perf is not running");
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded("profile: perf did not open its control FIFO in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const std::string line = command + "\n";
  if (write(ctl_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    BENCHLAB_RETURN_IF_ERROR(PerfExited());
    return Status::IoError("profile: cannot write to perf's control FIFO: " +
                           std::string(std::strerror(errno)));
  }
  std::string answer;
  while (answer.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      BENCHLAB_RETURN_IF_ERROR(PerfExited());
      return Status::DeadlineExceeded("profile: perf did not acknowledge \"" + command + "\"");
    }
    pollfd p{ack_fd_, POLLIN, 0};
    // Short polls: perf may exit (the kernel refused its events) without ever writing.
    if (poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 20))) > 0) {
      char buffer[64];
      const ssize_t n = read(ack_fd_, buffer, sizeof buffer);
      if (n > 0) answer.append(buffer, static_cast<size_t>(n));
      if (n == 0) BENCHLAB_RETURN_IF_ERROR(PerfExited());
    } else {
      BENCHLAB_RETURN_IF_ERROR(PerfExited());
    }
    if (!record_) return Status::FailedPrecondition("profile: perf is not running");
  }
  if (answer.rfind("ack", 0) != 0) {
    return Status::Internal("profile: perf answered \"" + answer.substr(0, 40) + "\" to \"" +
                            command + "\"");
  }
  return Status::Ok();
}

Status WindowProfiler::Enable(std::chrono::milliseconds timeout) {
  BENCHLAB_RETURN_IF_ERROR(
      Command("enable " + spec_.event, std::chrono::steady_clock::now() + timeout));
  enabled_ = true;
  return Status::Ok();
}

Result<FoldedProfile> WindowProfiler::Finish(std::chrono::milliseconds timeout) {
  if (!record_) return Status::FailedPrecondition("profile: perf is not running");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (enabled_) {
    BENCHLAB_RETURN_IF_ERROR(Command("disable " + spec_.event, deadline));
    enabled_ = false;
  }
  ExitInfo exit;
  const bool ended_early = record_->Exited(&exit);
  if (!ended_early) {
    // perf writes its file and exits on SIGTERM (Stop sends it to the group, then SIGKILL).
    exit = record_->Stop(std::chrono::duration_cast<std::chrono::milliseconds>(timeout / 2));
    if (exit.signal == SIGKILL) {
      record_.reset();
      return Status::DeadlineExceeded("profile: perf record did not stop within " +
                                      std::to_string(timeout.count() / 2) + " ms");
    }
  } else if (!(exit.exited && exit.exit_code == 0)) {
    // It ends by itself only when every process it sampled ended, or on an error.
    const std::string why = LastLines(*record_);
    record_.reset();
    return Status::FailedPrecondition("profile: perf record " + exit.Describe() + ": " + why);
  }
  record_.reset();

  // perf script writes to stdout and warnings to stderr: kept apart through the shell, with
  // every path a positional parameter (no quoting).
  const SpawnSpec s = PerfSpawn(
      {"/bin/sh", "-c", "exec \"$0\" script -i \"$1\" -F comm,period,ip,sym,dso > \"$2\" 2> \"$3\"",
       spec_.perf, spec_.scratch_dir + "/perf.data", spec_.scratch_dir + "/script.txt",
       spec_.scratch_dir + "/script.log"},
      spec_, "shell.log");
  auto script = TargetProcess::Spawn(env_, s);
  if (!script.ok())
    return Status::Unavailable("profile: perf script: " + script.status().message());
  if (!(*script)->WaitExit(deadline, &exit)) {
    (*script)->Stop(std::chrono::milliseconds(200));
    return Status::DeadlineExceeded("profile: perf script did not end within the window's time");
  }
  if (!(exit.exited && exit.exit_code == 0)) {
    auto log = ReadWhole(spec_.scratch_dir + "/script.log");
    return Status::FailedPrecondition("profile: perf script " + exit.Describe() + ": " +
                                      (log.ok() ? log->substr(0, 300) : "no message"));
  }
  auto text = ReadWhole(spec_.scratch_dir + "/script.txt");
  if (!text.ok()) return text.status();
  return FoldPerfScript(*text);
}

}  // namespace benchlab

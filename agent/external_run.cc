#include "agent/external_run.h"

#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/private_dir.h"
#include "agent/supervisor.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// SIGTERM to a cancelled tool's group, then SIGKILL after this: wrk and h2load die at SIGTERM.
constexpr std::chrono::milliseconds kCancelGrace{50};

double Seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

std::string Tail(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : " | ") + line;
  return out.empty() ? "no output" : out;
}

// One run of the tool to its end. Fills `run` (argv, output, CPU, wall time).
Status RunOnce(SysEnv& env, const ExternalLoadSpec& spec, const std::vector<int>& cpus,
               const std::string& log_path, const CancelFlag* cancel, ExternalRun& run) {
  auto command = BuildExternalCommand(spec);
  if (!command.ok()) return command.status();
  if (!command->script.empty()) {
    if (Status st = WritePrivateFile(spec.script_path, command->script); !st.ok()) return st;
  }
  if (!command->body_file.empty()) {
    if (Status st = WritePrivateFile(spec.body_path, command->body_file); !st.ok()) return st;
  }
  SpawnSpec s;
  s.argv = command->argv;
  s.cwd = fs::path(log_path).parent_path().string();
  // Only PATH: the agent's environment (and any secret in it) stays with the agent.
  const char* path = std::getenv("PATH");
  s.env = {{"PATH", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"}};
  s.cpus = cpus;
  s.log_path = log_path;

  // The tool's CPU time: its rusage arrives in RUSAGE_CHILDREN when it is reaped. A load agent
  // has no other child at this point (conformance runs in the agent itself).
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  const auto start = std::chrono::steady_clock::now();
  auto process = TargetProcess::Spawn(env, s);
  if (!process.ok()) {
    return Status::FailedPrecondition("load tool " + spec.tool + " could not start (" +
                                      process.status().message() + "); is it installed?");
  }
  const auto deadline = start +
                        std::chrono::milliseconds(static_cast<int64_t>(spec.duration_s * 1000)) +
                        std::chrono::seconds(10);
  ExitInfo exit;
  // Asleep until the tool ends or the run is cancelled: this thread must not wake up on the
  // load CPUs while they are being measured.
  if (!(*process)->WaitExit(deadline, &exit, cancel)) {
    if (cancel != nullptr && cancel->cancelled()) {
      (*process)->Stop(kCancelGrace);
      return Status::Cancelled("load tool " + spec.tool + " stopped: the run was cancelled");
    }
    (*process)->Stop(std::chrono::milliseconds(500));
    return Status::DeadlineExceeded("load tool " + spec.tool + " was still running " +
                                    std::to_string(spec.duration_s + 10) + " s after it started");
  }
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_CHILDREN, &after);
  run.cpu_user_s = Seconds(after.ru_utime) - Seconds(before.ru_utime);
  run.cpu_sys_s = Seconds(after.ru_stime) - Seconds(before.ru_stime);
  run.argv = command->argv;
  std::ifstream in(log_path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  run.output = text.str();
  if (exit.exit_code != 0) {
    return Status::FailedPrecondition("load tool " + spec.tool + " ended with " + exit.Describe() +
                                      ": " + Tail((*process)->LastLogLines(3)));
  }
  return Status::Ok();
}

}  // namespace

Result<ExternalRun> RunExternalLoad(SysEnv& env, ExternalLoadSpec spec,
                                    const std::vector<int>& cpus, std::chrono::milliseconds warmup,
                                    const std::string& scratch_dir,
                                    const std::function<void(bool measuring)>& on_measure,
                                    const CancelFlag* cancel) {
  BENCHLAB_RETURN_IF_ERROR(
      EnsurePrivateDir("run_root", fs::path(scratch_dir).parent_path().string()));
  BENCHLAB_RETURN_IF_ERROR(MakePrivateDir(scratch_dir));
  spec.script_path = (fs::path(scratch_dir) / (spec.tool + ".lua")).string();
  spec.body_path = (fs::path(scratch_dir) / (spec.tool + ".body")).string();

  if (warmup.count() > 0) {
    ExternalLoadSpec warm = spec;
    warm.duration_s =
        std::max(std::chrono::duration<double>(warmup).count(), MinimumRunSeconds(spec.tool));
    ExternalRun ignored;
    Status st =
        RunOnce(env, warm, cpus, (fs::path(scratch_dir) / "warmup.log").string(), cancel, ignored);
    if (!st.ok()) return Status(st.code(), "warm-up: " + st.message());
  }
  ExternalRun run;
  on_measure(true);
  Status st =
      RunOnce(env, spec, cpus, (fs::path(scratch_dir) / "measure.log").string(), cancel, run);
  on_measure(false);
  if (!st.ok()) return st;
  auto figures = spec.tool == "wrk" ? ParseWrkOutput(run.output) : ParseH2loadOutput(run.output);
  if (!figures.ok()) return figures.status();
  run.figures = std::move(*figures);
  return run;
}

}  // namespace benchlab

#include "agent/supervisor.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace benchlab {
namespace {

using std::chrono::milliseconds;

// Polls `done` every 10 ms for up to `limit`; true when it came true.
template <typename F>
bool Eventually(F done, milliseconds limit = milliseconds(5000)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

// Gone, or dead and waiting to be reaped: either way it no longer runs.
bool Dead(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close == std::string::npos || text.substr(close + 2, 1) == "Z";
}

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "supervisor.XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  ~SupervisorTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  SpawnSpec Spec(std::vector<std::string> argv) {
    SpawnSpec spec;
    spec.argv = std::move(argv);
    spec.cwd = dir_;
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.log_path = dir_ + "/target.log";
    return spec;
  }

  std::unique_ptr<TargetProcess> MustSpawn(const SpawnSpec& spec) {
    Result<std::unique_ptr<TargetProcess>> t = TargetProcess::Spawn(RealSysEnv(), spec);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(*t) : nullptr;
  }

  std::string Log() {
    std::ifstream in(dir_ + "/target.log");
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  // Waits for the first whole line of the log (a shell reporting a pid, or readiness).
  std::string FirstLogLine() {
    std::string line;
    Eventually([&] {
      std::string log = Log();
      size_t nl = log.find('\n');
      if (nl == std::string::npos) return false;
      line = log.substr(0, nl);
      return true;
    });
    return line;
  }

  ExitInfo WaitExit(TargetProcess& t) {
    ExitInfo info;
    EXPECT_TRUE(Eventually([&] { return t.Exited(&info); }));
    return info;
  }

  std::string dir_;
};

TEST(ExitInfoTest, Describe) {
  EXPECT_EQ((ExitInfo{true, 1, 0}).Describe(), "exit status 1");
  EXPECT_EQ((ExitInfo{true, -1, SIGKILL}).Describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ((ExitInfo{true, -1, SIGTERM}).Describe(), "killed by signal 15 (SIGTERM)");
  EXPECT_EQ(ExitInfo{}.Describe(), "still running");
}

TEST_F(SupervisorTest, StopEndsAProcessInItsOwnGroupWithSigterm) {
  auto t = MustSpawn(Spec({"sleep", "30"}));
  ASSERT_NE(t, nullptr);
  ASSERT_GT(t->pid(), 0);
  EXPECT_EQ(getpgid(t->pid()), t->pid());
  EXPECT_NE(getpgid(t->pid()), getpgid(0));
  EXPECT_FALSE(t->Exited());
  ExitInfo info = t->Stop(milliseconds(3000));
  EXPECT_TRUE(info.exited);
  EXPECT_EQ(info.signal, SIGTERM);
  EXPECT_NE(info.Describe().find("SIGTERM"), std::string::npos) << info.Describe();
  EXPECT_TRUE(t->Exited());
}

TEST_F(SupervisorTest, SigkillAfterGraceWhenSigtermIsIgnored) {
  auto t = MustSpawn(Spec({"sh", "-c", "trap '' TERM; echo ready; sleep 30"}));
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(FirstLogLine(), "ready");
  ExitInfo info = t->Stop(milliseconds(200));
  EXPECT_EQ(info.signal, SIGKILL) << info.Describe();
}

TEST_F(SupervisorTest, StopKillsTheWholeGroup) {
  ASSERT_TRUE(BecomeSubreaper().ok());  // so the orphaned grandchild can be reaped here
  auto t = MustSpawn(Spec({"sh", "-c", "sleep 30 & echo $!; wait"}));
  ASSERT_NE(t, nullptr);
  pid_t grandchild = std::stoi(FirstLogLine());
  ASSERT_GT(grandchild, 0);
  EXPECT_EQ(getpgid(grandchild), t->pid());
  t->Stop(milliseconds(3000));
  EXPECT_TRUE(Eventually([&] { return Dead(grandchild); }));
  EXPECT_TRUE(Eventually([&] {
    ReapOrphans();
    return kill(grandchild, 0) != 0 && errno == ESRCH;
  }));
}

TEST_F(SupervisorTest, GroupMemberIgnoringSigtermDiesAfterTheLeader) {
  ASSERT_TRUE(BecomeSubreaper().ok());
  // The leader dies of SIGTERM at once; the member ignores it and must still be killed.
  auto t =
      MustSpawn(Spec({"sh", "-c", "sh -c \"trap '' TERM; echo \\$\\$; exec sleep 30\" & wait"}));
  ASSERT_NE(t, nullptr);
  pid_t member = std::stoi(FirstLogLine());
  ASSERT_GT(member, 0);
  ExitInfo info = t->Stop(milliseconds(3000));
  EXPECT_EQ(info.signal, SIGTERM) << info.Describe();
  EXPECT_TRUE(Eventually([&] { return Dead(member); }));
  EXPECT_TRUE(Eventually([&] {
    ReapOrphans();
    return kill(member, 0) != 0 && errno == ESRCH;
  }));
}

TEST_F(SupervisorTest, EnvironmentIsExactlyTheSpec) {
  SpawnSpec spec = Spec({"/usr/bin/env"});
  spec.env = {{"FOO", "bar"}, {"BAZ", "with space"}};
  auto t = MustSpawn(spec);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(WaitExit(*t).exit_code, 0);
  EXPECT_EQ(Log(), "BAZ=with space\nFOO=bar\n");
}

// Raises CAP_PERFMON into this process's ambient set (as the agent's unit does) for the scope;
// false where it cannot (not root).
class AmbientPerfmon {
 public:
  AmbientPerfmon() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    if (syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct data[2] = {saved_[0], saved_[1]};
    data[CAP_TO_INDEX(CAP_PERFMON)].inheritable |= CAP_TO_MASK(CAP_PERFMON);
    if (syscall(SYS_capset, &header_, data) != 0) return;
    raised_ = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_PERFMON, 0, 0) == 0;
  }
  ~AmbientPerfmon() {
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    syscall(SYS_capset, &header_, saved_);
  }
  bool raised() const { return raised_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
  bool raised_ = false;
};

TEST_F(SupervisorTest, TargetsDoNotInheritTheAgentsAmbientCapabilities) {
  AmbientPerfmon perfmon;
  if (!perfmon.raised()) GTEST_SKIP() << "cannot raise an ambient capability (needs root)";
  for (bool keep : {false, true}) {
    SpawnSpec spec = Spec({"grep", "^CapAmb:", "/proc/self/status"});
    spec.keep_ambient_capabilities = keep;
    auto t = MustSpawn(spec);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(WaitExit(*t).exit_code, 0);
    // CAP_PERFMON is bit 38: 0x4000000000.
    EXPECT_EQ(Log(), keep ? "CapAmb:\t0000004000000000\n" : "CapAmb:\t0000000000000000\n")
        << (keep ? "perf keeps it" : "a target must not have it");
  }
}

TEST_F(SupervisorTest, WorkingDirectoryIsTheSpec) {
  std::filesystem::create_directory(dir_ + "/work");
  SpawnSpec spec = Spec({"pwd"});
  spec.cwd = dir_ + "/work";
  auto t = MustSpawn(spec);
  ASSERT_NE(t, nullptr);
  WaitExit(*t);
  EXPECT_EQ(Log(), std::filesystem::canonical(dir_ + "/work").string() + "\n");
}

TEST_F(SupervisorTest, LogCapturesStdoutAndStderr) {
  auto t = MustSpawn(Spec({"sh", "-c", "for i in 1 2 3 4 5; do echo line$i; done; echo oops >&2"}));
  ASSERT_NE(t, nullptr);
  WaitExit(*t);
  EXPECT_EQ(t->LastLogLines(3), (std::vector<std::string>{"line4", "line5", "oops"}));
  EXPECT_EQ(t->LastLogLines(100).size(), 6u);
  EXPECT_TRUE(t->LastLogLines(0).empty());
}

TEST_F(SupervisorTest, LastLogLinesOfALongLog) {
  auto t = MustSpawn(Spec({"seq", "1", "30000"}));  // about 170 KiB: several chunks
  ASSERT_NE(t, nullptr);
  WaitExit(*t);
  EXPECT_EQ(t->LastLogLines(2), (std::vector<std::string>{"29999", "30000"}));
  std::vector<std::string> many = t->LastLogLines(20000);
  ASSERT_EQ(many.size(), 20000u);
  EXPECT_EQ(many.front(), "10001");
}

TEST_F(SupervisorTest, MissingExecutableOrDirectoryIsNotFound) {
  Result<std::unique_ptr<TargetProcess>> t =
      TargetProcess::Spawn(RealSysEnv(), Spec({"no-such-command-benchlab"}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("\"no-such-command-benchlab\" not found in PATH"),
            std::string::npos)
      << t.status().message();

  EXPECT_EQ(TargetProcess::Spawn(RealSysEnv(), Spec({"/nonexistent/bin/x"})).status().code(),
            StatusCode::kNotFound);
  SpawnSpec spec = Spec({"true"});
  spec.cwd = dir_ + "/missing";
  EXPECT_EQ(TargetProcess::Spawn(RealSysEnv(), spec).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TargetProcess::Spawn(RealSysEnv(), Spec({})).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SupervisorTest, PinsToTheGivenCpu) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  if (!CPU_ISSET(0, &mine)) GTEST_SKIP() << "CPU 0 is not available to this test";
  SpawnSpec spec = Spec({"sleep", "30"});
  spec.cpus = {0};
  auto t = MustSpawn(spec);
  ASSERT_NE(t, nullptr);
  cpu_set_t got;
  ASSERT_EQ(sched_getaffinity(t->pid(), sizeof(got), &got), 0);
  EXPECT_EQ(CPU_COUNT(&got), 1);
  EXPECT_TRUE(CPU_ISSET(0, &got));
}

// Reports an affinity other than the one asked for, as if something re-pinned the target.
class LyingAffinityEnv : public RootedSysEnv {
 public:
  Result<std::vector<int>> GetAffinity(pid_t pid) override {
    asked = pid;
    return std::vector<int>{0, 1};
  }
  pid_t asked = 0;
};

TEST_F(SupervisorTest, AffinityMismatchKillsTheTarget) {
  LyingAffinityEnv env;
  SpawnSpec spec = Spec({"sleep", "30"});
  spec.cpus = {0};
  Result<std::unique_ptr<TargetProcess>> t = TargetProcess::Spawn(env, spec);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("pinned"), std::string::npos) << t.status().message();
  ASSERT_GT(env.asked, 0);
  EXPECT_TRUE(kill(env.asked, 0) != 0 && errno == ESRCH);  // killed and reaped
}

// The real machine, with every signal recorded on its way (common/sysenv.h: every signal
// benchlab sends goes through SysEnv).
class RecordingSignalsEnv : public RootedSysEnv {
 public:
  Status Signal(pid_t pid, int signal) override {
    signals.emplace_back(pid, signal);
    return RootedSysEnv::Signal(pid, signal);
  }
  std::vector<std::pair<pid_t, int>> signals;
};

TEST_F(SupervisorTest, EverySignalOfStopGoesThroughSysEnv) {
  RecordingSignalsEnv env;
  Result<std::unique_ptr<TargetProcess>> t = TargetProcess::Spawn(env, Spec({"sleep", "30"}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const pid_t pid = (*t)->pid();
  ExitInfo info = (*t)->Stop(milliseconds(3000));
  EXPECT_EQ(info.signal, SIGTERM) << info.Describe();
  // SIGTERM to the group, then the probe (signal 0) that finds the group gone, so no SIGKILL.
  const std::vector<std::pair<pid_t, int>> want = {{-pid, SIGTERM}, {-pid, 0}};
  EXPECT_EQ(env.signals, want);
}

TEST_F(SupervisorTest, ExitedReportsExitStatus) {
  auto ok = MustSpawn(Spec({"true"}));
  ASSERT_NE(ok, nullptr);
  ExitInfo info = WaitExit(*ok);
  EXPECT_EQ(info.exit_code, 0);
  EXPECT_EQ(info.signal, 0);

  auto three = MustSpawn(Spec({"sh", "-c", "exit 3"}));
  ASSERT_NE(three, nullptr);
  info = WaitExit(*three);
  EXPECT_EQ(info.exit_code, 3);
  EXPECT_EQ(info.Describe(), "exit status 3");
  // Stopping an exited target just reports how it ended.
  EXPECT_EQ(three->Stop(milliseconds(100)).exit_code, 3);
}

TEST_F(SupervisorTest, WaitExitReturnsWhenTheProcessEnds) {
  auto t = MustSpawn(Spec({"sh", "-c", "sleep 0.2; exit 4"}));
  ASSERT_NE(t, nullptr);
  ExitInfo info;
  ASSERT_TRUE(t->WaitExit(std::chrono::steady_clock::now() + std::chrono::seconds(30), &info));
  EXPECT_EQ(info.exit_code, 4) << info.Describe();
  EXPECT_TRUE(t->Exited());  // reaped; asking again keeps the answer
  // An exited process answers at once, even with a deadline already past.
  ExitInfo again;
  EXPECT_TRUE(t->WaitExit(std::chrono::steady_clock::now() - std::chrono::seconds(1), &again));
  EXPECT_EQ(again.exit_code, 4);
}

TEST_F(SupervisorTest, WaitExitGivesUpAtTheDeadlineAndLeavesTheProcessRunning) {
  auto t = MustSpawn(Spec({"sleep", "30"}));
  ASSERT_NE(t, nullptr);
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(150);
  ExitInfo info;
  EXPECT_FALSE(t->WaitExit(deadline, &info));
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
  EXPECT_FALSE(info.exited);
  EXPECT_EQ(kill(t->pid(), 0), 0);  // still there, still ours to stop
  EXPECT_EQ(t->Stop(milliseconds(1000)).signal, SIGTERM);
}

TEST_F(SupervisorTest, WaitExitSleepsInsteadOfPolling) {
  // The waiting thread must not keep waking up while a load tool is measured: over a 400 ms
  // wait it blocks a handful of times at most (a 2 ms poll would switch ~200 times).
  auto t = MustSpawn(Spec({"sleep", "0.4"}));
  ASSERT_NE(t, nullptr);
  rusage before{}, after{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &before), 0);
  ExitInfo info;
  ASSERT_TRUE(t->WaitExit(std::chrono::steady_clock::now() + std::chrono::seconds(30), &info));
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &after), 0);
  EXPECT_EQ(info.exit_code, 0);
  EXPECT_LE(after.ru_nvcsw - before.ru_nvcsw, 5) << "voluntary context switches while waiting";
}

TEST_F(SupervisorTest, WaitExitEndsAtOnceWhenCancelled) {
  auto t = MustSpawn(Spec({"sleep", "30"}));
  ASSERT_NE(t, nullptr);
  CancelFlag cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel.Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  rusage before{}, after{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &before), 0);
  EXPECT_FALSE(t->WaitExit(start + std::chrono::seconds(30), nullptr, &cancel));
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &after), 0);
  const auto waited = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_GE(waited, milliseconds(200));
  // Woken by the flag's fd, not by looking: well under the 50 ms a poll would add.
  EXPECT_LT(waited, milliseconds(250));
  EXPECT_LE(after.ru_nvcsw - before.ru_nvcsw, 5) << "voluntary context switches while waiting";
  EXPECT_EQ(kill(t->pid(), 0), 0) << "the caller decides what to do with it";
  // Already cancelled: no wait at all.
  EXPECT_FALSE(
      t->WaitExit(std::chrono::steady_clock::now() + std::chrono::seconds(30), nullptr, &cancel));
  t->Stop(milliseconds(1000));
}

TEST_F(SupervisorTest, TheLogIsPrivate) {
  auto t = MustSpawn(Spec({"sh", "-c", "echo hi"}));
  ASSERT_NE(t, nullptr);
  WaitExit(*t);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/target.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SupervisorTest, DestructorStopsARunningTarget) {
  pid_t pid = 0;
  {
    auto t = MustSpawn(Spec({"sleep", "30"}));
    ASSERT_NE(t, nullptr);
    pid = t->pid();
  }
  EXPECT_TRUE(kill(pid, 0) != 0 && errno == ESRCH);
}

TEST_F(SupervisorTest, ReapOrphansLeavesOwnedChildrenAlone) {
  auto t = MustSpawn(Spec({"sh", "-c", "exit 5"}));
  ASSERT_NE(t, nullptr);
  // Wait until it is a zombie, without reaping it.
  ASSERT_TRUE(Eventually([&] {
    siginfo_t info{};
    return waitid(P_PID, t->pid(), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
  }));
  ReapOrphans();
  ExitInfo info;
  ASSERT_TRUE(t->Exited(&info));
  EXPECT_EQ(info.exit_code, 5) << info.Describe();

  // A child no TargetProcess owns is reaped.
  pid_t stray = fork();
  ASSERT_GE(stray, 0);
  if (stray == 0) _exit(7);
  EXPECT_TRUE(Eventually([&] {
    ReapOrphans();
    return waitpid(stray, nullptr, WNOHANG) < 0 && errno == ECHILD;
  }));
}

}  // namespace
}  // namespace benchlab

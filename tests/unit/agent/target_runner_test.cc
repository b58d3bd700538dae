#include "agent/target_runner.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class TargetRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-target-runner-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TargetDef Hello() {
    TargetDef def;
    def.name = "hello";
    def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    def.campaign_dir = dir_;
    def.ready_timeout = std::chrono::milliseconds(5000);
    return def;
  }

  std::string dir_;
};

TEST(FillPlaceholdersTest, ReplacesEveryKnownPlaceholder) {
  EXPECT_EQ(FillPlaceholders("{campaign_dir}/x --port={port} {run_dir}/{port}", 8080, "/run",
                             "/camp"),
            "/camp/x --port=8080 /run/8080");
  EXPECT_EQ(FillPlaceholders("{other} {port", 1, "/r", "/c"), "{other} {port");
}

TEST_F(TargetRunnerTest, StartsPinnedInItsOwnGroupAndRendersTemplates) {
  std::ofstream(dir_ + "/app.conf.in") << "listen {port}\nroot {run_dir}\n";
  TargetDef def = Hello();
  def.templates = {"{campaign_dir}/app.conf.in"};
  auto running = StartTarget(RealSysEnv(), def, {0}, dir_ + "/run1");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  pid_t pid = running->process->pid();
  EXPECT_GT(running->port, 0);
  EXPECT_GT(running->startup_ms, 0);
  EXPECT_GT(running->first_request_ms, 0);
  EXPECT_GT(running->idle_rss_kb, 0u);
  EXPECT_EQ(getpgid(pid), pid) << "the target leads its own process group";
  auto cpus = RealSysEnv().GetAffinity(pid);
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, std::vector<int>{0});
  EXPECT_EQ(ReadAll(dir_ + "/run1/app.conf"),
            "listen " + std::to_string(running->port) + "\nroot " + dir_ + "/run1\n");
  ExitInfo info = running->process->Stop(std::chrono::milliseconds(2000));
  EXPECT_TRUE(info.exited);
  EXPECT_NE(kill(pid, 0), 0) << "the target is gone after Stop";
}

TEST_F(TargetRunnerTest, TargetSeesOnlyItsOwnEnvironment) {
  setenv("BENCHLAB_TEST_SECRET", "hunter2", 1);
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c",
                 "env > {run_dir}/env.txt; exec " + std::string(BENCHLAB_BINARY_DIR) +
                     "/bin/hello-server --port $PORT"};
  def.env = {{"MODE", "bench"}};
  auto running = StartTarget(RealSysEnv(), def, {}, dir_ + "/run2");
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  std::string env = ReadAll(dir_ + "/run2/env.txt");
  EXPECT_NE(env.find("MODE=bench\n"), std::string::npos) << env;
  EXPECT_NE(env.find("PORT=" + std::to_string(running->port) + "\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << "the agent's environment leaked: " << env;
  running->process->Stop(std::chrono::milliseconds(2000));
  unsetenv("BENCHLAB_TEST_SECRET");
}

TEST_F(TargetRunnerTest, TargetThatExitsBeforeReadyFailsWithItsLog) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c", "echo cannot bind port {port} >&2; exit 3"};
  auto running = StartTarget(RealSysEnv(), def, {}, dir_ + "/run3");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(running.status().message().find("exited before it was ready (exit status 3)"),
            std::string::npos)
      << running.status().message();
  EXPECT_NE(running.status().message().find("cannot bind port"), std::string::npos);
}

TEST_F(TargetRunnerTest, TargetNeverReadyTimesOutAndIsStopped) {
  TargetDef def = Hello();
  def.command = {"/bin/sh", "-c", "echo $$ > {run_dir}/pid; exec sleep 30"};
  def.ready_timeout = std::chrono::milliseconds(300);
  auto running = StartTarget(RealSysEnv(), def, {}, dir_ + "/run4");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(running.status().message().find("not ready on port"), std::string::npos)
      << running.status().message();
  pid_t pid = std::atoi(ReadAll(dir_ + "/run4/pid").c_str());
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0) << "a target that never became ready must not be left running";
}

TEST_F(TargetRunnerTest, MissingCommandIsNotFound) {
  TargetDef def = Hello();
  def.command = {"benchlab-no-such-command"};
  auto running = StartTarget(RealSysEnv(), def, {}, dir_ + "/run5");
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), StatusCode::kNotFound);
  EXPECT_NE(running.status().message().find("starting target \"hello\""), std::string::npos);
}

}  // namespace
}  // namespace benchlab

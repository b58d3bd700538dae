#include "agent/external_run.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class ExternalRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-external-run-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // A stand-in for wrk that records its pid and then runs far longer than asked.
    tool_ = dir_ + "/fake-wrk";
    std::ofstream(tool_) << "#!/bin/sh\necho $$ > " << dir_ << "/tool.pid\nexec sleep 30\n";
    chmod(tool_.c_str(), 0700);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ExternalLoadSpec Spec() {
    ExternalLoadSpec spec;
    spec.tool = "wrk";
    spec.binary = tool_;
    spec.host = "127.0.0.1";
    spec.port = 9;
    spec.duration_s = 20;
    return spec;
  }

  pid_t ToolPid() {
    std::ifstream in(dir_ + "/tool.pid");
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  std::string dir_;
  std::string tool_;
};

TEST_F(ExternalRunTest, ACancelledRunKillsTheToolAtOnce) {
  CancelFlag cancel;
  std::chrono::steady_clock::time_point cancelled_at;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(300));
    cancelled_at = std::chrono::steady_clock::now();
    cancel.Cancel();
  });
  auto run = RunExternalLoad(
      RealSysEnv(), Spec(), {}, milliseconds(0), dir_ + "/scratch", [](bool) {}, &cancel);
  const auto returned = std::chrono::steady_clock::now();
  canceller.join();
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kCancelled) << run.status().ToString();
  // The requirement is 100 ms from the cancellation; SIGTERM ends sleep at once.
  EXPECT_LT(returned - cancelled_at, milliseconds(100));
  const pid_t pid = ToolPid();
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0) << "the tool is gone";
}

TEST_F(ExternalRunTest, ACancelledWarmUpNeverStartsTheMeasuredRun) {
  CancelFlag cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel.Cancel();
  });
  bool measured = false;
  auto run = RunExternalLoad(
      RealSysEnv(), Spec(), {}, milliseconds(5000), dir_ + "/scratch",
      [&](bool) { measured = true; }, &cancel);
  canceller.join();
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kCancelled) << run.status().ToString();
  EXPECT_FALSE(measured);
}

TEST_F(ExternalRunTest, ScratchDirectoryIsPrivate) {
  CancelFlag cancel;
  cancel.Cancel();
  ExternalLoadSpec spec = Spec();
  spec.method = "POST";  // wrk then needs a Lua script, written to the scratch directory
  (void)RunExternalLoad(
      RealSysEnv(), spec, {}, milliseconds(0), dir_ + "/scratch", [](bool) {}, &cancel);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/scratch").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir_ + "/scratch/wrk.lua").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace benchlab

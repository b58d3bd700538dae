#include "common/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/unit/support/temp_dir.h"

namespace benchlab {
namespace {

std::map<std::string, std::string> PathOnly() { return {{"PATH", "/usr/bin:/bin"}}; }

TEST(RunArgvTest, CapturesOutputAndExitStatusWithOnlyTheGivenEnvironment) {
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2; env; exit 3"};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->output.find("out\n"), std::string::npos);
  EXPECT_NE(r->output.find("err\n"), std::string::npos);
  EXPECT_NE(r->output.find("ONLY=this"), std::string::npos);
  EXPECT_EQ(r->output.find("HOME="), std::string::npos) << r->output;
  EXPECT_EQ(r->Describe(spec.time_limit), "exit status 3");
}

TEST(RunArgvTest, StdinIsEmptyAndCwdIsUsed) {
  TempDir dir;
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "pwd; cat; echo end"};
  spec.env = PathOnly();
  spec.cwd = dir.path();
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->output, dir.path() + "\nend\n");
}

TEST(RunArgvTest, AMissingProgramIsAnError) {
  RunSpec spec;
  spec.argv = {"no-such-program-anywhere"};
  spec.env = PathOnly();
  auto r = RunArgv(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(RunArgvTest, RelativePathEntriesAreNotSearched) {
  // A relative PATH entry would name a different file once the child is in its cwd.
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/bin");
  const std::string prog = dir.path() + "/bin/only-here";
  std::ofstream(prog) << "#!/bin/sh\necho ran\n";
  std::filesystem::permissions(prog, std::filesystem::perms::owner_all);
  RunSpec spec;
  spec.argv = {"only-here"};
  spec.env = {{"PATH", "bin:/usr/bin:/bin"}};
  spec.cwd = dir.path();
  auto r = RunArgv(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  spec.env = {{"PATH", dir.path() + "/bin:/usr/bin:/bin"}};
  r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->output, "ran\n");
}

TEST(RunArgvTest, WhatTheLeaderLeftInItsGroupIsKilledWhenItExits) {
  TempDir dir;
  const std::string pid_file = dir.path() + "/left";
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 30 > /dev/null 2>&1 & echo $! > " + pid_file + "; exit 0"};
  spec.env = PathOnly();
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  pid_t left = 0;
  std::ifstream(pid_file) >> left;
  ASSERT_GT(left, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    // Gone, or a zombie waiting for whoever reaps orphans here.
    std::ifstream stat("/proc/" + std::to_string(left) + "/stat");
    std::string line;
    std::getline(stat, line);
    gone = line.empty() || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "pid " << left << " outlived its group's leader";
}

TEST(RunArgvTest, TheTimeLimitKillsTheWholeGroup) {
  TempDir dir;
  const std::string pid_file = dir.path() + "/grandchild";
  RunSpec spec;
  // The grandchild, in the background, would outlive a kill of the shell alone.
  spec.argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + pid_file + "; wait"};
  spec.env = PathOnly();
  spec.time_limit = std::chrono::milliseconds(300);
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  // Killed: gone, or a zombie awaiting init.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    std::getline(stat, line);
    gone = line.empty() || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone);
}

TEST(RunArgvTest, OutputGoesToAFileWhenAsked) {
  TempDir dir;
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo one; echo two >&2"};
  spec.env = PathOnly();
  spec.output_path = dir.path() + "/log";
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok());
  EXPECT_TRUE(r->output.empty());
  std::stringstream text;
  text << std::ifstream(spec.output_path).rdbuf();
  EXPECT_EQ(text.str(), "one\ntwo\n");
}

TEST(RunArgvTest, CapturedOutputIsCutAtItsLimit) {
  RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "yes x | head -c 100000"};
  spec.env = PathOnly();
  spec.max_output = 1000;
  auto r = RunArgv(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->output.size(), 1000u);
}

}  // namespace
}  // namespace benchlab

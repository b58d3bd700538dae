#include "agent/cgroup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/target_runner.h"
#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

TEST(CgroupTest, ParsesCpuStat) {
  auto cpu = ParseCgroupCpuStat("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 0\n");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->usage_usec, 1500u);
  EXPECT_EQ(cpu->user_usec, 1000u);
  EXPECT_EQ(cpu->system_usec, 500u);
  EXPECT_FALSE(ParseCgroupCpuStat("nr_periods 0\n").ok());
}

TEST(CgroupTest, FindsTheCgroup2MountAmongV1Ones) {
  EXPECT_EQ(FindCgroup2Mount("cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n"
                             "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"),
            "/sys/fs/cgroup/unified");
  EXPECT_EQ(FindCgroup2Mount("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n"),
            "/sys/fs/cgroup");
  EXPECT_EQ(FindCgroup2Mount("cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n"), "");
}

TEST(CgroupTest, OnAFakeRootCreatesReadsAndKillsOnDestruction) {
  FakeProcRoot root;
  root.Write("/proc/mounts", "cgroup2 /cg cgroup2 rw 0 0\n");
  std::filesystem::create_directories(root.root() + "/cg");
  RootedSysEnv env(root.root());
  {
    auto cg = WindowCgroup::Create(env, "w1");
    ASSERT_TRUE(cg.ok()) << cg.status().ToString();
    EXPECT_EQ((*cg)->path(), "/cg/benchlab/w1");
    EXPECT_EQ((*cg)->procs_path(), root.root() + "/cg/benchlab/w1/cgroup.procs");
    root.Write("/cg/benchlab/w1/cpu.stat", "usage_usec 42\nuser_usec 40\nsystem_usec 2\n");
    EXPECT_EQ((*cg)->ReadCpu()->usage_usec, 42u);
    EXPECT_FALSE((*cg)->MemoryPeakKb().has_value()) << "no memory controller: unavailable";
    root.Write("/cg/benchlab/w1/memory.peak", "2048000\n");
    EXPECT_EQ((*cg)->MemoryPeakKb(), std::optional<uint64_t>(2000));
    EXPECT_FALSE(WindowCgroup::Create(env, "w1").ok()) << "a window's cgroup is its own";
  }
  // On a real cgroup the kernel empties the directory; here the kill request is what remains.
  std::ifstream kill(root.root() + "/cg/benchlab/w1/cgroup.kill");
  std::string written;
  kill >> written;
  EXPECT_EQ(written, "1");
}

// Files from a fake root, with every write recorded in order.
class RecordingEnv : public RootedSysEnv {
 public:
  using RootedSysEnv::RootedSysEnv;
  Status WriteFile(const std::string& path, const std::string& content) override {
    writes.emplace_back(path, content);
    return RootedSysEnv::WriteFile(path, content);
  }
  std::vector<std::pair<std::string, std::string>> writes;
};

TEST(CgroupTest, ADelegatedServiceGroupHoldsTheAgentAndItsTargets) {
  FakeProcRoot root;
  root.Write("/proc/mounts", "cgroup2 /cg cgroup2 rw 0 0\n");
  root.Write("/proc/77/cgroup", "0::/system.slice/benchlab-agent@s1.service\n");
  const std::string unit = "/cg/system.slice/benchlab-agent@s1.service";
  std::filesystem::create_directories(root.root() + unit);
  root.Write(unit + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  RecordingEnv env(root.root());
  std::string note;
  EXPECT_EQ(PrepareCgroupParent(env, 77, &note), unit);
  EXPECT_EQ(note, "");
  // The agent leaves the unit's group first: a group with processes gets no controllers for
  // its children.
  EXPECT_EQ(env.writes, (std::vector<std::pair<std::string, std::string>>{
                            {unit + "/agent/cgroup.procs", "77"},
                            {unit + "/cgroup.subtree_control", "+cpu"},
                            {unit + "/cgroup.subtree_control", "+memory"},
                            {unit + "/cgroup.subtree_control", "+pids"}}));
  auto cg = WindowCgroup::Create(env, "w1", unit);
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  EXPECT_EQ((*cg)->path(), unit + "/w1") << "a sibling of agent/, inside the delegated subtree";
  EXPECT_FALSE(std::filesystem::exists(root.root() + "/cg/benchlab"));
}

TEST(CgroupTest, OutsideADelegatedServiceTheDefaultPlaceStays) {
  FakeProcRoot root;
  root.Write("/proc/mounts", "cgroup2 /cg cgroup2 rw 0 0\n");
  root.Write("/proc/5/cgroup", "0::/user.slice/user-0.slice/session-3.scope\n");
  root.Write("/proc/6/cgroup", "0::/system.slice/benchlab-agent@s2.service\n");
  std::filesystem::create_directories(root.root() + "/cg");
  RecordingEnv env(root.root());
  std::string note;
  EXPECT_EQ(PrepareCgroupParent(env, 5, &note), "");
  EXPECT_EQ(note,
            "the agent's cgroup /user.slice/user-0.slice/session-3.scope is not a "
            "service's (Delegate=yes)");
  // A service whose group the agent may not create groups in (no Delegate=yes).
  EXPECT_EQ(PrepareCgroupParent(env, 6, &note), "");
  EXPECT_EQ(note.rfind("cannot create /cg/system.slice/benchlab-agent@s2.service/agent", 0), 0u)
      << note;
  EXPECT_TRUE(env.writes.empty()) << "the agent moved nowhere";
  auto cg = WindowCgroup::Create(env, "w1", "");
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  EXPECT_EQ((*cg)->path(), "/cg/benchlab/w1");

  FakeProcRoot v1;
  v1.Write("/proc/mounts", "cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n");
  RootedSysEnv v1_env(v1.root());
  EXPECT_EQ(PrepareCgroupParent(v1_env, 5, &note), "");
  EXPECT_EQ(note, "no cgroup2 mount on this machine");
}

TEST(CgroupTest, OwnCgroupPathReadsTheUnifiedLine) {
  EXPECT_EQ(OwnCgroupPath("12:cpu,cpuacct:/x\n0::/system.slice/a.service\n"),
            "/system.slice/a.service");
  EXPECT_EQ(OwnCgroupPath("12:cpu,cpuacct:/x\n"), "");
}

TEST(CgroupTest, NoCgroup2MountIsAClearRefusal) {
  FakeProcRoot root;
  root.Write("/proc/mounts", "proc /proc proc rw 0 0\n");
  RootedSysEnv env(root.root());
  auto cg = WindowCgroup::Create(env, "w");
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().message(), "no cgroup2 mount on this machine");
}

// On a machine where the agent may create cgroups, a target's whole tree is accounted in it,
// including a child that does the work, and nothing of it survives the cgroup.
TEST(CgroupTest, RealTargetTreeIsAccountedAndKilledWithItsCgroup) {
  auto probe = WindowCgroup::Create(RealSysEnv(), "probe-" + std::to_string(getpid()));
  if (!probe.ok()) GTEST_SKIP() << "no writable cgroup2 here: " << probe.status().message();
  probe->reset();
  char tmpl[] = "/tmp/benchlab-cgroup-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  TargetDef def;
  def.name = "spinner";
  def.command = {"/bin/sh", "-c",
                 "(while :; do :; done) & exec " + std::string(BENCHLAB_BINARY_DIR) +
                     "/bin/hello-server --port {port}"};
  StartOptions options;
  options.use_cgroup = true;
  pid_t pid = 0;
  {
    auto running = LaunchTarget(RealSysEnv(), def, {}, std::string(tmpl) + "/run", options);
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    ASSERT_NE(running->cgroup, nullptr) << running->cgroup_note;
    pid = running->process->pid();
    auto before = running->cgroup->ReadCpu();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto after = running->cgroup->ReadCpu();
    ASSERT_TRUE(before.ok() && after.ok());
    EXPECT_GT(after->usage_usec, before->usage_usec + 50000) << "the spinning child is counted";
  }
  EXPECT_NE(kill(pid, 0), 0);
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace benchlab

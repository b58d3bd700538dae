#include "agent/orphans.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

// Reads the fake root; a signal is recorded and, for the test, ends the process it names (or
// every member of the group it names).
class RecordingEnv : public RootedSysEnv {
 public:
  RecordingEnv(FakeProcRoot& root, std::map<pid_t, pid_t> groups, bool obeys_term)
      : RootedSysEnv(root.root()),
        root_(root),
        groups_(std::move(groups)),
        obeys_term_(obeys_term) {}
  Status Signal(pid_t pid, int signal) override {
    signals.emplace_back(pid, signal);
    if (signal == SIGKILL || obeys_term_) {
      for (auto& [member, group] : groups_) {
        if (member == pid || -group == pid) root_.Remove(member);
      }
    }
    return Status::Ok();
  }
  std::vector<std::pair<pid_t, int>> signals;

 private:
  FakeProcRoot& root_;
  std::map<pid_t, pid_t> groups_;
  bool obeys_term_;
};

void PutProcess(FakeProcRoot& root, pid_t pid, pid_t pgrp, const std::string& environ) {
  FakeProcess p;
  p.pid = pid;
  p.comm = "target";
  root.Put(p);
  // FakeProcess has no pgrp field; the stat line is written out with it.
  root.Write("/proc/" + std::to_string(pid) + "/stat",
             std::to_string(pid) + " (target) S 1 " + std::to_string(pgrp) +
                 " 0 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1000 0 10 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                 "0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  root.Write("/proc/" + std::to_string(pid) + "/environ", environ);
}

TEST(OrphansTest, FindsOnlyThisAgentsEarlierInstances) {
  FakeProcRoot root;
  using namespace std::string_literals;
  PutProcess(root, 100, 100, "PORT=1\0BENCHLAB_AGENT=server:old\0"s);
  PutProcess(root, 101, 100, "BENCHLAB_AGENT=server:old\0"s);
  PutProcess(root, 200, 200, "BENCHLAB_AGENT=server:new\0"s);    // ours, alive
  PutProcess(root, 300, 300, "BENCHLAB_AGENT=server-2:old\0"s);  // another agent's
  PutProcess(root, 400, 400, "HOME=/root\0"s);                   // not an agent's at all
  RootedSysEnv env(root.root());
  auto orphans = FindOrphans(env, "server", "new");
  std::sort(orphans.begin(), orphans.end());
  EXPECT_EQ(orphans, (std::vector<pid_t>{100, 101}));
}

TEST(OrphansTest, ChildrenOfAnAgentStillRunningAreNotOrphans) {
  FakeProcRoot root;
  using namespace std::string_literals;
  PutProcess(root, 500, 500, ""s);                                  // a live agent, start 1000
  PutProcess(root, 501, 501, "BENCHLAB_AGENT=server:500.1000\0"s);  // its target
  PutProcess(root, 502, 502, "BENCHLAB_AGENT=server:500.999\0"s);   // pid 500 reused: gone
  PutProcess(root, 503, 503, "BENCHLAB_AGENT=server:777.1000\0"s);  // agent 777 is gone
  RootedSysEnv env(root.root());
  EXPECT_EQ(AgentInstance(env, 500), "500.1000");
  auto orphans = FindOrphans(env, "server", "600.1");
  std::sort(orphans.begin(), orphans.end());
  EXPECT_EQ(orphans, (std::vector<pid_t>{502, 503}));
}

TEST(OrphansTest, StopsOrphanGroupsWithTermWhenTheyObey) {
  FakeProcRoot root;
  using namespace std::string_literals;
  PutProcess(root, 100, 100, "BENCHLAB_AGENT=server:old\0"s);
  PutProcess(root, 101, 100, "BENCHLAB_AGENT=server:old\0"s);
  RecordingEnv env(root, {{100, 100}, {101, 100}}, /*obeys_term=*/true);
  auto stopped = StopOrphans(env, "server", "new", std::chrono::milliseconds(200));
  EXPECT_EQ(stopped.size(), 2u);
  for (const auto& [pid, sig] : env.signals) {
    EXPECT_EQ(pid, -100) << "the orphan's whole group is signalled";
    EXPECT_EQ(sig, SIGTERM);
  }
}

TEST(OrphansTest, KillsOrphansThatIgnoreTerm) {
  FakeProcRoot root;
  using namespace std::string_literals;
  PutProcess(root, 100, 100, "BENCHLAB_AGENT=server:old\0"s);
  RecordingEnv env(root, {{100, 100}}, /*obeys_term=*/false);
  StopOrphans(env, "server", "new", std::chrono::milliseconds(50));
  ASSERT_EQ(env.signals.size(), 2u);
  EXPECT_EQ(env.signals[0], (std::pair<pid_t, int>{-100, SIGTERM}));
  EXPECT_EQ(env.signals[1], (std::pair<pid_t, int>{-100, SIGKILL}));
  EXPECT_TRUE(FindOrphans(env, "server", "new").empty());
}

TEST(OrphansTest, NothingToStopSendsNothing) {
  FakeProcRoot root;
  RecordingEnv env(root, {}, true);
  EXPECT_TRUE(StopOrphans(env, "server", "new", std::chrono::milliseconds(50)).empty());
  EXPECT_TRUE(env.signals.empty());
}

}  // namespace
}  // namespace benchlab

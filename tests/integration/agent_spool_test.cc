// An agent restarted with more in its spool than one gRPC message holds (4 MiB by default) hands
// all of it to a real coordinator, a page at a time, and registers as usual: the spool never
// locks an agent out (docs/agent.md, "The spool").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "agent/server/agent_daemon.h"
#include "agent/spool.h"
#include "coordinator/server/coordinator_daemon.h"
#include "tests/sanitizer.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A spooled load result as an agent writes it, padded to about `bytes`.
std::string LoadResultOf(size_t bytes) {
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  event.mutable_result()->set_requests(1000);
  event.mutable_result()->set_record_json("{\"pad\":\"" + std::string(bytes, 'x') + "\"}");
  return event.SerializeAsString();
}

TEST(AgentSpoolTest, ASpoolOverFourMiBIsHandedOverAfterARestart) {
  char tmpl[] = "/tmp/benchlab-agent-spool-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto coordinator = CoordinatorDaemon::Create(dir + "/lab.db");
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().ToString();
  auto bound = (*coordinator)->Start(HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();

  AgentConfig config;
  config.name = "spool-load";
  config.roles = {"load"};
  config.coordinator = bound->ToString();
  config.state_dir = dir + "/state";
  config.run_root = dir + "/state/run";
  config.spool_dir = dir + "/state/spool";
  // 3,400 small results and a few large ones: 4.4 MB + 1.5 MiB, left by an agent whose
  // coordinator went away before acknowledging them.
  int written = 0;
  {
    auto spool = Spool::Open(config.spool_dir);
    ASSERT_TRUE(spool.ok()) << spool.status().ToString();
    const std::string window = "window-0123456789abcdef";
    for (int i = 0; i < 3400; ++i, ++written) {
      ASSERT_TRUE((*spool)
                      ->Put("5-hello-hello-c1-r" + std::to_string(i) + "-a1.load", window,
                            LoadResultOf(1250))
                      .ok());
    }
    for (int i = 0; i < 3; ++i, ++written) {
      ASSERT_TRUE(
          (*spool)
              ->Put("5-big-" + std::to_string(i) + "-a1.load", window, LoadResultOf(512 << 10))
              .ok());
    }
    ASSERT_GT((*spool)->bytes_held(), 4u << 20);
  }

  AgentDaemon agent(RealSysEnv(), config);
  ASSERT_TRUE(agent.Start().ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60) * kSanitizerTimeScale;
  int kept = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto count = (*coordinator)->store().CountAgentResults();
    ASSERT_TRUE(count.ok()) << count.status().ToString();
    kept = *count;
    auto left = Spool::Open(config.spool_dir);
    if (kept == written && left.ok() && (*left)->bytes_held() == 0) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(kept, written) << "the coordinator keeps every spooled result";
  auto left = Spool::Open(config.spool_dir);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ((*left)->bytes_held(), 0u) << "and the agent dropped what it acknowledged";
  EXPECT_TRUE(agent.registered());
  agent.Shutdown();
  (*coordinator)->Shutdown();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace benchlab

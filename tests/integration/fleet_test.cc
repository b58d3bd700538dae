// A fleet campaign in one process: a coordinator and two pairs of agents over real gRPC on
// loopback. The same matrix runs on each pair at once, one window at a time per pair, and every
// window records its pair.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "agent/server/agent_daemon.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "coordinator/server/coordinator_daemon.h"
#include "tests/unit/support/eventually.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFleetCampaign = R"(
name = "fleet"
baseline = "hello"
[matrix]
connections = [2]
rounds = 2
warmup = "50ms"
duration = "200ms"
[placement]
pairs = "all"
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
)";

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "benchlab-fleet-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto daemon = CoordinatorDaemon::Create(dir_ + "/fleet.db");
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    coordinator_ = std::move(daemon).value();
    auto bound = coordinator_->Start(HostPort{"127.0.0.1", 0});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    const std::string address = bound->ToString();

    TargetDef hello;
    hello.name = "hello";
    hello.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    hello.ready_timeout = std::chrono::milliseconds(5000);
    for (const char* name : {"srv1", "srv2", "load1", "load2"}) {
      AgentConfig config;
      config.name = name;
      const bool server = std::string(name).rfind("srv", 0) == 0;
      config.roles = {server ? "server" : "load"};
      config.coordinator = address;
      config.run_root = dir_ + "/" + name;
      if (server) config.catalogue = {hello};
      agents_.push_back(std::make_unique<AgentDaemon>(RealSysEnv(), config));
      ASSERT_TRUE(agents_.back()->Start().ok());
    }
    auto all_registered = [&] {
      for (auto& a : agents_) {
        if (!a->registered()) return false;
      }
      return true;
    };
    ASSERT_TRUE(Eventually(all_registered));
    stub_ =
        v1::Coordinator::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    for (auto& a : agents_) a->Shutdown();
    if (coordinator_) coordinator_->Shutdown();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string dir_;
  std::unique_ptr<CoordinatorDaemon> coordinator_;
  std::vector<std::unique_ptr<AgentDaemon>> agents_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(FleetTest, EveryPairRunsTheWholeMatrixAndWindowsNameTheirPair) {
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(kFleetCampaign);
  req.set_source("fleet.toml");
  v1::SubmitCampaignReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(stub_->SubmitCampaign(&ctx, req, &reply).ok());

  grpc::ClientContext watch;
  watch.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::WatchCampaignRequest wreq;
  wreq.set_name("fleet");
  auto reader = stub_->WatchCampaign(&watch, wreq);
  v1::CampaignEvent event;
  std::string state;
  int total = 0;
  while (reader->Read(&event)) {
    if (event.has_finished()) {
      state = event.finished().state();
      total = event.finished().total_windows();
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(state, "done");
  EXPECT_EQ(total, 4) << "2 windows per pair x 2 pairs";

  WindowFilter filter;
  filter.campaign = "fleet";
  auto rows = coordinator_->store().ListWindows(filter);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  std::map<std::string, std::set<int>> rounds_by_pair;
  std::set<std::string> load_agents;
  for (const WindowRow& w : *rows) {
    EXPECT_TRUE(w.verdict == "valid" || w.verdict == "invalid") << w.reasons;
    EXPECT_EQ(w.pair, w.server_agent);
    rounds_by_pair[w.pair].insert(w.round);
    load_agents.insert(w.load_agent);
  }
  EXPECT_EQ(rounds_by_pair,
            (std::map<std::string, std::set<int>>{{"srv1", {1, 2}}, {"srv2", {1, 2}}}));
  EXPECT_EQ(load_agents, (std::set<std::string>{"load1", "load2"})) << "pairs share no agent";
  auto campaign = coordinator_->store().FindCampaign("fleet");
  ASSERT_TRUE(campaign.ok() && campaign->has_value());
  EXPECT_NE((*campaign)->placement.find("pairs"), std::string::npos) << (*campaign)->placement;
}

}  // namespace
}  // namespace benchlab

// A window driven by several load agents: a coordinator, one server agent and two load agents
// ("l1", "l2") in one process over real gRPC on loopback, against the bundled hello-server. The
// agents' loads start together, and their results merge into one window row.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "agent/server/agent_daemon.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/histogram.h"
#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/coordinator_daemon.h"
#include "coordinator/server/window_runner.h"
#include "coordinator/window_token.h"
#include "tests/unit/support/eventually.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  std::string dir = fs::temp_directory_path() / ("benchlab-" + name + "-XXXXXX");
  std::vector<char> buf(dir.begin(), dir.end());
  buf.push_back('\0');
  EXPECT_NE(mkdtemp(buf.data()), nullptr);
  return buf.data();
}

// The level c1 cannot be split over two agents: it runs on l1 alone.
constexpr const char* kCampaign = R"(
name = "%NAME%"
baseline = "hello-a"
[matrix]
connections = [5, 1]
rates = [2000]
open_connections = 4
rounds = 1
warmup = "50ms"
duration = "400ms"
[placement]
load = %LOAD%
# These tests check the protocol, not the machine: on a shared machine the measurement gates
# (foreign CPU, self-test drift) would judge the neighbours. Reasons are still recorded.
[gates]
mode = "warn"
[[target]]
name = "hello-a"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
)";

std::string CampaignText(const std::string& name, const std::string& load) {
  std::string text = kCampaign;
  text.replace(text.find("%NAME%"), 6, name);
  text.replace(text.find("%LOAD%"), 6, load);
  return text;
}

// The records an agent's spool holds (file names without the ".rec" suffix).
std::set<std::string> Spooled(const std::string& dir) {
  std::set<std::string> keys;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".rec") keys.insert(entry.path().stem().string());
  }
  return keys;
}

class MultiLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("multi-load");
    auto daemon = CoordinatorDaemon::Create(dir_ + "/lab.db");
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    coordinator_ = std::move(daemon).value();
    auto bound = coordinator_->Start(HostPort{"127.0.0.1", 0});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    address_ = bound->ToString();

    TargetDef hello;
    hello.name = "hello-a";
    hello.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    hello.ready_timeout = std::chrono::milliseconds(5000);
    AddAgent("server", {"server"}, {hello});
    AddAgent("l1", {"load"}, {});
    AddAgent("l2", {"load"}, {});
    auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    stub_ = v1::Coordinator::NewStub(channel);
    WaitRegistered();
  }

  void TearDown() override {
    for (auto& [name, agent] : agents_) agent->Shutdown();
    if (coordinator_) coordinator_->Shutdown();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Starts an agent that registers with the coordinator and spools into <dir>/<name>/spool.
  AgentDaemon& AddAgent(const std::string& name, std::vector<std::string> roles,
                        std::vector<TargetDef> catalogue, std::vector<int> allowed_cpus = {}) {
    AgentConfig config;
    config.name = name;
    config.roles = std::move(roles);
    config.coordinator = address_;
    config.run_root = dir_ + "/" + name;
    config.spool_dir = SpoolDir(name);
    config.catalogue = std::move(catalogue);
    config.allowed_cpus = std::move(allowed_cpus);
    auto agent = std::make_unique<AgentDaemon>(RealSysEnv(), config);
    auto bound = agent->Start();
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    if (bound.ok()) addresses_[name] = bound->ToString();
    return *(agents_[name] = std::move(agent));
  }

  void WaitRegistered() {
    auto all = [&] {
      for (auto& [name, agent] : agents_) {
        if (!agent->registered()) return false;
      }
      return true;
    };
    ASSERT_TRUE(Eventually(all));
  }

  std::string SpoolDir(const std::string& agent) const { return dir_ + "/" + agent + "/spool"; }

  // Submits and watches to the end; returns the stored rows.
  std::vector<WindowRow> RunCampaign(const std::string& text, std::string* final_state) {
    v1::SubmitCampaignRequest req;
    req.set_spec_toml(text);
    req.set_source("multi.toml");
    v1::SubmitCampaignReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status status = stub_->SubmitCampaign(&ctx, req, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    grpc::ClientContext watch;
    watch.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::WatchCampaignRequest wreq;
    wreq.set_name(reply.name());
    auto reader = stub_->WatchCampaign(&watch, wreq);
    v1::CampaignEvent event;
    while (reader->Read(&event)) {
      if (event.has_finished()) *final_state = event.finished().state();
    }
    EXPECT_TRUE(reader->Finish().ok());
    WindowFilter filter;
    filter.campaign = reply.name();
    auto rows = coordinator_->store().ListWindows(filter);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<WindowRow>{};
  }

  // A registry of its own that knows the agents, for running one window by hand.
  std::unique_ptr<AgentRegistry> Registry() {
    auto registry = std::make_unique<AgentRegistry>();
    for (const auto& [name, address] : addresses_) {
      v1::RegisterAgentRequest req;
      req.set_name(name);
      req.set_address(address);
      req.add_roles(name == "server" ? "server" : "load");
      req.set_instance_proof("proof-" + name);
      (void)registry->Register(req);
    }
    return registry;
  }

  std::string dir_;
  std::string address_;
  std::unique_ptr<CoordinatorDaemon> coordinator_;
  std::map<std::string, std::unique_ptr<AgentDaemon>> agents_;
  std::map<std::string, std::string> addresses_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST(MultiLoadSplit, ConnectionsSplitEvenlyWithTheRemainderFirst) {
  EXPECT_EQ(SplitLoadLevel(5, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(SplitLoadLevel(7, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(SplitLoadLevel(4, 4), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(SplitLoadLevel(64, 1), (std::vector<int>{64}));
  EXPECT_EQ(SplitLoadLevel(0, 3), (std::vector<int>{0, 0, 0}));  // max_conns 0: no growth
}

TEST_F(MultiLoadTest, TwoLoadAgentsDriveOneWindowAndTheirResultsMerge) {
  std::string state;
  const std::vector<WindowRow> rows = RunCampaign(CampaignText("multi", R"(["l1", "l2"])"), &state);
  EXPECT_EQ(state, "done");
  ASSERT_EQ(rows.size(), 3u);  // c5, c1, r2000
  for (const WindowRow& row : rows) {
    SCOPED_TRACE(row.load_level);
    EXPECT_EQ(row.verdict, "valid") << row.reasons;
    EXPECT_EQ(row.server_agent, "server");
    ASSERT_GT(row.requests, 0u);
    nlohmann::json record = nlohmann::json::parse(row.load_record, nullptr, false);
    ASSERT_TRUE(record.is_object()) << row.load_record;
    nlohmann::json host = nlohmann::json::parse(row.load_host, nullptr, false);
    ASSERT_TRUE(host.is_object()) << row.load_host;

    // Every response and every timeout is in the stored histogram, merged or not.
    auto histogram = Histogram::Deserialize(row.histogram);
    ASSERT_TRUE(histogram.ok()) << histogram.status().ToString();
    EXPECT_EQ(histogram->Count(), row.requests + row.errors_timeout);
    EXPECT_EQ(static_cast<uint64_t>(row.p99_us), histogram->ValueAtPercentile(99));
    EXPECT_EQ(static_cast<uint64_t>(row.max_us), histogram->Max());
    uint64_t per_second = 0;
    auto samples = coordinator_->store().ListSamples(row.id);
    ASSERT_TRUE(samples.ok());
    for (const SampleRow& s : *samples) per_second += s.source == "load" ? s.requests : 0;
    EXPECT_EQ(per_second, row.requests) << "the agents' seconds add up to the window's requests";

    if (row.load_level == "c1") {
      // One connection cannot be split: l1 alone, the single-agent record.
      EXPECT_EQ(row.load_agent, "l1");
      EXPECT_FALSE(record.contains("agents")) << row.load_record;
      EXPECT_EQ(record.value("requests", uint64_t{0}), row.requests);
      continue;
    }
    EXPECT_EQ(row.load_agent, "l1,l2");
    ASSERT_TRUE(host.contains("agents")) << row.load_host;
    EXPECT_TRUE(host["agents"].contains("l1") && host["agents"].contains("l2"));
    ASSERT_TRUE(record.contains("agents")) << row.load_record;
    const nlohmann::json& agents = record["agents"];
    ASSERT_EQ(agents.size(), 2u) << row.load_record;
    ASSERT_TRUE(agents.contains("l1") && agents.contains("l2")) << row.load_record;
    const nlohmann::json& l1 = agents["l1"];
    const nlohmann::json& l2 = agents["l2"];
    EXPECT_GT(l1.value("requests", uint64_t{0}), 0u);
    EXPECT_GT(l2.value("requests", uint64_t{0}), 0u);
    EXPECT_EQ(l1.value("requests", uint64_t{0}) + l2.value("requests", uint64_t{0}), row.requests);
    EXPECT_EQ(l1.value("sent", uint64_t{0}) + l2.value("sent", uint64_t{0}),
              static_cast<uint64_t>(row.sent.value_or(-1)));
    EXPECT_FALSE(l1.contains("histogram")) << "the histograms are columns of their own";
    // The agents' load started together: the bound on the intervals' misalignment, which
    // includes how far apart their measured intervals began and ended, is recorded and stays
    // far from the stream's 30 s slack even on a busy machine.
    EXPECT_GT(row.align_error_ms, 0);
    EXPECT_LT(row.align_error_ms, 1000);

    if (row.load_level == "c5") {
      // 5 connections over two agents: 3 and 2, every connection open at once.
      EXPECT_EQ(l1.value("peak_connections", 0), 3) << l1.dump();
      EXPECT_EQ(l2.value("peak_connections", 0), 2) << l2.dump();
      EXPECT_FALSE(row.load_rate.has_value());
    } else {
      ASSERT_EQ(row.load_level, "r2000");
      // The rate is the total: each agent sends half of it over half the connections.
      EXPECT_DOUBLE_EQ(l1.value("rate", 0.0), 1000);
      EXPECT_DOUBLE_EQ(l2.value("rate", 0.0), 1000);
      EXPECT_EQ(l1.value("peak_connections", 0), 2) << l1.dump();
      EXPECT_EQ(l2.value("peak_connections", 0), 2) << l2.dump();
      ASSERT_TRUE(row.load_rate.has_value());
      EXPECT_DOUBLE_EQ(*row.load_rate, 2000);
      auto uncorrected = Histogram::Deserialize(row.histogram_uncorrected);
      ASSERT_TRUE(uncorrected.ok()) << uncorrected.status().ToString();
      EXPECT_EQ(uncorrected->Count(), histogram->Count());
      ASSERT_TRUE(row.p99_uncorrected_us.has_value());
      EXPECT_EQ(static_cast<uint64_t>(*row.p99_uncorrected_us), uncorrected->ValueAtPercentile(99));
    }
  }
  // Every agent's result was acknowledged once its window was stored.
  for (const char* agent : {"server", "l1", "l2"}) {
    EXPECT_TRUE(fs::is_directory(SpoolDir(agent))) << agent;
    EXPECT_TRUE(Spooled(SpoolDir(agent)).empty()) << agent << " still holds results";
  }
}

TEST_F(MultiLoadTest, OneLoadAgentKeepsTheSingleAgentRecord) {
  std::string text = CampaignText("single", R"(["l1"])");
  text.replace(text.find("connections = [5, 1]"), 20, "connections = [5]");
  std::string state;
  const std::vector<WindowRow> rows = RunCampaign(text, &state);
  EXPECT_EQ(state, "done");
  ASSERT_EQ(rows.size(), 2u);
  for (const WindowRow& row : rows) {
    SCOPED_TRACE(row.load_level);
    EXPECT_EQ(row.verdict, "valid") << row.reasons;
    EXPECT_EQ(row.load_agent, "l1");
    nlohmann::json record = nlohmann::json::parse(row.load_record, nullptr, false);
    ASSERT_TRUE(record.is_object()) << row.load_record;
    EXPECT_FALSE(record.contains("agents")) << row.load_record;
    EXPECT_EQ(record.value("requests", uint64_t{0}), row.requests);
    EXPECT_EQ(record.value("peak_connections", 0), row.load_level == "c5" ? 5 : 4);
    nlohmann::json host = nlohmann::json::parse(row.load_host, nullptr, false);
    EXPECT_FALSE(host.contains("agents")) << row.load_host;
  }
  for (const char* agent : {"server", "l1"}) {
    EXPECT_TRUE(Spooled(SpoolDir(agent)).empty()) << agent << " still holds results";
  }
}

// One window run by hand, to see what each agent spooled before it is acknowledged, and how a
// load agent whose stream fails fails the window.
TEST_F(MultiLoadTest, EveryAgentSpoolsItsResultAndAFailingAgentIsNamed) {
  // CPUs this process may use: "l3" is allowed only the first, the load is pinned to the second.
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  AddAgent("l3", {"load"}, {}, {cpus[0]});
  WaitRegistered();

  std::string text = CampaignText("by-hand", R"(["l1", "l2"])");
  text.replace(text.find("connections = [5, 1]"), 20, "connections = [4]");
  text.replace(text.find("[gates]"), 7,
               "[load]\ncpus = \"" + std::to_string(cpus[1]) + "\"\n[gates]");
  auto campaign = ParseCampaignText(text, "by-hand.toml", "");
  ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
  const std::vector<PlannedWindow> plan = ExpandMatrix(*campaign);
  ASSERT_FALSE(plan.empty());
  const PlannedWindow& planned = plan.front();
  ASSERT_EQ(LoadLevelLabel(planned), "c4");
  auto registry = Registry();
  Calibration calibration;
  TargetSession session;

  // l1 and l2: both spool their results under their own keys, the server its figures.
  AgentRegistry::Placement pair{"server", "127.0.0.1", "l1", {"l1", "l2"}};
  const std::string secret(32, 's');
  auto token = [&](int attempt) { return WindowToken(secret, SpoolKey(7, planned, attempt)); };
  WindowOutcome outcome =
      RunWindow(*registry, pair, *campaign, 7, planned, 1, token(1), calibration, session);
  EndSession(*registry, pair, session);
  EXPECT_EQ(outcome.row.verdict, "valid") << outcome.row.reasons;
  EXPECT_EQ(outcome.row.load_agent, "l1,l2");
  const std::string key = SpoolKey(7, planned, 1);
  std::set<SpoolEntry> spooled(outcome.spooled.begin(), outcome.spooled.end());
  EXPECT_EQ(spooled, (std::set<SpoolEntry>{{"l1", key + ".l1.load", token(1)},
                                           {"l2", key + ".l2.load", token(1)},
                                           {"server", key + ".server", token(1)}}));
  EXPECT_EQ(Spooled(SpoolDir("l1")), std::set<std::string>{key + ".l1.load"});
  EXPECT_EQ(Spooled(SpoolDir("l2")), std::set<std::string>{key + ".l2.load"});
  EXPECT_EQ(Spooled(SpoolDir("server")), std::set<std::string>{key + ".server"});
  for (const SpoolEntry& entry : outcome.spooled) {
    v1::AcknowledgeRequest ack;
    v1::SpoolAck* item = ack.add_acks();
    item->set_key(entry.key);
    item->set_window(entry.window);
    v1::AcknowledgeReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    EXPECT_TRUE(registry->Stub(entry.agent)->Acknowledge(&ctx, ack, &reply).ok());
  }
  for (const char* agent : {"server", "l1", "l2"}) {
    EXPECT_TRUE(Spooled(SpoolDir(agent)).empty()) << agent;
  }

  // l3 may not use the load CPU: the check before the window (its self-test on the load CPUs)
  // is refused, and with it the window, naming l3, before any load is sent; nothing is spooled.
  AgentRegistry::Placement broken{"server", "127.0.0.1", "l1", {"l1", "l3"}};
  outcome = RunWindow(*registry, broken, *campaign, 7, planned, 2, token(2), calibration, session);
  EndSession(*registry, broken, session);
  EXPECT_EQ(outcome.row.verdict, "failed");
  EXPECT_NE(outcome.row.reasons.find("check_host: agent l3: cpus 1 are outside agent"),
            std::string::npos)
      << outcome.row.reasons;
  EXPECT_TRUE(outcome.spooled.empty()) << outcome.row.reasons;
  EXPECT_EQ(Spooled(SpoolDir("l1")), std::set<std::string>{});
  EXPECT_EQ(Spooled(SpoolDir("l3")), std::set<std::string>{});

  // An agent nobody can reach is lost to the window, named.
  v1::RegisterAgentRequest ghost;
  ghost.set_name("ghost");
  ghost.set_address("127.0.0.1:1");
  ghost.add_roles("load");
  ghost.set_instance_proof("ghost-proof");
  (void)registry->Register(ghost);
  AgentRegistry::Placement lost{"server", "127.0.0.1", "l1", {"l1", "ghost"}};
  outcome = RunWindow(*registry, lost, *campaign, 7, planned, 3, token(3), calibration, session);
  EndSession(*registry, lost, session);
  EXPECT_EQ(outcome.row.verdict, "failed");
  EXPECT_NE(outcome.row.reasons.find("agent_lost: check_host: agent ghost: "), std::string::npos)
      << outcome.row.reasons;
}

}  // namespace
}  // namespace benchlab

// The scheduler against fake agents in process (gRPC on loopback): every call of a window to an
// agent, and every acknowledgement, carries the window's token; and the coordinator's own
// server refuses a plan too large to build before it builds it.
#include "coordinator/server/scheduler.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "analysis/report_format.h"
#include "benchlab/v1/agent.grpc.pb.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/histogram.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/channel.h"
#include "coordinator/server/coordinator_daemon.h"
#include "coordinator/server/metrics.h"
#include "coordinator/window_token.h"
#include "rpc/status.h"
#include "tests/unit/support/answering_agent.h"
#include "tests/unit/support/eventually.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// An agent that measures nothing: it answers every call at once and records what it was sent.
class FakeAgent final : public AnsweringAgent {
 public:
  struct Call {
    std::string rpc;     // "StartTarget", "Mark BEGIN", "Mark END", "StopTarget", "RunLoad",
                         // "EndCampaign"
    std::string window;  // the token it carried
    std::string key;     // RunLoad and Mark END: the spool key; StartTarget, EndCampaign: the
                         // campaign
  };

  grpc::Status StartTarget(grpc::ServerContext*, const v1::StartTargetRequest* req,
                           v1::StartTargetReply* reply) override {
    Record({"StartTarget", req->window(), req->campaign()});
    reply->set_handle("h-" + req->window());
    reply->set_port(8080);
    return grpc::Status::OK;
  }
  grpc::Status StopTarget(grpc::ServerContext*, const v1::StopTargetRequest* req,
                          v1::StopTargetReply*) override {
    Record({"StopTarget", req->window(), ""});
    return grpc::Status::OK;
  }
  grpc::Status EndCampaign(grpc::ServerContext*, const v1::EndCampaignRequest* req,
                           v1::EndCampaignReply*) override {
    Record({"EndCampaign", "", req->campaign()});
    return grpc::Status::OK;
  }
  grpc::Status Mark(grpc::ServerContext*, const v1::MarkRequest* req,
                    v1::MarkReply* reply) override {
    const bool end = req->kind() == v1::MarkRequest::END;
    Record({end ? "Mark END" : "Mark BEGIN", req->window(), req->spool_key()});
    reply->set_target_alive(true);
    reply->set_cpu_user_s(0.5);
    return grpc::Status::OK;
  }
  grpc::Status RunLoad(grpc::ServerContext*, const v1::RunLoadRequest* req,
                       grpc::ServerWriter<v1::RunLoadEvent>* writer) override {
    Record({"RunLoad", req->window(), req->spool_key()});
    if (!run_load_fails.ok()) return rpc::ToGrpcStatus(run_load_fails);
    v1::RunLoadEvent result = LoadResultEvent(1000, 1000);
    result.mutable_result()->mutable_errors()->set_body_too_large(3);
    // The first `refused_loads` windows fail the error_rate gate: 500 refused connections.
    if (refused_loads.fetch_sub(1) > 0) result.mutable_result()->mutable_errors()->set_connect(500);
    WriteLoad(writer, result);
    return grpc::Status::OK;
  }
  grpc::Status DescribeHost(grpc::ServerContext*, const v1::DescribeHostRequest*,
                            v1::DescribeHostReply* reply) override {
    if (described_as.empty()) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    reply->mutable_host()->set_hostname(described_as);
    v1::HostFinding* f = reply->mutable_host()->add_findings();
    f->set_name("aslr");
    f->set_value("2");
    f->set_status("warn");
    f->set_why("randomised addresses move code and data between runs");
    return grpc::Status::OK;
  }
  grpc::Status Acknowledge(grpc::ServerContext*, const v1::AcknowledgeRequest* req,
                           v1::AcknowledgeReply*) override {
    std::lock_guard lock(mu_);
    for (const auto& ack : req->acks()) acks_[ack.key()] = ack.window();
    return grpc::Status::OK;
  }

  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

  Status run_load_fails;              // set before the scheduler starts: what every RunLoad returns
  std::atomic<int> refused_loads{0};  // how many RunLoads, first to last, the gates will refuse
  std::string described_as;  // set before the scheduler starts: DescribeHost's hostname; "" none
  std::map<std::string, std::string> acks() {
    std::lock_guard lock(mu_);
    return acks_;
  }

 private:
  void Record(Call call) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(call));
  }
  std::mutex mu_;
  std::vector<Call> calls_;
  std::map<std::string, std::string> acks_;  // key -> window token
};

using Served = ::benchlab::Served<FakeAgent>;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_scheduler_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

v1::RegisterAgentRequest Registration(const std::string& name, const std::string& role,
                                      const std::string& address) {
  v1::RegisterAgentRequest req;
  req.set_name(name);
  req.add_roles(role);
  req.set_address(address);
  if (role == "server") req.add_catalogue("t1");
  req.set_instance_proof("proof-" + name);
  return req;
}

// Two windows of one target on one process (fresh_process = "round"): the second window's Mark
// and the process's StopTarget carry the token of the window that started it.
constexpr const char* kTwoWindows = R"(name = "tokens"
baseline = "t1"
[matrix]
connections = [1, 2]
rounds = 1
fresh_process = "round"
warmup = "0s"
duration = "10ms"
[[target]]
name = "t1"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

// Submits kTwoWindows to a scheduler over the fake agents `server` and `load` and waits, 20 s at
// most, for the campaign to end: its final state ("" when it could not be submitted).
std::string RunTwoWindows(Store& store, Served& server, Served& load, int64_t* campaign_id,
                          CoordinatorMetrics* metrics = nullptr,
                          const std::string& spec = kTwoWindows) {
  AgentRegistry registry;
  EXPECT_EQ(registry.Register(Registration("srv", "server", server.address)),
            Admission::kRegistered);
  EXPECT_EQ(registry.Register(Registration("ld", "load", load.address)), Admission::kRegistered);
  Scheduler scheduler(store, registry, kDefaultMaxWindows, metrics);
  auto submitted = scheduler.Submit(spec, "tokens.toml", "");
  EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();
  if (!submitted.ok()) return "";
  *campaign_id = submitted->campaign_id;
  scheduler.Start();
  std::string state;
  Eventually(
      [&] {
        auto row = store.FindCampaign("tokens");
        if (row.ok() && row->has_value()) state = (*row)->state;
        return state == "done" || state == "failed";
      },
      std::chrono::milliseconds(20000));
  scheduler.Stop();
  return state;
}

// Each stored window moves the counters of /metrics: by its verdict, and its duration.
TEST_F(SchedulerTest, EachStoredWindowIsCountedInTheMetrics) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CoordinatorMetrics metrics((dir_ / "bench.db").string());
  Served server, load;
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id, &metrics), "done");
  WindowFilter filter;
  filter.campaign = "tokens";
  auto windows = (*store)->ListWindows(filter);
  ASSERT_TRUE(windows.ok());
  ASSERT_EQ(windows->size(), 2u);
  AgentRegistry none;
  const std::string body = metrics.Scrape(**store, none);
  const std::string verdict = (*windows)[0].verdict;
  EXPECT_NE(body.find("benchlab_windows_total{verdict=\"" + verdict + "\"} 2\n"), std::string::npos)
      << body;
  EXPECT_NE(body.find("benchlab_window_duration_seconds_count{verdict=\"" + verdict + "\"} 2\n"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("benchlab_campaigns{state=\"done\"} 1\n"), std::string::npos) << body;
}

TEST_F(SchedulerTest, EveryCallOfAWindowCarriesItsToken) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id), "done");

  auto campaign = ParseCampaignText(kTwoWindows, "tokens.toml", "");
  ASSERT_TRUE(campaign.ok());
  const std::vector<PlannedWindow> plan = ExpandMatrix(*campaign);
  ASSERT_EQ(plan.size(), 2u);
  const std::string key1 = SpoolKey(campaign_id, plan[0], 1);
  const std::string key2 = SpoolKey(campaign_id, plan[1], 1);
  const std::string token1 = WindowToken((*store)->lab_secret(), key1);
  const std::string token2 = WindowToken((*store)->lab_secret(), key2);
  ASSERT_NE(token1, token2);

  std::vector<std::string> server_calls;
  for (const auto& call : server.agent.calls()) {
    server_calls.push_back(call.rpc + " " + call.window + " " + call.key);
  }
  // The campaign's key at the agents names this run of it, and its end is told to the server
  // agent, after the last window, so that its side services stop (docs/services.md).
  const std::string campaign_key = "tokens#" + std::to_string(campaign_id);
  EXPECT_EQ(server_calls, (std::vector<std::string>{
                              "StartTarget " + token1 + " " + campaign_key,
                              "Mark BEGIN " + token1 + " ",
                              "Mark END " + token1 + " " + key1,
                              "Mark BEGIN " + token1 + " ",
                              "Mark END " + token1 + " " + key2,
                              "StopTarget " + token1 + " ",
                              "EndCampaign  " + campaign_key,
                          }));
  std::vector<std::string> load_calls;
  for (const auto& call : load.agent.calls()) {
    load_calls.push_back(call.rpc + " " + call.window + " " + call.key);
  }
  EXPECT_EQ(load_calls, (std::vector<std::string>{"RunLoad " + token1 + " " + key1,
                                                  "RunLoad " + token2 + " " + key2}));
  // Each result is acknowledged with the token it was spooled under.
  EXPECT_EQ(server.agent.acks(), (std::map<std::string, std::string>{{key1 + ".server", token1},
                                                                     {key2 + ".server", token1}}));
  EXPECT_EQ(load.agent.acks(), (std::map<std::string, std::string>{{key1 + ".load", token1},
                                                                   {key2 + ".load", token2}}));

  // What the load agent counted as over its body limit is stored, and is an error.
  auto rows = (*store)->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].errors_body_too_large, 3u);
  EXPECT_EQ((*rows)[0].errors, 3u);
}

// A failure the load agent's own code reports as UNAVAILABLE (a name it could not resolve) is
// the window's failure: stored once, not taken for a lost agent and measured again and again.
TEST_F(SchedulerTest, UnavailableFromAnAgentsHandlerIsNotMeasuredAgain) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  load.agent.run_load_fails = Status::Unavailable("resolve t1.invalid: Name or service not known");
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id), "done");
  auto rows = (*store)->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u) << "one attempt per window";
  for (const WindowRow& w : *rows) {
    EXPECT_EQ(w.attempt, 1);
    EXPECT_EQ(w.verdict, "failed");
    EXPECT_EQ(w.reasons,
              R"(["run_load: agent ld: resolve t1.invalid: Name or service not known"])");
  }
  size_t run_loads = 0;
  for (const auto& call : load.agent.calls()) run_loads += call.rpc == "RunLoad";
  EXPECT_EQ(run_loads, 2u);
}

// The windows of campaign "tokens" as (round-and-level, attempt, verdict), in the order stored.
std::vector<std::string> StoredAttempts(Store& store) {
  WindowFilter filter;
  filter.campaign = "tokens";
  auto rows = store.ListWindows(filter);
  EXPECT_TRUE(rows.ok());
  std::vector<std::string> out;
  if (!rows.ok()) return out;
  for (const WindowRow& w : *rows) {
    out.push_back(w.load_level + " " + std::to_string(w.attempt) + " " + w.verdict);
  }
  return out;
}

// A window a gate refused is measured again at once, before the next window of its round
// (docs/gates.md, "A refusal costs a window, not a round"); the report counts it.
TEST_F(SchedulerTest, ARefusedWindowIsMeasuredAgainAtOnce) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  load.agent.refused_loads = 1;
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id), "done");
  EXPECT_EQ(StoredAttempts(**store),
            (std::vector<std::string>{"c1 1 invalid", "c1 2 valid", "c2 1 valid"}));
  auto input = LoadReportInput(**store, "tokens");
  ASSERT_TRUE(input.ok());
  auto json = nlohmann::json::parse(FormatReportJson(*input));
  EXPECT_EQ(json["remeasured"]["windows"], 1);
  EXPECT_EQ(json["remeasured"]["by_gate"]["error_rate"], 1);
}

// Twice in a row at most per window, and at most the campaign's budget: the default for two
// planned windows is 2, so with every load refused the first window takes three attempts and
// the second one.
TEST_F(SchedulerTest, MeasuringAgainStopsAtTwiceAWindowAndAtTheBudget) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  load.agent.refused_loads = 100;
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id), "done");
  EXPECT_EQ(StoredAttempts(**store), (std::vector<std::string>{"c1 1 invalid", "c1 2 invalid",
                                                               "c1 3 invalid", "c2 1 invalid"}));
}

TEST_F(SchedulerTest, RemeasureMaxZeroMeasuresNothingAgain) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  load.agent.refused_loads = 1;
  int64_t campaign_id = 0;
  const std::string spec = std::string(kTwoWindows) + "[gates]\nremeasure_max = 0\n";
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id, nullptr, spec), "done");
  EXPECT_EQ(StoredAttempts(**store), (std::vector<std::string>{"c1 1 invalid", "c2 1 valid"}));
}

// At a campaign's start each agent describes its host again; its windows carry what it said,
// the host check's findings included (docs/host.md). An agent that cannot describe it keeps its
// registration's facts, and the campaign runs.
TEST_F(SchedulerTest, AgentsDescribeTheirHostAtTheCampaignsStart) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Served server, load;
  server.agent.described_as = "described-at-start";
  int64_t campaign_id = 0;
  ASSERT_EQ(RunTwoWindows(**store, server, load, &campaign_id), "done");
  auto rows = (*store)->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  for (const WindowRow& w : *rows) {
    auto host = nlohmann::json::parse(w.server_host);
    EXPECT_EQ(host["hostname"], "described-at-start") << w.server_host;
    ASSERT_TRUE(host["findings"].is_array()) << w.server_host;
    EXPECT_EQ(host["findings"][0]["name"], "aslr");
    EXPECT_EQ(host["findings"][0]["status"], "warn");
    EXPECT_EQ(w.load_host.find("described-at-start"), std::string::npos) << w.load_host;
  }
}

// 10 targets x 20 scenarios x 30 levels x 200 rounds + 5 noise windows: 1.2 million windows,
// refused from their count before a single one is built.
std::string HugeCampaign() {
  std::string text = "name = \"huge\"\nbaseline = \"t0\"\n[matrix]\nconnections = [";
  for (int c = 1; c <= 30; ++c) text += (c > 1 ? ", " : "") + std::to_string(c);
  text += "]\nrounds = 200\n[noise]\ntarget = \"t0\"\nscenario = \"s0\"\nwindows = 5\n";
  for (int t = 0; t < 10; ++t) text += "[[target]]\nname = \"t" + std::to_string(t) + "\"\n";
  for (int s = 0; s < 20; ++s) {
    text += "[[scenario]]\nname = \"s" + std::to_string(s) +
            "\"\npath = \"/\"\nexpect = { status = 200 }\n";
  }
  return text;
}

TEST_F(SchedulerTest, APlanOverTheLimitIsRefusedBeforeItIsBuilt) {
  auto daemon = CoordinatorDaemon::Create((dir_ / "bench.db").string());
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  auto bound = (*daemon)->Start({"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  auto stub = v1::Coordinator::NewStub(MakeChannel(bound->ToString()));

  v1::SubmitCampaignRequest req;
  req.set_spec_toml(HugeCampaign());
  req.set_source("campaign.toml");
  v1::SubmitCampaignReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const auto start = std::chrono::steady_clock::now();
  grpc::Status status = stub->SubmitCampaign(&ctx, req, &reply);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "campaign.toml: the plan has targets 10 × scenarios 20 × load levels 30 × rounds 200 "
            "(+ noise windows 5) = 1,200,005 windows, over the limit of 100,000 (--max-windows)");
  // Parsing the text is all it costs (milliseconds); 2 s leaves room for a loaded machine.
  EXPECT_LT(took, std::chrono::seconds(2));

  v1::ListCampaignsReply campaigns;
  grpc::ClientContext list_ctx;
  list_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(stub->ListCampaigns(&list_ctx, v1::ListCampaignsRequest(), &campaigns).ok())
      << "the coordinator still answers";
  EXPECT_EQ(campaigns.campaigns_size(), 0);
  (*daemon)->Shutdown();
}

TEST_F(SchedulerTest, TheLimitIsTheCoordinators) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok());
  AgentRegistry registry;
  Scheduler small(**store, registry, 1);
  auto refused = small.Submit(kTwoWindows, "tokens.toml", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "tokens.toml: the plan has targets 1 × scenarios 1 × load levels 2 × rounds 1 = 2 "
            "windows, over the limit of 1 (--max-windows)");
  Scheduler enough(**store, registry, 2);
  auto submitted = enough.Submit(kTwoWindows, "tokens.toml", "");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  EXPECT_EQ(submitted->total_windows, 2);
}

// Nothing starts that cannot finish: a target no registered server agent has is refused at
// once, with why, and nothing is stored.
TEST_F(SchedulerTest, ACampaignNoRegisteredAgentCanStartIsRefused) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok());
  AgentRegistry registry;
  ASSERT_EQ(registry.Register(Registration("srv", "server", "127.0.0.1:1")),
            Admission::kRegistered);
  ASSERT_EQ(registry.Register(Registration("ld", "load", "127.0.0.1:2")), Admission::kRegistered);
  Scheduler scheduler(**store, registry);
  std::string other = kTwoWindows;
  for (size_t at = other.find("t1"); at != std::string::npos; at = other.find("t1")) {
    other.replace(at, 2, "t2");
  }
  auto check = scheduler.Check(other, "tokens.toml", "");
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->problems, (std::vector<std::string>{"tokens.toml: placement: no registered "
                                                       "server agent can start t2: srv lacks t2"}));
  EXPECT_EQ(check->total_windows, 2);
  auto refused = scheduler.Submit(other, "tokens.toml", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), check->problems[0]);
  auto campaigns = (*store)->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  EXPECT_TRUE(campaigns->empty());
  // The file's own errors come first, as Submit gives them.
  auto broken = scheduler.Check("name = 1\n", "broken.toml", "");
  EXPECT_EQ(broken.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(scheduler.Check(kTwoWindows, "tokens.toml", "")->problems.empty());
}

// A campaign waiting for an agent that has not registered is queued, and says what it waits for.
TEST_F(SchedulerTest, ACampaignWaitingForAgentsSaysWhy) {
  auto store = Store::Open((dir_ / "bench.db").string());
  ASSERT_TRUE(store.ok());
  AgentRegistry registry;
  Scheduler scheduler(**store, registry);
  auto submitted = scheduler.Submit(kTwoWindows, "tokens.toml", "");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  EXPECT_EQ(scheduler.WaitingFor(submitted->campaign_id), "");
  scheduler.Start();
  EXPECT_TRUE(Eventually([&] {
    return scheduler.WaitingFor(submitted->campaign_id) ==
           "no ready server agent has targets t1: no agent has the server role";
  }));
  ASSERT_TRUE((*store)->SetCampaignState(submitted->campaign_id, CampaignState::kCancelled).ok());
  scheduler.Notify();
  EXPECT_TRUE(Eventually([&] { return scheduler.WaitingFor(submitted->campaign_id).empty(); }));
  scheduler.Stop();
}

// pairs = "all" runs the whole plan on every pair it finds: the limit counts every pair once
// the campaign is placed, so a fleet cannot multiply a plan past --max-windows.
TEST_F(SchedulerTest, TheLimitCountsEveryPairThatAllPairsFinds) {
  Served srv1, srv2, ld1, ld2;
  const std::string fleet = std::string(kTwoWindows)
                                .replace(std::string(kTwoWindows).find("[[target]]"), 0,
                                         "[placement]\npairs = \"all\"\n");
  auto run = [&](uint64_t max_windows, const std::string& db) {
    auto store = Store::Open((dir_ / db).string());
    EXPECT_TRUE(store.ok());
    AgentRegistry registry;
    const std::tuple<const char*, const char*, Served*> agents[] = {{"srv1", "server", &srv1},
                                                                    {"srv2", "server", &srv2},
                                                                    {"ld1", "load", &ld1},
                                                                    {"ld2", "load", &ld2}};
    for (const auto& [name, role, served] : agents) {
      EXPECT_EQ(registry.Register(Registration(name, role, served->address)),
                Admission::kRegistered);
    }
    Scheduler scheduler(**store, registry, max_windows);
    auto submitted = scheduler.Submit(fleet, "fleet.toml", "");
    EXPECT_TRUE(submitted.ok()) << "one pair's plan (2 windows) is within the limit";
    scheduler.Start();
    CampaignRow row;
    Eventually(
        [&] {
          auto found = (*store)->FindCampaign("tokens");
          if (found.ok() && found->has_value()) row = **found;
          return row.state == "done" || row.state == "failed";
        },
        std::chrono::milliseconds(20000));
    scheduler.Stop();
    return row;
  };

  CampaignRow over = run(3, "over.db");
  EXPECT_EQ(over.state, "failed");
  EXPECT_EQ(over.error,
            "fleet.toml: the plan has (targets 1 × scenarios 1 × load levels 2 × rounds 1) × "
            "pairs 2 = 4 windows, over the limit of 3 (--max-windows)");

  CampaignRow within = run(4, "within.db");
  EXPECT_EQ(within.state, "done") << within.error;
}

}  // namespace
}  // namespace benchlab

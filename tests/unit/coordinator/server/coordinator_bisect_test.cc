// Bisections on a coordinator (coordinator/server/coordinator_bisect.h, docs/methodology.md "On a
// coordinator"): a scheduler over a fake fleet agent in process (gRPC on loopback) whose
// catalogue target "app" builds commits of a range of 16, the ninth and later 20% costlier per
// request and the twelfth failing to build. The coordinator lists the range from the agent, queues
// each look on the pair, and names the ninth commit; a coordinator that was not there when a
// look ended (stopped, then started again) goes on from the store alone; bad requests are
// refused before anything is stored.
#include "coordinator/server/coordinator_bisect.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "coordinator/server/agent_registry.h"
#include "coordinator/server/confirmation.h"
#include "coordinator/server/scheduler.h"
#include "rpc/status.h"
#include "tests/unit/support/answering_agent.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr int kCommits = 16;
constexpr int kCulprit = 9;  // the first commit that costs 20% more
constexpr int kBroken = 11;  // does not build: the search passes over it

std::string Oid(int i) {
  char buf[41];
  std::snprintf(buf, sizeof buf, "%040x", 0xabc000 + i);
  return buf;
}

// Serves both roles. StartTarget with a commit "builds" it: the commit's index decides its cost.
class CommitsAgent final : public AnsweringAgent {
 public:
  grpc::Status ListCommits(grpc::ServerContext*, const v1::ListCommitsRequest* req,
                           v1::ListCommitsReply* reply) override {
    ++lists_;
    if (req->target() != "app") return {grpc::StatusCode::NOT_FOUND, "no target in catalogue"};
    int good = -1, bad = -1;
    for (int i = 0; i < kCommits; ++i) {
      if (req->good() == Oid(i) || (req->good() == "v0" && i == 0)) good = i;
      if (req->bad() == Oid(i) || (req->bad() == "main" && i == kCommits - 1)) bad = i;
    }
    if (good < 0) {
      return rpc::ToGrpcStatus(Status::NotFound("good: \"" + req->good() + "\" names no commit"));
    }
    if (bad < 0) return rpc::ToGrpcStatus(Status::NotFound("bad: names no commit"));
    for (int i = good; i <= bad; ++i) {
      auto* c = reply->add_commits();
      c->set_oid(Oid(i));
      c->set_subject(subject_override_.empty() ? "change " + std::to_string(i) : subject_override_);
    }
    return grpc::Status::OK;
  }
  grpc::Status StartTarget(grpc::ServerContext*, const v1::StartTargetRequest* req,
                           v1::StartTargetReply* reply) override {
    std::lock_guard lock(mu_);
    int index = -1;
    for (int i = 0; i < kCommits; ++i) {
      if (req->commit() == Oid(i)) index = i;
    }
    if (req->target() != "app" || index < 0) return {grpc::StatusCode::NOT_FOUND, "no such build"};
    if (index == kBroken) {
      return rpc::ToGrpcStatus(Status::FailedPrecondition("build of " + Oid(index).substr(0, 12) +
                                                          " failed: step 1 of 1 (make) exited 2"),
                               rpc::kBuildFailedReason);
    }
    ++started_[index];
    const int port = 9000 + static_cast<int>(ports_.size());
    ports_[port] = index;
    handles_["h-" + std::to_string(port)] = index;
    reply->set_handle("h-" + std::to_string(port));
    reply->set_port(port);
    reply->set_version("built");
    reply->set_commit(Oid(index));
    return grpc::Status::OK;
  }
  grpc::Status Mark(grpc::ServerContext*, const v1::MarkRequest* req,
                    v1::MarkReply* reply) override {
    std::lock_guard lock(mu_);
    reply->set_target_alive(true);
    if (req->kind() == v1::MarkRequest::END) {
      reply->set_cpu_user_s(kRequests * CostLocked(handles_[req->handle()]) / 1e6);
    }
    return grpc::Status::OK;
  }
  grpc::Status RunLoad(grpc::ServerContext*, const v1::RunLoadRequest* req,
                       grpc::ServerWriter<v1::RunLoadEvent>* writer) override {
    double cost = 0;
    {
      std::lock_guard lock(mu_);
      cost = CostLocked(ports_[req->port()]);
    }
    WriteLoad(writer, LoadResultEvent(kRequests, 1e6 / cost));
    return grpc::Status::OK;
  }
  std::map<int, int> started() {
    std::lock_guard lock(mu_);
    return started_;
  }
  std::atomic<int> lists_{0};
  std::string subject_override_;

 private:
  static constexpr int kRequests = 10000;
  double CostLocked(int index) {
    const double wobble = 1.0 + 0.01 * std::sin(2.0 * static_cast<double>(calls_++));
    return (index >= kCulprit ? 12.0 : 10.0) * wobble;
  }
  std::mutex mu_;
  uint64_t calls_ = 0;
  std::map<int, int> ports_;
  std::map<std::string, int> handles_;
  std::map<int, int> started_;  // commit index -> windows started
};

constexpr const char* kCampaign = R"(name = "app-cpu"
baseline = "app"
[matrix]
connections = [8]
rounds = 3
warmup = "0s"
duration = "10ms"
[placement]
server = "srv"
load = "ld"
[gates]
mode = "warn"
[[target]]
name = "app"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

class CoordinatorBisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_coordinator_bisect_" + std::string(info->name()) + "_" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "lab.db").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    for (const auto& [name, role] : {std::pair{"srv", "server"}, std::pair{"ld", "load"}}) {
      v1::RegisterAgentRequest req;
      req.set_name(name);
      req.add_roles(role);
      req.set_address(served_.address);
      if (std::string(role) == "server") {
        req.add_catalogue("app");
        (*req.mutable_versions())["app"] = "built";
      }
      req.set_instance_proof(std::string("proof-") + name);
      ASSERT_EQ(registry_.Register(req), Admission::kRegistered);
    }
    StartCoordinator();
  }
  void TearDown() override {
    scheduler_->Stop();
    fs::remove_all(dir_);
  }

  // A scheduler and the bisections over the same store, as a coordinator that starts.
  void StartCoordinator() {
    scheduler_ = std::make_unique<Scheduler>(*store_, registry_);
    bisections_ = std::make_unique<CoordinatorBisections>(*store_, registry_, *scheduler_);
    scheduler_->OnCampaignEnded([this](int64_t id) {
      if (hook_on_) bisections_->CampaignEnded(id);
      ++hooks_run_;
    });
    scheduler_->Start();
  }
  void StopCoordinator() {
    scheduler_->Stop();
    bisections_.reset();
    scheduler_.reset();
  }

  BisectionRequest ByHand() {
    BisectionRequest r;
    r.campaign_toml = kCampaign;
    r.campaign_source = "app-cpu.toml";
    r.target = "app";
    r.good = "v0";
    r.bad = "main";
    return r;
  }

  // Until no campaign is queued or running and each one's end has been handled (60 s at most).
  void WaitForQuiet() {
    for (int i = 0; i < 1200; ++i) {
      auto all = store_->ListCampaigns();
      ASSERT_TRUE(all.ok());
      bool busy = false;
      int ended = 0;
      for (const CampaignRow& c : *all) {
        busy = busy || c.Is(CampaignState::kQueued) || c.Is(CampaignState::kRunning);
        ended += !c.Is(CampaignState::kQueued) && !c.Is(CampaignState::kRunning);
      }
      if (!busy && hooks_run_.load() >= ended) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "campaigns still queued or running after 60 s";
  }

  BisectionRecord Record(int64_t id) {
    auto record = store_->LoadBisection(id);
    EXPECT_TRUE(record.ok() && record->has_value());
    return record.ok() && record->has_value() ? **record : BisectionRecord{};
  }

  void ExpectFound(const BisectionRecord& record) {
    const BisectionRow& b = record.bisection;
    EXPECT_EQ(b.state, "found") << b.result;
    EXPECT_EQ(b.culprit, Oid(kCulprit));
    EXPECT_NE(b.result.find("first bad commit: " + Oid(kCulprit) + " change 9"), std::string::npos)
        << b.result;
    ASSERT_TRUE(b.size && b.size_low && b.size_high);
    EXPECT_LE(*b.size_low, 1.2);  // bad / good
    EXPECT_GE(*b.size_high, 1.2);
    EXPECT_EQ(b.culprit_campaign,
              "bisect-" + std::to_string(b.id) + "-culprit-" + Oid(kCulprit).substr(0, 12));
    std::set<std::string> decided;
    for (const BisectStepRow& s : record.steps) {
      EXPECT_TRUE(decided.insert(s.oid).second) << s.oid << " decided twice";
      EXPECT_FALSE(s.campaigns.empty());
      const int index = s.position;
      if (index == kBroken) {
        EXPECT_EQ(s.decision, "build failed");
      } else {
        std::string figures;
        for (const auto& f : s.figures) {
          figures += " [" + std::to_string(f[0]) + " " + std::to_string(f[1]) + " " +
                     std::to_string(f[2]) + "]";
        }
        EXPECT_EQ(s.decision, index >= kCulprit ? "bad" : "good")
            << "commit " << index << ", candidate good bad per round:" << figures;
      }
    }
    EXPECT_TRUE(decided.contains(Oid(kBroken)));  // met on the way, and passed over
    EXPECT_LE(record.steps.size(), 6u);           // log2(15) + 2
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  AgentRegistry registry_;
  Served<CommitsAgent> served_;
  CommitsAgent& agent_ = served_.agent;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<CoordinatorBisections> bisections_;
  std::atomic<int> hooks_run_{0};
  std::atomic<bool> hook_on_{true};
};

TEST_F(CoordinatorBisectTest, FindsTheCulpritOnItsPairFromTheRangeTheAgentListed) {
  auto started = bisections_->Start(ByHand());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_EQ(started->commits, kCommits);
  EXPECT_NE(started->summary.find("on srv/ld"), std::string::npos) << started->summary;
  WaitForQuiet();
  const BisectionRecord record = Record(started->id);
  ExpectFound(record);
  EXPECT_EQ(record.bisection.pair, "srv/ld");
  EXPECT_EQ(agent_.lists_.load(), 1);  // the range was listed once and stored
  // Every look ran on the pair, the three builds of "app" at their commits.
  auto campaigns = store_->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  int looks = 0;
  for (const CampaignRow& c : *campaigns) {
    ASSERT_EQ(c.name.rfind("bisect-" + std::to_string(started->id) + "-", 0), 0u) << c.name;
    EXPECT_EQ(c.state, "done") << c.name << ": " << c.error;
    EXPECT_EQ(PairAgents(c.placement, "").value_or(std::pair<std::string, std::string>{}),
              (std::pair<std::string, std::string>{"srv", "ld"}));
    ++looks;
  }
  // Each commit was built and run only in the looks at it (the ends in every look).
  EXPECT_GE(looks, static_cast<int>(record.steps.size()) + 1);
  auto audit = store_->ListAudit("");
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(static_cast<int>(audit->size()), looks);  // each look: the coordinator's submission
  for (const AuditRow& a : *audit) {
    EXPECT_EQ(a.identity, "coordinator");
    EXPECT_EQ(a.outcome, "ok");
  }
}

// The coordinator was down when looks ended: a new one judges them from the store and goes on,
// without measuring a decided commit again.
TEST_F(CoordinatorBisectTest, ACoordinatorThatStartsAgainGoesOnFromTheStore) {
  hook_on_ = false;  // nobody hears the looks end
  auto started = bisections_->Start(ByHand());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WaitForQuiet();
  EXPECT_EQ(Record(started->id).steps.size(), 0u);  // its first look ended, unjudged
  StopCoordinator();
  hook_on_ = true;
  StartCoordinator();
  bisections_->ResumeAll();
  WaitForQuiet();
  // ResumeAll's own step queued the next look, whose end the hook heard, and so on.
  const BisectionRecord record = Record(started->id);
  ExpectFound(record);
  EXPECT_EQ(agent_.lists_.load(), 1);  // the stored range, not the agent's again
  // A finished search is left alone.
  bisections_->ResumeAll();
  WaitForQuiet();
  EXPECT_EQ(Record(started->id).steps.size(), record.steps.size());
}

TEST_F(CoordinatorBisectTest, RefusesWhatItCannotBisectBeforeStoringAnything) {
  auto expect_refused = [&](BisectionRequest r, StatusCode code, const std::string& says) {
    auto started = bisections_->Start(r);
    ASSERT_FALSE(started.ok()) << says;
    EXPECT_EQ(started.status().code(), code) << started.status().ToString();
    EXPECT_NE(started.status().message().find(says), std::string::npos)
        << started.status().message();
  };
  BisectionRequest r = ByHand();
  r.good = "nosuchrev";
  expect_refused(r, StatusCode::kNotFound, "good: \"nosuchrev\" names no commit");
  r = ByHand();
  r.good = "--upload-pack=x";
  expect_refused(r, StatusCode::kInvalidArgument, "good: ");
  r = ByHand();
  r.target = "other";
  expect_refused(r, StatusCode::kInvalidArgument, "has no target \"other\"");
  r = ByHand();
  r.campaign_toml = std::string(kCampaign).replace(std::string(kCampaign).find("[placement]"),
                                                   std::string("[placement]").size(), "[unplaced]");
  expect_refused(r, StatusCode::kInvalidArgument, "");
  r = ByHand();
  r.max_rounds = 2;
  expect_refused(r, StatusCode::kInvalidArgument, "max_rounds: expected 3 to 1000");
  BisectionRequest change;
  change.change = 42;
  expect_refused(change, StatusCode::kNotFound, "change 42: the coordinator's database has no");
  // The agent's reply is network input: a subject that is not printable is refused.
  agent_.subject_override_ = "bad\x1b[2J";
  expect_refused(ByHand(), StatusCode::kFailedPrecondition, "printable subject");
  auto rows = store_->ListBisections();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  auto campaigns = store_->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  EXPECT_TRUE(campaigns->empty());
}

}  // namespace
}  // namespace benchlab

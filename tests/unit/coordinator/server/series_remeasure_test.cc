// Confirmation by re-measurement on a coordinator (coordinator/server/series_remeasure.h,
// docs/history.md "On a coordinator"): a scheduler over a fake fleet agent in process (gRPC on
// loopback) whose catalogue entries run builds of known cost. A series of campaigns whose build
// changes at campaign 6 is re-measured by the coordinator itself, on the line's pair, with the
// catalogue entry that still runs the old build; a step of the machine, not the build, is
// withdrawn; a catalogue that kept no old build is recorded as not measured, until it keeps it;
// in a fleet, only the changed pair is re-measured, on its own agents.
#include "coordinator/server/series_remeasure.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "analysis/series.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/series_store.h"
#include "tests/unit/support/answering_agent.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// One agent process serving both roles: its catalogue entries run builds (versions) that spend a
// known CPU time per request, times the machine's factor and a small deterministic wobble. A
// target's port tells RunLoad which build it drives.
class BuildsAgent final : public AnsweringAgent {
 public:
  // Entry -> version, and version -> CPU microseconds per request.
  void SetCatalogue(std::map<std::string, std::string> versions) {
    std::lock_guard lock(mu_);
    versions_ = std::move(versions);
  }
  void SetCost(const std::string& version, double us) {
    std::lock_guard lock(mu_);
    cost_us_[version] = us;
  }
  void SetMachineFactor(double f) {
    std::lock_guard lock(mu_);
    machine_ = f;
  }

  grpc::Status StartTarget(grpc::ServerContext*, const v1::StartTargetRequest* req,
                           v1::StartTargetReply* reply) override {
    std::lock_guard lock(mu_);
    auto v = versions_.find(req->target());
    if (v == versions_.end()) return {grpc::StatusCode::NOT_FOUND, "not in the catalogue"};
    const int port = 9000 + static_cast<int>(ports_.size());
    ports_[port] = v->second;
    handles_["h-" + std::to_string(port)] = v->second;
    reply->set_handle("h-" + std::to_string(port));
    reply->set_port(port);
    reply->set_version(v->second);
    return grpc::Status::OK;
  }
  grpc::Status Mark(grpc::ServerContext*, const v1::MarkRequest* req,
                    v1::MarkReply* reply) override {
    std::lock_guard lock(mu_);
    reply->set_target_alive(true);
    if (req->kind() == v1::MarkRequest::END) {
      // kRequests requests at the build's cost: CPU per request is that cost.
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
    WriteLoad(writer, LoadResultEvent(kRequests, 1e6 / cost));  // a server bound by its CPU
    return grpc::Status::OK;
  }

 private:
  static constexpr int kRequests = 10000;
  // The build's cost on this machine, with a wobble of at most 1.5% that repeats every 7 calls.
  double CostLocked(const std::string& version) {
    const double wobble = 1.0 + 0.015 * std::sin(2.0 * static_cast<double>(calls_++));
    return cost_us_[version] * machine_ * wobble;
  }
  std::mutex mu_;
  std::map<std::string, std::string> versions_;
  std::map<std::string, double> cost_us_;
  double machine_ = 1.0;
  uint64_t calls_ = 0;
  std::map<int, std::string> ports_;            // port -> version
  std::map<std::string, std::string> handles_;  // handle -> version
};

class SeriesRemeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::path(::testing::TempDir()) /
        ("benchlab_series_remeasure_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "lab.db").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    address_ = served_.address;
    agent_.SetCost("v1", 10);
    agent_.SetCost("v2", 11);  // 10% more CPU per request
    scheduler_ = std::make_unique<Scheduler>(*store_, registry_);
    remeasure_ =
        std::make_unique<SeriesRemeasure>(*store_, registry_, *scheduler_, RemeasureSettings{});
    scheduler_->OnCampaignEnded([this](int64_t id) {
      if (hook_on_) remeasure_->CampaignEnded(id);
      ++hooks_run_;
    });
    Register({{"hello", "v1"}});
    v1::RegisterAgentRequest load;
    load.set_name("ld");
    load.add_roles("load");
    load.set_address(address_);
    load.set_instance_proof("proof-ld");
    ASSERT_EQ(registry_.Register(load), Admission::kRegistered);
    scheduler_->Start();
  }
  void TearDown() override {
    scheduler_->Stop();
    fs::remove_all(dir_);
  }

  // The server agent registers (again, as after an upgrade) with this catalogue.
  void Register(const std::map<std::string, std::string>& catalogue) {
    RegisterServer(served_, "srv", catalogue);
  }
  void RegisterServer(Served<BuildsAgent>& served, const std::string& name,
                      const std::map<std::string, std::string>& catalogue) {
    served.agent.SetCatalogue(catalogue);
    v1::RegisterAgentRequest req;
    req.set_name(name);
    req.add_roles("server");
    req.set_address(served.address);
    for (const auto& [entry, version] : catalogue) {
      req.add_catalogue(entry);
      (*req.mutable_versions())[entry] = version;
    }
    req.set_instance_proof("proof-" + name);
    ASSERT_EQ(registry_.Register(req), Admission::kRegistered);
  }

  // Submits nightly-N and waits for it (and what it queued) to be done.
  // `target`: the [[target]] table's keys.
  void RunCampaign(int n, const std::string& pairs = R"([["srv", "ld"]])",
                   const std::string& target = R"(name = "hello")") {
    const std::string name = "nightly-" + std::to_string(n);
    const std::string text = "name = \"" + name +
                             "\"\nseries = \"nightly\"\nbaseline = \"hello\"\n"
                             "[matrix]\nconnections = [8]\nrounds = 3\nwarmup = \"0s\"\n"
                             "duration = \"10ms\"\n"
                             "[placement]\npairs = " +
                             pairs +
                             "\n"
                             "[gates]\nmode = \"warn\"\n"
                             "[[target]]\n" +
                             target +
                             "\n"
                             "[[scenario]]\nname = \"s\"\npath = \"/\"\n"
                             "expect = { status = 200 }\n";
    auto submitted = scheduler_->Submit(text, name + ".toml", "");
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    WaitForQuiet();
    auto row = store_->FindCampaign(name);
    ASSERT_TRUE(row.ok() && row->has_value());
    ASSERT_EQ((*row)->state, "done") << (*row)->error;
  }

  // Until no campaign is queued or running and what follows each one's end has run (30 s at
  // most): a campaign is done before the re-measurement it leads to is queued.
  void WaitForQuiet() {
    for (int i = 0; i < 600; ++i) {
      auto all = store_->ListCampaigns();
      ASSERT_TRUE(all.ok());
      bool busy = false;
      int ended = 0;
      for (const CampaignRow& c : *all) {
        busy = busy || c.Is(CampaignState::kQueued) || c.Is(CampaignState::kRunning);
        ended += c.Is(CampaignState::kDone) || c.Is(CampaignState::kFailed);
      }
      if (!busy && hooks_run_.load() == ended) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "campaigns still queued or running after 30 s";
  }

  std::vector<ConfirmationRow> Confirmations() {
    auto rows = store_->ListConfirmations("nightly");
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<ConfirmationRow>{};
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  AgentRegistry registry_;
  Served<BuildsAgent> served_;
  BuildsAgent& agent_ = served_.agent;
  std::string address_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<SeriesRemeasure> remeasure_;
  std::atomic<int> hooks_run_{0};
  std::atomic<bool> hook_on_{true};  // off: the test calls CampaignEnded itself
};

// Nine campaigns, the build 10% costlier from the sixth on; the agent was upgraded then and
// keeps the old build as "hello-v1". The coordinator re-measures the change on its own, hello-v1
// against hello on the line's pair, and confirms it on both figures.
TEST_F(SeriesRemeasureTest, ARegressionIsReMeasuredOnItsPairAgainstTheCataloguesOldBuild) {
  for (int n = 1; n <= 5; ++n) RunCampaign(n);
  EXPECT_TRUE(Confirmations().empty());  // no step, nothing to re-measure
  Register({{"hello", "v2"}, {"hello-v1", "v1"}});
  for (int n = 6; n <= 9; ++n) RunCampaign(n);

  const std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);  // rps and CPU per request, re-measured by one campaign
  for (const ConfirmationRow& r : rows) {
    SCOPED_TRACE(r.figure + ": " + r.detail);
    EXPECT_EQ(r.pair, "srv");
    EXPECT_EQ(r.target, "hello");
    EXPECT_EQ(r.status, "confirmed");
    EXPECT_EQ(r.campaign, rows[0].campaign);
    EXPECT_GE(r.rounds, 5);
    ASSERT_TRUE(r.estimate && r.low && r.high);
    // new / old: 1.1 for CPU per request, 1 / 1.1 for req/s.
    const double truth = r.figure == "rps" ? 1 / 1.1 : 1.1;
    EXPECT_LE(*r.low, truth);
    EXPECT_GE(*r.high, truth);
    auto after = store_->FindCampaignById(r.after_campaign_id);
    ASSERT_TRUE(after.ok() && after->has_value());
    EXPECT_EQ((*after)->name, "nightly-6");
  }
  // Found once the history showed it: after nightly-8 or nightly-9.
  EXPECT_TRUE(rows[0].campaign == "nightly-8-remeasure-1" ||
              rows[0].campaign == "nightly-9-remeasure-1")
      << rows[0].campaign;

  // The re-measurement ran both builds, each from its catalogue entry, on the line's pair.
  WindowFilter filter;
  filter.campaign = rows[0].campaign;
  auto windows = store_->ListWindows(filter);
  ASSERT_TRUE(windows.ok());
  std::map<std::string, std::string> builds;
  for (const WindowRow& w : *windows) {
    builds[w.target] = w.target_version;
    EXPECT_EQ(w.server_agent, "srv");
    EXPECT_EQ(w.load_agent, "ld");
  }
  EXPECT_EQ(builds, (std::map<std::string, std::string>{{"hello", "v2"}, {"hello-v1", "v1"}}));
  auto remeasurement = store_->FindCampaign(rows[0].campaign);
  ASSERT_TRUE(remeasurement.ok() && remeasurement->has_value());
  EXPECT_EQ((*remeasurement)->baseline, "hello-v1");
  EXPECT_EQ((*remeasurement)->series, rows[0].campaign);  // not part of the history it checks
  // The coordinator's own submission is in the audit trail.
  auto audit = store_->ListAudit("");
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].identity, "coordinator");
  EXPECT_EQ((*audit)[0].call, "SubmitCampaign");
  EXPECT_EQ((*audit)[0].outcome, "ok");
  EXPECT_NE((*audit)[0].subject.find(rows[0].campaign), std::string::npos);

  // Every reader of the series sees the change confirmed; a further campaign re-measures nothing.
  auto work = LoadStoredSeries(*store_, "nightly");
  ASSERT_TRUE(work.ok());
  const Series series = BuildSeries("nightly", work->inputs, Metric::kCpuUsPerRequest);
  auto changes = FindStoredSeriesChanges(*store_, series, {});
  ASSERT_TRUE(changes.ok());
  ASSERT_FALSE(changes->empty());
  EXPECT_TRUE(changes->back().ConfirmedRegression());
  RunCampaign(10);
  EXPECT_EQ(Confirmations().size(), 2u);
  auto all = store_->ListCampaigns();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 11u);  // ten of the series and one re-measurement
}

// The same build throughout, and a machine 10% slower from the sixth campaign on: the history
// shows a step, and the re-measurement, the build against another entry of the same version on
// the same machine, withdraws it.
TEST_F(SeriesRemeasureTest, AStepOfTheMachineIsWithdrawnAsAFalseAlarm) {
  Register({{"hello", "v1"}, {"hello-copy", "v1"}});
  for (int n = 1; n <= 5; ++n) RunCampaign(n);
  agent_.SetMachineFactor(1.1);
  for (int n = 6; n <= 9; ++n) RunCampaign(n);
  const std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);
  for (const ConfirmationRow& r : rows) {
    SCOPED_TRACE(r.figure + ": " + r.detail);
    EXPECT_EQ(r.status, "false alarm");
    ASSERT_TRUE(r.low && r.high);
    EXPECT_LT(*r.low, 1.0);
    EXPECT_GT(*r.high, 1.0);
  }
  auto work = LoadStoredSeries(*store_, "nightly");
  ASSERT_TRUE(work.ok());
  auto changes = FindStoredSeriesChanges(
      *store_, BuildSeries("nightly", work->inputs, Metric::kCpuUsPerRequest), {});
  ASSERT_TRUE(changes.ok());
  ASSERT_FALSE(changes->empty());
  EXPECT_EQ(changes->back().status, "false alarm");
  EXPECT_FALSE(changes->back().ConfirmedRegression());
}

// An upgrade that kept no entry of the old build: the change is recorded as not measured, with
// what to do about it, and no campaign is queued. Each campaign of the series looks again, and
// says nothing new while nothing changed; once the agent keeps the old build, the next one has it
// re-measured and confirmed.
TEST_F(SeriesRemeasureTest, AChangeNotMeasuredIsReMeasuredOnceTheCatalogueKeepsTheOldBuild) {
  for (int n = 1; n <= 5; ++n) RunCampaign(n);
  Register({{"hello", "v2"}});
  {
    // What the coordinator logs while the change cannot be measured.
    std::ostringstream log;
    auto previous = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
    for (int n = 6; n <= 10; ++n) RunCampaign(n);
    spdlog::set_default_logger(previous);
    // Found after nightly-8 or 9, and said once per figure, not again after each campaign.
    const std::string text = log.str();
    size_t said = 0;
    for (size_t at = text.find("not measured ("); at != std::string::npos;
         at = text.find("not measured (", at + 1)) {
      ++said;
    }
    EXPECT_EQ(said, 2u) << text;
  }
  std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);
  for (const ConfirmationRow& r : rows) {
    EXPECT_EQ(r.status, "not measured");
    EXPECT_TRUE(r.campaign.empty());
    EXPECT_NE(r.detail.find("version v1"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("srv"), std::string::npos) << r.detail;
  }
  auto all = store_->ListCampaigns();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 10u);

  Register({{"hello", "v2"}, {"hello-v1", "v1"}});
  RunCampaign(11);
  const int64_t change = rows[0].after_campaign_id;
  rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);  // the change's rows, now with the outcome
  for (const ConfirmationRow& r : rows) {
    SCOPED_TRACE(r.figure + ": " + r.detail);
    EXPECT_EQ(r.status, "confirmed");
    EXPECT_EQ(r.campaign, "nightly-11-remeasure-1");
    EXPECT_EQ(r.after_campaign_id, change);
  }
  auto work = LoadStoredSeries(*store_, "nightly");
  ASSERT_TRUE(work.ok());
  auto changes = FindStoredSeriesChanges(
      *store_, BuildSeries("nightly", work->inputs, Metric::kCpuUsPerRequest), {});
  ASSERT_TRUE(changes.ok());
  ASSERT_FALSE(changes->empty());
  EXPECT_TRUE(changes->back().ConfirmedRegression());
}

// A fleet of two pairs whose second server agent alone was upgraded: only that pair's line
// changed, and its re-measurement runs on that pair's own agents, against the old build its
// catalogue kept.
TEST_F(SeriesRemeasureTest, InAFleetTheChangedPairIsReMeasuredOnItsOwnAgents) {
  Served<BuildsAgent> second;
  second.agent.SetCost("v1", 10);
  second.agent.SetCost("v2", 11);
  RegisterServer(second, "srv2", {{"hello", "v1"}});
  v1::RegisterAgentRequest load;
  load.set_name("ld2");
  load.add_roles("load");
  load.set_address(second.address);
  load.set_instance_proof("proof-ld2");
  ASSERT_EQ(registry_.Register(load), Admission::kRegistered);
  const std::string fleet = R"([["srv", "ld"], ["srv2", "ld2"]])";
  for (int n = 1; n <= 5; ++n) RunCampaign(n, fleet);
  RegisterServer(second, "srv2", {{"hello", "v2"}, {"hello-v1", "v1"}});
  for (int n = 6; n <= 9; ++n) RunCampaign(n, fleet);

  const std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);  // srv2's line, both figures; srv's line did not change
  for (const ConfirmationRow& r : rows) {
    SCOPED_TRACE(r.figure + ": " + r.detail);
    EXPECT_EQ(r.pair, "srv2");
    EXPECT_EQ(r.status, "confirmed");
  }
  WindowFilter filter;
  filter.campaign = rows[0].campaign;
  auto windows = store_->ListWindows(filter);
  ASSERT_TRUE(windows.ok());
  ASSERT_FALSE(windows->empty());
  std::map<std::string, std::string> builds;
  for (const WindowRow& w : *windows) {
    builds[w.target] = w.target_version;
    EXPECT_EQ(w.server_agent, "srv2");
    EXPECT_EQ(w.load_agent, "ld2");
  }
  EXPECT_EQ(builds, (std::map<std::string, std::string>{{"hello", "v2"}, {"hello-v1", "v1"}}));
}

// A coordinator run with --no-remeasure: campaigns' ends queue nothing, and a look asked for
// (RemeasureSeries) queues the re-measurement, with the rounds asked for, which the campaign's
// end then judges. A second look finds nothing left to do.
TEST_F(SeriesRemeasureTest, ALookAskedForQueuesWhatNoCampaignsEndDid) {
  remeasure_ = std::make_unique<SeriesRemeasure>(*store_, registry_, *scheduler_,
                                                 RemeasureSettings{}, /*automatic=*/false);
  for (int n = 1; n <= 5; ++n) RunCampaign(n);
  Register({{"hello", "v2"}, {"hello-v1", "v1"}});
  for (int n = 6; n <= 9; ++n) RunCampaign(n);
  EXPECT_TRUE(Confirmations().empty());

  auto notes = remeasure_->Look("nightly", 40);
  ASSERT_TRUE(notes.ok()) << notes.status().ToString();
  ASSERT_EQ(notes->size(), 1u);  // one line, both figures
  EXPECT_EQ((*notes)[0].line, "s c8 hello on srv rps, cpu_us_per_request");
  EXPECT_EQ((*notes)[0].status, "measuring");
  EXPECT_EQ((*notes)[0].campaign, "nightly-9-remeasure-1");
  auto plan = store_->FindCampaign("nightly-9-remeasure-1");
  ASSERT_TRUE(plan.ok() && plan->has_value());
  EXPECT_NE((*plan)->spec_toml.find("rounds = {max=40,min=5}"), std::string::npos)
      << (*plan)->spec_toml;
  WaitForQuiet();
  const std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);
  for (const ConfirmationRow& r : rows) EXPECT_EQ(r.status, "confirmed") << r.detail;

  notes = remeasure_->Look("nightly");
  ASSERT_TRUE(notes.ok());
  EXPECT_TRUE(notes->empty());
  EXPECT_EQ(remeasure_->Look("weekly").status().code(), StatusCode::kNotFound);
}

// A line whose target is a command, not a catalogue entry, is the embedded lab's to re-measure:
// a look says so and records nothing.
TEST_F(SeriesRemeasureTest, ALookLeavesALineOfACommandTargetToTheEmbeddedLab) {
  const std::string command = R"(name = "hello"
command = ["hello-server", "--port", "{port}"])";
  for (int n = 1; n <= 5; ++n) RunCampaign(n, R"([["srv", "ld"]])", command);
  agent_.SetMachineFactor(1.1);
  for (int n = 6; n <= 9; ++n) RunCampaign(n, R"([["srv", "ld"]])", command);
  auto notes = remeasure_->Look("nightly");
  ASSERT_TRUE(notes.ok()) << notes.status().ToString();
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].status, "elsewhere");
  EXPECT_EQ((*notes)[0].detail,
            "target hello is a command, not a catalogue entry: `benchlab remeasure nightly --db "
            "FILE` re-measures it on an embedded lab");
  EXPECT_TRUE(Confirmations().empty());
}

// A re-measurement cancelled while it was queued never ends on the scheduler: the series' next
// look judges it (nothing measured, the campaign cancelled) instead of leaving it "measuring",
// and does not queue it again.
TEST_F(SeriesRemeasureTest, AReMeasurementCancelledBeforeItRanIsJudgedNotLeftMeasuring) {
  hook_on_ = false;
  for (int n = 1; n <= 5; ++n) RunCampaign(n);
  Register({{"hello", "v2"}, {"hello-v1", "v1"}});
  for (int n = 6; n <= 9; ++n) RunCampaign(n);
  scheduler_->Stop();  // nothing runs what is queued from here on
  auto newest = store_->FindCampaign("nightly-9");
  ASSERT_TRUE(newest.ok() && newest->has_value());
  remeasure_->CampaignEnded((*newest)->id);
  std::vector<ConfirmationRow> rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "measuring");
  auto queued = store_->FindCampaign(rows[0].campaign);
  ASSERT_TRUE(queued.ok() && queued->has_value());
  EXPECT_EQ((*queued)->state, "queued");
  ASSERT_TRUE(store_->SetCampaignState((*queued)->id, CampaignState::kCancelled).ok());

  remeasure_->CampaignEnded((*newest)->id);  // the series looked at again
  rows = Confirmations();
  ASSERT_EQ(rows.size(), 2u);
  for (const ConfirmationRow& r : rows) {
    EXPECT_NE(r.status, "measuring");
    EXPECT_EQ(r.rounds, 0);
    EXPECT_NE(r.detail.find("cancelled"), std::string::npos) << r.detail;
  }
  auto all = store_->ListCampaigns();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 10u);  // not queued again
}

}  // namespace
}  // namespace benchlab

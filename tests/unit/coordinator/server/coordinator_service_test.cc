// The coordinator's service in process, called as gRPC would call it: what agents may register,
// who may renew a name's lease or offer results under it, and what is kept of what they send.
#include "coordinator/server/coordinator_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "coordinator/server/agent_limits.h"
#include "coordinator/server/series_remeasure.h"
#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

AgentLeaseOptions NoStartupGrace() {
  AgentLeaseOptions options;
  options.startup_grace = milliseconds(0);
  return options;
}

v1::RegisterAgentRequest Registration(const std::string& proof = "proof-1") {
  v1::RegisterAgentRequest req;
  req.set_name("srv-1");
  req.add_roles("server");
  req.set_address("127.0.0.1:7001");
  req.mutable_host()->set_hostname("box");
  req.mutable_host()->set_cpu_model("Test CPU");
  req.add_catalogue("nginx");
  (*req.mutable_versions())["nginx"] = "nginx version: nginx/1.24.0";
  req.add_labels("rack-1");
  req.set_instance_proof(proof);
  return req;
}

v1::SpooledResult Result(const std::string& key, const google::protobuf::Message& payload) {
  v1::SpooledResult result;
  result.set_key(key);
  result.set_payload(payload.SerializeAsString());
  return result;
}

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_service_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "bench.db").string(), clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    registry_ = std::make_unique<AgentRegistry>(clock_, NoStartupGrace());
    scheduler_ = std::make_unique<Scheduler>(*store_, *registry_);
    service_ = std::make_unique<CoordinatorService>(*store_, *registry_, *scheduler_);
  }
  void TearDown() override {
    service_.reset();
    scheduler_.reset();
    registry_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  grpc::Status Register(const v1::RegisterAgentRequest& req) {
    v1::RegisterAgentReply reply;
    return service_->RegisterAgent(nullptr, &req, &reply);
  }
  grpc::Status Heartbeat(const std::string& name, const std::string& proof, bool* known) {
    v1::HeartbeatRequest req;
    req.set_name(name);
    req.set_instance_proof(proof);
    v1::HeartbeatReply reply;
    grpc::Status status = service_->Heartbeat(nullptr, &req, &reply);
    *known = reply.known();
    return status;
  }
  grpc::Status Offer(const std::vector<v1::SpooledResult>& results, v1::OfferResultsReply* reply,
                     const std::string& proof = "proof-1") {
    v1::OfferResultsRequest req;
    req.set_name("srv-1");
    req.set_instance_proof(proof);
    for (const auto& r : results) *req.add_spooled() = r;
    return service_->OfferResults(nullptr, &req, reply);
  }
  // The database and its write-ahead log, in bytes.
  uintmax_t DatabaseBytes() {
    uintmax_t bytes = 0;
    for (const char* suffix : {"", "-wal"}) {
      std::error_code ec;
      const uintmax_t size = fs::file_size(dir_ / ("bench.db" + std::string(suffix)), ec);
      if (!ec) bytes += size;
    }
    return bytes;
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<AgentRegistry> registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<CoordinatorService> service_;
};

// ListCampaigns counts each campaign's stored window attempts (every pair, every attempt).
TEST_F(CoordinatorServiceTest, ListCampaignsCountsEachCampaignsStoredWindows) {
  auto create = [&](const std::string& name) {
    CampaignRow c;
    c.name = name;
    c.state = "running";
    c.baseline = "alpha";
    c.spec_toml = "name = \"" + name + "\"\n";
    c.source = name + ".toml";
    c.created_at = "2026-12-01T12:00:00Z";
    c.total_windows = 4;
    auto id = store_->CreateCampaign(c, {{"alpha", "[\"./alpha\"]", "0-1"}},
                                     {{"plain", "scenario", "GET", "/", 200, "Hello"}});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  };
  auto insert = [&](int64_t campaign, int round, int attempt, const std::string& pair) {
    WindowRow w;
    w.campaign_id = campaign;
    w.target = "alpha";
    w.scenario = "plain";
    w.connections = 8;
    w.round = round;
    w.attempt = attempt;
    w.pair = pair;
    w.verdict = attempt == 1 ? "invalid" : "valid";
    w.started_at = "2026-12-01T12:00:05Z";
    w.ended_at = "2026-12-01T12:00:15Z";
    ASSERT_TRUE(store_->InsertWindow(w, {}).ok());
  };
  const int64_t a = create("a"), b = create("b");
  create("empty");
  insert(a, 1, 1, "s1");
  insert(a, 1, 2, "s1");  // measured again: a second attempt counts
  insert(a, 1, 1, "s2");  // the same cell on another pair
  insert(b, 1, 1, "");

  v1::ListCampaignsRequest req;
  v1::ListCampaignsReply reply;
  ASSERT_TRUE(service_->ListCampaigns(nullptr, &req, &reply).ok());
  std::map<std::string, int> finished;
  for (const auto& c : reply.campaigns()) finished[c.name()] = c.finished_windows();
  EXPECT_EQ(finished, (std::map<std::string, int>{{"a", 3}, {"b", 1}, {"empty", 0}}));
}

TEST_F(CoordinatorServiceTest, ANameIsTakenOverOnlyByItsInstanceOrAfterItsLeaseExpired) {
  ASSERT_TRUE(Register(Registration("proof-1")).ok());
  v1::RegisterAgentRequest intruder = Registration("proof-2");
  intruder.set_address("127.0.0.1:6666");
  grpc::Status refused = Register(intruder);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.error_message(),
            "agent srv-1 is registered by a live instance at 127.0.0.1:7001 (another instance "
            "proof, so another state directory); this one may take the name over once that one "
            "is lost (no heartbeat for its lease and grace, docs/fleet.md), or be given another "
            "name");
  EXPECT_EQ(registry_->List()[0].address(), "127.0.0.1:7001");

  v1::RegisterAgentRequest moved = Registration("proof-1");
  moved.set_address("127.0.0.1:7002");
  EXPECT_TRUE(Register(moved).ok()) << "the same instance, restarted elsewhere";
  EXPECT_EQ(registry_->List()[0].address(), "127.0.0.1:7002");

  clock_.Advance(seconds(15) + milliseconds(1));  // lost
  EXPECT_TRUE(Register(intruder).ok()) << "a lost lease may be taken over";
  EXPECT_EQ(registry_->List()[0].address(), "127.0.0.1:6666");
  bool known = true;
  EXPECT_EQ(Heartbeat("srv-1", "proof-1", &known).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(CoordinatorServiceTest, HeartbeatsNeedTheRegisteredProof) {
  ASSERT_TRUE(Register(Registration()).ok());
  bool known = false;
  EXPECT_TRUE(Heartbeat("srv-1", "proof-1", &known).ok());
  EXPECT_TRUE(known);
  grpc::Status wrong = Heartbeat("srv-1", "proof-2", &known);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Heartbeat("srv-1", "", &known).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Heartbeat("nobody", "proof-1", &known).ok());
  EXPECT_FALSE(known) << "an unknown agent registers again";
}

TEST_F(CoordinatorServiceTest, EveryRegisteredFieldHasAFormAndALimit) {
  struct Case {
    const char* what;
    std::function<void(v1::RegisterAgentRequest&)> edit;
    const char* error;
  };
  const std::string big(kMaxHostFactBytes + 1, 'x');
  const std::vector<Case> cases = {
      {"no proof", [](auto& r) { r.clear_instance_proof(); },
       "RegisterAgentRequest.instance_proof: expected the agent's instance proof, got none"},
      {"long proof", [](auto& r) { r.set_instance_proof(std::string(257, 'p')); },
       "RegisterAgentRequest.instance_proof: expected at most 256 bytes, got 257"},
      {"name", [](auto& r) { r.set_name("Srv 1"); },
       "RegisterAgentRequest.name: expected a name of [a-z0-9-]+, at most 64 bytes, got "
       "\"Srv 1\""},
      {"address", [](auto& r) { r.set_address("nowhere"); },
       "RegisterAgentRequest.address: expected HOST:PORT, got \"nowhere\""},
      {"long address", [](auto& r) { r.set_address(std::string(300, 'a') + ":1"); },
       "RegisterAgentRequest.address: expected at most 270 bytes, got 302"},
      {"role", [](auto& r) { r.set_roles(0, "admin"); },
       "RegisterAgentRequest.roles: expected \"server\" and/or \"load\" once each, got "
       "\"admin\""},
      {"no role", [](auto& r) { r.clear_roles(); },
       "RegisterAgentRequest.roles: expected \"server\", \"load\" or both, got 0 roles"},
      {"host fact", [&](auto& r) { r.mutable_host()->set_cpu_model(big); },
       "RegisterAgentRequest.host.cpu_model: expected at most 256 bytes, got 257"},
      {"host findings",
       [](auto& r) {
         for (int i = 0; i < 65; ++i) r.mutable_host()->add_findings()->set_name("swap");
       },
       "RegisterAgentRequest.host.findings: expected at most 64 findings, got 65"},
      {"long finding", [&](auto& r) { r.mutable_host()->add_findings()->set_why(big); },
       "RegisterAgentRequest.host.findings[0].why: expected at most 256 bytes, got 257"},
      {"unprintable finding",
       [](auto& r) { r.mutable_host()->add_findings()->set_value("on\x1b[2J"); },
       "RegisterAgentRequest.host.findings[0].value: expected printable ASCII, got "
       "\"on\\u001b[2J\""},
      {"hostname with a forged line",
       [](auto& r) { r.mutable_host()->set_hostname("box\x1b[2J\nFAKE-LINE"); },
       "RegisterAgentRequest.host.hostname: expected printable UTF-8 without control characters, "
       "got 0x1b at byte 3 of \"box\\u001b[2J\\nFAKE-LINE\""},
      {"kernel not UTF-8", [](auto& r) { r.mutable_host()->set_kernel("6.1\xff"); },
       "RegisterAgentRequest.host.kernel: expected printable UTF-8 without control characters, "
       "got 0xff at byte 3 of "},
      {"cpu model with a C1 control",
       [](auto& r) {
         r.mutable_host()->set_cpu_model(
             "Xeon\xc2\x9b"
             "2J");
       },
       "RegisterAgentRequest.host.cpu_model: expected printable UTF-8 without control "
       "characters, got 0xc2 at byte 4 of "},
      {"version with a newline", [](auto& r) { (*r.mutable_versions())["nginx"] = "1.24\nFAKE"; },
       "RegisterAgentRequest.versions[nginx]: expected printable UTF-8 without control "
       "characters, got 0x0a at byte 4 of "},
      {"labels",
       [](auto& r) {
         for (int i = 0; i < 64; ++i) r.add_labels("l" + std::to_string(i));
       },
       "RegisterAgentRequest.labels: expected at most 64 labels, got 65"},
      {"label", [](auto& r) { r.add_labels(std::string(65, 'l')); },
       "RegisterAgentRequest.labels: expected a name of [a-z0-9-]+, at most 64 bytes, got "
       "\"llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll\"..."},
      {"catalogue",
       [](auto& r) {
         for (int i = 0; i < 1024; ++i) r.add_catalogue("t" + std::to_string(i));
       },
       "RegisterAgentRequest.catalogue: expected at most 1024 targets, got 1025"},
      {"version", [](auto& r) { (*r.mutable_versions())["nginx"] = std::string(257, 'v'); },
       "RegisterAgentRequest.versions[nginx]: expected at most 256 bytes, got 257"},
      {"version of nothing", [](auto& r) { (*r.mutable_versions())["ghost"] = "1.0"; },
       "RegisterAgentRequest.versions: expected targets of the catalogue, got \"ghost\""},
      {"unstartable", [](auto& r) { (*r.mutable_unstartable())["nginx"] = std::string(513, 'u'); },
       "RegisterAgentRequest.unstartable[nginx]: expected at most 512 bytes, got 513"},
      {"unstartable with a newline",
       [](auto& r) { (*r.mutable_unstartable())["nginx"] = "not found\nFAKE"; },
       "RegisterAgentRequest.unstartable[nginx]: expected printable UTF-8 without control "
       "characters, got 0x0a at byte 9 of "},
      {"unstartable nothing", [](auto& r) { (*r.mutable_unstartable())["ghost"] = "gone"; },
       "RegisterAgentRequest.unstartable: expected targets of the catalogue, got \"ghost\""},
      {"whole request",
       [](auto& r) {
         r.GetReflection()->MutableUnknownFields(&r)->AddLengthDelimited(99,
                                                                         std::string(2 << 20, 'u'));
       },
       "RegisterAgentRequest: expected at most 1048576 bytes, got 2097"},
  };
  for (const Case& c : cases) {
    v1::RegisterAgentRequest req = Registration();
    c.edit(req);
    grpc::Status status = Register(req);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what;
    EXPECT_EQ(status.error_message().rfind(c.error, 0), 0u)
        << c.what << ": " << status.error_message();
  }
  EXPECT_TRUE(registry_->List().empty()) << "nothing refused was registered";
  EXPECT_TRUE(Register(Registration()).ok());
}

TEST_F(CoordinatorServiceTest, OfferedResultsAreCheckedKeptAndAcknowledged) {
  v1::OfferResultsReply reply;
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  event.mutable_result()->set_requests(1000);
  v1::MarkReply figures;
  figures.set_cpu_user_s(1.5);
  EXPECT_EQ(Offer({Result("7-a-s-c1-r1-a1.load", event)}, &reply).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION)
      << "register first";
  ASSERT_TRUE(Register(Registration()).ok());

  ASSERT_TRUE(
      Offer({Result("7-a-s-c1-r1-a1.load", event), Result("7-a-s-c1-r1-a1.server", figures)},
            &reply)
          .ok());
  EXPECT_EQ(reply.acknowledged_size(), 2);
  EXPECT_EQ(*store_->CountAgentResults(), 2);
  // Offered again (the agent never heard the acknowledgement): acknowledged again, kept once.
  v1::OfferResultsReply again;
  ASSERT_TRUE(
      Offer({Result("7-a-s-c1-r1-a1.load", event), Result("7-a-s-c1-r1-a1.server", figures)},
            &again)
          .ok());
  EXPECT_EQ(again.acknowledged_size(), 2);
  EXPECT_EQ(*store_->CountAgentResults(), 2);

  EXPECT_EQ(Offer({Result("7-a-s-c1-r1-a2.load", event)}, &reply, "proof-2").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::SpooledResult garbage;
  garbage.set_key("7-a-s-c1-r1-a2.server");
  garbage.set_payload("\xff\xff\xff\xff");
  grpc::Status unparsed = Offer({garbage}, &reply);
  EXPECT_EQ(unparsed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(unparsed.error_message(),
            "OfferResultsRequest.spooled[\"7-a-s-c1-r1-a2.server\"].payload: expected a "
            "serialised benchlab.v1.MarkReply");
  for (const char* key : {"../../etc/passwd.load", "7-a.json", ".load", "7 a.load"}) {
    grpc::Status bad_key = Offer({Result(key, event)}, &reply);
    EXPECT_EQ(bad_key.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << key;
    EXPECT_NE(bad_key.error_message().find("expected a spool key"), std::string::npos) << key;
  }
  std::vector<v1::SpooledResult> page(kMaxOfferedResults + 1, Result("7-x.load", event));
  grpc::Status too_many = Offer(page, &reply);
  EXPECT_EQ(too_many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(too_many.error_message(),
            "OfferResultsRequest.spooled: expected at most 64 results per call, got 65");
  EXPECT_EQ(*store_->CountAgentResults(), 2) << "nothing refused was kept";
}

// Five registrations and five offers of megabytes each, as an intruder would send them: the
// database does not grow by what they carry.
TEST_F(CoordinatorServiceTest, MegabytePayloadsAreRefusedAndTheDatabaseStaysSmall) {
  ASSERT_TRUE(Register(Registration()).ok());
  const uintmax_t before = DatabaseBytes();
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  event.mutable_result()->set_record_json(std::string(3 << 20, 'x'));  // parses, 3 MiB
  for (int i = 0; i < 5; ++i) {
    v1::RegisterAgentRequest fat = Registration();
    fat.mutable_host()->set_hostname(std::string(3 << 20, 'h'));
    EXPECT_EQ(Register(fat).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    v1::OfferResultsReply reply;
    const std::string key = "7-a-s-c1-r1-a" + std::to_string(i);
    grpc::Status status =
        Offer({Result(key + ".load", event), Result(key + ".l2.load", event)}, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), "OfferResultsRequest.spooled[\"" + key +
                                          ".load\"].payload: expected at most 1048576 bytes, got " +
                                          std::to_string(event.ByteSizeLong()));
    EXPECT_EQ(reply.acknowledged_size(), 0);
  }
  EXPECT_EQ(registry_->List()[0].host().hostname(), "box");
  EXPECT_EQ(*store_->CountAgentResults(), 0);
  EXPECT_LT(DatabaseBytes(), before + 64 * 1024) << "before: " << before;
}

// RemeasureSeries checks its request before it looks at anything: the series must be a name and
// the rounds 0 or 5 to 1000; a coordinator without series re-measurement, an unknown series and
// a series whose newest campaign has not ended each say so. Every call is in the audit trail.
TEST_F(CoordinatorServiceTest, RemeasureSeriesChecksItsRequestAndEachCallIsAudited) {
  auto call = [](CoordinatorService& service, const std::string& series, int rounds,
                 std::string* message) {
    v1::RemeasureSeriesRequest req;
    req.set_series(series);
    req.set_max_rounds(rounds);
    v1::RemeasureSeriesReply reply;
    grpc::Status status = service.RemeasureSeries(nullptr, &req, &reply);
    *message = status.error_message();
    EXPECT_EQ(reply.lines_size(), 0);
    return status.error_code();
  };
  std::string message;
  EXPECT_EQ(call(*service_, "nightly", 0, &message), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(message, "this coordinator does not re-measure series");

  SeriesRemeasure remeasure(*store_, *registry_, *scheduler_, RemeasureSettings{}, false);
  CoordinatorService service(*store_, *registry_, *scheduler_, nullptr, &remeasure);
  EXPECT_EQ(call(service, "Nightly builds", 0, &message), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(message,
            "series: expected a name (lowercase letters, digits and -, 1 to 64 characters)");
  EXPECT_EQ(call(service, std::string(65, 'a'), 0, &message), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(call(service, "nightly", 4, &message), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(message, "max_rounds: expected 0 (the coordinator's) or 5 to 1000, got 4");
  EXPECT_EQ(call(service, "nightly", 1001, &message), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(call(service, "nightly", 0, &message), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(message, "no series \"nightly\"");

  // The scheduler is not started: the submitted campaign stays queued.
  auto submitted = scheduler_->Submit(
      "name = \"nightly-1\"\nseries = \"nightly\"\nbaseline = \"hello\"\n"
      "[matrix]\nconnections = [8]\nrounds = 3\n"
      "[[target]]\nname = \"hello\"\n"
      "[[scenario]]\nname = \"s\"\npath = \"/\"\nexpect = { status = 200 }\n",
      "nightly-1.toml", "");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  EXPECT_EQ(call(service, "nightly", 100, &message), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(message,
            "the newest campaign of series nightly, nightly-1, is queued: its changes are looked "
            "at once it ends");

  auto audit = store_->ListAudit("");
  ASSERT_TRUE(audit.ok());
  std::vector<std::string> calls;
  for (const AuditRow& row : *audit) {
    if (row.call == "RemeasureSeries") calls.push_back(row.subject + ": " + row.outcome);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "series nightly: failed",
                       "series Nightly builds: failed",
                       "series " + std::string(64, 'a') + ": failed",
                       "series nightly, at most 4 rounds: failed",
                       "series nightly, at most 1001 rounds: failed",
                       "series nightly: failed",
                       "series nightly, at most 100 rounds: failed",
                   }));
}

// SubmitCampaign takes a file as large as docs/security.md says (4 MiB, kMaxTomlBytes): a
// 2 MiB one was refused for its size.
TEST_F(CoordinatorServiceTest, ATwoMebibyteCampaignIsAccepted) {
  std::string text =
      "name = \"large\"\nbaseline = \"hello\"\n[matrix]\nconnections = [8]\n"
      "[[target]]\nname = \"hello\"\n"
      "[[scenario]]\nname = \"s\"\npath = \"/\"\nexpect = { status = 200 }\n";
  const std::string comment = "# " + std::string(1000, 'x') + "\n";
  while (text.size() < (2u << 20)) text += comment;
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(text);
  req.set_source("large.toml");
  v1::SubmitCampaignReply reply;
  grpc::Status status = service_->SubmitCampaign(nullptr, &req, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.name(), "large");
}

// CheckCampaign says what Submit would refuse, and stores nothing; a viewer may ask it.
TEST_F(CoordinatorServiceTest, CheckCampaignNamesWhatNoRegisteredAgentCanDo) {
  v1::RegisterAgentRequest srv = Registration();
  (*srv.mutable_unstartable())["nginx"] = "command \"nginx\" not found in PATH";
  ASSERT_TRUE(Register(srv).ok());
  v1::RegisterAgentRequest load = Registration("proof-2");
  load.set_name("load-1");
  load.clear_roles();
  load.add_roles("load");
  load.clear_catalogue();
  load.clear_versions();
  ASSERT_TRUE(Register(load).ok());
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(
      "name = \"web\"\nbaseline = \"nginx\"\n[matrix]\nconnections = [8]\n"
      "[[target]]\nname = \"nginx\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n"
      "expect = { status = 200 }\n");
  req.set_source("web.toml");
  v1::CheckCampaignReply checked;
  ASSERT_TRUE(service_->CheckCampaign(nullptr, &req, &checked).ok());
  ASSERT_EQ(checked.problems_size(), 1);
  EXPECT_EQ(checked.problems(0),
            "web.toml: placement: no registered server agent can start nginx: srv-1 cannot "
            "start nginx: command \"nginx\" not found in PATH");
  EXPECT_EQ(checked.total_windows(), 3);
  v1::SubmitCampaignReply reply;
  grpc::Status refused = service_->SubmitCampaign(nullptr, &req, &reply);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(refused.error_message(), checked.problems(0));
  auto campaigns = store_->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  EXPECT_TRUE(campaigns->empty());
  req.set_spec_toml("name = \"web\"\nbaseline = 7\n");
  EXPECT_EQ(service_->CheckCampaign(nullptr, &req, &checked).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// An error naming thousands of targets leaves as the first names and a count, short enough for
// a gRPC status (rpc/status.h).
TEST_F(CoordinatorServiceTest, AnErrorAboutThousandsOfTargetsStaysReadable) {
  std::string text =
      "name = \"many\"\nbaseline = \"nope\"\n[matrix]\nconnections = [8]\n"
      "[[scenario]]\nname = \"s\"\npath = \"/\"\nexpect = { status = 200 }\n";
  for (int i = 0; i < 5000; ++i) {
    text += "[[target]]\nname = \"target-" + std::to_string(i) + "\"\n";
  }
  v1::SubmitCampaignRequest req;
  req.set_spec_toml(text);
  req.set_source("many.toml");
  v1::SubmitCampaignReply reply;
  grpc::Status status = service_->SubmitCampaign(nullptr, &req, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "many.toml:2: baseline: expected the name of a [[target]] (target-0, target-1, "
            "target-2, target-3, target-4, target-5, target-6, target-7, target-8, target-9, "
            "target-10, target-11, target-12, target-13, target-14, target-15, target-16, "
            "target-17, target-18, target-19 and 4,980 more), got \"nope\"");
}

// GetHistory, GetRegressions and GetAudit check every field of their request and name the one
// that is wrong; unset fields take the commands' defaults.
TEST_F(CoordinatorServiceTest, ReadingCallsCheckEachFieldAndNameIt) {
  auto history = [&](const std::function<void(v1::GetHistoryRequest&)>& change) {
    v1::GetHistoryRequest req;
    req.set_series("nightly");
    change(req);
    v1::GetHistoryReply reply;
    return service_->GetHistory(nullptr, &req, &reply);
  };
  const std::pair<std::function<void(v1::GetHistoryRequest&)>, std::string> bad_history[] = {
      {[](auto& r) { r.set_series("no such/series"); }, "series: expected a name"},
      {[](auto& r) { r.set_series(std::string(65, 'a')); }, "series: expected a name"},
      {[](auto& r) { r.set_cell("/c8"); }, "cell: expected SCENARIO or SCENARIO/LEVEL"},
      {[](auto& r) { r.set_target(std::string(257, 't')); }, "target: expected at most 256 bytes"},
      {[](auto& r) { r.set_figure("speed"); }, "figure: expected rps, cpu, p99"},
      {[](auto& r) { r.set_format("markdown"); }, "format: expected text, md or json"},
      {[](auto& r) { r.set_width(39); }, "width: expected 40 to 1000 columns, got 39"},
      {[](auto& r) { r.set_width(-5); }, "width: expected 40 to 1000 columns, got -5"},
  };
  for (const auto& [change, message] : bad_history) {
    const grpc::Status status = history(change);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_EQ(status.error_message().rfind(message, 0), 0u) << status.error_message();
  }
  // Every field left unset is the command's default; the series is looked up and not found.
  const grpc::Status unknown = history([](auto&) {});
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unknown.error_message(),
            "no series \"nightly\" in the coordinator's database (it holds no campaign)");

  auto regressions = [&](const std::function<void(v1::GetRegressionsRequest&)>& change) {
    v1::GetRegressionsRequest req;
    req.set_series("nightly");
    change(req);
    v1::GetRegressionsReply reply;
    return service_->GetRegressions(nullptr, &req, &reply);
  };
  const std::pair<std::function<void(v1::GetRegressionsRequest&)>, std::string> bad_regressions[] =
      {
          {[](auto& r) { r.set_since("nightly 1"); }, "since: expected a campaign's name"},
          {[](auto& r) {
             r.add_figures("rps");
             r.add_figures("speed");
           },
           "figures: expected rps"},
          {[](auto& r) {
             for (int i = 0; i < 17; ++i) r.add_figures("rps");
           },
           "figures: expected 1 to 16 figures, got 17"},
          {[](auto& r) { r.set_format("csv"); }, "format: expected text, md or json"},
          {[](auto& r) { r.set_dashboard("https://lab/\x1b[2J"); },
           "dashboard: expected a URL without control characters"},
          {[](auto& r) { r.set_width(5000); }, "width: expected 40 to 1000 columns, got 5000"},
      };
  for (const auto& [change, message] : bad_regressions) {
    const grpc::Status status = regressions(change);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_EQ(status.error_message().rfind(message, 0), 0u) << status.error_message();
  }
  EXPECT_EQ(regressions([](auto&) {}).error_code(), grpc::StatusCode::NOT_FOUND);

  auto audit = [&](const std::function<void(v1::GetAuditRequest&)>& change,
                   v1::GetAuditReply* reply) {
    v1::GetAuditRequest req;
    change(req);
    return service_->GetAudit(nullptr, &req, reply);
  };
  v1::GetAuditReply reply;
  const std::pair<std::function<void(v1::GetAuditRequest&)>, std::string> bad_audit[] = {
      {[](auto& r) { r.set_since("yesterday"); }, "since: expected a UTC date or time"},
      {[](auto& r) { r.set_since("2026-12-01T10:00:00." + std::string(100, '1')); },
       "since: expected a UTC date or time"},
      {[](auto& r) { r.set_format("md"); }, "format: expected text or json, got \"md\""},
      {[](auto& r) { r.set_width(1001); }, "width: expected 40 to 1000 columns, got 1001"},
  };
  for (const auto& [change, message] : bad_audit) {
    const grpc::Status status = audit(change, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_EQ(status.error_message().rfind(message, 0), 0u) << status.error_message();
  }
  ASSERT_TRUE(audit([](auto&) {}, &reply).ok());
  EXPECT_EQ(reply.text(), "no audited calls\n");
  ASSERT_TRUE(audit(
                  [](auto& r) {
                    r.set_format("json");
                    r.set_since("7d");
                  },
                  &reply)
                  .ok());
  EXPECT_EQ(nlohmann::json::parse(reply.text()), nlohmann::json::parse(R"({"audit": []})"));
  // Reads are not stored in the audit trail.
  auto rows = store_->ListAudit("");
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

// An audited call is stamped with the store's clock, and GetAudit counts "1h" back from it.
TEST_F(CoordinatorServiceTest, TheAuditTrailReadsTheStoresClock) {
  clock_.Advance(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::from_time_t(4099888800) - clock_.WallNow()));  // 2099-12-02T10Z
  ASSERT_TRUE(Register(Registration()).ok());
  auto rows = store_->ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().call, "RegisterAgent");
  EXPECT_EQ(rows->front().at, "2099-12-02T10:00:00.000Z");

  clock_.Advance(std::chrono::hours(2));
  auto audited_since = [&](const std::string& since) {
    v1::GetAuditRequest req;
    req.set_since(since);
    req.set_format("json");
    v1::GetAuditReply reply;
    const grpc::Status status = service_->GetAudit(nullptr, &req, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return nlohmann::json::parse(reply.text())["audit"].size();
  };
  EXPECT_EQ(audited_since("1h"), 0u);
  EXPECT_EQ(audited_since("3h"), 1u);
}

}  // namespace
}  // namespace benchlab

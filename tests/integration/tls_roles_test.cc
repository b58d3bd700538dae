// Roles over real sockets: a coordinator and two agents with mutual TLS from a CA made by
// tls/ca.h, and clients holding each role's certificate (docs/security.md, "Roles"). What a
// certificate may not do is refused with PERMISSION_DENIED and leaves nothing stored; what it may
// do works, a whole campaign included.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "agent/server/agent_daemon.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "coordinator/server/channel.h"
#include "coordinator/server/coordinator_daemon.h"
#include "coordinator/server/stream_slots.h"
#include "rpc/tls.h"
#include "tests/unit/support/eventually.h"
#include "tests/unit/support/forged_tls.h"
#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

constexpr const char* kCampaign = R"(
name = "roles"
baseline = "hello"
[matrix]
connections = [2]
rounds = 1
warmup = "50ms"
duration = "200ms"
[gates]
mode = "warn"
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200, body = "hello\n" }
)";

class TlsRolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = dir_.path() + "/ca";
    ASSERT_TRUE(InitCa(ca_).ok());
    for (const IssueRequest& r :
         std::vector<IssueRequest>{{"coord", Role::kCoordinator, {"127.0.0.1"}, 30},
                                   {"srv", Role::kAgent, {"127.0.0.1"}, 30},
                                   {"ld", Role::kAgent, {"127.0.0.1"}, 30},
                                   {"alice", Role::kOperator, {}, 30},
                                   {"victor", Role::kViewer, {}, 30}}) {
      ASSERT_TRUE(IssueCertificate(ca_, r).ok()) << r.name;
    }
    auto coordinator_tls = TlsContext::Load(Files("coord"));
    ASSERT_TRUE(coordinator_tls.ok()) << coordinator_tls.status().ToString();
    CoordinatorOptions options;
    options.tls = *coordinator_tls;
    auto daemon = CoordinatorDaemon::Create(dir_.path() + "/roles.db", options);
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    coordinator_ = std::move(daemon).value();
    auto bound = coordinator_->Start(HostPort{"127.0.0.1", 0});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    address_ = bound->ToString();

    TargetDef hello;
    hello.name = "hello";
    hello.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    hello.ready_timeout = std::chrono::milliseconds(5000);
    for (const char* name : {"srv", "ld"}) {
      AgentConfig config;
      config.name = name;
      const bool server = std::string(name) == "srv";
      config.roles = {server ? "server" : "load"};
      config.coordinator = address_;
      config.run_root = dir_.path() + "/" + name;
      config.tls = Files(name);
      if (server) config.catalogue = {hello};
      agents_.push_back(std::make_unique<AgentDaemon>(RealSysEnv(), config));
      auto started = agents_.back()->Start();
      ASSERT_TRUE(started.ok()) << started.status().ToString();
    }
    ASSERT_TRUE(Eventually([&] { return agents_[0]->registered() && agents_[1]->registered(); }));
  }

  void TearDown() override {
    for (auto& a : agents_) a->Shutdown();
    if (coordinator_) coordinator_->Shutdown();
  }

  TlsFiles Files(const std::string& name) {
    return {ca_ + "/ca.pem", ca_ + "/" + name + ".pem", ca_ + "/" + name + ".key",
            ca_ + "/crl.pem"};
  }

  // A coordinator stub holding `name`'s certificate.
  std::unique_ptr<v1::Coordinator::Stub> As(const std::string& name) {
    auto tls = TlsContext::Load(Files(name));
    EXPECT_TRUE(tls.ok()) << tls.status().ToString();
    return v1::Coordinator::NewStub(
        MakeChannel(address_, (*tls)->ChannelCredentials(Role::kCoordinator)));
  }

  static void Deadline(grpc::ClientContext& ctx, int seconds = 10) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  }

  grpc::Status Submit(v1::Coordinator::Stub& stub) {
    v1::SubmitCampaignRequest req;
    req.set_spec_toml(kCampaign);
    req.set_source("roles.toml");
    v1::SubmitCampaignReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub.SubmitCampaign(&ctx, req, &reply);
  }

  size_t Campaigns() {
    auto list = coordinator_->store().ListCampaigns();
    return list.ok() ? list->size() : 0;
  }

  TempDir dir_;
  std::string ca_;
  std::string address_;
  std::unique_ptr<CoordinatorDaemon> coordinator_;
  std::vector<std::unique_ptr<AgentDaemon>> agents_;
};

TEST_F(TlsRolesTest, AnAgentCertificateCannotSubmitAndNothingIsStored) {
  grpc::Status status = Submit(*As("srv"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_NE(status.error_message().find("benchlab://agent/srv"), std::string::npos);
  // Which certificate it needs, in English ("an operator", not "a operator").
  EXPECT_NE(status.error_message().find("it needs an operator certificate"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(Campaigns(), 0u);
  // The refusal is in the audit trail, with who, from where and why.
  auto audit = coordinator_->store().ListAudit("");
  ASSERT_TRUE(audit.ok());
  ASSERT_FALSE(audit->empty());
  const AuditRow& refused = audit->back();
  EXPECT_EQ(refused.call, "SubmitCampaign");
  EXPECT_EQ(refused.identity, "benchlab://agent/srv");
  EXPECT_EQ(refused.role, "agent");
  EXPECT_EQ(refused.outcome, "refused");
  EXPECT_NE(refused.reason.find("operator"), std::string::npos) << refused.reason;
  EXPECT_NE(refused.peer.find("127.0.0.1"), std::string::npos) << refused.peer;
}

TEST_F(TlsRolesTest, AViewerReadsButCannotSubmitRerunCancelRemeasureOrReadTheAudit) {
  auto viewer = As("victor");
  EXPECT_EQ(Submit(*viewer).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  {
    v1::RerunWindowsRequest req;
    req.set_campaign("roles");
    v1::RerunWindowsReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    EXPECT_EQ(viewer->RerunWindows(&ctx, req, &reply).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    v1::CancelCampaignRequest req;
    req.set_name("roles");
    v1::CancelCampaignReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    EXPECT_EQ(viewer->CancelCampaign(&ctx, req, &reply).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    v1::RemeasureSeriesRequest req;
    req.set_series("roles");
    v1::RemeasureSeriesReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    EXPECT_EQ(viewer->RemeasureSeries(&ctx, req, &reply).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    // The audit trail names every caller and address: operators only.
    v1::GetAuditReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    EXPECT_EQ(viewer->GetAudit(&ctx, {}, &reply).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    // A series' history and changes are a viewer's to read (here: no such series).
    v1::GetHistoryRequest req;
    req.set_series("roles");
    v1::GetHistoryReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    EXPECT_EQ(viewer->GetHistory(&ctx, req, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
    v1::GetRegressionsRequest regressions;
    regressions.set_series("roles");
    v1::GetRegressionsReply changes;
    grpc::ClientContext ctx2;
    Deadline(ctx2);
    EXPECT_EQ(viewer->GetRegressions(&ctx2, regressions, &changes).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  v1::ListAgentsReply agents;
  grpc::ClientContext ctx;
  Deadline(ctx);
  ASSERT_TRUE(viewer->ListAgents(&ctx, {}, &agents).ok());
  EXPECT_EQ(agents.agents_size(), 2);
  EXPECT_EQ(Campaigns(), 0u);
  // An operator reads the trail.
  {
    auto operator_stub = As("alice");
    v1::GetAuditRequest req;
    req.set_format("json");
    v1::GetAuditReply reply;
    grpc::ClientContext audit_ctx;
    Deadline(audit_ctx);
    ASSERT_TRUE(operator_stub->GetAudit(&audit_ctx, req, &reply).ok());
    EXPECT_NE(reply.text().find("benchlab://viewer/victor"), std::string::npos) << reply.text();
  }
  // Its five refusals are audited; its reading is not.
  auto audit = coordinator_->store().ListAudit("");
  ASSERT_TRUE(audit.ok());
  std::vector<std::string> calls;
  for (const AuditRow& row : *audit) {
    if (row.identity == "benchlab://viewer/victor") calls.push_back(row.call + " " + row.outcome);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"SubmitCampaign refused", "RerunWindows refused",
                                             "CancelCampaign refused", "RemeasureSeries refused",
                                             "GetAudit refused"}));
}

TEST_F(TlsRolesTest, AnAgentCannotRegisterOrBeatUnderAnotherAgentsName) {
  auto srv = As("srv");
  v1::RegisterAgentRequest req;
  req.set_name("ld");  // srv's certificate, ld's name
  req.add_roles("load");
  req.set_address("127.0.0.1:1");
  req.set_instance_proof(std::string(64, 'a'));
  v1::RegisterAgentReply reply;
  grpc::ClientContext ctx;
  Deadline(ctx);
  grpc::Status status = srv->RegisterAgent(&ctx, req, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();

  v1::HeartbeatRequest beat;
  beat.set_name("ld");
  beat.set_instance_proof(std::string(64, 'a'));
  v1::HeartbeatReply beat_reply;
  grpc::ClientContext beat_ctx;
  Deadline(beat_ctx);
  EXPECT_EQ(srv->Heartbeat(&beat_ctx, beat, &beat_reply).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  auto audit = coordinator_->store().ListAudit("");
  ASSERT_TRUE(audit.ok());
  int refused_as_ld = 0;
  for (const AuditRow& row : *audit) {
    if (row.subject == "agent ld" && row.outcome == "refused") ++refused_as_ld;
  }
  EXPECT_EQ(refused_as_ld, 2) << "RegisterAgent and Heartbeat, each refused and audited";
  // ld keeps its registration at its own address.
  v1::ListAgentsReply agents;
  grpc::ClientContext list_ctx;
  Deadline(list_ctx);
  ASSERT_TRUE(As("alice")->ListAgents(&list_ctx, {}, &agents).ok());
  bool seen = false;
  for (const auto& a : agents.agents()) {
    if (a.name() != "ld") continue;
    seen = true;
    EXPECT_NE(a.address(), "127.0.0.1:1");
  }
  EXPECT_TRUE(seen);
}

TEST_F(TlsRolesTest, AnOperatorsCampaignRunsOverMutualTlsEndToEnd) {
  auto alice = As("alice");
  grpc::Status submitted = Submit(*alice);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  std::string state;
  Eventually(
      [&] {
        auto row = coordinator_->store().FindCampaign("roles");
        if (row.ok() && row->has_value()) state = (*row)->state;
        return state == "done" || state == "failed";
      },
      std::chrono::milliseconds(30000));
  ASSERT_EQ(state, "done");
  // The submit is audited as the operator's, under the campaign's name.
  auto audit = coordinator_->store().ListAudit("");
  ASSERT_TRUE(audit.ok());
  bool submitted_seen = false;
  for (const AuditRow& row : *audit) {
    if (row.call != "SubmitCampaign") continue;
    submitted_seen = true;
    EXPECT_EQ(row.identity, "benchlab://operator/alice");
    EXPECT_EQ(row.subject, "campaign roles");
    EXPECT_EQ(row.outcome, "ok");
  }
  EXPECT_TRUE(submitted_seen);
  auto windows = coordinator_->store().ListWindows({});
  ASSERT_TRUE(windows.ok());
  ASSERT_EQ(windows->size(), 1u);
  EXPECT_EQ(windows->front().server_agent, "srv");
  EXPECT_GT(windows->front().requests, 0);
}

// Every certificate refused at the handshake leaves one audit row per kind and kRefusalWindow,
// with its identity (or subject), serial and reason; a burst's count is stored by the next row
// of its kind or, as here, when the coordinator stops. Before, nothing was stored: an expired
// certificate or one from another CA was refused inside gRPC's TLS, and a wrong role's reason
// was dropped.
TEST_F(TlsRolesTest, RefusedHandshakesAreAuditedOncePerKindWithTheirCount) {
  ASSERT_TRUE(IssueCertificate(ca_, {"old", Role::kOperator, {}, 30}).ok());
  ASSERT_EQ(forged::Reissue(ca_, "old", {.starts_in_s = -7200, .ends_in_s = -3600}), "");
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  ASSERT_TRUE(IssueCertificate(other, {"stranger", Role::kOperator, {}, 30}).ok());
  auto list = [&](v1::Coordinator::Stub& stub) {
    v1::ListAgentsReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx, 5);
    return stub.ListAgents(&ctx, {}, &reply);
  };
  auto raw = [&](const std::string& dir, const std::string& name) {
    return v1::Coordinator::NewStub(
        MakeChannel(address_, forged::RawCredentials(ca_ + "/ca.pem", dir + "/" + name + ".pem",
                                                     dir + "/" + name + ".key")));
  };
  constexpr int kBurst = 50;
  for (int i = 0; i < kBurst; ++i) EXPECT_FALSE(list(*raw(ca_, "old")).ok());
  EXPECT_FALSE(list(*raw(other, "stranger")).ok());
  EXPECT_FALSE(list(*As("coord")).ok());  // the coordinator's own role may not call it

  auto handshakes = [&] {
    std::vector<AuditRow> rows;
    auto audit = coordinator_->store().ListAudit("");
    EXPECT_TRUE(audit.ok());
    for (const AuditRow& row : audit.ok() ? *audit : std::vector<AuditRow>{}) {
      if (row.call == "TLS handshake") rows.push_back(row);
    }
    return rows;
  };
  auto serial = [](const std::string& pem_path) {
    auto info = ParseCertificatePem(forged::ReadText(pem_path), pem_path, Identity::kNone);
    return info.ok() ? info->serial : std::string("?");
  };
  auto rows = handshakes();
  ASSERT_EQ(rows.size(), 3u);
  struct Expected {
    std::string identity, role, cn, serial, reason;
  };
  const std::vector<Expected> expected{
      {"benchlab://operator/old", "operator", "CN=old", serial(ca_ + "/old.pem"), "expired: "},
      {"benchlab://operator/stranger", "operator", "CN=stranger", serial(other + "/stranger.pem"),
       "unknown CA: "},
      {"benchlab://coordinator/coord", "coordinator", "CN=coord", serial(ca_ + "/coord.pem"),
       "wrong role: "}};
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].identity);
    EXPECT_EQ(rows[i].identity, expected[i].identity);
    EXPECT_EQ(rows[i].role, expected[i].role);
    EXPECT_EQ(rows[i].outcome, "refused");
    EXPECT_EQ(rows[i].subject.rfind("certificate " + expected[i].cn + ",", 0), 0u)
        << rows[i].subject;
    EXPECT_NE(rows[i].subject.find("(serial " + expected[i].serial + ")"), std::string::npos)
        << rows[i].subject;
    EXPECT_EQ(rows[i].reason.rfind(expected[i].reason, 0), 0u) << rows[i].reason;
    // gRPC does not tell a server's certificate verifier who connected (rpc/handshake_refusals.h).
    EXPECT_EQ(rows[i].peer, "");
  }
  EXPECT_NE(rows[2].reason.find("expected a certificate of role agent or operator or viewer"),
            std::string::npos)
      << rows[2].reason;

  coordinator_->Shutdown();
  rows = handshakes();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3].identity, "benchlab://operator/old");
  EXPECT_EQ(rows[3].reason.rfind("expired: ", 0), 0u) << rows[3].reason;
  // At least one handshake per refused call; gRPC may try a refused connection once more.
  const size_t at = rows[3].reason.find("; refused ");
  ASSERT_NE(at, std::string::npos) << rows[3].reason;
  EXPECT_GE(std::stoi(rows[3].reason.substr(at + 10)), kBurst - 1) << rows[3].reason;
  EXPECT_NE(rows[3].reason.find("more times since, not reported one by one"), std::string::npos);
}

// A certificate revoked while its connection stays open is refused at its next call, and the
// refusal is audited under the identity it names (it was "unknown").
TEST_F(TlsRolesTest, ACertificateRevokedOnAnOpenConnectionIsAuditedByName) {
  auto victor = As("victor");
  auto list = [&] {
    v1::ListAgentsReply reply;
    grpc::ClientContext ctx;
    Deadline(ctx);
    return victor->ListAgents(&ctx, {}, &reply);
  };
  ASSERT_TRUE(list().ok());
  ASSERT_TRUE(RevokeCertificate(ca_, "victor").ok());
  // The coordinator re-reads a changed CRL at most once a second; until then calls pass.
  grpc::Status refused;
  Eventually([&] {
    refused = list();
    return !refused.ok();
  });
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED) << refused.error_message();
  auto audit = coordinator_->store().ListAudit("");
  ASSERT_TRUE(audit.ok());
  ASSERT_FALSE(audit->empty());
  const AuditRow& row = audit->back();
  EXPECT_EQ(row.call, "ListAgents");
  EXPECT_EQ(row.outcome, "refused");
  EXPECT_EQ(row.identity, "benchlab://viewer/victor");
  EXPECT_EQ(row.role, "viewer");
  EXPECT_NE(row.reason.find("is revoked"), std::string::npos) << row.reason;
  EXPECT_NE(row.peer.find("127.0.0.1"), std::string::npos) << row.peer;
}

long Threads() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator());
}

// 2,000 WatchCampaign streams on one viewer's channel: kMaxWatchStreamsPerCaller run, the rest
// are RESOURCE_EXHAUSTED, another caller still gets its stream, and the coordinator's threads
// stay within kMaxCoordinatorGrpcThreads. Before, every stream ran on a thread of its own (2,022
// threads).
TEST_F(TlsRolesTest, WatchStreamsAreCappedPerCallerAndThreadsStayBounded) {
  // A campaign that waits for an agent that never comes, so that its watchers stay.
  v1::SubmitCampaignRequest submit;
  submit.set_spec_toml(std::string(kCampaign) + "[placement]\nserver = \"ghost\"\n");
  submit.set_source("roles.toml");
  v1::SubmitCampaignReply submitted;
  grpc::ClientContext submit_ctx;
  Deadline(submit_ctx);
  ASSERT_TRUE(As("alice")->SubmitCampaign(&submit_ctx, submit, &submitted).ok());

  const long before = Threads();
  std::atomic<bool> sampling{true};
  std::atomic<long> most{before};
  std::thread sampler([&] {
    while (sampling) {
      long now = Threads();
      long seen = most;
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  constexpr int kStreams = 2000;
  v1::WatchCampaignRequest req;
  req.set_name("roles");
  auto victor = As("victor");
  // Asynchronous, so that each stream's status is taken as it comes.
  grpc::CompletionQueue cq;
  struct Stream {
    grpc::ClientContext ctx;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncReader<v1::CampaignEvent>> reader;
  };
  std::vector<std::unique_ptr<Stream>> streams;
  int started_tag = 0;  // every stream's start; its end is tagged with the stream
  const auto until = std::chrono::system_clock::now() + std::chrono::seconds(8);
  for (int i = 0; i < kStreams; ++i) {
    auto stream = std::make_unique<Stream>();
    stream->ctx.set_deadline(until);
    stream->reader = victor->AsyncWatchCampaign(&stream->ctx, req, &cq, &started_tag);
    stream->reader->Finish(&stream->status, stream.get());
    streams.push_back(std::move(stream));
  }
  int finished = 0;
  auto finish = [&](int until_finished) {
    while (finished < until_finished) {
      void* tag = nullptr;
      bool ok = false;
      if (!cq.Next(&tag, &ok)) return;
      if (tag != &started_tag) ++finished;
    }
  };
  // Once the streams beyond the cap are refused (at their deadline if none is), another caller
  // still gets a stream beside the viewer's.
  finish(kStreams - static_cast<int>(kMaxWatchStreamsPerCaller));
  {
    grpc::ClientContext ctx;
    Deadline(ctx, 2);
    auto mine = As("alice")->WatchCampaign(&ctx, req);
    v1::CampaignEvent event;
    while (mine->Read(&event)) {
    }
    EXPECT_EQ(mine->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  finish(kStreams);
  ASSERT_EQ(finished, kStreams);
  int running = 0, refused = 0, named = 0;
  for (const auto& stream : streams) {
    if (stream->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) ++running;
    if (stream->status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++refused;
    if (stream->status.error_message().find("kMaxWatchStreamsPerCaller") != std::string::npos) {
      ++named;
    }
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  sampling = false;
  sampler.join();
  EXPECT_EQ(running, static_cast<int>(kMaxWatchStreamsPerCaller));
  EXPECT_EQ(refused, kStreams - running);
  EXPECT_GT(named, 0);
  // The refused streams each hold a thread for a moment: gRPC's threads rise to their cap under
  // the flood, not beyond.
  EXPECT_LE(most - before, kMaxCoordinatorGrpcThreads + 16)
      << "threads before " << before << ", at most " << most;
}

TEST_F(TlsRolesTest, APlaintextClientIsRefused) {
  auto plain =
      v1::Coordinator::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  v1::ListAgentsReply reply;
  grpc::ClientContext ctx;
  Deadline(ctx, 5);
  EXPECT_EQ(plain->ListAgents(&ctx, {}, &reply).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsRolesTest, AnAgentStartsOnlyWithItsOwnCertificateOrOnLoopback) {
  AgentConfig config;
  config.name = "ld2";
  config.roles = {"load"};
  config.coordinator = address_;
  config.run_root = dir_.path() + "/ld2";
  config.tls = Files("ld");  // ld's certificate
  AgentDaemon wrong(RealSysEnv(), config);
  auto refused = wrong.Start();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("needs benchlab://agent/ld2"), std::string::npos)
      << refused.status().message();

  config.tls = {};
  config.listen = HostPort{"0.0.0.0", 0};
  AgentDaemon plain(RealSysEnv(), config);
  auto exposed = plain.Start();
  ASSERT_FALSE(exposed.ok());
  EXPECT_NE(exposed.status().message().find("without TLS is refused"), std::string::npos);
}

TEST(ListenPolicyTest, PlaintextBeyondLoopbackNeedsInsecure) {
  TempDir dir;
  auto daemon = CoordinatorDaemon::Create(dir.path() + "/p.db");
  ASSERT_TRUE(daemon.ok());
  auto refused = (*daemon)->Start(HostPort{"0.0.0.0", 0});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("without TLS is refused"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("::"));

  CoordinatorOptions insecure;
  insecure.insecure = true;
  auto allowed = CoordinatorDaemon::Create(dir.path() + "/q.db", insecure);
  ASSERT_TRUE(allowed.ok());
  auto bound = (*allowed)->Start(HostPort{"0.0.0.0", 0});
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  (*allowed)->Shutdown();
}

}  // namespace
}  // namespace benchlab

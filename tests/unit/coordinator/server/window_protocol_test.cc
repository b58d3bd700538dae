// The window protocol against mock agents (gMock stubs of Agent::StubInterface, handed out by the
// registry's stub factory): a failure or a deadline at each step, a lost agent, the gates that
// judge what the target did, several load agents. No network and no clock but a fake one.
#include "coordinator/server/window_protocol.h"

#include <gmock/gmock.h>
#include <grpcpp/test/mock_stream.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchlab/v1/agent_mock.grpc.pb.h"
#include "common/folded_profile.h"
#include "common/histogram.h"
#include "coordinator/outcome.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/window_runner.h"
#include "rpc/status.h"
#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::SetArgPointee;

using MockAgent = NiceMock<v1::MockAgentStub>;
using EventReader = grpc::testing::MockClientReader<v1::RunLoadEvent>;

constexpr const char* kCampaign = R"(name = "mocked"
baseline = "t1"
[matrix]
connections = [2]
rounds = 1
warmup = "0s"
duration = "1s"
[[target]]
name = "t1"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

// A load agent's RunLoad stream: START, END and a result of `requests` 200s, then `status`.
EventReader* LoadStream(uint64_t requests, grpc::Status status = grpc::Status::OK) {
  auto* reader = new NiceMock<EventReader>();
  std::vector<v1::RunLoadEvent> events(3);
  events[0].set_kind(v1::RunLoadEvent::MEASURE_START);
  events[1].set_kind(v1::RunLoadEvent::MEASURE_END);
  events[2].set_kind(v1::RunLoadEvent::RESULT);
  v1::LoadResult* result = events[2].mutable_result();
  Histogram latency;
  latency.RecordN(100, requests);
  result->set_requests(requests);
  result->set_duration_s(1);
  result->set_rps(static_cast<double>(requests));
  result->set_histogram(latency.Serialize());
  v1::StatusCount* ok = result->add_status_counts();
  ok->set_status(200);
  ok->set_count(requests);
  ::testing::Sequence seq;
  for (const v1::RunLoadEvent& event : events) {
    EXPECT_CALL(*reader, Read(_))
        .InSequence(seq)
        .WillOnce(DoAll(SetArgPointee<0>(event), Return(true)));
  }
  EXPECT_CALL(*reader, Read(_)).InSequence(seq).WillOnce(Return(false));
  EXPECT_CALL(*reader, Finish()).WillOnce(Return(status));
  return reader;
}

class WindowProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AgentLeaseOptions options;
    options.startup_grace = std::chrono::milliseconds(0);
    registry_ = std::make_unique<AgentRegistry>(clock_, options);
    registry_->SetStubFactory([this](const std::string&, const std::string& address) {
      auto& mock = agents_[address];
      if (!mock) mock = std::make_shared<MockAgent>();
      return std::shared_ptr<v1::Agent::StubInterface>(mock);
    });
    Register("srv", "server");
    Register("ld", "load");
    // What a healthy agent answers.
    for (auto& [address, agent] : agents_) {
      ON_CALL(*agent, CheckHost(_, _, _))
          .WillByDefault(DoAll(Invoke([](auto*, auto&, v1::CheckHostReply* reply) {
                                 reply->set_selftest_wall_ms(10);
                               }),
                               Return(grpc::Status::OK)));
    }
    ON_CALL(server(), StartTarget(_, _, _))
        .WillByDefault(
            Invoke([](auto*, const v1::StartTargetRequest& req, v1::StartTargetReply* reply) {
              reply->set_handle("h-" + req.window());
              reply->set_port(8080);
              return grpc::Status::OK;
            }));
    ON_CALL(server(), Mark(_, _, _))
        .WillByDefault(DoAll(Invoke([](auto*, auto&, v1::MarkReply* reply) {
                               reply->set_target_alive(true);
                               reply->set_cpu_user_s(0.5);
                             }),
                             Return(grpc::Status::OK)));
    ON_CALL(load(), CheckConformance(_, _, _))
        .WillByDefault(DoAll(
            Invoke([](auto*, auto&, v1::CheckConformanceReply* reply) { reply->set_ok(true); }),
            Return(grpc::Status::OK)));
    ON_CALL(load(), RunLoadRaw(_, _)).WillByDefault(Invoke([](auto*, auto&) {
      return LoadStream(1000);
    }));
  }

  void Register(const std::string& name, const std::string& role) {
    v1::RegisterAgentRequest req;
    req.set_name(name);
    req.add_roles(role);
    req.set_address(name + ":7000");
    if (role == "server") req.add_catalogue("t1");
    req.set_instance_proof("proof-" + name);
    ASSERT_EQ(registry_->Register(req), Admission::kRegistered);
  }

  MockAgent& server() { return *agents_.at("srv:7000"); }
  MockAgent& load() { return *agents_.at("ld:7000"); }

  // Runs the campaign's first window, with `gates` appended to the campaign file.
  WindowOutcome Run(const std::string& gates = "", AgentRegistry::Placement placement = {}) {
    auto campaign = ParseCampaignText(std::string(kCampaign) + gates, "mocked.toml", "");
    EXPECT_TRUE(campaign.ok()) << campaign.status().ToString();
    if (!campaign.ok()) return {};
    campaign_ = std::move(*campaign);
    plan_ = ExpandMatrix(campaign_);
    if (placement.server_agent.empty()) placement = {"srv", "127.0.0.1", "ld", {}};
    placement_ = placement;
    return RunWindow(*registry_, placement_, campaign_, 1, plan_.front(), 1, "token-1",
                     calibration_, session_);
  }

  std::vector<WindowReason> Reasons(const WindowOutcome& out) {
    return ParseOutcome(out.row.outcome, out.row.reasons);
  }

  // The server agent's StartTarget succeeds once, writing the profile frequency it was asked
  // for into `asked_hz`.
  void ExpectStartTargetAskedHz(int& asked_hz) {
    EXPECT_CALL(server(), StartTarget(_, _, _))
        .WillOnce(Invoke(
            [&asked_hz](auto*, const v1::StartTargetRequest& req, v1::StartTargetReply* reply) {
              asked_hz = req.profile_hz();
              reply->set_handle("h-" + req.window());
              reply->set_port(8080);
              return grpc::Status::OK;
            }));
  }

  FakeClock clock_;
  std::map<std::string, std::shared_ptr<MockAgent>> agents_;
  std::unique_ptr<AgentRegistry> registry_;
  Campaign campaign_;
  std::vector<PlannedWindow> plan_;
  AgentRegistry::Placement placement_;
  Calibration calibration_;
  TargetSession session_;
};

TEST_F(WindowProtocolTest, AHealthyWindowIsValidAndItsProcessStopped) {
  EXPECT_CALL(server(), StopTarget(_, _, _)).WillOnce(Return(grpc::Status::OK));
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  EXPECT_EQ(out.row.reasons, "[]");
  EXPECT_EQ(out.row.outcome, "[]");
  EXPECT_EQ(out.row.requests, 1000u);
  EXPECT_TRUE(session_.handle.empty());
  EXPECT_EQ(out.spooled.size(), 2u) << "the server's figures and the load result";
}

// [[target]] of and commit: the server agent is asked for the catalogue target `of` names at
// that commit, with the recipe's build time (10 minutes by default) on top of the start's
// deadline; a target without them asks for its own name and no commit.
TEST_F(WindowProtocolTest, ACommitTargetAsksForItsCatalogueTargetAtThatCommit) {
  for (const std::string& keys :
       {std::string("of = \"app\"\ncommit = \"v2.1\"\n"), std::string()}) {
    std::string text = kCampaign;
    const std::string at = "name = \"t1\"\n";
    text.replace(text.find(at), at.size(), at + keys);
    auto campaign = ParseCampaignText(text, "mocked.toml", "");
    ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
    campaign_ = std::move(*campaign);
    plan_ = ExpandMatrix(campaign_);
    placement_ = {"srv", "127.0.0.1", "ld", {}};
    v1::StartTargetRequest asked;
    std::chrono::system_clock::duration budget{};
    EXPECT_CALL(server(), StartTarget(_, _, _))
        .WillOnce(Invoke([&](grpc::ClientContext* ctx, const v1::StartTargetRequest& req,
                             v1::StartTargetReply* reply) {
          asked = req;
          budget = ctx->deadline() - clock_.WallNow();
          reply->set_handle("h-" + req.window());
          reply->set_port(8080);
          reply->set_commit(req.commit().empty() ? "" : std::string(40, 'a'));
          return grpc::Status::OK;
        }));
    WindowOutcome out = RunWindow(*registry_, placement_, campaign_, 1, plan_.front(), 1, "token-1",
                                  calibration_, session_);
    EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
    EXPECT_EQ(out.row.target_commit, asked.commit().empty() ? "" : std::string(40, 'a'));
    if (keys.empty()) {
      EXPECT_EQ(asked.target(), "t1");
      EXPECT_EQ(asked.commit(), "");
      EXPECT_LT(budget, std::chrono::minutes(1));
    } else {
      EXPECT_EQ(asked.target(), "app");
      EXPECT_EQ(asked.commit(), "v2.1");
      EXPECT_GE(budget, std::chrono::minutes(10));
    }
  }
}

// [profile] asks the server agent for a profile at its frequency; END's profile is kept when it
// parses, and a profile that does not is refused without touching the window's verdict.
TEST_F(WindowProtocolTest, AProfiledWindowKeepsTheProfileItCanRead) {
  auto folded = ParseFolded("t1;main;parse 30\nt1;main;work 70\n");
  ASSERT_TRUE(folded.ok());
  auto packed = CompressFolded(*folded);
  ASSERT_TRUE(packed.ok());
  for (const std::string& bytes : {*packed, std::string("not zlib at all")}) {
    int asked_hz = -1;
    ExpectStartTargetAskedHz(asked_hz);
    EXPECT_CALL(server(), Mark(_, _, _))
        .WillRepeatedly(Invoke([&](auto*, const v1::MarkRequest& req, v1::MarkReply* reply) {
          reply->set_target_alive(true);
          reply->set_cpu_user_s(0.5);
          if (req.kind() == v1::MarkRequest::END) {
            reply->set_profile_folded_z(bytes);
            reply->set_profile_samples(12345);  // the coordinator counts for itself
          }
          return grpc::Status::OK;
        }));
    WindowOutcome out = Run("[profile]\nenabled = true\nfrequency = 199\n");
    EXPECT_EQ(asked_hz, 199);
    EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
    ASSERT_TRUE(out.profile.has_value());
    EXPECT_EQ(out.profile->frequency_hz, 199);
    if (bytes == *packed) {
      EXPECT_EQ(out.profile->error, "");
      EXPECT_EQ(out.profile->samples, 100u);
      EXPECT_EQ(out.profile->folded_z, bytes);
    } else {
      EXPECT_EQ(out.profile->error.rfind("the server agent's profile was refused: ", 0), 0u)
          << out.profile->error;
      EXPECT_EQ(out.profile->folded_z, "");
    }
  }
}

TEST_F(WindowProtocolTest, AnAgentThatCouldNotProfileSaysWhyAndTheWindowStands) {
  EXPECT_CALL(server(), Mark(_, _, _))
      .WillRepeatedly(Invoke([](auto*, const v1::MarkRequest& req, v1::MarkReply* reply) {
        reply->set_target_alive(true);
        reply->set_cpu_user_s(0.5);
        if (req.kind() == v1::MarkRequest::END) {
          reply->set_profile_error(std::string("perf could not start\x1b[31m: install linux-perf"));
        }
        return grpc::Status::OK;
      }));
  WindowOutcome out = Run("[profile]\nenabled = true\n");
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  ASSERT_TRUE(out.profile.has_value());
  EXPECT_EQ(out.profile->frequency_hz, 99);
  EXPECT_EQ(out.profile->error.find('\x1b'), std::string::npos) << "no control byte is kept";
  EXPECT_NE(out.profile->error.find("install linux-perf"), std::string::npos);

  // Without [profile] nothing is asked and nothing kept.
  int asked_hz = -1;
  ExpectStartTargetAskedHz(asked_hz);
  WindowOutcome plain = Run();
  EXPECT_EQ(asked_hz, 0);
  EXPECT_FALSE(plain.profile.has_value());
}

// [profile] targets: a target not listed is neither sampled nor given a profile row.
TEST_F(WindowProtocolTest, ATargetOutsideProfileTargetsIsNotProfiled) {
  for (const std::string listed : {"t1", "t2"}) {
    int asked_hz = -1;
    ExpectStartTargetAskedHz(asked_hz);
    // The window is t1's; t2 is a second target of the campaign.
    WindowOutcome out = Run("[profile]\nenabled = true\nfrequency = 149\ntargets = [\"" + listed +
                            "\"]\n[[target]]\nname = \"t2\"\ncommand = [\"/bin/true\"]\n");
    EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
    EXPECT_EQ(asked_hz, listed == "t1" ? 149 : 0) << listed;
    EXPECT_EQ(out.profile.has_value(), listed == "t1") << listed;
  }
}

TEST_F(WindowProtocolTest, UnavailableFromTheAgentsOwnCodeIsTheWindowsFailure) {
  // A name the agent could not resolve: not a lost agent, so not measured again on its own.
  EXPECT_CALL(server(), StartTarget(_, _, _))
      .WillOnce(Return(rpc::ToGrpcStatus(Status::Unavailable("resolve t1.invalid: not known"))));
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "failed");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].kind, ReasonKind::kStep);
  EXPECT_EQ(reasons[0].name, "start_target");
  EXPECT_EQ(reasons[0].code, "UNAVAILABLE");
  EXPECT_EQ(reasons[0].host, "srv");
  EXPECT_EQ(reasons[0].text, "start_target: agent srv: resolve t1.invalid: not known");
  EXPECT_FALSE(MeasuredAgain(reasons));
}

TEST_F(WindowProtocolTest, ACommitThatDoesNotBuildFailsTheBuildStep) {
  const Status failed = Status::FailedPrecondition("build of eeeeeeeeeeee failed: exit status 2");
  EXPECT_CALL(server(), StartTarget(_, _, _))
      .WillOnce(Return(rpc::ToGrpcStatus(failed, rpc::kBuildFailedReason)))
      // The same code and message without the reason: a target that would not start.
      .WillOnce(Return(rpc::ToGrpcStatus(failed)))
      // Another reason: the same.
      .WillOnce(Return(rpc::ToGrpcStatus(failed, "something_else")));
  const char* expected[] = {"build", "start_target", "start_target"};
  for (const char* step : expected) {
    WindowOutcome out = Run();
    EXPECT_EQ(out.row.verdict, "failed");
    std::vector<WindowReason> reasons = Reasons(out);
    ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
    EXPECT_EQ(reasons[0].kind, ReasonKind::kStep);
    EXPECT_EQ(reasons[0].name, step);
    EXPECT_EQ(reasons[0].code, "FAILED_PRECONDITION");
    EXPECT_EQ(reasons[0].text, std::string(step) + ": agent srv: " + failed.message());
    EXPECT_FALSE(MeasuredAgain(reasons));
  }
}

TEST_F(WindowProtocolTest, AnAgentTheTransportCannotReachIsLost) {
  EXPECT_CALL(server(), StartTarget(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect")));
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "failed");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].kind, ReasonKind::kAgentLost);
  EXPECT_EQ(reasons[0].text, "agent_lost: start_target: agent srv: failed to connect");
  EXPECT_TRUE(MeasuredAgain(reasons));
  // Not placed again until it is heard from: measuring the window again at once would spend its
  // attempts against the same silent link.
  EXPECT_EQ(registry_->StateOf("srv"), AgentState::kSuspect);
  EXPECT_EQ(registry_->StateOf("ld"), AgentState::kReady);
  ASSERT_EQ(registry_->Heartbeat("srv", "proof-srv"), ProofCheck::kMatches);
  EXPECT_EQ(registry_->StateOf("srv"), AgentState::kReady);
}

TEST_F(WindowProtocolTest, AnAgentThatCancelsBecauseItStopsIsLost) {
  EXPECT_CALL(load(), RunLoadRaw(_, _)).WillOnce(Invoke([](auto*, auto&) {
    return LoadStream(10, rpc::ToGrpcStatus(Status::Cancelled("the agent is stopping")));
  }));
  WindowOutcome out = Run();
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].kind, ReasonKind::kAgentLost);
  EXPECT_EQ(reasons[0].name, "run_load");
  EXPECT_EQ(reasons[0].host, "ld");
}

// Each step, failing with DEADLINE_EXCEEDED: while the agent's lease holds it is a slow step,
// the window's own failure; when the lease ran out meanwhile, the agent is lost.
struct StepCase {
  const char* step;
  const char* agent;
};

// What the agents' leases do while the step's call waits for its deadline.
enum class Lease {
  kHeld,     // renewed throughout
  kExpired,  // expired, and still expired at the deadline
  kBack,     // expired during the call, renewed before the deadline (a partition that healed)
};

class WindowDeadlineTest : public WindowProtocolTest,
                           public ::testing::WithParamInterface<std::tuple<StepCase, Lease>> {};

TEST_P(WindowDeadlineTest, ADeadlineFailsTheStepOrLosesTheSilentAgent) {
  const StepCase c = std::get<0>(GetParam());
  const Lease lease = std::get<1>(GetParam());  // a variable, not a binding: lambdas capture it
  const std::string step = c.step;
  const bool lost = lease != Lease::kHeld;
  auto late = [this, lease] {
    if (lease != Lease::kHeld) clock_.Advance(std::chrono::seconds(20));
    if (lease == Lease::kBack) {
      for (const char* name : {"srv", "ld"}) {
        EXPECT_EQ(registry_->Heartbeat(name, std::string("proof-") + name), ProofCheck::kMatches);
      }
    }
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
  };
  if (step == "check_host") {
    EXPECT_CALL(server(), CheckHost(_, _, _)).WillRepeatedly(Invoke([=](auto...) {
      return late();
    }));
  } else if (step == "start_target") {
    EXPECT_CALL(server(), StartTarget(_, _, _)).WillOnce(Invoke([=](auto...) { return late(); }));
  } else if (step == "conformance") {
    EXPECT_CALL(load(), CheckConformance(_, _, _)).WillOnce(Invoke([=](auto...) {
      return late();
    }));
  } else if (step == "run_load") {
    EXPECT_CALL(load(), RunLoadRaw(_, _)).WillOnce(Invoke([=](auto...) {
      return LoadStream(1000, late());
    }));
  } else if (step == "mark_begin" || step == "mark_end") {
    const auto kind = step == "mark_begin" ? v1::MarkRequest::BEGIN : v1::MarkRequest::END;
    EXPECT_CALL(server(), Mark(_, _, _))
        .WillRepeatedly(Invoke([=](auto*, const v1::MarkRequest& req, v1::MarkReply* reply) {
          if (req.kind() == kind) return late();
          reply->set_target_alive(true);
          return grpc::Status::OK;
        }));
  } else if (step == "stop_target") {
    EXPECT_CALL(server(), StopTarget(_, _, _)).WillOnce(Invoke([=](auto...) { return late(); }));
  }
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "failed") << out.row.reasons;
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_FALSE(reasons.empty());
  const WindowReason& r = reasons.front();
  EXPECT_EQ(r.name, step) << out.row.reasons;
  EXPECT_EQ(r.host, c.agent);
  EXPECT_EQ(r.code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.kind, lost ? ReasonKind::kAgentLost : ReasonKind::kStep) << r.text;
  EXPECT_EQ(MeasuredAgain(reasons), lost);
}

INSTANTIATE_TEST_SUITE_P(
    EachStep, WindowDeadlineTest,
    ::testing::Combine(::testing::Values(StepCase{"check_host", "srv"},
                                         StepCase{"start_target", "srv"},
                                         StepCase{"conformance", "ld"}, StepCase{"run_load", "ld"},
                                         StepCase{"mark_begin", "srv"}, StepCase{"mark_end", "srv"},
                                         StepCase{"stop_target", "srv"}),
                       ::testing::Values(Lease::kHeld, Lease::kExpired, Lease::kBack)),
    [](const auto& test) {
      const Lease lease = std::get<1>(test.param);
      return std::string(std::get<0>(test.param).step) + (lease == Lease::kHeld ? "_LeaseHeld"
                                                          : lease == Lease::kExpired
                                                              ? "_LeaseExpired"
                                                              : "_LeaseLapsedAndBack");
    });

void FailConformance(v1::MockAgentStub& agent) {
  EXPECT_CALL(agent, CheckConformance(_, _, _))
      .WillOnce(DoAll(Invoke([](auto*, auto&, v1::CheckConformanceReply* reply) {
                        reply->set_ok(false);
                        reply->add_diffs("s: GET / answered 404, expected 200");
                      }),
                      Return(grpc::Status::OK)));
}

TEST_F(WindowProtocolTest, ATargetFailingConformanceIsSkippedWithoutLoad) {
  FailConformance(load());
  EXPECT_CALL(load(), RunLoadRaw(_, _)).Times(0);
  EXPECT_CALL(server(), StopTarget(_, _, _)).WillOnce(Return(grpc::Status::OK));
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "skipped");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].kind, ReasonKind::kGate);
  EXPECT_EQ(reasons[0].text, "conformance: s: GET / answered 404, expected 200");
}

TEST_F(WindowProtocolTest, WithTheConformanceGateOffTheWindowIsMeasured) {
  FailConformance(load());
  EXPECT_CALL(load(), RunLoadRaw(_, _)).WillOnce(Invoke([](auto*, auto&) {
    return LoadStream(1000);
  }));
  WindowOutcome out = Run("[gates]\nconformance = false\n");
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  EXPECT_EQ(out.row.requests, 1000u);
  EXPECT_EQ(out.row.reasons, "[]");
}

void ExitDuringTheWindow(v1::MockAgentStub& agent) {
  EXPECT_CALL(agent, Mark(_, _, _))
      .WillRepeatedly(Invoke([](auto*, const v1::MarkRequest& req, v1::MarkReply* reply) {
        reply->set_target_alive(req.kind() == v1::MarkRequest::BEGIN);
        return grpc::Status::OK;
      }));
  EXPECT_CALL(agent, StopTarget(_, _, _))
      .WillOnce(DoAll(Invoke([](auto*, auto&, v1::StopTargetReply* reply) {
                        reply->set_exited_before_stop(true);
                        reply->set_exit_description("exit status 3");
                        reply->add_last_log_lines("panic: out of cheese");
                      }),
                      Return(grpc::Status::OK)));
}

TEST_F(WindowProtocolTest, ATargetThatExitsFailsTheWindowThroughItsGate) {
  ExitDuringTheWindow(server());
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "failed");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].kind, ReasonKind::kGate);
  EXPECT_EQ(reasons[0].name, "target_exited");
  EXPECT_EQ(reasons[0].text,
            "target_exited: exit status 3 during the window; last log lines: panic: out of cheese");
  EXPECT_TRUE(session_.handle.empty());
}

TEST_F(WindowProtocolTest, WithTheTargetExitedGateOffTheWindowIsJudgedByTheOthers) {
  ExitDuringTheWindow(server());
  WindowOutcome out = Run("[gates]\ntarget_exited = false\n");
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  EXPECT_EQ(out.row.reasons, "[]");
  EXPECT_TRUE(session_.handle.empty()) << "a process that exited is never kept";
}

TEST_F(WindowProtocolTest, NoResponsesIsAFailureNotAGate) {
  EXPECT_CALL(load(), RunLoadRaw(_, _)).WillOnce(Invoke([](auto*, auto&) {
    return LoadStream(0);
  }));
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "failed");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].kind, ReasonKind::kStep);
  EXPECT_EQ(reasons[0].name, "no_responses");
}

TEST_F(WindowProtocolTest, AnUnknownAgentFailsThePlacement) {
  WindowOutcome out = Run("", {"srv", "127.0.0.1", "nobody", {}});
  EXPECT_EQ(out.row.verdict, "failed");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].name, "placement");
  EXPECT_EQ(reasons[0].text, "placement: agent nobody is unknown");
}

TEST_F(WindowProtocolTest, SeveralLoadAgentsShareTheLevelAndTheirResultsAdd) {
  Register("ld2", "load");
  MockAgent& second = *agents_.at("ld2:7000");
  ON_CALL(second, CheckHost(_, _, _))
      .WillByDefault(DoAll(
          Invoke([](auto*, auto&, v1::CheckHostReply* reply) { reply->set_selftest_wall_ms(10); }),
          Return(grpc::Status::OK)));
  std::vector<int> connections;
  std::mutex mu;
  // The streams and their expectations are made here: gMock wants expectations set on one thread,
  // and each agent's stream is read on a thread of its own.
  for (MockAgent* agent : {&load(), &second}) {
    EventReader* stream = LoadStream(600);
    EXPECT_CALL(*agent, RunLoadRaw(_, _))
        .WillOnce(Invoke([&, stream](auto*, const v1::RunLoadRequest& req) {
          std::lock_guard lock(mu);
          connections.push_back(req.connections());
          return stream;
        }));
  }
  WindowOutcome out = Run("", {"srv", "127.0.0.1", "ld", {"ld", "ld2"}});
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  EXPECT_EQ(out.row.requests, 1200u);
  EXPECT_EQ(out.row.load_agent, "ld,ld2");
  EXPECT_EQ(connections, (std::vector<int>{1, 1}));
  EXPECT_EQ(out.spooled.size(), 3u);
}

// `agent` answers its CheckHost calls with these self-tests in order, then the last again.
void SelfTests(MockAgent& agent, std::vector<double> ms) {
  auto calls = std::make_shared<size_t>(0);
  ON_CALL(agent, CheckHost(_, _, _))
      .WillByDefault(DoAll(Invoke([ms, calls](auto*, auto&, v1::CheckHostReply* reply) {
                             reply->set_selftest_wall_ms(ms[std::min(*calls, ms.size() - 1)]);
                             ++*calls;
                           }),
                           Return(grpc::Status::OK)));
}

// The window's own self-test, then the seven calibration runs: median 100, spread 1.4826 x 0.03
// (selftest_drift_test.cc), so a threshold of 4 x 4.4478% = 17.7912%.
const std::vector<double> kWithinCalibration = {115, 100, 96, 104, 98, 103, 99, 160, 100};

TEST_F(WindowProtocolTest, TheFirstWindowCalibratesEachAgentAndJudgesByItsSpread) {
  SelfTests(server(), kWithinCalibration);
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;  // +15% < 17.8%
  EXPECT_NEAR(*out.row.selftest_drift, 0.15, 1e-12);
  ASSERT_EQ(out.calibrations.size(), 2u);
  const SelftestCalibrationRow& srv = out.calibrations[0];
  EXPECT_EQ(srv.campaign_id, 1);
  EXPECT_EQ(srv.agent, "srv");
  EXPECT_EQ(srv.runs, kCalibrationRuns);
  EXPECT_EQ(srv.median_ms, 100);
  EXPECT_NEAR(*srv.spread, 0.044478, 1e-12);
  EXPECT_NEAR(srv.threshold_pct, 17.7912, 1e-9);
  EXPECT_EQ(srv.threshold_source, "calibrated");
  const SelftestCalibrationRow& ld = out.calibrations[1];
  EXPECT_EQ(ld.agent, "ld");
  EXPECT_EQ(ld.median_ms, 10);
  EXPECT_EQ(ld.spread, 0.0);
  EXPECT_EQ(ld.threshold_pct, 10);
  EXPECT_EQ(ld.threshold_source, "configured");
  // Calibrated once per campaign: the next window only checks.
  EXPECT_CALL(server(), CheckHost(_, _, _)).Times(1);
  out = Run();
  EXPECT_EQ(out.row.verdict, "valid") << out.row.reasons;
  EXPECT_TRUE(out.calibrations.empty());
}

TEST_F(WindowProtocolTest, WithoutTheSpreadTheConfiguredThresholdJudges) {
  SelfTests(server(), kWithinCalibration);
  WindowOutcome out = Run("[gates]\nselftest_drift_spread_multiple = 0\n");
  EXPECT_EQ(out.row.verdict, "invalid");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].text, "selftest_drift: server host +15% > 10%");
  ASSERT_EQ(out.calibrations.size(), 2u);
  EXPECT_EQ(out.calibrations[0].threshold_pct, 10);
  EXPECT_EQ(out.calibrations[0].threshold_source, "configured");
}

TEST_F(WindowProtocolTest, ASelftestTwiceAsSlowIsRefusedThoughTheCalibrationWasNoisy) {
  // Calibration 70 80 90 100 110 120 130: median 100, deviations 0 0.1 0.1 0.2 0.2 0.3 0.3,
  // spread 1.4826 x 0.2 = 29.652%; 4 x that is 118.6%, held at 50%.
  SelfTests(server(), {200, 100, 70, 130, 80, 120, 90, 110});
  WindowOutcome out = Run();
  EXPECT_EQ(out.row.verdict, "invalid");
  std::vector<WindowReason> reasons = Reasons(out);
  ASSERT_EQ(reasons.size(), 1u) << out.row.reasons;
  EXPECT_EQ(reasons[0].kind, ReasonKind::kGate);
  EXPECT_EQ(reasons[0].name, "selftest_drift");
  EXPECT_EQ(reasons[0].text,
            "selftest_drift: server host +100% > 50% (calibrated: 4 x spread 29.7%, capped at "
            "50%)");
  ASSERT_EQ(out.calibrations.size(), 2u);
  EXPECT_EQ(out.calibrations[0].threshold_pct, 50);
  EXPECT_EQ(out.calibrations[0].threshold_source, "capped");
}

TEST(KeepWorstTest, TheLoadSideDriftIsTheAgentFarthestBeyondItsOwnThreshold) {
  SelftestDriftGate gate;  // 10%, 4 x spread
  HostMeasures noisy, quiet;
  noisy.selftest_drift = 0.30;  // within its 4 x 10% = 40%
  noisy.selftest_spread = 0.10;
  quiet.selftest_drift = 0.20;  // beyond 10%
  for (bool quiet_first : {false, true}) {
    HostMeasures worst;
    window_detail::KeepWorst(quiet_first ? quiet : noisy, gate, worst);
    window_detail::KeepWorst(quiet_first ? noisy : quiet, gate, worst);
    EXPECT_EQ(worst.selftest_drift, 0.20);
    EXPECT_FALSE(worst.selftest_spread.has_value());
  }
}

// Only slower fails: a load agent far faster than its calibration never hides a slower one.
TEST(KeepWorstTest, AFasterAgentIsNeverTheWorst) {
  SelftestDriftGate gate;
  HostMeasures fast, slow;
  fast.selftest_drift = -0.80;
  slow.selftest_drift = 0.60;
  slow.selftest_descheduled = true;
  for (bool fast_first : {false, true}) {
    HostMeasures worst;
    window_detail::KeepWorst(fast_first ? fast : slow, gate, worst);
    window_detail::KeepWorst(fast_first ? slow : fast, gate, worst);
    EXPECT_EQ(worst.selftest_drift, 0.60);
    EXPECT_TRUE(worst.selftest_descheduled);
  }
}

}  // namespace
}  // namespace benchlab

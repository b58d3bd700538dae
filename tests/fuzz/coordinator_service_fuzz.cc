// libFuzzer target: the coordinator's gRPC service (coordinator/server/coordinator_service.h)
// called in process, as any agent or client that reaches the coordinator's port could call it.
// An input is a sequence of calls (tests/fuzz/service_input.h), each one request message of:
//   0 RegisterAgent  1 Heartbeat      2 OfferResults  3 ListAgents     4 SubmitCampaign
//   5 ListCampaigns  6 WatchCampaign  7 ListWindows   8 RerunWindows   9 CancelCampaign
//   10 GetReport      11 RemeasureSeries 12 CheckCampaign 13 GetHistory     14 GetRegressions
//   15 GetAudit       16 StartBisection  17 GetBisection
// Unary RPCs are called directly with a default ServerContext; WatchCampaign, a server stream,
// goes through an in-process gRPC channel (no port) with a 20 ms deadline. Every input gets a
// fresh world: a Store on its own copy of an empty database, an AgentRegistry, a Scheduler
// whose loop never starts and the series re-measurement RemeasureSeries asks, so nothing dials the
// agents an input registers (their channels stay idle; the loopback sink's guard,
// tests/fuzz/loopback_sink.h, refuses any connection anyway).
//
// BENCHLAB_FUZZ_VERBOSE=1 in the environment prints each call and what it returned.
//
// Checked beyond the sanitizers, as coordinator.proto and docs/security.md state the
// coordinator's contract: a campaign SubmitCampaign accepts has at most 100,000 windows (the
// default --max-windows) and is stored, queued, under the name and window count it replied with;
// a campaign CheckCampaign checks is not stored (it stores as many campaigns as before, however
// it ends); a registered agent is known; while an agent's lease is live (the whole input), a
// registration or heartbeat of its name with another instance proof is refused; a
// StartBisection that is refused stores no bisection (docs/security.md: a refused request leaves
// nothing behind). No StartBisection can succeed here: the server agent's ListCommits reaches the
// loopback sink, which answers no gRPC.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "coordinator/server/agent_registry.h"
#include "coordinator/server/coordinator_bisect.h"
#include "coordinator/server/coordinator_service.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/series_remeasure.h"
#include "coordinator/store.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/loopback_sink.h"
#include "tests/fuzz/scratch_dir.h"
#include "tests/fuzz/service_input.h"
#include "tests/fuzz/stream_call.h"

namespace {

namespace fs = std::filesystem;
using namespace benchlab;

constexpr size_t kMaxCalls = 8;
enum Rpc {
  kRegisterAgent,
  kHeartbeat,
  kOfferResults,
  kListAgents,
  kSubmitCampaign,
  kListCampaigns,
  kWatchCampaign,
  kListWindows,
  kRerunWindows,
  kCancelCampaign,
  kGetReport,
  kRemeasureSeries,
  kCheckCampaign,
  kGetHistory,
  kGetRegressions,
  kGetAudit,
  kStartBisection,
  kGetBisection,
  kRpcCount
};
constexpr const char* kRpcNames[kRpcCount] = {
    "RegisterAgent", "Heartbeat",       "OfferResults",  "ListAgents",   "SubmitCampaign",
    "ListCampaigns", "WatchCampaign",   "ListWindows",   "RerunWindows", "CancelCampaign",
    "GetReport",     "RemeasureSeries", "CheckCampaign", "GetHistory",   "GetRegressions",
    "GetAudit",      "StartBisection",  "GetBisection"};

// An empty store, made once: each input opens a copy of it, in a fifth of the time that applying
// the schema's migrations to a new database takes.
class StoreTemplate {
 public:
  StoreTemplate() {
    dir_ = benchlab::fuzz::MakeScratchDir("store");
    auto made = Store::Open((dir_ / "template.db").string());
    FUZZ_CHECK(made.ok(), made.status().ToString());
  }
  std::unique_ptr<Store> Open() const {
    const fs::path db = dir_ / "input.db";
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(db.string() + suffix);
    fs::copy_file(dir_ / "template.db", db, fs::copy_options::overwrite_existing);
    auto opened = Store::Open(db.string());
    FUZZ_CHECK(opened.ok(), opened.status().ToString());
    return std::move(opened).value();
  }

 private:
  fs::path dir_;
};

// One input's coordinator, and the instance proof of each agent it registered.
struct World {
  explicit World(const StoreTemplate& empty) : store(empty.Open()) {}

  std::unique_ptr<Store> store;
  AgentRegistry agents;
  Scheduler scheduler{*store, agents};
  SeriesRemeasure remeasure{*store, agents, scheduler, RemeasureSettings{}, false};
  CoordinatorBisections bisections{*store, agents, scheduler};
  CoordinatorService service{*store, agents, scheduler, nullptr, &remeasure, &bisections};
  std::map<std::string, std::string> proofs;
};

// The in-process server's service: WatchCampaign on the current input's service.
class Forwarder final : public v1::Coordinator::Service {
 public:
  benchlab::fuzz::StreamCall<CoordinatorService> call;
  grpc::Status WatchCampaign(grpc::ServerContext* ctx, const v1::WatchCampaignRequest* req,
                             grpc::ServerWriter<v1::CampaignEvent>* writer) override {
    return call.Run(*ctx, [&](CoordinatorService& s) { return s.WatchCampaign(ctx, req, writer); });
  }
};

struct Harness {
  StoreTemplate empty_store;
  Forwarder forwarder;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Coordinator::Stub> stub;

  Harness() {
    spdlog::set_level(spdlog::level::off);
    google::protobuf::SetLogHandler(nullptr);  // not a word per unparsable message
    benchlab::fuzz::StartLoopbackSink();
    grpc::ServerBuilder builder;
    builder.RegisterService(&forwarder);
    server = builder.BuildAndStart();
    FUZZ_CHECK(server != nullptr, "in-process gRPC server");
    stub = v1::Coordinator::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  }

  // The watch of a campaign that is not finished ends by its 20 ms deadline; the scheduler's
  // notification then wakes the handler, which sees its call cancelled.
  grpc::Status Watch(World& w, const v1::WatchCampaignRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(20));
    forwarder.call.Begin(&w.service, ctx);
    auto reader = stub->WatchCampaign(&ctx, req);
    v1::CampaignEvent event;
    while (reader->Read(&event)) {
    }
    grpc::Status status = reader->Finish();
    forwarder.call.End([&] { w.scheduler.Notify(); });
    return status;
  }
};

using benchlab::fuzz::NotParsed;
using benchlab::fuzz::Parse;

// The coordinator's default --max-windows (docs/security.md).
constexpr int kMaxWindows = 100000;

void CheckSubmitted(Store& store, const v1::SubmitCampaignReply& reply) {
  FUZZ_CHECK(reply.total_windows() <= kMaxWindows, "campaign \"" + reply.name() + "\" of " +
                                                       std::to_string(reply.total_windows()) +
                                                       " windows accepted");
  auto found = store.FindCampaign(reply.name());
  FUZZ_CHECK(found.ok() && *found, "submitted campaign \"" + reply.name() + "\" is not stored");
  const CampaignRow& row = **found;
  FUZZ_CHECK(row.id == reply.campaign_id() && row.state == "queued" &&
                 row.total_windows == reply.total_windows(),
             "campaign \"" + reply.name() + "\" stored as " + row.state + " with " +
                 std::to_string(row.total_windows) + " windows, replied " +
                 std::to_string(reply.total_windows()));
}

// How many campaigns the store holds.
size_t StoredCampaigns(Store& store) {
  auto campaigns = store.ListCampaigns();
  FUZZ_CHECK(campaigns.ok(), campaigns.status().ToString());
  return campaigns->size();
}

// How many bisections the store holds.
size_t StoredBisections(Store& store) {
  auto bisections = store.ListBisections();
  FUZZ_CHECK(bisections.ok(), bisections.status().ToString());
  return bisections->size();
}

// An agent's name, registered in this input (so its lease is live), answers only to the proof it
// registered with (coordinator.proto).
void CheckProof(const World& w, const std::string& name, const std::string& proof,
                const char* what) {
  auto it = w.proofs.find(name);
  FUZZ_CHECK(it == w.proofs.end() || it->second == proof,
             std::string(what) + " of agent \"" + name + "\" with proof \"" + proof +
                 "\" accepted; it registered with \"" + it->second + "\"");
}

// Calls a unary RPC with the request the bytes hold; NotParsed when they hold none.
template <typename Request, typename Reply, typename Method>
grpc::Status Unary(CoordinatorService& s, Method method, std::string_view message, Request& req,
                   Reply& reply) {
  grpc::ServerContext ctx;
  if (!Parse(message, req)) return NotParsed();
  return (s.*method)(&ctx, &req, &reply);
}

grpc::Status Dispatch(Harness& h, World& w, int rpc, std::string_view message) {
  CoordinatorService& s = w.service;
  switch (rpc) {
    case kRegisterAgent: {
      v1::RegisterAgentRequest req;
      v1::RegisterAgentReply reply;
      grpc::Status status = Unary(s, &CoordinatorService::RegisterAgent, message, req, reply);
      if (status.ok()) {
        FUZZ_CHECK(w.agents.StateOf(req.name()).has_value(),
                   "agent \"" + req.name() + "\" registered but unknown");
        CheckProof(w, req.name(), req.instance_proof(), "registration");
        w.proofs[req.name()] = req.instance_proof();
      }
      return status;
    }
    case kHeartbeat: {
      v1::HeartbeatRequest req;
      v1::HeartbeatReply reply;
      grpc::Status status = Unary(s, &CoordinatorService::Heartbeat, message, req, reply);
      if (status.ok() && reply.known())
        CheckProof(w, req.name(), req.instance_proof(), "heartbeat");
      return status;
    }
    case kOfferResults: {
      v1::OfferResultsRequest req;
      v1::OfferResultsReply reply;
      return Unary(s, &CoordinatorService::OfferResults, message, req, reply);
    }
    case kListAgents: {
      v1::ListAgentsRequest req;
      v1::ListAgentsReply reply;
      return Unary(s, &CoordinatorService::ListAgents, message, req, reply);
    }
    case kSubmitCampaign: {
      v1::SubmitCampaignRequest req;
      v1::SubmitCampaignReply reply;
      grpc::Status status = Unary(s, &CoordinatorService::SubmitCampaign, message, req, reply);
      if (status.ok()) CheckSubmitted(*w.store, reply);
      return status;
    }
    case kListCampaigns: {
      v1::ListCampaignsRequest req;
      v1::ListCampaignsReply reply;
      return Unary(s, &CoordinatorService::ListCampaigns, message, req, reply);
    }
    case kWatchCampaign: {
      v1::WatchCampaignRequest req;
      if (!Parse(message, req)) return NotParsed();
      return h.Watch(w, req);
    }
    case kListWindows: {
      v1::ListWindowsRequest req;
      v1::ListWindowsReply reply;
      return Unary(s, &CoordinatorService::ListWindows, message, req, reply);
    }
    case kRerunWindows: {
      v1::RerunWindowsRequest req;
      v1::RerunWindowsReply reply;
      return Unary(s, &CoordinatorService::RerunWindows, message, req, reply);
    }
    case kCancelCampaign: {
      v1::CancelCampaignRequest req;
      v1::CancelCampaignReply reply;
      return Unary(s, &CoordinatorService::CancelCampaign, message, req, reply);
    }
    case kGetReport: {
      v1::GetReportRequest req;
      v1::GetReportReply reply;
      return Unary(s, &CoordinatorService::GetReport, message, req, reply);
    }
    case kRemeasureSeries: {
      v1::RemeasureSeriesRequest req;
      v1::RemeasureSeriesReply reply;
      return Unary(s, &CoordinatorService::RemeasureSeries, message, req, reply);
    }
    case kCheckCampaign: {
      v1::SubmitCampaignRequest req;
      v1::CheckCampaignReply reply;
      const size_t before = StoredCampaigns(*w.store);
      grpc::Status status = Unary(s, &CoordinatorService::CheckCampaign, message, req, reply);
      FUZZ_CHECK(StoredCampaigns(*w.store) == before,
                 "CheckCampaign of \"" + req.source() + "\" stored a campaign");
      return status;
    }
    case kGetHistory: {
      v1::GetHistoryRequest req;
      v1::GetHistoryReply reply;
      return Unary(s, &CoordinatorService::GetHistory, message, req, reply);
    }
    case kGetRegressions: {
      v1::GetRegressionsRequest req;
      v1::GetRegressionsReply reply;
      return Unary(s, &CoordinatorService::GetRegressions, message, req, reply);
    }
    case kGetAudit: {
      v1::GetAuditRequest req;
      v1::GetAuditReply reply;
      return Unary(s, &CoordinatorService::GetAudit, message, req, reply);
    }
    case kStartBisection: {
      v1::StartBisectionRequest req;
      v1::StartBisectionReply reply;
      const size_t before = StoredBisections(*w.store);
      grpc::Status status = Unary(s, &CoordinatorService::StartBisection, message, req, reply);
      FUZZ_CHECK(
          status.ok() || StoredBisections(*w.store) == before,
          "a StartBisection refused with \"" + status.error_message() + "\" stored a bisection");
      return status;
    }
    default: {
      v1::GetBisectionRequest req;
      v1::GetBisectionReply reply;
      return Unary(s, &CoordinatorService::GetBisection, message, req, reply);
    }
  }
}

}  // namespace

// A smaller ASan quarantine than the default 256 MB: each input makes and frees a whole store,
// and recycling that memory sooner triples the executions per second. Use-after-free within an
// input is still caught.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=32"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = new Harness();  // lives until exit: the gRPC server outlives inputs
  World world(harness->empty_store);
  for (const auto& call : benchlab::fuzz::SplitCalls(data, size, kMaxCalls)) {
    const int rpc = call.selector % kRpcCount;
    benchlab::fuzz::Traced(kRpcNames[rpc],
                           [&] { return Dispatch(*harness, world, rpc, call.message); });
  }
  return 0;
}

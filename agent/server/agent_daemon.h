// AgentDaemon: the agent as one object: its catalogue and service, listening on one address
// (loopback unless configured otherwise), registering with its coordinator and renewing the
// lease by heartbeat from a background thread. Used by `benchlab agent`, by the embedded lab
// and, in-process, by the integration tests. Start/Shutdown from one thread.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/server.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/server/agent_config.h"
#include "agent/server/agent_metrics.h"
#include "agent/server/agent_service.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/clock.h"
#include "common/owner_lock.h"
#include "common/parse.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"

namespace benchlab {

class TlsContext;  // rpc/tls.h

class AgentDaemon {
 public:
  // `clock` times how long the coordinator has been unreachable (NoteReachability) and paces the
  // TLS files' re-reads; the pause between heartbeats and gRPC deadlines keep real time.
  AgentDaemon(SysEnv& env, AgentConfig config, Clock& clock = RealClockInstance());
  ~AgentDaemon();
  AgentDaemon(const AgentDaemon&) = delete;
  AgentDaemon& operator=(const AgentDaemon&) = delete;

  // Listens, then registers in the background (retrying until the coordinator answers).
  Result<HostPort> Start();
  // Cancels every call in progress (load stops, external tools and starting targets are
  // killed), stops heartbeats and serving, and stops every target still running. Returns
  // within about kShutdownGrace plus the targets' 2 s stop grace.
  void Shutdown();
  bool registered() const { return registered_.load(); }

  // How long Shutdown lets calls in progress end after cancelling them, before gRPC cancels what
  // is left.
  static constexpr std::chrono::milliseconds kShutdownGrace{2000};
  // Reads the [tls] files again (SIGHUP); on an error the previous ones stay in force. OK
  // without TLS.
  Status ReloadTls();

  // The most one OfferResults page carries (keys and payloads), well under gRPC's 4 MiB default
  // message limit; a record larger than that goes alone.
  static constexpr uint64_t kOfferPageBytes = 1 << 20;
  // And at most this many results, the coordinator's kMaxOfferedResults (docs/security.md).
  static constexpr size_t kOfferPageResults = 64;
  // gRPC's threads serving the agent's calls (rpc/server_port.h): a coordinator makes a few
  // calls at once per window; a call beyond them is RESOURCE_EXHAUSTED.
  static constexpr int kMaxGrpcThreads = 64;

 private:
  void RegistrationLoop(std::string address);
  // One RegisterAgent (until registered) or Heartbeat.
  grpc::Status RegisterOrBeat(v1::Coordinator::Stub& stub, const v1::RegisterAgentRequest& request);
  // After each RegisterOrBeat: from a call that succeeds after the coordinator was unreachable,
  // offers the spool again; once it has been unreachable longer than LostAfter, stops every
  // target (once per outage).
  void NoteReachability(const grpc::Status& status);
  // How long the coordinator takes to judge a silent agent lost: its lease plus its grace, which
  // is twice the lease (docs/fleet.md).
  std::chrono::milliseconds LostAfter() const { return lease_ * kLeasesUntilLost; }
  static constexpr int kLeasesUntilLost = 3;
  // Offers the spool a page at a time; false when the coordinator could not be reached (offer
  // again later). A page the coordinator refuses is logged and skipped.
  bool OfferSpool(v1::Coordinator::Stub& stub);

  SysEnv& env_;
  Clock& clock_;
  const AgentConfig config_;
  const std::string instance_;
  std::string instance_proof_;  // a secret: never logged
  // The state directory's lock (common/owner_lock.h), held from Start for the daemon's life:
  // two agents on one state directory would share one spool and one instance proof.
  std::optional<OwnerLock> state_lock_;
  std::shared_ptr<TlsContext> tls_;  // from config_.tls at Start; null: plaintext
  AgentService service_;
  AgentMetrics metrics_;  // /metrics on config_.metrics_listen (docs/metrics.md)
  std::unique_ptr<grpc::Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> registered_{false};
  // Of the registration thread only:
  bool offer_pending_ = false;  // the spool is still to be offered since the last registration
  std::chrono::milliseconds pause_{200};   // between heartbeats
  std::chrono::milliseconds lease_{5000};  // the coordinator's, from the registration reply
  // Since when every call failed with UNAVAILABLE or DEADLINE_EXCEEDED; unset while it answers.
  std::optional<std::chrono::steady_clock::time_point> unreachable_since_;
  bool stopped_while_unreachable_ = false;  // NoteReachability stopped the targets this outage
  // The call to the coordinator in flight, cancelled by Shutdown so that it need not wait for
  // the call's deadline; guarded by mu_.
  grpc::ClientContext* in_flight_ = nullptr;
  class InFlight {
   public:
    InFlight(AgentDaemon& daemon, grpc::ClientContext& ctx);
    ~InFlight();

   private:
    AgentDaemon& daemon_;
  };
};

}  // namespace benchlab

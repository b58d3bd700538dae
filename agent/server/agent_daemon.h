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
#include <string>
#include <thread>
#include <vector>

#include "agent/server/agent_service.h"
#include "agent/server/allowed_targets.h"
#include "agent/server/limits.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/parse.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"

namespace benchlab {

// LoadAgentConfig fills every directory (docs/agent.md); a daemon built in process from this
// struct uses what is set: no spool without spool_dir, and without state_dir an instance proof
// that lives only as long as the daemon. run_root, spool_dir and state_dir must be private
// (agent/private_dir.h): Start() refuses them otherwise.
struct AgentConfig {
  std::string name;
  std::vector<std::string> roles;  // "server" and/or "load"
  HostPort listen{"127.0.0.1", 0};
  std::string advertise;    // address given to the coordinator; default: the bound one
  std::string coordinator;  // HOST:PORT
  std::string state_dir;    // holds instance_proof
  std::string run_root;     // per-window run directories and logs
  std::vector<TargetDef> catalogue;
  std::vector<std::string> labels;  // for placement by label
  std::vector<int> allowed_cpus;    // CPUs targets and load may use; empty: the agent's own
  std::string spool_dir;            // window results awaiting the coordinator's acknowledgement
  std::vector<pid_t> own_roots;     // other process trees whose CPU is not foreign (the lab's)
  std::chrono::milliseconds sample_period{100};  // the samplers' period over a measured interval
  // Where load and conformance requests may go (load role).
  AllowedTargets allowed_targets = AllowedTargets::Loopback();
  AgentLimits limits;      // per-CPU defaults resolved at start (ResolveLimits)
  std::string config_dir;  // the configuration file's directory: templates may come from there
};

// The host load agents reach this agent's targets at: the advertised address's host, else the
// one it listens on; 127.0.0.1 when that is every address (0.0.0.0, ::) or unreadable.
std::string TargetHost(const AgentConfig& config);

class AgentDaemon {
 public:
  AgentDaemon(SysEnv& env, AgentConfig config);
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
  // The most one OfferResults page carries (keys and payloads), well under gRPC's 4 MiB default
  // message limit; a record larger than that goes alone.
  static constexpr uint64_t kOfferPageBytes = 1 << 20;
  // And at most this many results, the coordinator's kMaxOfferedResults (docs/security.md).
  static constexpr size_t kOfferPageResults = 64;

 private:
  void RegistrationLoop(std::string address);
  // One RegisterAgent (until registered) or Heartbeat.
  grpc::Status RegisterOrBeat(v1::Coordinator::Stub& stub, const v1::RegisterAgentRequest& request);
  // Offers the spool a page at a time; false when the coordinator could not be reached (offer
  // again later). A page the coordinator refuses is logged and skipped.
  bool OfferSpool(v1::Coordinator::Stub& stub);

  SysEnv& env_;
  const AgentConfig config_;
  const std::string instance_;
  std::string instance_proof_;  // a secret: never logged
  AgentService service_;
  std::unique_ptr<grpc::Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> registered_{false};
  // Of the registration thread only:
  bool offer_pending_ = false;  // the spool is still to be offered since the last registration
  std::chrono::milliseconds pause_{200};  // between heartbeats
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

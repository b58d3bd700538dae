// AgentDaemon: the agent as one object: its catalogue and service, listening on one address
// (loopback unless configured otherwise), registering with its coordinator and renewing the
// lease by heartbeat from a background thread. Used by `benchlab agent`, by the embedded lab
// and, in-process, by the integration tests. Start/Shutdown from one thread.
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/server/agent_service.h"
#include "common/parse.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"

namespace benchlab {

struct AgentConfig {
  std::string name;
  std::vector<std::string> roles;  // "server" and/or "load"
  HostPort listen{"127.0.0.1", 0};
  std::string advertise;    // address given to the coordinator; default: the bound one
  std::string coordinator;  // HOST:PORT
  std::string run_root;     // per-window run directories and logs
  std::vector<TargetDef> catalogue;
  std::vector<std::string> labels;  // for placement by label
  std::vector<int> allowed_cpus;    // CPUs targets and load may use; empty: the agent's own
  std::string spool_dir;            // window results awaiting the coordinator's acknowledgement
  std::vector<pid_t> own_roots;     // other process trees whose CPU is not foreign (the lab's)
  std::chrono::milliseconds sample_period{100};  // the samplers' period over a measured interval
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
  // Stops heartbeats and serving, and stops every target still running.
  void Shutdown();
  bool registered() const { return registered_.load(); }

 private:
  void RegistrationLoop(std::string address);

  SysEnv& env_;
  const AgentConfig config_;
  const std::string instance_;
  AgentService service_;
  std::unique_ptr<grpc::Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<bool> registered_{false};
};

}  // namespace benchlab

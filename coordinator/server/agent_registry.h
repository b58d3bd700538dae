// AgentRegistry: the agents the coordinator knows, with their roles, catalogue, host facts and
// lease. Agents register and then heartbeat well within the lease; one whose lease ran out is
// "lost" and not placed. The registry owns one gRPC channel per agent. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "benchlab/v1/agent.grpc.pb.h"
#include "benchlab/v1/coordinator.pb.h"

namespace benchlab {

class AgentRegistry {
 public:
  explicit AgentRegistry(std::chrono::milliseconds lease = std::chrono::milliseconds(5000));

  std::chrono::milliseconds lease() const { return lease_; }
  void Register(const v1::RegisterAgentRequest& request);
  // False when the agent is unknown (it must register again).
  bool Heartbeat(const std::string& name);
  // Marks an agent busy or ready (ready agents can be placed).
  void SetBusy(const std::string& name, bool busy);

  struct Placement {
    std::string server_agent;
    std::string server_host;  // where the load agent reaches the server's targets
    std::string load_agent;
  };
  // The first ready server agent whose catalogue holds every target, and the first ready load
  // agent (another agent when there is one). nullopt with a reason when none fits yet.
  std::optional<Placement> Place(const std::vector<std::string>& targets, std::string* why);

  // A stub for calling the agent; nullptr when unknown.
  std::shared_ptr<v1::Agent::Stub> Stub(const std::string& name);
  std::vector<v1::AgentInfo> List();
  // The agent's host facts as a JSON object ("{}" when unknown), for the window record.
  std::string HostFactsJson(const std::string& name);

 private:
  struct Entry {
    v1::AgentInfo info;
    std::chrono::steady_clock::time_point last_seen;
    bool busy = false;
    std::shared_ptr<v1::Agent::Stub> stub;
  };
  bool LiveLocked(const Entry& entry, std::chrono::steady_clock::time_point now) const;

  const std::chrono::milliseconds lease_;
  std::mutex mu_;
  std::map<std::string, Entry> agents_;
};

}  // namespace benchlab

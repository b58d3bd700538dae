#include "coordinator/server/agent_registry.h"

#include <algorithm>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <nlohmann/json.hpp>

#include "common/parse.h"
#include "spdlog/spdlog.h"

namespace benchlab {

AgentRegistry::AgentRegistry(std::chrono::milliseconds lease) : lease_(lease) {}

void AgentRegistry::Register(const v1::RegisterAgentRequest& request) {
  std::lock_guard lock(mu_);
  Entry& entry = agents_[request.name()];
  if (entry.info.address() != request.address() || !entry.stub) {
    auto channel = grpc::CreateChannel(request.address(), grpc::InsecureChannelCredentials());
    entry.stub = v1::Agent::NewStub(channel);
  }
  entry.info.set_name(request.name());
  entry.info.mutable_roles()->CopyFrom(request.roles());
  entry.info.set_address(request.address());
  *entry.info.mutable_host() = request.host();
  entry.info.mutable_catalogue()->CopyFrom(request.catalogue());
  entry.info.mutable_labels()->CopyFrom(request.labels());
  *entry.info.mutable_versions() = request.versions();
  entry.last_seen = std::chrono::steady_clock::now();
  entry.busy = false;
  spdlog::info("agent {} registered from {} (roles: {}, {} catalogue targets)", request.name(),
               request.address(), fmt::join(request.roles(), ","), request.catalogue_size());
}

bool AgentRegistry::Heartbeat(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return false;
  it->second.last_seen = std::chrono::steady_clock::now();
  return true;
}

void AgentRegistry::SetBusy(const std::string& name, bool busy) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it != agents_.end()) it->second.busy = busy;
}

bool AgentRegistry::LiveLocked(const Entry& entry,
                               std::chrono::steady_clock::time_point now) const {
  return now - entry.last_seen <= lease_;
}

std::optional<AgentRegistry::Placement> AgentRegistry::Place(
    const std::vector<std::string>& targets, std::string* why) {
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  auto has_role = [](const Entry& e, const std::string& role) {
    return std::find(e.info.roles().begin(), e.info.roles().end(), role) != e.info.roles().end();
  };
  const Entry* server = nullptr;
  std::string missing;
  for (const auto& [name, entry] : agents_) {
    if (!LiveLocked(entry, now) || entry.busy || !has_role(entry, "server")) continue;
    bool all = true;
    for (const auto& target : targets) {
      if (std::find(entry.info.catalogue().begin(), entry.info.catalogue().end(), target) ==
          entry.info.catalogue().end()) {
        all = false;
        missing = "agent " + name + " lacks target \"" + target + "\"";
      }
    }
    if (all) {
      server = &entry;
      break;
    }
  }
  if (server == nullptr) {
    *why = "no ready server agent has every target of the campaign" +
           (missing.empty() ? std::string() : " (" + missing + ")");
    return std::nullopt;
  }
  const Entry* load = nullptr;
  for (const auto& [name, entry] : agents_) {
    if (!LiveLocked(entry, now) || entry.busy || !has_role(entry, "load")) continue;
    if (load == nullptr || (load == server && &entry != server)) load = &entry;
  }
  if (load == nullptr) {
    *why = "no ready load agent";
    return std::nullopt;
  }
  Placement placement;
  placement.server_agent = server->info.name();
  placement.load_agent = load->info.name();
  auto address = ParseHostPort(server->info.address());
  placement.server_host = address.ok() ? address->host : "127.0.0.1";
  return placement;
}

std::shared_ptr<v1::Agent::Stub> AgentRegistry::Stub(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  return it == agents_.end() ? nullptr : it->second.stub;
}

std::string AgentRegistry::HostFactsJson(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return "{}";
  const v1::HostFacts& h = it->second.info.host();
  nlohmann::json facts = {{"hostname", h.hostname()},         {"cpu_model", h.cpu_model()},
                          {"logical_cores", h.logical_cores()}, {"physical_cores", h.physical_cores()},
                          {"smt", h.smt()},                     {"governor", h.governor()},
                          {"kernel", h.kernel()},               {"memory_kb", h.memory_kb()},
                          {"hypervisor", h.hypervisor()},       {"agent_version", h.agent_version()}};
  return facts.dump();
}

std::vector<v1::AgentInfo> AgentRegistry::List() {
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  std::vector<v1::AgentInfo> out;
  for (const auto& [name, entry] : agents_) {
    v1::AgentInfo info = entry.info;
    info.set_state(!LiveLocked(entry, now) ? "lost" : entry.busy ? "busy" : "ready");
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace benchlab

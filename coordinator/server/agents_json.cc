#include "coordinator/server/agents_json.h"

#include <string>

namespace benchlab {

nlohmann::json HostFactsToJson(const v1::HostFacts& h) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : h.findings()) {
    findings.push_back(
        {{"name", f.name()}, {"value", f.value()}, {"status", f.status()}, {"why", f.why()}});
  }
  return {{"hostname", h.hostname()},
          {"cpu_model", h.cpu_model()},
          {"logical_cores", h.logical_cores()},
          {"physical_cores", h.physical_cores()},
          {"smt", h.smt()},
          {"governor", h.governor()},
          {"kernel", h.kernel()},
          {"memory_kb", h.memory_kb()},
          {"hypervisor", h.hypervisor()},
          {"agent_version", h.agent_version()},
          {"findings", std::move(findings)}};
}

nlohmann::ordered_json AgentsToJson(const std::vector<v1::AgentInfo>& agents) {
  // ordered_json keeps the keys in the order written here, name first, for people reading it.
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& a : agents) {
    nlohmann::ordered_json agent = {
        {"name", a.name()},
        {"state", a.state()},
        {"roles", std::vector<std::string>(a.roles().begin(), a.roles().end())},
        {"labels", std::vector<std::string>(a.labels().begin(), a.labels().end())},
        {"address", a.address()},
        {"lease_age_ms", a.lease_age_ms()},
        {"catalogue", std::vector<std::string>(a.catalogue().begin(), a.catalogue().end())},
        {"versions", nlohmann::ordered_json::object()},
    };
    if (!a.certificate_expires().empty()) agent["certificate_expires"] = a.certificate_expires();
    for (const auto& [target, version] : a.versions()) agent["versions"][target] = version;
    // Catalogue targets the agent cannot start on its host (agent/start_check.h), with why.
    if (!a.unstartable().empty()) {
      agent["unstartable"] = nlohmann::ordered_json::object();
      for (const auto& [target, why] : a.unstartable()) agent["unstartable"][target] = why;
    }
    if (a.has_host()) agent["host"] = HostFactsToJson(a.host());
    list.push_back(std::move(agent));
  }
  return nlohmann::ordered_json{{"agents", std::move(list)}};
}

}  // namespace benchlab

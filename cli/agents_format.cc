#include "cli/agents_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/parse.h"
#include "common/printable.h"
#include "common/text_table.h"
#include "coordinator/server/agents_json.h"
#include "tls/certificate.h"

namespace benchlab {
namespace {

std::string JoinOrDash(const google::protobuf::RepeatedPtrField<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ",";
    out += item;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string FormatHostWarnings(const v1::AgentInfo& agent) {
  std::string out;
  for (const auto& f : agent.host().findings()) {
    if (f.status() != "warn") continue;
    if (!out.empty()) out += ", ";
    out += PrintableText(f.name()) + "=" + PrintableText(f.value()) + " (warn)";
  }
  return out;
}

std::string FormatLeaseAge(int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return StrFormat("%lldms", static_cast<long long>(ms));
  if (ms < 60'000) return StrFormat("%.1fs", static_cast<double>(ms / 100) / 10);
  long long s = ms / 1000;
  if (s < 3600) return StrFormat("%lldm%02llds", s / 60, s % 60);
  return StrFormat("%lldh%02lldm", s / 3600, s % 3600 / 60);
}

std::string FormatHostSummary(const v1::AgentInfo& agent) {
  if (!agent.has_host()) return "-";
  const v1::HostFacts& h = agent.host();
  std::string out = h.hostname();
  if (h.logical_cores() > 0) {
    if (!out.empty()) out += " ";
    if (h.physical_cores() > 0) out += std::to_string(h.physical_cores()) + "c/";
    out += std::to_string(h.logical_cores()) + "t";
  }
  return out.empty() ? "-" : out;
}

std::string FormatAgentTable(const std::vector<v1::AgentInfo>& agents, int width) {
  if (agents.empty()) return "no agents registered\n";
  // What gives way first on a narrow terminal: the host summary, the certificate's date, the
  // address, the roles; names are cut in the middle, so that "server-eu-1" and "server-eu-2"
  // stay apart.
  TextTable table;
  table.columns = {
      TableColumn("name").GivesWay(Shrink::kCutMiddle, 9, 12),
      TableColumn("state"),
      TableColumn("roles").GivesWay(Shrink::kDrop, 3),
      TableColumn("labels").GivesWay(Shrink::kCutEnd, 5, 10),
      TableColumn("address").GivesWay(Shrink::kDrop, 2),
      TableColumn("lease"),
      TableColumn("cert until").GivesWay(Shrink::kDrop, 1),
      TableColumn("targets").GivesWay(Shrink::kCutEnd, 6, 12),
      TableColumn("host").GivesWay(Shrink::kCutEnd, 0, 8),
  };
  for (const auto& a : agents) {
    // The date alone: "2027-12-01".
    const std::string cert =
        a.certificate_expires().empty() ? "-" : a.certificate_expires().substr(0, 10);
    table.rows.push_back({a.name(), a.state(), JoinOrDash(a.roles()), JoinOrDash(a.labels()),
                          a.address(), FormatLeaseAge(a.lease_age_ms()), cert,
                          JoinOrDash(a.catalogue()), FormatHostSummary(a)});
  }
  std::string out = FormatTable(table, width);
  for (const auto& a : agents) {
    const std::string warnings = FormatHostWarnings(a);
    if (!warnings.empty()) out += WrapText(PrintableText(a.name()) + " host: " + warnings, width);
    // protobuf's map has no order: by target name, as the catalogue column reads.
    std::map<std::string, std::string> unstartable(a.unstartable().begin(), a.unstartable().end());
    for (const auto& [target, why] : unstartable) {
      out += WrapText(PrintableText(a.name()) + " cannot start " + PrintableText(target) + ": " +
                          PrintableText(why),
                      width);
    }
  }
  return out;
}

std::string CertificateWarnings(const std::vector<v1::AgentInfo>& agents,
                                std::chrono::system_clock::time_point now) {
  std::string out;
  for (const auto& a : agents) {
    if (a.certificate_expires().empty()) continue;
    const double end = ParseIsoSeconds(a.certificate_expires());
    if (std::isnan(end)) continue;
    const double left_s = end - std::chrono::duration<double>(now.time_since_epoch()).count();
    const double warn_s = std::chrono::duration<double>(kExpiryWarning).count();
    if (left_s >= warn_s) continue;
    const std::string name = "warning: agent " + PrintableText(a.name()) + "'s certificate ";
    out += left_s <= 0
               ? name + "ended " + PrintableText(a.certificate_expires()) + "\n"
               : name + "ends " + PrintableText(a.certificate_expires()) + ", in " +
                     std::to_string(static_cast<long>(std::ceil(left_s / 86400))) + " days\n";
  }
  return out;
}

std::string FormatAgentsJson(const std::vector<v1::AgentInfo>& agents) {
  return AgentsToJson(agents).dump(2) + "\n";
}

}  // namespace benchlab

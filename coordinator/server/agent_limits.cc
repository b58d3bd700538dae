#include "coordinator/server/agent_limits.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "common/config_fields.h"
#include "common/parse.h"
#include "common/printable.h"
#include "coordinator/campaign.h"

namespace benchlab {
namespace {

// A campaign's label stands for a target's version line (docs/campaign.md, "[labels]").
static_assert(kMaxLabelBytes == kMaxVersionBytes);

// A value as an error quotes it: escaped, and cut after 64 bytes.
std::string Quoted(std::string_view text) {
  return config::Quote(text.substr(0, 64)) + (text.size() > 64 ? "..." : "");
}

Status TooLong(const std::string& field, size_t limit, size_t got) {
  return Status::InvalidArgument(field + ": expected at most " + std::to_string(limit) +
                                 " bytes, got " + std::to_string(got));
}

// Text an agent reports and people read (`benchlab agents`, reports, logs): printable UTF-8,
// no control characters (common/printable.h), so nothing it stores can move a cursor or start a
// line when printed.
Status CheckPrintable(const std::string& field, const std::string& value) {
  const size_t at = FirstUnprintable(value);
  if (at == std::string::npos) return Status::Ok();
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(value[at]));
  return Status::InvalidArgument(field +
                                 ": expected printable UTF-8 without control characters, got " +
                                 byte + " at byte " + std::to_string(at) + " of " + Quoted(value));
}

Status TooMany(const std::string& field, size_t limit, size_t got, const char* what) {
  return Status::InvalidArgument(field + ": expected at most " + std::to_string(limit) + " " +
                                 what + ", got " + std::to_string(got));
}

// A name as agents, labels and targets have them ([a-z0-9-]+, 1 to 64 bytes).
Status CheckName(const std::string& field, const std::string& value) {
  if (config::IsName(value)) return Status::Ok();
  return Status::InvalidArgument(field + ": expected a name of [a-z0-9-]+, at most 64 bytes, got " +
                                 Quoted(value));
}

Status CheckRoles(const v1::RegisterAgentRequest& request) {
  const std::string field = "RegisterAgentRequest.roles";
  if (request.roles().empty() || request.roles_size() > 2) {
    return Status::InvalidArgument(field + ": expected \"server\", \"load\" or both, got " +
                                   std::to_string(request.roles_size()) + " roles");
  }
  std::set<std::string> seen;
  for (const std::string& role : request.roles()) {
    if ((role != "server" && role != "load") || !seen.insert(role).second) {
      return Status::InvalidArgument(
          field + ": expected \"server\" and/or \"load\" once each, got " + Quoted(role));
    }
  }
  return Status::Ok();
}

Status CheckCatalogue(const v1::RegisterAgentRequest& request) {
  const std::string field = "RegisterAgentRequest.catalogue";
  if (static_cast<size_t>(request.catalogue_size()) > kMaxCatalogueTargets) {
    return TooMany(field, kMaxCatalogueTargets, request.catalogue_size(), "targets");
  }
  for (const std::string& target : request.catalogue()) {
    BENCHLAB_RETURN_IF_ERROR(CheckName(field, target));
  }
  const std::string versions = "RegisterAgentRequest.versions";
  for (const auto& [target, version] : request.versions()) {
    if (std::find(request.catalogue().begin(), request.catalogue().end(), target) ==
        request.catalogue().end()) {
      return Status::InvalidArgument(versions + ": expected targets of the catalogue, got " +
                                     Quoted(target));
    }
    if (version.size() > kMaxVersionBytes) {
      return TooLong(versions + "[" + target + "]", kMaxVersionBytes, version.size());
    }
    BENCHLAB_RETURN_IF_ERROR(CheckPrintable(versions + "[" + target + "]", version));
  }
  const std::string unstartable = "RegisterAgentRequest.unstartable";
  for (const auto& [target, why] : request.unstartable()) {
    if (std::find(request.catalogue().begin(), request.catalogue().end(), target) ==
        request.catalogue().end()) {
      return Status::InvalidArgument(unstartable + ": expected targets of the catalogue, got " +
                                     Quoted(target));
    }
    if (why.size() > kMaxUnstartableBytes) {
      return TooLong(unstartable + "[" + target + "]", kMaxUnstartableBytes, why.size());
    }
    BENCHLAB_RETURN_IF_ERROR(CheckPrintable(unstartable + "[" + target + "]", why));
  }
  return Status::Ok();
}

// "<key>.server" or "<key>.load" of the spool's file-name alphabet; the suffix without the dot.
std::string_view SpoolKeyKind(const std::string& key) {
  const bool alphabet = std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  if (key.empty() || key.size() > kMaxSpoolKeyBytes || key[0] == '.' || !alphabet) return "";
  const std::string_view view(key);
  for (std::string_view kind : {"server", "load"}) {
    const size_t tail = kind.size() + 1;
    if (view.size() > tail && view.ends_with(kind) && view[view.size() - tail] == '.') return kind;
  }
  return "";
}

}  // namespace

Status CheckHostFacts(const v1::HostFacts& host) {
  const std::pair<const char*, const std::string*> strings[] = {
      {"hostname", &host.hostname()},           {"cpu_model", &host.cpu_model()},
      {"governor", &host.governor()},           {"kernel", &host.kernel()},
      {"agent_version", &host.agent_version()},
  };
  for (const auto& [name, value] : strings) {
    const std::string field = std::string("RegisterAgentRequest.host.") + name;
    if (value->size() > kMaxHostFactBytes) return TooLong(field, kMaxHostFactBytes, value->size());
    BENCHLAB_RETURN_IF_ERROR(CheckPrintable(field, *value));
  }
  const std::string findings = "RegisterAgentRequest.host.findings";
  if (static_cast<size_t>(host.findings_size()) > kMaxHostFindings) {
    return TooMany(findings, kMaxHostFindings, host.findings_size(), "findings");
  }
  for (int i = 0; i < host.findings_size(); ++i) {
    const v1::HostFinding& f = host.findings(i);
    const std::pair<const char*, const std::string*> fields[] = {
        {"name", &f.name()}, {"value", &f.value()}, {"status", &f.status()}, {"why", &f.why()}};
    for (const auto& [name, value] : fields) {
      const std::string field = findings + "[" + std::to_string(i) + "]." + name;
      if (value->size() > kMaxHostFactBytes) {
        return TooLong(field, kMaxHostFactBytes, value->size());
      }
      if (!std::all_of(value->begin(), value->end(),
                       [](char c) { return c >= 0x20 && c < 0x7f; })) {
        return Status::InvalidArgument(field + ": expected printable ASCII, got " + Quoted(*value));
      }
    }
  }
  return Status::Ok();
}

Status ValidateInstanceProof(const std::string& proof, const char* where) {
  const std::string field = std::string(where) + ".instance_proof";
  if (proof.empty()) {
    return Status::InvalidArgument(field + ": expected the agent's instance proof, got none");
  }
  if (proof.size() > kMaxInstanceProofBytes) {
    return TooLong(field, kMaxInstanceProofBytes, proof.size());
  }
  return Status::Ok();
}

Status ValidateRegistration(const v1::RegisterAgentRequest& request) {
  if (request.ByteSizeLong() > kMaxRegistrationBytes) {
    return TooLong("RegisterAgentRequest", kMaxRegistrationBytes, request.ByteSizeLong());
  }
  BENCHLAB_RETURN_IF_ERROR(CheckName("RegisterAgentRequest.name", request.name()));
  if (request.address().size() > kMaxAgentAddressBytes) {
    return TooLong("RegisterAgentRequest.address", kMaxAgentAddressBytes, request.address().size());
  }
  if (auto address = ParseHostPort(request.address()); !address.ok() || address->port == 0) {
    return Status::InvalidArgument("RegisterAgentRequest.address: expected HOST:PORT, got " +
                                   Quoted(request.address()));
  }
  BENCHLAB_RETURN_IF_ERROR(CheckRoles(request));
  BENCHLAB_RETURN_IF_ERROR(CheckHostFacts(request.host()));
  if (static_cast<size_t>(request.labels_size()) > kMaxAgentLabels) {
    return TooMany("RegisterAgentRequest.labels", kMaxAgentLabels, request.labels_size(), "labels");
  }
  for (const std::string& label : request.labels()) {
    BENCHLAB_RETURN_IF_ERROR(CheckName("RegisterAgentRequest.labels", label));
  }
  BENCHLAB_RETURN_IF_ERROR(CheckCatalogue(request));
  return ValidateInstanceProof(request.instance_proof(), "RegisterAgentRequest");
}

Status ValidateOffer(const v1::OfferResultsRequest& request) {
  BENCHLAB_RETURN_IF_ERROR(ValidateInstanceProof(request.instance_proof(), "OfferResultsRequest"));
  if (static_cast<size_t>(request.spooled_size()) > kMaxOfferedResults) {
    return TooMany("OfferResultsRequest.spooled", kMaxOfferedResults, request.spooled_size(),
                   "results per call");
  }
  for (const auto& item : request.spooled()) {
    const std::string field = "OfferResultsRequest.spooled[" + Quoted(item.key()) + "]";
    const std::string_view kind = SpoolKeyKind(item.key());
    if (kind.empty()) {
      return Status::InvalidArgument(field + ": expected a spool key of [A-Za-z0-9._-], at most " +
                                     std::to_string(kMaxSpoolKeyBytes) +
                                     " bytes, ending in .server or .load");
    }
    if (item.payload().size() > kMaxOfferedPayloadBytes) {
      return TooLong(field + ".payload", kMaxOfferedPayloadBytes, item.payload().size());
    }
    v1::MarkReply figures;
    v1::RunLoadEvent event;
    google::protobuf::Message& expected =
        kind == "server" ? static_cast<google::protobuf::Message&>(figures) : event;
    if (!expected.ParseFromString(item.payload())) {
      return Status::InvalidArgument(field + ".payload: expected a serialised " +
                                     expected.GetTypeName());
    }
  }
  return Status::Ok();
}

}  // namespace benchlab

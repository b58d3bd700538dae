// What the coordinator accepts from agents: the size and form of every field of a registration,
// the instance proof, and the pages of spooled results an agent offers (docs/fleet.md,
// "Limits"). Each check returns InvalidArgument naming the field, the limit and what was sent,
// so an agent's operator reads what to change. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "benchlab/v1/coordinator.pb.h"
#include "common/status.h"

namespace benchlab {

// An agent's host facts, as it registers with them or describes its host (DescribeHost): every
// string at most kMaxHostFactBytes of printable UTF-8 without control characters
// (common/printable.h), at most kMaxHostFindings findings of printable ASCII.
Status CheckHostFacts(const v1::HostFacts& host);

// A whole RegisterAgentRequest, serialised. The field limits below add up to less than this.
inline constexpr size_t kMaxRegistrationBytes = 1 << 20;
// HOST:PORT where the coordinator reaches the agent (a DNS name is at most 253 bytes).
inline constexpr size_t kMaxAgentAddressBytes = 270;
// Each string of the host facts (hostname, CPU model, governor, kernel, agent version).
inline constexpr size_t kMaxHostFactBytes = 256;
// Host findings (docs/host.md) in one registration; each of their strings (name, value,
// status, why) is at most kMaxHostFactBytes of printable ASCII.
inline constexpr size_t kMaxHostFindings = 64;
// Labels: names ([a-z0-9-]+, at most 64 bytes, as agent names) on one agent.
inline constexpr size_t kMaxAgentLabels = 64;
// Catalogue entries (target names, [a-z0-9-]+, at most 64 bytes) on one agent; at most one
// version line per entry.
inline constexpr size_t kMaxCatalogueTargets = 1024;
// One target's version line (the first line its version command prints), printable UTF-8.
inline constexpr size_t kMaxVersionBytes = 256;
// Why a catalogue target cannot start on the agent's host (RegisterAgentRequest.unstartable).
inline constexpr size_t kMaxUnstartableBytes = 512;
// The instance proof an agent registers with and shows again on every call.
inline constexpr size_t kMaxInstanceProofBytes = 256;
// Spooled results in one OfferResults call (the agent sends its spool in pages).
inline constexpr size_t kMaxOfferedResults = 64;
// One offered result's payload: a serialised MarkReply or RunLoadEvent.
inline constexpr size_t kMaxOfferedPayloadBytes = 1 << 20;
// A spool key (the agent's spool file names, docs/agent.md).
inline constexpr size_t kMaxSpoolKeyBytes = 200;
// The payload bytes the store keeps in agent_results, all agents together; a result beyond it is
// not acknowledged and stays in its agent's spool.
inline constexpr uint64_t kMaxKeptResultBytes = uint64_t{256} << 20;
// Agents the registry holds; a new name beyond it replaces the agent lost longest ago, or is
// refused (RESOURCE_EXHAUSTED) when none is lost.
inline constexpr size_t kMaxAgents = 4096;

// The registration's name, address, roles, host facts, labels, catalogue, versions, proof and
// overall size.
Status ValidateRegistration(const v1::RegisterAgentRequest& request);
// An instance proof: present and at most kMaxInstanceProofBytes. `where` names the message
// ("HeartbeatRequest").
Status ValidateInstanceProof(const std::string& proof, const char* where);
// The page's size, and each result: a spool key ("<key>.server" or "<key>.load") whose payload
// is at most kMaxOfferedPayloadBytes and parses as the message its suffix names (MarkReply for
// .server, RunLoadEvent for .load).
Status ValidateOffer(const v1::OfferResultsRequest& request);

}  // namespace benchlab

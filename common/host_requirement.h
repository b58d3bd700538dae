// Host findings and the requirements a campaign puts on them ([host] require, docs/host.md).
// A finding is one check of what makes a host's measurements noisy; agents read them
// (agent/host_check.h), the coordinator places campaigns only on agents whose findings meet the
// campaign's requirements. Here so that both sides share the one rule. Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab {

// Statuses of a finding.
inline constexpr std::string_view kFindingOk = "ok";
inline constexpr std::string_view kFindingWarn = "warn";
inline constexpr std::string_view kFindingUnavailable = "unavailable";

struct HostFinding {
  std::string name;    // a stable key: "governor", "thp", ... (HostFindingNames)
  std::string value;   // as read, or "unavailable" when the machine does not have it
  std::string status;  // kFindingOk, kFindingWarn or kFindingUnavailable
  std::string why;     // one sentence: why it matters for measurement
};

// Every finding name CheckHost reports, in the order it reports them.
const std::vector<std::string>& HostFindingNames();

// Whether `requirement` is one UnmetRequirement understands: "NAME=VALUE" (the finding's value
// must be VALUE, e.g. "governor=performance", "aslr=0", "thp=never") or a bare "NAME" (the
// finding's status must be ok), with NAME a finding name; "smt_siblings_idle" is a bare name
// meaning the smt_siblings check is ok (no SMT sibling of a pinned CPU outside the pinned CPUs).
bool KnownRequirement(const std::string& requirement);
// "governor, min_freq, ..., smt_siblings_idle": for errors that list what is known.
std::string KnownRequirementNames();

// Why `findings` do not meet `requirement` ("governor is powersave", "thp was not reported"),
// or nullopt when they do. An unknown requirement is never met.
std::optional<std::string> UnmetRequirement(const std::vector<HostFinding>& findings,
                                            const std::string& requirement);

}  // namespace benchlab

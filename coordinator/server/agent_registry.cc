#include "coordinator/server/agent_registry.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "common/host_requirement.h"
#include "common/log.h"
#include "common/parse.h"
#include "coordinator/server/agents_json.h"
#include "coordinator/server/channel.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

using TimePoint = std::chrono::steady_clock::time_point;

// A lease that a window's call found unreachable expired just before that call's end.
constexpr std::chrono::nanoseconds kJustExpired{1};

constexpr std::string_view kLabelPrefix = "label:";

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

bool Contains(const google::protobuf::RepeatedPtrField<std::string>& items,
              const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

}  // namespace

std::string_view AgentStateName(AgentState state) {
  switch (state) {
    case AgentState::kReady:
      return "ready";
    case AgentState::kBusy:
      return "busy";
    case AgentState::kSuspect:
      return "suspect";
    case AgentState::kLost:
      return "lost";
  }
  return "unknown";
}

Status ValidatePlacementSpec(const PlacementSpec& spec, std::string_view where) {
  for (const auto* list : {&spec.server, &spec.load}) {
    const char* role = list == &spec.server ? "server" : "load";
    for (const auto& entry : *list) {
      std::string_view label = std::string_view(entry).starts_with(kLabelPrefix)
                                   ? std::string_view(entry).substr(kLabelPrefix.size())
                                   : std::string_view(entry);
      bool blank = std::any_of(entry.begin(), entry.end(),
                               [](unsigned char c) { return std::isspace(c) != 0; });
      if (label.empty() || blank) {
        return Status::InvalidArgument(
            std::string(where) + ": " + role + " entry \"" + entry +
            "\" must be an agent name such as \"server-1\" or a label such as \"label:rack-1\"");
      }
    }
  }
  return Status::Ok();
}

// The agents one selection picked, in order without duplicates, and why the others cannot.
struct AgentRegistry::Candidates {
  std::vector<std::string> fit;
  std::vector<std::string> reasons;
};

AgentRegistry::AgentRegistry() : AgentRegistry(RealClockInstance(), AgentLeaseOptions{}) {}

AgentRegistry::AgentRegistry(Clock& clock, AgentLeaseOptions options)
    : clock_(clock), options_(options), start_(clock.Now()) {}

AgentRegistry::ProofHash AgentRegistry::HashProof(const std::string& proof) {
  ProofHash hash;
  SHA256(reinterpret_cast<const unsigned char*>(proof.data()), proof.size(), hash.data());
  return hash;
}

Admission AgentRegistry::Register(const v1::RegisterAgentRequest& request, std::string* holder) {
  std::lock_guard lock(mu_);
  const TimePoint now = clock_.Now();
  const ProofHash proof = HashProof(request.instance_proof());
  const bool fresh = agents_.count(request.name()) == 0;
  if (fresh && agents_.size() >= options_.max_agents && !DropLongestLostLocked(now)) {
    spdlog::warn("agent {}: registration from {} refused: {} agents are registered", request.name(),
                 request.address(), agents_.size());
    return Admission::kFull;
  }
  Entry& entry = agents_[request.name()];
  Admission admission = Admission::kRegistered;
  if (!fresh && CRYPTO_memcmp(entry.proof.data(), proof.data(), proof.size()) != 0) {
    if (StateLocked(entry, now) != AgentState::kLost) {
      spdlog::warn("agent {}: registration from {} refused: a live instance at {} holds it",
                   request.name(), request.address(), entry.info.address());
      if (holder != nullptr) *holder = entry.info.address();
      return Admission::kRefused;
    }
    spdlog::warn("agent {}: a new instance at {} takes the name over from {}, whose lease expired",
                 request.name(), request.address(), entry.info.address());
    admission = Admission::kTakenOver;
  }
  entry.proof = proof;
  if (entry.info.address() != request.address() || !entry.stub) {
    entry.stub = stub_factory_ ? stub_factory_(request.name(), request.address())
                               : std::shared_ptr<v1::Agent::StubInterface>(
                                     v1::Agent::NewStub(MakeChannel(request.address())));
  }
  entry.info.set_name(request.name());
  entry.info.mutable_roles()->CopyFrom(request.roles());
  entry.info.set_address(request.address());
  *entry.info.mutable_host() = request.host();
  entry.info.mutable_catalogue()->CopyFrom(request.catalogue());
  entry.info.mutable_labels()->CopyFrom(request.labels());
  *entry.info.mutable_versions() = request.versions();
  *entry.info.mutable_unstartable() = request.unstartable();
  if (fresh) {
    entry.last_seen = now;
  } else {
    RenewLocked(entry, now);
  }
  spdlog::info("agent {} registered from {} (roles: {}, {} catalogue targets{}{})", request.name(),
               request.address(), fmt::join(request.roles(), ","), request.catalogue_size(),
               request.labels().empty() ? "" : ", labels: ", fmt::join(request.labels(), ","));
  return admission;
}

bool AgentRegistry::DropLongestLostLocked(TimePoint now) {
  auto oldest = agents_.end();
  for (auto it = agents_.begin(); it != agents_.end(); ++it) {
    if (it->second.busy || StateLocked(it->second, now) != AgentState::kLost) continue;
    if (oldest == agents_.end() || it->second.last_seen < oldest->second.last_seen) oldest = it;
  }
  if (oldest == agents_.end()) return false;
  {
    ScopedLogAgent about(oldest->first);  // not the agent registering
    spdlog::info("agent {} is forgotten: lost, and the registry is full", oldest->first);
  }
  agents_.erase(oldest);
  return true;
}

AgentRegistry::Entry* AgentRegistry::FindWithProofLocked(const std::string& name,
                                                         const std::string& proof,
                                                         ProofCheck* check) {
  auto it = agents_.find(name);
  if (it == agents_.end()) {
    *check = ProofCheck::kUnknown;
    return nullptr;
  }
  const ProofHash hash = HashProof(proof);
  if (CRYPTO_memcmp(it->second.proof.data(), hash.data(), hash.size()) != 0) {
    *check = ProofCheck::kWrongProof;
    return nullptr;
  }
  *check = ProofCheck::kMatches;
  return &it->second;
}

ProofCheck AgentRegistry::Heartbeat(const std::string& name, const std::string& proof) {
  std::lock_guard lock(mu_);
  ProofCheck check;
  Entry* entry = FindWithProofLocked(name, proof, &check);
  if (entry == nullptr) return check;
  TimePoint now = clock_.Now();
  if (StateLocked(*entry, now) == AgentState::kLost) {
    spdlog::info("agent {} is back after being lost", name);
  }
  RenewLocked(*entry, now);
  return check;
}

void AgentRegistry::RenewLocked(Entry& entry, TimePoint now) const {
  const AgentState before = StateLocked(entry, now);
  if (before == AgentState::kSuspect || before == AgentState::kLost) entry.back_at = now;
  entry.last_seen = now;
  entry.unreachable_at.reset();
}

void AgentRegistry::MarkUnreachable(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return;
  const TimePoint now = clock_.Now();
  if (!it->second.unreachable_at) it->second.unreachable_at = now;
}

bool AgentRegistry::LapsedSince(const std::string& name, TimePoint since) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return false;
  const AgentState state = StateLocked(it->second, clock_.Now());
  if (state == AgentState::kSuspect || state == AgentState::kLost) return true;
  return it->second.back_at && *it->second.back_at >= since;
}

ProofCheck AgentRegistry::CheckProof(const std::string& name, const std::string& proof) {
  std::lock_guard lock(mu_);
  ProofCheck check;
  FindWithProofLocked(name, proof, &check);
  return check;
}

void AgentRegistry::SetBusy(const std::string& name, bool busy) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it != agents_.end()) it->second.busy = busy;
}

void AgentRegistry::SetCertificateExpires(const std::string& name, const std::string& when) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it != agents_.end()) it->second.info.set_certificate_expires(when);
}

AgentState AgentRegistry::StateLocked(const Entry& entry, TimePoint now) const {
  // A restarted coordinator gives every agent until start + startup_grace before any lease runs
  // out, however long ago the agent was last heard of.
  TimePoint expiry = std::max(entry.last_seen + options_.ttl, start_ + options_.startup_grace);
  if (entry.unreachable_at) expiry = std::min(expiry, *entry.unreachable_at - kJustExpired);
  if (now <= expiry) return entry.busy ? AgentState::kBusy : AgentState::kReady;
  if (now <= expiry + options_.grace) return AgentState::kSuspect;
  return AgentState::kLost;
}

std::optional<AgentState> AgentRegistry::StateOf(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return std::nullopt;
  return StateLocked(it->second, clock_.Now());
}

std::string UnmetHostRequirements(const v1::HostFacts& host,
                                  const std::vector<std::string>& host_require) {
  if (host_require.empty()) return "";
  std::vector<HostFinding> findings;
  for (const auto& f : host.findings()) {
    findings.push_back({f.name(), f.value(), f.status(), f.why()});
  }
  std::vector<std::string> unmet;
  for (const auto& requirement : host_require) {
    if (auto why = UnmetRequirement(findings, requirement)) {
      unmet.push_back("host requirement " + requirement + " not met: " + *why);
    }
  }
  return Join(unmet, " and ");
}

std::string AgentRegistry::UnfitLocked(const Entry& entry, TimePoint now, const std::string& role,
                                       const std::vector<std::string>& targets,
                                       const std::vector<std::string>& host_require,
                                       bool any_state) const {
  if (!Contains(entry.info.roles(), role)) return "has no " + role + " role";
  std::vector<std::string> problems;
  AgentState state = StateLocked(entry, now);
  if (state != AgentState::kReady && !any_state) {
    problems.push_back("is " + std::string(AgentStateName(state)));
  }
  std::vector<std::string> missing;
  for (const auto& target : targets) {
    if (!Contains(entry.info.catalogue(), target)) missing.push_back(target);
  }
  if (!missing.empty()) problems.push_back("lacks " + Join(missing, ", "));
  for (const auto& target : targets) {
    auto it = entry.info.unstartable().find(target);
    if (it != entry.info.unstartable().end()) {
      problems.push_back("cannot start " + target + ": " + it->second);
    }
  }
  if (std::string unmet = UnmetHostRequirements(entry.info.host(), host_require); !unmet.empty()) {
    problems.push_back(std::move(unmet));
  }
  return Join(problems, " and ");
}

AgentRegistry::Candidates AgentRegistry::SelectLocked(const std::vector<std::string>& selectors,
                                                      const std::string& role,
                                                      const std::vector<std::string>& targets,
                                                      const std::vector<std::string>& host_require,
                                                      TimePoint now, bool any_state) const {
  Candidates out;
  std::set<std::string> seen;
  auto consider = [&](const Entry& entry) {
    const std::string& name = entry.info.name();
    if (!seen.insert(name).second) return;
    std::string unfit = UnfitLocked(entry, now, role, targets, host_require, any_state);
    if (unfit.empty()) {
      out.fit.push_back(name);
    } else {
      out.reasons.push_back(name + " " + unfit);
    }
  };
  if (selectors.empty()) {
    for (const auto& [name, entry] : agents_) {
      if (Contains(entry.info.roles(), role)) consider(entry);
    }
    if (seen.empty()) out.reasons.push_back("no agent has the " + role + " role");
    return out;
  }
  for (const auto& selector : selectors) {
    if (!std::string_view(selector).starts_with(kLabelPrefix)) {
      auto it = agents_.find(selector);
      if (it == agents_.end()) {
        out.reasons.push_back(selector + " is not registered");
      } else {
        consider(it->second);
      }
      continue;
    }
    std::string label = selector.substr(kLabelPrefix.size());
    bool any = false;
    for (const auto& [name, entry] : agents_) {
      if (!Contains(entry.info.labels(), label)) continue;
      any = true;
      consider(entry);
    }
    if (!any) out.reasons.push_back("no agent has label " + label);
  }
  return out;
}

std::optional<std::vector<std::string>> AgentRegistry::PlaceLoadsLocked(const PlacementSpec& spec,
                                                                        const std::string& server,
                                                                        TimePoint now,
                                                                        std::string* why) const {
  auto fail = [&](const std::string* selector, const std::vector<std::string>& reasons) {
    *why = "no ready load agent" + (selector ? " for " + *selector : std::string()) + ": " +
           Join(reasons, "; ");
    return std::nullopt;
  };
  auto is_label = [](const std::string& s) {
    return std::string_view(s).starts_with(kLabelPrefix);
  };
  // Named agents first, so that a label entry never takes an agent a later entry names.
  std::vector<std::string> named;
  for (const auto& selector : spec.load) {
    if (is_label(selector)) continue;
    Candidates one = SelectLocked({selector}, "load", {}, spec.host_require, now);
    if (one.fit.empty()) return fail(&selector, one.reasons);
    if (!Contains(named, selector)) named.push_back(selector);
  }
  // One more agent per label entry (one load agent in all when the spec names none): another
  // agent than the server when one is ready, the server itself (holding both roles) otherwise.
  std::vector<std::string> chosen;
  auto pick = [&](const std::string* selector) -> bool {
    std::vector<std::string> selectors;
    if (selector != nullptr) selectors.push_back(*selector);
    Candidates loads = SelectLocked(selectors, "load", {}, spec.host_require, now);
    std::vector<std::string> free;
    for (const auto& name : loads.fit) {
      if (Contains(chosen, name) || Contains(named, name)) {
        loads.reasons.push_back(name + " is already a load agent of this placement");
      } else {
        free.push_back(name);
      }
    }
    auto other = std::find_if(free.begin(), free.end(), [&](const auto& n) { return n != server; });
    if (other == free.end()) other = free.begin();
    if (other == free.end()) {
      fail(selector, loads.reasons);
      return false;
    }
    chosen.push_back(*other);
    return true;
  };
  if (spec.load.empty() && !pick(nullptr)) return std::nullopt;
  for (const auto& selector : spec.load) {
    if (is_label(selector) && !pick(&selector)) return std::nullopt;
  }
  // In the spec's order: named agents where they are listed, label picks where theirs are.
  std::vector<std::string> out;
  size_t next_pick = 0;
  if (spec.load.empty()) out = chosen;
  for (const auto& selector : spec.load) {
    const std::string& name = is_label(selector) ? chosen[next_pick++] : selector;
    if (!Contains(out, name)) out.push_back(name);
  }
  return out;
}

AgentRegistry::Placement AgentRegistry::MakePlacementLocked(const std::string& server,
                                                            std::vector<std::string> loads) const {
  Placement placement;
  placement.server_agent = server;
  auto address = ParseHostPort(agents_.at(server).info.address());
  placement.server_host = address.ok() ? address->host : "127.0.0.1";
  placement.load_agent = loads.front();
  placement.load_agents = std::move(loads);
  return placement;
}

namespace {

std::string NoServerWhy(const PlacementSpec& spec, const std::vector<std::string>& targets,
                        const std::vector<std::string>& reasons) {
  std::string why = "no ready server agent";
  if (!targets.empty()) why += " has targets " + Join(targets, ", ");
  if (!spec.server.empty()) why += " among " + Join(spec.server, ", ");
  return why + ": " + Join(reasons, "; ");
}

}  // namespace

std::optional<AgentRegistry::Placement> AgentRegistry::Place(
    const PlacementSpec& spec, const std::vector<std::string>& targets, std::string* why) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_.Now();
  Candidates servers = SelectLocked(spec.server, "server", targets, spec.host_require, now);
  if (servers.fit.empty()) {
    *why = NoServerWhy(spec, targets, servers.reasons);
    return std::nullopt;
  }
  std::string first_why;
  for (const auto& server : servers.fit) {
    std::string load_why;
    auto loads = PlaceLoadsLocked(spec, server, now, &load_why);
    if (loads) return MakePlacementLocked(server, std::move(*loads));
    if (first_why.empty()) first_why = load_why;
  }
  *why = first_why;
  return std::nullopt;
}

std::vector<std::string> AgentRegistry::PlacementProblems(const PlacementSpec& spec,
                                                          const std::vector<std::string>& targets,
                                                          bool* awaits_registration) {
  std::lock_guard lock(mu_);
  const TimePoint now = clock_.Now();
  std::vector<std::string> problems;
  *awaits_registration = false;
  for (const std::string role : {"server", "load"}) {
    const bool server = role == "server";
    const std::vector<std::string>& selectors = server ? spec.server : spec.load;
    Candidates found = SelectLocked(selectors, role, server ? targets : std::vector<std::string>{},
                                    spec.host_require, now, /*any_state=*/true);
    if (!found.fit.empty()) continue;
    // An agent not registered yet, a name or label no agent has yet: a registration may fix it.
    bool awaits = std::none_of(agents_.begin(), agents_.end(), [&](const auto& entry) {
      return Contains(entry.second.info.roles(), role);
    });
    for (const std::string& selector : selectors) {
      if (std::string_view(selector).starts_with(kLabelPrefix)) {
        const std::string label = selector.substr(kLabelPrefix.size());
        awaits |= std::none_of(agents_.begin(), agents_.end(), [&](const auto& entry) {
          return Contains(entry.second.info.labels(), label);
        });
      } else {
        awaits |= !agents_.contains(selector);
      }
    }
    if (awaits) *awaits_registration = true;
    std::string what = "no registered " + role + " agent";
    if (server && !targets.empty()) what += " can start " + Join(targets, ", ");
    if (!selectors.empty()) what += " among " + Join(selectors, ", ");
    problems.push_back(what + ": " + Join(found.reasons, "; "));
  }
  return problems;
}

std::optional<AgentRegistry::Placement> AgentRegistry::Place(
    const std::vector<std::string>& targets, std::string* why) {
  return Place(PlacementSpec{}, targets, why);
}

std::vector<AgentRegistry::Placement> AgentRegistry::PlacePairs(
    const PlacementSpec& spec, const std::vector<std::string>& targets, std::string* why) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_.Now();
  Candidates servers = SelectLocked(spec.server, "server", targets, spec.host_require, now);
  if (servers.fit.empty()) {
    *why = NoServerWhy(spec, targets, servers.reasons);
    return {};
  }
  Candidates loads = SelectLocked(spec.load, "load", {}, spec.host_require, now);
  if (loads.fit.empty()) {
    *why = "no ready load agent" + (spec.load.empty() ? "" : " among " + Join(spec.load, ", ")) +
           ": " + Join(loads.reasons, "; ");
    return {};
  }
  // Every server fits every load agent but itself, so this greedy order is a maximum matching:
  // server-only with load-only agents, the one-sided rest with agents able to take either role,
  // and those left over with each other.
  std::vector<std::string> server_only, load_only, either;
  for (const auto& name : servers.fit) {
    (Contains(loads.fit, name) ? either : server_only).push_back(name);
  }
  for (const auto& name : loads.fit) {
    if (!Contains(servers.fit, name)) load_only.push_back(name);
  }
  std::vector<Placement> pairs;
  size_t s = 0, l = 0, e = 0;
  for (; s < server_only.size() && l < load_only.size(); ++s, ++l) {
    pairs.push_back(MakePlacementLocked(server_only[s], {load_only[l]}));
  }
  for (; s < server_only.size() && e < either.size(); ++s, ++e) {
    pairs.push_back(MakePlacementLocked(server_only[s], {either[e]}));
  }
  for (; l < load_only.size() && e < either.size(); ++l, ++e) {
    pairs.push_back(MakePlacementLocked(either[e], {load_only[l]}));
  }
  for (; e + 1 < either.size(); e += 2) {
    pairs.push_back(MakePlacementLocked(either[e], {either[e + 1]}));
  }
  if (pairs.empty()) {
    *why = "no disjoint server and load pair: " + either.front() +
           " is the only ready agent for either role";
  }
  return pairs;
}

void AgentRegistry::SetStubFactory(StubFactory factory) {
  std::lock_guard lock(mu_);
  stub_factory_ = std::move(factory);
}

std::shared_ptr<v1::Agent::StubInterface> AgentRegistry::Stub(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  return it == agents_.end() ? nullptr : it->second.stub;
}

std::string AgentRegistry::HostFactsJson(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return "{}";
  return HostFactsToJson(it->second.info.host()).dump();
}

bool AgentRegistry::SetHostFacts(const std::string& name, const v1::HostFacts& host) {
  std::lock_guard lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return false;
  *it->second.info.mutable_host() = host;
  return true;
}

std::vector<v1::AgentInfo> AgentRegistry::List() {
  std::lock_guard lock(mu_);
  TimePoint now = clock_.Now();
  std::vector<v1::AgentInfo> out;
  for (const auto& [name, entry] : agents_) {
    v1::AgentInfo info = entry.info;
    info.set_state(std::string(AgentStateName(StateLocked(entry, now))));
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - entry.last_seen);
    info.set_lease_age_ms(std::max<int64_t>(0, age.count()));
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace benchlab

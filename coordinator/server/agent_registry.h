// AgentRegistry: the fleet the coordinator knows: each agent's roles, labels, catalogue, host
// facts, lease and state, and the placement of campaigns on it. Agents register, then heartbeat
// well within the lease. Time comes from an injected Clock, so tests advance a fake one. The
// registry owns one gRPC channel per agent. Thread-safe: every method may be called from any
// thread (the gRPC service's handlers and the scheduler).
//
// States, computed from the clock whenever asked (see docs/fleet.md):
//   ready    the lease is fresh and no window runs on the agent; only ready agents are placed
//   busy     the lease is fresh and the scheduler marked the agent busy (SetBusy)
//   suspect  the lease expired at most `grace` ago; not placed, its running window goes on
//   lost     the lease expired more than `grace` ago
// A registration or heartbeat renews the lease and brings any state back to ready (or busy).
// A window's call that could not reach the agent expires its lease at once (MarkUnreachable).
// No lease expires before the registry's start + `startup_grace`, so a restarted coordinator
// never marks the agents it learns of lost before they had time to come back.
// Each name belongs to the agent instance that registered it, known by its instance proof (of
// which the registry keeps only the SHA-256): while the lease is live (ready, busy, suspect)
// only the same proof may register the name again, heartbeat or offer results; once it is lost,
// any instance may take the name over.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchlab/v1/agent.grpc.pb.h"
#include "benchlab/v1/coordinator.pb.h"
#include "common/clock.h"
#include "common/status.h"
#include "coordinator/server/agent_limits.h"
#include "coordinator/server/placement.h"

namespace benchlab {

enum class AgentState { kReady, kBusy, kSuspect, kLost };

// Why an agent with these host facts may not be placed under `host_require` ("host requirement
// governor=performance not met: governor is powersave", several joined by " and "); empty when
// every requirement is met (common/host_requirement.h).
std::string UnmetHostRequirements(const v1::HostFacts& host,
                                  const std::vector<std::string>& host_require);
// "ready", "busy", "suspect", "lost": the words of ListAgents and `benchlab agents`.
std::string_view AgentStateName(AgentState state);

// What a registration did (AgentRegistry::Register).
enum class Admission {
  kRegistered,  // a name not known, or the same instance again (the same proof)
  kTakenOver,   // another instance took the name over after the lease had expired (lost)
  kRefused,     // another instance holds the name with a live lease: nothing changed
  kFull,        // a new name, and max_agents agents are held, none lost and idle
};

// Whether a call's instance proof is the one its agent registered with.
enum class ProofCheck { kMatches, kUnknown, kWrongProof };

struct AgentLeaseOptions {
  std::chrono::milliseconds ttl{5000};             // a lease's length from its last renewal
  std::chrono::milliseconds grace{10000};          // suspect this long after expiry, then lost
  std::chrono::milliseconds startup_grace{30000};  // no lease expires before start + this
  size_t max_agents = kMaxAgents;                  // agents held at once (agent_limits.h)
};

class AgentRegistry {
 public:
  // The real clock, default lease options; the start-up grace runs from now.
  AgentRegistry();
  // `clock` must outlive the registry; the start-up grace runs from clock.Now().
  AgentRegistry(Clock& clock, AgentLeaseOptions options);
  AgentRegistry(const AgentRegistry&) = delete;
  AgentRegistry& operator=(const AgentRegistry&) = delete;

  // The lease an agent must renew within (its heartbeats come three times per lease).
  std::chrono::milliseconds lease() const { return options_.ttl; }
  // Adds or replaces the agent and renews its lease, unless another instance (another
  // instance_proof) holds the name with a live lease: kRefused. A new name when max_agents are
  // held replaces the idle agent lost longest ago, or is kFull. A busy mark survives
  // re-registration: it is the scheduler's, which clears it when the window or campaign ends.
  // The request is taken as valid (ValidateRegistration, coordinator/server/agent_limits.h).
  // On kRefused, *holder (when given) is the address the live instance registered.
  Admission Register(const v1::RegisterAgentRequest& request, std::string* holder = nullptr);
  // Renews the lease, also of a suspect or lost agent, when `proof` is the registered one.
  // kUnknown: the agent must register again.
  ProofCheck Heartbeat(const std::string& name, const std::string& proof);
  // Whether `proof` is the one `name` registered with, renewing nothing.
  ProofCheck CheckProof(const std::string& name, const std::string& proof);
  // Marks an agent busy (a window or campaign runs on it) or not. Unknown names are ignored.
  void SetBusy(const std::string& name, bool busy);
  // Records the end of the certificate the agent registered with (AgentInfo.certificate_expires).
  void SetCertificateExpires(const std::string& name, const std::string& when);

  // nullopt when the agent is unknown.
  std::optional<AgentState> StateOf(const std::string& name);
  // A window's call could not reach the agent (agent_lost): its lease counts as expired from
  // now, start-up grace or not, until a registration or heartbeat renews it, so the scheduler
  // waits for the agent to be heard from again rather than measuring the window again at once.
  void MarkUnreachable(const std::string& name);
  // Whether the agent's lease expired at any time from `since` until now: it is suspect or lost
  // now, or a registration or heartbeat since then renewed it after it had expired (a partition
  // that healed). False for an unknown agent.
  bool LapsedSince(const std::string& name, std::chrono::steady_clock::time_point since);

  using Placement = benchlab::Placement;  // coordinator/server/placement.h
  // A ready server agent selected by spec.server whose catalogue holds every target, and ready
  // load agents: every agent named in spec.load, one more agent per label entry, or, when
  // spec.load is empty, one load agent (another agent than the server when one is ready).
  // Entries are tried in their order, agents of one label by name. nullopt with *why saying,
  // agent by agent, why none fits ("no ready server agent has targets nginx, hello-server:
  // srv1 lacks nginx; srv2 is lost").
  std::optional<Placement> Place(const PlacementSpec& spec, const std::vector<std::string>& targets,
                                 std::string* why);
  // What keeps `spec` from ever being placed on the agents registered now, whatever their
  // state (busy, suspect and lost agents may come back): a named agent not registered, no
  // server agent whose catalogue holds and can start every target, unmet host requirements, no
  // load agent. One line per role ("no registered server agent can start nginx: srv1 lacks
  // nginx; srv2 cannot start nginx: command \"nginx\" not found in PATH"); empty when waiting
  // would do. *awaits_registration: a role has no registered agent at all, or a selector names
  // an agent or label none has yet; an agent still starting may change that.
  std::vector<std::string> PlacementProblems(const PlacementSpec& spec,
                                             const std::vector<std::string>& targets,
                                             bool* awaits_registration);
  // Place with an empty spec: any server agent with the targets, any load agent.
  std::optional<Placement> Place(const std::vector<std::string>& targets, std::string* why);
  // For fleet campaigns: as many disjoint (server, load) pairs as the ready agents selected by
  // spec allow, no agent in two pairs nor on both sides of one. Server-only agents are paired
  // with load-only ones first, agents that could take either role fill in. Empty with *why
  // when no pair can be formed.
  std::vector<Placement> PlacePairs(const PlacementSpec& spec,
                                    const std::vector<std::string>& targets, std::string* why);

  // A stub for calling the agent; nullptr when unknown.
  std::shared_ptr<v1::Agent::StubInterface> Stub(const std::string& name);
  // How stubs are made from an agent's name and address: by default a plaintext channel to it
  // (MakeChannel, coordinator/server/channel.h); with mutual TLS, one that checks the agent's
  // certificate carries that name (CoordinatorDaemon). Tests hand out mock agents
  // (agent_mock.grpc.pb.h). Applies to agents that register afterwards.
  using StubFactory = std::function<std::shared_ptr<v1::Agent::StubInterface>(
      const std::string& name, const std::string& address)>;
  void SetStubFactory(StubFactory factory);
  // The clock the registry and the window protocol read time from.
  Clock& clock() { return clock_; }
  // Every known agent, by name, with its state and lease age filled in.
  std::vector<v1::AgentInfo> List();
  // The agent's host facts as a JSON object ("{}" when unknown), for the window record.
  std::string HostFactsJson(const std::string& name);
  // Replaces a known agent's host facts (read anew at a campaign's start, DescribeHost); the
  // caller has checked them (CheckHostFacts). False when the agent is unknown.
  bool SetHostFacts(const std::string& name, const v1::HostFacts& host);

 private:
  using ProofHash = std::array<unsigned char, 32>;  // SHA-256 of the instance proof
  struct Entry {
    v1::AgentInfo info;
    ProofHash proof{};
    std::chrono::steady_clock::time_point last_seen;
    // The last renewal of a lease that had expired (suspect or lost before it); unset if none.
    std::optional<std::chrono::steady_clock::time_point> back_at;
    // When a window's call last found the agent unreachable, unless renewed since
    // (MarkUnreachable).
    std::optional<std::chrono::steady_clock::time_point> unreachable_at;
    bool busy = false;
    std::shared_ptr<v1::Agent::StubInterface> stub;
  };
  struct Candidates;

  AgentState StateLocked(const Entry& entry, std::chrono::steady_clock::time_point now) const;
  // Renews the entry's lease at `now`, noting when it had expired (back_at).
  void RenewLocked(Entry& entry, std::chrono::steady_clock::time_point now) const;
  static ProofHash HashProof(const std::string& proof);
  // Forgets the agent that is lost, not busy, and was heard of longest ago; false when none is.
  bool DropLongestLostLocked(std::chrono::steady_clock::time_point now);
  // The entry of `name` when `proof` is its own; nullptr with *check saying why not.
  Entry* FindWithProofLocked(const std::string& name, const std::string& proof, ProofCheck* check);
  // Why the agent cannot take `role` now ("is busy", "lacks nginx", "host requirement aslr=0
  // not met: aslr is 2"); empty when it can.
  // With any_state, the agent's state does not count: only what a wait cannot change.
  std::string UnfitLocked(const Entry& entry, std::chrono::steady_clock::time_point now,
                          const std::string& role, const std::vector<std::string>& targets,
                          const std::vector<std::string>& host_require,
                          bool any_state = false) const;
  // The agents `selectors` pick for `role` (every agent of the role when empty), split into
  // those that can take it now and, for the others, why not.
  Candidates SelectLocked(const std::vector<std::string>& selectors, const std::string& role,
                          const std::vector<std::string>& targets,
                          const std::vector<std::string>& host_require,
                          std::chrono::steady_clock::time_point now, bool any_state = false) const;
  // The load agents for a campaign whose server agent is `server`; nullopt with *why.
  std::optional<std::vector<std::string>> PlaceLoadsLocked(
      const PlacementSpec& spec, const std::string& server,
      std::chrono::steady_clock::time_point now, std::string* why) const;
  Placement MakePlacementLocked(const std::string& server, std::vector<std::string> loads) const;

  Clock& clock_;
  const AgentLeaseOptions options_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::map<std::string, Entry> agents_;
  StubFactory stub_factory_;  // under mu_
};

}  // namespace benchlab

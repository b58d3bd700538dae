#include "coordinator/server/agent_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Time stands still until a test advances it.
v1::RegisterAgentRequest Agent(const std::string& name, std::vector<std::string> roles,
                               std::vector<std::string> catalogue = {},
                               std::vector<std::string> labels = {}) {
  v1::RegisterAgentRequest req;
  req.set_name(name);
  for (auto& r : roles) req.add_roles(r);
  for (auto& c : catalogue) req.add_catalogue(c);
  for (auto& l : labels) req.add_labels(l);
  req.set_address("10.0.0.1:7000");
  req.set_instance_proof("proof-" + name);
  return req;
}

// A heartbeat with the proof Agent() registers `name` with; true when the lease was renewed.
bool Beat(AgentRegistry& registry, const std::string& name) {
  return registry.Heartbeat(name, "proof-" + name) == ProofCheck::kMatches;
}

// TTL 5 s and grace 10 s as by default, without the start-up grace unless a test wants it.
AgentLeaseOptions NoStartupGrace() {
  AgentLeaseOptions options;
  options.startup_grace = milliseconds(0);
  return options;
}

std::string State(AgentRegistry& registry, const std::string& name) {
  auto state = registry.StateOf(name);
  return state ? std::string(AgentStateName(*state)) : "unknown";
}

// --- leases ---------------------------------------------------------------------------------

TEST(AgentLeaseTest, DefaultsAreFiveSecondsTenSecondsAndThirtySeconds) {
  AgentLeaseOptions options;
  EXPECT_EQ(options.ttl, seconds(5));
  EXPECT_EQ(options.grace, seconds(10));
  EXPECT_EQ(options.startup_grace, seconds(30));
  FakeClock clock;
  EXPECT_EQ(AgentRegistry(clock, options).lease(), seconds(5));
}

TEST(AgentLeaseTest, ReadyBusyReady) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  EXPECT_EQ(State(registry, "s"), "ready");
  registry.SetBusy("s", true);
  EXPECT_EQ(State(registry, "s"), "busy");
  registry.SetBusy("s", false);
  EXPECT_EQ(State(registry, "s"), "ready");
  EXPECT_EQ(State(registry, "nobody"), "unknown");
}

TEST(AgentLeaseTest, ExpiredLeaseIsSuspectForTheGraceThenLost) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  clock.Advance(seconds(5));
  EXPECT_EQ(State(registry, "s"), "ready") << "the lease is fresh through its last instant";
  clock.Advance(milliseconds(1));
  EXPECT_EQ(State(registry, "s"), "suspect");
  clock.Advance(seconds(10) - milliseconds(1));
  EXPECT_EQ(State(registry, "s"), "suspect");
  clock.Advance(milliseconds(1));
  EXPECT_EQ(State(registry, "s"), "lost");
}

TEST(AgentLeaseTest, HeartbeatsKeepTheLeaseFresh) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  for (int i = 0; i < 10; ++i) {
    clock.Advance(seconds(4));
    ASSERT_TRUE(Beat(registry, "s"));
  }
  clock.Advance(seconds(5));
  EXPECT_EQ(State(registry, "s"), "ready");
}

TEST(AgentLeaseTest, BusyAgentWhoseLeaseExpiresIsSuspectThenLost) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  registry.SetBusy("s", true);
  clock.Advance(seconds(6));
  EXPECT_EQ(State(registry, "s"), "suspect");
  clock.Advance(seconds(10));
  EXPECT_EQ(State(registry, "s"), "lost");
}

TEST(AgentLeaseTest, ALapseIsRememberedAfterTheLeaseIsRenewed) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  registry.Register(Agent("t", {"server"}));
  const auto call = clock.Now();
  EXPECT_FALSE(registry.LapsedSince("s", call));
  clock.Advance(seconds(4));
  ASSERT_TRUE(Beat(registry, "t"));  // t's lease holds throughout
  clock.Advance(seconds(2));
  EXPECT_TRUE(registry.LapsedSince("s", call)) << "suspect now";
  ASSERT_TRUE(Beat(registry, "s"));
  ASSERT_TRUE(Beat(registry, "t"));
  EXPECT_EQ(State(registry, "s"), "ready");
  EXPECT_TRUE(registry.LapsedSince("s", call)) << "renewed, but it had expired during the call";
  EXPECT_FALSE(registry.LapsedSince("t", call));
  EXPECT_FALSE(registry.LapsedSince("s", clock.Now() + milliseconds(1)))
      << "a call that began after the renewal";
  // A registration after a lapse counts as well.
  clock.Advance(seconds(20));
  const auto later = clock.Now();
  registry.Register(Agent("t", {"server"}));
  EXPECT_TRUE(registry.LapsedSince("t", later));
  EXPECT_FALSE(registry.LapsedSince("nobody", call));
}

TEST(AgentLeaseTest, AnAgentAWindowCouldNotReachIsSuspectUntilHeardFrom) {
  FakeClock clock;
  AgentRegistry registry(clock, AgentLeaseOptions{});  // within the start-up grace, even
  registry.Register(Agent("s", {"server"}));
  const auto before = clock.Now();
  registry.MarkUnreachable("s");
  EXPECT_EQ(State(registry, "s"), "suspect");
  EXPECT_TRUE(registry.LapsedSince("s", before));
  clock.Advance(seconds(10));
  EXPECT_EQ(State(registry, "s"), "lost") << "the grace runs from the failed call";
  ASSERT_TRUE(Beat(registry, "s"));
  EXPECT_EQ(State(registry, "s"), "ready");
  registry.MarkUnreachable("nobody");  // ignored
}

TEST(AgentLeaseTest, HeartbeatAfterLostBringsItBackToReady) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  clock.Advance(seconds(60));
  ASSERT_EQ(State(registry, "s"), "lost");
  EXPECT_TRUE(Beat(registry, "s"));
  EXPECT_EQ(State(registry, "s"), "ready");
  EXPECT_FALSE(Beat(registry, "unknown")) << "an unknown agent must register again";
  EXPECT_EQ(State(registry, "unknown"), "unknown");
}

TEST(AgentLeaseTest, RegistrationAfterLostBringsItBackAndKeepsTheBusyMark) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  registry.Register(Agent("s", {"server"}));
  clock.Advance(seconds(60));
  ASSERT_EQ(State(registry, "s"), "lost");
  registry.Register(Agent("s", {"server"}));
  EXPECT_EQ(State(registry, "s"), "ready");
  registry.SetBusy("s", true);
  registry.Register(Agent("s", {"server"}));
  EXPECT_EQ(State(registry, "s"), "busy") << "busy is the scheduler's to clear";
}

// --- names belong to instances ------------------------------------------------------------------

// Agent `name` at `address` registered by the instance holding `proof`.
v1::RegisterAgentRequest Instance(const std::string& name, const std::string& address,
                                  const std::string& proof) {
  v1::RegisterAgentRequest req = Agent(name, {"server"});
  req.set_address(address);
  req.set_instance_proof(proof);
  return req;
}

std::string AddressOf(AgentRegistry& registry, const std::string& name) {
  for (const auto& agent : registry.List()) {
    if (agent.name() == name) return agent.address();
  }
  return "";
}

TEST(AgentInstanceTest, ANameHeldByALiveInstanceCannotBeTakenOver) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  ASSERT_EQ(registry.Register(Instance("s", "10.0.0.1:7000", "first")), Admission::kRegistered);
  std::string holder;
  EXPECT_EQ(registry.Register(Instance("s", "10.6.6.6:7000", "other"), &holder),
            Admission::kRefused);
  EXPECT_EQ(holder, "10.0.0.1:7000") << "the refusal names the live instance's address";
  EXPECT_EQ(AddressOf(registry, "s"), "10.0.0.1:7000") << "not re-pointed";
  EXPECT_EQ(registry.Heartbeat("s", "other"), ProofCheck::kWrongProof);
  EXPECT_EQ(registry.CheckProof("s", "other"), ProofCheck::kWrongProof);
  clock.Advance(seconds(6));
  ASSERT_EQ(State(registry, "s"), "suspect");
  EXPECT_EQ(registry.Register(Instance("s", "10.6.6.6:7000", "other")), Admission::kRefused)
      << "a suspect lease is still live";
  registry.SetBusy("s", true);
  clock.Advance(seconds(9));
  EXPECT_EQ(registry.Register(Instance("s", "10.6.6.6:7000", "other")), Admission::kRefused);
  EXPECT_EQ(AddressOf(registry, "s"), "10.0.0.1:7000");
}

TEST(AgentInstanceTest, TheSameInstanceRegistersAgainFromANewAddress) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  ASSERT_EQ(registry.Register(Instance("s", "10.0.0.1:7000", "first")), Admission::kRegistered);
  clock.Advance(seconds(3));
  EXPECT_EQ(registry.Register(Instance("s", "10.0.0.2:7001", "first")), Admission::kRegistered);
  EXPECT_EQ(AddressOf(registry, "s"), "10.0.0.2:7001");
  EXPECT_EQ(registry.Heartbeat("s", "first"), ProofCheck::kMatches);
  EXPECT_EQ(registry.CheckProof("s", "first"), ProofCheck::kMatches);
  EXPECT_EQ(registry.CheckProof("nobody", "first"), ProofCheck::kUnknown);
}

TEST(AgentInstanceTest, AnyInstanceTakesTheNameOverOnceTheLeaseIsLost) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  ASSERT_EQ(registry.Register(Instance("s", "10.0.0.1:7000", "first")), Admission::kRegistered);
  registry.SetBusy("s", true);
  clock.Advance(seconds(15) + milliseconds(1));
  ASSERT_EQ(State(registry, "s"), "lost");
  EXPECT_EQ(registry.Register(Instance("s", "10.0.0.9:7000", "second")), Admission::kTakenOver);
  EXPECT_EQ(AddressOf(registry, "s"), "10.0.0.9:7000");
  EXPECT_EQ(State(registry, "s"), "busy") << "the scheduler's mark stays";
  EXPECT_EQ(registry.Heartbeat("s", "first"), ProofCheck::kWrongProof)
      << "the old instance holds the name no more";
  EXPECT_EQ(registry.Heartbeat("s", "second"), ProofCheck::kMatches);
}

TEST(AgentInstanceTest, AFullRegistryMakesRoomOnlyByForgettingALostAgent) {
  FakeClock clock;
  AgentLeaseOptions options = NoStartupGrace();
  options.max_agents = 2;
  AgentRegistry registry(clock, options);
  ASSERT_EQ(registry.Register(Agent("a", {"server"})), Admission::kRegistered);
  clock.Advance(seconds(1));
  ASSERT_EQ(registry.Register(Agent("b", {"load"})), Admission::kRegistered);
  EXPECT_EQ(registry.Register(Agent("c", {"load"})), Admission::kFull);
  clock.Advance(seconds(1));
  EXPECT_EQ(registry.Register(Agent("a", {"server"})), Admission::kRegistered) << "a known name";
  clock.Advance(seconds(16));  // a and b lost; b was heard of longest ago
  EXPECT_EQ(registry.Register(Agent("c", {"load"})), Admission::kRegistered);
  EXPECT_EQ(State(registry, "b"), "unknown");
  EXPECT_EQ(State(registry, "a"), "lost");
}

TEST(AgentLeaseTest, RestartGraceHoldsEveryLeaseUntilStartPlusGrace) {
  FakeClock clock;
  AgentRegistry registry(clock, AgentLeaseOptions{});  // start-up grace 30 s from now
  registry.Register(Agent("early", {"server"}));
  clock.Advance(seconds(28));
  registry.Register(Agent("late", {"load"}));
  clock.Advance(seconds(2));  // start + 30 s: both leases still held
  EXPECT_EQ(State(registry, "early"), "ready");
  EXPECT_EQ(State(registry, "late"), "ready");
  clock.Advance(milliseconds(1));
  EXPECT_EQ(State(registry, "early"), "suspect") << "its own lease ended long before the grace";
  EXPECT_EQ(State(registry, "late"), "ready") << "its own lease runs to start + 33 s";
  clock.Advance(seconds(3));
  EXPECT_EQ(State(registry, "late"), "suspect");
  clock.Advance(seconds(7));  // start + 40 s + 1 ms
  EXPECT_EQ(State(registry, "early"), "lost");
  EXPECT_EQ(State(registry, "late"), "suspect");
}

TEST(AgentLeaseTest, ListShowsStateLeaseAgeAndWhatTheAgentRegistered) {
  FakeClock clock;
  AgentRegistry registry(clock, NoStartupGrace());
  auto req = Agent("s", {"server", "load"}, {"nginx"}, {"rack-1"});
  req.mutable_host()->set_hostname("box");
  registry.Register(req);
  registry.Register(Agent("t", {"load"}));
  clock.Advance(milliseconds(1500));
  ASSERT_TRUE(Beat(registry, "t"));
  clock.Advance(milliseconds(250));
  registry.SetBusy("t", true);
  auto agents = registry.List();
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0].name(), "s");
  EXPECT_EQ(agents[0].state(), "ready");
  EXPECT_EQ(agents[0].lease_age_ms(), 1750);
  EXPECT_EQ(agents[0].labels(0), "rack-1");
  EXPECT_EQ(agents[0].catalogue(0), "nginx");
  EXPECT_EQ(agents[0].roles_size(), 2);
  EXPECT_EQ(agents[0].address(), "10.0.0.1:7000");
  EXPECT_EQ(agents[0].host().hostname(), "box");
  EXPECT_EQ(agents[1].state(), "busy");
  EXPECT_EQ(agents[1].lease_age_ms(), 250);
  clock.Advance(seconds(20));
  EXPECT_EQ(registry.List()[1].state(), "lost");
}

// --- placement ------------------------------------------------------------------------------

class PlacementTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  AgentRegistry registry_{clock_, NoStartupGrace()};
  std::string why_;
};

TEST_F(PlacementTest, PlacesServerWithEveryTargetAndASeparateLoadAgent) {
  registry_.Register(Agent("both", {"server", "load"}, {"a", "b"}));
  registry_.Register(Agent("load-1", {"load"}));
  auto placement = registry_.Place({"a", "b"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->server_agent, "both");
  EXPECT_EQ(placement->load_agent, "load-1") << "a separate load agent is preferred";
  EXPECT_EQ(placement->load_agents, std::vector<std::string>{"load-1"});
  EXPECT_EQ(placement->server_host, "10.0.0.1");
}

TEST_F(PlacementTest, OneAgentHoldingBothRolesServesAndLoads) {
  registry_.Register(Agent("both", {"server", "load"}, {"a"}));
  auto placement = registry_.Place({"a"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->server_agent, "both");
  EXPECT_EQ(placement->load_agent, "both");
}

TEST_F(PlacementTest, MissingTargetSaysWhichAgentLacksWhatAndWhichIsNotReady) {
  registry_.Register(Agent("srv1", {"server"}, {"hello-server"}));
  registry_.Register(Agent("srv2", {"server"}, {"nginx", "hello-server"}));
  registry_.Register(Agent("l", {"load"}));
  for (int i = 0; i < 4; ++i) {  // srv2 falls silent for 16 s
    clock_.Advance(seconds(4));
    ASSERT_TRUE(Beat(registry_, "srv1"));
    ASSERT_TRUE(Beat(registry_, "l"));
  }
  EXPECT_FALSE(registry_.Place({"nginx", "hello-server"}, &why_).has_value());
  EXPECT_EQ(why_,
            "no ready server agent has targets nginx, hello-server: srv1 lacks nginx; "
            "srv2 is lost");
}

TEST_F(PlacementTest, AnAgentThatCannotStartATargetIsNotPlacedAndSaysWhy) {
  v1::RegisterAgentRequest srv = Agent("srv", {"server"}, {"nginx"});
  (*srv.mutable_unstartable())["nginx"] = "command \"nginx\" not found in PATH";
  registry_.Register(srv);
  registry_.Register(Agent("l", {"load"}));
  EXPECT_FALSE(registry_.Place({"nginx"}, &why_).has_value());
  EXPECT_EQ(why_,
            "no ready server agent has targets nginx: srv cannot start nginx: command \"nginx\" "
            "not found in PATH");
}

// What no wait can fix is a problem; an agent's state is not.
TEST_F(PlacementTest, PlacementProblemsIgnoreStateAndNameWhatNoAgentCanDo) {
  registry_.Register(Agent("srv1", {"server"}, {"hello-server"}));
  registry_.Register(Agent("srv2", {"server"}, {"nginx", "hello-server"}));
  registry_.Register(Agent("l", {"load"}));
  registry_.SetBusy("srv2", true);
  bool awaits = true;
  EXPECT_TRUE(registry_.PlacementProblems({}, {"nginx", "hello-server"}, &awaits).empty());
  EXPECT_EQ(registry_.PlacementProblems({}, {"nginx", "h2o"}, &awaits),
            (std::vector<std::string>{"no registered server agent can start nginx, h2o: srv1 "
                                      "lacks nginx, h2o; srv2 lacks h2o"}));
  EXPECT_FALSE(awaits);
  PlacementSpec named;
  named.server = {"srv3"};
  named.load = {"label:rack-9"};
  EXPECT_EQ(registry_.PlacementProblems(named, {"nginx"}, &awaits),
            (std::vector<std::string>{
                "no registered server agent can start nginx among srv3: srv3 is not registered",
                "no registered load agent among label:rack-9: no agent has label rack-9"}));
  EXPECT_TRUE(awaits);  // srv3, or an agent labelled rack-9, may yet register
}

TEST_F(PlacementTest, NoAgentOfARoleAwaitsRegistration) {
  registry_.Register(Agent("srv", {"server"}, {"nginx"}));
  bool awaits = false;
  EXPECT_EQ(registry_.PlacementProblems({}, {"nginx"}, &awaits),
            (std::vector<std::string>{"no registered load agent: no agent has the load role"}));
  EXPECT_TRUE(awaits);
}

// An agent as it registers with host findings (agent/host_check.h).
v1::RegisterAgentRequest WithFindings(v1::RegisterAgentRequest req,
                                      std::vector<std::pair<std::string, std::string>> values) {
  for (const auto& [name, value] : values) {
    v1::HostFinding* f = req.mutable_host()->add_findings();
    f->set_name(name);
    f->set_value(value);
    f->set_status(value == "performance" || value == "no SMT" ? "ok" : "warn");
    f->set_why("why");
  }
  return req;
}

TEST_F(PlacementTest, HostRequirementsKeepUnfitAgentsOutAndSayWhy) {
  registry_.Register(WithFindings(Agent("srv", {"server"}, {"a"}),
                                  {{"governor", "performance"}, {"smt_siblings", "no SMT"}}));
  registry_.Register(WithFindings(Agent("load-1", {"load"}), {{"governor", "powersave"}}));
  PlacementSpec spec{{}, {}, {"governor=performance"}};
  EXPECT_FALSE(registry_.Place(spec, {"a"}, &why_).has_value());
  EXPECT_EQ(why_,
            "no ready load agent: load-1 host requirement governor=performance not met: "
            "governor is powersave");
  EXPECT_TRUE(registry_.Place(PlacementSpec{}, {"a"}, &why_).has_value())
      << "without requirements load-1 is fine";

  registry_.Register(WithFindings(Agent("load-2", {"load"}), {{"governor", "performance"}}));
  auto placement = registry_.Place(spec, {"a"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->load_agent, "load-2");

  spec.host_require.push_back("smt_siblings_idle");
  EXPECT_FALSE(registry_.Place(spec, {"a"}, &why_).has_value());
  EXPECT_EQ(why_,
            "no ready load agent: load-1 host requirement governor=performance not met: "
            "governor is powersave and host requirement smt_siblings_idle not met: "
            "smt_siblings was not reported; load-2 host requirement smt_siblings_idle not met: "
            "smt_siblings was not reported");
  EXPECT_TRUE(registry_.PlacePairs(spec, {"a"}, &why_).empty());

  v1::HostFacts old_agent;  // an agent that sends no findings meets no requirement
  EXPECT_EQ(UnmetHostRequirements(old_agent, {"aslr=0"}),
            "host requirement aslr=0 not met: aslr was not reported");
  EXPECT_EQ(UnmetHostRequirements(old_agent, {}), "");
}

TEST_F(PlacementTest, NoAgentOfARoleIsSaid) {
  EXPECT_FALSE(registry_.Place({"a"}, &why_).has_value());
  EXPECT_EQ(why_, "no ready server agent has targets a: no agent has the server role");
  registry_.Register(Agent("s", {"server"}, {"a"}));
  EXPECT_FALSE(registry_.Place({"a"}, &why_).has_value());
  EXPECT_EQ(why_, "no ready load agent: no agent has the load role");
}

TEST_F(PlacementTest, OnlyReadyAgentsArePlaced) {
  registry_.Register(Agent("s", {"server"}, {"a"}));
  registry_.Register(Agent("l", {"load"}));
  registry_.SetBusy("l", true);
  EXPECT_FALSE(registry_.Place({"a"}, &why_).has_value());
  EXPECT_EQ(why_, "no ready load agent: l is busy");
  registry_.SetBusy("l", false);
  registry_.SetBusy("s", true);
  EXPECT_FALSE(registry_.Place({"a"}, &why_).has_value());
  EXPECT_EQ(why_, "no ready server agent has targets a: s is busy");
  registry_.SetBusy("s", false);
  clock_.Advance(seconds(6));
  ASSERT_TRUE(Beat(registry_, "s"));
  EXPECT_FALSE(registry_.Place({"a"}, &why_).has_value());
  EXPECT_EQ(why_, "no ready load agent: l is suspect");
  ASSERT_TRUE(Beat(registry_, "l"));
  EXPECT_TRUE(registry_.Place({"a"}, &why_).has_value()) << why_;
}

TEST_F(PlacementTest, ServerByNameInTheSpecsOrder) {
  registry_.Register(Agent("srv1", {"server"}, {"a"}));
  registry_.Register(Agent("srv2", {"server"}, {"a"}));
  registry_.Register(Agent("l", {"load"}));
  auto placement = registry_.Place(PlacementSpec{{"srv2", "srv1"}, {}}, {"a"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->server_agent, "srv2");
  registry_.SetBusy("srv2", true);
  placement = registry_.Place(PlacementSpec{{"srv2", "srv1"}, {}}, {"a"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->server_agent, "srv1");
  EXPECT_FALSE(registry_.Place(PlacementSpec{{"srv2", "srv3", "l"}, {}}, {"a"}, &why_));
  EXPECT_EQ(why_,
            "no ready server agent has targets a among srv2, srv3, l: srv2 is busy; "
            "srv3 is not registered; l has no server role");
}

TEST_F(PlacementTest, ServerAndLoadByLabel) {
  registry_.Register(Agent("a1", {"server"}, {"t"}, {"rack-1"}));
  registry_.Register(Agent("b1", {"server"}, {"t"}, {"rack-2"}));
  registry_.Register(Agent("a2", {"load"}, {}, {"rack-1"}));
  registry_.Register(Agent("b2", {"load"}, {}, {"rack-2", "fast"}));
  auto placement = registry_.Place(PlacementSpec{{"label:rack-2"}, {"label:fast"}}, {"t"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->server_agent, "b1");
  EXPECT_EQ(placement->load_agents, std::vector<std::string>{"b2"});
  EXPECT_FALSE(registry_.Place(PlacementSpec{{"label:rack-3"}, {}}, {"t"}, &why_));
  EXPECT_EQ(why_,
            "no ready server agent has targets t among label:rack-3: "
            "no agent has label rack-3");
  EXPECT_FALSE(registry_.Place(PlacementSpec{{"label:rack-1"}, {"label:rack-1"}}, {"u"}, &why_));
  EXPECT_EQ(why_,
            "no ready server agent has targets u among label:rack-1: a1 lacks u; "
            "a2 has no server role");
}

TEST_F(PlacementTest, SeveralLoadAgentsByName) {
  registry_.Register(Agent("s", {"server"}, {"t"}));
  registry_.Register(Agent("l1", {"load"}));
  registry_.Register(Agent("l2", {"load"}));
  registry_.Register(Agent("l3", {"load"}));
  auto placement = registry_.Place(PlacementSpec{{}, {"l3", "l1", "l3"}}, {"t"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->load_agents, (std::vector<std::string>{"l3", "l1"}));
  EXPECT_EQ(placement->load_agent, "l3");
  registry_.SetBusy("l1", true);
  EXPECT_FALSE(registry_.Place(PlacementSpec{{}, {"l3", "l1"}}, {"t"}, &why_));
  EXPECT_EQ(why_, "no ready load agent for l1: l1 is busy");
}

TEST_F(PlacementTest, EachLabelEntryTakesAnotherAgentAndNamedOnesAreKeptForTheirEntry) {
  registry_.Register(Agent("s", {"server", "load"}, {"t"}, {"rack-1"}));
  registry_.Register(Agent("l1", {"load"}, {}, {"rack-1"}));
  registry_.Register(Agent("l2", {"load"}, {}, {"rack-1"}));
  auto placement =
      registry_.Place(PlacementSpec{{"s"}, {"label:rack-1", "label:rack-1"}}, {"t"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->load_agents, (std::vector<std::string>{"l1", "l2"}))
      << "the server loads only when no other agent is ready";
  placement = registry_.Place(PlacementSpec{{"s"}, {"label:rack-1", "l1"}}, {"t"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->load_agents, (std::vector<std::string>{"l2", "l1"}));
  placement = registry_.Place(
      PlacementSpec{{"s"}, {"label:rack-1", "label:rack-1", "label:rack-1"}}, {"t"}, &why_);
  ASSERT_TRUE(placement.has_value()) << why_;
  EXPECT_EQ(placement->load_agents, (std::vector<std::string>{"l1", "l2", "s"}));
  EXPECT_FALSE(registry_.Place(PlacementSpec{{"s"}, {"label:rack-1", "label:rack-1", "l1", "l2"}},
                               {"t"}, &why_));
  EXPECT_EQ(why_,
            "no ready load agent for label:rack-1: l1 is already a load agent of this "
            "placement; l2 is already a load agent of this placement; s is already a load "
            "agent of this placement")
      << "the second label entry finds l1 and l2 named and s taken by the first";
}

TEST_F(PlacementTest, PairsAreDisjointAndAsManyAsTheAgentsAllow) {
  // 3 server-only, 1 load-only, 3 either: 7 agents make at most 3 pairs.
  for (std::string n : {"s1", "s2", "s3"}) registry_.Register(Agent(n, {"server"}, {"t"}));
  registry_.Register(Agent("l1", {"load"}));
  for (std::string n : {"x1", "x2", "x3"}) registry_.Register(Agent(n, {"server", "load"}, {"t"}));
  registry_.Register(Agent("s4", {"server"}, {"other"}));  // lacks the target
  auto pairs = registry_.PlacePairs(PlacementSpec{}, {"t"}, &why_);
  ASSERT_EQ(pairs.size(), 3u) << why_;
  std::set<std::string> used;
  for (const auto& p : pairs) {
    EXPECT_NE(p.server_agent, p.load_agent);
    EXPECT_NE(p.server_agent, "s4");
    EXPECT_TRUE(used.insert(p.server_agent).second) << p.server_agent << " is in two pairs";
    EXPECT_TRUE(used.insert(p.load_agent).second) << p.load_agent << " is in two pairs";
    EXPECT_EQ(p.load_agents, std::vector<std::string>{p.load_agent});
  }
  EXPECT_EQ(pairs[0].server_agent, "s1");
  EXPECT_EQ(pairs[0].load_agent, "l1") << "load-only agents go first";
}

TEST_F(PlacementTest, PairsOfAgentsHoldingBothRolesPairAmongThemselves) {
  for (std::string n : {"x1", "x2", "x3", "x4", "x5"}) {
    registry_.Register(Agent(n, {"server", "load"}, {"t"}, {"fleet"}));
  }
  registry_.Register(Agent("y", {"server", "load"}, {"t"}));  // not in the fleet
  auto pairs = registry_.PlacePairs(PlacementSpec{{"label:fleet"}, {"label:fleet"}}, {"t"}, &why_);
  ASSERT_EQ(pairs.size(), 2u) << why_;
  EXPECT_EQ(pairs[0].server_agent, "x1");
  EXPECT_EQ(pairs[0].load_agent, "x2");
  EXPECT_EQ(pairs[1].server_agent, "x3");
  EXPECT_EQ(pairs[1].load_agent, "x4");
}

TEST_F(PlacementTest, NoPairSaysWhy) {
  EXPECT_TRUE(registry_.PlacePairs(PlacementSpec{}, {"t"}, &why_).empty());
  EXPECT_EQ(why_, "no ready server agent has targets t: no agent has the server role");
  registry_.Register(Agent("x", {"server", "load"}, {"t"}));
  EXPECT_TRUE(registry_.PlacePairs(PlacementSpec{}, {"t"}, &why_).empty());
  EXPECT_EQ(why_, "no disjoint server and load pair: x is the only ready agent for either role");
  registry_.Register(Agent("l", {"load"}, {}, {"rack-1"}));
  registry_.SetBusy("l", true);
  EXPECT_TRUE(registry_.PlacePairs(PlacementSpec{{}, {"label:rack-1"}}, {"t"}, &why_).empty());
  EXPECT_EQ(why_, "no ready load agent among label:rack-1: l is busy");
}

TEST(PlacementSpecTest, ValidatesEntries) {
  EXPECT_TRUE(ValidatePlacementSpec(PlacementSpec{{"srv-1", "label:rack-1"}, {"l"}}, "c").ok());
  Status bad = ValidatePlacementSpec(PlacementSpec{{}, {"label:"}}, "c.toml: placement");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "c.toml: placement: load entry \"label:\" must be an agent name such "
            "as \"server-1\" or a label such as \"label:rack-1\"");
  EXPECT_FALSE(ValidatePlacementSpec(PlacementSpec{{""}, {}}, "c").ok());
  EXPECT_FALSE(ValidatePlacementSpec(PlacementSpec{{"a b"}, {}}, "c").ok());
}

}  // namespace
}  // namespace benchlab

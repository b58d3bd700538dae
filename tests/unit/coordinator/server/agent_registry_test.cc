#include "coordinator/server/agent_registry.h"

#include <thread>

#include <gtest/gtest.h>

namespace benchlab {
namespace {

v1::RegisterAgentRequest Agent(const std::string& name, std::vector<std::string> roles,
                               std::vector<std::string> catalogue = {}) {
  v1::RegisterAgentRequest req;
  req.set_name(name);
  for (auto& r : roles) req.add_roles(r);
  for (auto& c : catalogue) req.add_catalogue(c);
  req.set_address("10.0.0.1:7000");
  return req;
}

TEST(AgentRegistryTest, PlacesServerWithEveryTargetAndASeparateLoadAgent) {
  AgentRegistry registry;
  registry.Register(Agent("both", {"server", "load"}, {"a", "b"}));
  registry.Register(Agent("load-1", {"load"}));
  std::string why;
  auto placement = registry.Place({"a", "b"}, &why);
  ASSERT_TRUE(placement.has_value()) << why;
  EXPECT_EQ(placement->server_agent, "both");
  EXPECT_EQ(placement->load_agent, "load-1") << "a separate load agent is preferred";
  EXPECT_EQ(placement->server_host, "10.0.0.1");
}

TEST(AgentRegistryTest, NoPlacementWhenATargetIsMissingSaysWhich) {
  AgentRegistry registry;
  registry.Register(Agent("s", {"server"}, {"a"}));
  registry.Register(Agent("l", {"load"}));
  std::string why;
  EXPECT_FALSE(registry.Place({"a", "b"}, &why).has_value());
  EXPECT_NE(why.find("agent s lacks target \"b\""), std::string::npos) << why;
}

TEST(AgentRegistryTest, BusyAgentsAreNotPlacedAndNoLoadAgentIsSaid) {
  AgentRegistry registry;
  registry.Register(Agent("s", {"server"}, {"a"}));
  std::string why;
  EXPECT_FALSE(registry.Place({"a"}, &why).has_value());
  EXPECT_EQ(why, "no ready load agent");
  registry.Register(Agent("l", {"load"}));
  registry.SetBusy("l", true);
  EXPECT_FALSE(registry.Place({"a"}, &why).has_value());
  registry.SetBusy("l", false);
  EXPECT_TRUE(registry.Place({"a"}, &why).has_value());
}

TEST(AgentRegistryTest, LeaseExpiresWithoutHeartbeat) {
  AgentRegistry registry(std::chrono::milliseconds(50));
  registry.Register(Agent("s", {"server", "load"}, {"a"}));
  EXPECT_TRUE(registry.Heartbeat("s"));
  EXPECT_FALSE(registry.Heartbeat("unknown")) << "an unknown agent must register again";
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto agents = registry.List();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].state(), "lost");
  std::string why;
  EXPECT_FALSE(registry.Place({"a"}, &why).has_value());
  EXPECT_TRUE(registry.Heartbeat("s"));
  EXPECT_EQ(registry.List()[0].state(), "ready");
}

}  // namespace
}  // namespace benchlab

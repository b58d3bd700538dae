// [[service]] in a campaign file (docs/services.md): what the embedded lab's server agent runs.
// Read with the agent's own reader, references checked, bounds on probes checked against the
// probes the file defines, and the services' env values redacted like the targets'.
#include <gtest/gtest.h>

#include "coordinator/campaign.h"

namespace benchlab {
namespace {

constexpr const char* kCampaign = R"(name = "db"
baseline = "app"
[matrix]
connections = [2]
[gates]
probe.checkpoints.max = 0
[[service]]
name = "pg"
kind = "postgres"
command = ["{campaign_dir}/db/postgres.sh", "{run_dir}/data", "{port}"]
env = { PGPASSWORD = "s3cret" }
[[service.probe]]
name = "checkpoints"
sql = "select 1"
[[target]]
name = "app"
command = ["node", "app.js"]
services = ["pg"]
env = { DATABASE_URL = "postgres://bench@{service.pg.host}:{service.pg.port}/bench" }
[[scenario]]
name = "read"
path = "/db/users/1"
expect = { status = 200 }
)";

void Replace(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

TEST(CampaignServiceTest, ServicesAndTheTargetsNamingThemAreRead) {
  auto c = ParseCampaignText(kCampaign, "db.toml", "/srv/campaigns");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->services.size(), 1u);
  EXPECT_EQ(c->services[0].name, "pg");
  EXPECT_EQ(c->services[0].campaign_dir, "/srv/campaigns");
  EXPECT_EQ(c->targets[0].services, std::vector<std::string>{"pg"});
  EXPECT_EQ(c->gates.probe_max.at("checkpoints"), 0);
}

TEST(CampaignServiceTest, ABoundOnAProbeNoServiceHasIsAnError) {
  std::string text = kCampaign;
  Replace(text, "probe.checkpoints.max = 0", "probe.checkpoint.max = 0");
  auto c = ParseCampaignText(text, "db.toml", "/srv/campaigns");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "db.toml:6: gates.probe.checkpoint: expected the name of a [[service.probe]] "
            "(checkpoints)");
  text = kCampaign;
  Replace(text, "services = [\"pg\"]", "services = [\"postgres\"]");
  c = ParseCampaignText(text, "db.toml", "/srv/campaigns");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "db.toml:15: target \"app\": services[0]: expected the name of a [[service]] (pg), "
            "got \"postgres\"");
}

TEST(CampaignServiceTest, AServicesEnvIsRedactedLikeATargets) {
  auto redacted = RedactCampaignText(kCampaign, "db.toml");
  ASSERT_TRUE(redacted.ok()) << redacted.status().ToString();
  EXPECT_EQ(redacted->find("s3cret"), std::string::npos);
  EXPECT_EQ(redacted->find("postgres://bench@"), std::string::npos);
  auto c = ParseCampaignText(*redacted, "db.toml", "/srv/campaigns");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(HasRedactedEnv(*c));
}

}  // namespace
}  // namespace benchlab

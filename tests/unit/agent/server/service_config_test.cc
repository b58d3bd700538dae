// [[service]] in an agent's configuration (docs/services.md): parsed, checked against the targets
// that name it with file:line errors, and written back the same by WriteAgentConfig.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "agent/server/agent_config.h"

namespace benchlab {
namespace {

constexpr const char* kHead = R"(name = "server-1"
roles = ["server"]
coordinator = "127.0.0.1:7700"
state_dir = "/var/lib/benchlab/server-1"
)";

constexpr const char* kGood = R"([[service]]
name = "pg"
kind = "postgres"
command = ["{campaign_dir}/db/postgres.sh", "{run_dir}/data", "{port}"]
cpus = "1"
env = { PGTZ = "UTC" }
setup = [["{campaign_dir}/db/seed.sh", "{port}"], ["true"]]
scope = "target"
reset_sql = "TRUNCATE orders; VACUUM ANALYZE users"
reset_every = "round"
user = "bench"
database = "bench"
run_as = "postgres"
[[service.probe]]
name = "checkpoints"
sql = "select checkpoints_timed + checkpoints_req from pg_stat_bgwriter"
[[service.probe]]
name = "files"
command = ["sh", "-c", "ls {run_dir} | wc -l"]
[[target]]
name = "app"
command = ["node", "app.js", "--db-port", "{service.pg.port}"]
services = ["pg"]
env = { DATABASE_URL = "postgres://bench@{service.pg.host}:{service.pg.port}/bench" }
)";

Result<AgentConfig> Parse(const std::string& body) {
  return ParseAgentConfigText(std::string(kHead) + body, "agent.toml", "/etc/benchlab");
}

// The error of a configuration that must be refused.
std::string Error(const std::string& body) {
  auto config = Parse(body);
  EXPECT_FALSE(config.ok()) << body;
  return config.ok() ? "" : config.status().message();
}

TEST(ServiceConfigTest, AServiceWithProbesResetAndScopeIsRead) {
  auto config = Parse(kGood);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->services.size(), 1u);
  const ServiceDef& pg = config->services[0];
  EXPECT_EQ(pg.name, "pg");
  EXPECT_EQ(pg.kind, ServiceKind::kPostgres);
  EXPECT_EQ(pg.command.front(), "{campaign_dir}/db/postgres.sh");
  EXPECT_EQ(pg.campaign_dir, "/etc/benchlab");
  EXPECT_EQ(pg.cpus, std::vector<int>{1});
  EXPECT_EQ(pg.env.at("PGTZ"), "UTC");
  ASSERT_EQ(pg.setup.size(), 2u);
  EXPECT_EQ(pg.setup[0][1], "{port}");
  EXPECT_EQ(pg.scope, ServiceScope::kTarget);
  EXPECT_EQ(pg.reset_sql, "TRUNCATE orders; VACUUM ANALYZE users");
  EXPECT_EQ(pg.reset_every, ResetEvery::kRound);
  ASSERT_EQ(pg.probes.size(), 2u);
  EXPECT_EQ(pg.probes[0].name, "checkpoints");
  EXPECT_FALSE(pg.probes[0].sql.empty());
  EXPECT_EQ(pg.probes[1].command.size(), 3u);
  EXPECT_EQ(pg.line, 5);
  EXPECT_EQ(pg.probes[1].line, 21);
  EXPECT_EQ(pg.run_as, "postgres");
  EXPECT_EQ(config->catalogue[0].services, std::vector<std::string>{"pg"});
}

TEST(ServiceConfigTest, DefaultsAreCampaignScopeAndTcpReadiness) {
  auto config = Parse(R"([[service]]
name = "cache"
command = ["memcached", "-p", "{port}"]
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ServiceDef& s = config->services[0];
  EXPECT_EQ(s.kind, ServiceKind::kCommand);
  EXPECT_EQ(s.scope, ServiceScope::kCampaign);
  EXPECT_EQ(s.port, "auto");
  EXPECT_TRUE(s.ready_command.empty());
  EXPECT_FALSE(s.has_reset());
  EXPECT_EQ(s.run_as, "");  // the agent's own user
  EXPECT_EQ(config->service_dir, "/var/tmp");
}

TEST(ServiceConfigTest, MistakesNameTheLineTheKeyAndTheForm) {
  EXPECT_EQ(Error("[[service]]\nname = \"pg\"\ncommand = [\"pg\"]\nscope = \"forever\"\n"),
            "agent.toml:8: service \"pg\".scope: expected \"campaign\" (the default), "
            "\"target\" or \"window\", got \"forever\"");
  EXPECT_EQ(Error("[[service]]\nname = \"pg\"\n"),
            "agent.toml:5: service \"pg\": missing key \"command\" (a list of strings (argv, no "
            "shell))");
  // sql needs the postgres kind, which knows how to run it.
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\nreset_sql = \"TRUNCATE t\"\n"),
            "agent.toml:8: service \"c\".reset_sql: expected reset: sql runs only on a service "
            "of kind = \"postgres\" (with psql)");
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\n[[service.probe]]\n"
                  "name = \"n\"\n"),
            "agent.toml:8: service \"c\".probe \"n\": missing key \"command\" (a command (argv, "
            "no shell))");
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\nreset_every = \"round\"\n"),
            "agent.toml:8: service \"c\".reset_every: expected reset or reset_sql beside it");
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\nport = 0\n"),
            "agent.toml:8: service \"c\".port: expected \"auto\" or a port number from 1 to "
            "65535, got 0");
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\nsetup = [\"x\"]\n"),
            "agent.toml:8: service \"c\".setup[0]: expected a list of commands, each a list of "
            "strings (argv, no shell), got \"x\"");
  EXPECT_EQ(Error("[[service]]\nname = \"c\"\ncommand = [\"x\"]\nrun_as = \"0wner\"\n"),
            "agent.toml:8: service \"c\".run_as: expected a system user's name, such as "
            "\"postgres\", got \"0wner\"");
  EXPECT_EQ(Error("service_dir = \"relative\"\n"),
            "agent.toml:5: service_dir: expected an absolute directory path, got \"relative\"");
}

TEST(ServiceConfigTest, ATargetNamesOnlyServicesThatExist) {
  EXPECT_EQ(Error("[[target]]\nname = \"app\"\ncommand = [\"x\"]\nservices = [\"pg\"]\n"),
            "agent.toml:5: target \"app\": services[0]: expected the name of a [[service]] "
            "(none defined), got \"pg\"");
  EXPECT_EQ(Error("[[service]]\nname = \"pg\"\ncommand = [\"x\"]\n[[target]]\nname = \"app\"\n"
                  "command = [\"x\", \"{service.pg.port}\"]\n"),
            "agent.toml:8: target \"app\": \"{service.pg.port}\": expected a service the target "
            "lists in services = [...], got \"pg\"");
  EXPECT_EQ(Error("[[service]]\nname = \"pg\"\ncommand = [\"x\"]\n[[target]]\nname = \"app\"\n"
                  "command = [\"x\"]\nservices = [\"pg\"]\nenv = { U = \"{service.pg.prot}\" }\n"),
            "agent.toml:8: target \"app\": \"{service.pg.prot}\": expected {service.pg.port}, "
            ".host} or .run_dir}");
  EXPECT_EQ(Error("[[service]]\nname = \"pg\"\ncommand = [\"x\"]\n[[target]]\nname = \"app\"\n"
                  "command = [\"x\"]\nservices = [\"pg\", \"pg\"]\n"),
            "agent.toml:11: target \"app\".services: expected each service once, got \"pg\" "
            "twice");
}

TEST(ServiceConfigTest, WrittenBackItReadsTheSame) {
  auto config = Parse(std::string("service_dir = \"/srv/bench\"\n") + kGood);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  char dir[] = "/tmp/benchlab-service-config-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/agent.toml";
  ASSERT_TRUE(WriteAgentConfig(*config, path).ok());
  auto again = LoadAgentConfig(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->services.size(), 1u);
  const ServiceDef& a = config->services[0];
  const ServiceDef& b = again->services[0];
  EXPECT_EQ(b.command[0], "/etc/benchlab/db/postgres.sh");  // {campaign_dir} written out
  EXPECT_EQ(b.kind, a.kind);
  EXPECT_EQ(b.cpus, a.cpus);
  EXPECT_EQ(b.env, a.env);
  EXPECT_EQ(b.setup.size(), a.setup.size());
  EXPECT_EQ(b.scope, a.scope);
  EXPECT_EQ(b.reset_sql, a.reset_sql);
  EXPECT_EQ(b.reset_every, a.reset_every);
  EXPECT_EQ(b.run_as, "postgres");
  EXPECT_EQ(again->service_dir, "/srv/bench");
  ASSERT_EQ(b.probes.size(), 2u);
  EXPECT_EQ(b.probes[0].sql, a.probes[0].sql);
  EXPECT_EQ(b.probes[1].command, (std::vector<std::string>{"sh", "-c", "ls {run_dir} | wc -l"}));
  EXPECT_EQ(again->catalogue[0].services, std::vector<std::string>{"pg"});
}

}  // namespace
}  // namespace benchlab

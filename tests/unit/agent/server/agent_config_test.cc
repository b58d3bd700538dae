#include "agent/server/agent_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

class AgentConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-agent-config-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  Status Error(const std::string& text) {
    auto config = ParseAgentConfigText(text, "agent.toml", "/etc/benchlab");
    EXPECT_FALSE(config.ok());
    return config.ok() ? Status::Ok() : config.status();
  }

  std::string dir_;
};

TEST_F(AgentConfigTest, GoodFileWithCatalogue) {
  auto path = Write("agent.toml", R"(name = "server-1"
roles = ["server", "load"]
coordinator = "127.0.0.1:7700"
listen = "0.0.0.0:7701"
advertise = "10.0.0.7:7701"
run_root = "/var/tmp/benchlab"
[[target]]
name = "hello"
command = ["{campaign_dir}/hello-server", "--port", "{port}"]
cpus = "0-1"
env = { MODE = "fast" }
)");
  auto config = LoadAgentConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->name, "server-1");
  EXPECT_EQ(config->roles, (std::vector<std::string>{"server", "load"}));
  EXPECT_EQ(config->coordinator, "127.0.0.1:7700");
  EXPECT_EQ(config->listen.ToString(), "0.0.0.0:7701");
  EXPECT_EQ(config->advertise, "10.0.0.7:7701");
  EXPECT_EQ(config->run_root, "/var/tmp/benchlab");
  ASSERT_EQ(config->catalogue.size(), 1u);
  const TargetDef& t = config->catalogue[0];
  EXPECT_EQ(t.name, "hello");
  EXPECT_EQ(t.command[0], "{campaign_dir}/hello-server");
  EXPECT_EQ(t.campaign_dir, dir_) << "{campaign_dir} is the configuration's own directory";
  EXPECT_EQ(t.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.env.at("MODE"), "fast");
}

TEST_F(AgentConfigTest, LabelsAllowedCpusSpoolAndVersion) {
  auto config = ParseAgentConfigText(R"(name = "s"
roles = ["server"]
coordinator = "127.0.0.1:7700"
labels = ["rack-1", "fast"]
allowed_cpus = "0,2-3"
spool_dir = "/var/spool/benchlab"
sample_period = "1s"
[[target]]
name = "t"
command = ["t"]
version = ["t", "--version"]
)",
                                     "a.toml", "/");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->labels, (std::vector<std::string>{"rack-1", "fast"}));
  EXPECT_EQ(config->allowed_cpus, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(config->spool_dir, "/var/spool/benchlab");
  EXPECT_EQ(config->sample_period, std::chrono::seconds(1));
  EXPECT_EQ(config->catalogue[0].version, (std::vector<std::string>{"t", "--version"}));
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\nallowed_cpus = "
                  "\"x\"\n")
                .message()
                .substr(0, 28),
            "agent.toml:4: allowed_cpus: ");
}

TEST_F(AgentConfigTest, DefaultsListenOnLoopbackAndKeepStateInTheStateDirectory) {
  StateEnv env;
  env.home = "/home/u";
  auto config = ParseAgentConfigText(
      "name = \"load-1\"\nroles = [\"load\"]\ncoordinator = \"127.0.0.1:7700\"\n", "a.toml", "/",
      env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->listen.host, "127.0.0.1");
  EXPECT_EQ(config->listen.port, 0);
  EXPECT_EQ(config->state_dir, "/home/u/.local/state/benchlab/agent-load-1");
  EXPECT_EQ(config->run_root, "/home/u/.local/state/benchlab/agent-load-1/run");
  EXPECT_EQ(config->spool_dir, "/home/u/.local/state/benchlab/agent-load-1/spool");
  EXPECT_TRUE(config->catalogue.empty());
  EXPECT_TRUE(config->allowed_targets == AllowedTargets::Loopback());
  EXPECT_EQ(config->limits.max_duration, AgentLimits().max_duration);

  env.root = true;
  config = ParseAgentConfigText(
      "name = \"load-1\"\nroles = [\"load\"]\ncoordinator = \"127.0.0.1:7700\"\n"
      "state_dir = \"/srv/benchlab\"\n",
      "a.toml", "/", env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->state_dir, "/srv/benchlab");
  EXPECT_EQ(config->run_root, "/srv/benchlab/run");
}

TEST_F(AgentConfigTest, AllowedTargetsLimitsAndCampaignDir) {
  auto config = ParseAgentConfigText(R"(name = "load-1"
roles = ["load", "server"]
coordinator = "127.0.0.1:7700"
state_dir = "/srv/agent"
allowed_targets = ["10.0.0.0/8", "fd00::/8", "server-1.lab"]
campaign_dir = "/srv/campaigns"
[limits]
max_duration = "30m"
max_warmup = "10s"
max_timeout = "5s"
max_connections = 50000
max_threads = 8
max_rate = 2500.5
max_depth = 64
max_body = 1048576
max_conformance_cases = 50
max_targets = 3
spool_max_bytes = 10485760
[[target]]
name = "t"
command = ["{campaign_dir}/t"]
templates = ["{campaign_dir}/t.conf.in"]
)",
                                     "a.toml", "/etc/benchlab");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->allowed_targets.entries(),
            (std::vector<std::string>{"10.0.0.0/8", "fd00::/8", "server-1.lab"}));
  const AgentLimits& l = config->limits;
  EXPECT_EQ(l.max_duration, std::chrono::minutes(30));
  EXPECT_EQ(l.max_warmup, std::chrono::seconds(10));
  EXPECT_EQ(l.max_timeout, std::chrono::seconds(5));
  EXPECT_EQ(l.max_connections, 50000);
  EXPECT_EQ(l.max_threads, 8);
  EXPECT_EQ(l.max_rate, 2500.5);
  EXPECT_EQ(l.max_depth, 64);
  EXPECT_EQ(l.max_body, 1048576u);
  EXPECT_EQ(l.max_conformance_cases, 50);
  EXPECT_EQ(l.max_targets, 3);
  EXPECT_EQ(l.spool_max_bytes, 10485760u);
  EXPECT_EQ(config->config_dir, "/etc/benchlab");
  EXPECT_EQ(config->catalogue[0].campaign_dir, "/srv/campaigns");
  auto relative = ParseAgentConfigText(
      "name = \"s\"\nroles = [\"server\"]\ncoordinator = \"h:1\"\ncampaign_dir = \"../examples/\"\n"
      "[[target]]\nname = \"t\"\ncommand = [\"t\"]\n",
      "a.toml", "/src/deploy");
  ASSERT_TRUE(relative.ok()) << relative.status().ToString();
  EXPECT_EQ(relative->catalogue[0].campaign_dir, "/src/examples") << "relative to the file";
}

TEST_F(AgentConfigTest, BadAllowedTargetsAndLimitsNameFileLineAndForm) {
  const std::string head = "name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\n";
  EXPECT_EQ(Error(head + "allowed_targets = [\"10.0.0.0/8\", \"10.0.0.0/40\"]\n").message(),
            "agent.toml:4: allowed_targets: prefix length /40: expected 0 to 32, got "
            "\"10.0.0.0/40\"");
  EXPECT_EQ(Error(head + "allowed_targets = [\"not a host\"]\n").message(),
            "agent.toml:4: allowed_targets: expected a CIDR such as \"10.0.0.0/8\" or \"::1/128\", "
            "an address or a host name, got \"not a host\"");
  EXPECT_EQ(Error(head + "allowed_targets = \"10.0.0.0/8\"\n").message().substr(0, 43),
            "agent.toml:4: allowed_targets: expected a l");
  EXPECT_EQ(Error(head + "[limits]\nmax_duration = 600\n").message(),
            "agent.toml:5: limits.max_duration: expected a duration such as \"500ms\" or \"2s\", "
            "got 600");
  EXPECT_EQ(Error(head + "[limits]\nmax_connections = 0\n").message(),
            "agent.toml:5: limits.max_connections: expected an integer from 1 to 1000000, got 0");
  EXPECT_EQ(Error(head + "[limits]\nmax_depth = 2048\n").message(),
            "agent.toml:5: limits.max_depth: expected an integer from 1 to 1024, got 2048");
  EXPECT_EQ(Error(head + "[limits]\nmax_rate = -1\n").message(),
            "agent.toml:5: limits.max_rate: expected requests per second, more than 0 and at most "
            "1000000000, got -1");
  EXPECT_EQ(Error(head + "[limits]\nspool_max_bytes = 10\n").message(),
            "agent.toml:5: limits.spool_max_bytes: expected a number of bytes from 1048576 to "
            "1099511627776 such as 268435456, got 10");
  EXPECT_EQ(Error(head + "[limits]\nmax_duraton = \"1m\"\n").message().substr(0, 41),
            "agent.toml:5: limits.max_duraton: unknown");
  EXPECT_EQ(Error(head + "state_dir = \"relative\"\n").message(),
            "agent.toml:4: state_dir: expected an absolute directory path, got \"relative\"");
}

TEST_F(AgentConfigTest, WrittenConfigReadsBackWithDirectoriesResolved) {
  AgentConfig config;
  config.name = "server";
  config.roles = {"server"};
  config.coordinator = "127.0.0.1:41000";
  config.run_root = "/tmp/runs";
  config.allowed_cpus = {1, 2, 3};
  config.agent_cpus = {0};
  TargetDef t;
  t.name = "nginx";
  t.command = {"nginx", "-c", "{run_dir}/nginx.conf", "-g", "daemon off;"};
  t.templates = {"{campaign_dir}/nginx.conf.in"};
  t.campaign_dir = "/src/examples";
  t.cpus = {0};
  t.port = "8080";
  t.ready = "/health";
  t.ready_timeout = std::chrono::milliseconds(2500);
  t.env = {{"A", "b \"quoted\""}};
  config.catalogue.push_back(t);
  TargetDef https = t;
  https.name = "nginx-tls";
  https.tls = true;
  https.command = {"nginx", "-c", "{run_dir}/nginx-tls.conf", "-g", "daemon off;"};
  https.templates = {"{campaign_dir}/nginx-tls.conf.in"};
  config.catalogue.push_back(https);
  std::string path = dir_ + "/written.toml";
  ASSERT_TRUE(WriteAgentConfig(config, path).ok());
  auto back = LoadAgentConfig(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, config.name);
  EXPECT_EQ(back->roles, config.roles);
  EXPECT_EQ(back->coordinator, config.coordinator);
  EXPECT_EQ(back->run_root, config.run_root);
  EXPECT_EQ(back->allowed_cpus, config.allowed_cpus);
  EXPECT_EQ(back->agent_cpus, config.agent_cpus);
  ASSERT_EQ(back->catalogue.size(), 2u);
  EXPECT_FALSE(back->catalogue[0].tls);
  EXPECT_TRUE(back->catalogue[1].tls) << "a TLS target stays one in the agent's catalogue";
  const TargetDef& b = back->catalogue[0];
  EXPECT_EQ(b.command, t.command);
  EXPECT_EQ(b.templates, std::vector<std::string>{"/src/examples/nginx.conf.in"});
  EXPECT_EQ(b.cpus, t.cpus);
  EXPECT_EQ(b.port, "8080");
  EXPECT_EQ(b.ready, "/health");
  EXPECT_EQ(b.ready_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(b.env, t.env);
  EXPECT_EQ(b.campaign_dir, "/src/examples") << "templates may still come from there";
}

TEST_F(AgentConfigTest, WrittenConfigKeepsStateAllowedTargetsAndLimits) {
  AgentConfig config;
  config.name = "load";
  config.roles = {"load"};
  config.coordinator = "127.0.0.1:41000";
  config.state_dir = "/srv/state";
  config.run_root = "/srv/state/run";
  config.spool_dir = "/srv/state/spool";
  config.allowed_targets = AllowedTargets();
  ASSERT_TRUE(config.allowed_targets.Add("10.1.0.0/16").ok());
  config.limits.max_duration = std::chrono::minutes(2);
  config.limits.max_targets = 5;
  const std::string path = dir_ + "/written.toml";
  ASSERT_TRUE(WriteAgentConfig(config, path).ok());
  auto back = LoadAgentConfig(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->state_dir, "/srv/state");
  EXPECT_EQ(back->spool_dir, "/srv/state/spool");
  EXPECT_TRUE(back->allowed_targets == config.allowed_targets);
  EXPECT_EQ(back->limits.max_duration, std::chrono::minutes(2));
  EXPECT_EQ(back->limits.max_targets, 5);
  EXPECT_EQ(back->limits.max_warmup, AgentLimits().max_warmup);
}

TEST_F(AgentConfigTest, ErrorsNameFileLineKeyAndForm) {
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"web\"]\ncoordinator = \"h:1\"\n").message(),
            "agent.toml:2: roles: expected a non-empty list of \"server\" and/or \"load\", got "
            "\"web\"");
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\ncoordinator = \"nowhere\"\n").message(),
            "agent.toml:3: coordinator: expected HOST:PORT such as \"127.0.0.1:7700\", got "
            "\"nowhere\"");
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\n").message(),
            "agent.toml:1: missing key \"coordinator\" (the coordinator's HOST:PORT)");
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\nlisten_on = \"x\"\n")
                .message()
                .substr(0, 31),
            "agent.toml:4: listen_on: unknow");
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"server\"]\ncoordinator = \"h:1\"\n"
                  "[[target]]\nname = \"x\"\n")
                .message(),
            "agent.toml:4: target \"x\": missing key \"command\" (argv, no shell)");
}

TEST_F(AgentConfigTest, TlsFilesAreReadRelativeToTheConfigurationAndWrittenBack) {
  auto config = ParseAgentConfigText(R"(name = "server-1"
roles = ["server"]
coordinator = "10.0.0.5:7700"
listen = "10.0.0.7:7701"
[tls]
ca = "ca.pem"
cert = "/etc/benchlab/certs/server-1.pem"
key = "keys/server-1.key"
crl = "crl.pem"
)",
                                     "agent.toml", "/etc/benchlab");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->tls.ca, "/etc/benchlab/ca.pem");
  EXPECT_EQ(config->tls.cert, "/etc/benchlab/certs/server-1.pem");
  EXPECT_EQ(config->tls.key, "/etc/benchlab/keys/server-1.key");
  EXPECT_EQ(config->tls.crl, "/etc/benchlab/crl.pem");
  EXPECT_FALSE(config->insecure);

  const std::string path = dir_ + "/written.toml";
  ASSERT_TRUE(WriteAgentConfig(*config, path).ok());
  auto back = LoadAgentConfig(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->tls, config->tls);
}

TEST_F(AgentConfigTest, BadTlsTablesNameTheKeyAndForm) {
  const std::string head = "name = \"a\"\nroles = [\"load\"]\ncoordinator = \"127.0.0.1:1\"\n";
  Status partial = Error(head + "[tls]\nca = \"ca.pem\"\n");
  EXPECT_NE(partial.message().find("ca, cert and key together"), std::string::npos)
      << partial.message();
  Status empty = Error(head + "[tls]\nca = \"\"\ncert = \"c\"\nkey = \"k\"\n");
  EXPECT_NE(empty.message().find("tls.ca"), std::string::npos) << empty.message();
  Status flag = Error(head + "[tls]\ninsecure = \"yes\"\n");
  EXPECT_NE(flag.message().find("true or false"), std::string::npos) << flag.message();
  Status unknown = Error(head + "[tls]\ncafile = \"x\"\n");
  EXPECT_NE(unknown.message().find("cafile"), std::string::npos) << unknown.message();
  auto insecure = ParseAgentConfigText(head + "[tls]\ninsecure = true\n", "agent.toml", "/x");
  ASSERT_TRUE(insecure.ok()) << insecure.status().ToString();
  EXPECT_TRUE(insecure->insecure);
  EXPECT_TRUE(insecure->tls.empty());
}

// metrics_listen: unset or "" serves nothing; a loopback HOST:PORT is kept and written back;
// anything else (beyond loopback, not an address) is an error at its line.
TEST_F(AgentConfigTest, MetricsListenIsLoopbackOnly) {
  const std::string head = "name = \"a\"\nroles = [\"load\"]\ncoordinator = \"127.0.0.1:1\"\n";
  auto none = ParseAgentConfigText(head, "agent.toml", "/x");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->metrics_listen);
  auto off = ParseAgentConfigText(head + "metrics_listen = \"\"\n", "agent.toml", "/x");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->metrics_listen);
  auto on =
      ParseAgentConfigText(head + "metrics_listen = \"127.0.0.1:9464\"\n", "agent.toml", "/x");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  ASSERT_TRUE(on->metrics_listen);
  EXPECT_EQ(on->metrics_listen->ToString(), "127.0.0.1:9464");

  const std::string path = dir_ + "/written.toml";
  AgentConfig written = *on;
  written.run_root = "/srv/run";
  ASSERT_TRUE(WriteAgentConfig(written, path).ok());
  auto back = LoadAgentConfig(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->metrics_listen);
  EXPECT_EQ(back->metrics_listen->ToString(), "127.0.0.1:9464");

  EXPECT_EQ(Error(head + "metrics_listen = \"0.0.0.0:9464\"\n").message(),
            "agent.toml:4: metrics_listen: expected a loopback HOST:PORT such as "
            "\"127.0.0.1:9464\" (plain HTTP, loopback only; docs/metrics.md) or \"\" for none, "
            "got \"0.0.0.0:9464\"");
  EXPECT_EQ(
      Error(head + "metrics_listen = 9464\n").message(),
      "agent.toml:4: metrics_listen: expected HOST:PORT such as \"127.0.0.1:7700\", got 9464");
}

TEST_F(AgentConfigTest, MissingFileIsNotFound) {
  auto config = LoadAgentConfig(dir_ + "/absent.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find("absent.toml"), std::string::npos);
}

TEST(TargetHostTest, TheAddressLoadAgentsAreGiven) {
  AgentConfig config;
  config.listen = {"127.0.0.1", 0};
  EXPECT_EQ(TargetHost(config), "127.0.0.1");
  config.listen = {"10.77.0.2", 7701};  // a lab host listening on its own address
  EXPECT_EQ(TargetHost(config), "10.77.0.2");
  config.advertise = "server-1.lab:7701";  // advertised: what the coordinator hands out
  EXPECT_EQ(TargetHost(config), "server-1.lab");
  config.advertise = "[::1]:7701";
  EXPECT_EQ(TargetHost(config), "::1");
  config.advertise.clear();
  config.listen = {"0.0.0.0", 7701};  // every address: loopback is one of them
  EXPECT_EQ(TargetHost(config), "127.0.0.1");
  config.listen = {"::", 7701};
  EXPECT_EQ(TargetHost(config), "127.0.0.1");
}

TEST_F(AgentConfigTest, AgentCpusMustStayApartFromAllowedCpus) {
  auto config = ParseAgentConfigText(
      "name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\nallowed_cpus = \"1-3\"\n"
      "agent_cpus = \"0\"\n",
      "agent.toml", "/");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->agent_cpus, std::vector<int>{0});
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\nallowed_cpus = "
                  "\"1-3\"\nagent_cpus = \"0-1\"\n")
                .message(),
            "agent.toml:5: agent_cpus: CPU 1 is also in allowed_cpus = \"1-3\"; the agent's own "
            "CPUs must be apart from the benchmark's");
  EXPECT_EQ(Error("name = \"a\"\nroles = [\"load\"]\ncoordinator = \"h:1\"\nagent_cpus = 7\n")
                .message()
                .substr(0, 26),
            "agent.toml:4: agent_cpus: ");
}

// Affinity of a pretend process; files still come from the real machine.
class AffinityEnv : public RootedSysEnv {
 public:
  explicit AffinityEnv(std::vector<int> cpus) : cpus_(std::move(cpus)) {}
  Status SetAffinity(pid_t pid, const std::vector<int>& cpus) override {
    EXPECT_EQ(pid, 0) << "the calling thread";
    set_calls_.push_back(cpus);
    cpus_ = cpus;
    return Status::Ok();
  }
  Result<std::vector<int>> GetAffinity(pid_t) override { return cpus_; }
  const std::vector<std::vector<int>>& set_calls() const { return set_calls_; }

 private:
  std::vector<int> cpus_;
  std::vector<std::vector<int>> set_calls_;
};

TEST(PinAgentTest, PinsTheAgentAndLeavesTheOtherCpusToTheBenchmark) {
  AffinityEnv env({0, 1, 2, 3});
  AgentConfig config;
  config.agent_cpus = {0};
  ASSERT_TRUE(PinAgent(env, config).ok());
  EXPECT_EQ(env.set_calls(), (std::vector<std::vector<int>>{{0}}));
  EXPECT_EQ(config.allowed_cpus, (std::vector<int>{1, 2, 3}));
}

TEST(PinAgentTest, KeepsAllowedCpusThatAreSet) {
  AffinityEnv env({0, 1, 2, 3});
  AgentConfig config;
  config.agent_cpus = {3};
  config.allowed_cpus = {1};
  ASSERT_TRUE(PinAgent(env, config).ok());
  EXPECT_EQ(config.allowed_cpus, std::vector<int>{1});
  EXPECT_EQ(env.set_calls(), (std::vector<std::vector<int>>{{3}}));
}

TEST(PinAgentTest, WithoutAgentCpusNothingIsPinned) {
  AffinityEnv env({0, 1});
  AgentConfig config;
  ASSERT_TRUE(PinAgent(env, config).ok());
  EXPECT_TRUE(env.set_calls().empty());
  EXPECT_TRUE(config.allowed_cpus.empty()) << "the daemon's own default applies";
}

TEST(PinAgentTest, RefusesCpusTheProcessMayNotUseOrThatLeaveNoneForTheBenchmark) {
  AffinityEnv env({0, 1});
  AgentConfig config;
  config.agent_cpus = {4};
  Status outside = PinAgent(env, config);
  EXPECT_EQ(outside.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(outside.message(),
            "agent_cpus = \"4\": CPU 4 is not one this process may run on (0-1)");
  config.agent_cpus = {0, 1};
  Status all = PinAgent(env, config);
  EXPECT_EQ(all.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(all.message().find("leaves no CPU for targets and load"), std::string::npos)
      << all.message();
  EXPECT_TRUE(env.set_calls().empty()) << "nothing pinned when refused";
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

constexpr const char* kBuildAgentHead =
    "name = \"a\"\nroles = [\"server\"]\ncoordinator = \"h:1\"\nstate_dir = \"/srv/a\"\n";

Status BuildConfigError(const std::string& text) {
  auto config = ParseAgentConfigText(text, "agent.toml", "/etc/benchlab");
  EXPECT_FALSE(config.ok());
  return config.ok() ? Status::Ok() : config.status();
}

TEST(AgentConfigBuildTest, RecipesAndTheBuildCacheAreRead) {
  const std::string text = std::string(kBuildAgentHead) +
                           "[build_cache]\n"
                           "dir = \"/var/cache/benchlab\"\n"
                           "max_bytes = 1073741824\n"
                           "[[target]]\n"
                           "name = \"app\"\n"
                           "command = [\"{campaign_dir}/app\"]\n"
                           "source = \"/src/app\"\n"
                           "build = [[\"make\", \"-C\", \"{src}\"], [\"cp\", \"{src}/app\", "
                           "\"{out}/app\"]]\n"
                           "build_timeout = \"90s\"\n"
                           "[[target]]\n"
                           "name = \"plain\"\n"
                           "command = [\"true\"]\n";
  auto config = ParseAgentConfigText(text, "agent.toml", "/etc/benchlab");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->build_cache_dir, "/var/cache/benchlab");
  EXPECT_EQ(config->build_cache_max_bytes, 1073741824u);
  ASSERT_EQ(config->catalogue.size(), 2u);
  const BuildRecipe& r = config->catalogue[0].recipe;
  EXPECT_EQ(r.source, "/src/app");
  ASSERT_EQ(r.build.size(), 2u);
  EXPECT_EQ(r.build[0], (std::vector<std::string>{"make", "-C", "{src}"}));
  EXPECT_EQ(r.build[1], (std::vector<std::string>{"cp", "{src}/app", "{out}/app"}));
  EXPECT_EQ(r.time_limit, std::chrono::seconds(90));
  EXPECT_TRUE(CheckBuildRecipe(r).ok());
  EXPECT_TRUE(config->catalogue[1].recipe.empty());

  // Written and read back the same.
  char tmpl[] = "/tmp/benchlab-agent-build-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/agent.toml";
  ASSERT_TRUE(WriteAgentConfig(*config, path).ok());
  auto again = LoadAgentConfig(path);
  std::filesystem::remove_all(tmpl);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->build_cache_dir, "/var/cache/benchlab");
  EXPECT_EQ(again->build_cache_max_bytes, 1073741824u);
  EXPECT_EQ(CanonicalRecipeText(again->catalogue[0].recipe), CanonicalRecipeText(r));
  EXPECT_EQ(again->catalogue[0].recipe.source, "/src/app");
}

TEST(AgentConfigBuildTest, DefaultsLiveUnderTheStateDirectory) {
  auto config = ParseAgentConfigText(kBuildAgentHead, "agent.toml", "/etc/benchlab");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->build_cache_dir, "/srv/a/builds");
  EXPECT_EQ(config->build_cache_max_bytes, 2ull << 30);
}

// A catalogue entry runs its own command: a campaign's commit and of are not its keys, and {out}
// stands only in an entry with a build recipe.
TEST(AgentConfigBuildTest, ACatalogueEntryTakesNoCommitAndOutOnlyWithARecipe) {
  const std::string target = std::string(kBuildAgentHead) +
                             "[[target]]\n"
                             "name = \"app\"\n";  // lines 5-6
  const std::string commit =
      BuildConfigError(target + "command = [\"true\"]\ncommit = \"v1\"\n").message();
  EXPECT_EQ(commit.rfind("agent.toml:8: target \"app\".commit: unknown key", 0), 0u) << commit;
  EXPECT_EQ(BuildConfigError(target + "command = [\"{out}/app\"]\n").message(),
            "agent.toml:7: target \"app\".command[0]: {out} is filled only for a target with a "
            "build recipe (source and build): the output directory of the commit the agent built");
  auto with_recipe = ParseAgentConfigText(
      target + "command = [\"{out}/app\"]\nsource = \"/src\"\nbuild = [[\"make\"]]\n", "agent.toml",
      "/etc/benchlab");
  ASSERT_TRUE(with_recipe.ok()) << with_recipe.status().ToString();
  EXPECT_EQ(with_recipe->catalogue[0].command[0], "{out}/app");
}

TEST(AgentConfigBuildTest, ErrorsNameFileLineKeyAndForm) {
  const std::string target = std::string(kBuildAgentHead) +
                             "[[target]]\n"
                             "name = \"app\"\n"
                             "command = [\"true\"]\n";  // lines 5-7
  EXPECT_EQ(
      BuildConfigError(target + "source = \"/src\"\nbuild = [[\"make\", \"{prot}\"]]\n").message(),
      "agent.toml:9: target \"app\".build[0][1]: expected only the placeholders {src} and "
      "{out}, got \"{prot}\"");
  EXPECT_EQ(BuildConfigError(target + "source = \"src\"\nbuild = [[\"make\"]]\n").message(),
            "agent.toml:8: target \"app\".source: expected the absolute path of a git work tree, "
            "got \"src\"");
  EXPECT_EQ(BuildConfigError(target + "source = \"/src\"\nbuild = [\"make\"]\n").message(),
            "agent.toml:9: target \"app\".build[0]: expected a non-empty list of strings (argv, "
            "no shell), got \"make\"");
  EXPECT_EQ(BuildConfigError(target + "build = [[\"make\"]]\n").message(),
            "agent.toml:8: target \"app\".build: expected source too: the git work tree the steps "
            "build");
  EXPECT_EQ(BuildConfigError(target + "source = \"/src\"\n").message(),
            "agent.toml:8: target \"app\".source: expected build too: the steps that build a "
            "commit of it");
  EXPECT_EQ(BuildConfigError(target + "source = \"/src\"\nbuild = [[\"make\"]]\n"
                                      "build_timeout = 10\n")
                .message(),
            "agent.toml:10: target \"app\".build_timeout: expected a duration such as \"500ms\" or "
            "\"2s\", got 10");
  EXPECT_EQ(
      BuildConfigError(std::string(kBuildAgentHead) + "[build_cache]\ndir = \"cache\"\n").message(),
      "agent.toml:6: build_cache.dir: expected an absolute directory path, got \"cache\"");
  EXPECT_EQ(
      BuildConfigError(std::string(kBuildAgentHead) + "[build_cache]\nmax_bytes = 10\n").message(),
      "agent.toml:6: build_cache.max_bytes: expected a size in bytes from 1048576 to 2^50 "
      "such as 2147483648, got 10");
  EXPECT_EQ(BuildConfigError(std::string(kBuildAgentHead) + "[build_cache]\nsize = 10\n")
                .message()
                .find("agent.toml:6: build_cache.size: unknown key"),
            0u);
}

}  // namespace
}  // namespace benchlab

#include "agent/start_check.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/support/temp_dir.h"

namespace benchlab {
namespace {

TargetDef StartableTarget(const std::string& name, std::vector<std::string> command) {
  TargetDef def;
  def.name = name;
  def.command = std::move(command);
  def.line = 12;
  return def;
}

std::vector<std::string> Whys(const std::vector<StartProblem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.kind + " " + p.name + ": " + p.why);
  return out;
}

void WriteExecutable(const std::string& path) {
  std::ofstream(path) << "#!/bin/sh\nexit 0\n";
  ASSERT_EQ(chmod(path.c_str(), 0755), 0);
}

TEST(StartCheckTest, FindsTheProgramAsASpawnWould) {
  TempDir dir;
  WriteExecutable(dir.path() + "/app");
  std::ofstream(dir.path() + "/data") << "not a program\n";
  std::vector<TargetDef> targets = {
      StartableTarget("found", {dir.path() + "/app", "--port", "{port}"}),
      StartableTarget("in-path", {"sh", "-c", "true"}),
      StartableTarget("missing", {dir.path() + "/no-such-app"}),
      StartableTarget("not-executable", {dir.path() + "/data"}),
      StartableTarget("not-in-path", {"benchlab-no-such-program"}),
  };
  EXPECT_EQ(
      Whys(CheckStartable(targets, {}, {})),
      (std::vector<std::string>{
          "target missing: command \"" + dir.path() + "/no-such-app\" is not an executable file",
          "target not-executable: command \"" + dir.path() + "/data\" is not an executable file",
          "target not-in-path: command \"benchlab-no-such-program\" not found in PATH"}));
}

TEST(StartCheckTest, FillsCampaignDirAndLeavesWhatOnlyAStartFills) {
  TempDir dir;
  WriteExecutable(dir.path() + "/app");
  TargetDef here = StartableTarget("here", {"{campaign_dir}/app"});
  here.campaign_dir = dir.path();
  TargetDef elsewhere = StartableTarget("elsewhere", {"{campaign_dir}/../build/bin/app"});
  elsewhere.campaign_dir = dir.path();
  // Made in the run directory at start: not known before.
  TargetDef run_dir = StartableTarget("run-dir", {"{run_dir}/app"});
  TargetDef relative = StartableTarget("relative", {"./app"});  // relative to the run dir
  auto problems = CheckStartable({here, elsewhere, run_dir, relative}, {}, {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].name, "elsewhere");
  EXPECT_EQ(problems[0].why,
            "command \"" + dir.path() + "/../build/bin/app\" is not an executable file");
  EXPECT_EQ(FormatStartProblem("hello.toml", problems[0]),
            "hello.toml:12: target \"elsewhere\": " + problems[0].why);
}

TEST(StartCheckTest, TemplatesCwdAndCpus) {
  TempDir dir;
  std::ofstream(dir.path() + "/nginx.conf.in") << "events {}\n";
  TargetDef def = StartableTarget("web", {"sh"});
  def.campaign_dir = dir.path();
  def.templates = {"{campaign_dir}/nginx.conf.in", "{campaign_dir}/missing.conf.in"};
  def.cwd = dir.path() + "/no-such-dir";
  def.cpus = {0, 7};
  StartCheckOptions options;
  options.cpus = {0, 1};
  EXPECT_EQ(
      Whys(CheckStartable({def}, {}, options)),
      (std::vector<std::string>{
          "target web: cwd \"" + dir.path() + "/no-such-dir\" is not a directory",
          "target web: template \"" + dir.path() + "/missing.conf.in\" is not a readable file",
          "target web: cpus: CPU 7 is not one this host offers (0-1)"}));
  options.cpus.clear();  // not checked
  def.cwd.clear();
  EXPECT_EQ(CheckStartable({def}, {}, options).size(), 1u);
}

TEST(StartCheckTest, ATemplatesTlsPlaceholdersNeedATlsTarget) {
  TempDir dir;
  std::ofstream(dir.path() + "/tls.conf.in") << "listen {port} ssl;\nkey {tls_key};\n"
                                             << "cert {tls_cert};\n";
  TargetDef def = StartableTarget("web", {"sh"});
  def.campaign_dir = dir.path();
  def.templates = {"{campaign_dir}/tls.conf.in"};
  EXPECT_EQ(Whys(CheckStartable({def}, {}, {})),
            (std::vector<std::string>{"target web: template " + dir.path() +
                                      "/tls.conf.in:2: {tls_key} is filled only for a target "
                                      "with tls = true, and target \"web\" has none"}));
  def.tls = true;
  EXPECT_EQ(Whys(CheckStartable({def}, {}, {})), std::vector<std::string>{});
}

TEST(StartCheckTest, AFixedPortTakenHereOnlyWhenAsked) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));

  TargetDef def = StartableTarget("web", {"sh"});
  def.port = port;
  StartCheckOptions options;
  EXPECT_TRUE(CheckStartable({def}, {}, options).empty());
  options.ports = true;
  EXPECT_EQ(Whys(CheckStartable({def}, {}, options)),
            (std::vector<std::string>{"target web: port " + port + " is in use on this host"}));
  close(fd);
  EXPECT_TRUE(CheckStartable({def}, {}, options).empty());
}

TEST(StartCheckTest, ServicesAndTheirCommands) {
  ServiceDef db;
  db.name = "db";
  db.command = {"benchlab-no-such-database", "-D", "{run_dir}"};
  db.setup = {{"sh", "-c", "true"}, {"benchlab-no-such-setup"}};
  db.line = 30;
  TargetDef app = StartableTarget("app", {"sh"});
  app.services = {"db", "cache"};
  EXPECT_EQ(Whys(CheckStartable({app}, {db}, {})),
            (std::vector<std::string>{
                "target app: services: \"cache\" is not a [[service]] defined here",
                "service db: command \"benchlab-no-such-database\" not found in PATH",
                "service db: setup command \"benchlab-no-such-setup\" not found in PATH"}));
}

}  // namespace
}  // namespace benchlab

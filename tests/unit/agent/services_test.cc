// ServiceManager (agent/services.h, docs/services.md) with real processes: the bundled
// hello-server stands in for a database (a TCP port to wait for), shell commands for setup,
// reset and probes, so every rule of scope, reset, probe and death is seen happening.
#include "agent/services.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/support/eventually.h"
#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

ServiceDef Hello(const std::string& name) {
  ServiceDef def;
  def.name = name;
  def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
  def.ready_timeout = std::chrono::milliseconds(10000);
  // Setup writes the counter the probe reads.
  def.setup = {{"sh", "-c", "echo 5 > {run_dir}/count"}};
  def.probes.push_back({"count", {"sh", "-c", "cat {run_dir}/count"}, "", 0});
  def.reset_command = {"sh", "-c", "echo x >> {run_dir}/resets"};
  return def;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-services-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    manager_.reset();
    fs::remove_all(dir_);
  }
  ServiceManager& Make(std::vector<ServiceDef> defs, std::string service_dir = "/var/tmp",
                       Clock& clock = RealClockInstance()) {
    ServiceOptions options;
    options.run_root = dir_ + "/run";
    options.service_dir = std::move(service_dir);
    options.stop_grace = std::chrono::milliseconds(2000);
    manager_ = std::make_unique<ServiceManager>(env_, std::move(defs), options, clock);
    return *manager_;
  }

  SysEnv& env_ = RealSysEnv();
  std::string dir_;
  std::unique_ptr<ServiceManager> manager_;
};

TEST_F(ServicesTest, ACampaignScopedServiceServesEveryWindowOfItsCampaignOnly) {
  ServiceManager& m = Make({Hello("db")});
  auto first = m.Prepare({"db"}, {"c1", "app", 1, "w1"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->starts.size(), 1u);
  EXPECT_TRUE(first->starts[0].started);
  ASSERT_EQ(first->endpoints.size(), 1u);
  const ServiceEndpoint db = first->endpoints[0];
  EXPECT_GT(db.port, 0);
  EXPECT_EQ(ReadFile(db.run_dir + "/count"), "5\n");  // setup ran after readiness
  m.Release("w1");
  EXPECT_EQ(m.running(), 1u);

  auto second = m.Prepare({"db"}, {"c1", "other", 2, "w2"});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->starts[0].started);
  EXPECT_EQ(second->endpoints[0].port, db.port);

  // Another campaign gets a fresh instance; the first one's is stopped.
  auto third = m.Prepare({"db"}, {"c2", "app", 1, "w3"});
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_TRUE(third->starts[0].started);
  EXPECT_NE(third->endpoints[0].run_dir, db.run_dir);
  EXPECT_EQ(m.running(), 1u);
  EXPECT_EQ(m.StopAll(), 1u);
  EXPECT_EQ(m.running(), 0u);
}

TEST_F(ServicesTest, EndingACampaignStopsItsServicesExceptThoseInAnInterval) {
  ServiceManager& m = Make({Hello("db"), Hello("cache"), Hello("other")});
  auto mine = m.Prepare({"db", "cache"}, {"c1#1", "app", 1, "w1"});
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  auto theirs = m.Prepare({"other"}, {"c2#2", "app", 1, "w2"});
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  const pid_t db = m.Pids({"db"}).at(0);
  const pid_t cache = m.Pids({"cache"}).at(0);
  ASSERT_EQ(m.running(), 3u);

  // cache is inside a measured interval: it is left to the idle timeout.
  auto interval = m.Begin({"cache"});
  ServiceManager::Ended ended = m.StopCampaign("c1#1");
  EXPECT_EQ(ended.stopped, 1u);
  EXPECT_EQ(ended.in_use, 1u);
  EXPECT_EQ(m.running(), 2u);
  EXPECT_TRUE(m.Pids({"db"}).empty());
  EXPECT_NE(::kill(db, 0), 0);  // the process is gone, not just forgotten
  EXPECT_EQ(::kill(cache, 0), 0);
  std::vector<ProbeReading> probes;
  interval->End(&probes);
  interval.reset();

  // Once out of its interval it stops too; the other campaign's service never does.
  ended = m.StopCampaign("c1#1");
  EXPECT_EQ(ended.stopped, 1u);
  EXPECT_EQ(ended.in_use, 0u);
  EXPECT_EQ(m.running(), 1u);
  EXPECT_EQ(m.StopCampaign("c9#9").stopped, 0u);
  EXPECT_EQ(m.StopCampaign("").stopped, 0u);  // "" names no campaign, unlike StopOthers
  EXPECT_EQ(m.running(), 1u);

  // A window of the ended campaign that comes after all starts its service afresh.
  auto again = m.Prepare({"db"}, {"c1#1", "app", 2, "w3"});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->starts[0].started);
}

// docs/services.md, "When services stop": idle is measured on the manager's clock from the last
// window that used the service; one inside a measured interval is never idle.
TEST_F(ServicesTest, AServiceStopsOnceIdleForTheIdleTimeUnlessInAnInterval) {
  FakeClock clock;
  ServiceManager& m = Make({Hello("db"), Hello("cache")}, "/var/tmp", clock);
  auto p = m.Prepare({"db", "cache"}, {"c1", "app", 1, "w1"});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  m.Release("w1");
  auto interval = m.Begin({"cache"});
  const auto idle = std::chrono::minutes(10);
  clock.Advance(idle - std::chrono::milliseconds(1));
  EXPECT_EQ(m.StopIdle(idle), 0u);
  EXPECT_EQ(m.running(), 2u);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(m.StopIdle(idle), 1u);
  EXPECT_TRUE(m.Pids({"db"}).empty());
  EXPECT_EQ(m.Pids({"cache"}).size(), 1u) << "a service inside an interval is not idle";
  std::vector<ProbeReading> probes;
  interval->End(&probes);
  interval.reset();
  EXPECT_EQ(m.StopIdle(idle), 1u);
  EXPECT_EQ(m.running(), 0u);
}

TEST_F(ServicesTest, WindowAndTargetScopesStartAgainWhenTheirWindowOrTargetChanges) {
  ServiceDef per_window = Hello("w");
  per_window.scope = ServiceScope::kWindow;
  ServiceDef per_target = Hello("t");
  per_target.scope = ServiceScope::kTarget;
  ServiceManager& m = Make({per_window, per_target});
  auto a = m.Prepare({"w", "t"}, {"c", "app", 1, "w1"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  m.Release("w1");
  EXPECT_EQ(m.running(), 1u);  // the window's own service stopped with it
  auto b = m.Prepare({"w", "t"}, {"c", "app", 1, "w2"});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(b->starts[0].started);
  EXPECT_FALSE(b->starts[1].started);  // same target: kept
  m.Release("w2");
  auto c = m.Prepare({"t"}, {"c", "other", 1, "w3"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->starts[0].started);  // another target: started again
}

TEST_F(ServicesTest, ResetsRunEveryWindowOrOncePerRound) {
  ServiceDef every_window = Hello("a");
  ServiceDef every_round = Hello("b");
  every_round.reset_every = ResetEvery::kRound;
  ServiceManager& m = Make({every_window, every_round});
  std::string a_dir, b_dir;
  int round = 1;
  for (const char* window : {"w1", "w2", "w3", "w4"}) {
    auto p = m.Prepare({"a", "b"}, {"c", "app", round, window});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    a_dir = p->endpoints[0].run_dir;
    b_dir = p->endpoints[1].run_dir;
    for (const ResetRun& r : p->resets) EXPECT_GE(r.ms, 0);
    m.Release(window);
    if (std::string(window) == "w2") round = 2;
  }
  EXPECT_EQ(ReadFile(a_dir + "/resets"), "x\nx\nx\nx\n");
  EXPECT_EQ(ReadFile(b_dir + "/resets"), "x\nx\n");  // rounds 1 and 2
}

TEST_F(ServicesTest, ProbesAreReadAroundTheIntervalAndTheServiceIsMeasuredApart) {
  ServiceManager& m = Make({Hello("db")});
  auto p = m.Prepare({"db"}, {"c", "app", 1, "w1"});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto interval = m.Begin({"db"});
  std::ofstream(p->endpoints[0].run_dir + "/count") << "8\n";
  std::vector<ProbeReading> probes;
  std::vector<ServiceInterval> figures = interval->End(&probes);
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0].name, "db");
  EXPECT_TRUE(figures[0].alive);
  EXPECT_GE(figures[0].cpu_user_s + figures[0].cpu_sys_s, 0);
  EXPECT_GT(figures[0].rss_peak_kb, 0u);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].service, "db");
  EXPECT_EQ(probes[0].name, "count");
  ASSERT_TRUE(probes[0].before && probes[0].after) << probes[0].error;
  EXPECT_EQ(*probes[0].before, 5);
  EXPECT_EQ(*probes[0].after, 8);
}

TEST_F(ServicesTest, AProbeThatPrintsNoNumberHasAnErrorAndNoReading) {
  ServiceDef def = Hello("db");
  def.probes = {{"bad", {"sh", "-c", "echo not-a-number"}, "", 0}};
  ServiceManager& m = Make({def});
  ASSERT_TRUE(m.Prepare({"db"}, {"c", "app", 1, "w1"}).ok());
  auto interval = m.Begin({"db"});
  std::vector<ProbeReading> probes;
  interval->End(&probes);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_FALSE(probes[0].before.has_value());
  EXPECT_FALSE(probes[0].after.has_value());
  EXPECT_EQ(probes[0].error,
            "service \"db\" probe \"bad\": printed \"not-a-number\", expected one number");
}

TEST_F(ServicesTest, AServiceThatDiesIsReportedAndStartedAgainForTheNextWindow) {
  ServiceManager& m = Make({Hello("db")});
  auto p = m.Prepare({"db"}, {"c", "app", 1, "w1"});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto pids = m.Pids({"db"});
  ASSERT_EQ(pids.size(), 1u);
  auto interval = m.Begin({"db"});
  ASSERT_EQ(kill(pids[0], SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] { return ProcessEnded(pids[0]); }));
  std::vector<ProbeReading> probes;
  std::vector<ServiceInterval> figures = interval->End(&probes);
  interval.reset();
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_FALSE(figures[0].alive);
  EXPECT_NE(figures[0].exit.find("killed by signal 9"), std::string::npos) << figures[0].exit;
  m.Release("w1");
  auto again = m.Prepare({"db"}, {"c", "app", 1, "w2"});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->starts[0].started);
  EXPECT_NE(m.Pids({"db"}).at(0), pids[0]);
}

TEST_F(ServicesTest, AFailedSetupOrReadinessLeavesNothingRunningAndSaysWhich) {
  ServiceDef bad_setup = Hello("s");
  bad_setup.setup = {{"sh", "-c", "echo seeding failed >&2; exit 3"}};
  ServiceDef never_ready = Hello("r");
  never_ready.command = {"sh", "-c", "echo starting; exec sleep 30"};
  never_ready.ready_timeout = std::chrono::milliseconds(500);
  ServiceDef exits = Hello("e");
  exits.command = {"sh", "-c", "echo no data directory >&2; exit 1"};
  ServiceManager& m = Make({bad_setup, never_ready, exits});
  auto s = m.Prepare({"s"}, {"c", "app", 1, "w1"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "service \"s\" setup[0]: exit status 3; output: seeding failed");
  auto r = m.Prepare({"r"}, {"c", "app", 1, "w2"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("service \"r\" not ready within 500ms"), std::string::npos)
      << r.status().message();
  auto e = m.Prepare({"e"}, {"c", "app", 1, "w3"});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("service \"e\" exited before it was ready (exit status 1)"),
            std::string::npos)
      << e.status().message();
  EXPECT_EQ(m.running(), 0u);
  auto unknown = m.Prepare({"nope"}, {"c", "app", 1, "w4"});
  EXPECT_EQ(unknown.status().message(), "this agent has no service \"nope\" in its configuration");
}

// A service that writes who it runs as: the service itself, its setup and its probe.
ServiceDef Whoami(const std::string& user) {
  ServiceDef def;
  def.name = "who";
  def.run_as = user;
  def.command = {"sh", "-c", "id -un > {run_dir}/service; exec sleep 600"};
  def.ready_command = {"test", "-s", "{run_dir}/service"};
  def.ready_timeout = std::chrono::milliseconds(10000);
  def.setup = {{"sh", "-c", "id -un > {run_dir}/setup"}};
  def.probes.push_back({"uid", {"id", "-u"}, "", 0});
  return def;
}

TEST_F(ServicesTest, ARunAsServiceRunsAsThatUserInADirectoryOfItsOwnThatGoesWithIt) {
  if (geteuid() != 0) GTEST_SKIP() << "run_as another user takes root";
  ServiceManager& m = Make({Whoami("nobody")});
  auto prepared = m.Prepare({"who"}, {"c1", "app", 1, "w1"});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  const std::string dir = prepared->endpoints.at(0).run_dir;
  // Not below the agent's private run_root, which nobody could not enter.
  EXPECT_EQ(fs::path(dir).parent_path(), "/var/tmp");
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_NE(st.st_uid, 0u);
  EXPECT_EQ(ReadFile(dir + "/service"), "nobody\n");
  EXPECT_EQ(ReadFile(dir + "/setup"), "nobody\n");
  auto interval = m.Begin({"who"});
  std::vector<ProbeReading> probes;
  interval->End(&probes);
  ASSERT_EQ(probes.size(), 1u);
  ASSERT_TRUE(probes[0].after.has_value()) << probes[0].error;
  EXPECT_EQ(*probes[0].after, static_cast<double>(st.st_uid));
  interval.reset();  // it holds the instance too
  EXPECT_EQ(m.StopAll(), 1u);
  EXPECT_FALSE(fs::exists(dir));  // removed with the user's rights when the service stopped
}

TEST_F(ServicesTest, ARunAsUserWhoCannotReachTheServiceDirIsToldWhereItStops) {
  if (geteuid() != 0) GTEST_SKIP() << "run_as another user takes root";
  // dir_ is made by mkdtemp: 0700 root, like the agent's run_root.
  const std::string closed = dir_;
  ASSERT_TRUE(fs::create_directories(closed + "/inner"));
  ServiceManager& m = Make({Whoami("nobody")}, closed + "/inner");
  auto prepared = m.Prepare({"who"}, {"c1", "app", 1, "w1"});
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("user nobody cannot enter " + closed + " (mode 0700"),
            std::string::npos)
      << prepared.status().message();
  EXPECT_EQ(m.running(), 0u);
  EXPECT_TRUE(fs::is_empty(closed + "/inner"));

  ServiceManager& unknown = Make({Whoami("no-such-user-here")});
  auto refused = unknown.Prepare({"who"}, {"c1", "app", 1, "w1"});
  EXPECT_EQ(refused.status().message(),
            "service \"who\": run_as \"no-such-user-here\": no such user on this host");
}

TEST(ProbeOutputTest, OneNumberAndNothingElse) {
  EXPECT_EQ(*ParseProbeOutput("12\n"), 12);
  EXPECT_EQ(*ParseProbeOutput("  -3.5 "), -3.5);
  EXPECT_EQ(*ParseProbeOutput("1e3"), 1000);
  EXPECT_EQ(ParseProbeOutput("").status().message(), "printed nothing, expected one number");
  EXPECT_EQ(ParseProbeOutput("12 13").status().message(), "printed \"12 13\", expected one number");
  EXPECT_FALSE(ParseProbeOutput("nan").ok());
  EXPECT_FALSE(ParseProbeOutput("0x10").ok());
  EXPECT_FALSE(ParseProbeOutput("inf").ok());
}

TEST(ServiceEndpointsTest, PlaceholdersOfTheTargetAreFilled) {
  TargetDef def;
  def.command = {"app", "--db", "{service.pg.host}:{service.pg.port}", "{port}"};
  def.env["DATABASE_URL"] = "postgres://bench@{service.pg.host}:{service.pg.port}/bench";
  def.cwd = "{service.pg.run_dir}";
  TargetDef filled = WithServiceEndpoints(def, {{"pg", 5433, "127.0.0.1", "/run/pg"}});
  EXPECT_EQ(filled.command[2], "127.0.0.1:5433");
  EXPECT_EQ(filled.command[3], "{port}");  // the target's own, filled at launch
  EXPECT_EQ(filled.env.at("DATABASE_URL"), "postgres://bench@127.0.0.1:5433/bench");
  EXPECT_EQ(filled.cwd, "/run/pg");
}

}  // namespace
}  // namespace benchlab

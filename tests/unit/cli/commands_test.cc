// The command line as the binary runs it (RunBenchlab, cli/app.h), in this process: the words
// every command shares (--figure, --format) and the exit statuses of cli/commands.h, against a
// small series in a real SQLite store.
#include "cli/commands.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/app.h"
#include "coordinator/server/coordinator_daemon.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = R"(name = "nightly"
series = "nightly"
baseline = "nginx"
[matrix]
connections = [8]
rounds = 3
warmup = "100ms"
duration = "1s"
[[target]]
name = "nginx"
[[target]]
name = "app"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200 }
)";

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

// `benchlab ARGS...` in this process: its exit status and what it wrote to stdout and stderr.
Ran Benchlab(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"benchlab"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  Ran ran;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  ran.status = RunBenchlab(static_cast<int>(argv.size()), argv.data());
  ran.out = ::testing::internal::GetCapturedStdout();
  ran.err = ::testing::internal::GetCapturedStderr();
  return ran;
}

// A loopback port nothing listens on: bound by the kernel's choice, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "no loopback port";
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// Campaigns nightly-1 .. nightly-3 of the series "nightly": nginx (the baseline) and app, three
// valid rounds each in one cell, app a little faster in each campaign.
class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_commands_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "lab.db").string();
    auto store = Store::Open(db_);
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (int c = 1; c <= 3; ++c) {
      CampaignRow row;
      row.name = "nightly-" + std::to_string(c);
      row.series = "nightly";
      row.baseline = "nginx";
      row.spec_toml = kSpec;
      row.source = "nightly.toml";
      row.total_windows = 6;
      row.state = "done";
      auto id = (*store)->CreateCampaign(row, {{"nginx", "[]", ""}, {"app", "[]", ""}},
                                         {{"hello", "scenario", "GET", "/", 200, ""}});
      ASSERT_TRUE(id.ok()) << id.status().message();
      for (int round = 1; round <= 3; ++round) {
        for (const char* target : {"nginx", "app"}) {
          const double rps = (target == std::string("app") ? 11000 + 500 * c : 10000) +
                             10 * round;  // rounds a little apart
          WindowRow w;
          w.campaign = row.name;
          w.campaign_id = *id;
          w.target = target;
          w.scenario = "hello";
          w.connections = 8;
          w.load_level = "c8";
          w.round = round;
          w.verdict = "valid";
          w.reasons = "[]";
          w.started_at = "2026-11-30T10:00:00Z";
          w.ended_at = "2026-11-30T10:00:01Z";
          w.server_agent = "server";
          w.load_agent = "load";
          w.requests = static_cast<uint64_t>(rps);
          w.duration_s = 1;
          w.rps = rps;
          w.p50_us = 100;
          w.p99_us = 300 + 10 * round;
          w.server_cpu_s = 0.5;
          w.cpu_us_per_request = 0.5e6 / rps;
          auto window = (*store)->InsertWindow(w, {});
          ASSERT_TRUE(window.ok()) << window.status().message();
        }
      }
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_;
};

// --figure is the figure's flag in every command; compare keeps --metric as its alias, and takes
// the figures' full names as history does.
TEST_F(CommandsTest, CompareTakesFigureAndItsAliasMetric) {
  for (const char* flag : {"--figure", "--metric"}) {
    for (const char* figure : {"p99", "p99_us"}) {
      const Ran ran = Benchlab(
          {"compare", "nightly-1", "nightly-2", "--db", db_, "--format", "json", flag, figure});
      ASSERT_EQ(ran.status, 0) << flag << " " << figure << ": " << ran.err;
      EXPECT_EQ(nlohmann::json::parse(ran.out)["metrics"], nlohmann::json::array({"p99_us"}))
          << flag << " " << figure;
    }
  }
  const Ran both = Benchlab({"compare", "nightly-1", "nightly-2", "--db", db_, "--format", "json",
                             "--figure", "rps,cpu_us_per_request"});
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(nlohmann::json::parse(both.out)["metrics"],
            nlohmann::json::array({"rps", "cpu_us_per_request"}));

  const Ran p50 = Benchlab({"compare", "nightly-1", "nightly-2", "--db", db_, "--figure", "p50"});
  EXPECT_EQ(p50.status, 2);
  EXPECT_EQ(p50.err, "benchlab compare: --figure: expected rps, cpu or p99, got \"p50\"\n");
}

// history and regressions read --figure by the same table: a short name or a full one.
TEST_F(CommandsTest, HistoryAndRegressionsTakeTheSameFigureNames) {
  for (const char* figure : {"cpu", "cpu_us_per_request"}) {
    const Ran history = Benchlab({"history", "nightly", "--db", db_, "--json", "--figure", figure});
    ASSERT_EQ(history.status, 0) << history.err;
    EXPECT_EQ(nlohmann::json::parse(history.out)["figure"], "cpu_us_per_request");
    const Ran regressions =
        Benchlab({"regressions", "nightly", "--db", db_, "--format", "json", "--figure", figure});
    EXPECT_EQ(regressions.status, 0) << regressions.err;
  }
  const Ran bad = Benchlab({"history", "nightly", "--db", db_, "--figure", "speed"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.rfind("benchlab history: --figure: expected rps, cpu, p99 or a figure's "
                          "full name (rps, cpu_us_per_request, ",
                          0),
            0u)
      << bad.err;
}

// --format md and --format markdown are one format in every command that writes Markdown.
TEST_F(CommandsTest, MdAndMarkdownAreOneFormatInEveryCommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"report", "nightly-1", "--db", db_},
      {"compare", "nightly-1", "nightly-2", "--db", db_},
      {"history", "nightly", "--db", db_},
      {"regressions", "nightly", "--db", db_},
  };
  for (const auto& command : commands) {
    auto with = [&](const char* format) {
      std::vector<std::string> args = command;
      args.insert(args.end(), {"--format", format});
      return Benchlab(args);
    };
    const Ran md = with("md");
    const Ran markdown = with("markdown");
    EXPECT_EQ(md.status, 0) << command[0] << ": " << md.err;
    EXPECT_EQ(markdown.status, 0) << command[0] << ": " << markdown.err;
    EXPECT_FALSE(md.out.empty()) << command[0];
    EXPECT_EQ(md.out, markdown.out) << command[0];
    EXPECT_NE(md.out, with("json").out) << command[0] << " wrote something other than Markdown";
  }
  EXPECT_EQ(Benchlab({"history", "nightly", "--db", db_, "--format", "md"}).out.rfind("### ", 0),
            0u);
  // profile checks its forms itself (they depend on --diff): both names pass that check and
  // meet the same refusal, that the campaign has no profile.
  const Ran md =
      Benchlab({"profile", "nightly-1", "--db", db_, "--diff", "nginx", "app", "--format", "md"});
  const Ran markdown = Benchlab(
      {"profile", "nightly-1", "--db", db_, "--diff", "nginx", "app", "--format", "markdown"});
  EXPECT_EQ(md.status, markdown.status);
  EXPECT_EQ(md.err, markdown.err);
  EXPECT_EQ(md.err.find("--format"), std::string::npos) << md.err;
}

// history's --json is --format json; the two together are refused.
TEST_F(CommandsTest, HistoryJsonIsFormatJson) {
  const Ran flag = Benchlab({"history", "nightly", "--db", db_, "--json"});
  const Ran format = Benchlab({"history", "nightly", "--db", db_, "--format", "json"});
  ASSERT_EQ(flag.status, 0) << flag.err;
  EXPECT_EQ(flag.out, format.out);
  EXPECT_EQ(Benchlab({"history", "nightly", "--db", db_, "--json", "--format", "md"}).status, 2);
}

// One situation, one exit status and one message (cli/commands.h, docs/cli.md): a coordinator
// that cannot be reached is kExitFailure from report and compare alike (compare said 2 before),
// and from every other command that asks one, said as cli/client.h's CallError says it.
TEST_F(CommandsTest, AnUnreachableCoordinatorIsAFailureFromEveryCommand) {
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedPort());
  const std::vector<std::vector<std::string>> commands = {
      {"report", "nightly-1", "--coordinator", closed},
      {"compare", "nightly-1", "nightly-2", "--coordinator", closed},
      {"windows", "--coordinator", closed},
      {"agents", "--coordinator", closed},
      {"cancel", "nightly-1", "--coordinator", closed},
      {"history", "nightly", "--coordinator", closed},
      {"regressions", "nightly", "--coordinator", closed},
      {"audit", "--coordinator", closed},
  };
  for (const auto& command : commands) {
    const Ran ran = Benchlab(command);
    EXPECT_EQ(ran.status, kExitFailure) << command[0] << ": " << ran.err;
    EXPECT_EQ(ran.err.rfind("benchlab " + command[0] + ": ", 0), 0u) << ran.err;
    EXPECT_NE(ran.err.find(closed), std::string::npos) << "names the coordinator: " << ran.err;
    // In words, with the cause gRPC found last and what to check, not gRPC's own text.
    EXPECT_NE(ran.err.find("cannot reach the coordinator at " + closed + " (Connection refused)"),
              std::string::npos)
        << ran.err;
    EXPECT_NE(ran.err.find("--ca, --cert and --key"), std::string::npos) << ran.err;
    EXPECT_EQ(ran.err.find("failed to connect to all addresses"), std::string::npos) << ran.err;
  }
}

// history, regressions and audit write the same bytes whether they read the database (--db) or
// ask a coordinator serving it (--coordinator), in every form, and meet bad input alike.
TEST_F(CommandsTest, ReadingCommandsSayTheSameFromTheDatabaseAndTheCoordinator) {
  auto daemon = CoordinatorDaemon::Create(db_);
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  AuditRow row;
  row.at = "2026-12-01T10:00:00.000Z";
  row.identity = "benchlab://operator/alice";
  row.role = "operator";
  row.peer = "ipv4:127.0.0.1:5000";
  row.call = "SubmitCampaign";
  row.subject = "campaign nightly-3";
  row.outcome = "ok";
  ASSERT_TRUE((*daemon)->store().AppendAudit(row).ok());
  auto bound = (*daemon)->Start({"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  const std::string address = bound->ToString();

  const std::vector<std::vector<std::string>> commands = {
      {"history", "nightly"},
      {"history", "nightly", "--json", "--figure", "cpu"},
      {"history", "nightly", "--format", "md", "--cell", "hello/c8", "--target", "app"},
      {"history", "nightly", "--width", "60", "--figure", "p99"},
      {"regressions", "nightly"},
      {"regressions", "nightly", "--format", "md", "--dashboard", "https://lab.example/"},
      {"regressions", "nightly", "--format", "json", "--figure", "p99,rps", "--since", "nightly-2"},
      {"audit", "--json"},
      {"audit", "--width", "200", "--since", "2026-11-30"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> db = command;
    db.insert(db.end(), {"--db", db_});
    std::vector<std::string> coordinator = command;
    coordinator.insert(coordinator.end(), {"--coordinator", address});
    const Ran from_db = Benchlab(db);
    const Ran from_coordinator = Benchlab(coordinator);
    const std::string what = command[0] + " " + command.back();
    EXPECT_EQ(from_db.status, 0) << what << ": " << from_db.err;
    EXPECT_EQ(from_coordinator.status, 0) << what << ": " << from_coordinator.err;
    EXPECT_FALSE(from_db.out.empty()) << what;
    EXPECT_EQ(from_db.out, from_coordinator.out) << what;
  }
  EXPECT_NE(Benchlab({"audit", "--json", "--db", db_}).out.find("benchlab://operator/alice"),
            std::string::npos);

  // --output writes the coordinator's answer as it writes the database's.
  const std::string pr = (dir_ / "pr.md").string();
  ASSERT_EQ(
      Benchlab({"regressions", "nightly", "--format", "md", "--coordinator", address, "-o", pr})
          .status,
      0);
  std::ifstream written(pr);
  const std::string file((std::istreambuf_iterator<char>(written)),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(file, Benchlab({"regressions", "nightly", "--format", "md", "--db", db_}).out);

  // Bad input: the same status, and the same line where the command checks it itself.
  const Ran figure_db = Benchlab({"history", "nightly", "--figure", "speed", "--db", db_});
  const Ran figure_coordinator =
      Benchlab({"history", "nightly", "--figure", "speed", "--coordinator", address});
  EXPECT_EQ(figure_db.status, kExitUsage);
  EXPECT_EQ(figure_coordinator.status, kExitUsage);
  EXPECT_EQ(figure_db.err, figure_coordinator.err);
  const Ran series = Benchlab({"history", "nighty", "--coordinator", address});
  EXPECT_EQ(series.status, kExitUsage);
  EXPECT_EQ(series.err,
            "benchlab history: no series \"nighty\" in the coordinator's database (series: "
            "nightly)\n");
  const Ran since =
      Benchlab({"regressions", "nightly", "--since", "other", "--coordinator", address});
  EXPECT_EQ(since.status, kExitUsage);
  EXPECT_EQ(since.err, Benchlab({"regressions", "nightly", "--since", "other", "--db", db_}).err);
  const Ran audit_since = Benchlab({"audit", "--since", "yesterday", "--coordinator", address});
  EXPECT_EQ(audit_since.status, kExitUsage);
  EXPECT_EQ(audit_since.err.rfind("benchlab audit: --since: expected a UTC date or time", 0), 0u)
      << audit_since.err;
  // Exactly one of --db and --coordinator.
  for (const char* command : {"history", "regressions", "audit"}) {
    std::vector<std::string> neither{command};
    if (command != std::string("audit")) neither.push_back("nightly");
    const Ran none = Benchlab(neither);
    EXPECT_EQ(none.status, kExitUsage) << command;
    EXPECT_EQ(none.err, "benchlab " + std::string(command) +
                            ": give exactly one of --db FILE and --coordinator HOST:PORT\n");
    std::vector<std::string> both = neither;
    both.insert(both.end(), {"--db", db_, "--coordinator", address});
    EXPECT_EQ(Benchlab(both).status, kExitUsage) << command;
  }
  (*daemon)->Shutdown();
}

// A database that exists but cannot be read is a failure too, and bad input is kExitUsage, from
// report and compare alike.
TEST_F(CommandsTest, ReportAndCompareShareEveryExitStatus) {
  const std::string garbage = (dir_ / "garbage.db").string();
  std::ofstream(garbage) << std::string(4096, 'x');
  struct Case {
    std::vector<std::string> report, compare;
    int status;
  };
  const Case cases[] = {
      {{"report", "nightly-1", "--db", db_},
       {"compare", "nightly-1", "nightly-2", "--db", db_},
       kExitOk},
      {{"report", "nightly-1", "--db", garbage},
       {"compare", "nightly-1", "nightly-2", "--db", garbage},
       kExitFailure},
      {{"report", "nope", "--db", db_}, {"compare", "nope", "nightly-2", "--db", db_}, kExitUsage},
      {{"report", "nightly-1", "--db", (dir_ / "missing.db").string()},
       {"compare", "nightly-1", "nightly-2", "--db", (dir_ / "missing.db").string()},
       kExitUsage},
      {{"report", "nightly-1", "--db", db_, "--format", "html"},
       {"compare", "nightly-1", "nightly-2", "--db", db_, "--format", "html"},
       kExitUsage},
      {{"report", "nightly-1", "--coordinator", "no-port"},
       {"compare", "nightly-1", "nightly-2", "--coordinator", "no-port"},
       kExitUsage},
  };
  for (const Case& c : cases) {
    const Ran report = Benchlab(c.report);
    const Ran compare = Benchlab(c.compare);
    EXPECT_EQ(report.status, c.status) << c.report.back() << ": " << report.err;
    EXPECT_EQ(compare.status, c.status) << c.compare.back() << ": " << compare.err;
  }
}

// A regression the check was asked about has a status of its own, apart from a failure (1) and
// bad input (2), with the reason on stderr (it was 1 before).
TEST_F(CommandsTest, ARegressionBeyondTheLimitHasItsOwnStatus) {
  // app / nginx falls from about 1.25 in nightly-3 to 1.15 in nightly-1: 8% worse.
  const Ran regressed =
      Benchlab({"compare", "nightly-3", "nightly-1", "--db", db_, "--fail-on-regression", "5"});
  EXPECT_EQ(regressed.status, kExitRegression) << regressed.err;
  EXPECT_EQ(kExitRegression, 3);
  EXPECT_NE(regressed.err.find("regression(s) worse than A by more than 5%"), std::string::npos)
      << regressed.err;
  EXPECT_EQ(
      Benchlab({"compare", "nightly-3", "nightly-1", "--db", db_, "--fail-on-regression", "20"})
          .status,
      kExitOk);
  EXPECT_EQ(Benchlab({"--help"}).status, kExitOk);
  EXPECT_EQ(Benchlab({"no-such-command"}).status, kExitUsage);
}

// submit --name, as run --name: the campaign under another name, checked before any call.
TEST_F(CommandsTest, SubmitTakesANameAsRunDoes) {
  const std::string file = (dir_ / "nightly.toml").string();
  std::ofstream(file) << kSpec;
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedPort());
  Ran ran = Benchlab({"submit", file, "--name", "Nightly 7", "--coordinator", closed});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(
      ran.err.find("benchlab submit: --name: expected a name of [a-z0-9-]+, got \"Nightly 7\""),
      std::string::npos)
      << ran.err;
  // A good name gets as far as the coordinator, which is not there.
  ran = Benchlab({"submit", file, "--name", "nightly-7", "--coordinator", closed});
  EXPECT_EQ(ran.status, kExitFailure) << ran.err;
  EXPECT_NE(ran.err.find("cannot reach the coordinator"), std::string::npos) << ran.err;
}

// A gRPC port in use: the coordinator says so in one line of its own, without gRPC's internal
// error chain before it (RouteGrpcLogging sends gRPC's lines to the debug log).
TEST_F(CommandsTest, APortInUseIsSaidOnceWithoutGrpcsOwnDump) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const Ran ran =
      Benchlab({"coordinator", "--listen", taken, "--db", (dir_ / "coordinator.db").string()});
  close(fd);
  EXPECT_EQ(ran.status, kExitFailure) << ran.err;
  EXPECT_NE(ran.err.find("benchlab coordinator: "), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find(taken), std::string::npos) << ran.err;
  for (const char* grpc_text : {"No address added", "chttp2", "UNKNOWN:", "created\":"}) {
    EXPECT_EQ(ran.err.find(grpc_text), std::string::npos) << grpc_text << " in: " << ran.err;
  }
}

// `check` finds, before anything starts, what would fail every window of a target, and `run`
// refuses to start with the same list; a campaign with nothing wrong is said to be so.
TEST_F(CommandsTest, CheckListsEveryProblemAndRunRefusesThem) {
  const std::string file = (dir_ / "nightly.toml").string();
  std::string spec = kSpec;
  spec.replace(spec.find("name = \"nginx\"\n"), 15,
               "name = \"nginx\"\ncommand = [\"benchlab-no-such-nginx\"]\ncpus = \"1000\"\n");
  spec.replace(spec.find("name = \"app\"\n"), 13,
               "name = \"app\"\ncommand = [\"{campaign_dir}/../build/bin/app\"]\n");
  std::ofstream(file) << spec;
  Ran ran = Benchlab({"check", file});
  EXPECT_EQ(ran.status, kExitUsage) << ran.err;
  EXPECT_EQ(ran.out, "");
  const std::string dir = dir_.string();
  for (const std::string& expected :
       {file + ": 3 problems:",
        file + ":9: target \"nginx\": command \"benchlab-no-such-nginx\" not found in PATH",
        file + ":9: target \"nginx\": cpus: CPU 1000 is not one this host offers",
        file + ":13: target \"app\": command \"" + dir + "/../build/bin/app\" is not an " +
            "executable file"}) {
    EXPECT_NE(ran.err.find(expected), std::string::npos) << expected << "\nin: " << ran.err;
  }
  const std::string db = (dir_ / "run.db").string();
  Ran refused = Benchlab({"run", file, "--db", db});
  EXPECT_EQ(refused.status, kExitUsage);
  EXPECT_EQ(refused.err, ran.err);
  EXPECT_FALSE(fs::exists(db)) << "nothing was started, nothing stored";

  spec = kSpec;
  spec.replace(spec.find("name = \"nginx\"\n"), 15, "name = \"nginx\"\ncommand = [\"sh\"]\n");
  spec.replace(spec.find("name = \"app\"\n"), 13, "name = \"app\"\ncommand = [\"true\"]\n");
  std::ofstream(file) << spec;
  ran = Benchlab({"check", file});
  EXPECT_EQ(ran.status, kExitOk) << ran.err;
  EXPECT_EQ(ran.out, file + ": no problems found: 6 windows on this machine's embedded lab " +
                         "(benchlab run)\n");
}

TEST(SubcommandWordTest, ASlipNamesTheSubcommandsItIsCloseTo) {
  Ran ran = Benchlab({"rnu", "examples/hello.toml"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("'rnu' is not a subcommand. Did you mean 'run'?"), std::string::npos)
      << ran.err;
  // After a top-level option and its value, too.
  ran = Benchlab({"--log-format", "json", "reprot"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("Did you mean 'report'?"), std::string::npos) << ran.err;
  // Nothing close: no guess, the way to the list.
  ran = Benchlab({"xyzzy"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_EQ(ran.err.find("Did you mean"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("'benchlab --help'"), std::string::npos) << ran.err;
}

TEST(SubcommandWordTest, HelpIsTheHelpFlag) {
  Ran ran = Benchlab({"help"});
  EXPECT_EQ(ran.status, kExitOk);
  EXPECT_NE(ran.out.find("remeasure"), std::string::npos) << ran.out;
  ran = Benchlab({"help", "compare"});
  EXPECT_EQ(ran.status, kExitOk);
  EXPECT_NE(ran.out.find("--fail-on-regression"), std::string::npos) << ran.out;
  ran = Benchlab({"help", "comprae"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("Did you mean 'compare'?"), std::string::npos) << ran.err;
}

TEST(EditDistanceTest, CountsSwapsAsOneEdit) {
  EXPECT_EQ(EditDistance("run", "run"), 0u);
  EXPECT_EQ(EditDistance("rnu", "run"), 1u);
  EXPECT_EQ(EditDistance("agnets", "agents"), 1u);
  EXPECT_EQ(EditDistance("", "run"), 3u);
  EXPECT_EQ(EditDistance("cancel", "compare"), 6u);
  const std::vector<std::string> names{"run", "rerun", "report", "remeasure", "regressions"};
  EXPECT_EQ(SimilarNames("rerum", names), (std::vector<std::string>{"rerun"}));
  EXPECT_EQ(SimilarNames("rem", names), (std::vector<std::string>{"remeasure"}));
  EXPECT_TRUE(SimilarNames("zz", names).empty());
}

// report --fail-on invalid judges the stored campaign as run does: 0 when every newest attempt
// is valid, 4 when one is invalid, 1 when the campaign is not done; the report is written first.
TEST_F(CommandsTest, ReportFailsOnAnInvalidNewestAttempt) {
  Ran ran = Benchlab({"report", "nightly-3", "--db", db_, "--fail-on", "invalid"});
  EXPECT_EQ(ran.status, kExitOk) << ran.err;
  EXPECT_NE(ran.out.find("nightly-3"), std::string::npos);
  {
    auto store = Store::Open(db_);
    ASSERT_TRUE(store.ok());
    auto campaign = (*store)->FindCampaign("nightly-3");
    ASSERT_TRUE(campaign.ok() && campaign->has_value());
    WindowRow w;
    w.campaign = "nightly-3";
    w.campaign_id = (*campaign)->id;
    w.target = "app";
    w.scenario = "hello";
    w.connections = 8;
    w.load_level = "c8";
    w.round = 2;
    w.attempt = 2;
    w.verdict = "invalid";
    w.reasons = "[\"foreign_cpu: server host 40% > 25%\"]";
    w.started_at = "2026-11-30T10:00:00Z";
    w.ended_at = "2026-11-30T10:00:01Z";
    w.server_agent = "server";
    w.load_agent = "load";
    ASSERT_TRUE((*store)->InsertWindow(w, {}).ok());
  }
  for (const char* format : {"md", "json", "csv"}) {
    ran =
        Benchlab({"report", "nightly-3", "--db", db_, "--format", format, "--fail-on", "invalid"});
    EXPECT_EQ(ran.status, kExitInvalid) << format << ": " << ran.err;
    EXPECT_FALSE(ran.out.empty()) << "the report is written all the same";
    EXPECT_NE(ran.err.find("benchlab report: --fail-on invalid: the gates refused 1 of 6 windows"),
              std::string::npos)
        << ran.err;
  }
  EXPECT_EQ(Benchlab({"report", "nightly-3", "--db", db_}).status, kExitOk) << "without the flag";
  {
    auto store = Store::Open(db_);
    ASSERT_TRUE(store.ok());
    auto campaign = (*store)->FindCampaign("nightly-2");
    ASSERT_TRUE(campaign.ok() && campaign->has_value());
    ASSERT_TRUE((*store)->SetCampaignState((*campaign)->id, CampaignState::kRunning).ok());
  }
  ran = Benchlab({"report", "nightly-2", "--db", db_, "--fail-on", "invalid"});
  EXPECT_EQ(ran.status, kExitFailure) << ran.err;
  EXPECT_NE(ran.err.find("the campaign is running, not done"), std::string::npos) << ran.err;
}

TEST(FailOnTest, InvalidIsAValueOfRunAndOfSubmitWithWait) {
  Ran ran = Benchlab({"submit", "campaign.toml", "--fail-on", "invalid"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("--wait"), std::string::npos) << ran.err;
  ran = Benchlab({"run", "campaign.toml", "--fail-on", "invalids"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("invalid"), std::string::npos) << ran.err;
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// `benchlab bisect` refuses, with exit 2 and what is wrong, what it cannot bisect before any lab
// starts: a change that is not a confirmed regression, one whose builds recorded no revision,
// an id the database lacks, and flags that contradict --change.
TEST_F(CommandsTest, BisectRefusesWhatItCannotBisect) {
  int64_t confirmed = 0, withdrawn = 0;
  {
    auto store = Store::Open(db_);
    ASSERT_TRUE(store.ok());
    auto first = (*store)->FindCampaign("nightly-1");
    auto last = (*store)->FindCampaign("nightly-3");
    ASSERT_TRUE(first.ok() && first->has_value() && last.ok() && last->has_value());
    ConfirmationRow row;
    row.series = "nightly";
    row.scenario = "hello";
    row.load_level = "c8";
    row.target = "app";
    row.figure = "rps";
    row.after_campaign_id = (*last)->id;
    row.old_campaign_id = (*first)->id;
    row.new_campaign_id = (*last)->id;
    row.campaign = "nightly-3-remeasure-1";
    row.status = "confirmed";
    auto id = (*store)->RecordConfirmation(row);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    confirmed = *id;
    row.figure = "cpu_us_per_request";
    row.status = "false alarm";
    id = (*store)->RecordConfirmation(row);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    withdrawn = *id;
  }
  Ran ran = Benchlab({"bisect", "--change", std::to_string(confirmed), "--db", db_});
  EXPECT_EQ(ran.status, kExitUsage) << ran.err;
  // The windows recorded no version, so no revision names the builds.
  EXPECT_NE(ran.err.find("recorded no version"), std::string::npos) << ran.err;
  ran = Benchlab({"bisect", "--change", std::to_string(withdrawn), "--db", db_});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("the change is false alarm, not confirmed"), std::string::npos) << ran.err;
  ran = Benchlab({"bisect", "--change", "999", "--db", db_});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("has no re-measured change of that id"), std::string::npos) << ran.err;
  ran = Benchlab({"bisect", "--change", std::to_string(confirmed), "--db", db_, "--target", "x"});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("--target: not with --change"), std::string::npos) << ran.err;
  ran = Benchlab({"bisect", "--status", "7", "--db", db_});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("has no bisection 7"), std::string::npos) << ran.err;
  ran = Benchlab({"bisect", "--target", "app", "--db", db_});
  EXPECT_EQ(ran.status, kExitUsage);
  EXPECT_NE(ran.err.find("CAMPAIGN is required"), std::string::npos) << ran.err;
}

}  // namespace
}  // namespace benchlab

#include "coordinator/campaign.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "common/config_toml.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The reference example of docs/campaign.md; the line numbers below refer to it.
constexpr char kGood[] = R"(name = "hello"
baseline = "nginx"
[matrix]
connections = [16, 64]
rounds = 3
order = "rotate"
warmup = "1s"
duration = "2s"
[load]
threads = 1
cpus = "1"
[gates]
error_rate_max = 0.01
[[target]]
name = "nginx"
command = ["nginx", "-p", "{run_dir}", "-c", "{run_dir}/nginx.conf", "-g", "daemon off;"]
templates = ["{campaign_dir}/nginx.conf.in"]
port = "auto"
ready = "/"
cpus = "0"
[[scenario]]
name = "hello"
method = "GET"
path = "/"
expect = { status = 200, body = "hello\n" }
[[negative]]
name = "missing"
method = "GET"
path = "/nope"
expect = { status = 404 }
)";

// The least a campaign can say; everything else takes its default.
constexpr char kMinimal[] = R"(name = "min"
baseline = "a"
[matrix]
connections = [1]
[[target]]
name = "a"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

// Replaces the one occurrence of `from` in `text`.
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no \"" << from << "\" in the campaign";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "\"" << from << "\" is not unique";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "campaign_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  Result<Campaign> Parse(const std::string& text) {
    return ParseCampaignText(text, "hello.toml", dir_);
  }

  // The error for a campaign text, written as hello.toml, with the directory cut off the front.
  std::string ErrorFor(const std::string& text) {
    std::string path = Write("hello.toml", text);
    auto campaign = ParseCampaignFile(path);
    if (campaign.ok()) return "(parsed without error)";
    EXPECT_EQ(campaign.status().code(), StatusCode::kInvalidArgument);
    const std::string& message = campaign.status().message();
    EXPECT_EQ(message.rfind(dir_ + "/", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    return message.substr(dir_.size() + 1);
  }

  std::string dir_;
};

TEST_F(CampaignTest, GoodFileParsesEveryField) {
  std::string path = Write("hello.toml", kGood);
  auto parsed = ParseCampaignFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Campaign& c = *parsed;
  EXPECT_EQ(c.name, "hello");
  EXPECT_EQ(c.baseline, "nginx");
  EXPECT_EQ(c.connections, (std::vector<int>{16, 64}));
  EXPECT_EQ(c.rounds, 3);
  EXPECT_EQ(c.order, Order::kRotate);
  EXPECT_EQ(c.warmup, seconds(1));
  EXPECT_EQ(c.duration, seconds(2));
  EXPECT_EQ(c.load_threads, 1);
  EXPECT_EQ(c.load_cpus, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(c.gates.error_rate.max, 0.01);
  EXPECT_EQ(c.source_name, path);
  EXPECT_EQ(fs::path(c.campaign_dir), fs::absolute(dir_).lexically_normal());
  EXPECT_EQ(c.text, kGood);

  ASSERT_EQ(c.targets.size(), 1u);
  const TargetDef& t = c.targets[0];
  EXPECT_EQ(t.name, "nginx");
  EXPECT_EQ(t.command, (std::vector<std::string>{"nginx", "-p", "{run_dir}", "-c",
                                                 "{run_dir}/nginx.conf", "-g", "daemon off;"}));
  EXPECT_EQ(t.templates, (std::vector<std::string>{"{campaign_dir}/nginx.conf.in"}));
  EXPECT_EQ(t.port, "auto");
  EXPECT_EQ(t.ready, "/");
  EXPECT_EQ(t.cpus, (std::vector<int>{0}));
  EXPECT_EQ(t.cwd, "");
  EXPECT_TRUE(t.env.empty());
  EXPECT_EQ(t.ready_timeout, milliseconds(10000));
  EXPECT_EQ(t.campaign_dir, c.campaign_dir);
  EXPECT_EQ(t.line, 14);

  ASSERT_EQ(c.scenarios.size(), 1u);
  const ScenarioDef& s = c.scenarios[0];
  EXPECT_EQ(s.name, "hello");
  EXPECT_EQ(s.method, "GET");
  EXPECT_EQ(s.path, "/");
  EXPECT_TRUE(s.headers.empty());
  EXPECT_EQ(s.body, "");
  EXPECT_EQ(s.expect.status, 200);
  EXPECT_EQ(s.expect.body, "hello\n");
  EXPECT_TRUE(s.expect.headers.empty());
  EXPECT_EQ(s.line, 21);

  ASSERT_EQ(c.negatives.size(), 1u);
  EXPECT_EQ(c.negatives[0].name, "missing");
  EXPECT_EQ(c.negatives[0].path, "/nope");
  EXPECT_EQ(c.negatives[0].expect.status, 404);
  EXPECT_FALSE(c.negatives[0].expect.body.has_value());
  EXPECT_EQ(c.negatives[0].line, 26);

  EXPECT_EQ(c.FindTarget("nginx"), &c.targets[0]);
  EXPECT_EQ(c.FindTarget("node"), nullptr);
  EXPECT_EQ(c.FindScenario("hello"), &c.scenarios[0]);
  EXPECT_EQ(c.FindScenario("missing"), nullptr);  // a negative, not a scenario
  EXPECT_TRUE(RequireCommands(c).ok());
}

TEST_F(CampaignTest, DefaultsApply) {
  auto parsed = ParseCampaignText(kMinimal, "min.toml", "/srv/lab");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Campaign& c = *parsed;
  EXPECT_EQ(c.rounds, 3);
  EXPECT_EQ(c.order, Order::kRotate);
  EXPECT_EQ(c.warmup, seconds(1));
  EXPECT_EQ(c.duration, seconds(2));
  EXPECT_EQ(c.load_threads, 1);
  EXPECT_TRUE(c.load_cpus.empty());
  EXPECT_DOUBLE_EQ(c.gates.error_rate.max, 0.01);
  EXPECT_EQ(c.campaign_dir, "/srv/lab");
  EXPECT_EQ(c.targets[0].port, "auto");
  EXPECT_EQ(c.targets[0].ready, "/");
  EXPECT_TRUE(c.targets[0].command.empty());
  EXPECT_TRUE(c.targets[0].cpus.empty());
  EXPECT_TRUE(c.targets[0].templates.empty());
  EXPECT_EQ(c.targets[0].ready_timeout, milliseconds(10000));
  EXPECT_EQ(c.scenarios[0].method, "GET");
  EXPECT_FALSE(c.scenarios[0].expect.body.has_value());
  EXPECT_TRUE(c.negatives.empty());
  EXPECT_EQ(c.connections, (std::vector<int>{1}));
  EXPECT_TRUE(c.rates.empty());
  EXPECT_EQ(c.open_connections, 16);
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.fresh_process, FreshProcess::kWindow);
  EXPECT_FALSE(c.noise.has_value());
  EXPECT_EQ(c.LoadLevels(), (std::vector<LoadLevel>{{1, 0}}));
}

TEST_F(CampaignTest, PlanKeysParse) {
  std::string text = Edit(kGood, "connections = [16, 64]\nrounds = 3\norder = \"rotate\"",
                          R"(connections = [16, 64]
rates = [1000, 2500.5, 20000]
open_connections = 32
rounds = 3
order = "shuffle"
seed = 4294967295
fresh_process = "cell")");
  text = Edit(text, "[[target]]", R"([noise]
target = "nginx"
scenario = "hello"
windows = 7
rate = 2500.5
[[target]])");
  auto parsed = ParseCampaignText(text, "h.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Campaign& c = *parsed;
  EXPECT_EQ(c.connections, (std::vector<int>{16, 64}));
  EXPECT_EQ(c.rates, (std::vector<double>{1000, 2500.5, 20000}));
  EXPECT_EQ(c.open_connections, 32);
  EXPECT_EQ(c.order, Order::kShuffle);
  EXPECT_EQ(c.seed, 4294967295u);
  EXPECT_EQ(c.fresh_process, FreshProcess::kCell);
  EXPECT_EQ(c.LoadLevels(),
            (std::vector<LoadLevel>{{16, 0}, {64, 0}, {32, 1000}, {32, 2500.5}, {32, 20000}}));
  ASSERT_TRUE(c.noise.has_value());
  EXPECT_EQ(c.noise->target, "nginx");
  EXPECT_EQ(c.noise->scenario, "hello");
  EXPECT_EQ(c.noise->windows, 7);
  EXPECT_EQ(c.noise->level, (LoadLevel{32, 2500.5}));
  EXPECT_EQ(c.noise->line, 18);

  // An integer rate matches a float one of the same value; a noise level may be closed loop.
  text = Edit(text, "rate = 2500.5", "rate = 20000");
  parsed = ParseCampaignText(text, "h.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->noise->level, (LoadLevel{32, 20000}));
  parsed = ParseCampaignText(Edit(text, "rate = 20000", "connections = 64"), "h.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->noise->level, (LoadLevel{64, 0}));

  for (const char* mode : {"window", "round"}) {
    parsed = ParseCampaignText(
        Edit(text, "fresh_process = \"cell\"", std::string("fresh_process = \"") + mode + "\""),
        "h.toml", "/");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->fresh_process,
              std::string(mode) == "window" ? FreshProcess::kWindow : FreshProcess::kRound);
  }
}

TEST_F(CampaignTest, RoundsAreANumberOrAnAdaptiveRange) {
  auto fixed = Parse(kGood);
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_FALSE(fixed->adaptive);
  EXPECT_EQ(fixed->rounds, 3);
  EXPECT_EQ(fixed->min_rounds, 3);

  auto adaptive = Parse(Edit(kGood, "rounds = 3", "rounds = { min = 3, max = 20 }"));
  ASSERT_TRUE(adaptive.ok()) << adaptive.status().ToString();
  EXPECT_TRUE(adaptive->adaptive);
  EXPECT_EQ(adaptive->min_rounds, 3);
  EXPECT_EQ(adaptive->rounds, 20);

  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = { min = 5, max = 4 }")),
            "hello.toml:5: matrix.rounds.max: expected max >= min, got 4");
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = { min = 1, max = 4 }")),
            "hello.toml:5: matrix.rounds.min: expected an integer from 2 to 1000, got 1");
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = { max = 4 }")),
            "hello.toml:5: matrix.rounds: missing min (rounds = { min = 3, max = 20 })");
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = { min = 3, max = 4, step = 1 }")),
            "hello.toml:5: matrix.rounds: unknown key \"step\" (known: min, max)");
}

TEST_F(CampaignTest, StatsTableParsesAndChecksItsKeys) {
  auto plain = Parse(kGood);
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->stats.confidence, 0.95);
  EXPECT_DOUBLE_EQ(plain->stats.margin, 0.02);
  EXPECT_FALSE(plain->stats.max_duration);
  EXPECT_EQ(plain->stats.decide_on, (std::vector<std::string>{"rps", "cpu_us_per_request"}));

  const std::string with_stats =
      Edit(Edit(kGood, "rounds = 3", "rounds = { min = 3, max = 20 }"), "[gates]",
           "[stats]\nconfidence = 0.9\nmargin = 0.05\nmax_duration = \"2h\"\ndecide_on = "
           "[\"p99_us\"]\n[gates]");
  auto c = Parse(with_stats);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->stats.confidence, 0.9);
  EXPECT_DOUBLE_EQ(c->stats.margin, 0.05);
  EXPECT_EQ(c->stats.max_duration, std::chrono::hours(2));
  EXPECT_EQ(c->stats.decide_on, std::vector<std::string>{"p99_us"});

  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[stats]\nconfidence = 1\n[gates]")),
            "hello.toml:13: stats.confidence: expected a number from 0.5 to 0.999, got 1");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[stats]\nmargin = \"2%\"\n[gates]")),
            "hello.toml:13: stats.margin: expected a fraction from 0 to 0.5, such as 0.02 for 2%, "
            "got \"2%\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[stats]\ndecide_on = [\"startup_ms\"]\n[gates]")),
            "hello.toml:13: stats.decide_on: expected a non-empty list of figures among rps, "
            "cpu_us_per_request, requests_per_cpu_s, p50_us, p99_us, got [\"startup_ms\"]");
  // A budget with a fixed plan would drop nothing: refused, naming what it needs.
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[stats]\nmax_duration = \"1h\"\n[gates]")),
            "hello.toml:13: stats.max_duration: needs an adaptive plan: [matrix] rounds = { min = "
            "3, max = 20 }");
}

TEST_F(CampaignTest, ProfileTableSwitchesProfilesOnAtItsFrequency) {
  auto plain = Parse(kGood);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->profile);
  EXPECT_EQ(plain->profile_hz, 99);

  auto on = Parse(Edit(kGood, "[gates]", "[profile]\nenabled = true\nfrequency = 499\n[gates]"));
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->profile);
  EXPECT_EQ(on->profile_hz, 499);
  auto defaulted = Parse(Edit(kGood, "[gates]", "[profile]\nenabled = true\n[gates]"));
  ASSERT_TRUE(defaulted.ok());
  EXPECT_TRUE(defaulted->profile);
  EXPECT_EQ(defaulted->profile_hz, 99);
  // Off, but the frequency is kept for `--profile`.
  auto off = Parse(Edit(kGood, "[gates]", "[profile]\nenabled = false\nfrequency = 250\n[gates]"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->profile);
  EXPECT_EQ(off->profile_hz, 250);

  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[profile]\nfrequency = 5000\n[gates]")),
            "hello.toml:13: profile.frequency: expected an integer from 1 to 1000 (samples per "
            "second), got 5000");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[profile]\nenabled = \"yes\"\n[gates]")),
            "hello.toml:13: profile.enabled: expected true or false, got \"yes\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[profile]\nhz = 99\n[gates]")),
            "hello.toml:13: profile.hz: unknown key (known: enabled, frequency, targets)");
}

TEST_F(CampaignTest, ProfileTargetsNarrowWhichTargetsAreProfiled) {
  auto all = Parse(Edit(kGood, "[gates]", "[profile]\nenabled = true\n[gates]"));
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Profiles("nginx"));
  EXPECT_TRUE(all->Profiles("any"));
  auto one =
      Parse(Edit(kGood, "[gates]", "[profile]\nenabled = true\ntargets = [\"nginx\"]\n[gates]"));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->profile_targets, std::vector<std::string>{"nginx"});
  EXPECT_TRUE(one->Profiles("nginx"));
  EXPECT_FALSE(one->Profiles("another"));
  // Listed, but profiles off: nothing is profiled.
  auto off = Parse(Edit(kGood, "[gates]", "[profile]\ntargets = [\"nginx\"]\n[gates]"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->Profiles("nginx"));

  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[profile]\ntargets = [\"apache\"]\n[gates]")),
            "hello.toml:13: profile.targets: expected the name of a [[target]] (nginx), got "
            "\"apache\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[gates]", "[profile]\ntargets = []\n[gates]")),
            "hello.toml:13: profile.targets: expected a list of [[target]] names, each once, "
            "such as [\"nginx\"], got []");
  EXPECT_EQ(
      ErrorFor(Edit(kGood, "[gates]", "[profile]\ntargets = [\"nginx\", \"nginx\"]\n[gates]")),
      "hello.toml:13: profile.targets: expected a list of [[target]] names, each once, such as "
      "[\"nginx\"], got \"nginx\"");
}

TEST_F(CampaignTest, NoiseDefaultsToTheFirstLevelAndFiveWindows) {
  const std::string noise = "[noise]\ntarget = \"nginx\"\nscenario = \"hello\"\n[[target]]";
  auto parsed = ParseCampaignText(Edit(kGood, "[[target]]", noise), "h.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->noise.has_value());
  EXPECT_EQ(parsed->noise->windows, 5);
  EXPECT_EQ(parsed->noise->level, (LoadLevel{16, 0}));

  // With rates only, the first level is the first rate, over open_connections.
  std::string open = Edit(kGood, "connections = [16, 64]", "rates = [750.5, 100]");
  parsed = ParseCampaignText(Edit(open, "[[target]]", noise), "h.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->connections.empty());
  EXPECT_EQ(parsed->rates, (std::vector<double>{750.5, 100}));
  EXPECT_EQ(parsed->noise->level, (LoadLevel{16, 750.5}));
}

// A campaign file with a mistake, built from kGood by replacing text, and its exact error.
struct BadFile {
  std::vector<std::pair<std::string, std::string>> edits;
  std::string error;
};

TEST_F(CampaignTest, BadPlanKeys) {
  const std::string noise = "[noise]\ntarget = \"nginx\"\nscenario = \"hello\"\n";
  const std::pair<std::string, std::string> add_noise = {"[[target]]", noise + "[[target]]"};
  const std::vector<BadFile> bad = {
      // Line numbers: [matrix] is line 3, connections line 4; [noise] lands at line 14.
      {{{"order = \"rotate\"", "order = \"rotate\"\nseed = 7"}},
       "hello.toml:7: matrix.seed: expected no seed unless order = \"shuffle\", got 7"},
      {{{"rounds = 3", "rounds = 3\nseed = 7"}, {"order = \"rotate\"", "order = \"fixed\""}},
       "hello.toml:6: matrix.seed: expected no seed unless order = \"shuffle\", got 7"},
      {{{"order = \"rotate\"", "order = \"shuffle\"\nseed = -1"}},
       "hello.toml:7: matrix.seed: expected an integer from 0 to 4294967295, got -1"},
      {{{"order = \"rotate\"", "order = \"shuffle\"\nseed = 4294967296"}},
       "hello.toml:7: matrix.seed: expected an integer from 0 to 4294967295, got 4294967296"},
      {{{"order = \"rotate\"", "order = \"shuffle\"\nseed = \"7\""}},
       "hello.toml:7: matrix.seed: expected an integer from 0 to 4294967295, got \"7\""},
      {{{"order = \"rotate\"", "order = \"Shuffle\""}},
       "hello.toml:6: matrix.order: expected \"rotate\", \"fixed\" or \"shuffle\", got "
       "\"Shuffle\""},
      {{{"connections = [16, 64]", "rates = \"fast\""}},
       "hello.toml:4: matrix.rates: expected a list of positive numbers, got \"fast\""},
      {{{"connections = [16, 64]", "connections = [16, 64]\nrates = []"}},
       "hello.toml:5: matrix.rates: expected a non-empty list of positive numbers, got []"},
      {{{"connections = [16, 64]", "rates = [1000, 0]"}},
       "hello.toml:4: matrix.rates[1]: expected a positive number of requests per second up to "
       "10000000, got 0"},
      {{{"connections = [16, 64]", "rates = [-5.5]"}},
       "hello.toml:4: matrix.rates[0]: expected a positive number of requests per second up to "
       "10000000, got -5.5"},
      {{{"connections = [16, 64]", "rates = [nan]"}},
       "hello.toml:4: matrix.rates[0]: expected a positive number of requests per second up to "
       "10000000, got nan"},
      {{{"connections = [16, 64]", "rates = [1e8]"}},
       "hello.toml:4: matrix.rates[0]: expected a positive number of requests per second up to "
       "10000000, got 1e8"},
      {{{"connections = [16, 64]", "rates = [\"1000\"]"}},
       "hello.toml:4: matrix.rates[0]: expected a positive number of requests per second up to "
       "10000000, got \"1000\""},
      {{{"connections = [16, 64]", "rates = [1000, 1000.0]"}},
       "hello.toml:4: matrix.rates[1]: expected a level not listed before, got 1000.0"},
      {{{"connections = [16, 64]\n", ""}},
       "hello.toml:3: matrix: missing key \"connections\" (a list such as [16, 64], or rates = "
       "[1000, 5000] for open loop)"},
      {{{"rounds = 3", "open_connections = 8"}},
       "hello.toml:5: matrix.open_connections: expected no open_connections without rates, got 8"},
      {{{"rounds = 3", "rates = [10]\nopen_connections = 0"}},
       "hello.toml:6: matrix.open_connections: expected a positive integer up to 100000, got 0"},
      {{{"rounds = 3", "fresh_process = \"process\""}},
       "hello.toml:5: matrix.fresh_process: expected \"window\", \"cell\" or \"round\", got "
       "\"process\""},
      {{{"rounds = 3", "fresh_process = true"}},
       "hello.toml:5: matrix.fresh_process: expected \"window\", \"cell\" or \"round\", got "
       "true"},
      {{{"[matrix]", "noise = 5\n[matrix]"}},
       "hello.toml:3: noise: expected a table ([noise]), got 5"},
      {{{"[[target]]", "[noise]\nscenario = \"hello\"\n[[target]]"}},
       "hello.toml:14: noise: missing key \"target\" (the name of a [[target]], such as "
       "\"nginx\")"},
      {{{"[[target]]", "[noise]\ntarget = \"nginx\"\n[[target]]"}},
       "hello.toml:14: noise: missing key \"scenario\" (the name of a [[scenario]], such as "
       "\"hello\")"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nlevel = 16\n["}},
       "hello.toml:17: noise.level: unknown key (known: target, scenario, windows, connections, "
       "rate)"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nwindows = 1\n["}},
       "hello.toml:17: noise.windows: expected an integer from 2 to 100, got 1"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nwindows = 101\n["}},
       "hello.toml:17: noise.windows: expected an integer from 2 to 100, got 101"},
      {{add_noise, {"target = \"nginx\"\nscenario", "target = \"Nginx\"\nscenario"}},
       "hello.toml:15: noise.target: expected a name of lowercase letters, digits and '-' (1 to "
       "64 characters), got \"Nginx\""},
      {{add_noise, {"target = \"nginx\"\nscenario", "target = \"apache\"\nscenario"}},
       "hello.toml:15: noise.target: expected the name of a [[target]] (nginx), got \"apache\""},
      // A negative is not measured, so it cannot be the noise cell.
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"missing\"\n["}},
       "hello.toml:16: noise.scenario: expected the name of a [[scenario]] (hello), got "
       "\"missing\""},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nconnections = 32\n["}},
       "hello.toml:17: noise.connections: expected one of matrix.connections (16, 64), got 32"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nconnections = 0\n["}},
       "hello.toml:17: noise.connections: expected a positive integer up to 100000, got 0"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nrate = 1000\n["}},
       "hello.toml:17: noise.rate: expected one of matrix.rates (none), got 1000"},
      {{add_noise,
        {"scenario = \"hello\"\n[", "scenario = \"hello\"\nrate = 2000\n["},
        {"connections = [16, 64]", "rates = [1000, 2500.5]"}},
       "hello.toml:17: noise.rate: expected one of matrix.rates (1000, 2500.5), got 2000"},
      {{add_noise,
        {"scenario = \"hello\"\n[", "scenario = \"hello\"\nconnections = 16\n["},
        {"connections = [16, 64]", "rates = [1000]"}},
       "hello.toml:17: noise.connections: expected one of matrix.connections (none), got 16"},
      {{add_noise, {"scenario = \"hello\"\n[", "scenario = \"hello\"\nrate = -1\n["}},
       "hello.toml:17: noise.rate: expected a positive number of requests per second up to "
       "10000000, got -1"},
      {{add_noise,
        {"scenario = \"hello\"\n[", "scenario = \"hello\"\nconnections = 16\nrate = 1000\n["}},
       "hello.toml:18: noise.rate: expected connections or rate, not both, got 1000"},
      // References are checked on an otherwise clean file only: the earlier mistake is reported.
      {{add_noise,
        {"target = \"nginx\"\nscenario", "target = \"apache\"\nscenario"},
        {"rounds = 3", "rounds = 0"}},
       "hello.toml:5: matrix.rounds: expected a positive integer up to 1000, or { min = 3, max = "
       "20 }, got 0"},
  };
  for (const BadFile& file : bad) {
    std::string text = kGood;
    for (const auto& [from, to] : file.edits) text = Edit(text, from, to);
    EXPECT_EQ(ErrorFor(text), file.error) << text;
  }
}

TEST_F(CampaignTest, OptionalTargetAndScenarioKeys) {
  std::string text = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
port = "8080"
cwd = "{campaign_dir}/app"
env = { NODE_ENV = "production", A_B = "1" }
ready_timeout = "1500us"
)");
  text = Edit(text, "expect = { status = 200 }", R"(method = "POST"
headers = { "x-b" = "1", "content-type" = "text/plain", "x-a" = "2" }
body = "ping"
order = "fixed")");
  // `order` went into the scenario above, where it is unknown; move it to [matrix].
  EXPECT_EQ(ParseCampaignText(text, "t.toml", "/").status().message(),
            "t.toml:17: scenario \"s\".order: unknown key (known: name, method, path, headers, "
            "body, expect)");
  text = Edit(text, "order = \"fixed\"",
              R"(expect = { status = 201, headers = { "x-z" = "z", "x-y" = "y" } })");
  text = Edit(text, "connections = [1]", "connections = [1]\norder = \"fixed\"");
  auto parsed = ParseCampaignText(text, "t.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const TargetDef& t = parsed->targets[0];
  EXPECT_EQ(parsed->order, Order::kFixed);
  EXPECT_EQ(t.port, "8080");
  EXPECT_EQ(t.cwd, "{campaign_dir}/app");
  EXPECT_EQ(t.env, (std::map<std::string, std::string>{{"A_B", "1"}, {"NODE_ENV", "production"}}));
  EXPECT_EQ(t.ready_timeout, milliseconds(2));  // rounded up, never down to zero
  const ScenarioDef& s = parsed->scenarios[0];
  EXPECT_EQ(s.method, "POST");
  EXPECT_EQ(s.body, "ping");
  // Headers keep the file's order, although TOML tables are unordered.
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(s.headers, (Headers{{"x-b", "1"}, {"content-type", "text/plain"}, {"x-a", "2"}}));
  EXPECT_EQ(s.expect.status, 201);
  EXPECT_EQ(s.expect.headers, (Headers{{"x-z", "z"}, {"x-y", "y"}}));
}

TEST_F(CampaignTest, PortAcceptsNumberAndNumericString) {
  for (const char* port : {"port = 8080", "port = \"8080\""}) {
    auto parsed = ParseCampaignText(Edit(kGood, "port = \"auto\"", port), "h.toml", "/");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->targets[0].port, "8080");
  }
}

TEST_F(CampaignTest, WrongTypes) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "connections = [16, 64]", "connections = \"ten\"")),
            "hello.toml:4: matrix.connections: expected a list of positive integers, got \"ten\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = 2.5")),
            "hello.toml:5: matrix.rounds: expected a positive integer up to 1000, or { min = 3, "
            "max = 20 }, got 2.5");
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = 99999999999999999999")),
            "hello.toml:5: matrix.rounds: expected a positive integer up to 1000, or { min = 3, "
            "max = 20 }, got 99999999999999999999");
  EXPECT_EQ(ErrorFor(Edit(kGood, "threads = 1", "threads = 0")),
            "hello.toml:10: load.threads: expected a positive integer up to 1024, got 0");
  EXPECT_EQ(ErrorFor(Edit(kGood, "order = \"rotate\"", "order = \"random\"")),
            "hello.toml:6: matrix.order: expected \"rotate\", \"fixed\" or \"shuffle\", got "
            "\"random\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[[target]]", "[target]")),
            "hello.toml:14: target: expected one or more [[target]] tables, got a table");
  std::string flat_gates = Edit(kGood, "[gates]\nerror_rate_max = 0.01\n", "");
  EXPECT_EQ(ErrorFor(Edit(flat_gates, "[matrix]", "gates = 1\n[matrix]")),
            "hello.toml:3: gates: expected a table ([gates]), got 1");
  EXPECT_EQ(
      ErrorFor(Edit(kGood, "method = \"GET\"\npath = \"/\"", "method = \"get\"\npath = \"/\"")),
      "hello.toml:23: scenario \"hello\".method: expected an HTTP method in capitals such as "
      "\"GET\", got \"get\"");
}

TEST_F(CampaignTest, MissingKeysCiteTheTableThatLacksThem) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "name = \"nginx\"\n", "")),
            "hello.toml:14: target[0]: missing key \"name\" (a name such as \"nginx\")");
  EXPECT_EQ(ErrorFor(Edit(kGood, "baseline = \"nginx\"\n", "")),
            "hello.toml:1: missing key \"baseline\" (the name of a [[target]], such as \"nginx\")");
  EXPECT_EQ(ErrorFor(Edit(kGood, "expect = { status = 200, body = \"hello\\n\" }",
                          "expect = { body = \"hello\\n\" }")),
            "hello.toml:25: scenario \"hello\".expect: missing key \"status\" "
            "(an HTTP status such as 200)");
  std::string no_scenario = kGood;
  no_scenario.resize(no_scenario.find("[[scenario]]"));
  EXPECT_EQ(ErrorFor(no_scenario),
            "hello.toml:1: missing key \"scenario\" (one or more [[scenario]] tables)");
}

TEST_F(CampaignTest, UnknownKeysAreErrorsEvenWhenTheyHideARequiredOne) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "connections = [16, 64]", "conections = [16, 64]")),
            "hello.toml:4: matrix.conections: unknown key (known: connections, rates, "
            "open_connections, rounds, order, seed, fresh_process, warmup, duration)");
  EXPECT_EQ(
      ErrorFor(Edit(kGood, "name = \"hello\"\nbaseline", "nmae = \"hello\"\nbaseline")),
      "hello.toml:1: nmae: unknown key (known: name, series, baseline, matrix, load, gates, "
      "noise, placement, host, profile, stats, target, scenario, negative, public_env, service, "
      "labels)");
  EXPECT_EQ(ErrorFor(Edit(kGood, "{ status = 404 }", "{ status = 404, bdy = \"\" }")),
            "hello.toml:30: negative \"missing\".expect.bdy: unknown key (known: status, body, "
            "headers)");
}

TEST_F(CampaignTest, ASeriesIsNamedOrIsTheCampaignsName) {
  auto own = ParseCampaignText(kGood, "hello.toml", "/");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->series, "hello");
  auto named = ParseCampaignText(Edit(kGood, "name = \"hello\"\nbaseline",
                                      "name = \"hello-42\"\nseries = \"hello\"\nbaseline"),
                                 "hello.toml", "/");
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->name, "hello-42");
  EXPECT_EQ(named->series, "hello");
  EXPECT_EQ(ErrorFor(Edit(kGood, "name = \"hello\"\nbaseline",
                          "name = \"hello\"\nseries = \"Nightly\"\nbaseline")),
            "hello.toml:2: series: expected a name of lowercase letters, digits and '-' (1 to 64 "
            "characters), got \"Nightly\"");
}

TEST_F(CampaignTest, NamesAndReferences) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "name = \"hello\"\nbaseline", "name = \"Hello World\"\nbaseline")),
            "hello.toml:1: name: expected a name of lowercase letters, digits and '-' (1 to 64 "
            "characters), got \"Hello World\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "baseline = \"nginx\"", "baseline = \"ngnix\"")),
            "hello.toml:2: baseline: expected the name of a [[target]] (nginx), got \"ngnix\"");
  EXPECT_EQ(ErrorFor(std::string(kGood) + "[[target]]\nname = \"nginx\"\n"),
            "hello.toml:32: target[1].name: expected a unique name, got \"nginx\" (already used "
            "at line 15)");
  EXPECT_EQ(ErrorFor(Edit(kGood, "name = \"missing\"", "name = \"hello\"")),
            "hello.toml:27: negative[0].name: expected a unique name, got \"hello\" (already used "
            "at line 22)");
}

TEST_F(CampaignTest, BadTargetFields) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "port = \"auto\"", "port = 70000")),
            "hello.toml:18: target \"nginx\".port: expected \"auto\" or a port number from 1 to "
            "65535, got 70000");
  EXPECT_EQ(ErrorFor(Edit(kGood, "port = \"auto\"", "port = \"http\"")),
            "hello.toml:18: target \"nginx\".port: expected \"auto\" or a port number from 1 to "
            "65535, got \"http\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"0\"", "cpus = \"0-\"")),
            "hello.toml:20: target \"nginx\".cpus: expected a CPU list such as \"0\", \"0-3\" or "
            "\"0,2-3\", got \"0-\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"1\"", "cpus = 1")),
            "hello.toml:11: load.cpus: expected a CPU list such as \"0\", \"0-3\" or \"0,2-3\", "
            "got 1");
  EXPECT_EQ(ErrorFor(Edit(kGood, "ready = \"/\"", "ready = \"health\"")),
            "hello.toml:19: target \"nginx\".ready: expected a path starting with '/', without "
            "spaces, got \"health\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "\"-p\", \"{run_dir}\"", "\"-p\", \"{rundir}\"")),
            "hello.toml:16: target \"nginx\".command[2]: expected only the placeholders {port}, "
            "{run_dir}, {campaign_dir}, {tls_cert}, {tls_key}, {tls_ca} and {out}, got "
            "\"{rundir}\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"0\"", "cpus = \"0\"\nenv = { PORT = \"80\" }")),
            "hello.toml:21: target \"nginx\".env.PORT: expected no PORT: the agent sets it to the "
            "target's port");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"0\"", "cpus = \"0\"\ncommand2 = []")),
            "hello.toml:21: target \"nginx\".command2: unknown key (known: name, command, port, "
            "ready, cpus, cwd, env, templates, ready_timeout, version, services, source, build, "
            "build_timeout, tls, commit, of)");
}

TEST_F(CampaignTest, TlsPlaceholdersNeedATlsTarget) {
  const std::string tls_command =
      "command = [\"srv\", \"--cert\", \"{tls_cert}\", \"--key\", \"{tls_key}\"]";
  const std::string cwd = "cwd = \"{tls_ca}\"";
  const std::string with_tls = Edit(kGood, "cpus = \"0\"", "cpus = \"0\"\ntls = true");
  auto parsed =
      ParseCampaignText(Edit(Edit(with_tls,
                                  "command = [\"nginx\", \"-p\", \"{run_dir}\", \"-c\", "
                                  "\"{run_dir}/nginx.conf\", \"-g\", \"daemon off;\"]",
                                  tls_command),
                             "templates = [\"{campaign_dir}/nginx.conf.in\"]",
                             "templates = [\"{campaign_dir}/nginx-tls.conf.in\"]\n" + cwd),
                        "hello.toml", "/c");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->targets.size(), 1u);
  EXPECT_TRUE(parsed->targets[0].tls);
  EXPECT_EQ(parsed->targets[0].command[2], "{tls_cert}");
  EXPECT_EQ(parsed->targets[0].cwd, "{tls_ca}");
  auto plain = ParseCampaignText(kGood, "hello.toml", "/c");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->targets[0].tls);

  // Without tls = true the files are not made: each place a placeholder stands is refused, at
  // its line.
  EXPECT_EQ(ErrorFor(Edit(kGood, "\"-c\", \"{run_dir}/nginx.conf\"", "\"-c\", \"{tls_key}\"")),
            "hello.toml:16: target \"nginx\".command[4]: {tls_key} is filled only for a target "
            "with tls = true");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"0\"", "cpus = \"0\"\ntls = false\n" + cwd)),
            "hello.toml:22: target \"nginx\".cwd: {tls_ca} is filled only for a target with "
            "tls = true");
  EXPECT_EQ(ErrorFor(Edit(kGood, "{campaign_dir}/nginx.conf.in", "{tls_cert}")),
            "hello.toml:17: target \"nginx\".templates[0]: {tls_cert} is filled only for a "
            "target with tls = true");
  EXPECT_EQ(ErrorFor(Edit(kGood, "cpus = \"0\"", "cpus = \"0\"\ntls = \"yes\"")),
            "hello.toml:21: target \"nginx\".tls: expected true (the target serves HTTPS) or "
            "false, got \"yes\"");
  // A version command runs before any run directory: never filled there.
  EXPECT_EQ(
      ErrorFor(Edit(with_tls, "cpus = \"0\"", "cpus = \"0\"\nversion = [\"v\", \"{tls_ca}\"]")),
      "hello.toml:21: target \"nginx\".version[1]: {tls_ca} is filled only in a "
      "[[target]]'s command, cwd and templates (with tls = true)");
}

TEST_F(CampaignTest, BadMatrixValues) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "connections = [16, 64]", "connections = []")),
            "hello.toml:4: matrix.connections: expected a non-empty list of positive integers, "
            "got []");
  EXPECT_EQ(ErrorFor(Edit(kGood, "connections = [16, 64]", "connections = [16,\n  0]")),
            "hello.toml:5: matrix.connections[1]: expected a positive integer up to 100000, got 0");
  EXPECT_EQ(ErrorFor(Edit(kGood, "connections = [16, 64]", "connections = [16, 16]")),
            "hello.toml:4: matrix.connections[1]: expected a level not listed before, got 16");
  EXPECT_EQ(ErrorFor(Edit(kGood, "warmup = \"1s\"", "warmup = \"1 second\"")),
            "hello.toml:7: matrix.warmup: expected a duration such as \"500ms\" or \"2s\", got "
            "\"1 second\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "warmup = \"1s\"", "warmup = 1")),
            "hello.toml:7: matrix.warmup: expected a duration such as \"500ms\" or \"2s\", got 1");
  EXPECT_EQ(ErrorFor(Edit(kGood, "duration = \"2s\"", "duration = \"0s\"")),
            "hello.toml:8: matrix.duration: expected a duration greater than zero such as \"2s\", "
            "got \"0s\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "error_rate_max = 0.01", "error_rate_max = -0.1")),
            "hello.toml:13: gates.error_rate_max: expected a fraction from 0 to 1 such as 0.01, "
            "got -0.1");
  EXPECT_EQ(ErrorFor(Edit(kGood, "error_rate_max = 0.01", "error_rate_max = nan")),
            "hello.toml:13: gates.error_rate_max: expected a fraction from 0 to 1 such as 0.01, "
            "got nan");
}

TEST_F(CampaignTest, HostRequirements) {
  auto c = ParseCampaignText(
      kGood + std::string("[host]\nrequire = [\"governor=performance\", \"smt_siblings_idle\", "
                          "\"aslr=0\", \"aslr=0\"]\n"),
      "hello.toml", "/tmp");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host_require,
            (std::vector<std::string>{"governor=performance", "smt_siblings_idle", "aslr=0"}));
  auto none = ParseCampaignText(kGood, "hello.toml", "/tmp");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->host_require.empty());
  const std::string unknown =
      ErrorFor(kGood + std::string("[host]\nrequire = [\"aslr=0\", \"governer=performance\"]\n"));
  EXPECT_EQ(unknown.rfind("hello.toml:32: host.require[1]: unknown host requirement "
                          "\"governer=performance\": expected NAME=VALUE or a bare NAME, with "
                          "NAME one of governor, min_freq, ",
                          0),
            0u)
      << unknown;
  EXPECT_NE(unknown.find("smt_siblings_idle"), std::string::npos) << unknown;
  EXPECT_EQ(ErrorFor(kGood + std::string("[host]\nrequire = \"aslr=0\"\n")),
            "hello.toml:32: host.require: expected a list of host requirements such as "
            "\"governor=performance\", got \"aslr=0\"");
  EXPECT_EQ(ErrorFor(kGood + std::string("[host]\nrequires = []\n")),
            "hello.toml:32: host.requires: unknown key (known: require)");
}

TEST_F(CampaignTest, LoadAndPlacementKeys) {
  auto c = ParseCampaignText(kGood + std::string(R"(
[placement]
server = "srv1"
load = ["label:rack-1", "l2"]
)"),
                             "hello.toml", "/tmp");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->placement_server, std::vector<std::string>{"srv1"});
  EXPECT_EQ(c->placement_load, (std::vector<std::string>{"label:rack-1", "l2"}));
  EXPECT_EQ(c->load_depth, 1);
  EXPECT_FALSE(c->load_poisson);
  EXPECT_EQ(ErrorFor(kGood + std::string("[placement]\nserver = []\n")),
            "hello.toml:32: placement.server: expected a list of agent names or \"label:NAME\" "
            "selectors, got []");
  EXPECT_EQ(ErrorFor(kGood + std::string("[placement]\nload = [\"label:\"]\n")),
            "hello.toml:32: placement.load: expected a list of agent names or \"label:NAME\" "
            "selectors, got [\"label:\"]");
  EXPECT_EQ(ErrorFor(kGood + std::string("[placement]\nrack = 1\n")),
            "hello.toml:32: placement.rack: unknown key (known: server, load, pairs)");
  auto fleet = ParseCampaignText(
      kGood + std::string("[placement]\npairs = [[\"s1\", \"l1\"], [\"s2\", \"l2\"]]\n"),
      "hello.toml", "/tmp");
  ASSERT_TRUE(fleet.ok()) << fleet.status().ToString();
  EXPECT_TRUE(fleet->Fleet());
  ASSERT_EQ(fleet->placement_pairs.size(), 2u);
  EXPECT_EQ(fleet->placement_pairs[1].second, "l2");
  EXPECT_EQ(ErrorFor(kGood + std::string("[placement]\npairs = [[\"s1\", \"l1\"], "
                                         "[\"s2\", \"s1\"]]\n")),
            "hello.toml:32: placement.pairs: expected pairs that share no agent, got [[\"s1\", "
            "\"l1\"], [\"s2\", \"s1\"]]");
  EXPECT_EQ(ErrorFor(kGood + std::string("[placement]\npairs = \"some\"\n")),
            "hello.toml:32: placement.pairs: expected \"all\" or a list of [server, load] agent "
            "name pairs, got \"some\"");
}

TEST_F(CampaignTest, LoadEngine) {
  auto plain = ParseCampaignText(kGood, "hello.toml", "/tmp");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->load_engine, "auto");
  for (const char* engine : {"io_uring", "epoll", "auto"}) {
    auto c = ParseCampaignText(
        Edit(kGood, "threads = 1", "threads = 1\nengine = \"" + std::string(engine) + "\""),
        "hello.toml", "/tmp");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->load_engine, engine);
  }
  const std::string error = ErrorFor(Edit(kGood, "threads = 1", "threads = 1\nengine = \"uring\""));
  EXPECT_NE(error.find("load.engine: expected \"auto\", \"io_uring\" or \"epoll\", got "
                       "\"uring\""),
            std::string::npos)
      << error;
}

TEST_F(CampaignTest, LoadTlsAndRequestsPerConnection) {
  auto plain = ParseCampaignText(kGood, "hello.toml", "/tmp");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->load_tls.has_value());
  EXPECT_EQ(plain->load_requests_per_connection, 0u);
  auto c = ParseCampaignText(
      Edit(kGood, "threads = 1",
           "threads = 1\nrequests_per_connection = 10\ntls = { resumption = 0.25, version = "
           "\"1.2\", alpn = [], verify = false, server_name = \"localhost\" }"),
      "hello.toml", "/tmp");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->load_tls.has_value());
  EXPECT_EQ(c->load_tls->resumption, 0.25);
  EXPECT_EQ(c->load_tls->version, "1.2");
  EXPECT_TRUE(c->load_tls->alpn.empty());
  EXPECT_FALSE(c->load_tls->verify);
  EXPECT_EQ(c->load_tls->server_name, "localhost");
  EXPECT_EQ(c->load_requests_per_connection, 10u);

  struct Bad {
    const char* tls;
    const char* error;
  } bad[] = {
      {"tls = { resumption = 1.5 }",
       "load.tls.resumption: expected a share from 0.0 to 1.0, got 1.5"},
      {"tls = { version = \"1.1\" }", "load.tls.version: expected \"1.3\" or \"1.2\", got \"1.1\""},
      {"tls = { alpn = [\"h2\"] }",
       "load.tls.alpn: expected a list of protocol names holding "
       "\"http/1.1\", or [], got [\"h2\"]"},
      {"tls = { verify = \"yes\" }", "load.tls.verify: expected true or false, got \"yes\""},
      {"tls = { ciphers = \"x\" }", "load.tls.ciphers"},
      {"tls = true", "load.tls: expected a table such as { resumption = 1.0, version = \"1.3\" }"},
      {"tls = {}\ntool = [\"benchlab\", \"wrk\"]", "load.tls: only tool \"benchlab\" drives"},
      {"requests_per_connection = -1",
       "load.requests_per_connection: expected 0 (keep "
       "connections) or a number of requests, got -1"},
  };
  for (const Bad& b : bad) {
    const std::string error =
        ErrorFor(Edit(kGood, "threads = 1", "threads = 1\n" + std::string(b.tls)));
    EXPECT_NE(error.find("hello.toml:"), std::string::npos) << error;
    EXPECT_NE(error.find(b.error), std::string::npos) << b.tls << "\n" << error;
  }
}

TEST_F(CampaignTest, LoadTools) {
  auto one = ParseCampaignText(Edit(kGood, "threads = 1", "threads = 1\ntool = \"wrk\""),
                               "hello.toml", "/tmp");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->load_tools, std::vector<std::string>{"wrk"});
  ASSERT_EQ(one->LoadLevels().size(), 2u);
  EXPECT_EQ(LoadLevelLabel(one->LoadLevels()[0]), "c16@wrk");

  auto both = ParseCampaignText(
      Edit(kGood, "threads = 1", "threads = 1\ntool = [\"benchlab\", \"h2load\"]"), "hello.toml",
      "/tmp");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  std::vector<std::string> labels;
  for (const LoadLevel& l : both->LoadLevels()) labels.push_back(LoadLevelLabel(l));
  // Each level with every tool, back to back.
  EXPECT_EQ(labels, (std::vector<std::string>{"c16", "c16@h2load", "c64", "c64@h2load"}));
  // Without the key: benchlab alone, labels as before.
  auto plain = ParseCampaignText(kGood, "hello.toml", "/tmp");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->load_tools, std::vector<std::string>{"benchlab"});
  EXPECT_EQ(LoadLevelLabel(plain->LoadLevels()[1]), "c64");

  const std::string form =
      "expected \"benchlab\", \"wrk\" or \"h2load\", or a list of them without repeats";
  EXPECT_EQ(ErrorFor(Edit(kGood, "threads = 1", "threads = 1\ntool = \"ab\"")),
            "hello.toml:11: load.tool: " + form + ", got \"ab\"");
  EXPECT_EQ(ErrorFor(Edit(kGood, "threads = 1", "threads = 1\ntool = [\"wrk\", \"wrk\"]")),
            "hello.toml:11: load.tool: " + form + ", got [\"wrk\", \"wrk\"]");
  EXPECT_EQ(ErrorFor(Edit(kGood, "threads = 1", "threads = 1\ntool = []")),
            "hello.toml:11: load.tool: " + form + ", got []");
  EXPECT_EQ(ErrorFor(Edit(Edit(kGood, "threads = 1", "threads = 1\ntool = \"wrk\""),
                          "connections = [16, 64]", "rates = [1000]")),
            "hello.toml:11: load.tool: expected a tool that runs open-loop levels (benchlab), got "
            "\"wrk\" with [matrix] rates: wrk measures closed loop only");
}

TEST_F(CampaignTest, BadRequests) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "{ status = 404 }", "{ status = 99 }")),
            "hello.toml:30: negative \"missing\".expect.status: expected an HTTP status from 100 "
            "to 599, got 99");
  EXPECT_EQ(ErrorFor(Edit(kGood, "path = \"/nope\"", "path = \"nope\"")),
            "hello.toml:29: negative \"missing\".path: expected a path starting with '/', without "
            "spaces, got \"nope\"");
  EXPECT_EQ(
      ErrorFor(Edit(kGood, "path = \"/\"\n", "path = \"/\"\nheaders = { \"x y\" = \"1\" }\n")),
      "hello.toml:25: scenario \"hello\".headers: expected header names that are HTTP "
      "tokens, got \"x y\"");
  EXPECT_EQ(
      ErrorFor(Edit(kGood, "path = \"/\"\n", "path = \"/\"\nheaders = { x = \"a\\r\\nb: c\" }\n")),
      "hello.toml:25: scenario \"hello\".headers.x: expected a string without line breaks, "
      "got \"a\\r\\nb: c\"");
}

TEST_F(CampaignTest, SyntaxErrorsNameTheirLine) {
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = ")),
            "hello.toml:5: syntax error: missing value after key-value separator '=' (expected "
            "value, but got nothing)");
  // A key defined twice is reported at its second definition.
  EXPECT_EQ(ErrorFor(Edit(kGood, "rounds = 3", "rounds = 3\nrounds = 4")),
            "hello.toml:6: syntax error: value (\"rounds\") already exists (value defined twice)");
  EXPECT_EQ(ErrorFor(Edit(kGood, "[load]", "[load")),
            "hello.toml:9: syntax error: an invalid key appeared (is not a valid key)");
}

TEST_F(CampaignTest, UnreadableFile) {
  auto missing = ParseCampaignFile(dir_ + "/none.toml");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "campaign file " + dir_ + "/none.toml: no such file");
  auto directory = ParseCampaignFile(dir_);
  EXPECT_EQ(directory.status().code(), StatusCode::kIoError);
  EXPECT_EQ(directory.status().message(), "campaign file " + dir_ + ": is a directory");
}

// A campaign file may be as large as any TOML file benchlab reads, kMaxTomlBytes (4 MiB), as
// docs/security.md says; it was refused over 1 MiB.
TEST_F(CampaignTest, ATextUpToTheTomlLimitIsReadAndOneOverItIsRefused) {
  std::string comment = "#" + std::string(1000, 'x') + "\n";
  std::string text = std::string(kGood);
  while (text.size() < (2u << 20)) text += comment;
  auto two_mib = ParseCampaignText(text, "big.toml", "/");
  ASSERT_TRUE(two_mib.ok()) << two_mib.status().message();
  EXPECT_EQ(two_mib->text.size(), text.size());
  while (text.size() <= config::kMaxTomlBytes) text += comment;
  EXPECT_EQ(ParseCampaignText(text, "big.toml", "/").status().message(),
            "big.toml: " + std::to_string(text.size()) +
                " bytes, over the limit of 4194304 for a campaign or configuration");
}

// An error that lists the file's targets names the first ones and counts the rest.
TEST_F(CampaignTest, AnErrorListingThousandsOfTargetsNamesTheFirstAndCountsTheRest) {
  std::string text = Edit(kMinimal, "baseline = \"a\"", "baseline = \"nope\"");
  for (int i = 0; i < 5000; ++i) {
    text += "[[target]]\nname = \"t" + std::to_string(i) + "\"\ncommand = [\"x\"]\n";
  }
  const std::string message = ParseCampaignText(text, "many.toml", "/").status().message();
  EXPECT_NE(message.find("expected the name of a [[target]] (a, t0, t1, "), std::string::npos)
      << message.substr(0, 300);
  EXPECT_NE(message.find(", t18 and 4,981 more), got \"nope\""), std::string::npos)
      << message.substr(0, 300);
  EXPECT_LT(message.size(), 400u);
}

TEST_F(CampaignTest, RequireCommandsNamesTheTarget) {
  auto parsed = ParseCampaignText(kMinimal, "min.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Status st = RequireCommands(*parsed);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "min.toml:5: target \"a\".command: expected a list of strings (argv, no shell), got "
            "nothing");
  EXPECT_EQ(ErrorFor(Edit(kGood,
                          "command = [\"nginx\", \"-p\", \"{run_dir}\", \"-c\", "
                          "\"{run_dir}/nginx.conf\", \"-g\", \"daemon off;\"]",
                          "command = []")),
            "hello.toml:16: target \"nginx\".command: expected a non-empty list of strings (argv, "
            "no shell), got []");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// --- env values kept as hashes ----------------------------------------------------------------

constexpr char kSecrets[] = R"(name = "secret"
baseline = "a"
public_env = ["NODE_ENV"]
[matrix]
connections = [1]
[[target]]
name = "a"
env = { API_TOKEN = "s3cr3t-value", NODE_ENV = "production" }  # inline
[[target]]
name = "b"
[target.env]
DB_PASSWORD = 'lit"eral'
MULTI = """
two
lines"""
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

TEST_F(CampaignTest, LabelsGiveATargetsVersion) {
  auto plain = Parse(kGood);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->labels.empty());
  auto labelled = Parse(std::string(kGood) + "[labels]\nnginx = \"1.22.1 (3f2a9c1)\"\n");
  ASSERT_TRUE(labelled.ok()) << labelled.status().ToString();
  EXPECT_EQ(labelled->labels, (std::map<std::string, std::string>{{"nginx", "1.22.1 (3f2a9c1)"}}));
  const std::string longest(kMaxLabelBytes, 'f');
  auto longest_ok = Parse(std::string(kGood) + "[labels]\nnginx = \"" + longest + "\"\n");
  ASSERT_TRUE(longest_ok.ok()) << longest_ok.status().ToString();
  EXPECT_EQ(longest_ok->labels.at("nginx"), longest);
  // An inline table is a table too.
  auto inline_table = Parse(Edit(kGood, "[matrix]", "labels = { nginx = \"v2\" }\n[matrix]"));
  ASSERT_TRUE(inline_table.ok()) << inline_table.status().ToString();
  EXPECT_EQ(inline_table->labels.at("nginx"), "v2");
}

TEST_F(CampaignTest, LabelsOfUnknownTargetsAndBadValuesAreRefused) {
  const std::string good(kGood);  // 30 lines: [labels] is line 31, its first key line 32
  const std::string form =
      ": expected a version string or a git commit of 1 to 256 printable characters, got ";
  EXPECT_EQ(ErrorFor(good + "[labels]\nngnix = \"1.22.1\"\n"),
            "hello.toml:32: labels.ngnix: expected the name of a [[target]] (nginx), got "
            "\"ngnix\"");
  EXPECT_EQ(ErrorFor(good + "[labels]\nnginx = \"\"\n"),
            "hello.toml:32: labels.nginx" + form + "\"\"");
  EXPECT_EQ(ErrorFor(good + "[labels]\nnginx = 5\n"), "hello.toml:32: labels.nginx" + form + "5");
  EXPECT_EQ(ErrorFor(good + "[labels]\nnginx = \"v1\\tx\"\n"),
            "hello.toml:32: labels.nginx" + form + "\"v1\\tx\"");
  EXPECT_EQ(ErrorFor(good + "[labels]\nnginx = \"v1\xc3\xa9\"\n"),
            "hello.toml:32: labels.nginx" + form + "\"v1\xc3\xa9\"");
  EXPECT_EQ(ErrorFor(good + "[labels]\nnginx = [\"v1\"]\n"),
            "hello.toml:32: labels.nginx" + form + "[\"v1\"]");
  const std::string too_long =
      ErrorFor(good + "[labels]\nnginx = \"" + std::string(kMaxLabelBytes + 1, 'f') + "\"\n");
  EXPECT_EQ(too_long.rfind("hello.toml:32: labels.nginx" + form + "\"fff", 0), 0u) << too_long;
  EXPECT_EQ(ErrorFor(Edit(kGood, "[matrix]", "labels = \"v1\"\n[matrix]")),
            "hello.toml:3: labels: expected a table ([labels]), got \"v1\"");
}

// Two targets, a and b, and no labels.
constexpr char kTwoTargets[] = R"(name = "two"
baseline = "a"
[matrix]
connections = [1]
[[target]]
name = "a"
[[target]]
name = "b"
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

Result<std::string> AddLabels(const std::string& text,
                              const std::map<std::string, std::string>& labels) {
  auto campaign = ParseCampaignText(text, "two.toml", "/");
  if (!campaign.ok()) return campaign.status();
  return AddCampaignLabels(*campaign, text, labels);
}

TEST(AddCampaignLabelsTest, ATextWithoutLabelsGetsATableAtItsEnd) {
  auto added = AddLabels(kTwoTargets, {{"b", "3f2a9c1"}, {"a", "v1.4.2 \"rc\""}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added,
            std::string(kTwoTargets) + "\n[labels]\na = \"v1.4.2 \\\"rc\\\"\"\nb = \"3f2a9c1\"\n");
  auto parsed = ParseCampaignText(*added, "two.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->labels,
            (std::map<std::string, std::string>{{"a", "v1.4.2 \"rc\""}, {"b", "3f2a9c1"}}));
  EXPECT_EQ(parsed->scenarios[0].line, 9) << "the file's lines stay where they were";
  // No trailing newline; no labels at all: the text as it was.
  const std::string unterminated = std::string(kTwoTargets).substr(0, sizeof kTwoTargets - 2);
  auto joined = AddLabels(unterminated, {{"a", "v1"}});
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(*joined, unterminated + "\n\n[labels]\na = \"v1\"\n");
  auto none = AddLabels(kTwoTargets, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, kTwoTargets);
}

TEST(AddCampaignLabelsTest, AFilesLabelsTableGetsTheNewOnesAfterItsHeader) {
  const std::string text =
      std::string(kTwoTargets) + "[ labels ]  # what was measured\na = \"v1\"\n";
  auto added = AddLabels(text, {{"b", "v2"}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added,
            std::string(kTwoTargets) + "[ labels ]  # what was measured\nb = \"v2\"\na = \"v1\"\n");
  // The header as the text's last line.
  auto last = AddLabels(std::string(kTwoTargets) + "[labels]", {{"b", "v2"}});
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, std::string(kTwoTargets) + "[labels]\nb = \"v2\"\n");
}

TEST(AddCampaignLabelsTest, BadLabelsAreRefusedNamingThem) {
  const std::string labelled = std::string(kTwoTargets) + "[labels]\na = \"v1\"\n";
  auto twice = AddLabels(labelled, {{"a", "v2"}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "\"a=v2\": two.toml labels a already (\"v1\"); give a target's label in one place");
  auto unknown = AddLabels(kTwoTargets, {{"c", "v1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "\"c=v1\": expected the name of a [[target]] (a, b) before '=', got \"c\"");
  for (const std::string& value : {std::string(), std::string("v1\n"), std::string(257, 'f')}) {
    auto bad = AddLabels(kTwoTargets, {{"a", value}});
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_NE(bad.status().message().find(
                  ": expected a version string or a git commit of 1 to 256 printable "
                  "characters after '=', got "),
              std::string::npos)
        << bad.status().message();
  }
  // Labels in another form than a [labels] table cannot be added to.
  auto inline_table =
      AddLabels(Edit(kTwoTargets, "[matrix]", "labels = { a = \"v1\" }\n[matrix]"), {{"b", "v2"}});
  ASSERT_FALSE(inline_table.ok());
  EXPECT_EQ(inline_table.status().message(),
            "two.toml: labels must be a [labels] table for labels to be added to it (write "
            "`[labels]` and a line per target)");
}

TEST(AddCampaignLabelsTest, StoredTextsGiveTheirLabels) {
  EXPECT_EQ(CampaignTextLabels(std::string(kTwoTargets) + "[labels]\nb = \"v2\"\n"),
            (std::map<std::string, std::string>{{"b", "v2"}}));
  EXPECT_TRUE(CampaignTextLabels(kTwoTargets).empty());
  EXPECT_TRUE(CampaignTextLabels("not = [a campaign").empty());
}

TEST(RedactCampaignTest, SecretValuesBecomeHashesAndEverythingElseStays) {
  auto redacted = RedactCampaignText(kSecrets, "secret.toml");
  ASSERT_TRUE(redacted.ok()) << redacted.status().ToString();
  for (const char* secret : {"s3cr3t-value", "lit\"eral", "two\nlines"}) {
    EXPECT_EQ(redacted->find(secret), std::string::npos) << secret << " in\n" << *redacted;
  }
  EXPECT_EQ(RedactedEnvValue("s3cr3t-value").size(), 19u);  // "sha256:" + 12 hex digits
  EXPECT_NE(redacted->find("env = { API_TOKEN = \"" + RedactedEnvValue("s3cr3t-value") +
                           "\", NODE_ENV = \"production\" }  # inline\n"),
            std::string::npos)
      << *redacted;
  EXPECT_NE(redacted->find("DB_PASSWORD = \"" + RedactedEnvValue("lit\"eral") + "\"\n"),
            std::string::npos);
  EXPECT_NE(redacted->find("MULTI = \"\"\"" + RedactedEnvValue("two\nlines") + "\\\n\n\"\"\"\n"),
            std::string::npos)
      << "its line breaks stay, outside the string: " << *redacted;

  auto campaign = ParseCampaignText(*redacted, "secret.toml", "/");
  ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
  EXPECT_EQ(campaign->targets[0].env.at("NODE_ENV"), "production") << "listed in public_env";
  EXPECT_TRUE(IsRedactedEnvValue(campaign->targets[0].env.at("API_TOKEN")));
  EXPECT_TRUE(HasRedactedEnv(*campaign));
  EXPECT_EQ(campaign->targets[1].line, 9) << "lines stay where they were";
  EXPECT_EQ(campaign->scenarios[0].line, 16);
  EXPECT_EQ(campaign->targets[1].env.at("MULTI"), RedactedEnvValue("two\nlines"));

  auto twice = RedactCampaignText(*redacted, "secret.toml");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(*twice, *redacted) << "a redacted value is kept as it is";
}

TEST(RedactCampaignTest, ACampaignWithoutSecretsIsUnchanged) {
  auto redacted = RedactCampaignText(kMinimal, "min.toml");
  ASSERT_TRUE(redacted.ok());
  EXPECT_EQ(*redacted, kMinimal);
  auto campaign = ParseCampaignText(kMinimal, "min.toml", "/");
  ASSERT_TRUE(campaign.ok());
  EXPECT_FALSE(HasRedactedEnv(*campaign));
}

TEST(RedactCampaignTest, PublicEnvIsAListOfVariableNames) {
  auto bad = ParseCampaignText(Edit(kMinimal, "[matrix]", "public_env = [\"1X\"]\n[matrix]"),
                               "min.toml", "/");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "min.toml:3: public_env: expected a list of variable names such as [\"NODE_ENV\"], "
            "got \"1X\"");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// The embedded lab's targets are its server agent's catalogue, so a campaign's [[target]] takes
// a build recipe as an agent's does.
TEST(CampaignBuildRecipeTest, TargetsTakeABuildRecipe) {
  const std::string text = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
source = "/src/app"
build = [["make", "-C", "{src}", "PREFIX={out}"]]
build_timeout = "2m"
)");
  auto parsed = ParseCampaignText(text, "t.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const BuildRecipe& r = parsed->targets[0].recipe;
  EXPECT_EQ(r.source, "/src/app");
  EXPECT_EQ(r.build,
            (std::vector<std::vector<std::string>>{{"make", "-C", "{src}", "PREFIX={out}"}}));
  EXPECT_EQ(r.time_limit, std::chrono::minutes(2));

  const std::string typo = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
source = "/src/app"
build = [["make", "{run_dir}"]]
)");
  EXPECT_EQ(ParseCampaignText(typo, "t.toml", "/").status().message(),
            "t.toml:8: target \"a\".build[0][1]: expected only the placeholders {src} and {out}, "
            "got \"{run_dir}\"");
}

// {out}, the build's output directory, is filled only for a target with a build recipe.
TEST(CampaignBuildRecipeTest, OutIsAPlaceholderOnlyWithABuildRecipe) {
  const std::string with_recipe = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
command = ["{out}/app", "--port", "{port}"]
cwd = "{out}"
env = { DATA = "{out}/data" }
source = "/src/app"
build = [["make", "-C", "{src}", "PREFIX={out}"]]
)");
  auto parsed = ParseCampaignText(with_recipe, "t.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->targets[0].command[0], "{out}/app");
  EXPECT_EQ(parsed->targets[0].env.at("DATA"), "{out}/data");

  const std::string why =
      "{out} is filled only for a target with a build recipe (source and build): the output "
      "directory of the commit the agent built";
  EXPECT_EQ(ParseCampaignText(Edit(kMinimal, "name = \"a\"\n",
                                   "name = \"a\"\ncommand = [\"app\", \"{out}/x\"]\n"),
                              "t.toml", "/")
                .status()
                .message(),
            "t.toml:7: target \"a\".command[1]: " + why);
  EXPECT_EQ(ParseCampaignText(
                Edit(kMinimal, "name = \"a\"\n", "name = \"a\"\nenv = { DATA = \"{out}\" }\n"),
                "t.toml", "/")
                .status()
                .message(),
            "t.toml:7: target \"a\".env.DATA: " + why);
  EXPECT_EQ(ParseCampaignText(
                Edit(kMinimal, "name = \"a\"\n", "name = \"a\"\ntemplates = [\"{out}/t\"]\n"),
                "t.toml", "/")
                .status()
                .message(),
            "t.toml:7: target \"a\".templates[0]: " + why);
}

// A campaign's [[target]] may run another catalogue target (`of`) at a commit (`commit`).
TEST(CampaignBuildRecipeTest, CommitAndOfNameWhatTheAgentRuns) {
  const std::string text = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
commit = "v1.2"
[[target]]
name = "b"
of = "a"
commit = "3f2a9c1"
)");
  auto parsed = ParseCampaignText(text, "t.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->targets[0].commit, "v1.2");
  EXPECT_EQ(parsed->targets[0].of, "");
  EXPECT_EQ(parsed->targets[1].commit, "3f2a9c1");
  EXPECT_EQ(parsed->targets[1].of, "a");
  EXPECT_EQ(CatalogueNames(*parsed), std::vector<std::string>{"a"});

  const std::string bad = ParseCampaignText(Edit(kMinimal, "name = \"a\"\n",
                                                 "name = \"a\"\ncommit = \"main..topic\"\n"),
                                            "t.toml", "/")
                              .status()
                              .message();
  EXPECT_EQ(bad.rfind("t.toml:7: target \"a\".commit: ", 0), 0u) << bad;
  EXPECT_NE(bad.find("main..topic"), std::string::npos) << bad;
  EXPECT_EQ(ParseCampaignText(Edit(kMinimal, "name = \"a\"\n", "name = \"a\"\nof = \"A b\"\n"),
                              "t.toml", "/")
                .status()
                .message()
                .rfind("t.toml:7: target \"a\".of: expected a name", 0),
            0u);
}

// The embedded lab's catalogue: one entry per catalogue name, from the first target with a
// command; each commit's entry must have a recipe, and a second command must agree.
TEST(CampaignBuildRecipeTest, TheEmbeddedLabsCatalogueAppliesOf) {
  const std::string two = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
command = ["{out}/app", "{port}"]
source = "/src/app"
build = [["make", "PREFIX={out}"]]
commit = "v1"
[[target]]
name = "b"
of = "a"
commit = "v2"
)");
  auto parsed = ParseCampaignText(two, "t.toml", "/");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto catalogue = EmbeddedCatalogue(*parsed);
  ASSERT_TRUE(catalogue.ok()) << catalogue.status().ToString();
  ASSERT_EQ(catalogue->size(), 1u);
  EXPECT_EQ((*catalogue)[0].name, "a");
  EXPECT_EQ((*catalogue)[0].command, (std::vector<std::string>{"{out}/app", "{port}"}));
  EXPECT_EQ((*catalogue)[0].commit, "") << "a catalogue entry holds no commit";
  EXPECT_FALSE((*catalogue)[0].recipe.empty());

  auto differs = ParseCampaignText(Edit(two, "of = \"a\"\n", "of = \"a\"\ncommand = [\"other\"]\n"),
                                   "t.toml", "/");
  ASSERT_TRUE(differs.ok()) << differs.status().ToString();
  EXPECT_EQ(EmbeddedCatalogue(*differs).status().message(),
            "t.toml:11: target \"b\".command: differs from target \"a\"'s (line 5), which defines "
            "the lab's catalogue target \"a\": give both the same command, or leave this one out");

  const std::string no_recipe = Edit(kMinimal, "name = \"a\"\n", R"(name = "a"
command = ["app", "{port}"]
[[target]]
name = "b"
of = "a"
commit = "v2"
)");
  auto unbuildable = ParseCampaignText(no_recipe, "t.toml", "/");
  ASSERT_TRUE(unbuildable.ok()) << unbuildable.status().ToString();
  EXPECT_EQ(RequireCommands(*unbuildable).message(),
            "t.toml:8: target \"b\".commit: catalogue target \"a\" has no build recipe (source "
            "and build) to build \"v2\" by");
}

}  // namespace
}  // namespace benchlab

// Confirmation by re-measurement (coordinator/server/confirmation.h, docs/history.md): the
// re-measurement campaign planned from two stored files, the judgement of its windows, and the
// recorded outcomes laid over a series search's changes.
#include "coordinator/server/confirmation.h"

#include <gtest/gtest.h>

#include "coordinator/campaign.h"

namespace benchlab {
namespace {

std::string CampaignText(const std::string& name, int work_ns, const std::string& extra = "") {
  return "name = \"" + name + "\"\nseries = \"nightly\"\nbaseline = \"hello\"\n" + extra +
         "[matrix]\nconnections = [16, 64]\nrounds = { min = 3, max = 10 }\nduration = \"2s\"\n"
         "[stats]\nmargin = 0.03\nmax_duration = \"1h\"\n"
         "[noise]\ntarget = \"hello\"\nscenario = \"json\"\n"
         "[[target]]\nname = \"hello\"\ncommand = [\"/bin/hello-server\", \"--port\", \"{port}\", "
         "\"--work-ns\", \"" +
         std::to_string(work_ns) + "\"]\nversion = [\"echo\", \"v" + std::to_string(work_ns) +
         "\"]\ncpus = \"0\"\n"
         "[[target]]\nname = \"other\"\ncommand = [\"/bin/other\"]\n"
         "[[scenario]]\nname = \"json\"\npath = \"/json\"\nexpect = { status = 200 }\n"
         "[[scenario]]\nname = \"plain\"\npath = \"/\"\nexpect = { status = 200 }\n"
         "[[negative]]\nname = \"missing\"\npath = \"/nope\"\nexpect = { status = 404 }\n";
}

CampaignRow Row(int64_t id, const std::string& name, const std::string& text) {
  CampaignRow row;
  row.id = id;
  row.name = name;
  row.series = "nightly";
  row.state = "done";
  row.source = name + ".toml";
  row.spec_toml = text;
  return row;
}

struct Fixture {
  SeriesCampaign before{3, "nightly-3", "", "done", {{"hello", "v0"}}, {}};
  SeriesCampaign after{4, "nightly-4", "", "done", {{"hello", "v5000"}}, {}};
  SeriesCampaign old{2, "nightly-2", "", "done", {{"hello", "v0"}}, {}};
  SeriesChange change;
  Fixture() {
    change.key = {"", "json", "c64", "hello"};
    change.metric = Metric::kCpuUsPerRequest;
    change.point.size.estimate = 1.2;  // a rise of CPU per request: a regression
    change.point.direction = ChangeDirection::kRegression;
    change.before = &before;
    change.after = &after;
    change.old_build = &old;
  }
};

TEST(ConfirmationTest, PlansTheOldBuildAgainstTheNewOnTheChangesCellAlone) {
  Fixture f;
  const CampaignRow old = Row(2, "nightly-2", CampaignText("nightly-2", 0));
  const CampaignRow newest = Row(9, "nightly-9", CampaignText("nightly-9", 5000));
  RemeasureSettings settings;
  settings.min_rounds = 5;
  settings.max_rounds = 40;
  auto plan = PlanConfirmation(f.change, old, newest, {Metric::kCpuUsPerRequest, Metric::kRps},
                               "nightly-9-remeasure-1", "/srv/lab", settings);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->new_target, "hello");
  EXPECT_EQ(plan->old_target, "hello-old");
  EXPECT_DOUBLE_EQ(plan->margin, 0.03);

  auto c = ParseCampaignText(plan->text, "plan.toml", "/srv/lab");
  ASSERT_TRUE(c.ok()) << c.status().ToString() << "\n" << plan->text;
  EXPECT_EQ(c->name, "nightly-9-remeasure-1");
  EXPECT_EQ(c->series, "nightly-9-remeasure-1");  // never joins the series it checks
  EXPECT_EQ(c->baseline, "hello-old");
  ASSERT_EQ(c->targets.size(), 2u);
  EXPECT_EQ(c->targets[0].name, "hello");
  EXPECT_EQ(c->targets[0].command.back(), "5000");  // the newest file's build
  EXPECT_EQ(c->targets[1].name, "hello-old");
  EXPECT_EQ(c->targets[1].command.back(), "0");  // the old file's build
  EXPECT_EQ(c->targets[1].version, (std::vector<std::string>{"echo", "v0"}));
  ASSERT_EQ(c->scenarios.size(), 1u);
  EXPECT_EQ(c->scenarios[0].name, "json");
  EXPECT_TRUE(c->negatives.empty());
  EXPECT_EQ(c->connections, std::vector<int>{64});
  EXPECT_TRUE(c->adaptive);
  EXPECT_EQ(c->min_rounds, 5);
  EXPECT_EQ(c->rounds, 40);
  EXPECT_EQ(c->order, Order::kRotate);
  EXPECT_FALSE(c->noise.has_value());
  EXPECT_DOUBLE_EQ(c->stats.confidence, 0.90);
  EXPECT_DOUBLE_EQ(c->stats.margin, 0.03);
  EXPECT_FALSE(c->stats.max_duration.has_value());
  EXPECT_EQ(c->stats.decide_on, (std::vector<std::string>{"cpu_us_per_request", "rps"}));
  EXPECT_EQ(c->duration, std::chrono::seconds(2));
}

TEST(ConfirmationTest, ABuildThatCannotRunFromTheStoreIsNotPlanned) {
  Fixture f;
  const CampaignRow newest = Row(9, "nightly-9", CampaignText("nightly-9", 5000));
  // A fleet line: the builds are in agents' catalogues.
  SeriesChange fleet = f.change;
  fleet.key.pair = "srv-1";
  auto plan = PlanConfirmation(fleet, newest, newest, {Metric::kRps}, "x", "", {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("srv-1"), std::string::npos);
  // An env value stored redacted.
  auto redacted = RedactCampaignText(
      "name = \"n\"\nbaseline = \"hello\"\n[matrix]\nconnections = [64]\n"
      "[[target]]\nname = \"hello\"\ncommand = [\"/bin/h\"]\nenv = { TOKEN = \"s3cret\" }\n"
      "[[scenario]]\nname = \"json\"\npath = \"/\"\nexpect = { status = 200 }\n",
      "n.toml");
  ASSERT_TRUE(redacted.ok()) << redacted.status().ToString();
  plan = PlanConfirmation(f.change, Row(2, "nightly-2", *redacted), newest, {Metric::kRps}, "x", "",
                          {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("TOKEN"), std::string::npos) << plan.status().message();
  EXPECT_EQ(plan.status().message().find("s3cret"), std::string::npos);
  // A load level the newest file no longer has.
  SeriesChange gone = f.change;
  gone.key.load_level = "c8";
  plan = PlanConfirmation(gone, newest, newest, {Metric::kRps}, "x", "", {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("c8"), std::string::npos) << plan.status().message();
}

// A coordinator's campaign: its target is a name in the server agent's catalogue, and it ran on
// two named pairs.
std::string FleetText(const std::string& name) {
  return "name = \"" + name +
         "\"\nseries = \"nightly\"\nbaseline = \"hello\"\n"
         "[matrix]\nconnections = [16, 64]\nrounds = 3\nduration = \"2s\"\n"
         "[placement]\npairs = [[\"srv-1\", \"load-1\"], [\"srv-2\", \"load-2\"]]\n"
         "[[target]]\nname = \"hello\"\ncpus = \"1\"\n"
         "[[scenario]]\nname = \"json\"\npath = \"/json\"\nexpect = { status = 200 }\n";
}

TEST(ConfirmationTest, AFleetLinesOldBuildIsACatalogueEntryOnTheLinesPair) {
  Fixture f;
  f.change.key.pair = "srv-2";
  const CampaignRow old = Row(2, "nightly-2", FleetText("nightly-2"));
  const CampaignRow newest = Row(9, "nightly-9", FleetText("nightly-9"));
  EXPECT_TRUE(TargetFromCatalogue(newest, "hello"));
  EXPECT_FALSE(TargetFromCatalogue(Row(9, "n", CampaignText("n", 0)), "hello"));
  const CatalogueBuilds builds{"srv-2", "load-2", "hello-v1"};
  auto plan = PlanConfirmation(f.change, old, newest, {Metric::kRps}, "nightly-9-remeasure-1", "",
                               {}, &builds);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->new_target, "hello");
  EXPECT_EQ(plan->old_target, "hello-v1");
  auto c = ParseCampaignText(plan->text, "plan.toml", "");
  ASSERT_TRUE(c.ok()) << c.status().ToString() << "\n" << plan->text;
  EXPECT_EQ(c->baseline, "hello-v1");
  ASSERT_EQ(c->targets.size(), 2u);
  EXPECT_EQ(c->targets[0].name, "hello");
  EXPECT_EQ(c->targets[1].name, "hello-v1");
  EXPECT_TRUE(c->targets[1].command.empty());  // the catalogue's entry
  EXPECT_EQ(c->targets[1].cpus, c->targets[0].cpus);
  // One pair, the line's: both builds on the same server agent, driven from the same load agent.
  EXPECT_FALSE(c->Fleet());
  EXPECT_EQ(c->placement_server, std::vector<std::string>{"srv-2"});
  EXPECT_EQ(c->placement_load, std::vector<std::string>{"load-2"});
  EXPECT_EQ(c->connections, std::vector<int>{64});
  // Read back from the stored file, as the coordinator does when the campaign ends.
  auto back = PlanOfCampaign(Row(10, plan->name, plan->text));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->new_target, "hello");
  EXPECT_EQ(back->old_target, "hello-v1");
  EXPECT_DOUBLE_EQ(back->margin, plan->margin);
  EXPECT_FALSE(PlanOfCampaign(newest).ok());  // one target: not a re-measurement
  // Without the catalogue's builds, a fleet line is left to the coordinator.
  plan = PlanConfirmation(f.change, old, newest, {Metric::kRps}, "x", "", {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("coordinator"), std::string::npos);
}

TEST(ConfirmationTest, TheOldBuildIsTheEntryThatRegisteredItsVersion) {
  const std::map<std::string, std::string> catalogue = {
      {"hello", "v2"}, {"hello-v1", "v1"}, {"nginx", "1.22"}};
  auto entry = FindOldBuildEntry(catalogue, "srv-1", "hello", "v1", "v2");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(*entry, "hello-v1");
  // The catalogue no longer keeps the old build.
  entry = FindOldBuildEntry(catalogue, "srv-1", "hello", "v0", "v2");
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.status().message().find("v0"), std::string::npos) << entry.status().message();
  EXPECT_NE(entry.status().message().find("srv-1"), std::string::npos);
  // The target was rebuilt since the newest campaign: what it runs is not the newest build.
  entry = FindOldBuildEntry(catalogue, "srv-1", "hello", "v1", "v3");
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.status().message().find("v3"), std::string::npos) << entry.status().message();
  // Same version on both sides and no other entry: nothing to measure against.
  entry = FindOldBuildEntry(catalogue, "srv-1", "nginx", "1.22", "1.22");
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.status().message().find("itself"), std::string::npos);
  EXPECT_FALSE(FindOldBuildEntry(catalogue, "srv-1", "gone", "v1", "v2").ok());
}

TEST(ConfirmationTest, VersionsAndPairsAreReadFromWhatTheCampaignsStored) {
  auto window = [](const std::string& target, const std::string& pair, const std::string& version,
                   const std::string& verdict) {
    WindowRow w;
    w.target = target;
    w.pair = pair;
    w.target_version = version;
    w.verdict = verdict;
    return w;
  };
  std::vector<WindowRow> windows = {
      window("hello", "srv-1", "v1", "valid"), window("hello", "srv-1", "v1", "valid"),
      window("hello", "srv-1", "v9", "failed"), window("hello", "srv-2", "v2", "valid")};
  auto v = RecordedVersion(windows, "hello", "srv-1", "n-1");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "v1");
  EXPECT_FALSE(RecordedVersion(windows, "hello", "srv-3", "n-1").ok());
  windows.push_back(window("hello", "srv-1", "v3", "valid"));
  v = RecordedVersion(windows, "hello", "srv-1", "n-1");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("v1, v3"), std::string::npos) << v.status().message();
  EXPECT_FALSE(
      RecordedVersion({window("hello", "", "unavailable", "valid")}, "hello", "", "n").ok());

  const std::string pairs = R"({"pairs": [["srv-1", "load-1"], ["srv-2", "load-2"]]})";
  EXPECT_EQ(PairAgents(pairs, "srv-2"),
            std::make_pair(std::string("srv-2"), std::string("load-2")));
  EXPECT_FALSE(PairAgents(pairs, "srv-3").has_value());
  const std::string one = R"({"server": "srv-1", "load": ["load-1", "load-9"]})";
  EXPECT_EQ(PairAgents(one, ""), std::make_pair(std::string("srv-1"), std::string("load-1")));
  EXPECT_FALSE(PairAgents(one, "srv-1").has_value());  // a fleet line of a campaign with one pair
  EXPECT_FALSE(PairAgents("{}", "").has_value());
  EXPECT_FALSE(PairAgents("not json", "").has_value());
}

Measurement M(const std::string& target, int round, double cpu) {
  Measurement m;
  m.target = target;
  m.scenario = "json";
  m.load_level = "c64";
  m.round = round;
  m.valid = true;
  m.cpu_us_per_request = cpu;
  m.rps = 1e6 / cpu;
  return m;
}

ConfirmationPlan Plan() {
  ConfirmationPlan plan;
  plan.name = "nightly-9-remeasure-1";
  plan.new_target = "hello";
  plan.old_target = "hello-old";
  plan.margin = 0.02;
  return plan;
}

TEST(ConfirmationTest, JudgesTheRoundRatiosNewOverOld) {
  Fixture f;
  const double wobble[] = {1.0, 1.01, 0.99, 1.005, 0.995, 1.0};
  std::vector<Measurement> real, none;
  for (int r = 1; r <= 6; ++r) {
    real.push_back(M("hello", r, 12.0 * wobble[r - 1]));
    real.push_back(M("hello-old", r, 10.0 * wobble[(r + 2) % 6]));
    none.push_back(M("hello", r, 10.0 * wobble[r - 1]));
    none.push_back(M("hello-old", r, 10.0 * wobble[(r + 2) % 6]));
  }
  // An invalid window and another cell's window are not counted.
  Measurement invalid = M("hello", 7, 50);
  invalid.valid = false;
  real.push_back(invalid);
  Measurement other = M("hello", 7, 50);
  other.scenario = "plain";
  real.push_back(other);

  ConfirmationRow row = JudgeConfirmation("nightly", f.change, Plan(), real, {});
  EXPECT_EQ(row.status, "confirmed");
  EXPECT_EQ(row.rounds, 6);
  ASSERT_TRUE(row.estimate && row.low && row.high);
  EXPECT_NEAR(*row.estimate, 1.2, 0.02);
  EXPECT_GT(*row.low, 1.0);
  EXPECT_EQ(row.series, "nightly");
  EXPECT_EQ(row.figure, "cpu_us_per_request");
  EXPECT_EQ(row.after_campaign_id, 4);
  EXPECT_EQ(row.old_campaign_id, 2);
  EXPECT_EQ(row.campaign, "nightly-9-remeasure-1");

  row = JudgeConfirmation("nightly", f.change, Plan(), none, {});
  EXPECT_EQ(row.status, "false alarm") << row.detail;
  EXPECT_LT(*row.high, 1.02);

  // Fewer rounds than the plan's first look: undecided, with the interval it has.
  none.resize(6);
  row = JudgeConfirmation("nightly", f.change, Plan(), none, {});
  EXPECT_EQ(row.status, "undecided");
  EXPECT_EQ(row.rounds, 3);
}

TEST(ConfirmationTest, RecordedOutcomesSetTheStatusOfTheirChangeOnly) {
  Fixture f;
  std::vector<SeriesChange> changes = {f.change, f.change, f.change};
  changes[1].metric = Metric::kRps;  // no row for this figure
  SeriesCampaign later{7, "nightly-7", "", "done", {}, {}};
  changes[2].after = &later;  // another change on the line
  ConfirmationRow row = NotMeasured(f.change, "nightly", "");
  row.status = "false alarm";
  row.campaign = "nightly-9-remeasure-1";
  row.rounds = 8;
  row.estimate = 1.001;
  row.low = 0.99;
  row.high = 1.012;
  ApplyConfirmations(changes, {row});
  EXPECT_EQ(changes[0].status, "false alarm");
  ASSERT_TRUE(changes[0].remeasured.has_value());
  EXPECT_EQ(changes[0].remeasured->campaign, "nightly-9-remeasure-1");
  EXPECT_EQ(changes[0].remeasured->rounds, 8);
  EXPECT_DOUBLE_EQ(changes[0].remeasured->interval.high, 1.012);
  EXPECT_FALSE(changes[0].ConfirmedRegression());
  EXPECT_EQ(changes[1].status, "suspected");
  EXPECT_FALSE(changes[1].remeasured.has_value());
  EXPECT_EQ(changes[2].status, "suspected");

  row.status = "confirmed";
  ApplyConfirmations(changes, {row});
  EXPECT_TRUE(changes[0].ConfirmedRegression());
  changes[0].point.direction = ChangeDirection::kImprovement;
  EXPECT_FALSE(changes[0].ConfirmedRegression());
}

}  // namespace
}  // namespace benchlab

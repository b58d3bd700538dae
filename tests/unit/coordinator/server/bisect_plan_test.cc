// A bisection's look campaigns (coordinator/server/bisect_plan.h, docs/methodology.md
// "Bisection"): the cell chosen, the campaign cut down to it with three builds of the target,
// and the rounds read back from its windows.
#include "coordinator/server/bisect_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "coordinator/campaign.h"

namespace benchlab {
namespace {

const std::string kGood(40, 'a');
const std::string kCandidate(40, 'b');
const std::string kBad(40, 'c');

std::string CampaignText(const std::string& connections = "[16, 64]") {
  return "name = \"nightly\"\nbaseline = \"app\"\n"
         "[matrix]\nconnections = " +
         connections +
         "\nrounds = { min = 3, max = 10 }\nduration = \"2s\"\norder = \"fixed\"\n"
         "[stats]\nmargin = 0.03\nmax_duration = \"1h\"\n"
         "[noise]\ntarget = \"app\"\nscenario = \"json\"\n"
         "[[target]]\nname = \"app\"\ncommand = [\"{out}/app\", \"--port\", \"{port}\"]\n"
         "cpus = \"0\"\nsource = \"/srv/app\"\nbuild = [[\"make\", \"-C\", \"{src}\"], [\"cp\", "
         "\"{src}/app\", \"{out}/app\"]]\n"
         "[[target]]\nname = \"other\"\ncommand = [\"/bin/other\"]\n"
         "[[scenario]]\nname = \"json\"\npath = \"/json\"\nexpect = { status = 200 }\n"
         "[[scenario]]\nname = \"plain\"\npath = \"/\"\nexpect = { status = 200 }\n";
}

TEST(BisectPlanTest, ChoosesTheNamedCellOrTheOnlyOne) {
  auto campaign = ParseCampaignText(CampaignText(), "nightly.toml", "/tmp");
  ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
  auto cell = ChooseBisectCell(*campaign, "plain/c64");
  ASSERT_TRUE(cell.ok()) << cell.status().ToString();
  EXPECT_EQ(cell->scenario, "plain");
  EXPECT_EQ(cell->load_level, "c64");
  // Four cells: one must be named, and the error lists them.
  auto none = ChooseBisectCell(*campaign, "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("json/c16, json/c64, plain/c16, plain/c64"),
            std::string::npos)
      << none.status().message();
  auto wrong = ChooseBisectCell(*campaign, "json/c32");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("\"json/c32\""), std::string::npos);
}

TEST(BisectPlanTest, PlansThreeBuildsOfTheTargetOnTheCellAlone) {
  auto text = PlanBisectCampaign(CampaignText(), "nightly.toml", "/tmp", "app", {"json", "c64"},
                                 kGood, kCandidate, kBad, 3, "bisect-1-bbbb-1");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto c = ParseCampaignText(*text, "look.toml", "/tmp");
  ASSERT_TRUE(c.ok()) << c.status().ToString() << "\n" << *text;
  EXPECT_EQ(c->name, "bisect-1-bbbb-1");
  EXPECT_EQ(c->series, "bisect-1-bbbb-1");  // never in the history it bisects
  ASSERT_EQ(c->targets.size(), 3u);
  const std::string commits[] = {kGood, kCandidate, kBad};
  const char* names[] = {"app-good", "app-candidate", "app-bad"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c->targets[i].name, names[i]);
    EXPECT_EQ(c->targets[i].of, "app");
    EXPECT_EQ(c->targets[i].commit, commits[i]);
    EXPECT_FALSE(c->targets[i].recipe.empty());
  }
  EXPECT_EQ(c->baseline, "app-good");
  ASSERT_EQ(c->scenarios.size(), 1u);
  EXPECT_EQ(c->scenarios[0].name, "json");
  const std::vector<LoadLevel> levels = c->LoadLevels();
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_EQ(levels[0].connections, 64);
  EXPECT_EQ(text->find("[noise]"), std::string::npos);
  EXPECT_EQ(text->find("max_duration"), std::string::npos);
  EXPECT_EQ(text->find("fixed"), std::string::npos);  // the builds take turns at going first
}

TEST(BisectPlanTest, ProfilesTheBuildsAsTheFileProfilesItsTarget) {
  const auto plan = [](const std::string& profile, bool culprit) {
    auto text =
        PlanBisectCampaign(CampaignText() + profile, "n.toml", "/tmp", "app", {"json", "c64"},
                           kGood, kCandidate, kBad, 3, "bisect-1", culprit);
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    auto c = ParseCampaignText(text.ok() ? *text : "", "look.toml", "/tmp");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Campaign{};
  };
  // Not profiled: the look is not either.
  const Campaign plain = plan("", false);
  EXPECT_FALSE(plain.Profiles("app-candidate"));
  // Every target profiled: so are the three builds.
  const Campaign all = plan("[profile]\nenabled = true\nfrequency = 49\n", false);
  for (const char* t : {"app-good", "app-candidate", "app-bad"}) EXPECT_TRUE(all.Profiles(t)) << t;
  EXPECT_EQ(all.profile_hz, 49);
  // Only the bisected target profiled: its three builds are, under their names.
  const Campaign only = plan("[profile]\nenabled = true\ntargets = [\"app\"]\n", false);
  for (const char* t : {"app-good", "app-candidate", "app-bad"}) EXPECT_TRUE(only.Profiles(t)) << t;
  // Another target profiled: the look profiles nothing (and still parses).
  const Campaign other = plan("[profile]\nenabled = true\ntargets = [\"other\"]\n", false);
  EXPECT_FALSE(other.Profiles("app-candidate"));
  // The culprit's look profiles its parent and itself whatever the file says, at its frequency.
  const Campaign culprit = plan("[profile]\nenabled = false\nfrequency = 199\n", true);
  EXPECT_TRUE(culprit.Profiles("app-good"));
  EXPECT_TRUE(culprit.Profiles("app-candidate"));
  EXPECT_FALSE(culprit.Profiles("app-bad"));
  EXPECT_EQ(culprit.profile_hz, 199);
  EXPECT_TRUE(plan("", true).Profiles("app-candidate"));
}

TEST(BisectPlanTest, RefusesATargetOrCellTheFileLacks) {
  auto target = PlanBisectCampaign(CampaignText(), "n.toml", "/tmp", "nope", {"json", "c64"}, kGood,
                                   kCandidate, kBad, 3, "bisect-1");
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.status().message().find("no [[target]] nope"), std::string::npos);
  auto cell = PlanBisectCampaign(CampaignText(), "n.toml", "/tmp", "app", {"json", "c32"}, kGood,
                                 kCandidate, kBad, 3, "bisect-1");
  ASSERT_FALSE(cell.ok());
  EXPECT_NE(cell.status().message().find("no cell json/c32"), std::string::npos);
}

Measurement Window(const std::string& target, int round, double cpu, bool valid = true,
                   const std::string& scenario = "json") {
  Measurement m;
  m.target = target;
  m.scenario = scenario;
  m.load_level = "c64";
  m.round = round;
  m.valid = valid;
  m.requests = 1000;
  m.server_cpu_s = cpu * 1000 / 1e6;
  m.cpu_us_per_request = cpu;
  return m;
}

TEST(BisectPlanTest, ReadsRoundsWithAllThreeBuildsValid) {
  std::vector<Measurement> windows = {
      Window("app-good", 1, 10),
      Window("app-candidate", 1, 15),
      Window("app-bad", 1, 20),
      Window("app-good", 2, 11),
      Window("app-candidate", 2, 16),
      Window("app-bad", 2, 21, false),  // round 2 has no valid bad end
      Window("app-good", 3, 12),
      Window("app-candidate", 3, 17),
      Window("app-bad", 3, 22),
      Window("app-good", 3, 99, true, "plain"),  // another cell
  };
  const auto rounds = BisectRoundsOf(windows, "app", {"json", "c64"}, Metric::kCpuUsPerRequest);
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_DOUBLE_EQ(rounds[0].good, 10);
  EXPECT_DOUBLE_EQ(rounds[0].candidate, 15);
  EXPECT_DOUBLE_EQ(rounds[0].bad, 20);
  EXPECT_DOUBLE_EQ(rounds[1].good, 12);
  EXPECT_DOUBLE_EQ(rounds[1].bad, 22);
}

}  // namespace
}  // namespace benchlab

#include "analysis/profile_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

namespace benchlab {
namespace {

// Two targets, a and b, in one cell over three rounds; b's parse costs 4 µs more per request and
// everything else the same. a: 10 µs per request (work 8, parse 2); b: 14 µs (work 8, parse 6).
class ProfileReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(":memory:");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
    CampaignRow c;
    c.name = "demo";
    c.baseline = "a";
    c.spec_toml = "name = \"demo\"";
    c.source = "demo.toml";
    c.state = "done";
    auto id = store_->CreateCampaign(c, {{"a", "[]", ""}, {"b", "[]", ""}},
                                     {{"json", "scenario", "GET", "/", 200, ""}});
    ASSERT_TRUE(id.ok()) << id.status().message();
    campaign_ = *id;
    CampaignRow plain = c;
    plain.name = "plain";
    ASSERT_TRUE(store_->CreateCampaign(plain, {{"a", "[]", ""}}, {}).ok());
  }

  // A valid window of `target` in round `round` with 100,000 requests and `cpu_s` of CPU.
  WindowRow Window(const std::string& target, int round, double cpu_s) {
    WindowRow w;
    w.campaign_id = campaign_;
    w.target = target;
    w.scenario = "json";
    w.connections = 32;
    w.load_level = "c32";
    w.round = round;
    w.position = target == "a" ? 0 : 1;
    w.verdict = "valid";
    w.server_agent = "server";
    w.load_agent = "load";
    w.requests = 100000;
    w.duration_s = 1;
    w.server_cpu_s = cpu_s;
    w.started_at = "2026-12-05T00:00:00Z";
    w.ended_at = "2026-12-05T00:00:01Z";
    return w;
  }

  int64_t Insert(const WindowRow& w, const std::string& folded, const std::string& error = "") {
    std::optional<ProfileRow> profile = ProfileRow{0, 99, 0, "", error};
    if (error.empty()) {
      auto parsed = ParseFolded(folded);
      EXPECT_TRUE(parsed.ok()) << parsed.status().message();
      auto packed = CompressFolded(*parsed);
      EXPECT_TRUE(packed.ok());
      profile->folded_z = *packed;
      profile->samples = parsed->samples();
    }
    auto id = store_->InsertWindow(w, {}, {}, {}, profile);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : 0;
  }

  void InsertCell() {
    for (int round = 1; round <= 3; ++round) {
      Insert(Window("a", round, 1.0), "a;main;work 80\na;main;parse 20\n");
      Insert(Window("b", round, 1.4), "b;main;work 80\nb;main;parse 60\n");
    }
  }

  std::unique_ptr<Store> store_;
  int64_t campaign_ = 0;
};

TEST_F(ProfileReportTest, ACampaignWithoutProfilesSaysHowToTakeThem) {
  auto none = LoadCampaignProfiles(*store_, "plain");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("[profile] enabled = true"), std::string::npos);
  auto unknown = LoadCampaignProfiles(*store_, "nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

TEST_F(ProfileReportTest, OnlyValidWindowsAreMergedAndTheirCpuTurnsSamplesIntoMicroseconds) {
  InsertCell();
  WindowRow invalid = Window("a", 4, 9.0);
  invalid.verdict = "invalid";
  Insert(invalid, "a;main;junk 1000\n");
  const int64_t refused = Insert(Window("a", 5, 1.0), "", "perf could not start: no perf");

  auto profiles = LoadCampaignProfiles(*store_, "demo");
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  EXPECT_EQ(profiles->windows.size(), 6u) << "the invalid window is left out";
  ASSERT_EQ(profiles->unprofiled.size(), 1u);
  EXPECT_EQ(profiles->unprofiled[0].row.id, refused);
  EXPECT_EQ(profiles->unprofiled[0].error, "perf could not start: no perf");

  // Two targets cannot be added together.
  auto both = MergeSelected(*profiles, {});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("several targets (a, b)"), std::string::npos)
      << both.status().message();

  ProfileSelection a;
  a.target = "a";
  auto merged = MergeSelected(*profiles, a);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->windows, 3);
  EXPECT_EQ(merged->profile.samples(), 300u);
  EXPECT_EQ(merged->profile.stacks.count("a;main;junk"), 0u);
  const nlohmann::json j = ProfileJson(*merged);
  EXPECT_NEAR(j["cpu_us_per_request"].get<double>(), 10, 1e-9);
  bool saw_work = false;
  for (const auto& f : j["functions"]) {
    if (f["function"] == "work") {
      saw_work = true;
      EXPECT_NEAR(f["self_us_per_request"].get<double>(), 8, 1e-9);
    }
    if (f["function"] == "main") {
      EXPECT_NEAR(f["total_us_per_request"].get<double>(), 10, 1e-9);
    }
  }
  EXPECT_TRUE(saw_work);
  const std::string text = FormatProfileText(*merged, 1);
  EXPECT_NE(text.find("8.00"), std::string::npos) << text;
  EXPECT_NE(text.find("work"), std::string::npos) << text;
  EXPECT_NE(text.find("2 more functions"), std::string::npos) << text;

  // A selection that matches nothing names what there is.
  ProfileSelection other;
  ASSERT_TRUE(ParseCell("json/c64", other).ok());
  auto empty = MergeSelected(*profiles, other);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("cells: json/c32"), std::string::npos)
      << empty.status().message();
}

TEST_F(ProfileReportTest, ACellIsSpelledScenarioSlashLevel) {
  ProfileSelection s;
  ASSERT_TRUE(ParseCell("json/c64", s).ok());
  EXPECT_EQ(*s.scenario, "json");
  EXPECT_EQ(*s.load_level, "c64");
  for (const char* bad : {"json", "/c64", "json/", "a/b/c"}) {
    ProfileSelection t;
    Status st = ParseCell(bad, t);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("SCENARIO/LEVEL"), std::string::npos);
  }
}

TEST_F(ProfileReportTest, TheDiffNamesTheFunctionThatGrewOverPairedRounds) {
  InsertCell();
  // A round only b has is not paired.
  Insert(Window("b", 4, 3.0), "b;main;work 10\nb;main;other 990\n");
  auto profiles = LoadCampaignProfiles(*store_, "demo");
  ASSERT_TRUE(profiles.ok());
  auto cells = DiffTargets(*profiles, "a", "b", {});
  ASSERT_TRUE(cells.ok()) << cells.status().message();
  ASSERT_EQ(cells->size(), 1u);
  const CellProfileDiff& c = cells->front();
  EXPECT_EQ(c.scenario, "json");
  EXPECT_EQ(c.load_level, "c32");
  EXPECT_EQ(c.diff.rounds, 3);
  EXPECT_NEAR(c.diff.delta_us, 4, 1e-9);
  ASSERT_FALSE(c.diff.functions.empty());
  // main holds everything (+4), then parse (+4); work is unchanged (8 -> 8).
  const FunctionDiff* parse = nullptr;
  for (const auto& f : c.diff.functions) {
    if (f.function == "parse") parse = &f;
    if (f.function == "work") {
      EXPECT_NEAR(f.delta_us, 0, 1e-9);
    }
    EXPECT_NE(f.function, "other") << "round 4 has no pair";
  }
  ASSERT_NE(parse, nullptr);
  EXPECT_NEAR(parse->base_us, 2, 1e-9);
  EXPECT_NEAR(parse->new_us, 6, 1e-9);
  EXPECT_NEAR(parse->share, 1, 1e-9);

  EXPECT_EQ(ProfileHeadline(c),
            "CPU per request +4.00 µs (+40.0%) [+4.00, +4.00]; +4.00 µs of it in parse");
  const std::string text = FormatProfileDiffText(*cells, 10);
  EXPECT_NE(text.find("json/c32: b against a"), std::string::npos) << text;
  EXPECT_NE(text.find("+4.00"), std::string::npos) << text;
  const std::string md = FormatProfileDiffMarkdown(*cells, 10);
  EXPECT_NE(md.find("| parse | +4.00 |"), std::string::npos) << md;
  const nlohmann::json j = ProfileDiffJson(*cells);
  EXPECT_EQ(j[0]["rounds"], 3);
  EXPECT_NEAR(j[0]["delta_us"].get<double>(), 4, 1e-9);

  auto same = DiffTargets(*profiles, "a", "a", {});
  EXPECT_FALSE(same.ok());
  auto missing = DiffTargets(*profiles, "a", "zz", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("\"zz\""), std::string::npos);
}

}  // namespace
}  // namespace benchlab

// A campaign series (analysis/series.h, docs/history.md): each campaign's figure per line, from
// its valid matrix windows' newest attempts, with the interval on their geometric mean.
#include "analysis/series.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace benchlab {
namespace {

WindowRow Window(int64_t id, const std::string& target, int round, double rps, int attempt = 1,
                 const std::string& verdict = "valid") {
  WindowRow w;
  w.id = id;
  w.target = target;
  w.scenario = "json";
  w.connections = 64;
  w.load_level = "c64";
  w.round = round;
  w.attempt = attempt;
  w.verdict = verdict;
  w.reasons = "[]";
  w.requests = static_cast<uint64_t>(rps);
  w.duration_s = 1;
  w.rps = rps;
  w.cpu_us_per_request = 1e6 / rps;
  w.server_cpu_s = 1;
  w.target_version = target == "app" ? "v" + std::to_string(id / 100) : "";
  return w;
}

ReportInput Campaign(int64_t id, std::vector<double> app_rps) {
  ReportInput in;
  in.campaign.id = id;
  in.campaign.name = "nightly-" + std::to_string(id);
  in.campaign.state = "done";
  in.campaign.created_at = "2026-12-0" + std::to_string(id) + "T02:00:00Z";
  int64_t w = id * 100;
  int round = 1;
  for (double rps : app_rps) in.windows.push_back(Window(w++, "app", round++, rps));
  in.windows.push_back(Window(w++, "base", 1, 1000));
  return in;
}

TEST(SeriesTest, EachCampaignGivesItsMedianAndTheIntervalOnItsRounds) {
  ReportInput second = Campaign(2, {2000, 2100, 1900});
  // A newer attempt replaces the round's first; an invalid window is left out.
  second.windows.push_back(Window(250, "app", 3, 2050, 2));
  second.windows.push_back(Window(251, "app", 4, 99999, 1, "invalid"));
  const Series s = BuildSeries("nightly", {Campaign(1, {1000, 1100, 900}), second}, Metric::kRps);
  ASSERT_EQ(s.campaigns.size(), 2u);
  EXPECT_EQ(s.campaigns[1].name, "nightly-2");
  EXPECT_EQ(s.campaigns[1].versions.at("app"), "v2");
  EXPECT_EQ(s.campaigns[1].versions.count("base"), 0u) << "no version recorded: absent";
  const auto& app = s.lines.at({"", "json", "c64", "app"});
  ASSERT_EQ(app.size(), 2u);
  EXPECT_EQ(app[0].values, (std::vector<double>{1000, 1100, 900}));
  EXPECT_EQ(app[0].summary.median, 1000);
  EXPECT_EQ(app[1].values, (std::vector<double>{2000, 2100, 2050}));
  EXPECT_EQ(app[1].summary.median, 2050);
  // The geometric mean with its t interval, from the same values.
  const RatioInterval expected = LogRatioInterval({2000, 2100, 2050}, 0.95);
  EXPECT_DOUBLE_EQ(app[1].interval.estimate, expected.estimate);
  EXPECT_DOUBLE_EQ(app[1].interval.low, expected.low);
  EXPECT_LT(app[1].interval.low, 2000);
  EXPECT_GT(app[1].interval.high, 2100);
  // One round: its value, no interval.
  const auto& base = s.lines.at({"", "json", "c64", "base"});
  EXPECT_EQ(base[0].interval.estimate, 1000);
  EXPECT_TRUE(std::isnan(base[0].interval.low));
}

TEST(SeriesTest, ACampaignWithoutAValidWindowHasNoPointOnTheLine) {
  ReportInput none = Campaign(2, {});
  const Series s =
      BuildSeries("nightly", {Campaign(1, {1000}), none, Campaign(3, {1200})}, Metric::kRps);
  const auto& app = s.lines.at({"", "json", "c64", "app"});
  ASSERT_EQ(app.size(), 2u);
  EXPECT_EQ(app[0].campaign, 0u);
  EXPECT_EQ(app[1].campaign, 2u);
}

TEST(SeriesTest, TheTextAndJsonShowTheFilteredLines) {
  const Series s =
      BuildSeries("nightly", {Campaign(1, {1000, 1100, 900}), Campaign(2, {2000, 2100, 1900})},
                  Metric::kCpuUsPerRequest);
  SeriesFilter only_app;
  only_app.target = "app";
  const std::string text = FormatHistoryText(s, only_app);
  EXPECT_NE(text.find("series nightly: 2 campaign(s), cpu_us_per_request (lower is better)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("json c64 app"), std::string::npos) << text;
  EXPECT_EQ(text.find("json c64 base"), std::string::npos) << text;
  EXPECT_NE(text.find("nightly-2"), std::string::npos) << text;
  EXPECT_NE(text.find(" 500 "), std::string::npos) << "median CPU/request of 2000 req/s" << text;

  const auto j = nlohmann::json::parse(FormatHistoryJson(s, only_app));
  EXPECT_EQ(j["figure"], "cpu_us_per_request");
  EXPECT_EQ(j["better"], "lower");
  ASSERT_EQ(j["lines"].size(), 1u);
  EXPECT_EQ(j["lines"][0]["target"], "app");
  ASSERT_EQ(j["lines"][0]["points"].size(), 2u);
  EXPECT_EQ(j["lines"][0]["points"][1]["campaign"], "nightly-2");
  EXPECT_DOUBLE_EQ(j["lines"][0]["points"][1]["median"].get<double>(), 500);
  EXPECT_EQ(j["campaigns"][0]["versions"]["app"], "v1");

  SeriesFilter nothing;
  nothing.scenario = "plaintext";
  EXPECT_NE(FormatHistoryText(s, nothing).find("no line has a valid window that matches"),
            std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(FormatHistoryJson(s, nothing))["lines"].empty());
}

// Long campaign names and versions: every line within the width, thousands separators, the
// header over its column; wide enough, nothing is cut.
TEST(SeriesTest, TheTextFitsTheWidth) {
  std::vector<ReportInput> inputs = {Campaign(1, {118000, 119000, 118835}),
                                     Campaign(2, {60000, 61000, 60663})};
  for (ReportInput& in : inputs) {
    in.campaign.name = "nightly-frameworks-json-serialization-large-" + in.campaign.name;
    in.campaign.created_at = "2026-12-0" + std::to_string(in.campaign.id) + "T02:00:00.123456Z";
    for (WindowRow& w : in.windows) {
      if (w.target == "app")
        w.target_version = "actix-web 4.9.0 (rustc 1.83.0, lto=thin, cgu=1) " + w.target_version;
    }
  }
  const Series s = BuildSeries("nightly", inputs, Metric::kRps);
  const std::string text = FormatHistoryText(s);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
    EXPECT_LE(TextColumns(lines.back()), 100u) << lines.back() << "\n" << text;
  }
  EXPECT_NE(text.find(" 118,835  "), std::string::npos) << text;
  EXPECT_NE(text.find(" 60,663  "), std::string::npos) << text;
  EXPECT_EQ(text.find(" 118835 "), std::string::npos) << text;
  auto header = std::find_if(lines.begin(), lines.end(),
                             [](const std::string& l) { return l.rfind("  #  ", 0) == 0; });
  ASSERT_NE(header, lines.end()) << text;
  const std::string& row = *(header + 1);
  // "median" ends where the median ends (right-aligned).
  EXPECT_EQ(TextColumns(header->substr(0, header->find("median"))) + 6,
            TextColumns(row.substr(0, row.find("118,835"))) + 7)
      << text;
  const std::string wide = FormatHistoryText(s, {}, 300);
  EXPECT_NE(wide.find("nightly-frameworks-json-serialization-large-nightly-1"), std::string::npos)
      << wide;
  EXPECT_NE(wide.find("2026-12-01T02:00:00.123456Z"), std::string::npos) << wide;
  EXPECT_NE(wide.find("cgu=1) v1"), std::string::npos) << wide;
}

// --format md: the text's lines as Markdown tables, one row per campaign.
TEST(SeriesTest, TheMarkdownHasATablePerLine) {
  const Series s = BuildSeries(
      "nightly", {Campaign(1, {1000, 1100, 900}), Campaign(2, {2000, 2100, 1900})}, Metric::kRps);
  SeriesFilter only_app;
  only_app.target = "app";
  const std::string md = FormatHistoryMarkdown(s, only_app);
  EXPECT_EQ(md.rfind("### benchlab: series `nightly`, rps\n\n2 campaign(s); higher is better; ", 0),
            0u)
      << md;
  EXPECT_NE(md.find("\n#### json c64 app\n\n| # | campaign | created | median | interval | n | "
                    "version |\n| ---: | --- | --- | ---: | --- | ---: | --- |\n"),
            std::string::npos)
      << md;
  // Thousands separators, and the interval's ends joined by a dash (a comma would read as one).
  EXPECT_NE(md.find("| 2 | nightly-2 | 2026-12-02T02:00:00Z | 2,000 | 1,765–2,263 | 3 | v2 |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("json c64 base"), std::string::npos) << "filtered out\n" << md;

  SeriesFilter nothing;
  nothing.scenario = "plaintext";
  EXPECT_NE(FormatHistoryMarkdown(s, nothing).find("No line has a valid window that matches"),
            std::string::npos);
}

TEST(SeriesTest, ALabelIsTheTargetsVersionOverTheRecordedOne) {
  ReportInput labelled = Campaign(2, {2000, 2100, 1900});
  labelled.campaign.spec_toml = R"(name = "nightly-2"
series = "nightly"
baseline = "base"
[matrix]
connections = [64]
[[target]]
name = "app"
[[target]]
name = "base"
[[scenario]]
name = "json"
path = "/"
expect = { status = 200 }
[labels]
app = "3f2a9c1"
base = "nginx 1.22.1"
)";
  const Series s = BuildSeries("nightly", {Campaign(1, {1000, 1100, 900}), labelled}, Metric::kRps);
  EXPECT_EQ(s.campaigns[0].versions.at("app"), "v1") << "no label: the windows' version";
  EXPECT_TRUE(s.campaigns[0].labels.empty());
  EXPECT_EQ(s.campaigns[1].versions.at("app"), "3f2a9c1") << "the label wins over v2";
  EXPECT_EQ(s.campaigns[1].versions.at("base"), "nginx 1.22.1") << "a label without a version";
  EXPECT_EQ(s.campaigns[1].labels.size(), 2u);

  const std::string text = FormatHistoryText(s);
  EXPECT_NE(text.find(" v1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 3f2a9c1 (label)\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" nginx 1.22.1 (label)\n"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(FormatHistoryJson(s));
  EXPECT_EQ(j["campaigns"][1]["versions"]["app"], "3f2a9c1");
  EXPECT_EQ(j["campaigns"][1]["labels"]["app"], "3f2a9c1");
  EXPECT_TRUE(j["campaigns"][0]["labels"].empty());
}

TEST(SeriesTest, FiguresAreNamedShortOrAsInReports) {
  EXPECT_EQ(ParseFigure("rps"), Metric::kRps);
  EXPECT_EQ(ParseFigure("cpu"), Metric::kCpuUsPerRequest);
  EXPECT_EQ(ParseFigure("p99"), Metric::kP99Us);
  EXPECT_EQ(ParseFigure("total_cpu_us_per_request"), Metric::kTotalCpuUsPerRequest);
  EXPECT_FALSE(ParseFigure("speed").has_value());
}

}  // namespace
}  // namespace benchlab

// Change points of a series (analysis/regressions.h, docs/history.md): a series built from
// stored windows, searched line by line, and written as text, Markdown and JSON.
#include "analysis/regressions.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace benchlab {
namespace {

WindowRow Window(int64_t id, const std::string& target, int round, double rps,
                 const std::string& version) {
  WindowRow w;
  w.id = id;
  w.target = target;
  w.scenario = "json";
  w.connections = 64;
  w.load_level = "c64";
  w.round = round;
  w.verdict = "valid";
  w.reasons = "[]";
  w.requests = static_cast<uint64_t>(rps);
  w.duration_s = 1;
  w.rps = rps;
  w.cpu_us_per_request = 1e6 / rps;
  w.server_cpu_s = 1;
  w.target_version = version;
  return w;
}

// `campaigns` nightly campaigns of two targets; "app" loses `drop` of its req/s from campaign
// `step` (1-based) on, with version "v2"; "steady" never changes. Five rounds each, ±1% apart.
std::vector<ReportInput> Nightlies(int campaigns, int step, double drop) {
  std::vector<ReportInput> out;
  const double jitter[] = {1.0, 1.01, 0.99, 1.005, 0.995};
  for (int c = 1; c <= campaigns; ++c) {
    ReportInput in;
    in.campaign.id = c;
    in.campaign.name = "nightly-" + std::to_string(c);
    in.campaign.state = "done";
    const double level = c >= step ? 10000 * (1 - drop) : 10000;
    // Campaign-to-campaign wobble of ±0.5%, as a quiet machine shows.
    const double wobble = 1 + 0.005 * ((c % 3) - 1);
    int64_t id = c * 100;
    for (int r = 1; r <= 5; ++r) {
      in.windows.push_back(
          Window(id++, "app", r, level * wobble * jitter[r - 1], c >= step ? "v2" : "v1"));
      in.windows.push_back(Window(id++, "steady", r, 5000 * wobble * jitter[r - 1], "s1"));
    }
    out.push_back(std::move(in));
  }
  return out;
}

TEST(RegressionsTest, AStepIsFoundWhereItIsOnItsLineOnly) {
  const Series s = BuildSeries("nightly", Nightlies(14, 8, 0.10), Metric::kRps);
  const auto changes = FindSeriesChanges(s, {});
  ASSERT_EQ(changes.size(), 1u);
  const SeriesChange& c = changes[0];
  EXPECT_EQ(c.key.target, "app");
  EXPECT_EQ(c.before->name, "nightly-7");
  EXPECT_EQ(c.after->name, "nightly-8");
  EXPECT_EQ(c.point.direction, ChangeDirection::kRegression);
  EXPECT_NEAR(c.point.size.estimate, 0.90, 0.01);
  EXPECT_LT(c.point.size.high, 0.98);
  EXPECT_EQ(c.status, "suspected");

  // CPU per request rises where req/s fell: a regression of a figure better lower.
  const Series cpu = BuildSeries("nightly", Nightlies(14, 8, 0.10), Metric::kCpuUsPerRequest);
  const auto cpu_changes = FindSeriesChanges(cpu, {});
  ASSERT_EQ(cpu_changes.size(), 1u);
  EXPECT_EQ(cpu_changes[0].point.direction, ChangeDirection::kRegression);
  EXPECT_GT(cpu_changes[0].point.size.estimate, 1.1);
}

TEST(RegressionsTest, NoStepNoChangeAndSinceAndFiltersNarrowTheSearch) {
  const Series flat = BuildSeries("nightly", Nightlies(14, 99, 0), Metric::kRps);
  EXPECT_TRUE(FindSeriesChanges(flat, {}).empty());

  const Series s = BuildSeries("nightly", Nightlies(14, 8, 0.10), Metric::kRps);
  ChangeSearch later;
  later.since_id = 9;  // the change was first seen at campaign 8
  EXPECT_TRUE(FindSeriesChanges(s, later).empty());
  later.since_id = 8;
  EXPECT_EQ(FindSeriesChanges(s, later).size(), 1u);
  SeriesFilter steady;
  steady.target = "steady";
  EXPECT_TRUE(FindSeriesChanges(s, {}, steady).empty());
}

TEST(RegressionsTest, MarkdownTextAndJsonNameTheCampaignsVersionsAndSize) {
  const Series s = BuildSeries("nightly", Nightlies(14, 8, 0.10), Metric::kRps);
  const auto changes = FindSeriesChanges(s, {});
  ASSERT_EQ(changes.size(), 1u);
  const std::string md = FormatChangesMarkdown("nightly", changes, 14, "https://lab.example");
  EXPECT_NE(md.find("### benchlab: series `nightly`"), std::string::npos) << md;
  EXPECT_NE(md.find("1 change point(s) in 14 campaign(s): 0 confirmed by re-measurement, 0 "
                    "withdrawn as false alarms"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| v1 -> v2 | suspected | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| json c64 | app | rps | regression | -9.9% ["), std::string::npos) << md;
  EXPECT_NE(md.find("[`nightly-8`](https://lab.example/#/campaigns/nightly-8)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| v1 -> v2 |"), std::string::npos) << md;
  EXPECT_EQ(FormatChangesMarkdown("nightly", {}, 14, ""),
            "### benchlab: series `nightly`\n\nNo change point in 14 campaign(s).\n");

  const std::string text = FormatChangesText("nightly", changes, 14);
  EXPECT_NE(text.find("json c64 app rps: regression, -9.9% ["), std::string::npos) << text;
  EXPECT_NE(text.find("between nightly-7 and nightly-8; versions v1 -> v2; suspected"),
            std::string::npos)
      << text;

  const auto j = nlohmann::json::parse(FormatChangesJson("nightly", changes, 14));
  ASSERT_EQ(j["changes"].size(), 1u);
  const auto& c = j["changes"][0];
  EXPECT_EQ(c["after"], "nightly-8");
  EXPECT_EQ(c["after_id"], 8);
  EXPECT_EQ(c["status"], "suspected");
  EXPECT_EQ(c["direction"], "regression");
  EXPECT_EQ(c["version_before"], "v1");
  EXPECT_EQ(c["version_after"], "v2");
  EXPECT_LT(c["size"]["low"].get<double>(), c["size"]["estimate"].get<double>());
  EXPECT_EQ(c["verdict"], "behind");
  EXPECT_TRUE(c["remeasured"].is_null());
}

// A re-measured change says so in every format: its status, the campaign that measured it, the
// rounds and the interval new / old; a change the lab could not re-measure says why.
TEST(RegressionsTest, EveryFormatShowsWhatReMeasurementShowed) {
  const Series s = BuildSeries("nightly", Nightlies(14, 8, 0.10), Metric::kRps);
  auto changes = FindSeriesChanges(s, {});
  ASSERT_EQ(changes.size(), 1u);
  changes[0].status = "confirmed";
  Remeasurement r;
  r.campaign = "nightly-14-remeasure-1";
  r.old_campaign_id = 6;
  r.new_campaign_id = 14;
  r.rounds = 9;
  r.interval.n = 9;
  r.interval.estimate = 0.9;
  r.interval.low = 0.88;
  r.interval.high = 0.92;
  r.detail = "new/old excludes 1";
  r.id = 31;
  changes[0].remeasured = r;
  EXPECT_TRUE(changes[0].ConfirmedRegression());

  const std::string md = FormatChangesMarkdown("nightly", changes, 14, "https://lab.example");
  EXPECT_NE(md.find("1 confirmed by re-measurement"), std::string::npos) << md;
  EXPECT_NE(md.find("| **confirmed** | -10.0% [-12.0%, -8.0%], 9 rounds "
                    "([`nightly-14-remeasure-1`](https://lab.example/#/campaigns/"
                    "nightly-14-remeasure-1)) |"),
            std::string::npos)
      << md;
  const std::string text = FormatChangesText("nightly", changes, 14, kMaxTextWidth);
  EXPECT_NE(text.find("re-measured by nightly-14-remeasure-1 over 9 round(s): -10.0% [-12.0%, "
                      "-8.0%], confirmed (new/old excludes 1); change 31"),
            std::string::npos)
      << text;
  // At the default width the same words, wrapped: no line over 100 columns, the lines after a
  // paragraph's first indented.
  const std::string wrapped = FormatChangesText("nightly", changes, 14);
  std::string joined;
  size_t start = 0;
  for (size_t end; (end = wrapped.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = wrapped.substr(start, end - start);
    EXPECT_LE(TextColumns(line), 100u) << line;
    joined += line.rfind("    ", 0) == 0 ? " " + line.substr(4) : "\n" + line;
  }
  EXPECT_NE(wrapped, text) << "the paragraph is longer than 100 columns";
  EXPECT_EQ(joined.substr(1) + "\n", text);
  const auto j = nlohmann::json::parse(FormatChangesJson("nightly", changes, 14));
  const auto& m = j["changes"][0]["remeasured"];
  EXPECT_EQ(m["campaign"], "nightly-14-remeasure-1");
  EXPECT_EQ(m["id"], 31);  // what `benchlab bisect --change` takes
  EXPECT_EQ(m["rounds"], 9);
  EXPECT_EQ(m["old_campaign_id"], 6);
  EXPECT_DOUBLE_EQ(m["high"].get<double>(), 0.92);

  changes[0].status = "not measured";
  changes[0].remeasured = Remeasurement{"", 6, 14, 0, {}, "the line runs on a fleet pair"};
  EXPECT_FALSE(changes[0].ConfirmedRegression());
  EXPECT_NE(FormatChangesText("nightly", changes, 14, kMaxTextWidth)
                .find("; not measured: the line runs on a fleet pair"),
            std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(
                  FormatChangesJson("nightly", changes, 14))["changes"][0]["remeasured"]["campaign"]
                  .is_null());
}

// Only the newest change of a line and figure is re-measured: the newest build is compared with
// the build before it.
TEST(RegressionsTest, OnlyTheLastChangeOfALineIsReMeasured) {
  SeriesChange a, b, c;
  a.key = b.key = {"", "json", "c64", "app"};
  c.key = {"", "json", "c64", "steady"};
  a.point.index = 4;
  b.point.index = 9;
  c.point.index = 4;
  SeriesChange cpu = a;
  cpu.metric = Metric::kCpuUsPerRequest;
  EXPECT_EQ(LastChangeOfEachLine({a, b, c, cpu}), (std::vector<size_t>{1, 2, 3}));
}

}  // namespace
}  // namespace benchlab

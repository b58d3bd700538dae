#include "analysis/report_format.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "coordinator/campaign.h"

namespace benchlab {
namespace {

// The worked example of docs/methodology.md: nginx (the baseline) and hello-server, one cell,
// 3 rounds, 5 noise windows of nginx (98,000 to 102,000 req/s: a 4% floor), and hello-server's
// round-2 window measured twice: attempt 1 invalid, attempt 2 valid.
constexpr const char* kSpec = R"(name = "demo"
baseline = "nginx"
[matrix]
connections = [64]
rounds = 3
warmup = "500ms"
duration = "2s"
[noise]
target = "nginx"
scenario = "plaintext"
windows = 5
[[target]]
name = "nginx"
[[target]]
name = "hello-server"
[[scenario]]
name = "plaintext"
path = "/"
expect = { status = 200 }
)";

constexpr const char* kTrickyReason = R"(foreign_cpu: server host 31%, "cron" > 25%)";

WindowRow Window(int64_t id, const std::string& target, int round, int position, double rps,
                 double cpu_us, uint64_t p99_us) {
  WindowRow w;
  w.id = id;
  w.campaign_id = 1;
  w.campaign = "demo";
  w.target = target;
  w.scenario = "plaintext";
  w.connections = 64;
  w.load_level = "c64";
  w.round = round;
  w.position = position;
  w.verdict = "valid";
  w.reasons = "[]";
  w.server_agent = "server";
  w.load_agent = "load";
  w.requests = static_cast<uint64_t>(rps);  // a 1 s interval
  w.duration_s = 1;
  w.rps = rps;
  w.cpu_us_per_request = cpu_us;
  w.server_cpu_s = rps * cpu_us / 1e6;
  w.p50_us = 100;
  w.p99_us = p99_us;
  w.startup_ms = 12;
  w.first_request_ms = 0.4;
  w.idle_rss_kb = 4096;
  w.rss_peak_kb = 8192;
  w.histogram = "h1:test-" + std::to_string(id);
  w.server_host = R"({"cpu_model":"Test CPU","logical_cores":2,"memory_kb":2097152})";
  w.load_host = R"({"cpu_model":"Test CPU","logical_cores":2})";
  return w;
}

ReportInput Fixture() {
  ReportInput in;
  in.campaign.id = 1;
  in.campaign.name = "demo";
  in.campaign.state = "done";
  in.campaign.baseline = "nginx";
  in.campaign.spec_toml = kSpec;
  in.campaign.source = "demo.toml";
  in.campaign.created_at = "2025-03-01T12:00:00Z";
  in.campaign.finished_at = "2025-03-01T12:05:00Z";
  in.campaign.total_windows = 11;
  in.generated_by = "benchlab test";
  const double noise[] = {99000, 101000, 100000, 102000, 98000};
  int64_t id = 1;
  for (int k = 0; k < 5; ++k) {
    WindowRow w = Window(id++, "nginx", 0, k, noise[k], 10, 1500);
    w.noise = 1;
    in.windows.push_back(w);
  }
  in.windows.push_back(Window(id++, "nginx", 1, 0, 100000, 10, 1500));
  in.windows.push_back(Window(id++, "hello-server", 1, 1, 105000, 8, 900));
  WindowRow bad = Window(id++, "hello-server", 2, 0, 50000, 8, 90000);
  bad.verdict = "invalid";
  bad.reasons =
      nlohmann::json::array({kTrickyReason, "selftest_drift: load host +12% > 10%"}).dump();
  in.windows.push_back(bad);
  in.windows.push_back(Window(id++, "nginx", 2, 1, 96000, 12.5, 1600));
  in.windows.push_back(Window(id++, "nginx", 3, 0, 102000, 8, 1700));
  in.windows.push_back(Window(id++, "hello-server", 3, 1, 108120, 6.4, 1000));
  WindowRow rerun = Window(id++, "hello-server", 2, 0, 99840, 10, 950);
  rerun.attempt = 2;
  in.windows.push_back(rerun);
  in.samples[6] = SummariseSamples(
      {{"server", 0.1, 50, 1000}, {"server", 0.2, 70, 3000}, {"load", 0.1, 90, 0, 1000}});
  return in;
}

// The cells of the Markdown table row whose first cell is `first`, trimmed; empty when none.
std::vector<std::string> Row(const std::string& md, const std::string& first) {
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    size_t start = 1;
    for (size_t bar; (bar = line.find(" |", start)) != std::string::npos; start = bar + 2) {
      std::string cell = line.substr(start, bar - start);
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    if (!cells.empty() && cells[0] == first) return cells;
  }
  return {};
}

// RFC 4180 records, for checking the CSV the way a spreadsheet reads it.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = records.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      records.emplace_back(1);
    } else {
      field += c;
    }
  }
  if (records.back().size() == 1 && records.back()[0].empty()) records.pop_back();
  return records;
}

TEST(ReportFormatTest, Numbers) {
  EXPECT_EQ(Thousands(1234567.4), "1,234,567");
  EXPECT_EQ(Thousands(kNaN), "–");
  EXPECT_EQ(Micros(412), "412 µs");
  EXPECT_EQ(Micros(1500), "1.50 ms");
  EXPECT_EQ(Micros(2500000), "2.50 s");
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

TEST(ReportFormatTest, MeasurementFromWindowRow) {
  WindowRow w = Window(3, "nginx", 0, 2, 1000, 10, 50);
  w.noise = 1;
  w.verdict = "invalid";
  const Measurement m = ToMeasurement(w);
  EXPECT_TRUE(m.noise);
  EXPECT_FALSE(m.valid);
  EXPECT_EQ(m.load_level, "c64");
  EXPECT_EQ(m.position, 2);
  EXPECT_DOUBLE_EQ(m.server_cpu_s, 0.01);
  EXPECT_EQ(TargetOrder(Fixture()), (std::vector<std::string>{"nginx", "hello-server"}));
}

TEST(ReportFormatTest, SamplesSummarised) {
  const SampleSummary s = Fixture().samples.at(6);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.server_count, 2);
  EXPECT_DOUBLE_EQ(s.server_cpu_pct_mean, 60);
  EXPECT_DOUBLE_EQ(s.server_cpu_pct_max, 70);
  EXPECT_EQ(s.rss_max_kb, 3000u);
  EXPECT_EQ(SummariseSamples({}).server_count, 0);
}

TEST(ReportFormatTest, MarkdownTableRows) {
  const std::string md = FormatReportMarkdown(Fixture());
  EXPECT_NE(md.find("## plaintext · 64 connections"), std::string::npos) << md;
  const auto header = Row(md, "target");
  ASSERT_EQ(header.size(), 10u) << md;
  EXPECT_EQ(header[1], "req/s (spread)");
  EXPECT_EQ(header[6], "vs nginx (95% CI)");

  const auto base = Row(md, "nginx (baseline)");
  ASSERT_EQ(base.size(), 10u) << md;
  EXPECT_EQ(base[1], "100,000 (6.0%)");
  EXPECT_EQ(base[2], "100 µs");
  EXPECT_EQ(base[3], "1.60 ms");
  EXPECT_EQ(base[4], "10.0");
  EXPECT_EQ(base[5], "100,000");
  EXPECT_EQ(base[6], "—");
  EXPECT_EQ(base[8], "baseline");
  EXPECT_EQ(base[9], "3/3");

  const auto hello = Row(md, "hello-server");
  ASSERT_EQ(hello.size(), 10u) << md;
  EXPECT_EQ(hello[1], "105,000 (7.9%)");
  EXPECT_EQ(hello[3], "950 µs");
  EXPECT_EQ(hello[4], "8.00");
  EXPECT_EQ(hello[5], "125,000");
  // The geometric mean of 1.05, 1.04, 1.06 and its 95% interval, 1.025 to 1.075
  // (tests/unit/analysis/interval_test.cc).
  EXPECT_EQ(hello[6], "1.05× (1.03–1.08)");
  EXPECT_EQ(hello[7], "3/3");
  EXPECT_EQ(hello[8], "ahead");
  EXPECT_EQ(hello[9], "3/3");  // the re-run replaced the invalid attempt
  // CPU per request: 0.8 in every round, against a CPU floor of 0.
  EXPECT_NE(md.find("- hello-server: CPU µs/request 0.80× (0.80–0.80), won 3/3, ahead"),
            std::string::npos)
      << md;
}

// The format's two names, as `benchlab report --format`, GetReport and the API's ?format= take it.
TEST(ReportFormatTest, MdAndMarkdownNameTheSameFormat) {
  auto md = FormatReport(Fixture(), "md");
  auto markdown = FormatReport(Fixture(), "markdown");
  ASSERT_TRUE(md.ok() && markdown.ok()) << markdown.status().message();
  EXPECT_EQ(*md, *markdown);
  EXPECT_EQ(*md, FormatReportMarkdown(Fixture()));
  auto html = FormatReport(Fixture(), "html");
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().message(),
            "format: expected md (or markdown), json or csv, got \"html\"");
}

TEST(ReportFormatTest, MarkdownNoiseMethodAndInvalidWindows) {
  const std::string md = FormatReportMarkdown(Fixture());
  EXPECT_NE(md.find("noise floor (req/s) 4.0%"), std::string::npos) << md;
  const auto floor = Row(md, "req/s");
  ASSERT_EQ(floor.size(), 5u) << md;
  EXPECT_EQ(floor[1], "4.0%");
  EXPECT_EQ(floor[2], "98,000");
  EXPECT_EQ(floor[4], "102,000");
  EXPECT_NE(md.find("5 noise windows of nginx · plaintext · c64"), std::string::npos);
  EXPECT_NE(md.find("*close*"), std::string::npos);  // the legend
  EXPECT_NE(md.find("2025-03-01"), std::string::npos);
  EXPECT_NE(md.find("3 rounds, order rotate"), std::string::npos) << md;
  EXPECT_NE(md.find("warms up for 500 ms and measures 2 s"), std::string::npos) << md;
  EXPECT_NE(md.find("1 re-run attempt"), std::string::npos) << md;
  const auto cpu = Row(md, "cpu_model");
  ASSERT_EQ(cpu.size(), 3u) << md;
  EXPECT_EQ(cpu[1], "Test CPU");
  EXPECT_EQ(Row(md, "memory_kb")[1], "2.00 GiB");

  const auto invalid = Row(md, "8");
  ASSERT_EQ(invalid.size(), 6u) << md;
  EXPECT_EQ(invalid[1], "round 2 · hello-server · plaintext · c64");
  EXPECT_EQ(invalid[2], "1");
  EXPECT_EQ(invalid[3], "invalid");
  EXPECT_EQ(invalid[4], std::string(kTrickyReason) + "; selftest_drift: load host +12% > 10%");
  EXPECT_EQ(invalid[5], "replaced by attempt 2 (valid)");
  EXPECT_NE(md.find("1 of 12 attempts were not valid"), std::string::npos) << md;
}

TEST(ReportFormatTest, MarkdownSummaryCountsInTheSingularAndPlural) {
  ReportInput in = Fixture();
  EXPECT_NE(FormatReportMarkdown(in).find(
                "2 targets, 1 scenario × 1 load level × 3 rounds, order rotated"),
            std::string::npos);
  in.campaign.spec_toml = R"(name = "demo"
baseline = "nginx"
[matrix]
connections = [64]
rounds = 1
[[target]]
name = "nginx"
[[scenario]]
name = "plaintext"
path = "/"
expect = { status = 200 }
)";
  const std::string md = FormatReportMarkdown(in);
  EXPECT_NE(md.find("1 target, 1 scenario × 1 load level × 1 round, order rotated"),
            std::string::npos)
      << md;
}

TEST(ReportFormatTest, MarkdownWithoutNoiseOrBaselineWindows) {
  ReportInput in = Fixture();
  std::erase_if(in.windows, [](const WindowRow& w) { return w.noise || w.target == "nginx"; });
  const std::string md = FormatReportMarkdown(in);
  EXPECT_NE(md.find("No noise floor"), std::string::npos) << md;
  const auto hello = Row(md, "hello-server");
  ASSERT_EQ(hello.size(), 10u) << md;
  EXPECT_EQ(hello[6], "–");
  EXPECT_EQ(hello[8], "n/a");
  EXPECT_TRUE(Row(md, "nginx (baseline)").empty()) << "no window of nginx: no row";
}

TEST(ReportFormatTest, MarkdownListsWarningsOfValidWindows) {
  ReportInput in = Fixture();
  in.campaign.gates_mode = "warn";
  in.windows[5].reasons = R"(["foreign_cpu: load host 40% > 25%"])";
  const std::string md = FormatReportMarkdown(in);
  EXPECT_NE(md.find("**1 valid window carries gate reasons**"), std::string::npos) << md;
  EXPECT_NE(md.find("warn: windows are judged"), std::string::npos) << md;
  EXPECT_NE(md.find("(set by --gates, over the file's [gates] mode)"), std::string::npos) << md;
  const auto warned = Row(md, "6");
  ASSERT_EQ(warned.size(), 6u) << md;
  EXPECT_EQ(warned[3], "valid (warn)");
  EXPECT_EQ(warned[4], "foreign_cpu: load host 40% > 25%");
  EXPECT_EQ(warned[5], "newest: counts");
  EXPECT_EQ(Row(md, "nginx (baseline)")[9], "3/3");  // a warning does not invalidate
}

// The run of record says which mode the windows were judged in, whether --gates or the file set it.
TEST(ReportFormatTest, JsonSaysTheGatesModeInForce) {
  ReportInput in = Fixture();
  in.campaign.gates_mode = "warn";
  auto j = nlohmann::json::parse(FormatReportJson(in));
  EXPECT_EQ(j["campaign"]["gates_mode"], "warn");
  EXPECT_EQ(j["campaign"]["gates_in_force"], "warn");
  in.campaign.gates_mode = "";
  j = nlohmann::json::parse(FormatReportJson(in));
  EXPECT_EQ(j["campaign"]["gates_mode"], "");
  EXPECT_EQ(j["campaign"]["gates_in_force"], "enforce") << "the fixture's file has no [gates] mode";
}

TEST(ReportFormatTest, MarkdownShowsWhatPeersSentEscapedInItsCellAndLine) {
  ReportInput in = Fixture();
  in.campaign.source = "demo.toml\n# Forged heading";
  in.windows[7].reasons = nlohmann::json::array({"target_exited: \"bye\n| 99 | x\x1b[2J\""}).dump();
  for (WindowRow& w : in.windows) {
    w.server_host =
        R"({"cpu_model":"Test CPU\u001b]0;pwned\u0007","hostname":"box\nFAKE","logical_cores":2})";
  }
  const std::string md = FormatReportMarkdown(in);
  for (char c : md) {
    const auto byte = static_cast<unsigned char>(c);
    ASSERT_TRUE(c == '\n' || (byte >= 0x20 && byte != 0x7f)) << "control byte in\n" << md;
  }
  EXPECT_NE(md.find("from `demo.toml\\n# Forged heading`"), std::string::npos) << md;
  EXPECT_EQ(md.find("\n# Forged heading"), std::string::npos) << md;
  const auto invalid = Row(md, "8");
  ASSERT_EQ(invalid.size(), 6u) << md;
  EXPECT_EQ(invalid[4], "target_exited: \"bye\\n\\| 99 \\| x\\x1b[2J\"");
  const auto hostname = Row(md, "hostname");
  ASSERT_FALSE(hostname.empty()) << md;
  EXPECT_EQ(hostname[1], "box\\nFAKE");
  EXPECT_EQ(Row(md, "cpu_model")[1], "Test CPU\\x1b]0;pwned\\x07");
}

TEST(ReportFormatTest, MarkdownFleetCampaignReportsEachPair) {
  ReportInput in = Fixture();
  std::vector<WindowRow> second = in.windows;
  for (WindowRow& w : second) {
    w.pair = "server-2";
    w.id += 100;
  }
  for (WindowRow& w : in.windows) w.pair = "server-1";
  in.windows.insert(in.windows.end(), second.begin(), second.end());
  const std::string md = FormatReportMarkdown(in);
  EXPECT_NE(md.find("## Pair server-1 · plaintext · 64 connections"), std::string::npos) << md;
  EXPECT_NE(md.find("## Pair server-2 · plaintext · 64 connections"), std::string::npos) << md;
  EXPECT_NE(md.find("### Pair server-2"), std::string::npos) << md;
}

TEST(ReportFormatTest, JsonRunOfRecord) {
  const std::string text = FormatReportJson(Fixture());
  const nlohmann::json j = nlohmann::json::parse(text);  // throws when it is not JSON
  EXPECT_EQ(j["format"], "benchlab-run-of-record");
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["stats"]["confidence"], 0.95);
  EXPECT_EQ(j["stats"]["margin"], 0.02);
  EXPECT_EQ(j["stats"]["plan"], "fixed");
  EXPECT_EQ(j["cells"][0]["stopped"], "fixed plan");
  EXPECT_EQ(j["cells"][0]["rounds"], 3);
  EXPECT_EQ(j["spec"], kSpec);
  EXPECT_EQ(j["campaign"]["baseline"], "nginx");
  EXPECT_EQ(j["targets"], nlohmann::json::array({"nginx", "hello-server"}));
  ASSERT_EQ(j["windows"].size(), 11u);  // 5 noise + 6 matrix windows
  int attempts = 0;
  for (const auto& w : j["windows"]) attempts += static_cast<int>(w["attempts"].size());
  EXPECT_EQ(attempts, 12);
  const auto& rerun = j["windows"][7];
  EXPECT_EQ(rerun["target"], "hello-server");
  EXPECT_EQ(rerun["round"], 2);
  ASSERT_EQ(rerun["attempts"].size(), 2u);
  EXPECT_EQ(rerun["attempts"][0]["verdict"], "invalid");
  EXPECT_EQ(rerun["attempts"][0]["newest"], false);
  EXPECT_EQ(rerun["attempts"][0]["reasons"][0], kTrickyReason);
  EXPECT_EQ(rerun["attempts"][1]["newest"], true);
  EXPECT_EQ(rerun["attempts"][1]["histogram"], "h1:test-12");
  const auto& samples = j["windows"][5]["attempts"][0]["samples"];
  EXPECT_EQ(samples["count"], 3);
  EXPECT_EQ(samples["server_cpu_pct_max"], 70.0);
  EXPECT_EQ(samples["rss_max_kb"], 3000);
  EXPECT_TRUE(j["windows"][0]["attempts"][0]["samples"]["server_cpu_pct_mean"].is_null());
  EXPECT_DOUBLE_EQ(j["noise_floor"][0]["metrics"]["rps"]["fraction"].get<double>(), 0.04);
  ASSERT_EQ(j["hosts"].size(), 2u);
  EXPECT_EQ(j["hosts"][0]["facts"]["cpu_model"], "Test CPU");
  EXPECT_EQ(j["hosts"][0]["windows"].size(), 12u);
  const auto& hello = j["cells"][0]["targets"][1];
  EXPECT_EQ(hello["target"], "hello-server");
  const auto& vs = hello["metrics"]["rps"]["vs_baseline"];
  EXPECT_EQ(vs["verdict"], "ahead");
  EXPECT_EQ(vs["interval"]["n"], 3);
  EXPECT_NEAR(vs["interval"]["low"].get<double>(), 1.02542, 1e-5);
  EXPECT_NEAR(vs["interval"]["high"].get<double>(), 1.07511, 1e-5);
  EXPECT_TRUE(vs["rounds_needed"].is_null());
  EXPECT_EQ(vs["noise_rule"]["verdict"], "ahead");
  EXPECT_DOUBLE_EQ(hello["metrics"]["rps"]["vs_baseline"]["ratio"]["median"].get<double>(), 1.05);
}

TEST(ReportFormatTest, SelftestCalibrationsAreShownPerHost) {
  ReportInput in = Fixture();
  SelftestCalibrationRow server;
  server.agent = "server-1";
  server.runs = 7;
  server.median_ms = 41.25;
  server.spread = 0.062;
  server.threshold_pct = 24.8;
  server.threshold_source = "calibrated";
  SelftestCalibrationRow load = server;
  load.agent = "load-1";
  load.spread = std::nullopt;
  load.threshold_pct = 10;
  load.threshold_source = "configured";
  in.calibrations = {load, server};
  const std::string md = FormatReportMarkdown(in);
  const auto row = Row(md, "server-1");
  ASSERT_EQ(row.size(), 6u) << md;
  EXPECT_EQ(row[1], "7");
  EXPECT_EQ(row[2], "41.25 ms");
  EXPECT_EQ(row[3], "6.2%");
  EXPECT_EQ(row[4], "24.8%");
  EXPECT_EQ(row[5], "calibrated");
  EXPECT_EQ(Row(md, "load-1")[3], "–");
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(in));
  ASSERT_EQ(j["selftest_calibrations"].size(), 2u);
  EXPECT_EQ(j["selftest_calibrations"][1]["threshold_pct"], 24.8);
  EXPECT_TRUE(j["selftest_calibrations"][0]["spread"].is_null());
}

TEST(ReportFormatTest, CsvOneRowPerAttemptWithQuoting) {
  const std::string text = FormatReportCsv(Fixture());
  EXPECT_NE(text.find("\"foreign_cpu: server host 31%, \"\"cron\"\" > 25%; selftest_drift"),
            std::string::npos)
      << text;
  const auto records = ParseCsv(text);
  ASSERT_EQ(records.size(), 13u);  // the header and 12 attempts
  const auto& header = records[0];
  auto col = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  for (const auto& r : records) ASSERT_EQ(r.size(), header.size());
  const auto& bad = records[8];
  EXPECT_EQ(bad[col("id")], "8");
  EXPECT_EQ(bad[col("verdict")], "invalid");
  EXPECT_EQ(bad[col("reasons")],
            std::string(kTrickyReason) + "; selftest_drift: load host +12% > 10%");
  EXPECT_EQ(bad[col("newest")], "0");
  EXPECT_EQ(records[12][col("attempt")], "2");
  EXPECT_EQ(records[12][col("newest")], "1");
  EXPECT_EQ(records[6][col("rps")], "100000");
  EXPECT_EQ(records[6][col("requests_per_cpu_s")], "100000");
  EXPECT_EQ(records[6][col("samples")], "3");
  EXPECT_EQ(records[1][col("noise")], "1");
  EXPECT_EQ(records[1][col("server_cpu_pct_mean")], "");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// benchlab's generator and wrk on the same cell: hello-server measured by both in rounds 1 and
// 2, nginx (the baseline) only by benchlab; wrk reports no p99.9 and no histogram.
ReportInput ToolsFixture() {
  ReportInput in;
  in.campaign.id = 1;
  in.campaign.name = "demo";
  in.campaign.state = "done";
  in.campaign.baseline = "nginx";
  in.campaign.spec_toml =
      std::string(kSpec).replace(std::string(kSpec).find("[noise]"), std::string("[noise]").size(),
                                 "[load]\ntool = [\"benchlab\", \"wrk\"]\n[noise]");
  in.campaign.source = "demo.toml";
  in.campaign.total_windows = 8;
  int64_t id = 1;
  const double mine[] = {105000, 110000}, wrk[] = {100000, 100000};
  for (int round = 1; round <= 2; ++round) {
    in.windows.push_back(Window(id++, "nginx", round, 0, 90000, 10, 1500));
    in.windows.push_back(Window(id++, "hello-server", round, 1, mine[round - 1], 8, 900));
    WindowRow t = Window(id++, "hello-server", round, 3, wrk[round - 1], 8.5, 1000);
    t.load_level = "c64@wrk";
    t.histogram = "";
    t.p50_us = 0;  // stored as 0, listed unavailable
    t.load_record = R"({"tool":"wrk","unavailable":["p50_us","p999_us","histogram"]})";
    in.windows.push_back(t);
  }
  return in;
}

TEST(ReportFormatTest, AnExternalToolIsComparedRoundByRound) {
  const std::string md = FormatReportMarkdown(ToolsFixture());
  EXPECT_NE(md.find("## benchlab against wrk"), std::string::npos) << md;
  EXPECT_NE(md.find("### plaintext · 64 connections · benchlab against wrk"), std::string::npos);
  // Round ratios 1.05 and 1.10: median 1.075 (1.0750000000000002 in binary: "1.08×").
  const auto row = Row(md.substr(md.find("## benchlab against wrk")), "hello-server");
  ASSERT_EQ(row.size(), 9u) << md;
  EXPECT_EQ(row[1], "107,500");
  EXPECT_EQ(row[2], "100,000");
  EXPECT_EQ(row[3], "1.08× (1.05–1.10)");
  EXPECT_EQ(row[4], "2");
  // The wrk cell's own table shows its p50 as unavailable, not 0 µs.
  EXPECT_NE(md.find("## plaintext · 64 connections, wrk"), std::string::npos);
  EXPECT_EQ(md.find("| 0 µs"), std::string::npos) << md;

  const auto json = nlohmann::json::parse(FormatReportJson(ToolsFixture()));
  ASSERT_EQ(json["load_tools"].size(), 1u);
  const auto& cell = json["load_tools"][0];
  EXPECT_EQ(cell["tool"], "wrk");
  EXPECT_EQ(cell["load_level"], "c64");
  ASSERT_EQ(cell["targets"].size(), 1u);
  EXPECT_DOUBLE_EQ(cell["targets"][0]["ratio"]["median"].get<double>(), 1.075);
  EXPECT_EQ(cell["targets"][0]["rounds"].size(), 2u);
}

TEST(ReportFormatTest, AWindowReRunLaterIsLeftOutOfTheToolRatio) {
  // The first pass puts a round's two windows 10 s apart; round 2's benchlab window was invalid
  // and re-run ten minutes later, on a machine in another state: its round is listed apart.
  ReportInput in = ToolsFixture();
  for (WindowRow& w : in.windows) {
    char at[32];
    std::snprintf(at, sizeof at, "2026-11-30T10:%02d:%02d.000Z", w.round * 2, w.position * 5);
    w.started_at = at;
  }
  WindowRow rerun;
  for (WindowRow& w : in.windows) {
    if (w.round == 2 && w.target == "hello-server" && w.load_level == "c64") {
      rerun = w;
      w.verdict = "invalid";
      w.reasons = R"(["selftest_drift: load host +40% > 25%"])";
    }
  }
  rerun.id = 100;
  rerun.attempt = 2;
  rerun.started_at = "2026-11-30T10:14:15.500Z";  // 600.5 s after the wrk window of round 2
  in.windows.push_back(rerun);

  const std::string md = FormatReportMarkdown(in);
  const auto row = Row(md.substr(md.find("## benchlab against wrk")), "hello-server");
  ASSERT_EQ(row.size(), 9u) << md;
  EXPECT_EQ(row[3], "1.05×");  // round 1 alone
  EXPECT_EQ(row[4], "1 (+1 apart)");
  EXPECT_NE(md.find("- hello-server, round 2: 1.10×, its two windows started 600 s apart (a "
                    "re-run): not in the ratio."),
            std::string::npos)
      << md;

  const auto json = nlohmann::json::parse(FormatReportJson(in));
  const auto& target = json["load_tools"][0]["targets"][0];
  EXPECT_EQ(target["ratio"]["n"], 1);
  ASSERT_EQ(target["rounds"].size(), 1u);
  EXPECT_EQ(target["rounds"][0]["round"], 1);
  EXPECT_DOUBLE_EQ(target["rounds"][0]["gap_s"].get<double>(), 10);
  ASSERT_EQ(target["rounds_apart"].size(), 1u);
  EXPECT_EQ(target["rounds_apart"][0]["round"], 2);
  EXPECT_DOUBLE_EQ(target["rounds_apart"][0]["gap_s"].get<double>(), 600.5);

  // Both windows re-run together, as close as the first pass put them: back in the ratio.
  for (WindowRow& w : in.windows) {
    if (w.id == 100) w.started_at = "2026-11-30T10:13:58.000Z";
  }
  WindowRow wrk_rerun;
  for (const WindowRow& w : in.windows) {
    if (w.round == 2 && w.load_level == "c64@wrk") wrk_rerun = w;
  }
  wrk_rerun.id = 101;
  wrk_rerun.attempt = 2;
  wrk_rerun.started_at = "2026-11-30T10:14:06.000Z";
  in.windows.push_back(wrk_rerun);
  const auto again = nlohmann::json::parse(FormatReportJson(in));
  EXPECT_EQ(again["load_tools"][0]["targets"][0]["ratio"]["n"], 2);
  EXPECT_TRUE(again["load_tools"][0]["targets"][0]["rounds_apart"].empty());
}

TEST(ReportFormatTest, WithoutExternalToolsThereIsNoToolSection) {
  EXPECT_EQ(FormatReportMarkdown(Fixture()).find("benchlab against"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(FormatReportJson(Fixture()))["load_tools"].empty());
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

TEST(ReportFormatTest, ResponsesOverTheBodyLimitAreAnErrorClassOfTheirOwn) {
  ReportInput in = Fixture();
  in.windows[5].errors_body_too_large = 7;
  in.windows[5].errors = 7;
  const auto json = nlohmann::json::parse(FormatReportJson(in));
  int with_errors = 0;
  for (const auto& window : json["windows"]) {
    for (const auto& attempt : window["attempts"]) {
      const bool that_one = attempt["id"] == in.windows[5].id;
      EXPECT_EQ(attempt["errors_body_too_large"], that_one ? 7 : 0);
      with_errors += that_one;
    }
  }
  EXPECT_EQ(with_errors, 1);
  const auto records = ParseCsv(FormatReportCsv(in));
  const auto& header = records[0];
  const auto col =
      std::find(header.begin(), header.end(), "errors_body_too_large") - header.begin();
  ASSERT_LT(static_cast<size_t>(col), header.size());
  EXPECT_EQ(records[6][col], "7");
  EXPECT_EQ(records[1][col], "0");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

TEST(ReportFormatTest, ASpecStoredBeforeRedactionIsRedactedInTheRunOfRecord) {
  ReportInput in = Fixture();
  std::string spec = kSpec;
  spec.replace(spec.find("name = \"nginx\"\n"), 15,
               "name = \"nginx\"\nenv = { API_TOKEN = \"s3cr3t-value\" }\n");
  in.campaign.spec_toml = spec;
  const std::string json = FormatReportJson(in);
  EXPECT_EQ(json.find("s3cr3t-value"), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find(RedactedEnvValue("s3cr3t-value")), std::string::npos);
}

// The worked example with a database beside each target (docs/services.md): nginx's costs 2 us
// per request in every window, hello-server's 1, 1.5 and 1.2 us in rounds 1, 2 and 3. The
// invalid first attempt of hello-server's round 2 ran without it.
ReportInput ServicesFixture() {
  ReportInput in = Fixture();
  for (const WindowRow& w : in.windows) {
    if (w.id == 8) continue;
    const double us = w.target == "nginx" ? 2 : w.round == 1 ? 1 : w.round == 2 ? 1.5 : 1.2;
    in.services_cpu_s[w.id] = static_cast<double>(w.requests) * us / 1e6;
  }
  return in;
}

TEST(ReportFormatTest, WithoutServicesNoReportMentionsThem) {
  const ReportInput in = Fixture();
  const std::string md = FormatReportMarkdown(in);
  EXPECT_EQ(md.find("services"), std::string::npos) << md;
  EXPECT_EQ(md.find("total CPU"), std::string::npos) << md;
  const std::string json = FormatReportJson(in);
  EXPECT_EQ(json.find("service"), std::string::npos);
  EXPECT_EQ(json.find("total_cpu_us_per_request"), std::string::npos);
  const std::string csv = FormatReportCsv(in);
  EXPECT_EQ(csv.find("service"), std::string::npos) << csv.substr(0, csv.find('\n'));
  EXPECT_EQ(csv.substr(0, csv.find('\n')).find("total_cpu"), std::string::npos);
}

TEST(ReportFormatTest, MarkdownShowsTheServicesCpuAndTheTotalPerTarget) {
  const std::string md = FormatReportMarkdown(ServicesFixture());
  EXPECT_NE(md.find("CPU per request with the side services"), std::string::npos) << md;
  const auto header = Row(md, "target");  // the first table's header: unchanged
  ASSERT_EQ(header.size(), 10u) << md;
  const std::string services = md.substr(md.find("CPU per request with the side services"));
  const auto columns = Row(services, "target");
  ASSERT_EQ(columns.size(), 7u) << md;
  EXPECT_EQ(columns[1], "target CPU µs/req");
  EXPECT_EQ(columns[2], "services CPU µs/req");
  EXPECT_EQ(columns[3], "total CPU µs/req");
  EXPECT_EQ(columns[4], "total vs nginx (95% CI)");
  const auto base = Row(services, "nginx (baseline)");
  ASSERT_EQ(base.size(), 7u) << md;
  // nginx: 10, 12.5 and 8 us of its own, 2 of its database's: totals 12, 14.5, 10 -> 12.
  EXPECT_EQ(base[1], "10.0");
  EXPECT_EQ(base[2], "2.00");
  EXPECT_EQ(base[3], "12.0");
  EXPECT_EQ(base[4], "—");
  EXPECT_EQ(base[6], "baseline");
  const auto hello = Row(services, "hello-server");
  ASSERT_EQ(hello.size(), 7u) << md;
  // hello-server: 8, 10 and 6.4 us, its database 1, 1.5 and 1.2: totals 9, 11.5, 7.6 -> 9.
  EXPECT_EQ(hello[1], "8.00");
  EXPECT_EQ(hello[2], "1.20");
  EXPECT_EQ(hello[3], "9.00");
  // Round ratios 9/12, 11.5/14.5, 7.6/10: geometric mean 0.767, 95% CI 0.714 to 0.825.
  EXPECT_EQ(hello[4], "0.77× (0.71–0.83)");
  EXPECT_EQ(hello[5], "3/3");
  EXPECT_EQ(hello[6], "ahead");
  // The services' own ratios 0.5, 0.75, 0.6: 0.61 (0.37 to 1.01), beside the target's CPU.
  EXPECT_NE(md.find("- hello-server: CPU µs/request 0.80× (0.80–0.80), won 3/3, ahead; services "
                    "CPU µs/request 0.61× (0.37–1.01), won 3/3, inconclusive"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- Side services (docs/services.md)"), std::string::npos) << md;
  // The noise windows (nginx's, with its database) give the services' figures a floor too.
  const auto floor = Row(md, "total CPU µs/request");
  ASSERT_EQ(floor.size(), 5u) << md;
  EXPECT_EQ(floor[1], "0.0%");
  EXPECT_EQ(floor[3], "12.0");
}

TEST(ReportFormatTest, JsonHasTheServicesFiguresOnlyWhereThereAreServices) {
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(ServicesFixture()));
  const auto& hello = j["cells"][0]["targets"][1]["metrics"];
  EXPECT_NEAR(hello["service_cpu_us_per_request"]["median"].get<double>(), 1.2, 1e-9);
  EXPECT_NEAR(hello["total_cpu_us_per_request"]["median"].get<double>(), 9, 1e-9);
  const auto& vs = hello["total_cpu_us_per_request"]["vs_baseline"];
  EXPECT_EQ(vs["verdict"], "ahead");
  EXPECT_EQ(vs["rounds_won"], 3);
  EXPECT_NEAR(vs["interval"]["estimate"].get<double>(), 0.767482, 1e-6);
  EXPECT_NEAR(j["noise_floor"][0]["metrics"]["total_cpu_us_per_request"]["fraction"].get<double>(),
              0, 1e-9);
  // hello-server's round 2: the invalid attempt ran without services, its re-run with them.
  const auto& rerun = j["windows"][7]["attempts"];
  ASSERT_EQ(rerun.size(), 2u);
  EXPECT_FALSE(rerun[0].contains("services_cpu_s"));
  EXPECT_FALSE(rerun[0].contains("total_cpu_us_per_request"));
  EXPECT_NEAR(rerun[1]["services_cpu_s"].get<double>(), 99840 * 1.5 / 1e6, 1e-12);
  EXPECT_NEAR(rerun[1]["service_cpu_us_per_request"].get<double>(), 1.5, 1e-9);
  EXPECT_NEAR(rerun[1]["total_cpu_us_per_request"].get<double>(), 11.5, 1e-9);
}

TEST(ReportFormatTest, CsvHasTheServicesColumnsInACampaignWithServices) {
  const auto records = ParseCsv(FormatReportCsv(ServicesFixture()));
  ASSERT_EQ(records.size(), 13u);
  const auto& header = records[0];
  ASSERT_GE(header.size(), 3u);
  EXPECT_EQ(header[header.size() - 3], "services_cpu_s");
  EXPECT_EQ(header[header.size() - 2], "service_cpu_us_per_request");
  EXPECT_EQ(header[header.size() - 1], "total_cpu_us_per_request");
  for (const auto& r : records) ASSERT_EQ(r.size(), header.size());
  const size_t n = header.size();
  // id 7: hello-server round 1, 105000 requests, 1 us each in its database: 0.105 s.
  EXPECT_EQ(records[7][0], "7");
  EXPECT_NEAR(std::stod(records[7][n - 3]), 0.105, 1e-12);
  EXPECT_NEAR(std::stod(records[7][n - 2]), 1, 1e-9);
  EXPECT_NEAR(std::stod(records[7][n - 1]), 9, 1e-9);
  // id 8 ran without services: empty, not 0.
  EXPECT_EQ(records[8][0], "8");
  EXPECT_EQ(records[8][n - 3], "");
  EXPECT_EQ(records[8][n - 2], "");
  EXPECT_EQ(records[8][n - 1], "");
}

// The campaign "demo" of kSpec, done, with its two targets and one scenario, in `store`.
Result<int64_t> CreateDemoCampaign(Store& store) {
  CampaignRow c;
  c.name = "demo";
  c.baseline = "nginx";
  c.spec_toml = kSpec;
  c.source = "demo.toml";
  c.state = "done";
  return store.CreateCampaign(c, {{"nginx", "[]", ""}, {"hello-server", "[]", ""}},
                              {{"plaintext", "scenario", "GET", "/", 200, ""}});
}

// A profiled campaign's report has each target against the baseline, per cell, by function; an
// unprofiled one says nothing of profiles.
TEST(ReportFormatTest, AProfiledCampaignShowsWhereTheTargetsCpuDiffers) {
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto campaign = CreateDemoCampaign(**store);
  ASSERT_TRUE(campaign.ok()) << campaign.status().message();
  auto profile = [](const std::string& folded) {
    auto parsed = ParseFolded(folded);
    EXPECT_TRUE(parsed.ok());
    auto packed = CompressFolded(*parsed);
    EXPECT_TRUE(packed.ok());
    return ProfileRow{0, 99, parsed->samples(), *packed, ""};
  };
  for (int round = 1; round <= 2; ++round) {
    // nginx 10 µs per request (parse 2), hello-server 8 µs (parse 0.8).
    WindowRow a = Window(0, "nginx", round, 0, 10000, 10, 1000);
    a.campaign_id = *campaign;
    WindowRow b = Window(0, "hello-server", round, 1, 10000, 8, 900);
    b.campaign_id = *campaign;
    ASSERT_TRUE(
        (*store)
            ->InsertWindow(a, {}, {}, {}, profile("nginx;main;parse 20\nnginx;main;io 80\n"))
            .ok());
    ASSERT_TRUE(
        (*store)
            ->InsertWindow(b, {}, {}, {}, profile("hello;main;parse 10\nhello;main;io 90\n"))
            .ok());
  }
  auto input = LoadReportInput(**store, "demo");
  ASSERT_TRUE(input.ok()) << input.status().message();
  ASSERT_TRUE(input->profiled);
  ASSERT_EQ(input->profile_diffs.size(), 1u);
  const std::string md = FormatReportMarkdown(*input);
  EXPECT_NE(md.find("## CPU profiles\n"), std::string::npos) << md;
  EXPECT_NE(md.find("#### plaintext/c64: hello-server against nginx"), std::string::npos) << md;
  // parse: 2 -> 0.8 µs; io: 8 -> 7.2 µs.
  EXPECT_NE(md.find("| parse | -1.20 |"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(*input));
  ASSERT_TRUE(j.contains("profiles"));
  EXPECT_EQ(j["profiles"]["diffs"][0]["new"], "hello-server");
  EXPECT_NEAR(j["profiles"]["diffs"][0]["delta_us"].get<double>(), -2, 1e-9);

  // The same campaign unprofiled: no section, no key.
  ReportInput plain = *input;
  plain.profiled = false;
  plain.profile_diffs.clear();
  EXPECT_EQ(FormatReportMarkdown(plain).find("CPU profiles"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(FormatReportJson(plain)).contains("profiles"));
}

// The report reads the services' CPU from the store, summed over each window's services.
TEST(ReportFormatTest, TheStoredServicesOfEachWindowAreSummed) {
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto campaign = CreateDemoCampaign(**store);
  ASSERT_TRUE(campaign.ok()) << campaign.status().message();
  ServiceRow pg;
  pg.service = "pg";
  pg.cpu_user_s = 0.03;
  pg.cpu_sys_s = 0.01;
  pg.cpu_accounting = "cgroup";
  ServiceRow cache = pg;
  cache.service = "cache";
  cache.cpu_user_s = 0.006;
  cache.cpu_sys_s = 0.004;
  WindowRow with = Window(0, "hello-server", 1, 1, 10000, 8, 900);
  with.campaign_id = *campaign;
  WindowRow without = Window(0, "nginx", 1, 0, 10000, 10, 1000);
  without.campaign_id = *campaign;
  auto with_id = (*store)->InsertWindow(with, {}, {pg, cache});
  auto without_id = (*store)->InsertWindow(without, {});
  ASSERT_TRUE(with_id.ok() && without_id.ok());
  auto input = LoadReportInput(**store, "demo");
  ASSERT_TRUE(input.ok()) << input.status().message();
  ASSERT_EQ(input->services_cpu_s.size(), 1u);
  // 0.03 + 0.01 + 0.006 + 0.004 = 0.05 s over 10000 requests: 5 us each, 13 us with the target.
  EXPECT_NEAR(input->services_cpu_s.at(*with_id), 0.05, 1e-12);
  EXPECT_FALSE(input->services_cpu_s.count(*without_id));
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(*input));
  const auto& hello = j["cells"][0]["targets"][1];
  ASSERT_EQ(hello["target"], "hello-server");
  EXPECT_NEAR(hello["metrics"]["service_cpu_us_per_request"]["median"].get<double>(), 5, 1e-9);
  EXPECT_NEAR(hello["metrics"]["total_cpu_us_per_request"]["median"].get<double>(), 13, 1e-9);
  // nginx ran without services: no figure (n 0, its window left out), never a 0.
  const auto& nginx = j["cells"][0]["targets"][0]["metrics"]["total_cpu_us_per_request"];
  EXPECT_EQ(nginx["n"], 0);
  EXPECT_TRUE(nginx["median"].is_null());
}

}  // namespace
}  // namespace benchlab

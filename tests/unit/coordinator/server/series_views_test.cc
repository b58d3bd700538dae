// What `benchlab history` and `benchlab regressions` print, made from a store by the functions both
// the command (--db) and the coordinator (GetHistory, GetRegressions) call
// (coordinator/server/series_views.h): the forms, the filters, the errors and the field each names,
// and a regression counted as confirmed only once its re-measurement is recorded.
#include "coordinator/server/series_views.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/series.h"
#include "common/text_table.h"
#include "coordinator/server/series_store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSeriesSpec = R"(name = "nightly"
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

// Campaigns nightly-1 .. nightly-10 of the series "nightly": nginx steady at 10,000 req/s, app at
// 12,000 until nightly-5 and at 9,000 from nightly-6 on (a regression of req/s), three valid
// rounds each in the one cell hello/c8.
class SeriesViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_series_views_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "lab.db").string());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    for (int c = 1; c <= 10; ++c) {
      CampaignRow row;
      row.name = "nightly-" + std::to_string(c);
      row.series = "nightly";
      row.baseline = "nginx";
      row.spec_toml = kSeriesSpec;
      row.source = "nightly.toml";
      row.total_windows = 6;
      row.state = "done";
      auto id = store_->CreateCampaign(row, {{"nginx", "[]", ""}, {"app", "[]", ""}},
                                       {{"hello", "scenario", "GET", "/", 200, ""}});
      ASSERT_TRUE(id.ok()) << id.status().message();
      for (int round = 1; round <= 3; ++round) {
        for (const char* target : {"nginx", "app"}) {
          const bool app = target == std::string("app");
          const double rps = (app ? (c <= 5 ? 12000 : 9000) : 10000) + 10 * round;
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
          auto window = store_->InsertWindow(w, {});
          ASSERT_TRUE(window.ok()) << window.status().message();
        }
      }
    }
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  // The re-measurement of the series' one change (rps), recorded as a coordinator records it:
  // confirmed, new / old 0.75 [0.73, 0.77] over 6 rounds. Its confirmations row's id.
  Result<int64_t> RecordConfirmedChange() {
    auto stored = LoadStoredSeries(*store_, "nightly");
    if (!stored.ok()) return stored.status();
    const Series series = BuildSeries("nightly", stored->inputs, Metric::kRps);
    auto found = FindStoredSeriesChanges(*store_, series, {});
    if (!found.ok()) return found.status();
    if (found->size() != 1) return Status::Internal("expected one change");
    const SeriesChange& change = found->front();
    ConfirmationRow row;
    row.series = "nightly";
    row.pair = change.key.pair;
    row.scenario = change.key.scenario;
    row.load_level = change.key.load_level;
    row.target = change.key.target;
    row.figure = "rps";
    row.after_campaign_id = change.after->id;
    row.old_campaign_id = change.old_build->id;
    row.new_campaign_id = stored->campaigns.back().id;
    row.campaign = "nightly-10-remeasure-1";
    row.status = "confirmed";
    row.estimate = 0.75;
    row.low = 0.73;
    row.high = 0.77;
    row.rounds = 6;
    row.detail = "decided";
    return store_->RecordConfirmation(row);
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(SeriesViewsTest, HistoryIsWrittenInEachFormFilteredAndAtItsWidth) {
  HistoryQuery query;
  query.series = "nightly";
  auto text = HistoryText(*store_, query);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->rfind("series nightly: 10 campaign(s), rps (higher is better)", 0), 0u) << *text;
  EXPECT_NE(text->find("hello c8 app"), std::string::npos) << *text;
  EXPECT_NE(text->find("hello c8 nginx"), std::string::npos) << *text;

  query.format = "json";
  query.figure = "cpu";
  query.target = "app";
  auto json_text = HistoryText(*store_, query);
  ASSERT_TRUE(json_text.ok()) << json_text.status().message();
  const nlohmann::json json = nlohmann::json::parse(*json_text);
  EXPECT_EQ(json["figure"], "cpu_us_per_request");
  ASSERT_EQ(json["lines"].size(), 1u);
  EXPECT_EQ(json["lines"][0]["target"], "app");
  EXPECT_EQ(json["lines"][0]["points"].size(), 10u);

  query.format = "md";
  auto md = HistoryText(*store_, query);
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->rfind("### ", 0), 0u) << *md;

  // The text fits the width asked for.
  query = HistoryQuery{};
  query.series = "nightly";
  query.width = 60;
  auto narrow = HistoryText(*store_, query);
  ASSERT_TRUE(narrow.ok());
  size_t start = 0;
  while (start < narrow->size()) {
    const size_t end = narrow->find('\n', start);
    const std::string line = narrow->substr(start, end - start);
    EXPECT_LE(TextColumns(line), 60u) << line;
    start = end == std::string::npos ? narrow->size() : end + 1;
  }
  query.width = 200;
  auto wide = HistoryText(*store_, query);
  ASSERT_TRUE(wide.ok());
  EXPECT_NE(*narrow, *wide);
}

TEST_F(SeriesViewsTest, HistoryErrorsNameTheOptionOrTheRequestsField) {
  HistoryQuery query;
  query.series = "nighty";
  auto missing = HistoryText(*store_, query, "lab.db");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "no series \"nighty\" in lab.db (series: nightly)");

  struct Case {
    void (*change)(HistoryQuery&);
    std::string option, field;
  };
  const Case cases[] = {
      {[](HistoryQuery& q) { q.series = "Nightly"; }, "series: expected a name", ""},
      {[](HistoryQuery& q) { q.cell = "/c8"; }, "--cell: expected SCENARIO or SCENARIO/LEVEL",
       "cell: expected SCENARIO or SCENARIO/LEVEL"},
      {[](HistoryQuery& q) { q.cell = "hello/"; }, "--cell: expected", "cell: expected"},
      {[](HistoryQuery& q) { q.target = std::string(300, 'a'); },
       "--target: expected at most 256 bytes, got 300", "target: expected at most 256 bytes"},
      {[](HistoryQuery& q) { q.figure = "speed"; }, "--figure: expected rps, cpu, p99",
       "figure: expected rps, cpu, p99"},
      {[](HistoryQuery& q) { q.format = "html"; }, "--format: expected text, md or json",
       "format: expected text, md or json"},
      {[](HistoryQuery& q) { q.width = 39; }, "--width: expected 40 to 1000 columns, got 39",
       "width: expected 40 to 1000 columns, got 39"},
      {[](HistoryQuery& q) { q.width = 1001; }, "--width: expected 40 to 1000", "width: expected"},
  };
  for (const Case& c : cases) {
    HistoryQuery bad;
    bad.series = "nightly";
    c.change(bad);
    const Status options = CheckHistoryQuery(bad);
    EXPECT_EQ(options.code(), StatusCode::kInvalidArgument) << c.option;
    EXPECT_EQ(options.message().rfind(c.option, 0), 0u) << options.message();
    const Status request = CheckHistoryQuery(bad, QueryFields::kRequest);
    EXPECT_EQ(request.message().rfind(c.field.empty() ? c.option : c.field, 0), 0u)
        << request.message();
    // HistoryText checks the same, before it reads anything.
    EXPECT_EQ(HistoryText(*store_, bad).status().message(), options.message());
  }
}

TEST_F(SeriesViewsTest, ARegressionCountsAsConfirmedOnlyOnceItsReMeasurementSaysSo) {
  RegressionsQuery query;
  query.series = "nightly";
  query.figures = {"rps"};
  query.format = "json";
  auto suspected = RegressionsText(*store_, query);
  ASSERT_TRUE(suspected.ok()) << suspected.status().message();
  const nlohmann::json changes = nlohmann::json::parse(suspected->text)["changes"];
  ASSERT_EQ(changes.size(), 1u) << suspected->text;
  EXPECT_EQ(changes[0]["target"], "app");
  EXPECT_EQ(changes[0]["status"], "suspected");
  EXPECT_FALSE(suspected->confirmed_regression);

  // The re-measurement of that change, recorded as a coordinator records it.
  auto change_id = RecordConfirmedChange();
  ASSERT_TRUE(change_id.ok()) << change_id.status().message();

  auto confirmed = RegressionsText(*store_, query);
  ASSERT_TRUE(confirmed.ok()) << confirmed.status().message();
  EXPECT_EQ(nlohmann::json::parse(confirmed->text)["changes"][0]["status"], "confirmed");
  EXPECT_TRUE(confirmed->confirmed_regression);

  // In every form; --since after the change leaves it out.
  for (const char* format : {"text", "md"}) {
    query.format = format;
    auto view = RegressionsText(*store_, query);
    ASSERT_TRUE(view.ok());
    EXPECT_TRUE(view->confirmed_regression) << format;
    EXPECT_NE(view->text.find("confirmed"), std::string::npos) << view->text;
  }
  query.since = "nightly-7";
  auto later = RegressionsText(*store_, query);
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->confirmed_regression) << later->text;
}

TEST_F(SeriesViewsTest, AConfirmedChangeShowsTheNewestBisectionOfIt) {
  RegressionsQuery query;
  query.series = "nightly";
  query.figures = {"rps"};
  query.format = "json";
  auto change_id = RecordConfirmedChange();
  ASSERT_TRUE(change_id.ok()) << change_id.status().message();

  // Not bisected yet: no bisection in any form.
  auto before = RegressionsText(*store_, query);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(nlohmann::json::parse(before->text)["changes"][0].contains("bisection"));

  // An older search that stopped, and a newer one that found the commit.
  BisectionRow older;
  older.good_oid = std::string(40, 'a');
  older.bad_oid = std::string(40, 'b');
  older.target = "app";
  older.cell = "json/c64";
  older.figure = "rps";
  older.commits = 10;
  older.change_id = *change_id;
  ASSERT_TRUE(store_->CreateBisection(older).ok());
  BisectionRow newer = older;
  auto newer_id = store_->CreateBisection(newer);
  ASSERT_TRUE(newer_id.ok()) << newer_id.status().message();
  BisectStepRow step;
  step.bisection_id = *newer_id;
  step.oid = std::string(40, 'c');
  step.subject = "Parse headers twice";
  step.decision = "bad";
  step.position = 5;
  ASSERT_TRUE(store_->AppendBisectStep(step).ok());
  newer.id = *newer_id;
  newer.state = "found";
  newer.culprit = step.oid;
  newer.size = 0.8;
  newer.size_low = 0.75;
  newer.size_high = 0.85;
  ASSERT_TRUE(store_->UpdateBisection(newer).ok());

  const std::string line =
      "culprit: cccccccccccc 'Parse headers twice', -20.0% [-25.0%, -15.0%] "
      "req/s (bisection " +
      std::to_string(*newer_id) + ", 1 commit measured)";
  auto json = RegressionsText(*store_, query);
  ASSERT_TRUE(json.ok()) << json.status().message();
  const nlohmann::json b = nlohmann::json::parse(json->text)["changes"][0]["bisection"];
  EXPECT_EQ(b["id"], *newer_id);
  EXPECT_EQ(b["state"], "found");
  EXPECT_EQ(b["culprit_subject"], "Parse headers twice");
  EXPECT_EQ(b["steps"], 1);
  EXPECT_EQ(b["line"], line);
  query.format = "md";
  auto md = RegressionsText(*store_, query);
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->text.find("### Bisections\n\n- **"), std::string::npos) << md->text;
  EXPECT_NE(md->text.find("change " + std::to_string(*change_id) + "**: " + line),
            std::string::npos)
      << md->text;
  query.format = "text";
  auto text = RegressionsText(*store_, query);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->text.find(": " + line + "\n"), std::string::npos) << text->text;
}

TEST_F(SeriesViewsTest, RegressionsErrorsNameTheOptionOrTheRequestsField) {
  RegressionsQuery query;
  query.series = "nightly";
  query.since = "other";
  auto unknown = RegressionsText(*store_, query);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "--since: no campaign \"other\" in series \"nightly\"");

  struct Case {
    void (*change)(RegressionsQuery&);
    std::string option, field;
  };
  const Case cases[] = {
      {[](RegressionsQuery& q) { q.since = "Nightly-1"; }, "--since: expected a campaign's name",
       "since: expected a campaign's name"},
      {[](RegressionsQuery& q) { q.figures = {}; }, "--figure: expected 1 to 16 figures, got 0",
       "figures: expected 1 to 16 figures, got 0"},
      {[](RegressionsQuery& q) { q.figures = std::vector<std::string>(17, "rps"); },
       "--figure: expected 1 to 16 figures, got 17", "figures: expected 1 to 16"},
      {[](RegressionsQuery& q) {
         q.figures = {"rps", "speed"};
       },
       "--figure: expected rps, cpu", "figures: expected rps, cpu"},
      {[](RegressionsQuery& q) { q.format = "csv"; }, "--format: expected text, md or json",
       "format: expected"},
      {[](RegressionsQuery& q) { q.dashboard = "https://lab/\n"; },
       "--dashboard: expected a URL without control characters", "dashboard: expected a URL"},
      {[](RegressionsQuery& q) { q.dashboard = std::string(2049, 'a'); },
       "--dashboard: expected at most 2048 bytes", "dashboard: expected at most 2048 bytes"},
      {[](RegressionsQuery& q) { q.cell = std::string(257, 'a'); },
       "--cell: expected at most 256 bytes", "cell: expected at most 256 bytes"},
      {[](RegressionsQuery& q) { q.width = 0; }, "--width: expected 40 to 1000", "width: "},
  };
  for (const Case& c : cases) {
    RegressionsQuery bad;
    bad.series = "nightly";
    c.change(bad);
    const Status options = CheckRegressionsQuery(bad);
    EXPECT_EQ(options.code(), StatusCode::kInvalidArgument) << c.option;
    EXPECT_EQ(options.message().rfind(c.option, 0), 0u) << options.message();
    EXPECT_EQ(CheckRegressionsQuery(bad, QueryFields::kRequest).message().rfind(c.field, 0), 0u)
        << CheckRegressionsQuery(bad, QueryFields::kRequest).message();
    EXPECT_EQ(RegressionsText(*store_, bad).status().message(), options.message());
  }
}

}  // namespace
}  // namespace benchlab

// The store's bisections and their steps (docs/store.md, "bisections" and "bisect_steps").
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

class StoreBisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_store_bisect_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "benchlab.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Store> Open() {
    auto store = Store::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  static BisectionRow Bisection() {
    BisectionRow row;
    row.created_at = "2026-12-06T01:00:00Z";
    row.good_oid = "aaaa";
    row.bad_oid = "ffff";
    row.target = "hello";
    row.cell = "plaintext/c64";
    row.figure = "cpu_us_per_request";
    row.commits = 64;
    row.size = 1.1;
    row.size_low = 1.07;
    row.size_high = 1.13;
    row.change_id = 12;
    row.campaign_toml = "name = \"nightly\"\n";
    row.campaign_source = "nightly.toml";
    row.campaign_dir = "/srv/lab";
    row.rule = R"({"confidence":0.95})";
    return row;
  }

  static BisectStepRow Step(int64_t id, const std::string& oid, const std::string& decision) {
    BisectStepRow s;
    s.bisection_id = id;
    s.oid = oid;
    s.subject = "subject of " + oid;
    s.build = decision == "build failed" ? "failed" : "built";
    if (s.build == "built") {
      s.campaigns = {7, 9};
      s.rounds = 2;
      s.estimate = 0.95;
      s.low = 0.93;
      s.high = 0.97;
      s.figures = {{10.0, 10.1, 11.0}, {NAN, 9.9, 11.2}};
    }
    s.decision = decision;
    s.recorded_at = "2026-12-06T01:0" + std::to_string(oid.size()) + ":00Z";
    return s;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(StoreBisectTest, RoundTripOfABisectionAndItsSteps) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<int64_t> id = store->CreateBisection(Bisection());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Result<int> first = store->AppendBisectStep(Step(*id, "c31", "good"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 1);
  BisectStepRow placed = Step(*id, "c47", "build failed");
  placed.position = 47;
  EXPECT_EQ(*store->AppendBisectStep(placed), 2);
  EXPECT_EQ(*store->AppendBisectStep(Step(*id, "c48", "bad")), 3);

  BisectionRow done = Bisection();
  done.id = *id;
  done.state = "found";
  done.culprit = "c48";
  done.result = "c48 is the first bad commit";
  done.confidence = 0.975;
  done.culprit_campaign = "bisect-1-culprit";
  ASSERT_TRUE(store->UpdateBisection(done).ok());

  Result<std::optional<BisectionRecord>> loaded = store->LoadBisection(*id);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->has_value());
  const BisectionRecord& r = **loaded;
  EXPECT_EQ(r.bisection.id, *id);
  EXPECT_EQ(r.bisection.created_at, "2026-12-06T01:00:00Z");
  EXPECT_EQ(r.bisection.good_oid, "aaaa");
  EXPECT_EQ(r.bisection.bad_oid, "ffff");
  EXPECT_EQ(r.bisection.cell, "plaintext/c64");
  EXPECT_EQ(r.bisection.figure, "cpu_us_per_request");
  EXPECT_EQ(r.bisection.commits, 64);
  EXPECT_EQ(r.bisection.state, "found");
  EXPECT_EQ(r.bisection.culprit, "c48");
  EXPECT_EQ(r.bisection.result, "c48 is the first bad commit");
  // What a stopped search goes on from (schema 16).
  EXPECT_EQ(r.bisection.change_id, 12);
  EXPECT_EQ(r.bisection.campaign_toml, "name = \"nightly\"\n");
  EXPECT_EQ(r.bisection.campaign_source, "nightly.toml");
  EXPECT_EQ(r.bisection.campaign_dir, "/srv/lab");
  EXPECT_EQ(r.bisection.rule, R"({"confidence":0.95})");
  // Schema 17: the culprit against its parent, and where each step lies in the range.
  EXPECT_EQ(r.bisection.culprit_campaign, "bisect-1-culprit");
  EXPECT_EQ(r.bisection.size, 1.1);
  EXPECT_EQ(r.bisection.size_low, 1.07);
  EXPECT_EQ(r.bisection.confidence, 0.975);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].step, 1);
  EXPECT_EQ(r.steps[0].position, -1);  // not given
  EXPECT_EQ(r.steps[1].position, 47);
  EXPECT_EQ(r.steps[0].oid, "c31");
  EXPECT_EQ(r.steps[0].subject, "subject of c31");
  EXPECT_EQ(r.steps[0].decision, "good");
  EXPECT_EQ(r.steps[0].campaigns, (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(r.steps[0].rounds, 2);
  EXPECT_EQ(r.steps[0].estimate, 0.95);
  EXPECT_EQ(r.steps[0].high, 0.97);
  ASSERT_EQ(r.steps[0].figures.size(), 2u);
  EXPECT_EQ(r.steps[0].figures[0][2], 11.0);
  EXPECT_TRUE(std::isnan(r.steps[0].figures[1][0]));  // stored as null
  EXPECT_EQ(r.steps[0].figures[1][1], 9.9);
  EXPECT_EQ(r.steps[1].build, "failed");
  EXPECT_EQ(r.steps[1].decision, "build failed");
  EXPECT_FALSE(r.steps[1].estimate.has_value());
  EXPECT_TRUE(r.steps[1].figures.empty());
  EXPECT_EQ(r.steps[2].step, 3);
  EXPECT_EQ(r.steps[2].recorded_at, "2026-12-06T01:03:00Z");

  Result<std::vector<BisectionRow>> list = store->ListBisections();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().state, "found");

  Result<std::optional<BisectionRecord>> none = store->LoadBisection(*id + 1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(StoreBisectTest, RefusedWritesLeaveNothingBehind) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  BisectionRow bad = Bisection();
  bad.state = "maybe";
  EXPECT_EQ(store->CreateBisection(bad).status().code(), StatusCode::kInvalidArgument);
  BisectionRow found_without_culprit = Bisection();
  found_without_culprit.state = "found";
  EXPECT_FALSE(store->CreateBisection(found_without_culprit).ok());
  EXPECT_TRUE(store->ListBisections()->empty());

  const int64_t id = *store->CreateBisection(Bisection());
  EXPECT_EQ(store->AppendBisectStep(Step(id + 5, "c1", "good")).status().code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(store->AppendBisectStep(Step(id, "c31", "good")).ok());
  EXPECT_EQ(store->AppendBisectStep(Step(id, "c31", "bad")).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(store->AppendBisectStep(Step(id, "c15", "maybe")).status().code(),
            StatusCode::kInvalidArgument);
  BisectStepRow built_but_failed = Step(id, "c16", "build failed");
  built_but_failed.build = "built";
  EXPECT_FALSE(store->AppendBisectStep(built_but_failed).ok());
  // The ends are known, never decided by a step.
  EXPECT_EQ(store->AppendBisectStep(Step(id, Bisection().good_oid, "good")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->AppendBisectStep(Step(id, Bisection().bad_oid, "bad")).status().code(),
            StatusCode::kInvalidArgument);
  // The refused steps took no number: the next is 2.
  EXPECT_EQ(*store->AppendBisectStep(Step(id, "c47", "bad")), 2);

  BisectionRow stopped = Bisection();
  stopped.id = id;
  stopped.state = "cancelled";
  stopped.result = "cancelled by the operator";
  ASSERT_TRUE(store->UpdateBisection(stopped).ok());
  EXPECT_EQ(store->AppendBisectStep(Step(id, "c39", "good")).status().code(),
            StatusCode::kFailedPrecondition);
  // An update that breaks a CHECK changes nothing.
  BisectionRow broken = stopped;
  broken.state = "found";  // without a culprit
  EXPECT_FALSE(store->UpdateBisection(broken).ok());
  BisectionRow missing = stopped;
  missing.id = id + 9;
  EXPECT_EQ(store->UpdateBisection(missing).code(), StatusCode::kNotFound);
  auto loaded = store->LoadBisection(id);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->bisection.state, "cancelled");
  EXPECT_EQ((*loaded)->steps.size(), 2u);
}

// Every column of both tables is in docs/store.md, in its table's section.
TEST_F(StoreBisectTest, EveryColumnIsDocumented) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::ifstream in(std::string(BENCHLAB_SOURCE_DIR) + "/docs/store.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  for (const std::string table : {"bisections", "bisect_steps"}) {
    const size_t section = doc.find("\n## " + table + "\n");
    ASSERT_NE(section, std::string::npos) << "docs/store.md has no section " << table;
    const size_t end = doc.find("\n## ", section + 4);
    const std::string body = doc.substr(section, end - section);
    sqlite3_stmt* stmt = nullptr;
    const std::string sql = "SELECT name FROM pragma_table_info('" + table + "')";
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    int columns = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      const std::string column = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      ++columns;
      EXPECT_NE(body.find("`" + column + "`"), std::string::npos)
          << table << "." << column << " is not in its docs/store.md section";
    }
    sqlite3_finalize(stmt);
    EXPECT_GE(columns, 13) << table;
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace benchlab

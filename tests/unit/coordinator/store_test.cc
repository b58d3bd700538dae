// Tests of the store against real SQLite files in a temporary directory. The public schema is
// checked through a second, raw sqlite3 connection, as a user's query would see it.
#include "coordinator/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "coordinator/outcome.h"
#include "coordinator/schema.h"
#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kNoCap = uint64_t{1} << 40;  // KeepAgentResult without a cap to reach

// A plain sqlite3 connection, standing in for `sqlite3 benchlab.db` or a user's script.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK) << path;
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  // Runs sql; returns "" or SQLite's error message.
  std::string Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return "";
    std::string message = err != nullptr ? err : "error";
    sqlite3_free(err);
    return message;
  }

  // Every row of a query as text (NULL as "<null>"); fails the test on an error.
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    std::vector<std::vector<std::string>> rows;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      auto& row = rows.emplace_back();
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* text = sqlite3_column_text(stmt, i);
        row.push_back(text == nullptr ? "<null>" : reinterpret_cast<const char*>(text));
      }
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return rows;
  }
  std::string One(const std::string& sql) {
    auto rows = Query(sql);
    return rows.empty() || rows[0].empty() ? "<no rows>" : rows[0][0];
  }
  sqlite3* get() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::path(::testing::TempDir()) / ("benchlab_store_" + std::string(info->test_suite_name()) +
                                          "_" + info->name() + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "benchlab.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Store> OpenStore() {
    auto store = Store::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  static CampaignRow Campaign(const std::string& name) {
    CampaignRow c;
    c.name = name;
    c.state = "queued";
    c.baseline = "alpha";
    c.spec_toml = "name = \"" + name + "\"\n";
    c.source = name + ".toml";
    c.created_at = "2025-03-01T12:00:00Z";
    c.total_windows = 12;
    return c;
  }

  int64_t CreateCampaign(Store& store, const std::string& name) {
    auto id = store.CreateCampaign(Campaign(name), {{"alpha", "[\"./alpha\"]", "0-1"}},
                                   {{"plaintext", "scenario", "GET", "/plaintext", 200, "Hello"}});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  // A window whose every field differs from its default and from every other field.
  static WindowRow FullWindow(int64_t campaign_id, const std::string& target, int round) {
    WindowRow w;
    w.campaign_id = campaign_id;
    w.target = target;
    w.scenario = "plaintext";
    w.connections = 64;
    w.round = round;
    w.position = 3;
    w.attempt = 1;
    w.verdict = "invalid";
    w.reasons = R"(["foreign CPU 12% on server host","steal 3%"])";
    w.started_at = "2025-03-01T12:00:05.250Z";
    w.ended_at = "2025-03-01T12:00:15.250Z";
    w.server_agent = "server-1";
    w.load_agent = "load-1";
    w.requests = 1234567;
    w.duration_s = 10.0005;
    w.rps = 123450.25;
    w.p50_us = 310;
    w.p90_us = 720;
    w.p99_us = 1450;
    w.p999_us = 3900;
    w.max_us = 12001;
    w.mean_us = 402.5;
    w.errors = 21;
    w.errors_connect = 1;
    w.errors_read = 2;
    w.errors_write = 3;
    w.errors_timeout = 4;
    w.errors_parse = 5;
    w.errors_status = 6;
    w.status_counts = R"({"200":1234561,"503":6})";
    w.server_cpu_s = 17.75;
    w.cpu_us_per_request = 14.375;
    w.rss_peak_kb = 81920;
    w.rss_mean_kb = 65536;
    w.startup_ms = 42.5;
    w.first_request_ms = 1.25;
    w.idle_rss_kb = 20480;
    w.load_cpu_s = 9.5;
    w.align_error_ms = 0.75;
    w.histogram = "hdr1:AAECAwQ=";
    w.target_version = "nginx/1.22.1";
    w.target_commit = "3f2a9c1d0e4b5a6978877665544332211000ffee";
    w.cpu_accounting = "cgroup";
    w.threads = 5;
    w.ctx_switches_voluntary = 1200;
    w.ctx_switches_involuntary = 30;
    w.selftest_server_ms = 31.5;
    w.selftest_load_ms = 30.25;
    w.selftest_drift = 0.05;
    w.server_busy_pct = 150;
    w.server_steal_pct = 0.5;
    w.server_foreign_cpu_pct = 12.5;
    w.server_foreign_cpu_max_pct = 40;
    w.server_top_foreign = R"([{"comm":"cron","cpu_pct":12.5}])";
    w.load_busy_pct = 98;
    w.load_steal_pct = 0.25;
    w.load_foreign_cpu_pct = 1.5;
    w.load_foreign_cpu_max_pct = 3;
    w.max_temp_c = 71.5;
    w.throttle_events = 2;
    w.min_freq_ratio = 0.8;
    w.swap_in_pages = 0;
    w.swap_out_pages = 7;
    w.server_host = R"({"cpu_model":"x"})";
    w.load_host = R"({"cpu_model":"y"})";
    w.load_depth = 16;
    w.load_rate = 5000.5;
    w.sent = 1234600;
    w.dropped = 12;
    w.errors_mismatch = 6;
    w.generator_bound = 1;
    w.throughput_rps = 123400.5;
    w.p99_uncorrected_us = 1100;
    w.histogram_uncorrected = "h1:AAEC";
    w.load_record = R"({"requests":1234567,"dropped":12})";
    w.errors_body_too_large = 8;
    return w;
  }

  static std::vector<SampleRow> Samples() {
    return {{"server", 0.1, 97.5, 65000, 0},
            {"load", 0.1, 88.25, 9000, 12345, {}, {}, {}, 870},
            {"server", 0.2, 99.0, 66000, 0}};
  }

  fs::path dir_;
  std::string path_;
};

void ExpectSameWindow(const WindowRow& got, const WindowRow& want) {
  EXPECT_EQ(got.load_depth, want.load_depth);
  EXPECT_EQ(got.load_rate, want.load_rate);
  EXPECT_EQ(got.sent, want.sent);
  EXPECT_EQ(got.dropped, want.dropped);
  EXPECT_EQ(got.errors_mismatch, want.errors_mismatch);
  EXPECT_EQ(got.errors_body_too_large, want.errors_body_too_large);
  EXPECT_EQ(got.generator_bound, want.generator_bound);
  EXPECT_EQ(got.throughput_rps, want.throughput_rps);
  EXPECT_EQ(got.p99_uncorrected_us, want.p99_uncorrected_us);
  EXPECT_EQ(got.histogram_uncorrected, want.histogram_uncorrected);
  EXPECT_EQ(got.load_record, want.load_record);
  EXPECT_EQ(got.target_version, want.target_version);
  EXPECT_EQ(got.target_commit, want.target_commit);
  EXPECT_EQ(got.cpu_accounting, want.cpu_accounting);
  EXPECT_EQ(got.threads, want.threads);
  EXPECT_EQ(got.ctx_switches_voluntary, want.ctx_switches_voluntary);
  EXPECT_EQ(got.ctx_switches_involuntary, want.ctx_switches_involuntary);
  EXPECT_EQ(got.selftest_server_ms, want.selftest_server_ms);
  EXPECT_EQ(got.selftest_load_ms, want.selftest_load_ms);
  EXPECT_EQ(got.selftest_drift, want.selftest_drift);
  EXPECT_EQ(got.server_busy_pct, want.server_busy_pct);
  EXPECT_EQ(got.server_steal_pct, want.server_steal_pct);
  EXPECT_EQ(got.server_foreign_cpu_pct, want.server_foreign_cpu_pct);
  EXPECT_EQ(got.server_foreign_cpu_max_pct, want.server_foreign_cpu_max_pct);
  EXPECT_EQ(got.server_top_foreign, want.server_top_foreign);
  EXPECT_EQ(got.load_busy_pct, want.load_busy_pct);
  EXPECT_EQ(got.load_steal_pct, want.load_steal_pct);
  EXPECT_EQ(got.load_foreign_cpu_pct, want.load_foreign_cpu_pct);
  EXPECT_EQ(got.load_foreign_cpu_max_pct, want.load_foreign_cpu_max_pct);
  EXPECT_EQ(got.load_top_foreign, want.load_top_foreign);
  EXPECT_EQ(got.max_temp_c, want.max_temp_c);
  EXPECT_EQ(got.throttle_events, want.throttle_events);
  EXPECT_EQ(got.min_freq_ratio, want.min_freq_ratio);
  EXPECT_EQ(got.swap_in_pages, want.swap_in_pages);
  EXPECT_EQ(got.swap_out_pages, want.swap_out_pages);
  EXPECT_EQ(got.server_host, want.server_host);
  EXPECT_EQ(got.load_host, want.load_host);
  EXPECT_EQ(got.campaign_id, want.campaign_id);
  EXPECT_EQ(got.campaign, want.campaign);
  EXPECT_EQ(got.target, want.target);
  EXPECT_EQ(got.scenario, want.scenario);
  EXPECT_EQ(got.connections, want.connections);
  EXPECT_EQ(got.round, want.round);
  EXPECT_EQ(got.position, want.position);
  EXPECT_EQ(got.attempt, want.attempt);
  EXPECT_EQ(got.verdict, want.verdict);
  EXPECT_EQ(got.reasons, want.reasons);
  EXPECT_EQ(got.started_at, want.started_at);
  EXPECT_EQ(got.ended_at, want.ended_at);
  EXPECT_EQ(got.server_agent, want.server_agent);
  EXPECT_EQ(got.load_agent, want.load_agent);
  EXPECT_EQ(got.requests, want.requests);
  EXPECT_EQ(got.duration_s, want.duration_s);
  EXPECT_EQ(got.rps, want.rps);
  EXPECT_EQ(got.p50_us, want.p50_us);
  EXPECT_EQ(got.p90_us, want.p90_us);
  EXPECT_EQ(got.p99_us, want.p99_us);
  EXPECT_EQ(got.p999_us, want.p999_us);
  EXPECT_EQ(got.max_us, want.max_us);
  EXPECT_EQ(got.mean_us, want.mean_us);
  EXPECT_EQ(got.errors, want.errors);
  EXPECT_EQ(got.errors_connect, want.errors_connect);
  EXPECT_EQ(got.errors_read, want.errors_read);
  EXPECT_EQ(got.errors_write, want.errors_write);
  EXPECT_EQ(got.errors_timeout, want.errors_timeout);
  EXPECT_EQ(got.errors_parse, want.errors_parse);
  EXPECT_EQ(got.errors_status, want.errors_status);
  EXPECT_EQ(got.status_counts, want.status_counts);
  EXPECT_EQ(got.server_cpu_s, want.server_cpu_s);
  EXPECT_EQ(got.cpu_us_per_request, want.cpu_us_per_request);
  EXPECT_EQ(got.rss_peak_kb, want.rss_peak_kb);
  EXPECT_EQ(got.rss_mean_kb, want.rss_mean_kb);
  EXPECT_EQ(got.startup_ms, want.startup_ms);
  EXPECT_EQ(got.first_request_ms, want.first_request_ms);
  EXPECT_EQ(got.idle_rss_kb, want.idle_rss_kb);
  EXPECT_EQ(got.load_cpu_s, want.load_cpu_s);
  EXPECT_EQ(got.align_error_ms, want.align_error_ms);
  EXPECT_EQ(got.histogram, want.histogram);
}

// YYYY-MM-DDTHH:MM:SSZ. (Not std::regex: GCC 12 warns inside it in the sanitizer build.)
bool IsUtcTimestamp(const std::string& s) {
  const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> Ids(const std::vector<WindowRow>& rows) {
  std::vector<int64_t> ids;
  for (const WindowRow& w : rows) ids.push_back(w.id);
  return ids;
}

// --- opening, versions, WAL --------------------------------------------------------------------

using StoreOpenTest = StoreTest;

TEST_F(StoreOpenTest, CreatesTheFileAtTheLatestSchemaVersionInWalMode) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ(schema::LatestVersion(), 18);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  RawDb raw(path_);
  EXPECT_EQ(raw.One("PRAGMA user_version"), "18");
  EXPECT_EQ(raw.One("PRAGMA journal_mode"), "wal");
}

TEST_F(StoreOpenTest, ReopeningKeepsDataAndDoesNotRerunMigrations) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    CreateCampaign(*store, "hello");
  }
  // Migration 1 uses CREATE TABLE without IF NOT EXISTS: re-running it would fail the open.
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  auto found = store->FindCampaign("hello");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->spec_toml, "name = \"hello\"\n");
}

TEST_F(StoreOpenTest, RefusesANewerDatabaseAndLeavesItUntouched) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("CREATE TABLE future (x); PRAGMA user_version = 999"), "");
  }
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.status().message(),
            path_ +
                ": database schema version 999 is newer than this benchlab (knows 18); "
                "upgrade benchlab");
  RawDb raw(path_);
  EXPECT_EQ(raw.One("PRAGMA user_version"), "999");
  EXPECT_EQ(raw.One("PRAGMA journal_mode"), "delete");  // not switched to WAL
  EXPECT_EQ(raw.One("SELECT count(*) FROM sqlite_schema WHERE name = 'campaigns'"), "0");
}

TEST_F(StoreOpenTest, RefusesAFileThatIsNotADatabase) {
  std::ofstream(path_) << "this is a campaign file, not a database\n";
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find(path_), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("not a database"), std::string::npos);
}

mode_t ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(StoreOpenTest, TheFilesAreTheOwnersAloneAndMissingDirectoriesAreMade0700) {
  const fs::path db = dir_ / "state" / "lab" / "benchlab.db";
  const mode_t umask_was = ::umask(022);  // the usual umask, which would leave files 0644
  auto store = Store::Open(db.string());
  ::umask(umask_was);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CreateCampaign(**store, "hello");  // a write: the -wal and -shm files exist now
  EXPECT_EQ(ModeOf(dir_ / "state"), 0700u);
  EXPECT_EQ(ModeOf(dir_ / "state" / "lab"), 0700u);
  EXPECT_EQ(ModeOf(db), 0600u);
  EXPECT_EQ(ModeOf(db.string() + "-wal"), 0600u);
  EXPECT_EQ(ModeOf(db.string() + "-shm"), 0600u);
}

TEST_F(StoreOpenTest, NamesThePathWhenADirectoryCannotBeMade) {
  std::ofstream(dir_ / "file") << "not a directory\n";
  const std::string missing = (dir_ / "file" / "sub" / "benchlab.db").string();
  auto store = Store::Open(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_EQ(store.status().message().rfind(missing + ": open database: ", 0), 0u)
      << store.status().message();
}

TEST_F(StoreOpenTest, TheLabSecretIsMadeOnceAndKeptInTheFile) {
  std::string secret;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    secret = store->lab_secret();
  }
  EXPECT_EQ(secret.size(), Store::kLabSecretBytes);
  auto again = OpenStore();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->lab_secret(), secret) << "window tokens must survive a restart";
  auto other = Store::Open((dir_ / "other.db").string());
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)->lab_secret(), secret) << "random per database";
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT length(value) FROM settings WHERE name = 'lab_secret'"), "32");
}

TEST_F(StoreOpenTest, RejectsAnEmptyPathAndAcceptsMemory) {
  auto empty = Store::Open("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  auto memory = Store::Open(":memory:");
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ((*memory)->SchemaVersion(), schema::LatestVersion());
}

TEST_F(StoreOpenTest, AVersionOneDatabaseIsUpgradedKeepingItsWindows) {
  {
    RawDb raw(path_);
    ASSERT_TRUE(schema::Migrate(raw.get(), path_, schema::Migrations().first(1)).ok());
    ASSERT_EQ(raw.Exec("INSERT INTO campaigns (name, state, spec_toml, source, created_at) "
                       "VALUES ('old', 'done', '', 'old.toml', 'now');"
                       "INSERT INTO windows (campaign_id, campaign, target, scenario, connections,"
                       " round, position, attempt, verdict, started_at, ended_at, server_agent,"
                       " load_agent, requests, duration_s, rps, p50_us, p90_us, p99_us, p999_us,"
                       " max_us, mean_us, errors, errors_connect, errors_read, errors_write,"
                       " errors_timeout, errors_parse, errors_status, status_counts, server_cpu_s,"
                       " cpu_us_per_request, rss_peak_kb, rss_mean_kb, startup_ms,"
                       " first_request_ms, idle_rss_kb, load_cpu_s, align_error_ms, histogram)"
                       " VALUES (1, 'old', 't', 's', 1, 1, 0, 1, 'valid', 'a', 'b', 'sa', 'la',"
                       " 10, 1, 10, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, '{}', 0, 0, 0, 0, 0, 0,"
                       " 0, 0, 0, '');"
                       "INSERT INTO samples (window_id, source, t_s, cpu_pct, rss_kb, requests)"
                       " VALUES (1, 'server', 0.1, 50, 1000, 0)"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].requests, 10u);
  EXPECT_FALSE((*rows)[0].server_foreign_cpu_pct.has_value()) << "not measured: NULL, not 0";
  EXPECT_EQ((*rows)[0].server_top_foreign, "[]");
  // Version 3's columns on a row measured before them: closed-loop defaults, NULL where unknown.
  EXPECT_EQ((*rows)[0].load_depth, 1);
  EXPECT_FALSE((*rows)[0].load_rate.has_value());
  EXPECT_FALSE((*rows)[0].dropped.has_value());
  EXPECT_EQ((*rows)[0].load_record, "{}");
  EXPECT_EQ((*rows)[0].load_level, "c1") << "named by its connections before version 3";
  // Version 3 rebuilt the windows table; the samples that point at it survive.
  auto samples = store->ListSamples((*rows)[0].id);
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), 1u);
}

TEST_F(StoreOpenTest, AVersionThreeDatabaseIsUpgradedKeepingItsRows) {
  {
    RawDb raw(path_);
    ASSERT_TRUE(schema::Migrate(raw.get(), path_, schema::Migrations().first(3)).ok());
    ASSERT_EQ(raw.One("PRAGMA user_version"), "3");
  }
  {
    // Rows written by the version 3 store (the same columns but the new one).
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    const int64_t campaign = CreateCampaign(*store, "hello");
    ASSERT_TRUE(store->InsertWindow(FullWindow(campaign, "alpha", 1), Samples()).ok());
    ASSERT_TRUE(store->KeepAgentResult("load-1", "1-a.load", "bytes", kNoCap).ok());
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("ALTER TABLE windows DROP COLUMN outcome;"
                       "ALTER TABLE windows DROP COLUMN errors_body_too_large;"
                       "DROP TABLE settings; DROP TABLE audit; DROP TABLE tokens;"
                       "DROP TABLE selftest_calibrations; DROP TABLE window_services;"
                       "DROP TABLE window_probes; DROP INDEX campaigns_by_series; ALTER TABLE "
                       "campaigns DROP COLUMN series; "
                       "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                       "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; "
                       "ALTER TABLE windows DROP COLUMN target_commit; "
                       "PRAGMA user_version = 3"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].requests, 1234567u);
  EXPECT_EQ((*rows)[0].errors_body_too_large, 0u) << "none counted before version 4";
  EXPECT_EQ(store->ListSamples((*rows)[0].id)->size(), 3u);
  EXPECT_EQ(*store->CountAgentResults(), 1);
  EXPECT_EQ(store->lab_secret().size(), Store::kLabSecretBytes);
}

TEST_F(StoreOpenTest, AVersionSixDatabaseGainsTheTokensTableAndKeepsItsAudit) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store
                    ->AppendAudit({0, "2026-12-01T00:00:00.000Z", "local:root", "", "local",
                                   "CaIssue", "agent certificate a", "ok", ""})
                    .ok());
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(
        raw.Exec("DROP TABLE tokens; DROP TABLE selftest_calibrations; DROP TABLE window_services; "
                 "DROP TABLE window_probes; DROP INDEX campaigns_by_series; ALTER TABLE campaigns "
                 "DROP COLUMN series; "
                 "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; ALTER "
                 "TABLE windows DROP COLUMN target_commit; ALTER "
                 "TABLE audit DROP COLUMN count; "
                 "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                 "PRAGMA user_version = 6"),
        "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  EXPECT_EQ(store->ListAudit("")->size(), 1u);
  ASSERT_TRUE(
      store->AddToken({"alice", "viewer", std::string(64, 'a'), "2026-12-01T00:00:00.000Z", "", ""})
          .ok());
  EXPECT_EQ(store->ListTokens()->size(), 1u);
}

TEST_F(StoreOpenTest, AVersionElevenDatabaseKeepsItsAuditRowsEachCountedOnce) {
  {
    RawDb raw(path_);
    ASSERT_TRUE(schema::Migrate(raw.get(), path_, schema::Migrations().first(11)).ok());
    ASSERT_EQ(raw.Exec("INSERT INTO audit (at, identity, role, peer, call, subject, outcome, "
                       "reason) VALUES ('2026-12-01T00:00:00.000Z', 'plaintext', '', "
                       "'ipv4:127.0.0.1:1', 'CancelCampaign', 'campaign x', 'refused', 'no')"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  auto rows = store->ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().count, 1);
  // The same refusal a second later, from another port, is counted on the old row.
  AuditRow again = rows->front();
  again.at = "2026-12-01T00:00:01.000Z";
  again.peer = "ipv4:127.0.0.1:2";
  ASSERT_TRUE(store->AppendAudit(again).ok());
  rows = store->ListAudit("");
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().count, 2);
}

TEST_F(StoreOpenTest, AVersionSevenDatabaseGainsTheCalibrationsTableAndKeepsItsCampaigns) {
  int64_t campaign = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    campaign = CreateCampaign(*store, "hello");
    ASSERT_TRUE(store->AddToken({"alice", "viewer", std::string(64, 'a'), "t", "", ""}).ok());
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("DROP TABLE selftest_calibrations; DROP TABLE window_services; "
                       "DROP TABLE window_probes; DROP INDEX campaigns_by_series; ALTER TABLE "
                       "campaigns DROP COLUMN series; "
                       "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; "
                       "ALTER TABLE windows DROP COLUMN target_commit; "
                       "ALTER TABLE audit DROP COLUMN count; "
                       "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                       "PRAGMA user_version = 7"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  EXPECT_EQ(store->ListTokens()->size(), 1u);
  EXPECT_TRUE(store->ListSelftestCalibrations(campaign)->empty());
  ASSERT_TRUE(
      store->PutSelftestCalibration({campaign, "srv", 7, 80, 0.05, 20, "calibrated", ""}).ok());
  EXPECT_EQ(store->ListSelftestCalibrations(campaign)->size(), 1u);
}

// Version 10 (docs/history.md): every campaign belongs to a series; one stored before is the
// series of its own name. A new one names its series, or is its name's.
TEST_F(StoreOpenTest, AVersionNineDatabaseGivesEachCampaignItsOwnNameAsSeries) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    CreateCampaign(*store, "old-1");
    CreateCampaign(*store, "old-2");
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("DROP INDEX campaigns_by_series; ALTER TABLE campaigns DROP COLUMN series; "
                       "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; "
                       "ALTER TABLE windows DROP COLUMN target_commit; "
                       "ALTER TABLE audit DROP COLUMN count; "
                       "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                       "PRAGMA user_version = 9"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  auto old = store->ListSeries("old-1");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].name, "old-1");
  EXPECT_EQ((*old)[0].series, "old-1");

  CampaignRow a = Campaign("nightly-1");
  a.series = "nightly";
  CampaignRow b = Campaign("nightly-2");
  b.series = "nightly";
  CampaignRow own = Campaign("nightly");  // no series given: its name's
  auto ida = store->CreateCampaign(a, {}, {});
  auto idown = store->CreateCampaign(own, {}, {});
  auto idb = store->CreateCampaign(b, {}, {});
  ASSERT_TRUE(ida.ok() && idb.ok() && idown.ok());
  auto nightly = store->ListSeries("nightly");
  ASSERT_TRUE(nightly.ok()) << nightly.status().ToString();
  std::vector<std::string> names;
  for (const CampaignRow& c : *nightly) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nightly-1", "nightly", "nightly-2"}));
  EXPECT_TRUE(store->ListSeries("none")->empty());
}

// Version 11 (docs/history.md, "Confirmation by re-measurement"): a change's re-measurement is
// one row, replaced when recorded again, listed by series; a status outside the list is refused.
TEST_F(StoreOpenTest, AChangesReMeasurementIsOneRowPerChangeReplacedWhenRecordedAgain) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ConfirmationRow row;
  row.series = "nightly";
  row.scenario = "json";
  row.load_level = "c64";
  row.target = "hello";
  row.figure = "rps";
  row.after_campaign_id = 6;
  row.old_campaign_id = 4;
  row.new_campaign_id = 9;
  row.campaign = "nightly-9-remeasure-1";
  row.status = "measuring";
  auto first = store->RecordConfirmation(row);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  row.status = "confirmed";
  row.estimate = 0.9;
  row.low = 0.85;
  row.high = 0.95;
  row.rounds = 7;
  row.detail = "new/old 0.90 (0.85-0.95) excludes 1: the fall is confirmed";
  auto again = store->RecordConfirmation(row);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *first);

  ConfirmationRow cpu = row;  // another figure of the same change: a row of its own
  cpu.figure = "cpu_us_per_request";
  cpu.status = "not measured";
  cpu.estimate.reset();
  cpu.low.reset();
  cpu.high.reset();
  cpu.campaign = "";
  ASSERT_TRUE(store->RecordConfirmation(cpu).ok());
  ConfirmationRow other = row;
  other.series = "other";
  ASSERT_TRUE(store->RecordConfirmation(other).ok());

  auto rows = store->ListConfirmations("nightly");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  const ConfirmationRow& got = (*rows)[0];
  EXPECT_EQ(got.status, "confirmed");
  EXPECT_EQ(got.campaign, "nightly-9-remeasure-1");
  EXPECT_EQ(got.after_campaign_id, 6);
  EXPECT_EQ(got.old_campaign_id, 4);
  EXPECT_EQ(got.new_campaign_id, 9);
  EXPECT_EQ(got.rounds, 7);
  ASSERT_TRUE(got.estimate && got.low && got.high);
  EXPECT_DOUBLE_EQ(*got.low, 0.85);
  EXPECT_EQ(got.detail, row.detail);
  EXPECT_FALSE(got.recorded_at.empty());
  EXPECT_EQ((*rows)[1].figure, "cpu_us_per_request");
  EXPECT_FALSE((*rows)[1].estimate.has_value());
  // By id, as `benchlab bisect --change ID` takes it.
  auto by_id = store->LoadConfirmation((*rows)[1].id);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  ASSERT_TRUE(by_id->has_value());
  EXPECT_EQ((*by_id)->figure, "cpu_us_per_request");
  EXPECT_EQ((*by_id)->series, "nightly");
  auto none = store->LoadConfirmation(9999);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ConfirmationRow bad = row;
  bad.status = "probably";
  EXPECT_EQ(store->RecordConfirmation(bad).status().code(), StatusCode::kInvalidArgument);
}

// Version 9 (docs/services.md): a window's side services and probes are stored beside it, in its
// transaction, and a probe with no delta keeps why (never a 0).
TEST_F(StoreOpenTest, AVersionEightDatabaseGainsTheServiceTablesAndWindowsKeepTheirServices) {
  int64_t campaign = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    campaign = CreateCampaign(*store, "hello");
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("DROP TABLE window_services; DROP TABLE window_probes; "
                       "DROP INDEX campaigns_by_series; ALTER TABLE campaigns DROP COLUMN series; "
                       "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; "
                       "ALTER TABLE windows DROP COLUMN target_commit; "
                       "ALTER TABLE audit DROP COLUMN count; "
                       "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                       "PRAGMA user_version = 8"),
              "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion(), schema::LatestVersion());
  ServiceRow pg;
  pg.service = "pg";
  pg.cpu_user_s = 0.5;
  pg.cpu_sys_s = 0.25;
  pg.rss_mean_kb = 30000;
  pg.rss_peak_kb = 32000;
  pg.cpu_accounting = "cgroup";
  pg.started = true;
  pg.startup_ms = 812;
  pg.reset_ms = 14.5;
  ProbeRow checkpoints{"pg", "checkpoints", 3, 4, 1, ""};
  ProbeRow vacuums{"pg", "vacuums", 9, std::nullopt, std::nullopt, "no reading after"};
  auto id = store->InsertWindow(FullWindow(campaign, "alpha", 1), {}, {pg}, {checkpoints, vacuums});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto services = store->ListWindowServices(*id);
  ASSERT_TRUE(services.ok());
  ASSERT_EQ(services->size(), 1u);
  EXPECT_EQ((*services)[0].service, "pg");
  EXPECT_DOUBLE_EQ((*services)[0].cpu_user_s + (*services)[0].cpu_sys_s, 0.75);
  EXPECT_EQ((*services)[0].rss_peak_kb, 32000u);
  EXPECT_TRUE((*services)[0].alive);
  EXPECT_EQ((*services)[0].startup_ms, 812);
  EXPECT_EQ((*services)[0].reset_ms, 14.5);
  auto probes = store->ListWindowProbes(*id);
  ASSERT_TRUE(probes.ok());
  ASSERT_EQ(probes->size(), 2u);
  EXPECT_EQ((*probes)[0].delta, 1);
  EXPECT_FALSE((*probes)[1].delta.has_value());
  EXPECT_EQ((*probes)[1].unavailable, "no reading after");
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM window_probes WHERE delta IS NULL"), "1");
  // A row saying a delta is both known and unavailable is refused by the schema.
  EXPECT_NE(raw.Exec("INSERT INTO window_probes VALUES (" + std::to_string(*id) +
                     ", 'pg', 'x', 1, 2, 1, 'both')"),
            "");
}

// A report reads every window's services' CPU in one query: the sum over its services of user
// and system CPU, for the campaign's attempts that ran with services and no others.
TEST_F(StoreTest, TheServicesCpuOfACampaignIsSummedPerWindow) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  const int64_t world = CreateCampaign(*store, "world");
  ServiceRow pg;
  pg.service = "pg";
  pg.cpu_user_s = 0.5;
  pg.cpu_sys_s = 0.25;
  pg.cpu_accounting = "cgroup";
  ServiceRow cache = pg;
  cache.service = "cache";
  cache.cpu_user_s = 0.125;
  cache.cpu_sys_s = 0.0625;
  auto two = store->InsertWindow(FullWindow(hello, "alpha", 1), {}, {pg, cache});
  auto one = store->InsertWindow(FullWindow(hello, "alpha", 2), {}, {cache});
  auto none = store->InsertWindow(FullWindow(hello, "alpha", 3), {});
  auto elsewhere = store->InsertWindow(FullWindow(world, "alpha", 1), {}, {pg});
  ASSERT_TRUE(two.ok() && one.ok() && none.ok() && elsewhere.ok());

  auto sums = store->SumServiceCpuByWindow(hello);
  ASSERT_TRUE(sums.ok()) << sums.status().ToString();
  // 0.5 + 0.25 + 0.125 + 0.0625 = 0.9375; 0.125 + 0.0625 = 0.1875 (exact in binary).
  EXPECT_EQ(*sums, (std::map<int64_t, double>{{*two, 0.9375}, {*one, 0.1875}}));
  auto other = store->SumServiceCpuByWindow(world);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*other, (std::map<int64_t, double>{{*elsewhere, 0.75}}));
  auto unknown = store->SumServiceCpuByWindow(world + 7);
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->empty());
}

TEST_F(StoreTest, AProfileIsStoredWithItsWindowOrNotAtAll) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  const int64_t world = CreateCampaign(*store, "world");
  const std::string bytes("x\0\x01\xff", 4);  // a blob: NUL and high bytes survive
  ProfileRow taken{0, 99, 42, bytes, ""};
  ProfileRow refused{0, 99, 0, "", "perf could not start: install linux-perf"};
  auto a = store->InsertWindow(FullWindow(hello, "alpha", 1), {}, {}, {}, taken);
  auto b = store->InsertWindow(FullWindow(hello, "alpha", 2), {}, {}, {}, refused);
  auto c = store->InsertWindow(FullWindow(hello, "alpha", 3), {});
  auto d = store->InsertWindow(FullWindow(world, "alpha", 1), {}, {}, {}, taken);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());

  auto rows = store->ListProfiles(hello);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u)
      << "the unprofiled window has no row; the other campaign's is not listed";
  EXPECT_EQ((*rows)[0].window_id, *a);
  EXPECT_EQ((*rows)[0].frequency_hz, 99);
  EXPECT_EQ((*rows)[0].samples, 42u);
  EXPECT_EQ((*rows)[0].folded_z, bytes);
  EXPECT_EQ((*rows)[0].error, "");
  EXPECT_EQ((*rows)[1].window_id, *b);
  EXPECT_EQ((*rows)[1].folded_z, "");
  EXPECT_EQ((*rows)[1].error, refused.error);

  // One window's row alone: the profile, the reason there is none, or nothing when unprofiled.
  auto one = store->FindProfile(*b);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ((*one)->window_id, *b);
  EXPECT_EQ((*one)->error, refused.error);
  auto other = store->FindProfile(*d);
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_EQ((*other)->samples, 42u);
  EXPECT_EQ((*other)->folded_z, bytes);
  auto none = store->FindProfile(*c);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // A profile the schema refuses (no sampling rate) takes its window with it.
  ProfileRow no_rate{0, 0, 1, bytes, ""};
  auto bad = store->InsertWindow(FullWindow(hello, "alpha", 4), {}, {}, {}, no_rate);
  EXPECT_FALSE(bad.ok());
  auto all = store->ListWindows({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u) << "no half-written window";
}

TEST_F(StoreTest, ACampaignKeepsWhetherItWasProfiled) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  CampaignRow profiled = Campaign("hello");
  profiled.profile = true;
  ASSERT_TRUE(store->CreateCampaign(profiled, {}, {}).ok());
  ASSERT_TRUE(store->CreateCampaign(Campaign("world"), {}, {}).ok());
  auto hello = store->FindCampaign("hello");
  auto world = store->FindCampaign("world");
  ASSERT_TRUE(hello.ok() && hello->has_value() && world.ok() && world->has_value());
  EXPECT_TRUE((*hello)->profile);
  EXPECT_FALSE((*world)->profile);
}

TEST_F(StoreOpenTest, AVersionFourDatabaseGetsEachWindowsOutcomeFromItsReasons) {
  {
    // Rows written by the version 4 store: the same columns but the new one.
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    const int64_t campaign = CreateCampaign(*store, "hello");
    const char* reasons[] = {
        R"(["foreign_cpu: load host 30% > 25%", "agent_lost: run_load: agent l: gone"])",
        R"x(["conformance: agent l: deadline exceeded ()", "coordinator_restart: stopped"])x",
        "[]"};
    for (int round = 1; round <= 3; ++round) {
      WindowRow w = FullWindow(campaign, "alpha", round);
      w.verdict = round == 3 ? "valid" : "failed";
      w.reasons = reasons[round - 1];
      ASSERT_TRUE(store->InsertWindow(w, {}).ok());
    }
  }
  {
    RawDb raw(path_);
    ASSERT_EQ(
        raw.Exec("ALTER TABLE windows DROP COLUMN outcome; DROP TABLE audit; DROP TABLE tokens; "
                 "DROP TABLE selftest_calibrations; DROP TABLE window_services; "
                 "DROP TABLE window_probes; DROP INDEX campaigns_by_series; ALTER TABLE campaigns "
                 "DROP COLUMN series; "
                 "DROP TABLE window_profiles; ALTER TABLE campaigns DROP COLUMN profile; "
                 "DROP TABLE confirmations; DROP TABLE bisect_steps; DROP TABLE bisections; ALTER "
                 "TABLE windows DROP COLUMN target_commit; PRAGMA "
                 "user_version = 4"),
        "");
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT outcome FROM windows WHERE round = 1"),
            R"([{"kind":"gate","name":"foreign_cpu"},{"kind":"agent_lost","name":"agent_lost"}])");
  EXPECT_EQ(raw.One("SELECT outcome FROM windows WHERE round = 2"),
            R"([{"kind":"step","name":"conformance"},)"
            R"({"kind":"coordinator_restart","name":"coordinator_restart"}])");
  EXPECT_EQ(raw.One("SELECT outcome FROM windows WHERE round = 3"), "[]");
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  std::vector<WindowReason> first = ParseOutcome((*rows)[0].outcome, (*rows)[0].reasons);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].kind, ReasonKind::kAgentLost);
  EXPECT_EQ(first[1].text, "agent_lost: run_load: agent l: gone");
  EXPECT_TRUE(MeasuredAgain(first));
}

TEST_F(StoreTest, AStoredWindowKeepsItsOutcome) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow w = FullWindow(campaign, "alpha", 1);
  WindowReason lost{ReasonKind::kAgentLost,
                    "run_load",
                    "UNAVAILABLE",
                    "l1",
                    std::nullopt,
                    std::nullopt,
                    "agent_lost: run_load: agent l1: gone"};
  w.verdict = "failed";
  w.reasons = ReasonTextsJson({lost});
  w.outcome = OutcomeJson({lost});
  ASSERT_TRUE(store->InsertWindow(w, {}).ok());
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(ParseOutcome((*rows)[0].outcome, (*rows)[0].reasons), std::vector<WindowReason>{lost});
}

TEST_F(StoreTest, AWindowCutByARestartIsACoordinatorRestartOutcome) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowClaim claim{campaign, {"alpha", "get", "c1", 1, 0, ""}, false, 1, 1, "s", "l", ""};
  ASSERT_TRUE(store->ClaimWindow(claim).ok());
  ASSERT_EQ(*store->FailClaimedWindows("coordinator_restart: stopped"), 1);
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  std::vector<WindowReason> reasons = ParseOutcome((*rows)[0].outcome, (*rows)[0].reasons);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].kind, ReasonKind::kCoordinatorRestart);
  EXPECT_EQ(reasons[0].text, "coordinator_restart: stopped");
  EXPECT_EQ((*rows)[0].verdict, "failed");
}

// --- migrations ----------------------------------------------------------------------------

using StoreSchemaTest = StoreTest;

TEST_F(StoreSchemaTest, AppliesEachMigrationOnceInOrder) {
  RawDb raw(path_);
  const schema::Migration two[] = {
      {1, "create", "CREATE TABLE log (step INTEGER); INSERT INTO log VALUES (1);"},
      {2, "append", "INSERT INTO log VALUES (2);"}};
  ASSERT_TRUE(schema::Migrate(raw.get(), path_, two).ok());
  ASSERT_TRUE(schema::Migrate(raw.get(), path_, two).ok());
  EXPECT_EQ(raw.One("SELECT group_concat(step) FROM log"), "1,2");
  EXPECT_EQ(raw.One("PRAGMA user_version"), "2");

  const schema::Migration three[] = {two[0], two[1], {3, "append", "INSERT INTO log VALUES (3);"}};
  ASSERT_TRUE(schema::Migrate(raw.get(), path_, three).ok());
  EXPECT_EQ(raw.One("SELECT group_concat(step) FROM log"), "1,2,3");
  EXPECT_EQ(raw.One("PRAGMA user_version"), "3");

  auto too_new = schema::Migrate(raw.get(), path_, two);
  EXPECT_EQ(too_new.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(too_new.message().find("schema version 3 is newer than this benchlab (knows 2)"),
            std::string::npos)
      << too_new.message();
}

TEST_F(StoreSchemaTest, AFailedMigrationRollsBackAndKeepsTheVersion) {
  RawDb raw(path_);
  const schema::Migration migrations[] = {
      {1, "create", "CREATE TABLE log (step INTEGER);"},
      {2, "broken", "CREATE TABLE half (x); INSERT INTO no_such_table VALUES (1);"}};
  Status st = schema::Migrate(raw.get(), path_, migrations);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path_ + ": migration 2 (broken): no such table: no_such_table"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(raw.One("PRAGMA user_version"), "1");
  EXPECT_EQ(raw.One("SELECT count(*) FROM sqlite_schema WHERE name = 'half'"), "0");
  EXPECT_TRUE(sqlite3_get_autocommit(raw.get())) << "transaction left open";
}

// --- campaigns -------------------------------------------------------------------------------

using StoreCampaignTest = StoreTest;

TEST_F(StoreCampaignTest, CreateFindAndListRoundTrip) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  CampaignRow first = Campaign("hello");
  first.error = "";
  auto a = store->CreateCampaign(first, {}, {});
  auto b = store->CreateCampaign(Campaign("world"), {}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(*a, *b);

  auto list = store->ListCampaigns();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "hello");
  EXPECT_EQ((*list)[1].name, "world");
  const CampaignRow& got = (*list)[0];
  EXPECT_EQ(got.id, *a);
  EXPECT_EQ(got.state, "queued");
  EXPECT_EQ(got.baseline, "alpha");
  EXPECT_EQ(got.spec_toml, first.spec_toml);
  EXPECT_EQ(got.source, "hello.toml");
  EXPECT_EQ(got.created_at, "2025-03-01T12:00:00Z");
  EXPECT_EQ(got.finished_at, "");
  EXPECT_EQ(got.total_windows, 12);
  EXPECT_EQ(got.error, "");

  auto by_id = store->FindCampaignById(*b);
  ASSERT_TRUE(by_id.ok() && by_id->has_value());
  EXPECT_EQ((*by_id)->name, "world");
  auto absent = store->FindCampaign("nope");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  auto absent_id = store->FindCampaignById(*b + 100);
  ASSERT_TRUE(absent_id.ok());
  EXPECT_FALSE(absent_id->has_value());
}

TEST_F(StoreCampaignTest, DefaultsStateToQueuedAndCreatedAtToNow) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  CampaignRow c = Campaign("hello");
  c.state = "";
  c.created_at = "";
  ASSERT_TRUE(store->CreateCampaign(c, {}, {}).ok());
  auto found = store->FindCampaign("hello");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->state, "queued");
  EXPECT_TRUE(IsUtcTimestamp((*found)->created_at)) << (*found)->created_at;
}

TEST_F(StoreCampaignTest, ATakenNameIsAlreadyExistsAndAddsNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  CreateCampaign(*store, "hello");
  auto again = store->CreateCampaign(Campaign("hello"), {{"beta", "[]", ""}}, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            "campaign \"hello\" already exists in " + path_ + "; choose another name");
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM campaigns"), "1");
  EXPECT_EQ(raw.One("SELECT count(*) FROM targets WHERE name = 'beta'"), "0");
}

TEST_F(StoreCampaignTest, ABadScenarioKindCreatesNoCampaign) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto id = store->CreateCampaign(Campaign("hello"), {{"alpha", "[]", ""}},
                                  {{"plaintext", "benchmark", "GET", "/", 200, ""}});
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("scenario \"plaintext\""), std::string::npos)
      << id.status().message();
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM campaigns"), "0");
  EXPECT_EQ(raw.One("SELECT count(*) FROM targets"), "0");
}

TEST_F(StoreCampaignTest, SetStateRecordsFinishAndError) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t id = CreateCampaign(*store, "hello");

  ASSERT_TRUE(store->SetCampaignState(id, CampaignState::kRunning).ok());
  auto running = store->FindCampaignById(id);
  ASSERT_TRUE(running.ok() && running->has_value());
  EXPECT_EQ((*running)->state, "running");
  EXPECT_EQ((*running)->finished_at, "");

  ASSERT_TRUE(store->SetCampaignState(id, CampaignState::kFailed, "no load agent connected").ok());
  auto failed = store->FindCampaign("hello");
  ASSERT_TRUE(failed.ok() && failed->has_value());
  EXPECT_EQ((*failed)->state, "failed");
  EXPECT_EQ((*failed)->error, "no load agent connected");
  EXPECT_FALSE((*failed)->finished_at.empty());

  RawDb raw(path_);
  EXPECT_NE(raw.Exec("UPDATE campaigns SET state = 'paused'").find("CHECK constraint failed"),
            std::string::npos)
      << "the schema holds the states too";
  Status missing = store->SetCampaignState(id + 1, CampaignState::kDone);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(path_), std::string::npos);
}

TEST_F(StoreCampaignTest, TargetsAndScenariosAreInThePublicSchema) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::vector<TargetRow> targets = {{"alpha", R"(["./alpha","--port","{port}"])", "0-1"},
                                          {"beta", "", "2"}};
  const std::vector<ScenarioRow> scenarios = {
      {"plaintext", "scenario", "GET", "/plaintext", 200, "Hello, World!"},
      {"missing", "negative", "GET", "/nope", 404, ""}};
  auto id = store->CreateCampaign(Campaign("hello"), targets, scenarios);
  ASSERT_TRUE(id.ok()) << id.status().ToString();

  RawDb raw(path_);
  EXPECT_EQ(raw.Query("SELECT t.name, t.command_json, t.cpus, c.name FROM targets t "
                      "JOIN campaigns c ON c.id = t.campaign_id ORDER BY t.id"),
            (std::vector<std::vector<std::string>>{
                {"alpha", R"(["./alpha","--port","{port}"])", "0-1", "hello"},
                {"beta", "[]", "2", "hello"}}));
  EXPECT_EQ(raw.Query("SELECT name, kind, method, path, expect_status, expect_body, campaign_id "
                      "FROM scenarios ORDER BY id"),
            (std::vector<std::vector<std::string>>{
                {"plaintext", "scenario", "GET", "/plaintext", "200", "Hello, World!",
                 std::to_string(*id)},
                {"missing", "negative", "GET", "/nope", "404", "<null>", std::to_string(*id)}}));

  auto got_targets = store->ListTargets(*id);
  ASSERT_TRUE(got_targets.ok());
  ASSERT_EQ(got_targets->size(), 2u);
  EXPECT_EQ((*got_targets)[0].command_json, targets[0].command_json);
  EXPECT_EQ((*got_targets)[1].command_json, "[]");
  EXPECT_EQ((*got_targets)[1].cpus, "2");
  auto got_scenarios = store->ListScenarios(*id);
  ASSERT_TRUE(got_scenarios.ok());
  ASSERT_EQ(got_scenarios->size(), 2u);
  EXPECT_EQ((*got_scenarios)[0].expect_body, "Hello, World!");
  EXPECT_EQ((*got_scenarios)[1].kind, "negative");
  EXPECT_EQ((*got_scenarios)[1].expect_status, 404);
  EXPECT_EQ((*got_scenarios)[1].expect_body, "");
}

// --- windows and samples ----------------------------------------------------------------------

using StoreWindowTest = StoreTest;

TEST_F(StoreWindowTest, InsertAndListRoundTripEveryField) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow want = FullWindow(campaign, "alpha", 2);
  auto id = store->InsertWindow(want, Samples());
  ASSERT_TRUE(id.ok()) << id.status().ToString();

  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, *id);
  want.campaign = "hello";  // filled in from the campaigns table
  ExpectSameWindow((*rows)[0], want);
}

TEST_F(StoreWindowTest, UnavailableReadingsAreNullNotZero) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow w = FullWindow(campaign, "alpha", 1);
  w.max_temp_c.reset();
  w.throttle_events.reset();
  w.min_freq_ratio.reset();
  std::vector<SampleRow> samples = Samples();
  samples[0].foreign_pct = 3.5;
  ASSERT_TRUE(store->InsertWindow(w, samples).ok());
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM windows WHERE max_temp_c IS NULL AND throttle_events IS "
                    "NULL AND min_freq_ratio IS NULL AND swap_out_pages = 7"),
            "1");
  auto rows = store->ListWindows({});
  EXPECT_FALSE((*rows)[0].max_temp_c.has_value());
  auto stored = store->ListSamples((*rows)[0].id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)[0].foreign_pct, 3.5);
  EXPECT_FALSE((*stored)[1].foreign_pct.has_value());
}

TEST_F(StoreWindowTest, SpooledAgentResultsAreKeptOnce) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string bytes("\0bytes", 6);
  ASSERT_TRUE(store->KeepAgentResult("load-1", "7-a.load", bytes, kNoCap).ok());
  ASSERT_TRUE(store->KeepAgentResult("load-1", "7-a.load", bytes, kNoCap).ok());  // again
  ASSERT_TRUE(store->KeepAgentResult("server-1", "7-a.server", "x", kNoCap).ok());
  EXPECT_EQ(*store->CountAgentResults(), 2);
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT length(payload) FROM agent_results WHERE agent = 'load-1'"), "6");
  // SHA-256 of "x", as sha256sum prints it.
  EXPECT_EQ(raw.One("SELECT content_hash FROM agent_results WHERE agent = 'server-1'"),
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
  // Different bytes under the same key are kept beside the first, never over it.
  ASSERT_TRUE(store->KeepAgentResult("load-1", "7-a.load", "again", kNoCap).ok());
  EXPECT_EQ(*store->CountAgentResults(), 3);
}

TEST_F(StoreWindowTest, KeptAgentResultsStayUnderTheirCap) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->KeepAgentResult("load-1", "7-a.load", std::string(600, 'a'), 1000).ok());
  Status over = store->KeepAgentResult("load-2", "7-b.load", std::string(600, 'b'), 1000);
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted) << over.ToString();
  EXPECT_NE(over.message().find("1000 bytes"), std::string::npos) << over.message();
  EXPECT_EQ(*store->CountAgentResults(), 1);
  // The result kept already may be offered again: the agent deletes it once it is acknowledged.
  EXPECT_TRUE(store->KeepAgentResult("load-1", "7-a.load", std::string(600, 'a'), 1000).ok());
  EXPECT_TRUE(store->KeepAgentResult("load-2", "7-b.load", std::string(400, 'b'), 1000).ok());
  EXPECT_EQ(*store->CountAgentResults(), 2);
}

TEST_F(StoreWindowTest, PublicColumnsHaveTheirDocumentedNames) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  ASSERT_TRUE(store->InsertWindow(FullWindow(campaign, "alpha", 2), {}).ok());

  RawDb raw(path_);
  EXPECT_EQ(
      raw.Query("SELECT campaign, target, scenario, connections, round, position, attempt, "
                "verdict, reasons, started_at, ended_at, requests, rps, p50_us, p99_us, max_us, "
                "errors, server_cpu_s, cpu_us_per_request, rss_peak_kb FROM windows"),
      (std::vector<std::vector<std::string>>{{"hello",
                                              "alpha",
                                              "plaintext",
                                              "64",
                                              "2",
                                              "3",
                                              "1",
                                              "invalid",
                                              R"(["foreign CPU 12% on server host","steal 3%"])",
                                              "2025-03-01T12:00:05.250Z",
                                              "2025-03-01T12:00:15.250Z",
                                              "1234567",
                                              "123450.25",
                                              "310",
                                              "1450",
                                              "12001",
                                              "21",
                                              "17.75",
                                              "14.375",
                                              "81920"}}));
  EXPECT_EQ(raw.One("SELECT json_extract(status_counts, '$.503') FROM windows"), "6");
  EXPECT_EQ(raw.One("SELECT count(*) FROM windows w, json_each(w.reasons)"), "2");

  // Every column docs/store.md lists for windows, and no other.
  std::set<std::string> columns;
  for (const auto& row : raw.Query("SELECT name FROM pragma_table_info('windows')")) {
    columns.insert(row[0]);
  }
  const std::set<std::string> documented = {"id",
                                            "campaign_id",
                                            "campaign",
                                            "target",
                                            "scenario",
                                            "connections",
                                            "round",
                                            "position",
                                            "attempt",
                                            "verdict",
                                            "reasons",
                                            "started_at",
                                            "ended_at",
                                            "server_agent",
                                            "load_agent",
                                            "requests",
                                            "duration_s",
                                            "rps",
                                            "p50_us",
                                            "p90_us",
                                            "p99_us",
                                            "p999_us",
                                            "max_us",
                                            "mean_us",
                                            "errors",
                                            "errors_connect",
                                            "errors_read",
                                            "errors_write",
                                            "errors_timeout",
                                            "errors_parse",
                                            "errors_status",
                                            "status_counts",
                                            "server_cpu_s",
                                            "cpu_us_per_request",
                                            "rss_peak_kb",
                                            "rss_mean_kb",
                                            "startup_ms",
                                            "first_request_ms",
                                            "idle_rss_kb",
                                            "load_cpu_s",
                                            "align_error_ms",
                                            "histogram",
                                            "target_version",
                                            "cpu_accounting",
                                            "threads",
                                            "ctx_switches_voluntary",
                                            "ctx_switches_involuntary",
                                            "selftest_server_ms",
                                            "selftest_load_ms",
                                            "selftest_drift",
                                            "server_busy_pct",
                                            "server_steal_pct",
                                            "server_foreign_cpu_pct",
                                            "server_foreign_cpu_max_pct",
                                            "server_top_foreign",
                                            "load_busy_pct",
                                            "load_steal_pct",
                                            "load_foreign_cpu_pct",
                                            "load_foreign_cpu_max_pct",
                                            "load_top_foreign",
                                            "max_temp_c",
                                            "throttle_events",
                                            "min_freq_ratio",
                                            "swap_in_pages",
                                            "swap_out_pages",
                                            "server_host",
                                            "load_host",
                                            "load_depth",
                                            "load_rate",
                                            "sent",
                                            "dropped",
                                            "errors_mismatch",
                                            "generator_bound",
                                            "throughput_rps",
                                            "p99_uncorrected_us",
                                            "histogram_uncorrected",
                                            "load_record",
                                            "load_level",
                                            "noise",
                                            "pair",
                                            "errors_body_too_large",
                                            "outcome",
                                            "target_commit"};
  EXPECT_EQ(columns, documented);
  EXPECT_EQ(raw.One("SELECT count(*) FROM pragma_index_list('windows') "
                    "WHERE name = 'windows_by_campaign'"),
            "1");
}

TEST_F(StoreWindowTest, EmptyJsonFieldsAreStoredAsEmptyJson) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  WindowRow w = FullWindow(CreateCampaign(*store, "hello"), "alpha", 1);
  w.verdict = "valid";
  w.reasons = "";
  w.status_counts = "";
  ASSERT_TRUE(store->InsertWindow(w, {}).ok());
  RawDb raw(path_);
  EXPECT_EQ(raw.Query("SELECT reasons, status_counts FROM windows"),
            (std::vector<std::vector<std::string>>{{"[]", "{}"}}));
}

TEST_F(StoreWindowTest, ReasonsMustBeAJsonArray) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  WindowRow w = FullWindow(CreateCampaign(*store, "hello"), "alpha", 1);
  w.reasons = "foreign CPU";  // a bare string, not a JSON array
  auto id = store->InsertWindow(w, {});
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(StoreWindowTest, SamplesRoundTripInOrder) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  auto first = store->InsertWindow(FullWindow(campaign, "alpha", 1), Samples());
  auto second = store->InsertWindow(FullWindow(campaign, "alpha", 2), {{"load", 0.5, 1, 2, 3}});
  ASSERT_TRUE(first.ok() && second.ok());

  auto got = store->ListSamples(*first);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const auto want = Samples();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*got)[i].source, want[i].source) << i;
    EXPECT_EQ((*got)[i].t_s, want[i].t_s) << i;
    EXPECT_EQ((*got)[i].cpu_pct, want[i].cpu_pct) << i;
    EXPECT_EQ((*got)[i].rss_kb, want[i].rss_kb) << i;
    EXPECT_EQ((*got)[i].requests, want[i].requests) << i;
    EXPECT_EQ((*got)[i].p99_us, want[i].p99_us) << i;
  }
  auto other = store->ListSamples(*second);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ((*other)[0].requests, 3u);
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM samples WHERE window_id = " + std::to_string(*first) +
                    " AND source = 'server'"),
            "2");
}

TEST_F(StoreWindowTest, AFailingSampleLeavesNoWindowBehind) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  std::vector<SampleRow> samples = Samples();
  samples[1].source = "bogus";  // violates samples' CHECK after the window row was inserted

  auto id = store->InsertWindow(FullWindow(campaign, "alpha", 1), samples);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      id.status().message().find(path_ + ": insert window (campaign " + std::to_string(campaign) +
                                 ", target \"alpha\", scenario \"plaintext\", connections "
                                 "64, round 1, attempt 1): sample 1: CHECK constraint"),
      std::string::npos)
      << id.status().message();

  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT count(*) FROM windows"), "0");
  EXPECT_EQ(raw.One("SELECT count(*) FROM samples"), "0");
  auto listed = store->ListWindows({});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());

  // Nothing of the failed attempt lingers: the same window can be stored now.
  auto retry = store->InsertWindow(FullWindow(campaign, "alpha", 1), Samples());
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(raw.One("SELECT count(*) FROM samples"), "3");
}

TEST_F(StoreWindowTest, VerdictCheckRejectsUnknownValues) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow w = FullWindow(campaign, "alpha", 1);
  w.verdict = "great";
  auto id = store->InsertWindow(w, {});
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("CHECK constraint failed: verdict"), std::string::npos)
      << id.status().message();

  // The schema itself refuses it, whoever writes.
  RawDb raw(path_);
  ASSERT_TRUE(store->InsertWindow(FullWindow(campaign, "alpha", 1), {}).ok());
  EXPECT_NE(raw.Exec("UPDATE windows SET verdict = 'great'").find("CHECK constraint failed"),
            std::string::npos);
  EXPECT_EQ(raw.One("SELECT verdict FROM windows"), "invalid");
  for (const char* verdict : {"valid", "failed", "skipped"}) {
    EXPECT_EQ(raw.Exec(std::string("UPDATE windows SET verdict = '") + verdict + "'"), "");
  }
}

TEST_F(StoreWindowTest, ASecondAttemptIsANewRowAndARepeatedOneIsAlreadyExists) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow w = FullWindow(campaign, "alpha", 1);
  ASSERT_TRUE(store->InsertWindow(w, {}).ok());
  auto repeated = store->InsertWindow(w, {});
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(repeated.status().message().find("UNIQUE constraint failed"), std::string::npos);
  w.attempt = 2;
  w.verdict = "valid";
  ASSERT_TRUE(store->InsertWindow(w, {}).ok());
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].attempt, 2);
}

TEST_F(StoreWindowTest, TheCampaignIsFoundByIdOrByName) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");

  WindowRow by_name = FullWindow(0, "alpha", 1);
  by_name.campaign = "hello";
  auto id = store->InsertWindow(by_name, {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok() && rows->size() == 1u);
  EXPECT_EQ((*rows)[0].campaign_id, campaign);

  auto unknown = store->InsertWindow(FullWindow(campaign + 7, "alpha", 2), {});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  WindowRow unknown_name = FullWindow(0, "alpha", 2);
  unknown_name.campaign = "nope";
  EXPECT_EQ(store->InsertWindow(unknown_name, {}).status().code(), StatusCode::kNotFound);
  WindowRow mismatch = FullWindow(campaign, "alpha", 2);
  mismatch.campaign = "world";
  auto bad = store->InsertWindow(mismatch, {});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("is named \"hello\", not \"world\""), std::string::npos)
      << bad.status().message();
}

TEST_F(StoreWindowTest, FiltersByCampaignAfterIdAndLimit) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  const int64_t world = CreateCampaign(*store, "world");
  std::vector<int64_t> hello_ids, world_ids;
  for (int round = 1; round <= 3; ++round) {
    auto h = store->InsertWindow(FullWindow(hello, "alpha", round), {});
    auto w = store->InsertWindow(FullWindow(world, "alpha", round), {});
    ASSERT_TRUE(h.ok() && w.ok());
    hello_ids.push_back(*h);
    world_ids.push_back(*w);
  }

  auto all = store->ListWindows({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Ids(*all), (std::vector<int64_t>{hello_ids[0], world_ids[0], hello_ids[1], world_ids[1],
                                             hello_ids[2], world_ids[2]}));
  auto only_hello = store->ListWindows({.campaign = "hello"});
  ASSERT_TRUE(only_hello.ok());
  EXPECT_EQ(Ids(*only_hello), hello_ids);
  for (const WindowRow& w : *only_hello) EXPECT_EQ(w.campaign, "hello");

  auto after = store->ListWindows({.campaign = "world", .after_id = world_ids[0]});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(Ids(*after), (std::vector<int64_t>{world_ids[1], world_ids[2]}));
  auto limited =
      store->ListWindows({.campaign = std::nullopt, .after_id = hello_ids[0], .limit = 2});
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(Ids(*limited), (std::vector<int64_t>{world_ids[0], hello_ids[1]}));
  auto none = store->ListWindows({.campaign = "nope"});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreWindowTest, DeletingACampaignDeletesItsRows) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  const int64_t world = CreateCampaign(*store, "world");
  ASSERT_TRUE(store->InsertWindow(FullWindow(hello, "alpha", 1), Samples()).ok());
  ASSERT_TRUE(store->InsertWindow(FullWindow(world, "alpha", 1), Samples()).ok());

  RawDb raw(path_);
  ASSERT_EQ(raw.Exec("PRAGMA foreign_keys = ON; DELETE FROM campaigns WHERE name = 'hello'"), "");
  EXPECT_EQ(raw.One("SELECT count(*) FROM windows"), "1");
  EXPECT_EQ(raw.One("SELECT count(*) FROM samples"), "3");
  EXPECT_EQ(raw.One("SELECT count(*) FROM targets"), "1");
  EXPECT_EQ(raw.One("SELECT count(*) FROM scenarios"), "1");
}

// --- several connections -------------------------------------------------------------------

using StoreConcurrencyTest = StoreTest;

TEST_F(StoreConcurrencyTest, ASecondStoreOnTheFileSeesTheFirstOnesRows) {
  auto writer = OpenStore();
  auto reader = OpenStore();
  ASSERT_TRUE(writer != nullptr && reader != nullptr);
  const int64_t campaign = CreateCampaign(*writer, "hello");
  auto id = writer->InsertWindow(FullWindow(campaign, "alpha", 1), Samples());
  ASSERT_TRUE(id.ok());

  auto found = reader->FindCampaign("hello");
  ASSERT_TRUE(found.ok() && found->has_value());
  auto rows = reader->ListWindows({.campaign = "hello"});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, *id);
  auto samples = reader->ListSamples(*id);
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), 3u);
}

TEST_F(StoreConcurrencyTest, AnOpenReadDoesNotBlockTheWriter) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  RawDb reader(path_);
  sqlite3_busy_timeout(reader.get(), 0);
  ASSERT_EQ(reader.Exec("BEGIN"), "");
  EXPECT_EQ(reader.One("SELECT count(*) FROM windows"), "0");  // the read snapshot starts here

  // Without WAL the reader's shared lock would make this wait out the busy timeout and fail.
  const auto start = std::chrono::steady_clock::now();
  auto id = store->InsertWindow(FullWindow(campaign, "alpha", 1), Samples());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  EXPECT_EQ(reader.One("SELECT count(*) FROM windows"), "0");  // still its own snapshot
  ASSERT_EQ(reader.Exec("COMMIT"), "");
  EXPECT_EQ(reader.One("SELECT count(*) FROM windows"), "1");
  EXPECT_EQ(reader.One("SELECT count(*) FROM samples"), "3");
}

TEST_F(StoreConcurrencyTest, ThreadsShareOneStore) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  constexpr int kThreads = 4, kRounds = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 1; round <= kRounds; ++round) {
        WindowRow w = FullWindow(campaign, "target-" + std::to_string(t), round);
        if (!store->InsertWindow(w, Samples()).ok()) ++failures;
        if (!store->ListWindows({.campaign = std::nullopt, .after_id = 0, .limit = 5}).ok())
          ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), static_cast<size_t>(kThreads * kRounds));
}

// --- docs/store.md ---------------------------------------------------------------------------

// Every ```sql block of docs/store.md, in order.
std::vector<std::string> DocumentedQueries() {
  std::ifstream in(std::string(BENCHLAB_SOURCE_DIR) + "/docs/store.md");
  std::vector<std::string> queries;
  std::string line, query;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```sql") {
      inside = true;
      query.clear();
    } else if (inside && line == "```") {
      inside = false;
      queries.push_back(query);
    } else if (inside) {
      query += line + "\n";
    }
  }
  return queries;
}

using StoreDocsTest = StoreTest;

TEST_F(StoreDocsTest, ExampleQueriesRunAndReturnRows) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  CreateCampaign(*store, "world");
  // Three rounds of two targets; round 2 of beta was invalid and re-run. alpha ran with a
  // database beside it (docs/services.md).
  ServiceRow pg;
  pg.service = "pg";
  pg.cpu_user_s = 0.5;
  pg.cpu_sys_s = 0.25;
  pg.cpu_accounting = "cgroup";
  for (int round = 1; round <= 3; ++round) {
    for (const char* target : {"alpha", "beta"}) {
      WindowRow w = FullWindow(hello, target, round);
      w.verdict = "valid";
      w.reasons = "[]";
      w.rps = 100000.0 * round + (target[0] == 'a' ? 5000 : 0);
      if (round == 2 && target[0] == 'b') {
        w.verdict = "invalid";
        w.reasons = R"(["foreign CPU 12% on server host"])";
        ASSERT_TRUE(store->InsertWindow(w, Samples()).ok());
        w.attempt = 2;
        w.verdict = "valid";
        w.reasons = "[]";
      }
      std::vector<ServiceRow> services;
      if (target[0] == 'a') services.push_back(pg);
      ASSERT_TRUE(store->InsertWindow(w, Samples(), services).ok());
    }
  }
  // A noise window whose load agent was lost.
  WindowRow lost = FullWindow(hello, "alpha", 0);
  lost.noise = 1;
  lost.verdict = "failed";
  const WindowReason gone{ReasonKind::kAgentLost,
                          "run_load",
                          "UNAVAILABLE",
                          "load-1",
                          std::nullopt,
                          std::nullopt,
                          "agent_lost: run_load: agent load-1: gone"};
  lost.reasons = ReasonTextsJson({gone});
  lost.outcome = OutcomeJson({gone});
  ASSERT_TRUE(store->InsertWindow(lost, Samples()).ok());
  ASSERT_TRUE(store->SetCampaignState(hello, CampaignState::kDone).ok());

  const auto queries = DocumentedQueries();
  ASSERT_GE(queries.size(), 4u) << "docs/store.md lost its example queries";
  RawDb raw(path_);
  for (const std::string& sql : queries) {
    EXPECT_FALSE(raw.Query(sql).empty()) << "no rows from:\n" << sql;
  }
  // The median query counts the re-run (valid) attempt, not the invalid one.
  auto medians = raw.Query(queries[0]);
  ASSERT_EQ(medians.size(), 2u);
  EXPECT_EQ(medians[0][0], "alpha");
  EXPECT_EQ(medians[0][3], "205000.0");
  EXPECT_EQ(medians[0][4], "3");
  EXPECT_EQ(medians[1][0], "beta");
  EXPECT_EQ(medians[1][3], "200000.0");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// --- the scheduler's state: claims, re-runs, placement ------------------------------------

using StoreStateTest = StoreWindowTest;

WindowClaim ClaimOf(const WindowRow& w) {
  WindowClaim claim;
  claim.campaign_id = w.campaign_id;
  claim.key = w.Key();
  claim.connections = w.connections;
  claim.attempt = w.attempt;
  claim.server_agent = w.server_agent;
  claim.load_agent = w.load_agent;
  return claim;
}

TEST_F(StoreStateTest, AClaimLeftByACrashBecomesAFailedAttempt) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow running = FullWindow(campaign, "alpha", 1);
  running.load_level = "c" + std::to_string(running.connections);
  ASSERT_TRUE(store->ClaimWindow(ClaimOf(running)).ok());
  // A window that finished normally leaves no claim behind.
  WindowRow finished = FullWindow(campaign, "alpha", 2);
  finished.load_level = "c" + std::to_string(finished.connections);
  ASSERT_TRUE(store->ClaimWindow(ClaimOf(finished)).ok());
  ASSERT_TRUE(store->InsertWindow(finished, {}).ok());

  auto failed = store->FailClaimedWindows("coordinator_restart: cut off");
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  EXPECT_EQ(*failed, 1);
  auto rows = store->ListWindows({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  const WindowRow& cut = (*rows)[1];
  EXPECT_EQ(cut.round, 1);
  EXPECT_EQ(cut.verdict, "failed");
  EXPECT_EQ(cut.reasons, R"(["coordinator_restart: cut off"])");
  EXPECT_EQ(cut.attempt, running.attempt);
  EXPECT_EQ(cut.server_agent, "server-1");
  // Done once: a second start finds nothing more.
  EXPECT_EQ(*store->FailClaimedWindows("coordinator_restart: again"), 0);
}

TEST_F(StoreStateTest, RerunRequestsRequeueAFinishedCampaignUntilTheNewAttemptIsStored) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  WindowRow w = FullWindow(campaign, "alpha", 1);
  auto id = store->InsertWindow(w, {});
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->SetCampaignState(campaign, CampaignState::kDone).ok());

  auto missing = store->RequestReruns({*id, 999999});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("999999"), std::string::npos);
  EXPECT_TRUE(store->ListRerunRequests(campaign)->empty()) << "all or nothing";

  auto names = store->RequestReruns({*id, *id});
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, std::vector<std::string>{"hello"});
  EXPECT_EQ((*store->FindCampaign("hello"))->state, "queued");
  auto pending = store->ListRerunRequests(campaign);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0], (*store->ListWindows({}))[0].Key());

  w.attempt = 2;
  ASSERT_TRUE(store->InsertWindow(w, {}).ok());
  EXPECT_TRUE(store->ListRerunRequests(campaign)->empty());
}

TEST_F(StoreStateTest, PlacementIsKeptWithTheCampaign) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  EXPECT_EQ((*store->FindCampaign("hello"))->placement, "{}");
  ASSERT_TRUE(store->SetCampaignPlacement(campaign, R"({"server":"s1","load":["l1"]})").ok());
  EXPECT_EQ((*store->FindCampaign("hello"))->placement, R"({"server":"s1","load":["l1"]})");
  EXPECT_FALSE(store->SetCampaignPlacement(campaign, "not json").ok());
}

TEST_F(StoreStateTest, NoiseWindowsOfOneCellAreDistinctWindows) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t campaign = CreateCampaign(*store, "hello");
  for (int k = 0; k < 3; ++k) {
    WindowRow w = FullWindow(campaign, "alpha", 0);
    w.noise = 1;
    w.position = k;
    w.load_level = "r5000";
    EXPECT_TRUE(store->InsertWindow(w, {}).ok()) << k;
  }
  WindowRow again = FullWindow(campaign, "alpha", 0);
  again.noise = 1;
  again.position = 1;
  again.load_level = "r5000";
  EXPECT_EQ(store->InsertWindow(again, {}).status().code(), StatusCode::kAlreadyExists);
}

// --- self-test calibrations -------------------------------------------------------------------

TEST_F(StoreTest, SelftestCalibrationsRoundTripOnePerAgentByName) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  const int64_t world = CreateCampaign(*store, "world");
  SelftestCalibrationRow srv{
      hello, "srv", 7, 82.5, 0.044478, 17.7912, "calibrated", "2026-12-01T10:00:00Z"};
  SelftestCalibrationRow ld{hello, "ld", 3, 40, std::nullopt, 10, "configured", ""};
  SelftestCalibrationRow other{world, "srv", 7, 90, 0.3, 50, "capped", "2026-12-01T11:00:00Z"};
  for (const auto& row : {srv, ld, other}) {
    ASSERT_TRUE(store->PutSelftestCalibration(row).ok());
  }
  auto rows = store->ListSelftestCalibrations(hello);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE(IsUtcTimestamp((*rows)[0].calibrated_at)) << (*rows)[0].calibrated_at;
  ld.calibrated_at = (*rows)[0].calibrated_at;  // set by the store
  EXPECT_EQ((*rows)[0], ld);                    // by agent name: "ld" before "srv"
  EXPECT_EQ((*rows)[1], srv);
  EXPECT_EQ(*store->ListSelftestCalibrations(world), std::vector<SelftestCalibrationRow>{other});
  EXPECT_TRUE(store->ListSelftestCalibrations(world + 1)->empty());

  // A campaign resumed calibrates again: the latest replaces the agent's row.
  srv.median_ms = 95;
  srv.spread = 0.01;
  srv.threshold_pct = 10;
  srv.threshold_source = "configured";
  srv.calibrated_at = "2026-12-02T10:00:00Z";
  ASSERT_TRUE(store->PutSelftestCalibration(srv).ok());
  rows = store->ListSelftestCalibrations(hello);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1], srv);

  // A public table: what a user's query sees.
  RawDb raw(path_);
  EXPECT_EQ(
      raw.Query("SELECT agent, runs, median_ms, spread, threshold_pct, threshold_source "
                "FROM selftest_calibrations WHERE campaign_id = " +
                std::to_string(hello) + " ORDER BY agent"),
      (std::vector<std::vector<std::string>>{{"ld", "3", "40.0", "<null>", "10.0", "configured"},
                                             {"srv", "7", "95.0", "0.01", "10.0", "configured"}}));
  // Its rows go with their campaign.
  ASSERT_EQ(raw.Exec("PRAGMA foreign_keys = ON; DELETE FROM campaigns WHERE id = " +
                     std::to_string(hello)),
            "");
  EXPECT_TRUE(store->ListSelftestCalibrations(hello)->empty());
}

TEST_F(StoreTest, ASelftestCalibrationNeedsItsCampaignAndAKnownSource) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const int64_t hello = CreateCampaign(*store, "hello");
  Status st = store->PutSelftestCalibration({hello + 1, "srv", 7, 80, 0.05, 20, "calibrated", ""});
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("store the self-test calibration of agent srv in campaign " +
                              std::to_string(hello + 1) + ": no such campaign"),
            std::string::npos)
      << st.message();
  st = store->PutSelftestCalibration({hello, "srv", 7, 80, 0.05, 20, "guessed", ""});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_TRUE(store->ListSelftestCalibrations(hello)->empty());
}

// --- the audit trail ---------------------------------------------------------------------------

TEST_F(StoreTest, TheAuditTrailKeepsEveryFieldInOrderAndFiltersBySince) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  AuditRow a{0,
             "2026-12-01T10:00:00.000Z",
             "benchlab://operator/alice",
             "operator",
             "ipv4:10.0.0.5:5000",
             "SubmitCampaign",
             "campaign nightly",
             "ok",
             ""};
  AuditRow b{0,
             "2026-12-01T11:00:00.000Z",
             "benchlab://agent/srv",
             "agent",
             "ipv4:10.0.0.6:1",
             "SubmitCampaign",
             "campaign x",
             "refused",
             "needs an operator certificate"};
  ASSERT_TRUE(store->AppendAudit(a).ok());
  ASSERT_TRUE(store->AppendAudit(b).ok());
  auto all = store->ListAudit("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].identity, "benchlab://operator/alice");
  EXPECT_EQ((*all)[1].outcome, "refused");
  EXPECT_EQ((*all)[1].reason, "needs an operator certificate");
  EXPECT_EQ((*all)[1].peer, "ipv4:10.0.0.6:1");
  auto later = store->ListAudit("2026-12-01T10:30:00Z");
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ(later->front().subject, "campaign x");
  // Only the three outcomes are stored.
  b.outcome = "maybe";
  EXPECT_FALSE(store->AppendAudit(b).ok());
}

AuditRow Refusal(const std::string& at, const std::string& peer) {
  return {
      0,         at,         "dashboard:anonymous", "", peer, "DashboardRead", "/api/v1/campaigns",
      "refused", "bad token"};
}

AuditRow TokenCreated(const std::string& at, int i) {
  return {0, at, "local:root", "", "local", "TokenCreate", "token t" + std::to_string(i), "ok", ""};
}

TEST_F(StoreTest, FiveHundredIdenticalRefusalsAreOneRowWithTheirCount) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  // One client without credentials, a new source port per request, 100 ms apart.
  for (int i = 0; i < 500; ++i) {
    char at[32];
    std::snprintf(at, sizeof at, "2026-12-01T10:00:%02d.%03dZ", i / 10, i % 10 * 100);
    ASSERT_TRUE(store->AppendAudit(Refusal(at, "127.0.0.1:" + std::to_string(40000 + i))).ok());
  }
  auto rows = store->ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().count, 500);
  EXPECT_EQ(rows->front().at, "2026-12-01T10:00:00.000Z") << "the first refusal's time";
}

TEST_F(StoreTest, OnlyIdenticalRefusalsFromOneAddressWithinAMinuteAreCoalesced) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AppendAudit(Refusal("2026-12-01T10:00:00.000Z", "ipv4:10.0.0.5:1")).ok());
  // Another port of the same address: counted.
  ASSERT_TRUE(store->AppendAudit(Refusal("2026-12-01T10:00:30.000Z", "ipv4:10.0.0.5:2")).ok());
  // Another address, another reason, another identity, another call: rows of their own.
  ASSERT_TRUE(store->AppendAudit(Refusal("2026-12-01T10:00:31.000Z", "ipv4:10.0.0.50:2")).ok());
  AuditRow other = Refusal("2026-12-01T10:00:32.000Z", "ipv4:10.0.0.5:3");
  other.reason = "token revoked";
  ASSERT_TRUE(store->AppendAudit(other).ok());
  other = Refusal("2026-12-01T10:00:33.000Z", "ipv4:10.0.0.5:3");
  other.identity = "dashboard:watcher";
  ASSERT_TRUE(store->AppendAudit(other).ok());
  other = Refusal("2026-12-01T10:00:34.000Z", "ipv4:10.0.0.5:3");
  other.call = "DashboardRerun";
  ASSERT_TRUE(store->AppendAudit(other).ok());
  // More than a minute after the first: a new row.
  ASSERT_TRUE(store->AppendAudit(Refusal("2026-12-01T10:01:00.001Z", "ipv4:10.0.0.5:4")).ok());
  // Calls that were not refused are each a row.
  AuditRow failed = Refusal("2026-12-01T10:01:01.000Z", "ipv4:10.0.0.5:5");
  failed.outcome = "failed";
  ASSERT_TRUE(store->AppendAudit(failed).ok());
  ASSERT_TRUE(store->AppendAudit(failed).ok());
  auto rows = store->ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<int64_t> counts;
  for (const AuditRow& r : *rows) counts.push_back(r.count);
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(rows->front().peer, "ipv4:10.0.0.5:1") << "the first refusal's peer";
}

TEST_F(StoreTest, EachAuditFieldIsKeptTo256BytesWithAMarker) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  // A viewer's refused CancelCampaign naming a 3 MiB campaign.
  AuditRow row{0,
               "2026-12-01T10:00:00.000Z",
               "benchlab://viewer/victor",
               "viewer",
               "ipv4:10.0.0.5:1",
               "CancelCampaign",
               "campaign " + std::string(3 << 20, 'n'),
               "refused",
               std::string(300, 'r') + "é"};
  ASSERT_TRUE(store->AppendAudit(row).ok());
  auto rows = store->ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const AuditRow& kept = rows->front();
  EXPECT_EQ(kept.subject, "campaign " + std::string(256 - 9, 'n') + "…[+3145481 bytes]");
  EXPECT_EQ(kept.reason, std::string(256, 'r') + "…[+46 bytes]");
  EXPECT_EQ(kept.identity, "benchlab://viewer/victor");
  RawDb raw(path_);
  EXPECT_EQ(raw.One("SELECT max(length(CAST(subject AS BLOB))) FROM audit"), "275");
}

TEST_F(StoreTest, RetentionDeletesRowsOlderThanItsDaysAndBeyondItsRows) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  // Without a retention set (a command run on the coordinator's machine), nothing is pruned.
  ASSERT_TRUE(store->AppendAudit(TokenCreated("2026-01-01T00:00:00.000Z", 0)).ok());
  for (int i = 1; i <= 300; ++i) {
    ASSERT_TRUE(store->AppendAudit(TokenCreated("2026-12-01T10:00:00.000Z", i)).ok());
  }
  EXPECT_EQ(store->ListAudit("")->size(), 301u);
  // 90 days before 2026-12-01 is 2026-09-02: the January row goes; then the newest 200 stay.
  const auto now = std::chrono::system_clock::from_time_t(1796119200);  // 2026-12-01T10:00:00Z
  auto pruned = store->PruneAudit({90, 200}, now);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(*pruned, 101);
  auto rows = store->ListAudit("");
  ASSERT_EQ(rows->size(), 200u);
  EXPECT_EQ(rows->front().subject, "token t101");
  EXPECT_EQ(rows->back().subject, "token t300");
}

TEST_F(StoreTest, WithARetentionSetAppendingPrunesAsItGoes) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  store->SetAuditRetention({30, 200});
  // max_rows = 200: pruned every second row, to the newest 200 (at most 1% more).
  for (int i = 1; i <= 500; ++i) {
    ASSERT_TRUE(store->AppendAudit(TokenCreated("2026-12-01T10:00:00.000Z", i)).ok());
  }
  auto rows = store->ListAudit("");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 200u);
  EXPECT_EQ(rows->front().id, 301);
  EXPECT_EQ(rows->back().id, 500);
  // The first call an hour or more after the last pruning prunes by age too: a month on, the
  // rows above are more than 30 days old.
  ASSERT_TRUE(store->AppendAudit(TokenCreated("2027-01-01T11:00:00.000Z", 501)).ok());
  rows = store->ListAudit("");
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().subject, "token t501");
}

// A row whose time is not one is pruned against the store's clock, not the machine's: with the
// clock at 2099-12-02, a row of 2099-10-15 is more than 30 days old (by the machine's date it is
// not old at all).
TEST_F(StoreTest, ARowWithoutATimePrunesAtTheStoresClock) {
  FakeClock clock;
  clock.Advance(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::from_time_t(4099888800) - clock.WallNow()));  // 2099-12-02T10Z
  auto opened = Store::Open(path_, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  ASSERT_TRUE(store.AppendAudit(TokenCreated("2099-10-15T10:00:00.000Z", 1)).ok());
  ASSERT_TRUE(store.AppendAudit(TokenCreated("2099-12-01T10:00:00.000Z", 2)).ok());
  store.SetAuditRetention({30, 100});  // max_rows 100: pruned on every row appended
  ASSERT_TRUE(store.AppendAudit(TokenCreated("yesterday", 3)).ok());
  auto rows = store.ListAudit("");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> subjects;
  for (const AuditRow& r : *rows) subjects.push_back(r.subject);
  EXPECT_EQ(subjects, (std::vector<std::string>{"token t2", "token t3"}));
}

}  // namespace
}  // namespace benchlab

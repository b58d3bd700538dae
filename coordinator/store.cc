// The store's SQL. Every value reaches SQLite as a bound parameter; the only SQL text built at
// run time is column lists from kWindowColumns and the WHERE clause shape of ListWindows.
#include "coordinator/store.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "common/clock.h"
#include "common/printable.h"
#include "coordinator/outcome.h"
#include "coordinator/schema.h"

namespace benchlab {
namespace {

// A prepared statement that finalizes itself. Bind errors are remembered and reported by the
// next Step(), so callers check one return code per row instead of one per value.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : rc_(sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr)) {}
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // SQLITE_OK once prepared; the preparation error otherwise.
  int prepare_rc() const { return rc_; }

  void Bind(int i, int64_t v) {
    Try([&] { return sqlite3_bind_int64(stmt_, i, v); });
  }
  void Bind(int i, int v) { Bind(i, static_cast<int64_t>(v)); }
  // Counters stay far below 2^63, so SQLite's signed INTEGER holds them unchanged.
  void Bind(int i, uint64_t v) { Bind(i, static_cast<int64_t>(v)); }
  void Bind(int i, double v) {
    Try([&] { return sqlite3_bind_double(stmt_, i, v); });
  }
  template <typename T>
  void Bind(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      Try([&] { return sqlite3_bind_null(stmt_, i); });
    }
  }
  void BindBlob(int i, const std::string& v) {
    Try([&] {
      return sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    });
  }
  void Bind(int i, const std::string& v) {
    Try([&] {
      return sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    });
  }

  // SQLITE_ROW, SQLITE_DONE or an (extended) error code.
  int Step() { return rc_ != SQLITE_OK ? rc_ : sqlite3_step(stmt_); }
  // Makes the statement ready for another row's bindings.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int64(int col) { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) { return sqlite3_column_double(stmt_, col); }
  // NULL reads as "", matching the rows' "empty means absent".
  std::string Blob(int col) {
    const void* bytes = sqlite3_column_blob(stmt_, col);
    return bytes == nullptr ? std::string()
                            : std::string(static_cast<const char*>(bytes),
                                          static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::string Text(int col) {
    const unsigned char* text = sqlite3_column_text(stmt_, col);
    return text == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, col));
  }
  void Read(int col, int64_t& v) { v = Int64(col); }
  void Read(int col, int& v) { v = static_cast<int>(Int64(col)); }
  void Read(int col, uint64_t& v) { v = static_cast<uint64_t>(Int64(col)); }
  void Read(int col, double& v) { v = Double(col); }
  void Read(int col, std::string& v) { v = Text(col); }
  template <typename T>
  void Read(int col, std::optional<T>& v) {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) {
      v.reset();
    } else {
      T value{};
      Read(col, value);
      v = value;
    }
  }

 private:
  // Runs a bind call unless an earlier step already failed (or the statement never compiled).
  template <typename F>
  void Try(F bind) {
    if (rc_ == SQLITE_OK) rc_ = bind();
  }
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Turns a failed SQLite call into a Status naming the database and the operation.
Status SqlError(sqlite3* db, int rc, const std::string& path, const std::string& what) {
  std::string message = path + ": " + what + ": " + sqlite3_errmsg(db);
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return Status::AlreadyExists(std::move(message));
      }
      return Status::InvalidArgument(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::FailedPrecondition(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

// Runs a statement that returns no rows.
Status Run(sqlite3* db, Stmt& stmt, const std::string& path, const std::string& what) {
  int rc = stmt.Step();
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::Ok();
  return SqlError(db, rc, path, what);
}

// Steps through a query's rows, reading each with read(stmt).
template <typename T, typename ReadRow>
Result<std::vector<T>> Collect(sqlite3* db, Stmt& stmt, const std::string& path,
                               const std::string& what, ReadRow read) {
  std::vector<T> rows;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) rows.push_back(read(stmt));
  if (rc != SQLITE_DONE) return SqlError(db, rc, path, what);
  return rows;
}

// BEGIN IMMEDIATE takes the write lock up front, so a transaction never fails half-way for lack
// of it; whatever has not been committed is rolled back when the object goes away.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status Begin(const std::string& what) {
    Stmt begin(db_, "BEGIN IMMEDIATE");
    BENCHLAB_RETURN_IF_ERROR(Run(db_, begin, path_, "begin " + what));
    open_ = true;
    return Status::Ok();
  }
  Status Commit(const std::string& what) {
    Stmt commit(db_, "COMMIT");
    BENCHLAB_RETURN_IF_ERROR(Run(db_, commit, path_, "commit " + what));
    open_ = false;
    return Status::Ok();
  }

 private:
  sqlite3* const db_;
  const std::string& path_;
  bool open_ = false;
};

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof digest);
  for (unsigned char b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

// A window's name in the claim and re-run tables: parameters 1 to 7.
constexpr const char* kWhereKey =
    " WHERE campaign_id = ?1 AND target = ?2 AND scenario = ?3 AND load_level = ?4 AND "
    "round = ?5 AND position = ?6 AND pair = ?7";
void BindKey(Stmt& stmt, int64_t campaign_id, const WindowKey& key) {
  stmt.Bind(1, campaign_id);
  stmt.Bind(2, key.target);
  stmt.Bind(3, key.scenario);
  stmt.Bind(4, key.load_level);
  stmt.Bind(5, key.round);
  stmt.Bind(6, key.position);
  stmt.Bind(7, key.pair);
}

// Every WindowRow field stored as a column of the same name, in table order. Insert and select
// are both generated from this list, so a field cannot be written and then not read back.
using WindowField =
    std::variant<std::string WindowRow::*, int WindowRow::*, uint64_t WindowRow::*,
                 double WindowRow::*, int64_t WindowRow::*, std::optional<double> WindowRow::*,
                 std::optional<int64_t> WindowRow::*>;
struct WindowColumn {
  const char* name;
  WindowField field;
};
// Packed by hand: one column per line would run the list to 40 lines.
// clang-format off
const WindowColumn kWindowColumns[] = {
    {"target", &WindowRow::target}, {"scenario", &WindowRow::scenario},
    {"connections", &WindowRow::connections}, {"round", &WindowRow::round},
    {"position", &WindowRow::position}, {"attempt", &WindowRow::attempt},
    {"verdict", &WindowRow::verdict}, {"reasons", &WindowRow::reasons},
    {"started_at", &WindowRow::started_at}, {"ended_at", &WindowRow::ended_at},
    {"server_agent", &WindowRow::server_agent}, {"load_agent", &WindowRow::load_agent},
    {"requests", &WindowRow::requests}, {"duration_s", &WindowRow::duration_s},
    {"rps", &WindowRow::rps}, {"p50_us", &WindowRow::p50_us}, {"p90_us", &WindowRow::p90_us},
    {"p99_us", &WindowRow::p99_us}, {"p999_us", &WindowRow::p999_us},
    {"max_us", &WindowRow::max_us}, {"mean_us", &WindowRow::mean_us},
    {"errors", &WindowRow::errors}, {"errors_connect", &WindowRow::errors_connect},
    {"errors_read", &WindowRow::errors_read}, {"errors_write", &WindowRow::errors_write},
    {"errors_timeout", &WindowRow::errors_timeout}, {"errors_parse", &WindowRow::errors_parse},
    {"errors_status", &WindowRow::errors_status}, {"status_counts", &WindowRow::status_counts},
    {"server_cpu_s", &WindowRow::server_cpu_s},
    {"cpu_us_per_request", &WindowRow::cpu_us_per_request},
    {"rss_peak_kb", &WindowRow::rss_peak_kb}, {"rss_mean_kb", &WindowRow::rss_mean_kb},
    {"startup_ms", &WindowRow::startup_ms}, {"first_request_ms", &WindowRow::first_request_ms},
    {"idle_rss_kb", &WindowRow::idle_rss_kb}, {"load_cpu_s", &WindowRow::load_cpu_s},
    {"align_error_ms", &WindowRow::align_error_ms}, {"histogram", &WindowRow::histogram},
    // Schema version 2.
    {"target_version", &WindowRow::target_version},
    {"cpu_accounting", &WindowRow::cpu_accounting}, {"threads", &WindowRow::threads},
    {"ctx_switches_voluntary", &WindowRow::ctx_switches_voluntary},
    {"ctx_switches_involuntary", &WindowRow::ctx_switches_involuntary},
    {"selftest_server_ms", &WindowRow::selftest_server_ms},
    {"selftest_load_ms", &WindowRow::selftest_load_ms},
    {"selftest_drift", &WindowRow::selftest_drift},
    {"server_busy_pct", &WindowRow::server_busy_pct},
    {"server_steal_pct", &WindowRow::server_steal_pct},
    {"server_foreign_cpu_pct", &WindowRow::server_foreign_cpu_pct},
    {"server_foreign_cpu_max_pct", &WindowRow::server_foreign_cpu_max_pct},
    {"server_top_foreign", &WindowRow::server_top_foreign},
    {"load_busy_pct", &WindowRow::load_busy_pct}, {"load_steal_pct", &WindowRow::load_steal_pct},
    {"load_foreign_cpu_pct", &WindowRow::load_foreign_cpu_pct},
    {"load_foreign_cpu_max_pct", &WindowRow::load_foreign_cpu_max_pct},
    {"load_top_foreign", &WindowRow::load_top_foreign},
    {"max_temp_c", &WindowRow::max_temp_c}, {"throttle_events", &WindowRow::throttle_events},
    {"min_freq_ratio", &WindowRow::min_freq_ratio},
    {"swap_in_pages", &WindowRow::swap_in_pages}, {"swap_out_pages", &WindowRow::swap_out_pages},
    {"server_host", &WindowRow::server_host}, {"load_host", &WindowRow::load_host},
    // Schema version 3.
    {"load_depth", &WindowRow::load_depth}, {"load_rate", &WindowRow::load_rate},
    {"sent", &WindowRow::sent}, {"dropped", &WindowRow::dropped},
    {"errors_mismatch", &WindowRow::errors_mismatch},
    {"generator_bound", &WindowRow::generator_bound},
    {"throughput_rps", &WindowRow::throughput_rps},
    {"p99_uncorrected_us", &WindowRow::p99_uncorrected_us},
    {"histogram_uncorrected", &WindowRow::histogram_uncorrected},
    {"load_record", &WindowRow::load_record},
    {"load_level", &WindowRow::load_level}, {"noise", &WindowRow::noise},
    {"pair", &WindowRow::pair},
    // Schema version 4.
    {"errors_body_too_large", &WindowRow::errors_body_too_large},
    // Schema version 5.
    {"outcome", &WindowRow::outcome},
};
// clang-format on

// "target, scenario, ..." for the columns above.
std::string WindowColumnList() {
  std::string list;
  for (const WindowColumn& c : kWindowColumns) {
    list += std::string(list.empty() ? "" : ", ") + c.name;
  }
  return list;
}

const std::string& InsertWindowSql() {
  static const std::string sql = [] {
    std::string values = "?1, ?2";
    int n = 3;
    for (size_t i = 0; i < std::size(kWindowColumns); ++i) values += ", ?" + std::to_string(n++);
    return "INSERT INTO windows (campaign_id, campaign, " + WindowColumnList() + ") VALUES (" +
           values + ")";
  }();
  return sql;
}

const char* const kCampaignColumns =
    "id, name, state, baseline, spec_toml, source, created_at, finished_at, total_windows, error, "
    "placement, gates_mode, series, profile";

CampaignRow ReadCampaign(Stmt& s) {
  CampaignRow c;
  c.id = s.Int64(0);
  c.name = s.Text(1);
  c.state = s.Text(2);
  c.baseline = s.Text(3);
  c.spec_toml = s.Text(4);
  c.source = s.Text(5);
  c.created_at = s.Text(6);
  c.finished_at = s.Text(7);
  c.total_windows = static_cast<int>(s.Int64(8));
  c.error = s.Text(9);
  c.placement = s.Text(10);
  c.gates_mode = s.Text(11);
  c.series = s.Text(12);
  c.profile = s.Int64(13) != 0;
  return c;
}

// The store's connection settings. Migrate checks the version before anything is written, so
// a newer database is refused untouched.
Status Configure(sqlite3* db, const std::string& path) {
  sqlite3_extended_result_codes(db, 1);
  // Another process (the coordinator, `benchlab windows --db`) may hold the write lock briefly.
  sqlite3_busy_timeout(db, 5000);
  BENCHLAB_RETURN_IF_ERROR(schema::Migrate(db, path, schema::Migrations()));

  // WAL lets readers work beside the writer; NORMAL durability is safe with WAL (a power cut can
  // lose the last commits, never corrupt); foreign keys are off in SQLite unless asked for.
  Stmt wal(db, "PRAGMA journal_mode = WAL");
  if (int rc = wal.Step(); rc != SQLITE_ROW) return SqlError(db, rc, path, "set WAL journal mode");
  const std::string mode = wal.Text(0);
  if (mode != "wal" && mode != "memory") {
    return Status::FailedPrecondition(path + ": cannot use WAL journal mode (got " + mode +
                                      "); the store needs WAL so readers never block writers");
  }
  for (const char* pragma : {"PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"}) {
    Stmt stmt(db, pragma);
    BENCHLAB_RETURN_IF_ERROR(Run(db, stmt, path, pragma));
  }
  return Status::Ok();
}

// The missing directories leading to the database, each created 0700: the store is the lab's
// own state. What exists already is left as it is.
Status MakeDirectories(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path dir = fs::path(path).parent_path(); !dir.empty() && !fs::exists(dir, ec);
       dir = dir.parent_path()) {
    missing.push_back(dir);
    if (dir == dir.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IoError(path + ": open database: create directory " + it->string() + ": " +
                             std::strerror(errno));
    }
  }
  return Status::Ok();
}

// Creates the database file 0600 unless it exists. SQLite gives the -wal and -shm files the
// mode of the database, so none of the three is ever readable by other users.
Status CreatePrivateFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::close(fd);
    return Status::Ok();
  }
  // An existing file (or a name SQLite will refuse with its own words) is opened as it is.
  if (errno == EEXIST || errno == EISDIR || errno == ELOOP) return Status::Ok();
  return Status::IoError(path + ": open database: " + std::strerror(errno));
}

constexpr const char* kLabSecretName = "lab_secret";

}  // namespace

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Store::~Store() { sqlite3_close_v2(db_); }

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("open store: the database path is empty");
  if (path != ":memory:") {
    BENCHLAB_RETURN_IF_ERROR(MakeDirectories(path));
    BENCHLAB_RETURN_IF_ERROR(CreatePrivateFile(path));
  }
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // The Store owns the handle from here, even a failed one, so it is always closed.
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) {
    if (db == nullptr) return Status::Internal(path + ": open database: out of memory");
    return SqlError(db, rc, path, "open database");
  }
  BENCHLAB_RETURN_IF_ERROR(Configure(db, path));
  BENCHLAB_RETURN_IF_ERROR(store->LoadLabSecret());
  return store;
}

Status Store::LoadLabSecret() {
  const std::string what = "read the lab secret";
  auto read = [&]() -> Result<std::vector<std::string>> {
    Stmt select(db_, "SELECT value FROM settings WHERE name = ?1");
    select.Bind(1, std::string(kLabSecretName));
    return Collect<std::string>(db_, select, path_, what, [](Stmt& st) { return st.Blob(0); });
  };
  auto secret = read();
  if (!secret.ok()) return secret.status();
  if (secret->empty()) {
    std::string bytes(kLabSecretBytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()),
                   static_cast<int>(bytes.size())) != 1) {
      return Status::Internal(path_ + ": make the lab secret: no random bytes");
    }
    // Another process opening a new file at the same moment may win; its secret is the one read.
    Stmt insert(db_, "INSERT OR IGNORE INTO settings (name, value) VALUES (?1, ?2)");
    insert.Bind(1, std::string(kLabSecretName));
    insert.BindBlob(2, bytes);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, "make the lab secret"));
    secret = read();
    if (!secret.ok()) return secret.status();
  }
  if (secret->size() != 1 || (*secret)[0].size() != kLabSecretBytes) {
    return Status::FailedPrecondition(path_ + ": settings." + kLabSecretName + ": expected " +
                                      std::to_string(kLabSecretBytes) + " bytes");
  }
  lab_secret_ = std::move((*secret)[0]);
  return Status::Ok();
}

int Store::SchemaVersion() {
  std::lock_guard lock(mu_);
  Result<int> version = schema::UserVersion(db_, path_);
  return version.ok() ? *version : -1;
}

Result<int64_t> Store::CreateCampaign(const CampaignRow& campaign,
                                      const std::vector<TargetRow>& targets,
                                      const std::vector<ScenarioRow>& scenarios) {
  std::lock_guard lock(mu_);
  const std::string what = "create campaign " + Quoted(campaign.name);
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));

  Stmt insert(
      db_,
      "INSERT INTO campaigns (name, state, baseline, spec_toml, source, created_at, "
      "finished_at, total_windows, error, gates_mode, series, profile) VALUES (?1, "
      "COALESCE(NULLIF(?2, ''), 'queued'), NULLIF(?3, ''), ?4, ?5, COALESCE(NULLIF(?6, ''), "
      "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), NULLIF(?7, ''), ?8, NULLIF(?9, ''), ?10, "
      "COALESCE(NULLIF(?11, ''), ?1), ?12)");
  insert.Bind(1, campaign.name);
  insert.Bind(2, campaign.state);
  insert.Bind(3, campaign.baseline);
  insert.Bind(4, campaign.spec_toml);
  insert.Bind(5, campaign.source);
  insert.Bind(6, campaign.created_at);
  insert.Bind(7, campaign.finished_at);
  insert.Bind(8, campaign.total_windows);
  insert.Bind(9, campaign.error);
  insert.Bind(10, campaign.gates_mode);
  insert.Bind(11, campaign.series);
  insert.Bind(12, campaign.profile ? 1 : 0);
  if (int rc = insert.Step(); rc != SQLITE_DONE) {
    if (rc == SQLITE_CONSTRAINT_UNIQUE) {
      return Status::AlreadyExists("campaign " + Quoted(campaign.name) + " already exists in " +
                                   path_ + "; choose another name");
    }
    return SqlError(db_, rc, path_, what);
  }
  const int64_t id = sqlite3_last_insert_rowid(db_);

  Stmt target(db_,
              "INSERT INTO targets (campaign_id, name, command_json, cpus) "
              "VALUES (?1, ?2, COALESCE(NULLIF(?3, ''), '[]'), ?4)");
  for (const TargetRow& t : targets) {
    target.Reset();
    target.Bind(1, id);
    target.Bind(2, t.name);
    target.Bind(3, t.command_json);
    target.Bind(4, t.cpus);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, target, path_, what + ": target " + Quoted(t.name)));
  }
  Stmt scenario(db_,
                "INSERT INTO scenarios (campaign_id, name, kind, method, path, expect_status, "
                "expect_body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULLIF(?7, ''))");
  for (const ScenarioRow& s : scenarios) {
    scenario.Reset();
    scenario.Bind(1, id);
    scenario.Bind(2, s.name);
    scenario.Bind(3, s.kind);
    scenario.Bind(4, s.method);
    scenario.Bind(5, s.path);
    scenario.Bind(6, s.expect_status);
    scenario.Bind(7, s.expect_body);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, scenario, path_, what + ": scenario " + Quoted(s.name)));
  }
  BENCHLAB_RETURN_IF_ERROR(tx.Commit(what));
  return id;
}

const char* CampaignStateName(CampaignState state) {
  switch (state) {
    case CampaignState::kQueued:
      return "queued";
    case CampaignState::kRunning:
      return "running";
    case CampaignState::kDone:
      return "done";
    case CampaignState::kFailed:
      return "failed";
    case CampaignState::kCancelled:
      return "cancelled";
  }
  return "failed";
}

std::optional<CampaignState> ParseCampaignState(std::string_view text) {
  for (CampaignState s : {CampaignState::kQueued, CampaignState::kRunning, CampaignState::kDone,
                          CampaignState::kFailed, CampaignState::kCancelled}) {
    if (text == CampaignStateName(s)) return s;
  }
  return std::nullopt;
}

bool Ended(CampaignState state) {
  return state == CampaignState::kDone || state == CampaignState::kFailed ||
         state == CampaignState::kCancelled;
}

Status Store::SetCampaignState(int64_t campaign_id, CampaignState state_value,
                               const std::string& error) {
  std::lock_guard lock(mu_);
  const std::string state = CampaignStateName(state_value);
  const std::string what =
      "set state of campaign " + std::to_string(campaign_id) + " to " + Quoted(state);
  Stmt update(db_,
              "UPDATE campaigns SET state = ?2, error = NULLIF(?3, ''), finished_at = "
              "CASE WHEN ?2 IN ('done', 'failed', 'cancelled') "
              "THEN strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE NULL END WHERE id = ?1");
  update.Bind(1, campaign_id);
  update.Bind(2, state);
  update.Bind(3, error);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, update, path_, what));
  if (sqlite3_changes(db_) == 0)
    return Status::NotFound(path_ + ": " + what + ": no such campaign");
  return Status::Ok();
}

Result<std::vector<CampaignRow>> Store::ListCampaigns() {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              (std::string("SELECT ") + kCampaignColumns + " FROM campaigns ORDER BY id").c_str());
  return Collect<CampaignRow>(db_, select, path_, "list campaigns", ReadCampaign);
}

Result<std::optional<CampaignRow>> Store::FindCampaign(const std::string& name) {
  std::lock_guard lock(mu_);
  Stmt select(
      db_, (std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE name = ?1").c_str());
  select.Bind(1, name);
  auto rows =
      Collect<CampaignRow>(db_, select, path_, "find campaign " + Quoted(name), ReadCampaign);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? std::nullopt : std::optional<CampaignRow>(std::move(rows->front()));
}

Result<std::optional<CampaignRow>> Store::FindCampaignById(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt select(
      db_, (std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE id = ?1").c_str());
  select.Bind(1, id);
  auto rows =
      Collect<CampaignRow>(db_, select, path_, "find campaign " + std::to_string(id), ReadCampaign);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? std::nullopt : std::optional<CampaignRow>(std::move(rows->front()));
}

Result<std::vector<CampaignRow>> Store::ListSeries(const std::string& series) {
  std::lock_guard lock(mu_);
  Stmt select(db_, (std::string("SELECT ") + kCampaignColumns +
                    " FROM campaigns WHERE series = ?1 ORDER BY id")
                       .c_str());
  select.Bind(1, series);
  return Collect<CampaignRow>(db_, select, path_, "list series " + Quoted(series), ReadCampaign);
}

Result<int64_t> Store::RecordConfirmation(const ConfirmationRow& row) {
  std::lock_guard lock(mu_);
  const std::string what = "record the re-measurement of a change in series " + Quoted(row.series);
  Stmt insert(db_,
              "INSERT INTO confirmations (series, pair, scenario, load_level, target, figure, "
              "after_campaign_id, old_campaign_id, new_campaign_id, campaign, status, estimate, "
              "low, high, rounds, detail, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
              "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, CASE WHEN ?17 = '' THEN "
              "strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE ?17 END) "
              "ON CONFLICT (series, pair, scenario, load_level, target, figure, "
              "after_campaign_id) DO UPDATE SET old_campaign_id = excluded.old_campaign_id, "
              "new_campaign_id = excluded.new_campaign_id, campaign = excluded.campaign, "
              "status = excluded.status, estimate = excluded.estimate, low = excluded.low, "
              "high = excluded.high, rounds = excluded.rounds, detail = excluded.detail, "
              "recorded_at = excluded.recorded_at RETURNING id");
  insert.Bind(1, row.series);
  insert.Bind(2, row.pair);
  insert.Bind(3, row.scenario);
  insert.Bind(4, row.load_level);
  insert.Bind(5, row.target);
  insert.Bind(6, row.figure);
  insert.Bind(7, row.after_campaign_id);
  insert.Bind(8, row.old_campaign_id);
  insert.Bind(9, row.new_campaign_id);
  insert.Bind(10, row.campaign);
  insert.Bind(11, row.status);
  insert.Bind(12, row.estimate);
  insert.Bind(13, row.low);
  insert.Bind(14, row.high);
  insert.Bind(15, row.rounds);
  insert.Bind(16, row.detail);
  insert.Bind(17, row.recorded_at);
  const int rc = insert.Step();
  if (rc != SQLITE_ROW) return SqlError(db_, rc, path_, what);
  const int64_t id = insert.Int64(0);
  if (int done = insert.Step(); done != SQLITE_DONE) return SqlError(db_, done, path_, what);
  return id;
}

Result<std::vector<ConfirmationRow>> Store::ListConfirmations(const std::string& series) {
  return ListConfirmationsWhere("series", series);
}

Result<std::vector<ConfirmationRow>> Store::ListConfirmationsBy(const std::string& campaign) {
  return ListConfirmationsWhere("campaign", campaign);
}

Result<std::vector<ConfirmationRow>> Store::ListConfirmationsWhere(const char* column,
                                                                   const std::string& value) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              ("SELECT id, series, pair, scenario, load_level, target, figure, "
               "after_campaign_id, old_campaign_id, new_campaign_id, campaign, status, estimate, "
               "low, high, rounds, detail, recorded_at FROM confirmations WHERE " +
               std::string(column) + " = ?1 ORDER BY id")
                  .c_str());
  select.Bind(1, value);
  return Collect<ConfirmationRow>(
      db_, select, path_,
      "list the re-measurements whose " + std::string(column) + " is " + Quoted(value),
      [](Stmt& s) {
        ConfirmationRow row;
        s.Read(0, row.id);
        s.Read(1, row.series);
        s.Read(2, row.pair);
        s.Read(3, row.scenario);
        s.Read(4, row.load_level);
        s.Read(5, row.target);
        s.Read(6, row.figure);
        s.Read(7, row.after_campaign_id);
        s.Read(8, row.old_campaign_id);
        s.Read(9, row.new_campaign_id);
        s.Read(10, row.campaign);
        s.Read(11, row.status);
        s.Read(12, row.estimate);
        s.Read(13, row.low);
        s.Read(14, row.high);
        s.Read(15, row.rounds);
        s.Read(16, row.detail);
        s.Read(17, row.recorded_at);
        return row;
      });
}

Result<std::vector<TargetRow>> Store::ListTargets(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT name, command_json, cpus FROM targets WHERE campaign_id = ?1 ORDER BY id");
  select.Bind(1, campaign_id);
  return Collect<TargetRow>(db_, select, path_,
                            "list targets of campaign " + std::to_string(campaign_id), [](Stmt& s) {
                              return TargetRow{s.Text(0), s.Text(1), s.Text(2)};
                            });
}

Result<std::vector<ScenarioRow>> Store::ListScenarios(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT name, kind, method, path, expect_status, expect_body FROM scenarios "
              "WHERE campaign_id = ?1 ORDER BY id");
  select.Bind(1, campaign_id);
  return Collect<ScenarioRow>(
      db_, select, path_, "list scenarios of campaign " + std::to_string(campaign_id), [](Stmt& s) {
        return ScenarioRow{s.Text(0), s.Text(1), s.Text(2), s.Text(3), static_cast<int>(s.Int64(4)),
                           s.Text(5)};
      });
}

Result<int64_t> Store::InsertWindow(const WindowRow& window, const std::vector<SampleRow>& samples,
                                    const std::vector<ServiceRow>& services,
                                    const std::vector<ProbeRow>& probes,
                                    const std::optional<ProfileRow>& profile) {
  std::lock_guard lock(mu_);
  const std::string what =
      "insert window (campaign " +
      (window.campaign_id != 0 ? std::to_string(window.campaign_id) : Quoted(window.campaign)) +
      ", target " + Quoted(window.target) + ", scenario " + Quoted(window.scenario) +
      ", connections " + std::to_string(window.connections) + ", round " +
      std::to_string(window.round) + ", attempt " + std::to_string(window.attempt) + ")";
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));

  // The stored campaign name comes from the campaigns table, so the two columns never disagree.
  Stmt find(db_, window.campaign_id != 0 ? "SELECT id, name FROM campaigns WHERE id = ?1"
                                         : "SELECT id, name FROM campaigns WHERE name = ?1");
  if (window.campaign_id != 0) {
    find.Bind(1, window.campaign_id);
  } else {
    find.Bind(1, window.campaign);
  }
  const int found = find.Step();
  if (found == SQLITE_DONE) return Status::NotFound(path_ + ": " + what + ": no such campaign");
  if (found != SQLITE_ROW) return SqlError(db_, found, path_, what);
  const int64_t campaign_id = find.Int64(0);
  const std::string campaign = find.Text(1);
  // A statement left on a row holds a read open across COMMIT, and then no checkpoint can move
  // the WAL into the database: it grew by the size of every window until the store closed.
  find.Reset();
  if (!window.campaign.empty() && window.campaign != campaign) {
    return Status::InvalidArgument(path_ + ": " + what + ": campaign " +
                                   std::to_string(campaign_id) + " is named " + Quoted(campaign) +
                                   ", not " + Quoted(window.campaign));
  }

  // Empty JSON fields mean "nothing to report"; the schema wants them as JSON all the same.
  WindowRow row = window;
  if (row.load_level.empty()) row.load_level = "c" + std::to_string(row.connections);
  if (row.reasons.empty()) row.reasons = "[]";
  if (row.outcome.empty()) row.outcome = "[]";
  if (row.status_counts.empty()) row.status_counts = "{}";
  for (std::string* json : {&row.server_top_foreign, &row.load_top_foreign}) {
    if (json->empty()) *json = "[]";
  }
  for (std::string* json : {&row.server_host, &row.load_host, &row.load_record}) {
    if (json->empty()) *json = "{}";
  }
  Stmt insert(db_, InsertWindowSql().c_str());
  insert.Bind(1, campaign_id);
  insert.Bind(2, campaign);
  int param = 3;
  for (const WindowColumn& c : kWindowColumns) {
    std::visit([&](auto member) { insert.Bind(param, row.*member); }, c.field);
    ++param;
  }
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, what));
  const int64_t id = sqlite3_last_insert_rowid(db_);

  Stmt sample(db_,
              "INSERT INTO samples (window_id, source, t_s, cpu_pct, rss_kb, requests, "
              "host_busy_pct, foreign_pct, steal_pct, p99_us) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  for (size_t i = 0; i < samples.size(); ++i) {
    const SampleRow& s = samples[i];
    sample.Reset();
    sample.Bind(1, id);
    sample.Bind(2, s.source);
    sample.Bind(3, s.t_s);
    sample.Bind(4, s.cpu_pct);
    sample.Bind(5, s.rss_kb);
    sample.Bind(6, s.requests);
    sample.Bind(7, s.host_busy_pct);
    sample.Bind(8, s.foreign_pct);
    sample.Bind(9, s.steal_pct);
    sample.Bind(10, s.p99_us);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, sample, path_, what + ": sample " + std::to_string(i)));
  }
  Stmt service(db_,
               "INSERT INTO window_services (window_id, service, cpu_user_s, cpu_sys_s, "
               "rss_mean_kb, rss_peak_kb, cpu_accounting, alive, exit, started, startup_ms, "
               "reset_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  for (const ServiceRow& s : services) {
    service.Reset();
    service.Bind(1, id);
    service.Bind(2, s.service);
    service.Bind(3, s.cpu_user_s);
    service.Bind(4, s.cpu_sys_s);
    service.Bind(5, s.rss_mean_kb);
    service.Bind(6, s.rss_peak_kb);
    service.Bind(7, s.cpu_accounting);
    service.Bind(8, s.alive ? 1 : 0);
    service.Bind(9, s.exit);
    service.Bind(10, s.started ? 1 : 0);
    service.Bind(11, s.startup_ms);
    service.Bind(12, s.reset_ms);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, service, path_, what + ": service " + Quoted(s.service)));
  }
  Stmt probe(db_,
             "INSERT INTO window_probes (window_id, service, probe, before, after, delta, "
             "unavailable) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  for (const ProbeRow& p : probes) {
    probe.Reset();
    probe.Bind(1, id);
    probe.Bind(2, p.service);
    probe.Bind(3, p.probe);
    probe.Bind(4, p.before);
    probe.Bind(5, p.after);
    probe.Bind(6, p.delta);
    probe.Bind(7, p.delta ? std::string() : p.unavailable);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, probe, path_, what + ": probe " + Quoted(p.probe)));
  }
  if (profile) {
    Stmt insert_profile(db_,
                        "INSERT INTO window_profiles (window_id, frequency_hz, samples, folded_z, "
                        "error) VALUES (?1, ?2, ?3, ?4, ?5)");
    insert_profile.Bind(1, id);
    insert_profile.Bind(2, profile->frequency_hz);
    insert_profile.Bind(3, profile->samples);
    if (profile->error.empty()) insert_profile.BindBlob(4, profile->folded_z);
    insert_profile.Bind(5, profile->error);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, insert_profile, path_, what + ": profile"));
  }
  // The window is no longer running, and a re-run asked for it is done.
  for (const char* table : {"window_claims", "rerun_requests"}) {
    Stmt done(db_, (std::string("DELETE FROM ") + table + kWhereKey).c_str());
    BindKey(done, campaign_id, row.Key());
    BENCHLAB_RETURN_IF_ERROR(Run(db_, done, path_, what + ": clear " + table));
  }
  BENCHLAB_RETURN_IF_ERROR(tx.Commit(what));
  return id;
}

namespace {

// A row of window_profiles selected as window_id, frequency_hz, samples, folded_z, error.
ProfileRow ProfileRowOf(Stmt& row) {
  ProfileRow r;
  r.window_id = row.Int64(0);
  r.frequency_hz = static_cast<int>(row.Int64(1));
  r.samples = static_cast<uint64_t>(row.Int64(2));
  r.folded_z = row.Blob(3);
  r.error = row.Text(4);
  return r;
}

}  // namespace

Result<std::vector<ProfileRow>> Store::ListProfiles(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt q(db_,
         "SELECT p.window_id, p.frequency_hz, p.samples, p.folded_z, p.error FROM windows w "
         "JOIN window_profiles p ON p.window_id = w.id WHERE w.campaign_id = ?1 ORDER BY w.id");
  q.Bind(1, campaign_id);
  return Collect<ProfileRow>(
      db_, q, path_, "list profiles of campaign " + std::to_string(campaign_id), ProfileRowOf);
}

Result<std::optional<ProfileRow>> Store::FindProfile(int64_t window_id) {
  std::lock_guard lock(mu_);
  Stmt q(db_,
         "SELECT window_id, frequency_hz, samples, folded_z, error FROM window_profiles "
         "WHERE window_id = ?1");
  q.Bind(1, window_id);
  auto rows = Collect<ProfileRow>(
      db_, q, path_, "find the profile of window " + std::to_string(window_id), ProfileRowOf);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? std::nullopt : std::optional<ProfileRow>(std::move(rows->front()));
}

Result<std::vector<ServiceRow>> Store::ListWindowServices(int64_t window_id) {
  std::lock_guard lock(mu_);
  Stmt q(db_,
         "SELECT service, cpu_user_s, cpu_sys_s, rss_mean_kb, rss_peak_kb, cpu_accounting, alive, "
         "exit, started, startup_ms, reset_ms FROM window_services WHERE window_id = ?1 "
         "ORDER BY service");
  q.Bind(1, window_id);
  const std::string what = "list services of window " + std::to_string(window_id);
  return Collect<ServiceRow>(db_, q, path_, what, [](Stmt& row) {
    ServiceRow r;
    r.service = row.Text(0);
    r.cpu_user_s = row.Double(1);
    r.cpu_sys_s = row.Double(2);
    r.rss_mean_kb = static_cast<uint64_t>(row.Int64(3));
    r.rss_peak_kb = static_cast<uint64_t>(row.Int64(4));
    r.cpu_accounting = row.Text(5);
    r.alive = row.Int64(6) != 0;
    r.exit = row.Text(7);
    r.started = row.Int64(8) != 0;
    row.Read(9, r.startup_ms);
    row.Read(10, r.reset_ms);
    return r;
  });
}

Result<std::vector<ProbeRow>> Store::ListWindowProbes(int64_t window_id) {
  std::lock_guard lock(mu_);
  Stmt q(db_,
         "SELECT service, probe, before, after, delta, unavailable FROM window_probes "
         "WHERE window_id = ?1 ORDER BY service, probe");
  q.Bind(1, window_id);
  const std::string what = "list probes of window " + std::to_string(window_id);
  return Collect<ProbeRow>(db_, q, path_, what, [](Stmt& row) {
    ProbeRow r;
    r.service = row.Text(0);
    r.probe = row.Text(1);
    row.Read(2, r.before);
    row.Read(3, r.after);
    row.Read(4, r.delta);
    r.unavailable = row.Text(5);
    return r;
  });
}

Result<std::map<int64_t, double>> Store::SumServiceCpuByWindow(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  // The windows index on (campaign_id, id) finds the campaign's attempts, the primary key of
  // window_services each one's services.
  Stmt q(db_,
         "SELECT s.window_id, sum(s.cpu_user_s + s.cpu_sys_s) FROM windows w "
         "JOIN window_services s ON s.window_id = w.id WHERE w.campaign_id = ?1 "
         "GROUP BY s.window_id");
  q.Bind(1, campaign_id);
  auto rows = Collect<std::pair<int64_t, double>>(
      db_, q, path_, "sum the services' CPU of campaign " + std::to_string(campaign_id),
      [](Stmt& st) { return std::make_pair(st.Int64(0), st.Double(1)); });
  if (!rows.ok()) return rows.status();
  return std::map<int64_t, double>(rows->begin(), rows->end());
}

Status Store::ClaimWindow(const WindowClaim& claim) {
  std::lock_guard lock(mu_);
  Stmt insert(db_,
              "INSERT OR REPLACE INTO window_claims (campaign_id, target, scenario, load_level, "
              "round, position, pair, noise, connections, attempt, server_agent, load_agent, "
              "started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
              "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  BindKey(insert, claim.campaign_id, claim.key);
  insert.Bind(8, claim.noise ? 1 : 0);
  insert.Bind(9, claim.connections);
  insert.Bind(10, claim.attempt);
  insert.Bind(11, claim.server_agent);
  insert.Bind(12, claim.load_agent);
  return Run(db_, insert, path_,
             "claim window " + claim.key.target + "/" + claim.key.scenario + "/" +
                 claim.key.load_level + " round " + std::to_string(claim.key.round));
}

Result<std::vector<WindowClaim>> Store::ListClaims(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT target, scenario, load_level, round, position, pair, noise, connections, "
              "attempt, server_agent, load_agent, started_at FROM window_claims "
              "WHERE campaign_id = ?1 ORDER BY started_at, pair");
  select.Bind(1, campaign_id);
  return Collect<WindowClaim>(db_, select, path_, "list window claims", [&](Stmt& s) {
    WindowClaim c;
    c.campaign_id = campaign_id;
    c.key = {
        s.Text(0), s.Text(1), s.Text(2), static_cast<int>(s.Int64(3)), static_cast<int>(s.Int64(4)),
        s.Text(5)};
    c.noise = s.Int64(6) != 0;
    c.connections = static_cast<int>(s.Int64(7));
    c.attempt = static_cast<int>(s.Int64(8));
    c.server_agent = s.Text(9);
    c.load_agent = s.Text(10);
    c.started_at = s.Text(11);
    return c;
  });
}

Result<int> Store::FailClaimedWindows(const std::string& reason) {
  std::vector<WindowRow> failed;
  {
    std::lock_guard lock(mu_);
    Stmt select(db_,
                "SELECT campaign_id, target, scenario, load_level, round, position, noise, "
                "connections, attempt, server_agent, load_agent, started_at, pair "
                "FROM window_claims");
    auto claims = Collect<WindowRow>(db_, select, path_, "list window claims", [&](Stmt& s) {
      WindowRow w;
      w.campaign_id = s.Int64(0);
      w.target = s.Text(1);
      w.scenario = s.Text(2);
      w.load_level = s.Text(3);
      w.round = static_cast<int>(s.Int64(4));
      w.position = static_cast<int>(s.Int64(5));
      w.noise = static_cast<int>(s.Int64(6));
      w.connections = static_cast<int>(s.Int64(7));
      w.attempt = static_cast<int>(s.Int64(8));
      w.server_agent = s.Text(9);
      w.load_agent = s.Text(10);
      w.started_at = s.Text(11);
      w.pair = s.Text(12);
      w.ended_at = w.started_at;
      WindowReason cut;
      cut.kind = ReasonKind::kCoordinatorRestart;
      cut.name = "coordinator_restart";
      cut.text = reason;
      w.verdict = VerdictName(Verdict::kFailed);
      w.reasons = ReasonTextsJson({cut});
      w.outcome = OutcomeJson({cut});
      return w;
    });
    if (!claims.ok()) return claims.status();
    failed = std::move(*claims);
  }
  // Each becomes an attempt of its own, stored with its claim's removal in one transaction.
  for (const WindowRow& w : failed) {
    auto id = InsertWindow(w, {});
    if (!id.ok()) return id.status();
  }
  return static_cast<int>(failed.size());
}

Result<std::vector<std::string>> Store::RequestReruns(const std::vector<int64_t>& window_ids) {
  std::lock_guard lock(mu_);
  const std::string what = "request re-runs";
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  std::vector<std::string> campaigns;
  for (int64_t id : window_ids) {
    Stmt find(db_,
              "SELECT w.campaign_id, w.target, w.scenario, w.load_level, w.round, w.position, "
              "c.name, c.state, w.pair FROM windows w JOIN campaigns c ON c.id = w.campaign_id "
              "WHERE w.id = ?1");
    find.Bind(1, id);
    const int rc = find.Step();
    if (rc == SQLITE_DONE) {
      return Status::NotFound(path_ + ": " + what + ": no window has id " + std::to_string(id));
    }
    if (rc != SQLITE_ROW) return SqlError(db_, rc, path_, what);
    const int64_t campaign_id = find.Int64(0);
    WindowKey key{find.Text(1),
                  find.Text(2),
                  find.Text(3),
                  static_cast<int>(find.Int64(4)),
                  static_cast<int>(find.Int64(5)),
                  find.Text(8)};
    const std::string name = find.Text(6);
    const std::string state = find.Text(7);
    Stmt request(db_,
                 "INSERT OR IGNORE INTO rerun_requests (campaign_id, target, scenario, "
                 "load_level, round, position, pair, requested_at) VALUES (?1, ?2, ?3, ?4, ?5, "
                 "?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    BindKey(request, campaign_id, key);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, request, path_, what + ": window " + std::to_string(id)));
    if (state != "running" && state != "queued") {
      Stmt requeue(db_,
                   "UPDATE campaigns SET state = 'queued', finished_at = NULL, error = NULL "
                   "WHERE id = ?1");
      requeue.Bind(1, campaign_id);
      BENCHLAB_RETURN_IF_ERROR(Run(db_, requeue, path_, what + ": requeue " + Quoted(name)));
    }
    if (std::find(campaigns.begin(), campaigns.end(), name) == campaigns.end()) {
      campaigns.push_back(name);
    }
  }
  BENCHLAB_RETURN_IF_ERROR(tx.Commit(what));
  return campaigns;
}

Result<std::vector<WindowKey>> Store::ListRerunRequests(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT target, scenario, load_level, round, position, pair FROM rerun_requests "
              "WHERE campaign_id = ?1 ORDER BY requested_at, rowid");
  select.Bind(1, campaign_id);
  return Collect<WindowKey>(db_, select, path_,
                            "list re-runs of campaign " + std::to_string(campaign_id), [](Stmt& s) {
                              return WindowKey{s.Text(0),
                                               s.Text(1),
                                               s.Text(2),
                                               static_cast<int>(s.Int64(3)),
                                               static_cast<int>(s.Int64(4)),
                                               s.Text(5)};
                            });
}

namespace {

// The peer's address without its port: "ipv4:10.0.0.5:53412" and "ipv4:10.0.0.5:53413" are one
// client, as are "::1:40000" and "::1:40001" (the dashboard's form); "local" stays as it is.
std::string PeerAddress(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == peer.size()) return peer;
  const bool port = std::all_of(peer.begin() + static_cast<std::ptrdiff_t>(colon) + 1, peer.end(),
                                [](char c) { return c >= '0' && c <= '9'; });
  return port ? peer.substr(0, colon) : peer;
}

// A row's `at` (milliseconds, as FormatIsoTime writes them) as a time, rounded to the
// millisecond so that it formats back to the same text.
std::chrono::system_clock::time_point TimeOf(double seconds) {
  return std::chrono::system_clock::time_point(
      std::chrono::milliseconds(std::llround(seconds * 1000)));
}

}  // namespace

Status Store::AppendAudit(const AuditRow& given) {
  AuditRow row = given;
  for (std::string* field : {&row.at, &row.identity, &row.role, &row.peer, &row.call, &row.subject,
                             &row.outcome, &row.reason}) {
    if (field->size() > kMaxAuditFieldBytes) *field = Truncated(*field, kMaxAuditFieldBytes);
  }
  const double at = ParseIsoSeconds(row.at);
  std::lock_guard lock(mu_);
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin("append to the audit trail"));
  int64_t same = 0;
  if (row.outcome == "refused" && !std::isnan(at)) {
    // The newest identical refusal from this address (peer is ADDRESS or ADDRESS:PORT) within
    // the window; `at` compares as text, every row's being ISO 8601 UTC alike.
    Stmt find(db_,
              "SELECT id FROM audit WHERE outcome = 'refused' AND at >= ?1 AND identity = ?2 "
              "AND role = ?3 AND call = ?4 AND reason = ?5 AND (peer = ?6 OR ("
              "substr(peer, 1, length(?6) + 1) = ?6 || ':' AND length(peer) > length(?6) + 1 "
              "AND rtrim(substr(peer, length(?6) + 2), '0123456789') = '')) "
              "ORDER BY id DESC LIMIT 1");
    find.Bind(1, FormatIsoTime(TimeOf(at) - kAuditCoalesceWindow));
    find.Bind(2, row.identity);
    find.Bind(3, row.role);
    find.Bind(4, row.call);
    find.Bind(5, row.reason);
    find.Bind(6, PeerAddress(row.peer));
    auto found = Collect<int64_t>(db_, find, path_, "find an identical refusal",
                                  [](Stmt& s) { return s.Int64(0); });
    if (!found.ok()) return found.status();
    if (!found->empty()) same = found->front();
  }
  if (same != 0) {
    Stmt count(db_, "UPDATE audit SET count = count + 1 WHERE id = ?1");
    count.Bind(1, same);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, count, path_, "count a repeated refusal"));
    return tx.Commit("count a repeated refusal");
  }
  Stmt insert(db_,
              "INSERT INTO audit (at, identity, role, peer, call, subject, outcome, reason, count) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1)");
  insert.Bind(1, row.at);
  insert.Bind(2, row.identity);
  insert.Bind(3, row.role);
  insert.Bind(4, row.peer);
  insert.Bind(5, row.call);
  insert.Bind(6, row.subject);
  insert.Bind(7, row.outcome);
  insert.Bind(8, row.reason);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, "append to the audit trail"));
  const int64_t id = sqlite3_last_insert_rowid(db_);
  BENCHLAB_RETURN_IF_ERROR(tx.Commit("append to the audit trail"));
  if (!audit_retention_) return Status::Ok();
  // Pruned now and then rather than on every call: at most 1% over max_rows, and hourly by the
  // calls' own time so that a quiet coordinator still forgets what is older than keep_days.
  const int64_t every = std::max<int64_t>(1, audit_retention_->max_rows / 100);
  const bool hourly = !std::isnan(at) && at - audit_pruned_at_ >= 3600;
  if (id % every != 0 && !hourly) return Status::Ok();
  auto pruned = PruneAuditLocked(*audit_retention_,
                                 std::isnan(at) ? std::chrono::system_clock::now() : TimeOf(at));
  if (pruned.ok()) return Status::Ok();
  return Status(pruned.status().code(),
                "the call is stored, the trail not pruned: " + pruned.status().message());
}

void Store::SetAuditRetention(const AuditRetention& retention) {
  std::lock_guard lock(mu_);
  audit_retention_ = retention;
}

Result<int64_t> Store::PruneAudit(const AuditRetention& retention,
                                  std::chrono::system_clock::time_point now) {
  std::lock_guard lock(mu_);
  return PruneAuditLocked(retention, now);
}

Result<int64_t> Store::PruneAuditLocked(const AuditRetention& retention,
                                        std::chrono::system_clock::time_point now) {
  audit_pruned_at_ = std::chrono::duration<double>(now.time_since_epoch()).count();
  Stmt old(db_, "DELETE FROM audit WHERE at < ?1");
  old.Bind(1, FormatIsoTime(now - std::chrono::hours(24) * retention.keep_days));
  BENCHLAB_RETURN_IF_ERROR(
      Run(db_, old, path_,
          "delete audit rows older than " + std::to_string(retention.keep_days) + " days"));
  int64_t deleted = sqlite3_changes(db_);
  // Nothing when there are max_rows rows or fewer: `id <= NULL` holds for none.
  Stmt many(db_,
            "DELETE FROM audit WHERE id <= "
            "(SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET ?1)");
  many.Bind(1, retention.max_rows);
  BENCHLAB_RETURN_IF_ERROR(Run(
      db_, many, path_, "keep the newest " + std::to_string(retention.max_rows) + " audit rows"));
  return deleted + sqlite3_changes(db_);
}

Result<std::vector<AuditRow>> Store::ListAudit(const std::string& since, int64_t limit) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT id, at, identity, role, peer, call, subject, outcome, reason, count "
              "FROM audit WHERE at >= ?1 ORDER BY id LIMIT ?2");
  select.Bind(1, since);
  select.Bind(2, limit > 0 ? limit : -1);
  return Collect<AuditRow>(db_, select, path_, "list the audit trail", [](Stmt& s) {
    AuditRow row;
    row.id = s.Int64(0);
    row.at = s.Text(1);
    row.identity = s.Text(2);
    row.role = s.Text(3);
    row.peer = s.Text(4);
    row.call = s.Text(5);
    row.subject = s.Text(6);
    row.outcome = s.Text(7);
    row.reason = s.Text(8);
    row.count = s.Int64(9);
    return row;
  });
}

namespace {
TokenRow TokenOf(Stmt& s) {
  return TokenRow{s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5)};
}
constexpr const char* kTokenColumns =
    "SELECT name, role, hash, created_at, expires_at, revoked_at FROM tokens ";
}  // namespace

Status Store::AddToken(const TokenRow& row) {
  std::lock_guard lock(mu_);
  Stmt insert(db_,
              "INSERT INTO tokens (name, role, hash, created_at, expires_at, revoked_at) "
              "VALUES (?1, ?2, ?3, ?4, ?5, '') ON CONFLICT (name) DO NOTHING");
  insert.Bind(1, row.name);
  insert.Bind(2, row.role);
  insert.Bind(3, row.hash);
  insert.Bind(4, row.created_at);
  insert.Bind(5, row.expires_at);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, "store a dashboard token"));
  if (sqlite3_changes(db_) == 0) {
    return Status::AlreadyExists("a token named " + row.name +
                                 " exists already (benchlab token list)");
  }
  return Status::Ok();
}

Result<TokenRow> Store::FindToken(const std::string& hash) {
  std::lock_guard lock(mu_);
  Stmt select(db_, (std::string(kTokenColumns) + "WHERE hash = ?1").c_str());
  select.Bind(1, hash);
  auto rows = Collect<TokenRow>(db_, select, path_, "look up a dashboard token", TokenOf);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::NotFound("no such token");
  return rows->front();
}

Result<std::vector<TokenRow>> Store::ListTokens() {
  std::lock_guard lock(mu_);
  Stmt select(db_, (std::string(kTokenColumns) + "ORDER BY name").c_str());
  return Collect<TokenRow>(db_, select, path_, "list the dashboard tokens", TokenOf);
}

Status Store::RevokeToken(const std::string& name, const std::string& at) {
  std::lock_guard lock(mu_);
  Stmt select(db_, (std::string(kTokenColumns) + "WHERE name = ?1").c_str());
  select.Bind(1, name);
  auto rows = Collect<TokenRow>(db_, select, path_, "look up a dashboard token", TokenOf);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::NotFound("no token named " + name + " (benchlab token list)");
  if (!rows->front().revoked_at.empty()) {
    return Status::FailedPrecondition("token " + name + " was revoked already at " +
                                      rows->front().revoked_at);
  }
  Stmt update(db_, "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1");
  update.Bind(1, name);
  update.Bind(2, at);
  return Run(db_, update, path_, "revoke a dashboard token");
}

Status Store::PutSelftestCalibration(const SelftestCalibrationRow& row) {
  std::lock_guard lock(mu_);
  const std::string what = "store the self-test calibration of agent " + row.agent +
                           " in campaign " + std::to_string(row.campaign_id);
  Stmt insert(db_,
              "INSERT INTO selftest_calibrations (campaign_id, agent, runs, median_ms, spread, "
              "threshold_pct, threshold_source, calibrated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
              "CASE WHEN ?8 = '' THEN strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE ?8 END) "
              "ON CONFLICT (campaign_id, agent) DO UPDATE SET runs = excluded.runs, "
              "median_ms = excluded.median_ms, spread = excluded.spread, "
              "threshold_pct = excluded.threshold_pct, "
              "threshold_source = excluded.threshold_source, "
              "calibrated_at = excluded.calibrated_at");
  insert.Bind(1, row.campaign_id);
  insert.Bind(2, row.agent);
  insert.Bind(3, row.runs);
  insert.Bind(4, row.median_ms);
  insert.Bind(5, row.spread);
  insert.Bind(6, row.threshold_pct);
  insert.Bind(7, row.threshold_source);
  insert.Bind(8, row.calibrated_at);
  const int rc = insert.Step();
  if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
    return Status::NotFound(path_ + ": " + what + ": no such campaign");
  }
  if (rc == SQLITE_DONE) return Status::Ok();
  return SqlError(db_, rc, path_, what);
}

Result<std::vector<SelftestCalibrationRow>> Store::ListSelftestCalibrations(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT campaign_id, agent, runs, median_ms, spread, threshold_pct, "
              "threshold_source, calibrated_at FROM selftest_calibrations WHERE campaign_id = ?1 "
              "ORDER BY agent");
  select.Bind(1, campaign_id);
  return Collect<SelftestCalibrationRow>(
      db_, select, path_,
      "list the self-test calibrations of campaign " + std::to_string(campaign_id), [](Stmt& s) {
        SelftestCalibrationRow row;
        s.Read(0, row.campaign_id);
        s.Read(1, row.agent);
        s.Read(2, row.runs);
        s.Read(3, row.median_ms);
        s.Read(4, row.spread);
        s.Read(5, row.threshold_pct);
        s.Read(6, row.threshold_source);
        s.Read(7, row.calibrated_at);
        return row;
      });
}

Status Store::SetCampaignPlacement(int64_t campaign_id, const std::string& placement_json,
                                   int total_windows) {
  std::lock_guard lock(mu_);
  Stmt update(db_,
              "UPDATE campaigns SET placement = ?2, total_windows = CASE WHEN ?3 > 0 THEN ?3 "
              "ELSE total_windows END WHERE id = ?1");
  update.Bind(1, campaign_id);
  update.Bind(2, placement_json);
  update.Bind(3, total_windows);
  return Run(db_, update, path_, "set placement of campaign " + std::to_string(campaign_id));
}

Result<std::vector<WindowRow>> Store::ListWindows(const WindowFilter& filter) {
  std::lock_guard lock(mu_);
  // The campaign is matched through its id so the (campaign_id, id) index serves the query.
  std::string sql =
      "SELECT id, campaign_id, campaign, " + WindowColumnList() + " FROM windows WHERE id > ?1";
  if (filter.campaign) sql += " AND campaign_id = (SELECT id FROM campaigns WHERE name = ?3)";
  sql += " ORDER BY id LIMIT ?2";
  Stmt select(db_, sql.c_str());
  select.Bind(1, filter.after_id);
  select.Bind(2, filter.limit > 0 ? filter.limit : -1);  // a negative LIMIT means none
  if (filter.campaign) select.Bind(3, *filter.campaign);

  return Collect<WindowRow>(db_, select, path_, "list windows", [](Stmt& s) {
    WindowRow row;
    row.id = s.Int64(0);
    row.campaign_id = s.Int64(1);
    row.campaign = s.Text(2);
    int col = 3;
    for (const WindowColumn& c : kWindowColumns) {
      std::visit([&](auto member) { s.Read(col, row.*member); }, c.field);
      ++col;
    }
    return row;
  });
}

Result<std::vector<SampleRow>> Store::ListSamples(int64_t window_id) {
  std::lock_guard lock(mu_);
  // rowid order is insertion order: the series comes back as the agent sent it.
  Stmt select(db_,
              "SELECT source, t_s, cpu_pct, rss_kb, requests, host_busy_pct, foreign_pct, "
              "steal_pct, p99_us FROM samples WHERE window_id = ?1 ORDER BY rowid");
  select.Bind(1, window_id);
  return Collect<SampleRow>(db_, select, path_,
                            "list samples of window " + std::to_string(window_id), [](Stmt& s) {
                              SampleRow row;
                              row.source = s.Text(0);
                              row.t_s = s.Double(1);
                              row.cpu_pct = s.Double(2);
                              row.rss_kb = static_cast<uint64_t>(s.Int64(3));
                              row.requests = static_cast<uint64_t>(s.Int64(4));
                              s.Read(5, row.host_busy_pct);
                              s.Read(6, row.foreign_pct);
                              s.Read(7, row.steal_pct);
                              s.Read(8, row.p99_us);
                              return row;
                            });
}

Status Store::KeepAgentResult(const std::string& agent, const std::string& key,
                              const std::string& payload, uint64_t max_total_bytes) {
  std::lock_guard lock(mu_);
  const std::string what = "keep spooled result " + key + " of agent " + agent;
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  const std::string hash = Sha256Hex(payload);
  // The bytes every other kept result holds: one kept already is offered again for free.
  Stmt held(db_,
            "SELECT coalesce(sum(length(payload)), 0) FROM agent_results "
            "WHERE NOT (agent = ?1 AND key = ?2 AND content_hash = ?3)");
  held.Bind(1, agent);
  held.Bind(2, key);
  held.Bind(3, hash);
  auto bytes = Collect<int64_t>(db_, held, path_, what, [](Stmt& s) { return s.Int64(0); });
  if (!bytes.ok()) return bytes.status();
  if (static_cast<uint64_t>(bytes->at(0)) + payload.size() > max_total_bytes) {
    return Status::ResourceExhausted(path_ + ": " + what + ": kept results would exceed " +
                                     std::to_string(max_total_bytes) + " bytes (" +
                                     std::to_string(bytes->at(0)) + " held)");
  }
  Stmt insert(db_,
              "INSERT OR IGNORE INTO agent_results (key, agent, content_hash, payload, "
              "received_at) VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  insert.Bind(1, key);
  insert.Bind(2, agent);
  insert.Bind(3, hash);
  insert.BindBlob(4, payload);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, what));
  return tx.Commit(what);
}

Result<std::pair<int64_t, int64_t>> Store::CountWindows(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt count(db_, "SELECT count(*), coalesce(max(id), 0) FROM windows WHERE campaign_id = ?1");
  count.Bind(1, campaign_id);
  auto rows = Collect<std::pair<int64_t, int64_t>>(db_, count, path_, "count windows", [](Stmt& s) {
    return std::make_pair(s.Int64(0), s.Int64(1));
  });
  if (!rows.ok()) return rows.status();
  return rows->empty() ? std::make_pair(int64_t{0}, int64_t{0}) : (*rows)[0];
}

Result<int> Store::CountAgentResults() {
  std::lock_guard lock(mu_);
  Stmt count(db_, "SELECT count(*) FROM agent_results");
  auto rows = Collect<int>(db_, count, path_, "count spooled results",
                           [](Stmt& s) { return static_cast<int>(s.Int64(0)); });
  if (!rows.ok()) return rows.status();
  return rows->empty() ? 0 : (*rows)[0];
}

}  // namespace benchlab

// The store's statement core, shared by the store*.cc files that implement Store (store.h) and
// by nothing else: prepared statements, the mapping of SQLite's errors to Status, transactions,
// and the pieces of SQL more than one table family uses. Not thread-safe by itself: every caller
// holds Store's mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "coordinator/store.h"

namespace benchlab::store_sql {

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
Status SqlError(sqlite3* db, int rc, const std::string& path, const std::string& what);

// Runs a statement that returns no rows.
Status Run(sqlite3* db, Stmt& stmt, const std::string& path, const std::string& what);

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

inline std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// A window's name in the claim and re-run tables: parameters 1 to 7.
inline constexpr const char* kWhereKey =
    " WHERE campaign_id = ?1 AND target = ?2 AND scenario = ?3 AND load_level = ?4 AND "
    "round = ?5 AND position = ?6 AND pair = ?7";
inline void BindKey(Stmt& stmt, int64_t campaign_id, const WindowKey& key) {
  stmt.Bind(1, campaign_id);
  stmt.Bind(2, key.target);
  stmt.Bind(3, key.scenario);
  stmt.Bind(4, key.load_level);
  stmt.Bind(5, key.round);
  stmt.Bind(6, key.position);
  stmt.Bind(7, key.pair);
}

// The campaigns table's columns as ReadCampaign reads them (store_campaigns.cc).
extern const char* const kCampaignColumns;
CampaignRow ReadCampaign(Stmt& s);

}  // namespace benchlab::store_sql

// Store's audit family (store.h): the audit trail, its coalescing and pruning, and the
// dashboard's tokens.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "common/clock.h"
#include "common/printable.h"
#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Quoted;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

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
    BENCHLAB_ASSIGN_OR_RETURN(std::vector<int64_t> found,
                              Collect<int64_t>(db_, find, path_, "find an identical refusal",
                                               [](Stmt& s) { return s.Int64(0); }));
    if (!found.empty()) same = found.front();
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
  auto pruned = PruneAuditLocked(*audit_retention_, std::isnan(at) ? clock_.WallNow() : TimeOf(at));
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
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<TokenRow> rows,
      Collect<TokenRow>(db_, select, path_, "look up a dashboard token", TokenOf));
  if (rows.empty()) return Status::NotFound("no such token");
  return rows.front();
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
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<TokenRow> rows,
      Collect<TokenRow>(db_, select, path_, "look up a dashboard token", TokenOf));
  if (rows.empty()) return Status::NotFound("no token named " + name + " (benchlab token list)");
  if (!rows.front().revoked_at.empty()) {
    return Status::FailedPrecondition("token " + name + " was revoked already at " +
                                      rows.front().revoked_at);
  }
  Stmt update(db_, "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1");
  update.Bind(1, name);
  update.Bind(2, at);
  return Run(db_, update, path_, "revoke a dashboard token");
}

}  // namespace benchlab

// Store's series family (store.h): the campaigns of a series (docs/history.md) and the
// re-measurements of its suspected changes (confirmations).
#include <sqlite3.h>

#include <string>

#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Quoted;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

using store_sql::kCampaignColumns;
using store_sql::ReadCampaign;

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

Result<std::optional<ConfirmationRow>> Store::LoadConfirmation(int64_t id) {
  BENCHLAB_ASSIGN_OR_RETURN(std::vector<ConfirmationRow> rows,
                            ListConfirmationsWhere("id", std::to_string(id)));
  if (rows.empty()) return std::optional<ConfirmationRow>();
  return std::optional<ConfirmationRow>(std::move(rows.front()));
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

}  // namespace benchlab

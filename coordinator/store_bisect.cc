// Store's bisection family (store.h): bisections of confirmed regressions and the commits each
// decided (docs/store.md, "bisections" and "bisect_steps"; docs/methodology.md, "Bisection").
#include <sqlite3.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

namespace {

constexpr const char* kBisectionColumns =
    "id, created_at, good_oid, bad_oid, target, cell, figure, commits, state, result, culprit, "
    "size, size_low, size_high, confidence, change_id, campaign_toml, campaign_source, "
    "campaign_dir, rule, culprit_campaign, pair, range_json";

BisectionRow ReadBisectionRow(Stmt& s) {
  BisectionRow row;
  s.Read(0, row.id);
  s.Read(1, row.created_at);
  s.Read(2, row.good_oid);
  s.Read(3, row.bad_oid);
  s.Read(4, row.target);
  s.Read(5, row.cell);
  s.Read(6, row.figure);
  s.Read(7, row.commits);
  s.Read(8, row.state);
  s.Read(9, row.result);
  s.Read(10, row.culprit);
  s.Read(11, row.size);
  s.Read(12, row.size_low);
  s.Read(13, row.size_high);
  s.Read(14, row.confidence);
  s.Read(15, row.change_id);
  s.Read(16, row.campaign_toml);
  s.Read(17, row.campaign_source);
  s.Read(18, row.campaign_dir);
  s.Read(19, row.rule);
  s.Read(20, row.culprit_campaign);
  s.Read(21, row.pair);
  s.Read(22, row.range_json);
  return row;
}

// The per-round figures as JSON: [[candidate, good, bad], ...], a figure that is not finite as
// null (JSON has no NaN).
std::string BisectFiguresJson(const std::vector<std::array<double, 3>>& figures) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& round : figures) {
    nlohmann::json r = nlohmann::json::array();
    for (double v : round) r.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    out.push_back(std::move(r));
  }
  return out.dump();
}

std::vector<std::array<double, 3>> ParseBisectFigures(const std::string& text) {
  std::vector<std::array<double, 3>> figures;
  const nlohmann::json in = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!in.is_array()) return figures;
  for (const nlohmann::json& r : in) {
    std::array<double, 3> round{NAN, NAN, NAN};
    for (size_t i = 0; r.is_array() && i < 3 && i < r.size(); ++i) {
      if (r[i].is_number()) round[i] = r[i].get<double>();
    }
    figures.push_back(round);
  }
  return figures;
}

std::string BisectCampaignsJson(const std::vector<int64_t>& campaigns) {
  return nlohmann::json(campaigns).dump();
}

std::vector<int64_t> ParseBisectCampaigns(const std::string& text) {
  std::vector<int64_t> ids;
  const nlohmann::json in = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!in.is_array()) return ids;
  for (const nlohmann::json& v : in) {
    if (v.is_number_integer()) ids.push_back(v.get<int64_t>());
  }
  return ids;
}

}  // namespace

Result<int64_t> Store::CreateBisection(const BisectionRow& row) {
  std::lock_guard lock(mu_);
  const std::string what =
      "create the bisection of " + row.target + " " + row.good_oid + ".." + row.bad_oid;
  Stmt insert(
      db_,
      "INSERT INTO bisections (created_at, good_oid, bad_oid, target, cell, figure, "
      "commits, state, result, culprit, size, size_low, size_high, confidence, "
      "change_id, campaign_toml, campaign_source, campaign_dir, rule, pair, range_json) VALUES "
      "(CASE WHEN ?1 = '' THEN strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE ?1 END, ?2, "
      "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
      "?21) "
      "RETURNING id");
  insert.Bind(1, row.created_at);
  insert.Bind(2, row.good_oid);
  insert.Bind(3, row.bad_oid);
  insert.Bind(4, row.target);
  insert.Bind(5, row.cell);
  insert.Bind(6, row.figure);
  insert.Bind(7, row.commits);
  insert.Bind(8, row.state);
  insert.Bind(9, row.result);
  insert.Bind(10, row.culprit);
  insert.Bind(11, row.size);
  insert.Bind(12, row.size_low);
  insert.Bind(13, row.size_high);
  insert.Bind(14, row.confidence);
  insert.Bind(15, row.change_id);
  insert.Bind(16, row.campaign_toml);
  insert.Bind(17, row.campaign_source);
  insert.Bind(18, row.campaign_dir);
  insert.Bind(19, row.rule);
  insert.Bind(20, row.pair);
  insert.Bind(21, row.range_json);
  const int rc = insert.Step();
  if (rc != SQLITE_ROW) return SqlError(db_, rc, path_, what);
  const int64_t id = insert.Int64(0);
  if (int done = insert.Step(); done != SQLITE_DONE) return SqlError(db_, done, path_, what);
  return id;
}

Result<int> Store::AppendBisectStep(const BisectStepRow& step) {
  std::lock_guard lock(mu_);
  const std::string what =
      "record step of bisection " + std::to_string(step.bisection_id) + " at commit " + step.oid;
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  Stmt state(db_,
             "SELECT b.state, (SELECT COALESCE(MAX(step), 0) FROM bisect_steps "
             "WHERE bisection_id = b.id), ?2 IN (b.good_oid, b.bad_oid) FROM bisections b "
             "WHERE b.id = ?1");
  state.Bind(1, step.bisection_id);
  state.Bind(2, step.oid);
  int rc = state.Step();
  if (rc == SQLITE_DONE) {
    return Status::NotFound(path_ + ": " + what + ": no bisection has id " +
                            std::to_string(step.bisection_id));
  }
  if (rc != SQLITE_ROW) return SqlError(db_, rc, path_, what);
  const std::string current = state.Text(0);
  const int number = static_cast<int>(state.Int64(1)) + 1;
  if (current != "running") {
    return Status::FailedPrecondition(path_ + ": " + what + ": the bisection is " + current +
                                      ", not running");
  }
  // The ends are known, never decided: a step for one would stop the search from replaying.
  if (state.Int64(2) != 0) {
    return Status::InvalidArgument(path_ + ": " + what + ": that commit is an end of the range");
  }
  Stmt insert(db_,
              "INSERT INTO bisect_steps (bisection_id, step, oid, subject, build, campaigns, "
              "rounds, decision, estimate, low, high, figures, recorded_at, position) VALUES (?1, "
              "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, CASE WHEN ?13 = '' THEN "
              "strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE ?13 END, ?14)");
  insert.Bind(1, step.bisection_id);
  insert.Bind(2, number);
  insert.Bind(3, step.oid);
  insert.Bind(4, step.subject);
  insert.Bind(5, step.build);
  insert.Bind(6, BisectCampaignsJson(step.campaigns));
  insert.Bind(7, step.rounds);
  insert.Bind(8, step.decision);
  insert.Bind(9, step.estimate);
  insert.Bind(10, step.low);
  insert.Bind(11, step.high);
  insert.Bind(12, BisectFiguresJson(step.figures));
  insert.Bind(13, step.recorded_at);
  insert.Bind(14, step.position);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, what));
  BENCHLAB_RETURN_IF_ERROR(tx.Commit(what));
  return number;
}

Status Store::UpdateBisection(const BisectionRow& row) {
  std::lock_guard lock(mu_);
  const std::string what = "update bisection " + std::to_string(row.id);
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  Stmt update(
      db_,
      "UPDATE bisections SET state = ?2, result = ?3, culprit = ?4, size = ?5, "
      "size_low = ?6, size_high = ?7, confidence = ?8, culprit_campaign = ?9 WHERE id = ?1");
  update.Bind(1, row.id);
  update.Bind(2, row.state);
  update.Bind(3, row.result);
  update.Bind(4, row.culprit);
  update.Bind(5, row.size);
  update.Bind(6, row.size_low);
  update.Bind(7, row.size_high);
  update.Bind(8, row.confidence);
  update.Bind(9, row.culprit_campaign);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, update, path_, what));
  if (sqlite3_changes(db_) == 0) {
    return Status::NotFound(path_ + ": " + what + ": no bisection has that id");
  }
  return tx.Commit(what);
}

Result<std::optional<BisectionRecord>> Store::LoadBisection(int64_t id) {
  std::lock_guard lock(mu_);
  const std::string what = "load bisection " + std::to_string(id);
  // One read transaction: the bisection and its steps as of one moment.
  Stmt begin(db_, "BEGIN");
  BENCHLAB_RETURN_IF_ERROR(Run(db_, begin, path_, "begin " + what));
  Stmt select(
      db_, (std::string("SELECT ") + kBisectionColumns + " FROM bisections WHERE id = ?1").c_str());
  select.Bind(1, id);
  Result<std::vector<BisectionRow>> rows =
      Collect<BisectionRow>(db_, select, path_, what, ReadBisectionRow);
  std::optional<BisectionRecord> record;
  if (rows.ok() && !rows->empty()) {
    record.emplace();
    record->bisection = std::move(rows->front());
    Stmt steps(db_,
               "SELECT bisection_id, step, oid, subject, build, campaigns, rounds, decision, "
               "estimate, low, high, figures, recorded_at, position FROM bisect_steps "
               "WHERE bisection_id = ?1 ORDER BY step");
    steps.Bind(1, id);
    Result<std::vector<BisectStepRow>> read =
        Collect<BisectStepRow>(db_, steps, path_, what + ": its steps", [](Stmt& s) {
          BisectStepRow row;
          s.Read(0, row.bisection_id);
          s.Read(1, row.step);
          s.Read(2, row.oid);
          s.Read(3, row.subject);
          s.Read(4, row.build);
          row.campaigns = ParseBisectCampaigns(s.Text(5));
          s.Read(6, row.rounds);
          s.Read(7, row.decision);
          s.Read(8, row.estimate);
          s.Read(9, row.low);
          s.Read(10, row.high);
          row.figures = ParseBisectFigures(s.Text(11));
          s.Read(12, row.recorded_at);
          s.Read(13, row.position);
          return row;
        });
    if (!read.ok())
      rows = read.status();
    else
      record->steps = std::move(read).value();
  }
  Stmt end(db_, "COMMIT");
  (void)Run(db_, end, path_, "end " + what);
  if (!rows.ok()) return rows.status();
  return record;
}

Result<std::vector<BisectionRow>> Store::ListBisections() {
  std::lock_guard lock(mu_);
  Stmt select(
      db_, (std::string("SELECT ") + kBisectionColumns + " FROM bisections ORDER BY id").c_str());
  return Collect<BisectionRow>(db_, select, path_, "list bisections", ReadBisectionRow);
}

}  // namespace benchlab

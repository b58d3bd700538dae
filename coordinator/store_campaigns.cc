// Store's campaigns family (store.h): campaigns, their targets and scenarios, their state and
// placement, and the agents' self-test calibrations.
#include <sqlite3.h>

#include <optional>
#include <string>
#include <utility>

#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Quoted;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

namespace store_sql {

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

}  // namespace store_sql

using store_sql::kCampaignColumns;
using store_sql::ReadCampaign;

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
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<CampaignRow> rows,
      Collect<CampaignRow>(db_, select, path_, "find campaign " + Quoted(name), ReadCampaign));
  return rows.empty() ? std::nullopt : std::optional<CampaignRow>(std::move(rows.front()));
}

Result<std::optional<CampaignRow>> Store::FindCampaignById(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt select(
      db_, (std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE id = ?1").c_str());
  select.Bind(1, id);
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<CampaignRow> rows,
      Collect<CampaignRow>(db_, select, path_, "find campaign " + std::to_string(id),
                           ReadCampaign));
  return rows.empty() ? std::nullopt : std::optional<CampaignRow>(std::move(rows.front()));
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

}  // namespace benchlab

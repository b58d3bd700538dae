// Store's windows family (store.h): window attempts with their samples, side services, probes and
// profiles, written in one transaction and read back.
#include <sqlite3.h>

#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Quoted;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

using store_sql::BindKey;
using store_sql::kWhereKey;

namespace {

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
    // Schema version 15.
    {"target_commit", &WindowRow::target_commit},
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

}  // namespace

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
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<ProfileRow> rows,
      Collect<ProfileRow>(db_, q, path_, "find the profile of window " + std::to_string(window_id),
                          ProfileRowOf));
  return rows.empty() ? std::nullopt : std::optional<ProfileRow>(std::move(rows.front()));
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
  using CpuByWindow = std::pair<int64_t, double>;
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<CpuByWindow> rows,
      Collect<CpuByWindow>(db_, q, path_,
                           "sum the services' CPU of campaign " + std::to_string(campaign_id),
                           [](Stmt& st) { return std::make_pair(st.Int64(0), st.Double(1)); }));
  return std::map<int64_t, double>(rows.begin(), rows.end());
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

Result<std::pair<int64_t, int64_t>> Store::CountWindows(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt count(db_, "SELECT count(*), coalesce(max(id), 0) FROM windows WHERE campaign_id = ?1");
  count.Bind(1, campaign_id);
  using Tally = std::pair<int64_t, int64_t>;
  BENCHLAB_ASSIGN_OR_RETURN(std::vector<Tally> rows,
                            Collect<Tally>(db_, count, path_, "count windows", [](Stmt& s) {
                              return std::make_pair(s.Int64(0), s.Int64(1));
                            }));
  return rows.empty() ? Tally{0, 0} : rows[0];
}

}  // namespace benchlab
